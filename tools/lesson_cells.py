"""What the instructor's tools read in a lesson: its headings, predictions, exercises and timings.

The slides (``tools/slide_marks.py``, ``tools/slides.py``), the nbgrader course
(``tools/assignments.py``) and the instructors' guide on the site (``tools/guide.py``)
all find the lessons by glob and read their structure from the cells, so a lesson added,
split or renumbered is picked up with no edit to any of them:

- lessons are ``notebooks/NN_slug.ipynb``, their worked solutions
  ``notebooks/solutions/NN_slug_solutions.ipynb``, the optional deeper notebooks
  ``notebooks/deeper/NN_slug.ipynb``;
- an exercise is a code cell holding exactly ``answer = None`` and ``check.<name>(answer, ...)``,
  the markdown cells just above it its question;
- a prediction is a markdown cell with a bold "Predict" or a code cell calling ``predict(...)``;
  its answer, a bold "Check your prediction" or a call of ``.reveal(...)``;
- a cell whose output depends on the machine carries nbval's ``nbval-ignore-output`` tag (or,
  in lessons written before the tags, a ``# NBVAL_IGNORE_OUTPUT`` first line);
- how long a cell ran is in the ``execution`` timestamps Jupyter records when it executes one;
- a figure is an ``image/png`` output, and the sentence that says what it shows is its
  metadata's ``alt`` (``{"image/png": {"alt": ...}}``, written by ``bloomedu.teaching.plots.show``).

The shape a core lesson keeps (``STYLE.md``: one sitting) is checked by :func:`shape_problems`,
:func:`figure_problems` and :func:`prediction_problems`, each returning what is wrong as sentences
that name the cell (``tests/test_lesson_shape.py``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
LESSON_GLOB = "[0-9][0-9]_*.ipynb"
GROUPS = {"lessons": "", "solutions": "solutions", "deeper": "deeper"}  # group -> folder under notebooks/

HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
PREDICT = re.compile(r"\*\*\s*Predict\b", re.I)
REVEAL = re.compile(r"\*\*\s*Check your prediction", re.I)
IGNORE_TAG = "nbval-ignore-output"
IGNORE_COMMENT = re.compile(r"^\s*#\s*NBVAL_IGNORE_OUTPUT\b", re.I)
MINUTES = re.compile(r"(?:(?P<label>[A-Za-z][A-Za-z ]*?)\s*[:=]\s*)?(?P<n>\d+)\s*(?:min\b|minutes\b)", re.I)


def notebooks(group: str, root: Path = NOTEBOOKS) -> list[Path]:
    """The notebooks of one group ("lessons", "solutions" or "deeper"), in reading order.

    >>> [p.name for p in notebooks("lessons")][:1]
    ['01_seen_ids.ipynb']
    """
    if group not in GROUPS:
        raise ValueError(f"group must be one of {', '.join(GROUPS)}, got {group!r}")
    return sorted((Path(root) / GROUPS[group]).glob(LESSON_GLOB))


def every_notebook(root: Path = NOTEBOOKS) -> list[Path]:
    """Lessons, then worked solutions, then deeper notebooks."""
    return [path for group in GROUPS for path in notebooks(group, root)]


def solutions_of(lesson: Path) -> Path | None:
    """The worked solutions of a lesson, if it has some.

    >>> solutions_of(NOTEBOOKS / "03_bit_vector.ipynb").name
    '03_bit_vector_solutions.ipynb'
    """
    path = Path(lesson).parent / "solutions" / f"{Path(lesson).stem}_solutions.ipynb"
    return path if path.exists() else None


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(str(path), as_version=4)


def heading(cell) -> tuple[int, str] | None:
    """(level, text) of the heading a markdown cell opens with, or None.

    >>> heading(nbformat.v4.new_markdown_cell("## Exercises\\n\\nThree of them."))
    (2, 'Exercises')
    """
    if cell.cell_type != "markdown":
        return None
    for line in cell.source.splitlines():
        if line.strip():
            match = HEADING.match(line.strip())
            return (len(match.group(1)), match.group(2)) if match else None
    return None


def title(nb) -> str:
    """The text of the notebook's first level-1 heading."""
    for cell in nb.cells:
        found = heading(cell)
        if found and found[0] == 1:
            return found[1]
    raise ValueError("the notebook has no level-1 heading")


def _calls(source: str) -> list[ast.Call]:
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython magics and the like: no calls we look for
        return []
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)]


