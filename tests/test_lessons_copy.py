"""The lessons run anywhere: ``bloomedu lessons DIR`` copies them (and their solutions) out of the
repository, and every lesson runs top to bottom in that copy, far from ``tests/data``."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from bloomedu.cli import main
from bloomedu.teaching.lessons import copy_lessons, lessons_folder

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
LESSONS = sorted(p.name for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
SOLUTIONS = sorted(p.name for p in (NOTEBOOKS / "solutions").glob("[0-9][0-9]_*.ipynb"))


@pytest.fixture(scope="module")
def copied(tmp_path_factory):
    folder = tmp_path_factory.mktemp("class") / "bloom-class"  # not there yet: it is created
    assert main(["lessons", str(folder)]) == 0
    return folder


def test_the_command_copies_every_lesson_and_solution_and_nothing_else(copied, capsys):
    assert lessons_folder() == NOTEBOOKS
    assert sorted(p.name for p in copied.glob("*.ipynb")) == LESSONS
    assert sorted(p.name for p in (copied / "solutions").glob("*.ipynb")) == SOLUTIONS
    assert not list(copied.rglob("*.py"))
    assert all((copied / name).read_bytes() == (NOTEBOOKS / name).read_bytes() for name in LESSONS)
    capsys.readouterr()
    assert main(["lessons", str(copied / "again")]) == 0
    assert f"copied {len(LESSONS)} lessons and {len(SOLUTIONS)} solutions" in capsys.readouterr().out


def test_an_existing_lesson_is_replaced_only_when_asked(copied, capsys, tmp_path):
    assert main(["lessons", str(copied)]) == 1
    assert "exists" in capsys.readouterr().err
    assert main(["lessons", str(copied), "--overwrite", "--no-solutions"]) == 0
    only = copy_lessons(tmp_path / "only", solutions=False)
    assert [p.name for p in only] == LESSONS
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(NotADirectoryError, match="exists and is not a folder"):
        copy_lessons(tmp_path / "a-file")
    with pytest.raises(TypeError, match="target must be a folder path"):
        copy_lessons(3)


@pytest.mark.parametrize("name", LESSONS)
def test_every_lesson_runs_in_the_copy(copied, name):
    notebook = nbformat.read(copied / name, as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(copied)}}).execute()
    errors = [o for cell in notebook.cells for o in cell.get("outputs", [])
              if o.get("output_type") == "error"]
    assert errors == []
