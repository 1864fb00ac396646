"""The lessons' exercises as an nbgrader course: ``make assignments`` writes ``instructor/``.

    .venv-instructor/bin/python -m tools.assignments                  # source/, then nbgrader's release/
    .venv-instructor/bin/python -m tools.assignments --source-only    # source/ only, no nbgrader

nbgrader lives in its own environment, ``.venv-instructor`` (``bloomedu[lessons,instructor]``),
never in ``.venv``: the students' JupyterLab (``make lab``) then shows no nbgrader menu.  The
course folder, ``instructor/`` by default, is nbgrader's course directory: ``gradebook.db``,
``source/``, ``release/``, and the ``submitted/``, ``autograded/`` and ``feedback/`` folders
the grading fills.  It is outside ``build/``, so ``make clean`` keeps the grades, and git
ignores it wherever it is (its own ``.gitignore``).  The command ends by printing the next three steps.

Every lesson with exercises becomes one assignment, named as the lesson (``03_bit_vector``),
whose notebook ``source/<name>/<name>.ipynb`` holds, in the lesson's order:

- the worked solutions' set-up cell (imports, seed), locked;
- for each exercise, the lesson's question (its markdown, locked), then the cell the student
  answers in: a solution region (``### BEGIN SOLUTION`` ... ``### END SOLUTION``: the worked
  solution's code, its explanation as comments) above the lesson's own ``check.<name>(answer,
  ...)`` line, then a locked autograder test worth one point that asserts that check;
- nothing of the lesson's teaching, which the lesson holds.

nbgrader's ``generate_assignment`` replaces each solution region by the lesson's own first line,
``answer = None  # replace None with your answer`` (``ClearSolutions.code_stub`` in the
``nbgrader_config.py`` written here), so a released exercise cell is exactly the lesson's: the
student runs it and ``check`` answers at once ("Correct: ...", "Not quite: ..."), as in the
lesson.  The test cell asserts the check only while nbgrader runs the notebook (``autograde``
and ``validate`` set ``NBGRADER_EXECUTION``), so a released notebook still runs top to bottom
with every answer blank.  The test is the same text in ``source/``, ``release/`` and the
gradebook: nbgrader's hidden-test markers would make them differ, and ``autograde`` then warns
that every test cell's checksum changed, even on an untouched submission (nbgrader issue 1961,
the gradebook keeps the checksum taken before the hidden tests are cleared).  ``autograde``
puts each locked cell back from the gradebook, so a student cannot edit the grading away.

Exercises are found in the lessons by ``tools/lesson_cells.py`` and matched to their worked
solution by the check line they share; a lesson split or renumbered needs no edit here.
``tests/test_assignments.py`` autogrades the worked solutions (full marks), the untouched release
(zero, and no warning) and a half-done one with real nbgrader.  nbgrader runs ``alembic`` from the
environment's ``bin/`` when it first creates ``gradebook.db``: that folder goes on ``PATH`` here.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

from tools import lesson_cells

ROOT = lesson_cells.ROOT
OUT = ROOT / "instructor"
ENVIRONMENT = ROOT / ".venv-instructor"  # the Makefile's INSTRUCTOR: where nbgrader is installed
STUB = "answer = None  # replace None with your answer"
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
# nbgrader sets it while it runs a notebook: "autograde" or "validate".
GRADING = "NBGRADER_EXECUTION"
POINTS = 1
SCHEMA = 3

CONFIG = '''"""nbgrader's configuration of the bloomedu course (written by tools/assignments.py)."""
import os