def called_name(call: ast.Call) -> str:
    """The name a call calls: ``f`` of ``f(...)``, ``m`` of ``x.m(...)``, else ""."""
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def is_prediction(cell) -> bool:
    """A cell that asks the student to commit to a guess.

    >>> is_prediction(nbformat.v4.new_code_cell('guess = predict("How many?", None)'))
    True
    """
    if cell.cell_type == "markdown":
        return bool(PREDICT.search(cell.source))
    return cell.cell_type == "code" and any(called_name(c) == "predict" for c in _calls(cell.source))


def is_reveal(cell) -> bool:
    """A cell that answers a prediction."""
    if cell.cell_type == "markdown":
        return bool(REVEAL.search(cell.source))
    return cell.cell_type == "code" and any(called_name(c) == "reveal" for c in _calls(cell.source))


def words(cell) -> int:
    """Words of prose in a markdown cell (code spans and formulas count as one word each)."""
    if cell.cell_type != "markdown":
        return 0
    text = re.sub(r"```.*?```", " ", cell.source, flags=re.S)
    return len(re.findall(r"\S+", text))


FENCED = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.S | re.M)
DISPLAY_MATH = re.compile(r"\$\$.*?\$\$|\\begin\{(\w+\*?)\}.*?\\end\{\1\}", re.S)
INLINE = re.compile(r"`[^`\n]+`|\$(?!\$)[^$\n]+?\$")  # a code span or inline formula: one word
LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
HTML = re.compile(r"<!--.*?-->|<[^>\n]+>", re.S)


def prose_words(cell) -> int:
    r"""Words a student reads in a markdown cell: what a sitting's 1,800 words count.

    A word is a run of non-spaces holding a letter or a digit, so markup (``**``, ``#``, ``|``,
    ``-``) is not one.  Fenced code and display formulas (``$$ ... $$``, ``\begin{...}``) are not
    prose and count nothing; an inline formula or code span counts one word; a link counts its
    text, not its address; HTML tags and comments count nothing.  (The stop hook of the project
    counts every whitespace-separated token of every markdown cell, a little more.)

    >>> md = nbformat.v4.new_markdown_cell
    >>> prose_words(md("## Sizing\n\nWith $k = 3$ and `m` bits, see [lesson 03](03_bit_vector.ipynb)."
    ...                "\n\n$$p = (1 - e^{-kn/m})^k$$"))
    9
    >>> prose_words(md("| a | b |\n|---|---|\n| 1 | 2 |"))
    4
    """
    if cell.cell_type != "markdown":
        return 0
    text = FENCED.sub(" ", cell.source)
    text = DISPLAY_MATH.sub(" ", text)
    text = HTML.sub(" ", text)
    text = LINK.sub(r" \1 ", text)
    text = INLINE.sub(" x ", text)
    return sum(bool(re.search(r"\w", token)) for token in text.split())


def headings(nb) -> list[tuple[int, int, str]]:
    r"""(cell index, level, text) of every heading line of every markdown cell, in order.

    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 06 · Title\n\n## Objectives")])
    >>> headings(nb)
    [(0, 1, '06 · Title'), (0, 2, 'Objectives')]
    """
    found, fenced = [], False
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        for line in cell.source.splitlines():
            if line.lstrip().startswith(("```", "~~~")):
                fenced = not fenced
            elif not fenced and (match := HEADING.match(line.strip())):
                found.append((index, len(match.group(1)), match.group(2)))
        fenced = False
    return found


def where(nb, index: int) -> str:
    r"""A cell as a message names it: its index (from 0, as nbformat counts) and its first line.

    >>> where(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("\nguess = predict('How many?', None)")]), 0)
    "cell 0 (guess = predict('How many?', None))"
    """
    lines = [line.strip() for line in nb.cells[index].source.splitlines() if line.strip()]
    first = lines[0] if lines else ""
    return f"cell {index} ({first[:60]}{'…' if len(first) > 60 else ''})"


PNG = "image/png"
MIN_ALT_WORDS = 6  # as bloomedu.teaching.plots.MIN_ALT_WORDS (tests/test_lesson_shape.py checks)
# What a tool writes when it has no alt: nbconvert's HTML exporter fills in the first.
PLACEHOLDER_ALTS = ("No description has been provided for this image",)
FILE_NAME = re.compile(r"\S+\.(?:png|jpe?g|gif|svg|pdf|webp)\b|^[0-9a-f]{16,}\b", re.I)


