"""Does a blacklist database compare URLs byte for byte?  Checked before a filter stands in front.

A :class:`~bloomedu.services.blacklist.BlacklistCache` promises answers identical
to its database's: the filter's "no" is final.  That holds only if the database
too says "yes" exactly when the bytes are equal.  A database made elsewhere
may not: a ``COLLATE NOCASE`` column finds ``HTTP://A.XYZ/`` for ``http://a.xyz/``,
``COLLATE RTRIM`` ignores trailing spaces, and a ``NUMERIC``, ``INTEGER`` or
``REAL`` column stores ``"1.0"`` as the number 1, which then equals ``"1"`` and
``"01"``.  The filter, built from the stored values, would say "no" to those.

SQLite says what a column compares like only through what it does, so
:func:`check_byte_equality` asks it: the table's own ``CREATE TABLE`` runs in
a scratch in-memory database, a few probe URLs go in, and the comparisons the
cache relies on (``url = ?``) must find each probe and nothing that differs
from it.  A view, a virtual table, a missing table or column, or a schema the
probes cannot be stored in is refused too, each with a clear ``ValueError``.

Taught in ``notebooks/10_blacklist_cache.ipynb`` (the cache); tested in
``tests/test_blacklist.py``.
"""

from __future__ import annotations

import sqlite3

__all__ = ["check_byte_equality"]

# (stored, asked): asked differs from stored, so byte equality must not find it
_MUST_DIFFER = [("http://Case.example/", "http://case.example/"),   # COLLATE NOCASE
                ("http://space.example/ ", "http://space.example/"),  # COLLATE RTRIM
                ("1.0", "1"), ("10", "010")]                          # numeric affinity


def _table(connection: sqlite3.Connection, where: str) -> str:
    """The ``CREATE TABLE`` statement of main.blacklist, or a ValueError saying what is there."""
    row = connection.execute("SELECT type, sql FROM main.sqlite_master "
                             "WHERE name = 'blacklist' COLLATE NOCASE").fetchone()
    if row is None:
        raise ValueError(f"{where} has no table named blacklist")
    kind, sql = row
    if kind != "table":
        raise ValueError(f"{where}: blacklist is a {kind}, not a table; the cache needs a table "
                         "whose url column it can trust")
    if not sql.lstrip().upper().startswith("CREATE TABLE"):
        raise ValueError(f"{where}: blacklist is a virtual table ({sql.split('(')[0].strip()}), "
                         "whose comparisons are its module's, not byte equality")
    return sql


def check_byte_equality(connection: sqlite3.Connection, where: str) -> None:
    """Raise ``ValueError`` unless ``blacklist.url`` holds text compared byte for byte.

    ``where`` names the database in the message.

    >>> db = sqlite3.connect(":memory:")
    >>> _ = db.execute("CREATE TABLE blacklist (url TEXT COLLATE NOCASE PRIMARY KEY)")
    >>> check_byte_equality(db, "this database")
    Traceback (most recent call last):
    ValueError: this database: blacklist.url finds 'http://case.example/' for 'http://Case.example/', a collation that is not byte equality (COLLATE NOCASE, RTRIM or another); the cache's answers would differ from the database's
    """
    sql = _table(connection, where)
    columns = connection.execute("PRAGMA main.table_xinfo(blacklist)").fetchall()
    url = [column for column in columns if column[1].lower() == "url"]
    if not url:
        raise ValueError(f"{where}: table blacklist has no column url")
    if url[0][6]:  # hidden: a generated column
        raise ValueError(f"{where}: blacklist.url is a generated column")
    others = [column[1] for column in columns if column[1].lower() != "url" and not column[6]]
    names = ", ".join(f'"{name}"' for name in [url[0][1]] + others)
    marks = ", ".join("?" * (1 + len(others)))
    scratch = sqlite3.connect(":memory:")
    try:
        scratch.execute(sql)
        scratch.execute("PRAGMA ignore_check_constraints = ON")
        for number, (stored, _) in enumerate(_MUST_DIFFER):  # other columns get distinct numbers
            scratch.execute(f"INSERT INTO blacklist ({names}) VALUES ({marks})",
                            [stored] + [number] * len(others))
        kinds = {kind for (kind,) in scratch.execute("SELECT typeof(url) FROM blacklist")}
        if kinds != {"text"}:
            raise ValueError(
                f"{where}: blacklist.url (declared {url[0][2] or 'with no type'!r}) stores text "
                f"as {' and '.join(sorted(kinds - {'text'}))}: its affinity turns '1.0' into 1, "
                "equal to '1'; the cache's answers would differ from the database's")
        for stored, asked in _MUST_DIFFER:
            found = [scratch.execute("SELECT count(*) FROM blacklist WHERE url = ?",
                                     (text,)).fetchone()[0] for text in (stored, asked)]
            if found != [1, 0]:
                raise ValueError(
                    f"{where}: blacklist.url finds {asked!r} for {stored!r}, a collation that is "
                    "not byte equality (COLLATE NOCASE, RTRIM or another); the cache's answers "
                    "would differ from the database's")
    except sqlite3.Error as error:
        raise ValueError(f"{where}: cannot check how blacklist.url compares ({error}); the "
                         "cache needs a text column it can store probe URLs in") from None
    finally:
        scratch.close()
