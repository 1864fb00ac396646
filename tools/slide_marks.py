"""Mark every lesson's cells for reveal.js: which start a slide, appear as fragments, or are notes.

    python -m tools.slide_marks          # mark every lesson, solution and deeper notebook
    python -m tools.slide_marks --check  # exit 1, naming the notebooks whose marks are stale

nbconvert's slides exporter (``make slides``, ``tools/slides.py``) reads each cell's
``metadata.slideshow.slide_type``; this tool sets it from the lesson's own structure, so that
after a lesson is split, renumbered or edited, running it again marks the new cells the same
way (``tests/test_slides.py`` fails while a notebook's marks differ from what it would write):

- a level-1 or level-2 heading starts a slide, a deeper heading a subslide (a slide below it);
- an exercise's question starts a subslide of its own, with the exercise cell beneath;
- a prediction (a bold "Predict", or ``predict(...)``) appears as a fragment, on the next click,
  and the cell after it starts a new subslide: the measurement that answers it is never on the
  screen that asks it; its "Check your prediction" appears as a fragment under the measurement;
- a code cell that draws a figure gets a subslide, so the figure has the screen to itself;
- a paragraph of more than ``NOTES_WORDS`` words with no heading goes to the speaker notes
  (the PDF handout prints them on a page after their slide);
- everything else continues the slide it follows.

Only ``metadata.slideshow`` changes, and the notebook's jupytext settings, which get
``cell_metadata_filter: -slideshow`` so that the ``.py`` twins stay free of slide marks (their
header says so; the twin keeps its cells) and a ``jupytext --sync`` from the twin keeps the marks.
nbval compares outputs only: the marks never touch a lesson's checks.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import jupytext
import nbformat

from tools import lesson_cells

NOTES_WORDS = 120
FILTER = "-slideshow"


def slide_types(nb) -> list[str]:
    """The ``slide_type`` of every cell of a notebook, from its structure alone.

    >>> md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    >>> nb = nbformat.v4.new_notebook(cells=[md("# Title"), md("**Predict:** how many?"),
    ...     code("count = 3"), md("**Check your prediction:** three."), md("## Next"), code("x = 1")])
    >>> slide_types(nb)
    ['slide', 'fragment', 'subslide', 'fragment', 'slide', '-']
    """
    exercise_questions = {index for ex in lesson_cells.exercises(nb) for index in ex.question[:1]}
    types = []
    after_prediction = False
    for index, cell in enumerate(nb.cells):
        found = lesson_cells.heading(cell)
        if found:
            kind = "slide" if found[0] <= 2 else "subslide"
        elif index in exercise_questions:
            kind = "subslide"
        elif lesson_cells.is_prediction(cell):
            kind = "fragment"
        elif after_prediction:
            kind = "subslide"
        elif lesson_cells.is_reveal(cell):
            kind = "fragment"
        elif cell.cell_type == "code" and any("image/png" in o.get("data", {}) for o in cell.get("outputs", [])):
            kind = "subslide"
        elif lesson_cells.words(cell) > NOTES_WORDS:
            kind = "notes"
        else:
            kind = "-"
        after_prediction = lesson_cells.is_prediction(cell)
        types.append(kind)
    if types and types[0] != "slide":
        types[0] = "slide"  # a deck opens with a slide, whatever its first cell is
    return types


def current_types(nb) -> list[str | None]:
    return [cell.metadata.get("slideshow", {}).get("slide_type") for cell in nb.cells]


def is_marked(nb) -> bool:
    """True when every cell carries the mark this tool gives it, and the twins filter marks out."""
    return (current_types(nb) == slide_types(nb)
            and filters_marks_out(nb.metadata.get("jupytext", {}).get("cell_metadata_filter", "")))


def filters_marks_out(metadata_filter: str) -> bool:
    """Whether a jupytext ``cell_metadata_filter`` keeps the slide marks out of the twin: it lists
    ``-slideshow`` among its comma-separated entries (jupytext adds ``tags`` beside it when a
    cell carries nbval's tag).

    >>> filters_marks_out("-slideshow"), filters_marks_out("tags,-slideshow"), filters_marks_out("tags")
    (True, True, False)
    """
    return FILTER in metadata_filter.split(",")


def mark(path: Path) -> bool:
    """Write the marks into one notebook (and the filter into its ``.py`` twin); True if it changed."""
    nb = lesson_cells.read(path)
    if is_marked(nb):
        return False
    for cell, kind in zip(nb.cells, slide_types(nb)):
        cell.metadata["slideshow"] = {"slide_type": kind}
    settings = nb.metadata.setdefault("jupytext", {})
    current = settings.get("cell_metadata_filter", "")
    if not filters_marks_out(current):
        settings["cell_metadata_filter"] = ",".join(filter(None, [current, FILTER]))
    nbformat.write(nb, str(path))
    twin = path.with_suffix(".py")
    if twin.exists():
        add_filter_to_twin(twin, nb)
    return True


def add_filter_to_twin(twin: Path, nb) -> None:
    """The twin's header gets the notebook's ``cell_metadata_filter`` (``-slideshow`` among its
    entries); its cells stay as written.

    Only that line is added or replaced (jupytext keeps the keys of its section sorted, and this one
    comes first), so the header's other lines, its jupytext version among them, are kept.
    """
    text = twin.read_text(encoding="utf-8")
    line = f"#     cell_metadata_filter: {nb.metadata['jupytext']['cell_metadata_filter']}\n"
    header = text.split("# ---", 2)[1] if text.startswith("# ---\n") else ""
    if line in header:
        return
    old = re.search(r"^#     cell_metadata_filter: .*\n", header, re.M)
    marker = "#   jupytext:\n"
    if old:
        twin.write_text(text.replace(old.group(0), line, 1), encoding="utf-8")
    elif marker in header:
        twin.write_text(text.replace(marker, marker + line, 1), encoding="utf-8")
    else:  # no jupytext section to extend: let jupytext write the header
        jupytext.write(nb, str(twin), fmt="py:percent")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report notebooks whose marks are stale")
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every lesson, solution and deeper notebook")
    args = parser.parse_args(argv)
    paths = args.notebooks or lesson_cells.every_notebook()
    if args.check:
        stale = [p for p in paths if not is_marked(lesson_cells.read(p))]
        for path in stale:
            print(f"stale slide marks: {path} (run python -m tools.slide_marks)")
        return 1 if stale else 0
    for path in paths:
        if mark(path):
            print(f"marked {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