def figures(nb) -> list[tuple[int, dict]]:
    """(cell index, output) of every figure (``image/png`` output), in order."""
    return [(index, output) for index, cell in enumerate(nb.cells) if cell.cell_type == "code"
            for output in cell.get("outputs", []) if PNG in output.get("data", {})]


def figure_alt(output) -> str | None:
    """The sentence an output's metadata gives its PNG as ``alt``, or None."""
    alt = output.get("metadata", {}).get(PNG, {}).get("alt")
    return alt if isinstance(alt, str) else None


def alt_problem(alt: str | None) -> str | None:
    """Why ``alt`` does not say in words what a figure shows, or None when it does.

    >>> alt_problem(None), alt_problem("fig-3.png"), alt_problem("A plot of it.")
    ('no alt (end the cell with show("what the figure shows"))', "the alt 'fig-3.png' is a file name", "the alt 'A plot of it.' has 4 words (at least 6)")
    >>> alt_problem("Measured rates follow the classic curve as k grows.") is None
    True
    """
    if alt is None or not alt.strip():
        return 'no alt (end the cell with show("what the figure shows"))'
    if " ".join(alt.split()) in PLACEHOLDER_ALTS:
        return f"the alt {alt!r} is a tool's placeholder, not a description"
    if FILE_NAME.search(alt.strip()):
        return f"the alt {alt!r} is a file name"
    count = len(alt.split())
    if count < MIN_ALT_WORDS:
        return f"the alt {alt!r} has {count} words (at least {MIN_ALT_WORDS})"
    return None


def figure_problems(nb) -> list[str]:
    """Every figure whose output carries no ``alt`` of words, by cell."""
    return [f"{where(nb, index)}: {problem}" for index, output in figures(nb)
            if (problem := alt_problem(figure_alt(output)))]


