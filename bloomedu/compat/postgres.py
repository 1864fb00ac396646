"""PostgreSQL's ``bloom`` index (contrib/bloom), bit for bit: the signature it stores for each row.

``CREATE INDEX ... USING bloom (a, b) WITH (length=80, col1=2, col2=2)`` keeps, for every row of
the table, one small Bloom filter of that row alone: a *signature* of ``length`` bits (rounded
up to 16-bit words), in which each column sets ``colN`` bits.  A query with equality on some
columns computes the same kind of signature from its values; every row whose signature holds all
of the query's bits is a *candidate*, handed to the heap for the recheck, which drops the false
positives.  The whole index is read at each scan: it is small, not sorted.

What ``blutils.c`` does for one value of column ``attno`` (0 for the first column):

1. ``mySrand(attno)``, then ``seed = hash(value) ^ myRand()``: the column's number makes
   the same value set different bits in different columns;
2. ``mySrand(seed)``, then for each of the column's bits: ``bit = myRand() % (words * 16)``,
   set as bit ``bit % 16`` of 16-bit word ``bit / 16`` (for one seed in 2^31 the generator
   is stuck at -1, and the server sets bit 15 of word 0: :meth:`BloomIndex.value_bits`).

The hash is the operator class's: ``hashtext`` for ``text`` and ``hashint4`` for ``int4``
(:mod:`~bloomedu.compat.postgres_hash`); the generator is Park and Miller's on a C int32
(:mod:`~bloomedu.compat.postgres_random`).  A NULL sets no bits (``BloomFormTuple`` skips it),
and a query with a NULL key finds nothing (``blgetbitmap``).  Here a ``str`` is a text value,
an ``int`` an int4 value, ``None`` NULL.

The options are checked as the index checks them: ``length`` 1..4096 bits (rounded up to a
multiple of 16), each column's bits 1..4095, at most 32 columns.  Unlike the index, whose
columns all default to 2 bits, ``col_bits`` names every column: its length is the number of
columns.

Taught in the lesson "Bloom filters inside the engines"; tested in
``tests/test_postgres_index.py`` and, against the real server's index pages, in
``tests/test_postgres_server.py``.

>>> index = BloomIndex(length=80, col_bits=(2, 2))
>>> index.signature(("alice", 42))
(0, 8192, 0, 32, 129)
>>> index.candidates([("alice", 42), ("bob", 7), (None, 42)], {1: 42})
[0, 2]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..core.checks import is_int, whole_number
from .postgres_hash import hashint4, hashtext
from .postgres_random import BloomRandom, c_div, c_mod

__all__ = ["BloomIndex", "column_hash", "WORD_BITS", "MAX_LENGTH", "MAX_COL_BITS", "MAX_COLUMNS"]

WORD_BITS = 16                      # SIGNWORDBITS: a signature is an array of uint16
MAX_LENGTH = 256 * WORD_BITS        # MAX_BLOOM_LENGTH, in bits: 4096
MAX_COL_BITS = MAX_LENGTH - 1       # MAX_BLOOM_BITS: 4095
MAX_COLUMNS = 32                    # INDEX_MAX_KEYS in a default build


def column_hash(value) -> int:
    """The hash the index's operator class gives ``value``: ``hashtext`` for a str (text),
    ``hashint4`` for an int (int4); unsigned 32 bits.

    >>> column_hash("alice") == hashtext("alice"), column_hash(-5) == hashint4(-5)
    (True, True)
    """
    if isinstance(value, str):
        return hashtext(value)
    if is_int(value):
        return hashint4(int(value))
    raise TypeError(f"a column value must be a str (text), an int (int4) or None (NULL), "
                    f"not {type(value).__name__}")


class BloomIndex:
    """The signatures of a ``bloom`` index ``WITH (length=..., col1=..., col2=..., ...)``.

    ``length`` is the signature's length in bits (1..4096, rounded up to whole 16-bit words, as
    the index does); ``col_bits[i]`` is the number of bits column ``i`` sets (1..4095), and
    there are ``len(col_bits)`` columns (1..32).

    >>> index = BloomIndex(length=20, col_bits=(3,))
    >>> index.num_words, index.num_bits
    (2, 32)
    >>> BloomIndex(length=0)
    Traceback (most recent call last):
    ValueError: length must be an int in 1..4096, got 0
    """

    def __init__(self, length: int = 80, col_bits: Sequence[int] = (2, 2)):
        self.length = whole_number(length, "length", 1, MAX_LENGTH)
        if isinstance(col_bits, (str, bytes)) or not isinstance(col_bits, Sequence):
            raise TypeError(f"col_bits must be a sequence of ints (bits per column), "
                            f"not {type(col_bits).__name__}")
        if not 1 <= len(col_bits) <= MAX_COLUMNS:
            raise ValueError(f"col_bits must name 1..{MAX_COLUMNS} columns (an index has at "
                             f"most {MAX_COLUMNS}), got {len(col_bits)}")
        self.col_bits = tuple(whole_number(bits, f"col_bits[{i}]", 1, MAX_COL_BITS)
                              for i, bits in enumerate(col_bits))
        self.num_words = -(-self.length // WORD_BITS)   # bloptions rounds up to whole words
        self.num_bits = self.num_words * WORD_BITS

    @property
    def num_columns(self) -> int:
        """How many columns the index has."""
        return len(self.col_bits)

    def value_bits(self, column: int, value) -> list[int]:
        """The bit numbers ``signValue`` sets for ``value`` in column ``column`` (0-based), in order.

        Each is ``myRand() % num_bits``; bit ``b`` is bit ``b % 16`` of word ``b // 16``, and
        two draws may give the same bit.

        >>> BloomIndex().value_bits(1, 42)
        [64, 71]

        One seed in 2^31 leaves the generator stuck at -1 (:meth:`BloomRandom.rand
        <bloomedu.compat.postgres_random.BloomRandom.rand>`): C's ``-1 % num_bits`` is -1,
        and every draw is -1.  The int4 188470658 in the first column does that:

        >>> BloomIndex().value_bits(0, 188470658)
        [-1, -1]
        """
        column = whole_number(column, "column", 0, self.num_columns - 1)
        hash_value = column_hash(value)
        generator = BloomRandom()
        generator.srand(column)                                      # mySrand(attno)
        generator.srand(hash_value ^ (generator.rand() & 0xFFFFFFFF))  # hash ^ myRand(), as uint32
        return [c_mod(generator.rand(), self.num_bits) for _ in range(self.col_bits[column])]

    @staticmethod
    def _word_and_mask(bit: int) -> tuple[int, int]:
        """Where ``SETBIT(sign, bit)`` puts ``bit``: word ``bit / 16`` (C's), mask ``1 << (bit % 16)``.

        For the stuck generator's -1 that is word 0 (C's -1 / 16 is 0) shifted by -1 bits,
        which C leaves undefined; the compiled server sets bit 15 of word 0, as if it took
        the count modulo 16 (measured on Debian's PostgreSQL 15 for amd64: the recorded
        vectors hold such rows), and so does this.

        >>> BloomIndex._word_and_mask(35), BloomIndex._word_and_mask(-1)
        ((2, 8), (0, 32768))
        """
        return c_div(bit, WORD_BITS), 1 << (bit & (WORD_BITS - 1))

    def _set(self, words: list[int], column: int, value) -> None:
        for bit in self.value_bits(column, value):
            word, mask = self._word_and_mask(bit)
            words[word] |= mask

    def _check_row(self, row, name: str) -> tuple:
        if isinstance(row, (str, bytes)) or not isinstance(row, Sequence):
            raise TypeError(f"{name} must be a sequence of {self.num_columns} column values, "
                            f"not {type(row).__name__}")
        if len(row) != self.num_columns:
            raise ValueError(f"{name} must have {self.num_columns} values (one per column), "
                             f"got {len(row)}")
        return tuple(row)

    def signature(self, row: Sequence) -> tuple[int, ...]:
        """The ``num_words`` 16-bit words the index stores for ``row`` (``BloomFormTuple``).

        ``row`` holds one value per column: str (text), int (int4) or None (NULL, no bits).

        >>> index = BloomIndex(length=32, col_bits=(1, 1))
        >>> index.signature(("a", None)), index.signature((None, None))
        ((16, 0), (0, 0))
        """
        row = self._check_row(row, "row")
        words = [0] * self.num_words
        for column, value in enumerate(row):
            if value is not None:
                self._set(words, column, value)
        return tuple(words)

    def query_signature(self, query: Mapping[int, object]) -> tuple[int, ...] | None:
        """The signature a scan looks for, from ``{column: value}`` equalities (``blgetbitmap``).

        Columns are 0-based.  The scan's signature ORs each key's bits, exactly as a row's does;
        a key that is NULL means no row can match (the index's operators are strict): None.

        >>> index = BloomIndex()
        >>> index.query_signature({1: 42}), index.query_signature({0: None})
        ((0, 0, 0, 0, 129), None)
        """
        if not isinstance(query, Mapping):
            raise TypeError(f"query must be a mapping {{column: value}}, not {type(query).__name__}")
        words = [0] * self.num_words
        for column, value in query.items():
            column = whole_number(column, "a query's column", 0, self.num_columns - 1)
            if value is None:
                return None
            self._set(words, column, value)
        return tuple(words)

    @staticmethod
    def covers(signature: Sequence[int], wanted: Sequence[int]) -> bool:
        """True when ``signature`` holds every bit of ``wanted``: ``(sign & wanted) == wanted``
        on each word, the test ``blgetbitmap`` makes for each index tuple.

        >>> BloomIndex.covers((0b111, 0), (0b101, 0)), BloomIndex.covers((0b011, 0), (0b101, 0))
        (True, False)
        """
        return all(have & want == want for have, want in zip(signature, wanted))

    def candidates(self, rows: Sequence[Sequence], query: Mapping[int, object]) -> list[int]:
        """The positions in ``rows`` of the rows the index hands to the recheck for ``query``.

        Every row that matches the query is among them (no false negatives); the others are the
        false positives the heap's recheck removes ("Rows Removed by Index Recheck").

        >>> index = BloomIndex(length=16, col_bits=(1,))
        >>> rows = [(n,) for n in range(40)]
        >>> index.candidates(rows, {0: 3})
        [3, 5, 22, 29]
        """
        wanted = self.query_signature(query)
        if wanted is None:
            return []
        return [i for i, row in enumerate(rows)
                if self.covers(self.signature(self._check_row(row, f"rows[{i}]")), wanted)]

    def options(self) -> str:
        """The ``WITH (...)`` clause that creates this index in PostgreSQL.

        >>> BloomIndex(length=64, col_bits=(4, 2)).options()
        'length=64, col1=4, col2=2'
        """
        return ", ".join([f"length={self.length}"]
                         + [f"col{i + 1}={bits}" for i, bits in enumerate(self.col_bits)])

    def __repr__(self) -> str:
        return f"BloomIndex(length={self.length}, col_bits={self.col_bits})"
