"""The Italian edition's catalogs: one gettext ``.po`` per notebook, one entry per markdown cell.

``python -m tools.lesson_catalogs update`` reads every English notebook under ``notebooks/``
(lessons, ``deeper/``, ``solutions/``) and brings ``translations/it/<same path>.po`` in step, as
gettext's ``msgmerge`` would: a cell whose English is unchanged keeps its translation; a changed
cell keeps the translation of the English it most resembles, marked ``fuzzy`` with that English
beside it (``#| msgid``), for the translator to check; a new cell is untranslated; the entries of
cells that are gone are dropped.  ``python -m tools.lesson_catalogs stat`` counts, per catalog,
what is translated, fuzzy and untranslated (``--check``: exit 1 unless everything is translated).

Code cells are not in the catalogs: the Italian notebooks copy them from the English.

>>> old = [po.Entry("The filter is small.", "Il filtro è piccolo.")]
>>> new = merged(["The filter is small.", "The filter is very small.", "Something else entirely."], old)
>>> [(e.msgstr, e.fuzzy) for e in new]
[('Il filtro è piccolo.', False), ('Il filtro è piccolo.', True), ('', False)]
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path

from . import po

__all__ = ["ROOT", "NOTEBOOKS", "CATALOGS", "english_notebooks", "markdown_cells", "catalog_path",
           "merged", "update", "stat"]

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
CATALOGS = ROOT / "translations"
LANGUAGES = ("it",)
SIMILAR = 0.6  # difflib ratio above which a changed cell keeps its old translation, fuzzy


def english_notebooks(root: Path = NOTEBOOKS) -> list[Path]:
    """Every English lesson, deeper notebook and solution, in order."""
    return sorted(p for folder in (root, root / "deeper", root / "solutions")
                  for p in folder.glob("[0-9][0-9]_*.ipynb"))


def markdown_cells(notebook: Path) -> list[str]:
    """The text of each markdown cell of a notebook, in order."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]


def catalog_path(notebook: Path, language: str = "it", root: Path = NOTEBOOKS,
                 catalogs: Path = CATALOGS) -> Path:
    """``translations/<language>/<the notebook's path under notebooks/>.po``."""
    return catalogs / language / notebook.relative_to(root).with_suffix(".po")


def merged(texts: list[str], old: list[po.Entry]) -> list[po.Entry]:
    """The entries for ``texts`` (the English cells, in order), keeping what ``old`` translated."""
    exact = {e.msgid: e for e in old if e.msgstr}
    candidates = [e for e in old if e.msgstr]
    entries = []
    for text in texts:
        if text in exact:
            kept = exact[text]
            entries.append(po.Entry(text, kept.msgstr, kept.fuzzy, kept.previous))
            continue
        best, score = None, SIMILAR
        for entry in candidates:
            matcher = difflib.SequenceMatcher(None, entry.msgid, text, autojunk=False)
            if matcher.real_quick_ratio() > score and matcher.quick_ratio() > score:
                ratio = matcher.ratio()
                if ratio > score:
                    best, score = entry, ratio
        if best is None:
            entries.append(po.Entry(text))
        else:
            entries.append(po.Entry(text, best.msgstr, True,
                                    best.previous if best.fuzzy and best.previous else best.msgid))
    return entries


def update(language: str = "it", root: Path = NOTEBOOKS, catalogs: Path = CATALOGS) -> list[Path]:
    """Bring every catalog of ``language`` in step with the English notebooks; the changed ones."""
    changed = []
    for notebook in english_notebooks(root):
        path = catalog_path(notebook, language, root, catalogs)
        old = po.loads(path.read_text(encoding="utf-8"), str(path)) if path.exists() else []
        entries = merged(markdown_cells(notebook), old)
        relative = notebook.relative_to(root).as_posix()
        for number, entry in enumerate(entries, 1):
            entry.references = [f"{relative} markdown cell {number}"]
        text = po.dumps(entries, language)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            changed.append(path)
    return changed


def stat(language: str = "it", root: Path = NOTEBOOKS, catalogs: Path = CATALOGS) -> dict:
    """{catalog path: (translated, fuzzy, untranslated)} for every English notebook's catalog
    (a missing catalog counts every cell untranslated)."""
    counts = {}
    for notebook in english_notebooks(root):
        path = catalog_path(notebook, language, root, catalogs)
        texts = markdown_cells(notebook)
        found = {e.msgid: e for e in po.loads(path.read_text(encoding="utf-8"), str(path))} \
            if path.exists() else {}
        done = sum(1 for t in texts if t in found and found[t].done)
        fuzzy = sum(1 for t in texts if t in found and found[t].fuzzy)
        counts[path.relative_to(catalogs).as_posix()] = (done, fuzzy, len(texts) - done - fuzzy)
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.lesson_catalogs", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["update", "stat"])
    parser.add_argument("--language", default="it", choices=LANGUAGES)
    parser.add_argument("--check", action="store_true", help="stat: exit 1 unless all is translated")
    args = parser.parse_args(argv)
    if args.command == "update":
        for path in update(args.language):
            print(f"updated {path.relative_to(ROOT)}")
        return 0
    counts = stat(args.language)
    for name, (done, fuzzy, missing) in counts.items():
        print(f"{name}: {done} translated, {fuzzy} fuzzy, {missing} untranslated")
    totals = [sum(c[i] for c in counts.values()) for i in range(3)]
    print(f"all: {totals[0]} translated, {totals[1]} fuzzy, {totals[2]} untranslated")
    return 1 if args.check and (totals[1] or totals[2]) else 0


if __name__ == "__main__":
    sys.exit(main())
