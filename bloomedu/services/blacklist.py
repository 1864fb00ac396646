"""A blacklist cache: a Bloom filter in front of a slow database.

Article 2 ("Bloom Filter: come memorizzare 1 Milione di stringhe in meno di
2MB?") keeps a million malicious URLs in a database (or on a slow file system)
and puts a Bloom filter in front of it.  When the filter says "no", the URL is
not blacklisted, for certain, and the database is not asked.  When it says
"maybe", the database settles it, so the answer is always exactly the
database's: a false positive costs one query, never a wrong answer.

- :func:`create_database` writes the database: an SQLite file (the standard
  library's :mod:`sqlite3`) with one table ``blacklist(url TEXT PRIMARY KEY)``;
- :class:`BlacklistDatabase` asks it, one URL or many at a time, and counts queries;
- :class:`BlacklistCache` is the filter in front of it; :class:`LookupStats` says
  how many lookups the filter settled and how many reached the database.

Taught in ``notebooks/10_blacklist_cache.ipynb``; tested in
``tests/test_blacklist.py``.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from ..core.checks import is_int
from ..core.filter import BloomFilter
from .schema import check_byte_equality

__all__ = ["create_database", "BlacklistDatabase", "BlacklistCache", "LookupStats"]

_CHUNK_ROWS = 1 << 16  # rows read at a time when a filter is filled from the database


def _check_path(path, name: str = "path") -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{name} must be a str or os.PathLike file path, not {type(path).__name__}")
    return Path(path)


def _check_url(url) -> str:
    if not isinstance(url, str):
        raise TypeError(f"url must be str, not {type(url).__name__}")
    return url


def _check_urls(urls) -> list[str]:
    """The URLs as a list, after checking that every one is a str."""
    if isinstance(urls, (str, bytes)):
        raise TypeError(f"urls must be an iterable of str (use the single-URL method for one "
                        f"URL), not {type(urls).__name__}")
    urls = urls if isinstance(urls, list) else list(urls)
    if not set(map(type, urls)) <= {str}:
        for index, url in enumerate(urls):
            if not isinstance(url, str):
                raise TypeError(f"urls must hold only str, but urls[{index}] is "
                                f"{type(url).__name__}")
    return urls


def create_database(path, urls: Iterable[str], *, overwrite: bool = False) -> int:
    """Write an SQLite blacklist of ``urls`` at ``path``; return the number of distinct URLs.

    One table, ``blacklist(url TEXT PRIMARY KEY) WITHOUT ROWID``: the primary key
    is the index the lookups use.  The URLs go in sorted, with one ``executemany``
    in one transaction, into a temporary file renamed to ``path`` at the end, so a
    failure never leaves a half-written database behind.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     create_database(Path(folder) / "bl.sqlite", ["http://a.xyz/1", "http://b.top/2"])
    2
    """
    path = _check_path(path)
    urls = _check_urls(urls)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"path's folder {str(path.parent)!r} does not exist")
    if path.exists() and not overwrite:
        raise FileExistsError(f"{str(path)!r} exists: pass overwrite=True to replace it")
    building = path.with_name(path.name + ".building")
    building.unlink(missing_ok=True)
    connection = sqlite3.connect(building)
    try:
        # No journal and no fsync while building: a crash loses only the temporary file.
        connection.execute("PRAGMA journal_mode = OFF")
        connection.execute("PRAGMA synchronous = OFF")
        connection.execute("CREATE TABLE blacklist (url TEXT PRIMARY KEY) WITHOUT ROWID")
        with connection:  # one transaction; sorted keys append to the B-tree in order
            connection.executemany("INSERT OR IGNORE INTO blacklist (url) VALUES (?)",
                                   zip(sorted(urls)))
        rows = connection.total_changes
    except BaseException:
        connection.close()
        building.unlink(missing_ok=True)
        raise
    connection.close()
    os.replace(building, path)
    return rows


class BlacklistDatabase:
    """The slow store: an SQLite blacklist file, opened read-only.

    ``queries`` counts URLs asked about, ``statements`` the SELECTs that asked.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "bl.sqlite"
    ...     _ = create_database(path, ["http://a.xyz/1", "http://b.top/2"])
    ...     with BlacklistDatabase(path) as db:
    ...         print(len(db), db.contains("http://a.xyz/1"), db.contains("https://ok.org/"))
    ...         print(db.contains_many(["https://ok.org/", "http://b.top/2"]).tolist())
    ...         print(db.queries, db.statements)
    2 True False
    [False, True]
    4 3
    """

    def __init__(self, path):
        path = _check_path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no blacklist database at {str(path)!r}: "
                                    "make one with create_database(path, urls)")
        self.path = path
        uri = path.resolve().as_uri() + "?mode=ro"
        self._connection = sqlite3.connect(uri, uri=True, isolation_level=None)
        try:
            self._connection.execute("SELECT url FROM blacklist LIMIT 1").fetchall()
            self._connection.execute("CREATE TEMP TABLE probe (url TEXT)")
        except sqlite3.DatabaseError as error:
            self._connection.close()
            raise ValueError(f"{str(path)!r} is not a blacklist database: {error}") from None
        self.queries = 0
        self.statements = 0

    def contains(self, url: str) -> bool:
        """Whether ``url`` is blacklisted: one indexed SELECT."""
        url = _check_url(url)
        row = self._connection.execute(
            "SELECT 1 FROM blacklist WHERE url = ?", (url,)).fetchone()
        self.queries += 1
        self.statements += 1
        return row is not None

    def contains_many(self, urls: Iterable[str]) -> np.ndarray:
        """A bool array: for each URL, whether it is blacklisted; one SELECT for all of them.

        The URLs go into a temporary table that is joined to the blacklist's
        primary key (CROSS JOIN keeps the temporary table as the outer loop).
        """
        urls = _check_urls(urls)
        if not urls:
            return np.zeros(0, dtype=bool)
        connection = self._connection
        connection.execute("BEGIN")
        try:
            connection.executemany("INSERT INTO temp.probe (url) VALUES (?)", zip(urls))
            found = {url for (url,) in connection.execute(
                "SELECT DISTINCT p.url FROM temp.probe AS p CROSS JOIN blacklist AS b "
                "ON b.url = p.url")}
        finally:
            connection.execute("DELETE FROM temp.probe")
            connection.execute("COMMIT")
        self.queries += len(urls)
        self.statements += 1
        return np.fromiter((url in found for url in urls), dtype=bool, count=len(urls))

    def iter_urls(self, chunk_size: int = _CHUNK_ROWS) -> Iterator[list[str]]:
        """Every blacklisted URL, as lists of up to ``chunk_size`` (not counted as queries);
        a value that is not text (a BLOB, a number) is a ``ValueError``."""
        if not is_int(chunk_size) or chunk_size < 1:
            raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
        cursor = self._connection.execute("SELECT url FROM blacklist")
        while rows := cursor.fetchmany(int(chunk_size)):
            urls = [url for (url,) in rows]
            if not set(map(type, urls)) <= {str}:
                odd = next(url for url in urls if not isinstance(url, str))
                raise ValueError(f"{str(self.path)!r} holds a {type(odd).__name__} in "
                                 f"blacklist.url ({odd!r:.40}), not text")
            yield urls

    def check_byte_equality(self) -> None:
        """Raise ``ValueError`` unless ``blacklist.url`` compares URLs byte for byte, as a
        :class:`BlacklistCache` needs (see :mod:`bloomedu.services.schema`)."""
        check_byte_equality(self._connection, repr(str(self.path)))

    def __reduce__(self):
        """Pickle as the file's path (and the counts): unpickling opens the file again."""
        return self._reopen, (str(self.path), self.queries, self.statements)

    @classmethod
    def _reopen(cls, path: str, queries: int, statements: int) -> "BlacklistDatabase":
        database = cls(path)
        database.queries, database.statements = queries, statements
        return database

    def __len__(self) -> int:
        return self._connection.execute("SELECT count(*) FROM blacklist").fetchone()[0]

    def close(self) -> None:
        """Close the connection (calling it again does nothing)."""
        self._connection.close()

    def __enter__(self) -> "BlacklistDatabase":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"BlacklistDatabase({str(self.path)!r})"


