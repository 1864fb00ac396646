"""The library's own message catalog (``bloomedu/i18n/locale/<lang>/LC_MESSAGES/bloomedu.po``).

``python -m tools.i18n_catalog update`` finds every message the package passes to ``_()``,
``gettext()`` or ``N_()`` as a string literal (read with :mod:`ast`, as ``xgettext`` would) and brings the
catalog in step, by ``msgmerge``'s rules (:func:`tools.lesson_catalogs.merged`): unchanged
kept, changed fuzzy, new untranslated, gone dropped; then it compiles the ``.mo`` beside it
(``compile`` only compiles).  ``stat`` counts what is translated (``--check``: exit 1 unless all).

The lessons print their sentences through ``say("...", field=value)`` and build labels with
``phrase(...)`` (:mod:`bloomedu.i18n`); ``update`` finds those literals in the lessons' ``.py``
twins (lessons, ``deeper/``, ``solutions/``) as it finds the package's, with a reference to the
lesson's line.  ``python -m tools.i18n_catalog prints`` lists each ``print(...)`` in the lessons
that still shows English words (an f-string no catalog can translate): the Italian edition would
print them in English.

The library also looks up other text a lesson's code passes it (a ``predict`` question and its
choices, a ``reveal`` label, ``decorate``'s title and axes, ``show``'s sentence,
``format_table``'s columns), so that the Italian notebooks, whose code cells are the English
ones, show it in Italian; :func:`looked_up_in_code` finds those literals and ``update`` brings
them into the catalog too, with their places in the lessons.

>>> import ast
>>> [m for m, _ in messages_in(ast.parse('print(_("Right."))\\nx = gettext("Hi {name}")'), "f.py")]
['Right.', 'Hi {name}']
>>> english_prints('print(f"{n:,} keys")\\nprint(f"{n:8d} {m:8d}")\\nsay("{n:,} keys", n=n)', "l.py")
['l.py:1']
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

from . import po
from .lesson_catalogs import merged
from .lesson_cells import called_name

__all__ = ["ROOT", "PACKAGE", "LESSON_TWINS", "WORD", "catalog_path", "messages_in", "messages_of",
           "package_messages", "lesson_twins", "lesson_messages", "looked_up_in_code",
           "looked_up_in_lessons", "all_messages", "shown_strings", "english_prints", "update",
           "compile_catalog", "stat"]

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "bloomedu"
LANGUAGES = ("it",)
NAMES = ("_", "gettext", "N_", "say", "phrase")
LESSON_TWINS = ("notebooks/*.py", "notebooks/deeper/*.py", "notebooks/solutions/*.py")
WORD = re.compile(r"[A-Za-z]{2,}")  # a run of two letters or more: something to translate


def catalog_path(language: str = "it", package: Path = PACKAGE) -> Path:
    """The ``.po`` of ``language``; its ``.mo`` is the same path with ``.mo``."""
    return package / "i18n" / "locale" / language / "LC_MESSAGES" / "bloomedu.po"


def messages_in(tree: ast.AST, name: str) -> list[tuple[str, str]]:
    """(message, "file:line") for each call ``_("...")`` or ``gettext("...")`` in ``tree``."""
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in NAMES and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.append((node.args[0].value, f"{name}:{node.lineno}"))
    return sorted(found, key=lambda item: (int(item[1].rsplit(":", 1)[1]), item[0]))


def messages_of(paths, root: Path) -> dict[str, list[str]]:
    """{message: its places, as "file:line" from ``root``} for the files ``paths``, in order."""
    messages: dict[str, list[str]] = {}
    for path in paths:
        relative = path.relative_to(root).as_posix()
        for message, place in messages_in(ast.parse(path.read_text(encoding="utf-8")), relative):
            messages.setdefault(message, []).append(place)
    return messages


def package_messages(package: Path = PACKAGE) -> dict[str, list[str]]:
    """{message: its places} for the whole package, in the order of the files and lines."""
    return messages_of([path for path in sorted(package.rglob("*.py"))
                        if not any(part.startswith(".") or part == "notebooks"
                                   for part in path.relative_to(package).parts)], package.parent)


def lesson_twins(root: Path = ROOT) -> list[Path]:
    """The ``.py`` twin of every English lesson, deeper notebook and worked solution."""
    return [path for pattern in LESSON_TWINS for path in sorted(root.glob(pattern))]


def lesson_messages(root: Path = ROOT) -> dict[str, list[str]]:
    """{message: its places} for every literal the lessons pass to ``say`` or ``phrase``."""
    return messages_of(lesson_twins(root), root)


def shown_strings(node: ast.AST):
    """The string literals ``node`` shows as they are: itself, an f-string's text and the
    literals it formats (``{'rate':>8}``), both sides of ``+``, either branch of ``if``, the items
    of a list or tuple; not what it hands a call (``", ".join(...)``, ``format_table(...)``),
    which is that call's to show or translate."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            yield node.value
    elif isinstance(node, ast.JoinedStr):
        for part in node.values:
            yield from shown_strings(part.value if isinstance(part, ast.FormattedValue) else part)
    elif isinstance(node, ast.BinOp):
        yield from shown_strings(node.left)
        yield from shown_strings(node.right)
    elif isinstance(node, ast.IfExp):
        yield from shown_strings(node.body)
        yield from shown_strings(node.orelse)
    elif isinstance(node, ast.BoolOp):
        for value in node.values:
            yield from shown_strings(value)
    elif isinstance(node, (ast.List, ast.Tuple)):
        for item in node.elts:
            yield from shown_strings(item)
    elif isinstance(node, ast.Starred):
        yield from shown_strings(node.value)