# make assignments writes this file again each time: put settings of your own in
# ~/.jupyter/nbgrader_config.py.
c = get_config()  # noqa: F821 - nbgrader defines it
c.CourseDirectory.course_id = "bloomedu"
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
# A released exercise cell is the lesson's own: the solution region becomes its first line.
c.ClearSolutions.code_stub = {"python": %(stub)r}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
c.ExecutePreprocessor.timeout = 600
'''


@dataclass
class Assignment:
    """One lesson's exercises as an nbgrader source notebook."""

    name: str
    notebook: nbformat.NotebookNode
    points: int


def grade_id(label: str, index: int, part: str) -> str:
    """A cell's nbgrader id from its exercise's label: letters, digits and dashes.

    >>> grade_id("06.1 (compute)", 0, "test"), grade_id("", 2, "answer")
    ('ex-06-1-compute-test', 'ex-3-answer')
    """
    stem = re.sub(r"[^A-Za-z0-9]+", "-", label).strip("-") or str(index + 1)
    return f"ex-{stem}-{part}"


def graded_test(label: str, check_source: str, checker: str) -> str:
    """The autograder test of one exercise: its check asserted while nbgrader grades, else nothing.

    >>> print(graded_test("03.1 (compute)", "check.bits_for(answer, n=8)", "bits_for"))
    # 03.1 (compute): graded here when the assignment is collected (1 point). nbgrader runs
    # this cell with NBGRADER_EXECUTION set, and then the check above must accept your answer;
    # run here, it does nothing.
    import os
    if os.environ.get("NBGRADER_EXECUTION"):
        assert check.bits_for(answer, n=8), '03.1 (compute): check.bits_for does not accept this answer'
    """
    message = f"{label}: check.{checker} does not accept this answer"
    return "\n".join([
        f"# {label}: graded here when the assignment is collected ({POINTS} point). nbgrader runs",
        f"# this cell with {GRADING} set, and then the check above must accept your answer;",
        "# run here, it does nothing.",
        "import os",
        f'if os.environ.get("{GRADING}"):',
        f"    assert {check_source.strip()}, {message!r}"])


def nbgrader_metadata(cell_id: str, *, solution=False, grade=False, locked=False, points=None) -> dict:
    meta = {"grade": grade, "grade_id": cell_id, "locked": locked, "schema_version": SCHEMA,
            "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def _same_call(one: str, other: str) -> bool:
    """The two lines are the same call, whatever their spacing or digit separators."""
    try:
        return ast.dump(ast.parse(one.strip())) == ast.dump(ast.parse(other.strip()))
    except SyntaxError:
        return False


def as_comments(markdown: str) -> list[str]:
    """A worked solution's explanation, as comment lines inside its solution region.

    >>> as_comments("A **new** ID.\\n\\nThen more.")
    ['# A **new** ID.', '#', '# Then more.']
    """
    return [f"# {line}".rstrip() for line in markdown.strip().splitlines()]


def worked_solution(solutions, check_source: str, after: int) -> tuple[list[str], int]:
    """The worked solution of one exercise: the lines of its region, and the index of its check cell.

    The region is every cell after the last heading (or after ``after``, the previous
    exercise's check) up to the cell holding the same check line, the markdown as comments.
    """
    for index in range(after + 1, len(solutions.cells)):
        cell = solutions.cells[index]
        if cell.cell_type == "code" and _same_call(cell.source, check_source):
            break
    else:
        raise ValueError(f"no cell of the worked solutions holds {check_source!r}")
    start = after + 1
    for above in range(index - 1, after, -1):
        if lesson_cells.heading(solutions.cells[above]):
            start = above + 1
            break
    lines = []
    for cell in solutions.cells[start:index]:
        lines += as_comments(cell.source) if cell.cell_type == "markdown" else cell.source.strip().splitlines()
    if not any(line and not line.startswith("#") for line in lines):
        raise ValueError(f"the worked solution of {check_source!r} has no code")
    return lines, index


def setup_code(solutions) -> str:
    """The code cells of the worked solutions above their first exercise heading."""
    first = next((i for i, cell in enumerate(solutions.cells)
                  if lesson_cells.heading(cell) and lesson_cells.heading(cell)[0] >= 2), len(solutions.cells))
    return "\n\n".join(c.source.strip() for c in solutions.cells[:first] if c.cell_type == "code")


def assignment(lesson: Path) -> Assignment | None:
    """The nbgrader source notebook of one lesson, or None if it has no exercises."""
    nb = lesson_cells.read(lesson)
    found = lesson_cells.exercises(nb)
    if not found:
        return None
    solutions_path = lesson_cells.solutions_of(lesson)
    if solutions_path is None:
        raise ValueError(f"{lesson.name} has exercises but no worked solutions in notebooks/solutions/")
    solutions = lesson_cells.read(solutions_path)
    new_md, new_code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    cells = [
        new_md(f"# Assignment · {lesson_cells.title(nb)}\n\n"
               f"The {len(found)} exercises of lesson `{lesson.stem}`, {POINTS} point each. Replace `None` "
               "with your answer and run the cell: `check` tells you at once whether it is right and, "
               "when it is not, which slip it looks like. The same check gives the points when the "
               "assignment is collected. Run the set-up cell first.",
               metadata=nbgrader_metadata("title", locked=True)),
        new_code(setup_code(solutions), metadata=nbgrader_metadata("setup", locked=True)),
    ]
    after = -1
    for number, exercise in enumerate(found):
        region, after = worked_solution(solutions, exercise.check_source, after)
        label = exercise.label or f"exercise {number + 1}"
        for part, index in enumerate(exercise.question):
            cells.append(new_md(nb.cells[index].source,
                                metadata=nbgrader_metadata(grade_id(exercise.label, number, f"question-{part}"),
                                                           locked=True)))
        cells.append(new_code("\n".join([BEGIN, *region, END, exercise.check_source]),
                              metadata=nbgrader_metadata(grade_id(exercise.label, number, "answer"),
                                                         solution=True)))
        cells.append(new_code(graded_test(label, exercise.check_source, exercise.checker),
                              metadata=nbgrader_metadata(grade_id(exercise.label, number, "test"),
                                                         grade=True, locked=True, points=POINTS)))
    notebook = nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": nb.metadata.get("kernelspec", {"name": "python3", "display_name": "Python 3",
                                                     "language": "python"}),
        "language_info": {"name": "python"}})
    return Assignment(lesson.stem, notebook, POINTS * len(found))


def write_source(out: Path = OUT, lessons: list[Path] | None = None) -> list[Assignment]:
    """``nbgrader_config.py`` and ``source/<name>/<name>.ipynb`` for every lesson with exercises,
    in a course folder that git ignores (its ``.gitignore``, written when missing)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "nbgrader_config.py").write_text(CONFIG % {"stub": STUB}, encoding="utf-8")
    ignore = out / ".gitignore"  # grades and submissions are the students' own: never committed
    if not ignore.exists():
        ignore.write_text("# the nbgrader course (make assignments): grades and submissions, never committed\n*\n",
                          encoding="utf-8")
    made = []
    for lesson in lessons or lesson_cells.notebooks("lessons") + lesson_cells.notebooks("deeper"):
        found = assignment(lesson)
        if found is None:
            continue
        folder = out / "source" / found.name
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(found.notebook, str(folder / f"{found.name}.ipynb"))
        made.append(found)
    return made


def executable(name: str, environment: Path | None = None) -> Path:
    """A program of a virtual environment (by default the one this Python runs in).

    >>> executable("nbgrader", Path("/srv/.venv-instructor")).as_posix()
    '/srv/.venv-instructor/bin/nbgrader'
    """
    bin_dir = Path(sys.executable).parent if environment is None else \
        Path(environment) / ("Scripts" if os.name == "nt" else "bin")
    return bin_dir / name


def shown(path: Path, start: Path | None = None) -> str:
    """``path`` as an instructor types it: relative to ``start`` (the working folder) when inside it.

    >>> shown(Path("/srv/course/instructor"), Path("/srv/course")), shown(Path("/tmp/x"), Path("/srv"))
    ('instructor', '/tmp/x')
    >>> shown(Path("/srv/.venv-instructor/bin/nbgrader"), Path("/srv/instructor"))
    '../.venv-instructor/bin/nbgrader'
    """
    path, start = Path(os.path.abspath(path)), Path(os.path.abspath(start or Path.cwd()))
    if path.is_relative_to(start):
        return path.relative_to(start).as_posix()
    if path.is_relative_to(start.parent) and start.parent != start.parent.parent:
        return "../" + path.relative_to(start.parent).as_posix()
    return path.as_posix()


def next_steps(out: Path, example: str, environment: Path | None = None) -> str:
    """What an instructor does after ``make assignments``: hand out, collect, grade.

    >>> print(next_steps(Path("/srv/course/instructor"), "01_seen_ids",
    ...                  Path("/srv/course/.venv-instructor")))  # doctest: +ELLIPSIS
    Next steps (nbgrader's course folder: ...instructor/):
    1. Hand out release/: give each student an assignment's folder, e.g. ...instructor/release/01_seen_ids/
    ...
    """
    course = shown(out)
    tool = shown(executable("nbgrader", environment), out)
    commands = [(f"autograde {example}", 'or "*": every assignment'),
                ("export", "grades.csv: one row per student and assignment"),
                (f"generate_feedback {example}", "feedback/STUDENT_ID/: the page each student gets back")]
    width = max(len(command) for command, _ in commands)
    return "\n".join([
        f"Next steps (nbgrader's course folder: {course}/):",
        f"1. Hand out release/: give each student an assignment's folder, e.g. {course}/release/{example}/",
        "   (a zip, the course page, a shared drive). The student opens the notebook in their own",
        "   JupyterLab (make lab or bloomedu lab), answers, and returns it under the same file name.",
        "2. Put each returned notebook where nbgrader expects it, one folder per student:",
        f"   {course}/submitted/STUDENT_ID/ASSIGNMENT/ASSIGNMENT.ipynb,",
        f"   e.g. {course}/submitted/ada/{example}/{example}.ipynb",
        "3. Grade with the instructor's nbgrader, from the course folder:",
        f"   cd {course}",
        *(f"   {tool} {command:<{width}}  # {why}" for command, why in commands),
    ])


def api(out: Path):
    """nbgrader's Python API on the course in ``out``, configured by its ``nbgrader_config.py``."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(out)).load_config()
    bin_dir = str(Path(sys.executable).parent)  # alembic, which creates the gradebook
    if bin_dir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


def release(out: Path, assignments: list[Assignment]) -> None:
    """nbgrader's ``release/``: each assignment generated from its source (and put in the gradebook),
    in one process (``nbgrader generate_assignment NAME`` does the same, one process each)."""
    course = api(out)
    for found in assignments:
        result = course.generate_assignment(found.name, force=True)
        if not result["success"]:
            raise RuntimeError(f"nbgrader generate_assignment {found.name} failed:\n{result['log']}\n"
                               f"{result.get('error', '')}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help="the course folder (default: instructor/)")
    parser.add_argument("--source-only", action="store_true", help="write source/ only (no nbgrader needed)")
    args = parser.parse_args(argv)
    made = write_source(args.out)
    if not args.source_only:
        release(args.out, made)
    points = sum(a.points for a in made)
    print(f"{len(made)} assignments, {points} points, in {shown(args.out)}/"
          + ("" if args.source_only else " (source/, release/ and the gradebook, gradebook.db)"))
    if not args.source_only and made:
        print()
        print(next_steps(args.out, made[0].name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
