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
- everything else continues the slide it follows, unless the screen would then be taller than a
  projector's: a cell that would take the screen past ``BUDGET`` pixels (its height estimated
  from its text, code, outputs and figures by :func:`estimated_height`) starts a subslide.

A single cell taller than the budget gets a screen of its own, and the deck builder cuts it
further (:func:`split_tall_cells`: a long paragraph at its blank lines, a long code cell between
its statements and before its outputs), so that every screen of a deck fits 1280×800 at reveal.js's
scale (``tests/test_slides.py`` measures them in Chromium).

Only ``metadata.slideshow`` changes, and the notebook's jupytext settings, which get
``cell_metadata_filter: -slideshow`` so that the ``.py`` twins stay free of slide marks (their
header says so; the twin keeps its cells) and a ``jupytext --sync`` from the twin keeps the marks.
nbval compares outputs only: the marks never touch a lesson's checks.
"""

from __future__ import annotations

import argparse
import ast
import base64
import copy
import math
import re
import struct
import sys
from pathlib import Path

import jupytext
import nbformat

from tools import lesson_cells

NOTES_WORDS = 120
FILTER = "-slideshow"

# A deck's screen is 800 px high (tools/slides/templates); a screen's cells are estimated to fill at
# most BUDGET of it, the rest room for the estimate's error (its spread over every cell of every
# lesson: about 20 px, at worst 70 px too low).
SCREEN = 800
BUDGET = 700
# The template's sizes: markdown text 18 px on 23.4 px lines, about 135 characters a line; list
# items on 28.8 px lines; code and text output 15 px on 18 px lines, about 115 characters a line;
# figures at most 560 px high.
TEXT_LINE, LIST_LINE, CODE_LINE = 23.4, 28.8, 18
TEXT_CHARS, CODE_CHARS = 135, 115
HEADING_HEIGHT = {1: 101, 2: 72, 3: 48}
FIGURE_MAX = 560


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
    return fit_to_screens(nb, types)


def png_height(data: str) -> int | None:
    """The height in pixels of a base64 PNG, from its header (None if it has none).

    >>> png_height(base64.b64encode(b"\\x89PNG\\r\\n\\x1a\\n" + bytes(8) + struct.pack(">II", 640, 480)).decode())
    480
    >>> png_height("iVBOR") is None
    True
    """
    try:
        raw = base64.b64decode("".join(data.split())[:32] + "==")
        return struct.unpack(">II", raw[16:24])[1] if raw.startswith(b"\x89PNG") else None
    except (ValueError, struct.error):
        return None


def _lines(text: str, chars: int) -> int:
    """Lines ``text`` takes when wrapped at ``chars`` characters."""
    return sum(max(1, math.ceil(len(line) / chars)) for line in text.splitlines())


def markdown_height(source: str) -> float:
    """Estimated pixels a markdown cell takes on a slide: its blocks (paragraphs, headings, tables,
    lists, display formulas, fenced code) one after another.

    >>> markdown_height("## Sizing"), round(markdown_height("One short paragraph."))
    (82, 62)
    """
    height = 10
    source = re.sub(r"<!--.*?-->", "", source, flags=re.S).strip()
    for block in re.split(r"\n\s*\n", source) if source else []:
        lines = block.splitlines()
        level = len(block) - len(block.lstrip("#"))
        if 1 <= level <= 6 and block[level:level + 1] == " ":
            height += HEADING_HEIGHT.get(level, 40) * max(1, math.ceil(len(block) / 60))
        elif lines[0].lstrip().startswith("|"):
            height += 31 * sum(not re.match(r"\s*\|?\s*:?-", line) for line in lines) + 20
        elif block.startswith("$$"):
            height += 60 + 25 * block.count("\\\\")
        elif re.match(r"\s*(?:[-*+]|\d+\.) ", block):
            items = re.split(r"\n(?=\s*(?:[-*+]|\d+\.) )", block)
            height += sum(LIST_LINE * math.ceil(len(item) / (TEXT_CHARS - 10)) for item in items) + 20
        elif block.startswith(("```", "~~~")):
            height += CODE_LINE * len(lines) + 20
        else:
            text = re.sub(r"\]\([^)]*\)", "]", " ".join(lines))
            height += TEXT_LINE * max(1, math.ceil(len(text) / TEXT_CHARS)) + 29
    return height


def output_height(output) -> float:
    """Estimated pixels one output of a code cell takes: a figure (at most ``FIGURE_MAX``) or its text."""
    data = output.get("data", {})
    if "image/png" in data:
        return min(FIGURE_MAX, png_height(data["image/png"]) or FIGURE_MAX) + 40
    if "text/html" in data:
        return 100
    text = output.get("text") or data.get("text/plain", "") or "".join(output.get("traceback", []))
    return CODE_LINE * _lines(text.rstrip("\n"), CODE_CHARS) + 12 if text.strip() else 0


def code_height(source: str) -> float:
    """Estimated pixels of a code cell's input.

    >>> code_height("x = 1\\nprint(x)")
    70
    """
    return CODE_LINE * _lines(source, CODE_CHARS) + 34 if source.strip() else 0


def estimated_height(cell) -> float:
    """Estimated pixels a cell takes on a 1280×800 slide (0 for one whose input is hidden and has
    no outputs).

    >>> md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    >>> estimated_height(md("## Sizing")), estimated_height(code("x = 1"))
    (82, 52)
    """
    if cell.cell_type == "markdown":
        return markdown_height(cell.source)
    hidden = cell.metadata.get("transient", {}).get("remove_source", False)
    height = 0 if hidden else code_height(cell.source) if cell.cell_type == "code" else 0
    return height + sum(output_height(o) for o in cell.get("outputs", []))


def fit_to_screens(nb, types: list[str], budget: float = BUDGET) -> list[str]:
    """``types`` with a subslide started wherever a cell would take its screen past ``budget``
    pixels; notes take no room, and a fragment shows on the screen it is revealed on.

    >>> md = nbformat.v4.new_markdown_cell
    >>> nb = nbformat.v4.new_notebook(cells=[md("## A"), md("word " * 600), md("word " * 600), md("b")])
    >>> fit_to_screens(nb, ["slide", "-", "-", "-"])
    ['slide', '-', 'subslide', '-']
    """
    fitted, screen = [], 0.0
    for cell, kind in zip(nb.cells, types):
        height = 0.0 if kind in ("notes", "skip") else estimated_height(cell)
        if kind in ("-", "fragment") and screen > 0 and screen + height > budget:
            kind = "subslide"
        if kind in ("slide", "subslide"):
            screen = 0.0
        screen += height
        fitted.append(kind)
    return fitted


def _statement_starts(source: str) -> list[int]:
    """0-based lines where the cell's top-level statements start (after the first), where code may be cut."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return [i for i, line in enumerate(source.splitlines()) if i and line and not line[0].isspace()]
    starts = []
    for node in tree.body[1:]:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
        starts.append(first)
    return starts


