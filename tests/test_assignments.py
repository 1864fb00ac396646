"""The nbgrader course made from the lessons' exercises (``make assignments``: ``tools/assignments.py``).

Cheap checks, everywhere: each lesson with exercises gives an assignment of one point per
exercise; with its solution region replaced by nbgrader's stub, each answer cell is exactly the
lesson's exercise cell (students keep ``check``'s instant feedback); the regions hold the
worked solutions' code and each test asserts the lesson's own check, only while nbgrader grades.

The ``nbgrader`` tier runs real nbgrader end to end, from this test's environment: nbgrader is
in the instructor's environment (``.venv-instructor``, ``bloomedu[lessons,instructor]``), never in
``.venv``, the environment ``make lab`` serves, and these tests run it there as ``make
assignments`` does: the command line writes a temporary course (``generate_assignment`` for
every lesson) and prints the next steps; three students' submissions (the worked solutions,
the untouched release, a half-done one) are graded with the printed ``nbgrader autograde``,
then ``nbgrader export``: full marks, zero, and in between, and no warning on the untouched one.
The environment is the one ``BLOOMEDU_NBGRADER_VENV`` names (``make test`` names
``.venv-instructor`` and creates it), else ``.venv-instructor`` if it exists, else this one; where
none has nbgrader this tier skips saying so, but where ``make test`` named one, it fails.
"""

from __future__ import annotations

import csv
import doctest
import math
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tools import assignments, lesson_cells

LESSONS = [p for p in lesson_cells.notebooks("lessons") + lesson_cells.notebooks("deeper")
           if lesson_cells.exercises(lesson_cells.read(p))]
STUDENTS = ("solved", "untouched", "half")


def region(source: str) -> list[str]:
    lines = source.splitlines()
    return lines[lines.index(assignments.BEGIN) + 1:lines.index(assignments.END)]


def released(source: str) -> str:
    """What nbgrader's ClearSolutions makes of an answer cell with this project's stub."""
    lines = source.splitlines()
    return "\n".join(lines[:lines.index(assignments.BEGIN)] + [assignments.STUB]
                     + lines[lines.index(assignments.END) + 1:])


def cells_of(nb, kind: str) -> list:
    wanted = {"answer": lambda m: m["solution"], "test": lambda m: m["grade"]}[kind]
    return [c for c in nb.cells if wanted(c.metadata["nbgrader"])]


def test_every_lesson_with_exercises_is_an_assignment(tmp_path):
    assert LESSONS, "no lesson has exercises"
    made = assignments.write_source(tmp_path)
    assert [a.name for a in made] == [p.stem for p in LESSONS]
    for found, lesson in zip(made, LESSONS):
        path = tmp_path / "source" / found.name / f"{found.name}.ipynb"
        nb = nbformat.read(str(path), as_version=4)
        tests = cells_of(nb, "test")
        assert found.points == len(tests) == len(lesson_cells.exercises(lesson_cells.read(lesson)))
        assert sum(c.metadata["nbgrader"]["points"] for c in tests) == found.points
        assert all(c.metadata["nbgrader"]["locked"] for c in tests)
        ids = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells]
        assert len(set(ids)) == len(ids)
    assert "code_stub" in (tmp_path / "nbgrader_config.py").read_text()


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_a_released_answer_cell_is_the_lessons_own_exercise_cell(lesson):
    nb = lesson_cells.read(lesson)
    found = assignments.assignment(lesson)
    answers, tests = cells_of(found.notebook, "answer"), cells_of(found.notebook, "test")
    exercises = lesson_cells.exercises(nb)
    assert [released(c.source) for c in answers] == [nb.cells[e.cell].source for e in exercises]
    for cell, exercise in zip(tests, exercises):
        asserted = [line.strip() for line in cell.source.splitlines() if line.strip().startswith("assert ")]
        assert len(asserted) == 1 and asserted[0].startswith(f"assert {exercise.check_source}, ")
    questions = [c.source for c in found.notebook.cells if "question" in c.metadata["nbgrader"]["grade_id"]]
    assert questions == [nb.cells[i].source for e in exercises for i in e.question]


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_the_solution_regions_hold_the_worked_solutions_code(lesson):
    solutions = lesson_cells.read(lesson_cells.solutions_of(lesson))
    worked = [line for c in solutions.cells if c.cell_type == "code" for line in c.source.splitlines()]
    found = assignments.assignment(lesson)
    code = [line for c in cells_of(found.notebook, "answer") for line in region(c.source)
            if not line.startswith("#") and line.strip()]
    assert code and all(line in worked for line in code)
    setup = found.notebook.cells[1].source
    assert "import" in setup and setup.splitlines()[0] in worked


