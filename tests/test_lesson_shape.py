"""The shape the course keeps, read from the committed notebooks (fast: nothing is executed).

Every core lesson is one sitting (STYLE.md): ``## Objectives`` with a ``**Time:**`` of at most
60 minutes, a ``## Recap`` before its ``## Exercises``, at most 40 cells and 1,800 words of prose,
and at least one figure.  Every figure of every notebook (lessons, worked solutions, deeper)
says in words what it shows: its ``image/png`` output carries an ``alt`` of at least six words
that is not a file name (``bloomedu.teaching.plots.show`` writes it; the site and the slides put
it in the ``<img>``).  No prediction is asked in prose alone: a bold "**Predict" is followed by a
code cell calling ``predict(...)``, and every ``guess = predict(...)`` is revealed by a later
``guess.reveal(...)``.

Words of prose are :func:`tools.lesson_cells.prose_words`: the words of the markdown cells, a word
being a run of characters holding a letter or a digit, with fenced code and display formulas left
out, an inline formula or code span one word, a link its text.  (The project's stop hook counts
every whitespace-separated token of the markdown, a little more.)

The rules themselves live in ``tools/lesson_cells.py`` (:func:`~tools.lesson_cells.shape_problems`,
:func:`~tools.lesson_cells.figure_problems`, :func:`~tools.lesson_cells.prediction_problems`);
the last tests here check them on small notebooks made here.  A failure names the notebook, the
cell (its index from 0, and its first line) and what is wrong.
"""

from __future__ import annotations

import base64

import nbformat
import pytest

from bloomedu.teaching import plots
from tools import lesson_cells

LESSONS = lesson_cells.notebooks("lessons")
EVERY = lesson_cells.every_notebook()
md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell


def name(path) -> str:
    return path.relative_to(lesson_cells.NOTEBOOKS).as_posix()


def report(path, problems: list[str]) -> str:
    return f"{name(path)}:\n  " + "\n  ".join(problems)


def test_there_are_lessons_solutions_and_deeper_notebooks():
    assert LESSONS and all(lesson_cells.notebooks(group) for group in lesson_cells.GROUPS)


@pytest.mark.parametrize("lesson", LESSONS, ids=name)
def test_a_core_lesson_is_one_sitting_with_a_figure(lesson):
    problems = lesson_cells.shape_problems(lesson_cells.read(lesson))
    assert problems == [], report(lesson, problems)


@pytest.mark.parametrize("notebook", EVERY, ids=name)
def test_every_figure_says_in_words_what_it_shows(notebook):
    problems = lesson_cells.figure_problems(lesson_cells.read(notebook))
    assert problems == [], report(notebook, problems)


@pytest.mark.parametrize("notebook", EVERY, ids=name)
def test_no_prediction_is_asked_in_prose_alone_and_each_is_revealed(notebook):
    problems = lesson_cells.prediction_problems(lesson_cells.read(notebook))
    assert problems == [], report(notebook, problems)


# --- the rules, on small notebooks made here ------------------------------------------------------

ALT = "Measured rates fall on the classic curve as k grows, lowest at k = 7."


def figure(alt: str | None = ALT):
    metadata = {} if alt is None else {"image/png": {"alt": alt}}
    return nbformat.v4.new_output("display_data", metadata=metadata, data={
        "image/png": base64.b64encode(b"\x89PNG").decode(), "text/plain": f"Figure: {alt}"})


def lesson(**replace):
    """A lesson of the right shape; ``replace`` swaps cells by index."""
    cells = [
        md("# 01 · A lesson\n\n## Objectives\n\nYou will be able to size a filter.\n\n"
           "**Time:** about 45 minutes (teaching 30 min, exercises 15 min)"),
        md("## Rates\n\n**Predict:** how many false positives?"),
        code('guess = predict("How many false positives?", None)'),
        code("plot()\nshow(ALT)", outputs=[figure()]),
        code("guess.reveal(12)"),
        md("## Recap\n\n- one idea"),
        md("## Exercises"),
        code("answer = None\ncheck.fpp(answer, num_bits=8, num_hashes=1, n=1)"),
    ]
    for index, cell in replace.items():
        cells[int(index.lstrip("c"))] = cell
    return nbformat.v4.new_notebook(cells=cells)