def _code_pieces(source: str, budget: float) -> list[str]:
    """``source`` cut between top-level statements into pieces of at most ``budget`` pixels each
    (a single statement longer than that stays whole).

    >>> _code_pieces("a = 1\\nb = 2\\nc = 3", budget=code_height("a = 1\\nb = 2"))
    ['a = 1\\nb = 2', 'c = 3']
    """
    lines = source.splitlines()
    bounds = sorted({0, *_statement_starts(source), len(lines)})
    pieces, start, last = [], 0, 0
    for end in bounds[1:]:
        if code_height("\n".join(lines[start:end])) > budget and last > start:
            pieces.append("\n".join(lines[start:last]))
            start = last
        last = end
    pieces.append("\n".join(lines[start:]))
    return [piece.strip("\n") for piece in pieces if piece.strip()]


def _markdown_pieces(source: str, budget: float) -> list[str]:
    """A markdown cell's blocks (split at blank lines, never inside fenced code or a display
    formula) gathered into pieces of at most ``budget`` pixels each."""
    blocks, current, fenced = [], [], False
    for line in source.splitlines():
        if line.lstrip().startswith(("```", "~~~")) or line.strip() == "$$":
            fenced = not fenced
        if not line.strip() and not fenced and current:
            blocks.append("\n".join(current))
            current = []
        elif line.strip() or current:
            current.append(line)
    if current:
        blocks.append("\n".join(current))
    pieces: list[str] = []
    for block in blocks:
        if pieces and markdown_height(pieces[-1] + "\n\n" + block) <= budget:
            pieces[-1] += "\n\n" + block
        else:
            pieces.append(block)
    return pieces


def _cell_like(cell, **changes):
    piece = copy.deepcopy(cell)
    piece.update(changes)
    return piece


def split_cell(cell, budget: float = BUDGET) -> list:
    """A cell taller than ``budget`` pixels as several cells of the same kind, each at most
    ``budget`` where it can be: a markdown cell at its blank lines; a code cell between its
    top-level statements, then its outputs (input hidden) gathered screen by screen.  The first
    piece keeps the cell's mark, the others start subslides; a cell that fits comes back alone.

    >>> code = nbformat.v4.new_code_cell
    >>> cell = code("\\n".join(f"x{i} = {i}" for i in range(60)), metadata={"slideshow": {"slide_type": "-"}})
    >>> [(len(c.source.splitlines()), c.metadata["slideshow"]["slide_type"]) for c in split_cell(cell)]
    [(37, '-'), (23, 'subslide')]
    """
    if estimated_height(cell) <= budget:
        return [cell]
    if cell.cell_type == "markdown":
        sources = _markdown_pieces(cell.source, budget)
        pieces = [_cell_like(cell, source=text) for text in sources]
    elif cell.cell_type == "code":
        pieces = [_cell_like(cell, source=text, outputs=[]) for text in _code_pieces(cell.source, budget)]
        groups: list[list] = []
        for output in cell.get("outputs", []):
            if groups and sum(map(output_height, groups[-1] + [output])) <= budget:
                groups[-1].append(output)
            else:
                groups.append([output])
        for outputs in groups:
            if pieces and estimated_height(pieces[-1]) + sum(map(output_height, outputs)) <= budget:
                pieces[-1].outputs.extend(outputs)
            else:
                piece = _cell_like(cell, source="", outputs=outputs)
                piece.metadata["transient"] = {"remove_source": True}
                pieces.append(piece)
    else:
        return [cell]
    for number, piece in enumerate(pieces):
        if number:
            if "id" in cell:
                piece.id = f"{cell.id}-{number}"  # the deck's element ids stay unique
            piece.metadata["slideshow"] = {"slide_type": "subslide"}
            if piece.cell_type == "code":
                piece.execution_count = cell.get("execution_count")
    return pieces


def split_tall_cells(nb, budget: float = BUDGET):
    """A copy of a marked notebook for the deck, each cell taller than ``budget`` split by
    :func:`split_cell` (the notebook itself is unchanged; its notes are never split)."""
    deck = copy.deepcopy(nb)
    cells = []
    for cell in deck.cells:
        noted = cell.metadata.get("slideshow", {}).get("slide_type") in ("notes", "skip")
        cells += [cell] if noted else split_cell(cell, budget)
    deck.cells = cells
    return deck


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