def test_a_lesson_whose_exercise_has_no_worked_solution_is_an_error(tmp_path):
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    lesson = tmp_path / "01_toy.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[
        md("# 01 · Toy"), md("**01.1 (compute).** k?"),
        code("answer = None  # replace None with your answer\ncheck.optimal_k(answer, num_bits=80, n=10)")]), str(lesson))
    with pytest.raises(ValueError, match="no worked solutions"):
        assignments.assignment(lesson)
    (tmp_path / "solutions").mkdir()
    nbformat.write(nbformat.v4.new_notebook(cells=[
        md("# Solutions · 01"), code("from bloomedu.teaching.exercises import check"),
        md("## 01.1 (compute)"), code("answer = 6"), code("check.optimal_k(answer, num_bits=80, n=11)")]),
        str(tmp_path / "solutions" / "01_toy_solutions.ipynb"))
    with pytest.raises(ValueError, match="no cell of the worked solutions holds"):
        assignments.assignment(lesson)


def test_the_tools_examples_run():
    assert doctest.testmod(assignments).failed == 0


# --- real nbgrader, end to end ----------------------------------------------------------------

def instructor_environment() -> Path | None:
    """The virtual environment whose nbgrader these tests run, or None where there is none."""
    named = os.environ.get("BLOOMEDU_NBGRADER_VENV")
    if named:
        return Path(named)
    for candidate in (assignments.ENVIRONMENT, Path(sys.prefix)):
        if assignments.executable("nbgrader", candidate).is_file():
            return candidate
    return None


@pytest.fixture(scope="module")
def environment():
    found = instructor_environment()
    if found is None or not assignments.executable("nbgrader", found).is_file():
        message = ("nbgrader is not installed: it comes with bloomedu[instructor] into the instructor's "
                   "environment (make assignments creates .venv-instructor; it needs JupyterLab >= 4.2)")
        if os.environ.get("BLOOMEDU_NBGRADER_VENV"):
            pytest.fail(message + f"; make test requires it in {found}")
        pytest.skip(message)
    return found


def python_of(environment: Path) -> Path:
    """The environment's Python (not resolved: a venv's python is a link to the base interpreter)."""
    return assignments.executable("python.exe" if os.name == "nt" else "python", environment)


@pytest.fixture(scope="module")
def course(environment, tmp_path_factory):
    """The course written by the command ``make assignments`` runs, and what it printed."""
    out = tmp_path_factory.mktemp("nbgrader") / "instructor"
    run = subprocess.run([str(python_of(environment)), "-m", "tools.assignments", "--out", str(out)],
                         cwd=assignments.ROOT, capture_output=True, text=True, timeout=900,
                         env=dict(os.environ, PATH="/usr/bin:/bin"))  # alembic found without the venv on PATH
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    made = [assignments.assignment(lesson) for lesson in LESSONS]
    return out, made, run.stdout


def nbgrader(out: Path, environment: Path, *args: str) -> str:
    """Run the instructor's nbgrader as the printed next steps do: the full path, no venv on PATH."""
    run = subprocess.run([str(assignments.executable("nbgrader", environment)), *args], cwd=out,
                         capture_output=True, text=True, env=dict(os.environ, PATH="/usr/bin:/bin"))
    assert run.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    return run.stdout + run.stderr


def submit(out: Path, found, student: str) -> None:
    """The release, answered: every exercise (solved), none (untouched) or the first half."""
    release = nbformat.read(str(out / "release" / found.name / f"{found.name}.ipynb"), as_version=4)
    source = nbformat.read(str(out / "source" / found.name / f"{found.name}.ipynb"), as_version=4)
    worked = {c.metadata["nbgrader"]["grade_id"]: c.source for c in cells_of(source, "answer")}
    answer_cells = cells_of(release, "answer")
    answered = {"solved": len(answer_cells), "untouched": 0, "half": math.ceil(len(answer_cells) / 2)}[student]
    for cell in answer_cells[:answered]:
        lines = worked[cell.metadata["nbgrader"]["grade_id"]].splitlines()
        cell.source = "\n".join(line for line in lines if line not in (assignments.BEGIN, assignments.END))
    folder = out / "submitted" / student / found.name
    folder.mkdir(parents=True)
    nbformat.write(release, str(folder / f"{found.name}.ipynb"))


@pytest.mark.nbgrader
def test_the_release_is_the_source_with_solutions_removed_and_its_tests_unchanged(course):
    out, made, _ = course
    for found in made:
        release = nbformat.read(str(out / "release" / found.name / f"{found.name}.ipynb"), as_version=4)
        text = nbformat.writes(release)
        assert assignments.BEGIN not in text and "HIDDEN TESTS" not in text
        lesson = lesson_cells.read({p.stem: p for p in LESSONS}[found.name])
        assert [c.source for c in cells_of(release, "answer")] == \
            [lesson.cells[e.cell].source for e in lesson_cells.exercises(lesson)]
        # the tests are released as written: their checksums are the gradebook's
        source = nbformat.read(str(out / "source" / found.name / f"{found.name}.ipynb"), as_version=4)
        assert [c.source for c in cells_of(release, "test")] == [c.source for c in cells_of(source, "test")]