@dataclass(frozen=True)
class LookupStats:
    """What a :class:`BlacklistCache` did, counted per URL.

    ``lookups = filter_rejections + database_queries`` and
    ``database_queries = blacklisted + false_positives``; ``sql_statements``
    counts SELECTs (a bulk lookup asks the database about all its maybes in one).

    >>> s = LookupStats(lookups=100, filter_rejections=97, database_queries=3,
    ...                 blacklisted=2, false_positives=1, sql_statements=3)
    >>> s.queries_saved, s.saved_share
    (97, 0.97)
    """

    lookups: int = 0
    filter_rejections: int = 0
    database_queries: int = 0
    blacklisted: int = 0
    false_positives: int = 0
    sql_statements: int = 0

    @property
    def queries_saved(self) -> int:
        """Lookups the filter answered alone (each one a database query saved)."""
        return self.filter_rejections

    @property
    def saved_share(self) -> float:
        """Share of lookups that never reached the database (0 before any lookup)."""
        return self.filter_rejections / self.lookups if self.lookups else 0.0


def _check_bloom(bloom) -> BloomFilter | None:
    if bloom is not None and not isinstance(bloom, BloomFilter):
        raise TypeError(f"bloom must be a BloomFilter or None, not {type(bloom).__name__}")
    return bloom