def _predictions(source: str) -> list[tuple[str | None, ast.Call]]:
    """(the name a ``predict(...)`` is bound to, or None, the call) for each call in the code."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name):
                bound[id(node.value)] = targets[0].id
    return [(bound.get(id(node)), node) for node in ast.walk(tree)
            if isinstance(node, ast.Call) and called_name(node) == "predict"]


def _revealed(source: str) -> set[str]:
    """The names ``name.reveal(...)`` calls in the code."""
    return {call.func.value.id for call in _calls(source) if called_name(call) == "reveal"
            and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)}


def prediction_problems(nb) -> list[str]:
    """A "**Predict" asked in prose with no ``predict(...)`` cell after it, and a ``predict(...)``
    bound to no name or never revealed by a later ``name.reveal(...)``.

    >>> md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    >>> prediction_problems(nbformat.v4.new_notebook(cells=[md("**Predict:** how many?"), code("x = 3"),
    ...     code('guess = predict("How many?", None)'), code("guess.reveal(3)")]))
    ['cell 0 (**Predict:** how many?): a prediction asked in prose: the next code cell, cell 1 (x = 3), does not commit it with predict(...)']
    """
    problems = []
    code_cells = [i for i, cell in enumerate(nb.cells) if cell.cell_type == "code"]
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and PREDICT.search(cell.source):
            after = [i for i in code_cells if i > index]
            if not after:
                problems.append(f"{where(nb, index)}: a prediction asked in prose, and no code cell "
                                f"after it commits it with predict(...)")
            elif not _predictions(nb.cells[after[0]].source):
                problems.append(f"{where(nb, index)}: a prediction asked in prose: the next code cell, "
                                f"{where(nb, after[0])}, does not commit it with predict(...)")
    for index in code_cells:
        for name, _ in _predictions(nb.cells[index].source):
            if name is None:
                problems.append(f"{where(nb, index)}: predict(...) is not bound to a name, so nothing "
                                f"can reveal it (guess = predict(...), later guess.reveal(measured))")
                continue
            answered = False
            for later in (i for i in code_cells if i > index):
                if name in _revealed(nb.cells[later].source):
                    answered = True
                    break
                if any(bound == name for bound, _ in _predictions(nb.cells[later].source)):
                    break  # a new prediction under the same name before this one was revealed
            if not answered:
                problems.append(f"{where(nb, index)}: {name} = predict(...) is never revealed: no later "
                                f"cell calls {name}.reveal(...) before {name} is predicted again")
    return problems


MAX_CELLS, MAX_WORDS, MAX_MINUTES = 40, 1800, 60  # one sitting (STYLE.md)
TIME = re.compile(r"\*\*\s*Time\s*:?\s*\*\*\s*:?(?P<rest>.*)", re.I)


def stated_time(nb) -> int | None:
    r"""The minutes the lesson's **Time:** line (under ## Objectives) states, or None.

    >>> md = nbformat.v4.new_markdown_cell
    >>> stated_time(nbformat.v4.new_notebook(cells=[md("## Objectives\n\n**Time:** about 50 minutes (teaching 35 min, exercises 15 min)")]))
    50
    """
    for line in (objectives(nb) or "").splitlines():
        if match := TIME.search(line):
            return lesson_minutes(stated_minutes("Time: " + match.group("rest")))
    return None


def shape_problems(nb) -> list[str]:
    """How a core lesson breaks the shape of one sitting (STYLE.md): ## Objectives with a
    **Time:** of at most an hour, ## Recap before ## Exercises, at most 40 cells and 1,800 words
    of prose (:func:`prose_words`), and at least one figure."""
    problems = []
    titles = [(index, text.strip().lower()) for index, level, text in headings(nb) if level == 2]
    if objectives(nb) is None:
        problems.append("no ## Objectives")
    else:
        minutes = stated_time(nb)
        if minutes is None:
            problems.append("## Objectives states no **Time:** in minutes")
        elif minutes > MAX_MINUTES:
            problems.append(f"**Time:** states {minutes} minutes (a sitting is at most {MAX_MINUTES})")
    recap = [index for index, text in titles if text.startswith("recap")]
    exercise = [index for index, text in titles if text.startswith("exercises")]
    if not recap:
        problems.append("no ## Recap")
    if not exercise:
        problems.append("no ## Exercises")
    if recap and exercise and recap[0] > exercise[0]:
        problems.append(f"## Recap ({where(nb, recap[0])}) comes after ## Exercises ({where(nb, exercise[0])})")
    if len(nb.cells) > MAX_CELLS:
        problems.append(f"{len(nb.cells)} cells (at most {MAX_CELLS})")
    words = sum(map(prose_words, nb.cells))
    if words > MAX_WORDS:
        heavy = sorted(range(len(nb.cells)), key=lambda i: -prose_words(nb.cells[i]))[:3]
        problems.append(f"{words:,} words of prose (at most {MAX_WORDS:,}; the longest cells: "
                        + ", ".join(f"{i} ({prose_words(nb.cells[i]):,})" for i in sorted(heavy)) + ")")
    if not figures(nb):
        problems.append("no figure (an image/png output)")
    return problems


def machine_dependent(cell) -> bool:
    """True for a code cell whose output honestly varies between machines (nbval ignores it)."""
    if cell.cell_type != "code":
        return False
    first = cell.source.lstrip().splitlines()[:1]
    return IGNORE_TAG in cell.metadata.get("tags", []) or bool(first and IGNORE_COMMENT.match(first[0]))


def seconds(cell) -> float | None:
    """How long the cell ran when the notebook was last executed, from Jupyter's timestamps."""
    stamps = cell.metadata.get("execution", {})
    start, end = stamps.get("iopub.execute_input"), stamps.get("shell.execute_reply")
    if not (start and end):
        return None
    parse = lambda text: datetime.fromisoformat(text.replace("Z", "+00:00"))  # noqa: E731
    return max(0.0, (parse(end) - parse(start)).total_seconds())


@dataclass
class Exercise:
    """One exercise of a lesson: the cell that poses it and what it checks."""

    cell: int  # index of the code cell ``answer = None`` + ``check.<name>(answer, ...)``
    checker: str  # the name after ``check.``
    check_source: str  # the check line as written, ``check.fpp(answer, num_bits=10_000, ...)``
    question: list[int] = field(default_factory=list)  # markdown cells above it, in order
    label: str = ""  # "06.1 (compute)", from the question's bold opening, when it has one


LABEL = re.compile(r"^\s*\*\*(?P<label>[^*]+?)\.?\*\*")


def exercise_call(source: str) -> tuple[str, str] | None:
    """(checker, check line) if the code is exactly ``answer = None`` then ``check.<name>(answer, ...)``.

    >>> exercise_call("answer = None  # replace None with your answer\\ncheck.fpp(answer, num_bits=8, num_hashes=1, n=1)")
    ('fpp', 'check.fpp(answer, num_bits=8, num_hashes=1, n=1)')
    >>> exercise_call("answer = 3\\ncheck.fpp(answer, num_bits=8, num_hashes=1, n=1)") is None
    True
    """
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return None
    if len(body) != 2:
        return None
    assign, call = body
    if not (isinstance(assign, ast.Assign) and len(assign.targets) == 1
            and isinstance(assign.targets[0], ast.Name) and assign.targets[0].id == "answer"
            and isinstance(assign.value, ast.Constant) and assign.value.value is None):
        return None
    return check_call(ast.get_source_segment(source, call) or "")