@pytest.mark.nbgrader
def test_the_command_prints_the_next_steps_and_the_course_stays_out_of_git(course, environment):
    out, made, printed = course
    first = made[0].name
    tool = assignments.executable("nbgrader", environment).as_posix()
    assert f"{out.as_posix()}/release/{first}/" in printed
    assert f"{out.as_posix()}/submitted/STUDENT_ID/ASSIGNMENT/ASSIGNMENT.ipynb" in printed
    assert f"{tool} autograde {first}" in printed and f"{tool} export" in printed
    assert (out / "gradebook.db").is_file() and (out / "nbgrader_config.py").is_file()


def test_the_course_folder_is_ignored_by_git_wherever_it_is(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assignments.write_source(tmp_path / "course", LESSONS[:1])
    listed = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=tmp_path,
                            capture_output=True, text=True, check=True).stdout
    assert listed.splitlines() == ["!! course/"], listed
    (tmp_path / "course" / ".gitignore").write_text("grades.csv\n")  # the instructor's own: kept
    assignments.write_source(tmp_path / "course", LESSONS[:1])
    assert (tmp_path / "course" / ".gitignore").read_text() == "grades.csv\n"


def test_make_clean_keeps_the_course_and_the_students_lessons():
    printed = subprocess.run(["make", "-n", "clean"], cwd=assignments.ROOT, capture_output=True, text=True,
                             check=True).stdout
    removed = [Path(word) for line in printed.splitlines() if line.startswith("rm ")
               for word in line.split()[1:] if not word.startswith("-")]
    assert Path("build") in removed and Path(".venv-instructor") in removed
    course = assignments.OUT.relative_to(assignments.ROOT)
    for kept in (course, Path("my-lessons")):
        assert not [path for path in removed if path == kept or path in kept.parents], (kept, removed)


@pytest.mark.nbgrader
def test_the_students_environment_cannot_import_nbgrader(environment):
    students = assignments.ROOT / ".venv"
    assert environment.resolve() != students.resolve()
    if not python_of(students).exists():
        pytest.skip("no .venv here (make lab creates it)")
    run = subprocess.run([str(python_of(students)), "-c", "import nbgrader"], capture_output=True, text=True)
    assert run.returncode != 0 and "No module named 'nbgrader'" in run.stderr, run.stderr


@pytest.mark.nbgrader
def test_autograde_gives_the_worked_solutions_full_marks_the_release_zero_and_half_done_between(course,
                                                                                                environment):
    out, made, _ = course
    for student in STUDENTS:  # as the printed steps say: no student added beforehand
        for found in made:
            submit(out, found, student)
    # the untouched release first, alone: nbgrader warns of nothing (no cell changed)
    untouched = nbgrader(out, environment, "autograde", "*", "--student", "untouched")
    warnings = [line for line in untouched.splitlines() if "AutogradeApp | WARNING" in line]
    assert not [line for line in untouched.splitlines() if "checksum" in line.lower()], untouched[-3000:]
    assert not warnings, warnings
    log = nbgrader(out, environment, "autograde", "*")
    nbgrader(out, environment, "export", "--to", str(out / "grades.csv"))
    with open(out / "grades.csv", newline="") as handle:
        grades = {(row["student_id"], row["assignment"]): (float(row["score"]), float(row["max_score"]))
                  for row in csv.DictReader(handle)}
    for found in made:
        assert grades[("solved", found.name)] == (found.points, found.points), (found.name, log[-3000:])
        assert grades[("untouched", found.name)] == (0, found.points), found.name
        half, top = grades[("half", found.name)]
        assert 0 < half < top, (found.name, half)
    assert "checksum" not in log.lower(), log[-3000:]
    # the students saw check's verdicts under their cells, as in the lesson
    graded = nbformat.read(str(out / "autograded" / "untouched" / made[0].name / f"{made[0].name}.ipynb"),
                           as_version=4)
    shown = [o.get("text", "") for c in cells_of(graded, "answer") for o in c.get("outputs", [])]
    assert shown and all(text.startswith("Not answered yet") for text in shown)
    solved = nbformat.read(str(out / "autograded" / "solved" / made[0].name / f"{made[0].name}.ipynb"),
                           as_version=4)
    assert all(any("Correct:" in o.get("text", "") for o in c.get("outputs", [])) for c in cells_of(solved, "answer"))