class BlacklistCache:
    """A Bloom filter of every blacklisted URL in front of a :class:`BlacklistDatabase`.

    ``database`` is an open :class:`BlacklistDatabase` or a path (then the cache
    opens it and closes it on :meth:`close`).  ``bloom`` is the filter to fill,
    to choose m and k by hand; by default one sized for the database's n URLs at
    false-positive rate ``fpp``.  The filter is filled from the database itself,
    so it holds every blacklisted URL and its "no" is always right.  A database
    it did not create must compare URLs byte for byte (no ``COLLATE NOCASE``,
    no numeric column; :meth:`BlacklistDatabase.check_byte_equality`), or the
    cache refuses it.  :meth:`create` writes the database and the filter from
    one list of URLs.  A cache pickles with its filter and counts, and opens
    its database file again when unpickled.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "bl.sqlite"
    ...     _ = create_database(path, ["http://a.xyz/1", "http://b.top/2"])
    ...     with BlacklistCache(path, fpp=0.01) as cache:
    ...         print(cache.is_blacklisted("http://a.xyz/1"), cache.is_blacklisted("https://ok.org/"))
    ...         print(cache.is_blacklisted_many(["http://b.top/2", "https://ok.org/"]).tolist())
    ...         print(cache.stats)
    True False
    [True, False]
    LookupStats(lookups=4, filter_rejections=2, database_queries=2, blacklisted=2, false_positives=0, sql_statements=2)
    """

    def __init__(self, database, bloom: BloomFilter | None = None, fpp: float = 0.001):
        bloom = _check_bloom(bloom)
        if isinstance(database, BlacklistDatabase):
            owns_database = False
        elif isinstance(database, (str, os.PathLike)):
            database, owns_database = BlacklistDatabase(database), True
        else:
            raise TypeError("database must be a BlacklistDatabase or a file path, "
                            f"not {type(database).__name__}")
        try:
            database.check_byte_equality()
            if bloom is None:
                bloom = BloomFilter.from_capacity(max(1, len(database)), fpp)
            for chunk in database.iter_urls():
                bloom.add_many(chunk)
        except BaseException:
            if owns_database:
                database.close()
            raise
        self._start(database, bloom, owns_database)

    @classmethod
    def create(cls, path, urls: Iterable[str], bloom: BloomFilter | None = None,
               fpp: float = 0.001, *, overwrite: bool = False) -> "BlacklistCache":
        """Write the database of ``urls`` at ``path`` (:func:`create_database`) and put a filter in front.

        The filter (by default sized for ``len(urls)`` at ``fpp``) is then filled
        from the file, as ``BlacklistCache(path, bloom)`` fills it (reading back a
        million URLs takes about half a second, the write about five); the cache
        opens the file and closes it on :meth:`close`.

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     with BlacklistCache.create(Path(folder) / "bl.sqlite", ["http://a.xyz/1"]) as cache:
        ...         print(cache.is_blacklisted("http://a.xyz/1"), len(cache.database))
        True 1
        """
        urls = _check_urls(urls)
        if _check_bloom(bloom) is None:
            bloom = BloomFilter.from_capacity(max(1, len(urls)), fpp)
        create_database(path, urls, overwrite=overwrite)
        return cls(path, bloom)

    def _start(self, database: BlacklistDatabase, bloom: BloomFilter, owns_database: bool) -> None:
        self.database = database
        self.bloom = bloom
        self._owns_database = owns_database
        self._counts = dict.fromkeys(LookupStats.__dataclass_fields__, 0)

    def __getstate__(self) -> tuple:
        return self.database, self.bloom, self._owns_database, dict(self._counts)

    def __setstate__(self, state: tuple) -> None:
        """Unpickling: the database (opened again) checked, for the file may have changed since."""
        database, bloom, owns_database, counts = state
        database.check_byte_equality()
        self._start(database, bloom, owns_database)
        self._counts.update(counts)

    def is_blacklisted(self, url: str) -> bool:
        """Whether ``url`` is blacklisted: the filter's "no" is final, its "maybe" asks the database."""
        url = _check_url(url)
        counts = self._counts
        counts["lookups"] += 1
        if url not in self.bloom:
            counts["filter_rejections"] += 1
            return False
        found = self.database.contains(url)
        counts["database_queries"] += 1
        counts["sql_statements"] += 1
        counts["blacklisted" if found else "false_positives"] += 1
        return found

    def is_blacklisted_many(self, urls: Iterable[str]) -> np.ndarray:
        """:meth:`is_blacklisted` for many URLs: the filter in bulk, then one SELECT for the maybes."""
        urls = _check_urls(urls)
        answers = np.zeros(len(urls), dtype=bool)
        maybe = np.flatnonzero(self.bloom.contains_many(urls)) if urls else np.zeros(0, int)
        if maybe.size:
            answers[maybe] = self.database.contains_many([urls[i] for i in maybe.tolist()])
        counts = self._counts
        found = int(answers.sum())
        counts["lookups"] += len(urls)
        counts["filter_rejections"] += len(urls) - maybe.size
        counts["database_queries"] += maybe.size
        counts["sql_statements"] += int(maybe.size > 0)
        counts["blacklisted"] += found
        counts["false_positives"] += maybe.size - found
        return answers

    @property
    def stats(self) -> LookupStats:
        """The counts so far, as a frozen :class:`LookupStats`."""
        return LookupStats(**self._counts)

    def reset_stats(self) -> None:
        """Set every count back to zero."""
        self._counts = dict.fromkeys(self._counts, 0)

    def close(self) -> None:
        """Close the database if this cache opened it."""
        if self._owns_database:
            self.database.close()

    def __enter__(self) -> "BlacklistCache":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"BlacklistCache({self.database!r}, {self.bloom!r})"