def check_call(source: str) -> tuple[str, str] | None:
    """(checker, the line) if the code is one call ``check.<name>(answer, ...)``."""
    try:
        body = ast.parse(source.strip()).body
    except SyntaxError:
        return None
    if len(body) != 1 or not isinstance(body[0], ast.Expr) or not isinstance(body[0].value, ast.Call):
        return None
    call = body[0].value
    func = call.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "check"
            and call.args and isinstance(call.args[0], ast.Name) and call.args[0].id == "answer"):
        return None
    return func.attr, source.strip()


def exercises(nb) -> list[Exercise]:
    """Every exercise of a lesson, in order, with the markdown cells that ask it."""
    found = []
    for index, cell in enumerate(nb.cells):
        parsed = exercise_call(cell.source) if cell.cell_type == "code" else None
        if not parsed:
            continue
        question = []
        for above in range(index - 1, -1, -1):
            if nb.cells[above].cell_type != "markdown" or heading(nb.cells[above]):
                break
            question.insert(0, above)
        label = ""
        if question and (match := LABEL.match(nb.cells[question[0]].source)):
            label = match.group("label").strip()
        found.append(Exercise(index, parsed[0], parsed[1], question, label))
    return found


def objectives(nb) -> str | None:
    r"""The text under the lesson's ``## Objectives`` heading, up to the next heading (in the same
    cell, which may open with the lesson's title, or in the markdown cells after it).

    >>> md = nbformat.v4.new_markdown_cell
    >>> objectives(nbformat.v4.new_notebook(cells=[md("# 06 · Title\n\n## Objectives\n\n- one\n\nTime: 40 min"),
    ...     md("More."), md("## Next")]))
    '- one\n\nTime: 40 min\n\nMore.'
    """
    found, parts = False, []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            if found:
                break
            continue
        lines = []
        for line in cell.source.splitlines():
            match = HEADING.match(line.strip())
            if match and found:
                parts.append("\n".join(lines))
                return "\n\n".join(p.strip() for p in parts if p.strip()) or None
            if match and match.group(2).strip().lower().startswith("objectives"):
                found, lines = True, []
                continue
            lines.append(line)
        if found:
            parts.append("\n".join(lines))
    return "\n\n".join(p.strip() for p in parts if p.strip()) or None if found else None


def stated_minutes(text: str) -> list[tuple[str, int]]:
    """Every "label: N min" (or "N minutes") a text states, as (label, minutes).

    >>> stated_minutes("Time: 35 min (teaching 25 min, exercises: 10 min)")
    [('Time', 35), ('teaching', 25), ('exercises', 10)]
    """
    found = []
    for match in MINUTES.finditer(text or ""):
        label = (match.group("label") or "").strip()
        if not label:  # "teaching 25 min": the word just before the number
            before = re.findall(r"([A-Za-z]+)\s*$", text[:match.start("n")])
            label = before[0] if before else ""
        found.append((label, int(match.group("n"))))
    return found


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def replace_widgets(nb, note_html: str):
    """The notebook with each widget output replaced by ``note_html`` and the saved widget state
    dropped: a static page or slide cannot run a widget, and its scripts would come from a CDN.

    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("panel")])
    >>> nb.cells[0].outputs = [nbformat.v4.new_output("display_data", data={WIDGET_VIEW: {}})]
    >>> list(replace_widgets(nb, "<p>run it in Jupyter</p>").cells[0].outputs[0].data)
    ['text/html']
    """
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if WIDGET_VIEW in output.get("data", {}):
                output["data"] = {"text/html": note_html}
                output.get("metadata", {}).pop(WIDGET_VIEW, None)
    return nb


def lesson_minutes(stated: list[tuple[str, int]]) -> int | None:
    """A lesson's whole time from what it states: its "Time" (or "total"), else the sum of its parts.

    >>> lesson_minutes([("Time", 45), ("teaching", 30), ("exercises", 15)]), lesson_minutes([("Teaching", 25), ("Exercises", 10)])
    (45, 35)
    >>> lesson_minutes(stated_minutes("**Time:** about 55 minutes (teaching 35 min, exercises 20 min)"))
    55
    """
    if not stated:
        return None
    whole = [n for label, n in stated if label.lower() in ("time", "total", "duration", "about", "")]
    return whole[0] if whole else sum(n for _, n in stated)