def english_prints(source: str, name: str) -> list[str]:
    """"file:line" of each ``print(...)`` in ``source`` that shows a word of English (two letters
    or more outside the ``{fields}``): it should be ``say(...)``, which a catalog translates."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            texts = [text for arg in node.args for text in shown_strings(arg)]
            if any(WORD.search(text) for text in texts):
                found.append(f"{name}:{node.lineno}")
    return sorted(found, key=lambda place: int(place.rsplit(":", 1)[1]))


# helpers whose title / xlabel / ylabel / reference_label go through the catalog (via decorate)
DRAWN_WORDS = {"decorate", "draw_bits", "draw_bit_groups", "draw_bytes_per_item",
               "draw_measured_vs_theory", "draw_rate_sweep", "plot_fill"}


def looked_up_in_code(source: str, name: str) -> tuple[dict[str, list[str]], list[str]]:
    """({literal: places}, [f-string places]) for the text a lesson's code hands the library to
    look up: predict's question, reveal's label, the drawing helpers' title and axes, show's
    figure sentence (as show normalises it), and plot labels in a cell whose legend decorate
    draws (the cell calls decorate and never .legend, which would redraw it untranslated)."""
    from bloomedu.teaching.experiments import column_header
    from bloomedu.teaching.plots import MIN_ALT_WORDS
    literals: dict[str, list[str]] = {}
    formatted: list[str] = []
    # (line, name, keys) of each dict assigned to a name: a drawing helper may be handed the name
    named_dicts = [(node.lineno, node.targets[0].id, node.value.keys)
                   for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Assign)
                   and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                   and isinstance(node.value, ast.Dict)]
    offset = 0
    for cell in re.split(r"(?m)^(?=# %%)", source):
        tree = ast.parse(cell)
        calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
        legend_by_decorate = (any(called_name(c) == "decorate" for c in calls)
                              and not any(called_name(c) == "legend" for c in calls))
        for call in calls:
            called, values = called_name(call), []
            if called == "predict" and call.args:
                values.append(call.args[0])
            for keyword in call.keywords:  # predict's choices, shown (and accepted) translated
                if called == "predict" and keyword.arg == "choices" and isinstance(
                        keyword.value, (ast.Tuple, ast.List)):
                    values += keyword.value.elts
            if called == "show" and call.args:
                values.append(call.args[0])
            columns = call.args[1:2] + [k.value for k in call.keywords if k.arg == "columns"]
            if called == "format_table" and columns and isinstance(columns[0], (ast.List, ast.Tuple)):
                values += [item for item in columns[0].elts  # the headers it shows, in words
                           if isinstance(item, ast.Constant) and isinstance(item.value, str)
                           and WORD.search(column_header(item.value))]
            if called == "draw_bytes_per_item" and len(call.args) > 3:  # its reference_label
                values.append(call.args[3])
            if called == "draw_bytes_per_item" and len(call.args) > 1:  # {label: bytes}: its legend
                measured, at = call.args[1], offset + call.lineno
                if isinstance(measured, ast.Dict):
                    values += measured.keys
                elif isinstance(measured, ast.Name):  # the dict named earlier in the lesson
                    keys = next((keys for line, target, keys in reversed(named_dicts)
                                 if target == measured.id and line <= at), [])
                    for key in keys:  # file lines already: no offset
                        if isinstance(key, ast.Constant) and isinstance(key.value, str):
                            literals.setdefault(key.value, []).append(f"{name}:{key.lineno}")
            if called == "draw_bit_groups" and len(call.args) > 1 and isinstance(call.args[1], ast.Dict):
                values += call.args[1].keys  # the groups' names, in its legend
            outlined = [k.value for k in call.keywords if k.arg == "outlined"]
            if called == "draw_bit_groups" and outlined and isinstance(outlined[0], ast.Dict):
                values += outlined[0].keys  # outlined={name: indices}: named in its legend too
            for keyword in call.keywords:
                if called == "decorate" and keyword.arg == "legend":  # legend=dict(title=...)
                    options = keyword.value
                    if isinstance(options, ast.Call) and called_name(options) == "dict":
                        values += [k.value for k in options.keywords if k.arg == "title"]
                    elif isinstance(options, ast.Dict):
                        values += [v for k, v in zip(options.keys, options.values)
                                   if isinstance(k, ast.Constant) and k.value == "title"]
                if ((called == "reveal" and keyword.arg == "label")
                        or (called in DRAWN_WORDS
                            and keyword.arg in ("title", "xlabel", "ylabel", "reference_label"))
                        or (keyword.arg == "label" and called != "reveal" and legend_by_decorate)):
                    values.append(keyword.value)
            for value in values:
                place = f"{name}:{offset + value.lineno}"
                if isinstance(value, ast.JoinedStr):
                    formatted.append(place)
                elif isinstance(value, ast.Constant) and isinstance(value.value, str):
                    text = column_header(value.value) if called == "format_table" else value.value
                    if called == "show":  # exercises.show("05") names a lesson, not a figure
                        if len(text.split()) < MIN_ALT_WORDS:
                            continue
                        text = " ".join(text.split())
                    literals.setdefault(text, []).append(place)
        offset += cell.count("\n")
    return literals, formatted


def looked_up_in_lessons(root: Path = ROOT) -> tuple[dict[str, list[str]], list[str]]:
    """:func:`looked_up_in_code` over every lesson twin: ({literal: places}, [f-string places])."""
    literals: dict[str, list[str]] = {}
    formatted: list[str] = []
    for path in lesson_twins(root):
        found, fstrings = looked_up_in_code(path.read_text(encoding="utf-8"),
                                            path.relative_to(root).as_posix())
        for text, places in found.items():
            literals.setdefault(text, []).extend(places)
        formatted += fstrings
    return literals, formatted


def all_messages(package: Path = PACKAGE) -> dict[str, list[str]]:
    """{message: its places}: what the package marks, what the lessons say(), and what their code
    hands the library to look up (:func:`looked_up_in_lessons`), in that order."""
    messages = package_messages(package)
    for found in (lesson_messages(package.parent), looked_up_in_lessons(package.parent)[0]):
        for message, places in found.items():
            messages.setdefault(message, []).extend(places)
    return messages


def compile_catalog(language: str = "it", package: Path = PACKAGE) -> Path:
    """Write the ``.mo`` of the ``.po``; returns its path."""
    source = catalog_path(language, package)
    target = source.with_suffix(".mo")
    target.write_bytes(po.mo_bytes(po.loads(source.read_text(encoding="utf-8"), str(source))))
    return target


def update(language: str = "it", package: Path = PACKAGE) -> Path:
    """Bring the ``.po`` in step with the package's messages and compile it; returns its path."""
    path = catalog_path(language, package)
    old = po.loads(path.read_text(encoding="utf-8"), str(path)) if path.exists() else []
    messages = all_messages(package)
    entries = merged(list(messages), old)
    for entry in entries:
        entry.references = messages[entry.msgid]
        if "{" in entry.msgid:
            entry.notes = ["keep every {field} as it is; they may move"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(po.dumps(entries, language), encoding="utf-8")
    compile_catalog(language, package)
    return path


def stat(language: str = "it", package: Path = PACKAGE) -> tuple[int, int, int]:
    """(translated, fuzzy, untranslated) among the package's messages."""
    path = catalog_path(language, package)
    found = {e.msgid: e for e in po.loads(path.read_text(encoding="utf-8"), str(path))} \
        if path.exists() else {}
    messages = all_messages(package)
    done = sum(1 for m in messages if m in found and found[m].done)
    fuzzy = sum(1 for m in messages if m in found and found[m].fuzzy)
    return done, fuzzy, len(messages) - done - fuzzy


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.i18n_catalog",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["update", "compile", "stat", "prints"])
    parser.add_argument("--language", default="it", choices=LANGUAGES)
    parser.add_argument("--check", action="store_true", help="stat: exit 1 unless all is translated")
    args = parser.parse_args(argv)
    if args.command == "update":
        print(f"updated {update(args.language).relative_to(ROOT)}")
        return 0
    if args.command == "compile":
        print(f"wrote {compile_catalog(args.language).relative_to(ROOT)}")
        return 0
    if args.command == "prints":
        found = [place for path in lesson_twins() for place in
                 english_prints(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())]
        print("\n".join(found) or "no print shows English: the lessons print through say()")
        return 1 if found else 0
    done, fuzzy, missing = stat(args.language)
    print(f"{done} translated, {fuzzy} fuzzy, {missing} untranslated")
    return 1 if args.check and (fuzzy or missing) else 0


if __name__ == "__main__":
    sys.exit(main())
