"""The Italian edition is kept in step with the English by its catalogs (``tools/lesson_catalogs.py``).

The committed Italian notebooks (``notebooks/it/``) must be exactly what the English notebooks and
``translations/it/*.po`` make, executed top to bottom; every markdown cell of every English
notebook must have a translation that is not fuzzy.  The lessons phase of ``make test`` then runs
strict nbval on the Italian notebooks as on the English.  The rest of the file checks the tool on
small notebooks of its own: what it reports when the English changes under a translation.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tools import lesson_catalogs as lc
from tools import po

EVERY = lc.english_notebooks()


def test_every_english_notebook_is_in_the_catalogs_translated():
    counts = lc.stat()
    assert len(counts) == len(EVERY) >= 50
    behind = {name: c for name, c in counts.items() if c[1] or c[2]}
    assert not behind, f"fuzzy or untranslated (translated, fuzzy, untranslated): {behind}"


def test_the_italian_notebooks_are_what_the_english_and_the_catalogs_make():
    assert lc.problems() == []


@pytest.mark.parametrize("notebook", EVERY, ids=lambda p: p.relative_to(lc.NOTEBOOKS).as_posix())
def test_an_italian_notebook_keeps_the_english_code_and_cell_kinds(notebook):
    english = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    italian = json.loads(lc.edition_path(notebook).read_text(encoding="utf-8"))["cells"]
    assert [c["cell_type"] for c in italian] == [c["cell_type"] for c in english]
    assert [c.get("id") for c in italian] == [c.get("id") for c in english]
    assert [lc.untimed(c) for c in italian] == [lc.untimed(c) for c in english]  # tags
    code = [("".join(e["source"]), "".join(i["source"])) for e, i in zip(english, italian)
            if e["cell_type"] == "code"]
    assert code[0][1] == lc.SETUP_LINE + code[0][0]  # the one cell that differs
    assert all(e == i for e, i in code[1:])
    prose = [("".join(e["source"]), "".join(i["source"])) for e, i in zip(english, italian)
             if e["cell_type"] == "markdown"]
    assert all(e != i for e, i in prose if re.search(r"[a-z]{4,} [a-z]{4,}", e))  # translated


# --- the tool, on notebooks of its own ------------------------------------------------------------
def _notebook(cells: list[tuple[str, str]]) -> dict:
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {"jupytext": {"formats": "ipynb,py"}},
            "cells": [{"cell_type": kind, "id": f"c{i}", "metadata": {}, "source": text,
                       **({"outputs": [], "execution_count": None} if kind == "code" else {})}
                      for i, (kind, text) in enumerate(cells)]}


@pytest.fixture
def course(tmp_path: Path):
    """A course of one lesson, its catalog translated and its Italian notebook built and
    'executed' (execution counts filled in, as nbconvert does)."""
    root, catalogs = tmp_path / "notebooks", tmp_path / "translations"
    root.mkdir()
    lesson = root / "01_x.ipynb"
    lesson.write_text(json.dumps(_notebook([("markdown", "# One\n\nA filter."), ("code", "1 + 1"),
                                            ("markdown", "The end of the lesson."),
                                            ("code", "2 + 2")])))
    lc.update("it", root, catalogs)
    path = lc.catalog_path(lesson, "it", root, catalogs)
    italian = {"# One\n\nA filter.": "# Uno\n\nUn filtro.",
               "The end of the lesson.": "La fine della lezione."}
    entries = po.loads(path.read_text())
    for entry in entries:
        entry.msgstr = italian[entry.msgid]
    path.write_text(po.dumps(entries))
    (built,) = lc.build("it", root, catalogs)
    book = json.loads(built.read_text())
    for count, cell in enumerate((c for c in book["cells"] if c["cell_type"] == "code"), 1):
        cell["execution_count"] = count
    built.write_text(json.dumps(book))
    assert lc.problems("it", root, catalogs) == []
    return root, catalogs, lesson, built


def test_the_built_notebook_has_the_translation_and_the_setup_line(course):
    _, _, _, built = course
    cells = json.loads(built.read_text())["cells"]
    assert ["".join(c["source"]) for c in cells] == [
        "# Uno\n\nUn filtro.", lc.SETUP_LINE + "1 + 1", "La fine della lezione.", "2 + 2"]


def test_a_changed_english_sentence_is_reported_untranslated_then_fuzzy(course):
    root, catalogs, lesson, _ = course
    book = json.loads(lesson.read_text())
    book["cells"][2]["source"] = "The end of this lesson."
    lesson.write_text(json.dumps(book))
    assert lc.stat("it", root, catalogs) == {"it/01_x.po": (1, 0, 1)}
    assert "markdown cell 2 (untranslated)" in " ".join(lc.problems("it", root, catalogs))
    lc.update("it", root, catalogs)  # msgmerge: the old translation kept, marked fuzzy
    assert lc.stat("it", root, catalogs) == {"it/01_x.po": (1, 1, 0)}
    (entry,) = [e for e in po.loads(lc.catalog_path(lesson, "it", root, catalogs).read_text())
                if e.fuzzy]
    assert (entry.msgstr, entry.previous) == ("La fine della lezione.", "The end of the lesson.")
    assert "markdown cell 2 (fuzzy)" in " ".join(lc.problems("it", root, catalogs))
    with pytest.raises(ValueError, match=r"01_x.ipynb: no it translation for markdown cell 2 \(fuzzy\)"):
        lc.build("it", root, catalogs)


def test_changed_code_or_a_stale_translation_or_no_execution_is_out_of_step(course):
    root, catalogs, lesson, built = course
    book = json.loads(lesson.read_text())
    book["cells"][3]["source"] = "2 + 3"
    lesson.write_text(json.dumps(book))
    assert lc.problems("it", root, catalogs) == [
        "it/01_x.ipynb: not what 01_x.ipynb and its catalog make "
        "(python -m tools.lesson_catalogs build --execute)"]
    assert lc.build("it", root, catalogs) == [built]  # rebuilt: outputs cleared, not executed
    assert "not executed top to bottom" in lc.problems("it", root, catalogs)[0]
    path = lc.catalog_path(lesson, "it", root, catalogs)
    path.write_text(path.read_text().replace("Un filtro.", "Un filtro di Bloom."))
    assert "not what" in lc.problems("it", root, catalogs)[0]


def test_force_rebuilds_what_is_in_step_and_only_limits_it_to_the_names_given(course):
    root, catalogs, lesson, built = course
    other = root / "02_y.ipynb"
    other.write_text(json.dumps(_notebook([("code", "3 + 3")])))
    lc.update("it", root, catalogs)
    assert lc.build("it", root, catalogs, only=["02_"]) == [lc.edition_path(other, "it", root)]
    assert lc.build("it", root, catalogs, only=["01_x"]) == []  # in step: left as executed
    assert lc.build("it", root, catalogs, force=True, only=["01_x"]) == [built]  # say()'s new
    assert "not executed top to bottom" in " ".join(lc.problems("it", root, catalogs))  # Italian


def test_an_italian_notebook_without_an_english_one_is_reported(course):
    root, catalogs, _, built = course
    (root / "it" / "02_gone.ipynb").write_text(built.read_text())
    assert lc.problems("it", root, catalogs) == ["it/02_gone.ipynb: no English notebook of that name"]


def test_a_catalog_survives_writing_and_reading_every_kind_of_text():
    texts = ["", "one line", "two\nlines\n", 'quotes " and \\ backslash\tand tab', "è à ù ò 😀",
             "$$\\frac{m}{n}\\ln 2$$", "ends with a blank line\n\n"]
    entries = [po.Entry(t or "x", t, fuzzy=i % 2 == 1, previous="old\n" if i % 2 else None,
                        references=[f"f.ipynb markdown cell {i}"]) for i, t in enumerate(texts)]
    assert po.loads(po.dumps(entries)) == entries


def test_a_malformed_catalog_line_is_refused_with_its_place():
    with pytest.raises(ValueError, match=r"bad\.po:2: cannot read 'nonsense'"):
        po.loads('msgid "a"\nnonsense\n', "bad.po")


def test_the_readme_lists_every_italian_lesson_by_its_own_title():
    readme = (lc.ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Il corso in italiano\n", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^(\d+)\. \[(.+)\]\((notebooks/it/[^)]+)\)$", section, re.M)
    lessons = [nb for nb in EVERY if nb.parent == lc.NOTEBOOKS]
    assert [path for _, _, path in listed] == [
        lc.edition_path(nb).relative_to(lc.ROOT).as_posix() for nb in lessons]
    for number, title, path in listed:
        heading = json.loads((lc.ROOT / path).read_text(encoding="utf-8"))["cells"][0]["source"][0]
        assert heading.rstrip("\n") == f"# {int(number):02d} · {title}"
    for command in ("update", "stat", "build --execute"):
        assert f"python -m tools.lesson_catalogs {command}" in section
