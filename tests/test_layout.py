"""The library's folders are its parts, the README's table points at files that exist, and
imports from before the split into folders still work."""
import importlib
import pathlib
import pickle
import re
import subprocess
import sys

import pytest

import bloomedu
from bloomedu._moved import MOVED

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_every_path_in_the_readme_table_exists():
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("| article step | module | lesson | test |"):]
    table = table[:table.index("\n\n")]
    paths = re.findall(r"`((?:bloomedu|tests|docs|tools|benchmarks|constraints)/[\w/.]+)`", table)
    assert len(paths) > 20
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert not missing
    lessons = re.findall(r"`(\d\d_[a-z_]+)`", table)
    assert lessons and all((ROOT / "notebooks" / f"{name}.ipynb").exists() for name in lessons)


def test_the_readme_table_names_every_module_and_test_file():
    """A newcomer finds any piece from the table in one step: every module of the library
    (or its folder) and every test file is named in it."""
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("| article step | module | lesson | test |"):]
    table = table[:table.index("\n\n")]
    named = set(re.findall(r"`((?:bloomedu|tests)/[\w/.]+)`", table))
    folders = tuple(name for name in named if name.endswith("/"))
    modules = [path.relative_to(ROOT).as_posix() for path in (ROOT / "bloomedu").rglob("*.py")
               if path.name not in ("__init__.py", "__main__.py") and "/data/" not in path.as_posix()]
    tests = [path.relative_to(ROOT).as_posix() for path in (ROOT / "tests").glob("test_*.py")]
    unnamed = [path for path in modules + tests
               if path not in named and not path.startswith(folders)
               and not path.split("/")[-1].startswith("_")]  # private helpers of a named module
    assert not unnamed


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_import_path_is_the_module_at_its_new_place(old):
    moved = importlib.import_module(f"bloomedu.{old}")
    assert moved is importlib.import_module(f"bloomedu.{MOVED[old]}")
    assert moved.__name__ == moved.__spec__.name == f"bloomedu.{MOVED[old]}"


def test_a_submodule_of_a_moved_package_is_loaded_once():
    import bloomedu.exercises.filter_steps as old
    import bloomedu.teaching.exercises.filter_steps as new
    assert old is new


def test_a_pickle_that_names_an_old_path_still_loads():
    f = bloomedu.BloomFilter(64, 2)
    f.add("x")
    old = pickle.dumps(f, protocol=0).replace(b"bloomedu.core.filter", b"bloomedu.filter")
    assert b"bloomedu.filter" in old
    assert pickle.loads(old) == f


def test_import_bloomedu_loads_no_plotting():
    code = "import sys, bloomedu; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_no_module_is_left_at_the_top_but_the_command_line():
    top = sorted(p.name for p in (ROOT / "bloomedu").glob("*.py"))
    assert top == ["__init__.py", "__main__.py", "_moved.py", "cli.py"]


def test_filters_get_a_keys_hashes_only_from_core_positions():
    """BloomFilter and every variant take (h1, h2) from bloomedu/core/positions.py, which
    spreads the step h2 (issue 8's empty key): a direct hash128/hashed_chunks call for
    positions would place some keys differently (hashed_chunks may still check keys)."""
    root = pathlib.Path(bloomedu.__file__).parent
    # The split-block filter is exempt: like Parquet's, it takes one 64-bit hash (h1) and no
    # step, and the empty key's eight bits are still eight different bits (one per word of
    # its block); tests/test_blocked.py checks its layout against Parquet's.
    own_layout = {"blocked.py", "blocks.py"}
    sources = [root / "core" / "filter.py",
               *sorted(p for p in (root / "variants").glob("*.py") if p.name not in own_layout)]
    for path in sources:
        text = path.read_text()
        assert not re.search(r"\bhash128\(|\bmurmur3_128_uint64\(", text), path
        for line in re.findall(r".*\bhashed_chunks\(.*", text):
            assert "checking pass" in line, (path, line)  # BloomFilter.add_many's key check
