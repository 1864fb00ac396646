"""The Italian edition's catalogs: one gettext ``.po`` per notebook, one entry per markdown cell.

``python -m tools.lesson_catalogs update`` reads every English notebook under ``notebooks/``
(lessons, ``deeper/``, ``solutions/``) and brings ``translations/it/<same path>.po`` in step, as
gettext's ``msgmerge`` would: a cell whose English is unchanged keeps its translation; a changed
cell keeps the translation of the English it most resembles, marked ``fuzzy`` with that English
beside it (``#| msgid``), for the translator to check; a new cell is untranslated; the entries of
cells that are gone are dropped.  ``python -m tools.lesson_catalogs stat`` counts, per catalog,
what is translated, fuzzy and untranslated (``--check``: exit 1 unless everything is translated).

Code cells are not in the catalogs: the Italian notebooks copy them from the English.
``python -m tools.lesson_catalogs build`` writes ``notebooks/it/<same path>.ipynb`` for every
English notebook whose Italian is missing or out of step: the English notebook with each markdown
cell's translation, its code cells unchanged but the first, which begins with
:data:`SETUP_LINE` (the library's messages in Italian), and its outputs cleared; ``--execute``
then runs each notebook it wrote top to bottom (``jupyter nbconvert --execute --inplace``), as
the English ones are committed.  ``python -m tools.lesson_catalogs check`` lists what is out of
step (the test suite runs it: ``tests/test_italian_edition.py``).

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

__all__ = ["ROOT", "NOTEBOOKS", "CATALOGS", "SETUP_LINE", "english_notebooks", "markdown_cells",
           "catalog_path", "edition_path", "merged", "update", "stat", "translated", "problems",
           "build", "untimed"]

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
CATALOGS = ROOT / "translations"
LANGUAGES = ("it",)
SETUP_LINE = 'from bloomedu.i18n import set_language; set_language("it")\n'
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


def edition_path(notebook: Path, language: str = "it", root: Path = NOTEBOOKS) -> Path:
    """``notebooks/<language>/<the notebook's path under notebooks/>``."""
    return root / language / notebook.relative_to(root)


def translated(notebook: Path, language: str = "it", root: Path = NOTEBOOKS,
               catalogs: Path = CATALOGS) -> dict:
    """The notebook of ``language`` made from the English ``notebook`` and its catalog, outputs
    cleared.  Raises ValueError naming the cells whose translation is missing or fuzzy."""
    path = catalog_path(notebook, language, root, catalogs)
    entries = {e.msgid: e for e in po.loads(path.read_text(encoding="utf-8"), str(path))} \
        if path.exists() else {}
    book = json.loads(notebook.read_text(encoding="utf-8"))
    missing, setup_done, number = [], False, 0
    for cell in book["cells"]:
        text = "".join(cell["source"])
        cell.get("metadata", {}).pop("execution", None)  # the English run's timestamps
        if cell["cell_type"] == "markdown":
            number += 1
            entry = entries.get(text)
            if entry is None or not entry.done:
                missing.append(f"markdown cell {number} ({'fuzzy' if entry else 'untranslated'})")
                continue
            cell["source"] = entry.msgstr.splitlines(keepends=True)
        elif cell["cell_type"] == "code":
            if not setup_done:
                text, setup_done = SETUP_LINE + text, True
            cell["source"] = text.splitlines(keepends=True)
            cell["outputs"], cell["execution_count"] = [], None
    if missing:
        raise ValueError(f"{notebook.relative_to(root)}: no {language} translation for "
                         + ", ".join(missing) + f" in {path.relative_to(catalogs.parent)}")
    metadata = book["metadata"]
    metadata.pop("jupytext", None)  # no paired script: the catalog is the source
    metadata.pop("widgets", None)  # the English run's widget state: executing makes its own
    metadata.setdefault("bloomedu", {})["edition"] = {
        "language": language, "english": notebook.relative_to(root).as_posix()}
    return book


def _comparable(book: dict) -> list:
    """A notebook's cells without what executing it changes (outputs, counts, timestamps)."""
    return [(c["cell_type"], "".join(c["source"]), untimed(c)) for c in book["cells"]]


def _settled(book: dict) -> dict:
    """A notebook's metadata without the widget state executing it records."""
    return {key: value for key, value in book["metadata"].items() if key != "widgets"}


