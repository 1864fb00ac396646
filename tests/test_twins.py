"""Each lesson's plain-text twin (jupytext percent format) holds the same cells as the notebook.

Reviews read the ``.py`` twins; this keeps them honest.  After editing either
side, ``jupytext --sync notebooks/NN_slug.ipynb`` brings the other along.
"""

import re
from pathlib import Path

import jupytext
import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
# JupyterLab's autosave copies (.ipynb_checkpoints/) are not lessons and have no twins.
# The English edition's: another edition's notebooks (notebooks/it/) are generated from them.
EDITIONS = ("it",)
LESSONS = sorted(p for p in NOTEBOOKS.rglob("[0-9][0-9]_*.ipynb") if ".ipynb_checkpoints" not in p.parts
                 and p.relative_to(NOTEBOOKS).parts[0] not in EDITIONS)


def _cells(notebook):
    return [(cell.cell_type, cell.source.strip()) for cell in notebook.cells]


def test_every_lesson_has_a_twin():
    assert LESSONS, "no lessons found"
    missing = [p.name for p in LESSONS if not p.with_suffix(".py").exists()]
    assert not missing, f"lessons without a .py twin: {missing}"


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: str(p.relative_to(NOTEBOOKS)))
def test_twin_has_the_same_cells(lesson):
    notebook = jupytext.read(lesson)
    twin = jupytext.read(lesson.with_suffix(".py"))
    assert _cells(twin) == _cells(notebook)


# A string written without r"..." turns "\frac", "\right" and "\approx" into a form feed, a
# carriage return and a bell: the formula then renders as garbage and no output changes.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: str(p.relative_to(NOTEBOOKS)))
def test_no_control_characters_in_a_cell(lesson):
    notebook = jupytext.read(lesson)
    found = [(i + 1, repr(m.group())) for i, cell in enumerate(notebook.cells)
             for m in CONTROL.finditer(cell.source)]
    assert not found, f"cells (1-based) holding control characters, a LaTeX backslash lost: {found}"
