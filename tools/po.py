"""Read and write gettext catalogs (``.po``) and compile them (``.mo``): the subset the course uses.

A catalog is a list of :class:`Entry`: ``msgid`` (the English), ``msgstr`` (the Italian, empty
while untranslated), ``fuzzy`` (the English changed since it was translated: ``previous`` is the
English the translation was made from), and comments naming where the text comes from.  The
format is GNU gettext's, so Poedit, Lokalize or any editor that knows ``.po`` can open the files.

>>> entry = Entry("A *Bloom filter*\\n\\nis \\"small\\".", "Un *filtro di Bloom*\\n\\nè \\"piccolo\\".")
>>> text = dumps([entry])
>>> loads(text) == [entry]
True
>>> print(text.split("\\n\\n", 1)[1])
msgid ""
"A *Bloom filter*\\n"
"\\n"
"is \\"small\\"."
msgstr ""
"Un *filtro di Bloom*\\n"
"\\n"
"è \\"piccolo\\"."
<BLANKLINE>
"""

from __future__ import annotations

import ast
import struct
from dataclasses import dataclass, field

__all__ = ["Entry", "dumps", "loads", "mo_bytes"]

HEADER = ('msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n'
          '"Content-Transfer-Encoding: 8bit\\n"\n"Language: {language}\\n"\n')


@dataclass
class Entry:
    """One message: the English, its translation, and what the tools know about it."""

    msgid: str
    msgstr: str = ""
    fuzzy: bool = False
    previous: str | None = None  # the English the fuzzy translation was made from
    references: list[str] = field(default_factory=list)  # "#:" lines: where the English is
    notes: list[str] = field(default_factory=list)  # "#." lines: for the translator

    @property
    def done(self) -> bool:
        """Translated and not fuzzy."""
        return bool(self.msgstr) and not self.fuzzy


def _quoted(keyword: str, text: str) -> list[str]:
    """``keyword "..."`` lines, one per line of ``text`` (gettext's own layout)."""
    def quote(part: str) -> str:
        return '"' + part.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t") \
            .replace("\n", "\\n") + '"'
    lines = text.splitlines(keepends=True)
    if len(lines) <= 1:
        return [f"{keyword} {quote(text)}"]
    return [f'{keyword} ""'] + [quote(line) for line in lines]


def dumps(entries: list[Entry], language: str = "it") -> str:
    """The text of a ``.po`` file holding ``entries`` (a header first)."""
    out = [HEADER.format(language=language)]
    for entry in entries:
        lines = [f"#. {note}" for note in entry.notes]
        lines += [f"#: {reference}" for reference in entry.references]
        if entry.fuzzy:
            lines.append("#, fuzzy")
        if entry.previous is not None:
            lines += ["#| " + line for line in _quoted("msgid", entry.previous)]
        lines += _quoted("msgid", entry.msgid) + _quoted("msgstr", entry.msgstr)
        out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def _unquote(line: str, where: str) -> str:
    if not (len(line) >= 2 and line[0] == '"' and line[-1] == '"'):
        raise ValueError(f"{where}: expected a quoted string, got {line!r}")
    return ast.literal_eval(line)  # the escapes gettext writes are Python's


def loads(text: str, name: str = "<catalog>") -> list[Entry]:
    """The entries of a ``.po`` file's text (the header left out).

    >>> loads('#, fuzzy\\n#| msgid "Old"\\nmsgid "New"\\nmsgstr "Vecchio"\\n')
    [Entry(msgid='New', msgstr='Vecchio', fuzzy=True, previous='Old', references=[], notes=[])]
    """
    entries: list[Entry] = []
    fields: dict[str, str] = {}
    flags: list[str] = []
    refs: list[str] = []
    notes: list[str] = []
    current = None

    def finish():
        nonlocal fields, flags, refs, notes, current
        if "msgid" in fields:
            if fields["msgid"] or "msgstr" not in fields or not fields["msgstr"].startswith("Content-Type"):
                if fields["msgid"]:
                    entries.append(Entry(fields["msgid"], fields.get("msgstr", ""),
                                         "fuzzy" in flags, fields.get("previous"), refs, notes))
        fields, flags, refs, notes, current = {}, [], [], [], None

    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        where = f"{name}:{number}"
        if not line:
            finish()
        elif line.startswith("#,"):
            if "msgid" in fields:
                finish()
            flags += [flag.strip() for flag in line[2:].split(",")]
        elif line.startswith("#|"):
            rest = line[2:].strip()
            if rest.startswith("msgid "):
                fields["previous"], current = _unquote(rest[6:].strip(), where), "previous"
            else:
                fields["previous"] += _unquote(rest, where)
        elif line.startswith("#:"):
            refs.append(line[2:].strip())
        elif line.startswith("#."):
            notes.append(line[2:].strip())
        elif line.startswith("#"):
            continue
        elif line.startswith("msgid "):
            if "msgstr" in fields:
                finish()
            fields["msgid"], current = _unquote(line[6:].strip(), where), "msgid"
        elif line.startswith("msgstr "):
            fields["msgstr"], current = _unquote(line[7:].strip(), where), "msgstr"
        elif line.startswith('"') and current:
            fields[current] += _unquote(line, where)
        else:
            raise ValueError(f"{where}: cannot read {raw!r}")
    finish()
    return entries


def mo_bytes(entries: list[Entry]) -> bytes:
    """A compiled catalog (GNU ``.mo``, little-endian) of the entries that are done, for
    Python's :mod:`gettext`; fuzzy and untranslated entries are left out, as ``msgfmt`` does.

    >>> import gettext, io
    >>> catalog = gettext.GNUTranslations(io.BytesIO(mo_bytes([Entry("yes", "sì"), Entry("no", "")])))
    >>> catalog.gettext("yes"), catalog.gettext("no")
    ('sì', 'no')
    """
    header = "Content-Type: text/plain; charset=UTF-8\n"
    pairs = sorted([("", header)] + [(e.msgid, e.msgstr) for e in entries if e.done])
    ids = [key.encode() for key, _ in pairs]
    strs = [value.encode() for _, value in pairs]
    count = len(pairs)
    start = 7 * 4 + 16 * count  # the header, then the two tables of (length, offset)
    offsets, data = [], b""
    for text in ids + strs:
        offsets.append((len(text), start + len(data)))
        data += text + b"\0"
    table = b"".join(struct.pack("<2I", length, offset) for length, offset in offsets)
    head = struct.pack("<7I", 0x950412DE, 0, count, 7 * 4, 7 * 4 + 8 * count, 0, 0)
    return head + table + data
