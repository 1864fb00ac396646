"""The lessons run anywhere: ``bloomedu lessons DIR`` copies them (their subfolders and their
solutions too) out of the repository.

That every lesson runs in such a copy, and reproduces its committed outputs there, is checked
by ``make test`` itself: in each environment it copies the lessons with the ``bloomedu lessons``
command of that environment into a temporary folder far from ``tests/data`` and runs strict
nbval on that folder (the last test here checks that the Makefile still does so).
"""

import re
import subprocess
from pathlib import Path

import pytest

from bloomedu.cli import main
from bloomedu.teaching import lessons as lessons_module
from bloomedu.teaching.lessons import copy_lessons, course_notebooks, lessons_folder

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
EVERY = sorted(p.relative_to(NOTEBOOKS).as_posix() for p in NOTEBOOKS.rglob("*.ipynb")
               if ".ipynb_checkpoints" not in p.parts)
SOLUTIONS = [name for name in EVERY if name.startswith("solutions/")]


@pytest.fixture(scope="module")
def copied(tmp_path_factory):
    folder = tmp_path_factory.mktemp("class") / "bloom-class"  # not there yet: it is created
    assert main(["lessons", str(folder)]) == 0
    return folder


def test_the_command_copies_every_lesson_and_solution_and_nothing_else(copied, capsys, tmp_path):
    assert lessons_folder() == NOTEBOOKS
    assert SOLUTIONS and len(EVERY) > len(SOLUTIONS)
    assert sorted(p.relative_to(copied).as_posix() for p in copied.rglob("*")
                  if p.is_file()) == EVERY
    assert all((copied / name).read_bytes() == (NOTEBOOKS / name).read_bytes() for name in EVERY)
    capsys.readouterr()
    assert main(["lessons", str(tmp_path / "again")]) == 0
    out = capsys.readouterr().out
    assert f"copied {len(EVERY) - len(SOLUTIONS)} lessons and {len(SOLUTIONS)} solutions" in out


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A notebooks/ folder of our own: two lessons, an optional one in deeper/, a solution,
    and what must not be copied (jupytext twins, a checkpoint, a hidden folder)."""
    folder = tmp_path / "notebooks"
    for name in ["02_second.ipynb", "01_first.ipynb", "deeper/01_first_proof.ipynb",
                 "solutions/01_first_solutions.ipynb", "01_first.py", "deeper/01_first_proof.py",
                 ".ipynb_checkpoints/01_first-checkpoint.ipynb", "deeper/.hidden/x.ipynb"]:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(f'{{"name": "{name}"}}')
    monkeypatch.setattr(lessons_module, "lessons_folder", lambda: folder)
    return folder


def test_subfolders_are_copied_as_subfolders_lessons_first(course, tmp_path):
    written = copy_lessons(tmp_path / "class")
    names = [p.relative_to(tmp_path / "class").as_posix() for p in written]
    assert names == ["01_first.ipynb", "02_second.ipynb", "deeper/01_first_proof.ipynb",
                     "solutions/01_first_solutions.ipynb"]
    assert all(p.read_bytes() == (course / name).read_bytes() for p, name in zip(written, names))
    assert sorted(p.relative_to(tmp_path / "class").as_posix()
                  for p in (tmp_path / "class").rglob("*") if p.is_file()) == sorted(names)
    assert [p.as_posix() for p in course_notebooks(course, solutions=False)] == names[:3]


def test_an_existing_lesson_is_replaced_only_when_asked(copied, capsys, tmp_path):
    assert main(["lessons", str(copied)]) == 1
    assert "exists" in capsys.readouterr().err
    assert main(["lessons", str(copied), "--overwrite", "--no-solutions"]) == 0
    only = copy_lessons(tmp_path / "only", solutions=False)
    assert [p.relative_to(tmp_path / "only").as_posix() for p in only] == \
        [name for name in sorted(EVERY, key=lambda n: ("/" in n, n)) if name not in SOLUTIONS]
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(NotADirectoryError, match="exists and is not a folder"):
        copy_lessons(tmp_path / "a-file")
    with pytest.raises(TypeError, match="target must be a folder path"):
        copy_lessons(3)


def test_make_test_runs_strict_nbval_on_the_copy_in_both_environments():
    """``make -n test`` (print the commands, run nothing): each environment's own ``bloomedu
    lessons`` writes a folder that the same environment's pytest then runs with ``--nbval``,
    keeping each notebook's cells on one worker."""
    dry = subprocess.run(["make", "-n", "-B", "test"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    for venv in (".venv", ".venv-oldest"):
        copy = re.search(rf"{re.escape(venv)}/bin/bloomedu lessons (\S+)", dry)
        assert copy, f"make test copies no lessons with {venv}'s bloomedu"
        nbval = re.search(rf"{re.escape(venv)}/bin/python -m pytest .*--nbval .*", dry)
        assert nbval and copy.group(1) in nbval.group(0), f"{venv}: nbval does not run the copy"
        assert "--nbval-lax" not in nbval.group(0) and "--dist loadfile" in nbval.group(0)