def test_the_alt_rule_is_the_one_show_enforces():
    assert lesson_cells.MIN_ALT_WORDS == plots.MIN_ALT_WORDS
    for alt in ("fig1.png", "A plot.", "The figure below."):
        with pytest.raises(ValueError):
            plots.check_alt(alt)
        assert lesson_cells.alt_problem(alt)
    assert lesson_cells.alt_problem(plots.check_alt(ALT)) is None


def test_a_lesson_of_the_right_shape_has_no_problem():
    nb = lesson()
    assert lesson_cells.shape_problems(nb) == []
    assert lesson_cells.figure_problems(nb) == []
    assert lesson_cells.prediction_problems(nb) == []


@pytest.mark.parametrize("change, expected", [
    ({"c0": md("# 01 · A lesson\n\nNo objectives.")}, "no ## Objectives"),
    ({"c0": md("# 01\n\n## Objectives\n\n- one")}, "states no **Time:**"),
    ({"c0": md("# 01\n\n## Objectives\n\n**Time:** about 75 minutes")}, "states 75 minutes"),
    ({"c5": md("## Summary")}, "no ## Recap"),
    ({"c5": md("## Exercises"), "c6": md("## Recap")}, "## Recap (cell 6 (## Recap)) comes after ## Exercises"),
    ({"c3": code("print(1)")}, "no figure"),
])
def test_each_broken_rule_of_a_sitting_is_named(change, expected):
    problems = lesson_cells.shape_problems(lesson(**change))
    assert any(expected in problem for problem in problems), problems


def test_too_many_cells_or_words_are_counted():
    nb = lesson()
    nb.cells[1:1] = [md(f"Word number {i} of a long lesson.") for i in range(33)]
    assert lesson_cells.shape_problems(nb) == ["41 cells (at most 40)"]
    others = sum(lesson_cells.prose_words(c) for i, c in enumerate(lesson().cells) if i != 1)
    nb = lesson(c1=md(" ".join(["word"] * (1800 - others - 4)) + " `m` and $k = 3$ bits\n\n"
                      "$$p = (1 - e^{-kn/m})^k$$\n\n```\nmany words of code here\n```"))
    assert lesson_cells.shape_problems(nb) == []  # 1,800 exactly: formulas and code are not prose
    nb.cells[5] = md("## Recap\n\n- one idea, and one more")
    assert lesson_cells.shape_problems(nb) == [
        "1,803 words of prose (at most 1,800; the longest cells: 0 (22), 1 (1,774), 5 (6))"]


@pytest.mark.parametrize("alt, expected", [
    (None, "cell 3 (plot()): no alt"),
    ("", "cell 3 (plot()): no alt"),
    ("../_images/5ff1e028d1.png", "is a file name"),
    ("Rates against k.", "has 3 words (at least 6)"),
    ("No description has been provided for this image", "a tool's placeholder"),
])
def test_a_figure_without_a_sentence_is_named(alt, expected):
    nb = lesson(c3=code("plot()\nplt.show()", outputs=[figure(alt)]))
    problems = lesson_cells.figure_problems(nb)
    assert len(problems) == 1 and expected in problems[0], problems


@pytest.mark.parametrize("change, expected", [
    ({"c2": code("x = 3")}, "cell 1 (## Rates): a prediction asked in prose: the next code cell, cell 2 (x = 3)"),
    ({"c2": code('predict("How many?", None)')}, "cell 2 (predict(\"How many?\", None)): predict(...) is not bound"),
    ({"c4": code("print(guess)")}, "guess = predict(...) is never revealed"),
    ({"c4": code('guess = predict("Again?", None)')}, "guess = predict(...) is never revealed"),
])
def test_a_prediction_not_committed_or_never_revealed_is_named(change, expected):
    problems = lesson_cells.prediction_problems(lesson(**change))
    assert any(expected in problem for problem in problems), problems


def test_a_prediction_in_prose_may_be_followed_by_more_prose_before_its_predict_cell():
    nb = lesson()
    nb.cells.insert(2, md("Think about the fill ratio first."))
    assert lesson_cells.prediction_problems(nb) == []
