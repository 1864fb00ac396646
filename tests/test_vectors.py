"""The recordings the lessons read ship inside the package, the same as the tests' copies."""

import re
from pathlib import Path

import pytest

from bloomedu.teaching import vectors
from bloomedu.teaching.vectors import RECORDINGS, recorded

ROOT = Path(__file__).resolve().parent.parent
PACKAGED = Path(vectors.__file__).parent / "data"


@pytest.mark.parametrize("name", sorted(RECORDINGS))
def test_the_package_holds_the_same_bytes_as_tests_data(name):
    packaged = (PACKAGED / RECORDINGS[name]).read_bytes()
    assert packaged == (ROOT / "tests" / "data" / RECORDINGS[name]).read_bytes()
    assert recorded(name)


def test_every_packaged_file_is_declared_as_package_data():
    pyproject = (ROOT / "pyproject.toml").read_text()
    section = re.search(r"^\[tool\.setuptools\.package-data\]\n(.*?)(?=^\[|\Z)", pyproject,
                        re.S | re.M).group(1)
    assert re.search(r'^"bloomedu\.teaching" = \["data/\*\.json"\]$', section, re.M)
    assert sorted(p.name for p in PACKAGED.iterdir()) == sorted(RECORDINGS.values())


def test_an_unknown_recording_gets_a_clear_error():
    with pytest.raises(ValueError, match="name must be one of 'guava', 'bip37', got 'redis'"):
        recorded("redis")