def untimed(cell: dict) -> dict:
    """A cell's metadata without the ``execution`` timestamps nbconvert records.

    >>> untimed({"metadata": {"tags": ["x"], "execution": {"iopub.status.idle": "..."}}})
    {'tags': ['x']}
    """
    return {key: value for key, value in cell.get("metadata", {}).items() if key != "execution"}


def problems(language: str = "it", root: Path = NOTEBOOKS, catalogs: Path = CATALOGS) -> list[str]:
    """What is out of step in the edition of ``language``: a notebook missing or not what its
    English and its catalog make (a translation or code cell changed since it was built), or
    not executed top to bottom (execution counts 1, 2, 3, ... in every code cell)."""
    found = []
    for notebook in english_notebooks(root):
        target = edition_path(notebook, language, root)
        name = target.relative_to(root).as_posix()
        try:
            expected = translated(notebook, language, root, catalogs)
        except ValueError as error:
            found.append(str(error))
            continue
        if not target.exists():
            found.append(f"{name}: missing (python -m tools.lesson_catalogs build --execute)")
            continue
        have = json.loads(target.read_text(encoding="utf-8"))
        if _comparable(have) != _comparable(expected) or _settled(have) != expected["metadata"]:
            found.append(f"{name}: not what {notebook.relative_to(root).as_posix()} and its "
                         "catalog make (python -m tools.lesson_catalogs build --execute)")
            continue
        counts = [c["execution_count"] for c in have["cells"] if c["cell_type"] == "code"]
        if counts != list(range(1, len(counts) + 1)):
            found.append(f"{name}: not executed top to bottom (execution counts {counts[:6]}...)")
    extra = {p for p in (root / language).rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts} \
        - {edition_path(nb, language, root) for nb in english_notebooks(root)}
    found += [f"{p.relative_to(root).as_posix()}: no English notebook of that name" for p in sorted(extra)]
    return found


def build(language: str = "it", root: Path = NOTEBOOKS, catalogs: Path = CATALOGS,
          force: bool = False, only: list[str] | None = None) -> list[Path]:
    """Write every notebook of ``language`` that is missing or out of step (all with
    ``force``; only those whose name begins with one of ``only``, when given); the paths written."""
    written = []
    for notebook in english_notebooks(root):
        if only and not any(notebook.name.startswith(start) for start in only):
            continue
        target = edition_path(notebook, language, root)
        book = translated(notebook, language, root, catalogs)
        if not force and target.exists():
            have = json.loads(target.read_text(encoding="utf-8"))
            if _comparable(have) == _comparable(book) and _settled(have) == book["metadata"]:
                continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(book, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(target)
    return written


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
    parser.add_argument("command", choices=["update", "stat", "build", "check"])
    parser.add_argument("--execute", action="store_true", help="build: run each notebook written")
    parser.add_argument("--force", action="store_true", help="build: every notebook, not only those out of step")
    parser.add_argument("--language", default="it", choices=LANGUAGES)
    parser.add_argument("--check", action="store_true", help="stat: exit 1 unless all is translated")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help="build: only the notebooks whose file name begins with a NAME "
                             "(01_seen_ids, 07_, 12_guava_solutions; with --force, rebuilt anyway: "
                             "what a change to the library's catalog needs)")
    args = parser.parse_args(argv)
    if args.command == "update":
        for path in update(args.language):
            print(f"updated {path.relative_to(ROOT)}")
        return 0
    if args.command == "build":
        written = build(args.language, force=args.force, only=args.only)
        for path in written:
            print(f"built {path.relative_to(ROOT)}")
        if args.execute and written:
            import subprocess
            for path in written:
                subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook",
                                "--execute", "--inplace", path.name], cwd=path.parent, check=True)
        return 0
    if args.command == "check":
        found = problems(args.language)
        for line in found:
            print(line)
        print(f"{len(found)} notebooks out of step" if found else "the Italian edition is in step")
        return 1 if found else 0
    counts = stat(args.language)
    for name, (done, fuzzy, missing) in counts.items():
        print(f"{name}: {done} translated, {fuzzy} fuzzy, {missing} untranslated")
    totals = [sum(c[i] for c in counts.values()) for i in range(3)]
    print(f"all: {totals[0]} translated, {totals[1]} fuzzy, {totals[2]} untranslated")
    return 1 if args.check and (totals[1] or totals[2]) else 0


if __name__ == "__main__":
    sys.exit(main())
