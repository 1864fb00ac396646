"""A scalable Bloom filter: it grows when traffic is not known in advance.

A plain filter is sized for n keys; past n its rate climbs.  Almeida, Baquero, Preguiça
and Hutchison ("Scalable Bloom filters", Information Processing Letters 101(6), 2007) add a
new sub-filter each time the newest is full: s times larger (``growth``) and with an error
rate r times smaller (``tightening``).  Sub-filter i errs with p0 r^i, so a query of all of
them errs with less than p0 + p0 r + ... = p0 / (1 - r); choosing p0 = p (1 - r) keeps the
whole filter under the target ``fpp`` however far it grows
(:func:`bloomedu.variants.theory.scalable_bound`).

How others choose (read in their source): RedisBloom (``BF.RESERVE``) gives the first
sub-filter error/2, halves it for each new one and doubles the entries (r = 1/2, s = 2,
p0 = p (1 - r): the same rule as here); pybloom-live 4.0 gives the first p r with r = 0.9
and s = 4 by default, whose limit is p r / (1 - r) = 9 p; pyprobables'
``ExpandingBloomFilter`` adds filters of the same size and rate (s = r = 1), so its rate
grows with their number.  ``first_fpp`` lets a lesson build a peer's choice to measure it.

Each sub-filter is sized as :meth:`bloomedu.BloomFilter.from_capacity` sizes one; a key is
hashed once, and sub-filter t spreads the step h2 for its own k_t
(:func:`bloomedu.core.hashing.step`), so it places the key exactly where
``BloomFilter(m_t, k_t)`` would: the sub-filters' k differ, and the rule that keeps a
key's k values distinct is about the values one table uses.  Taught in
``notebooks/16_deleting_and_growing.ipynb``; tested in ``tests/test_variants.py`` and
``tests/test_variants_rates.py``.
"""

from __future__ import annotations

import struct

import numpy as np

from ..core.checks import check_storage, probability, whole_number
from ..core.contract import filter_repr
from ..core import segments
from ..core.filter import positions
from ..core.hashing import hashed_batches, joined, key_hashes, step
from ..core.serial import Header, Shared, check_clear_beyond, locked
from ..core.theory import size_for
from .bit_table import Table

__all__ = ["ScalableBloomFilter"]

# Version 2: each sub-filter's step h2 spread for its k, as BloomFilter's (the empty key moved).
_HEADER = Header(b"BLMS", 2, "QdQddI")  # n0, fpp, growth, tightening, first fpp, filters
_TABLE = struct.Struct("<QHQ")  # per sub-filter: m, k, count
_MAX_TABLES = 64
MAX_CAPACITY = 2 ** 40


class ScalableBloomFilter(Shared):
    """Sub-filters of n0, n0 s, n0 s^2, ... keys at rates p0, p0 r, p0 r^2, ...

    >>> f = ScalableBloomFilter(initial_capacity=100, fpp=0.01)
    >>> f.add_many(range(1000))
    >>> len(f.tables), [t.count for t in f.tables]
    (4, [100, 200, 400, 296])
    >>> all(f.contains_many(range(1000))), f.bound
    (True, 0.01)
    """

    def __init__(self, initial_capacity: int, fpp: float, growth: int = 2,
                 tightening: float = 0.9, *, first_fpp: float | None = None):
        self.initial_capacity = whole_number(initial_capacity, "initial_capacity", 1, MAX_CAPACITY)
        self.fpp = probability(fpp, "fpp")
        self.growth = whole_number(growth, "growth", 1, 64)
        self.tightening = probability(tightening, "tightening")
        self.first_fpp = self.fpp * (1 - self.tightening) if first_fpp is None \
            else probability(first_fpp, "first_fpp")
        self.tables: list[Table] = []
        self._grow()

    @property
    def bound(self) -> float:
        """The compound rate's limit, p0 / (1 - r) (the target ``fpp`` unless ``first_fpp``)."""
        return round(self.first_fpp / (1 - self.tightening), 15)

    def _grow(self) -> Table:
        i = len(self.tables)
        n, p, m, k = _shape(self.initial_capacity, self.growth, self.first_fpp, self.tightening, i)
        check_storage(8 * -(-m // 64), f"sub-filter {i} (initial_capacity * growth**{i} = {n} "
                                       f"keys at fpp {p:.3g}: num_bits={m})")
        table = Table(m, k)
        self.tables.append(table)
        return table

    @property
    def max_inserts(self) -> int:
        """Inserts this filter takes before it is full: the capacities of every sub-filter it can
        open (at most 64, none over 2**40 keys or under a rate of 1e-300); past them ``add``
        refuses a new key with ``ValueError`` and changes nothing.

        >>> ScalableBloomFilter(10, 0.01, growth=1).max_inserts   # 64 sub-filters of 10 keys
        640
        """
        total = 0
        for i in range(_MAX_TABLES):
            try:
                _shape(self.initial_capacity, self.growth, self.first_fpp, self.tightening, i)
            except ValueError:
                break
            total += self.capacity(i)
        return total

    def capacity(self, i: int) -> int:
        """Keys sub-filter i holds before the next one is added: n0 s^i."""
        return self.initial_capacity * self.growth ** i

    # --- one key ---------------------------------------------------------------------
    @locked
    def __contains__(self, key) -> bool:
        """True if any sub-filter has all of the key's bits set."""
        h1, h2 = key_hashes(key, None)  # unspread: each sub-filter spreads it for its k
        return any(t.has_hashed(h1, step(h2, t.num_hashes)) for t in reversed(self.tables))

    @locked
    def add(self, key) -> None:
        """Insert a key not found yet into the newest sub-filter, adding one when it is full."""
        h1, h2 = key_hashes(key, None)
        if any(t.has_hashed(h1, step(h2, t.num_hashes)) for t in reversed(self.tables)):
            return
        table = self.tables[-1]
        if table.count >= self.capacity(len(self.tables) - 1):
            table = self._grow()
        table.add_hashed(h1, step(h2, table.num_hashes))

    # --- many keys ---------------------------------------------------------------------
    def _found(self, h1: np.ndarray, h2: np.ndarray) -> np.ndarray:
        found = np.zeros(h1.size, dtype=bool)
        for t in self.tables:
            rest = np.flatnonzero(~found)
            if not rest.size:
                break
            found[rest] = t.has_positions(positions(h1[rest], step(h2[rest], t.num_hashes), num_bits=t.num_bits, num_hashes=t.num_hashes))
        return found

    @locked
    def add_many(self, keys) -> None:
        """``add`` every key, in order: exactly the sub-filters a loop of ``add`` leaves.

        Every key is hashed first (a bad key changes nothing).  Then the keys go in windows
        that the newest sub-filter has room for even if each is new; in a window, a key already
        found is skipped, and so is one whose bits the window's earlier new keys all set (a
        repeat, or a false positive of theirs), as one at a time.

        >>> a, b = ScalableBloomFilter(50, 0.2), ScalableBloomFilter(50, 0.2)
        >>> a.add_many(range(400))
        >>> for key in range(400): b.add(key)
        >>> a == b
        True
        """
        for h1, h2 in list(hashed_batches(keys, None)):  # every key hashed before any change
            start = 0
            while start < h1.size:
                table = self.tables[-1]
                room = self.capacity(len(self.tables) - 1) - table.count
                if room <= 0:
                    self._grow()
                    continue
                window = slice(start, min(h1.size, start + room))
                self._add_window(table, h1[window], h2[window])
                start = window.stop

    def _add_window(self, table: Table, h1: np.ndarray, h2: np.ndarray) -> None:
        """Add the keys of a window, which the newest sub-filter ``table`` has room for, as a loop
        of ``add`` would: a key found, or found once the window's earlier new keys are in, is
        skipped."""
        cells = positions(h1, step(h2, table.num_hashes), num_bits=table.num_bits,
                          num_hashes=table.num_hashes)  # (k, n)
        writes = segments.Writes(self._found(h1, h2), cells.T, table.bits.get_unchecked(cells).T)
        first = np.zeros(h1.size, dtype=bool)
        first[np.unique(np.stack([h1, h2], axis=1), axis=0, return_index=True)[1]] = True
        keep = ~writes.seen & first  # a repeat is found once its first is in
        risky = keep & writes.found_if(segments.covered(writes.cells, keep))
        for j in np.flatnonzero(risky).tolist():  # found only if earlier new keys set its bits
            earlier = writes.cells[:j][keep[:j]].ravel()
            keep[j] = not (writes.now_set[j] | np.isin(writes.cells[j], earlier)).all()
        table.set_positions(cells[:, keep], int(keep.sum()))

    @locked
    def contains_many(self, keys) -> np.ndarray:
        """For each key, whether some sub-filter might hold it."""
        answers = [self._found(h1, h2) for h1, h2 in hashed_batches(keys, None)]
        return np.concatenate(answers) if answers else np.zeros(0, dtype=bool)

    # --- what a batch may change (bloomedu.steps.sequential) -------------------------
    @locked
    def inserts_before_change(self) -> int:
        """Inserts before the next sub-filter opens (0: the next insert opens it first)."""
        return max(0, self.capacity(len(self.tables) - 1) - self.tables[-1].count)

    @locked
    def segment_writes(self, keys) -> segments.Writes:
        """The bits each key's ``add`` sets in the newest sub-filter, the only one an insert
        changes; found or not, in any sub-filter."""
        h1, h2 = joined(hashed_batches(keys, None))  # unspread: each sub-filter spreads its own
        table = self.tables[-1]
        cells = positions(h1, step(h2, table.num_hashes), num_bits=table.num_bits, num_hashes=table.num_hashes)
        return segments.Writes(self._found(h1, h2), cells.T, table.bits.get_unchecked(cells).T)

    # --- what it holds ---------------------------------------------------------------------
    @property
    def nbytes(self) -> int:
        """Bytes of bit storage over all sub-filters."""
        return sum(t.bits.nbytes for t in self.tables)

    def __len__(self) -> int:
        """Keys inserted (a key found already, or a repeat, is not counted)."""
        return sum(t.count for t in self.tables)

    @locked
    def to_bytes(self) -> bytes:
        """A versioned header (magic ``BLMS``), each sub-filter's m, k and count, then their bits."""
        head = _HEADER.pack(self.initial_capacity, self.fpp, self.growth, self.tightening,
                            self.first_fpp, len(self.tables))
        return head + b"".join(_TABLE.pack(t.num_bits, t.num_hashes, t.count)
                               for t in self.tables) + \
            b"".join(t.bits.data.tobytes() for t in self.tables)

    @classmethod
    def from_bytes(cls, data) -> "ScalableBloomFilter":
        """Read what :meth:`to_bytes` wrote; anything else raises ``ValueError`` (the length
        checked against the sub-filters the parameters make before any is allocated)."""
        def payload(values):
            n0, fpp, growth, tightening, first, count = values
            n0 = whole_number(n0, "initial_capacity", 1, MAX_CAPACITY)
            growth = whole_number(growth, "growth", 1, 64)
            tightening, first = probability(tightening, "tightening"), probability(first, "first_fpp")
            probability(fpp, "fpp")
            if not 1 <= count <= _MAX_TABLES:
                raise ValueError(f"corrupt header: {count} sub-filters (1..{_MAX_TABLES})")
            shapes.extend(_shape(n0, growth, first, tightening, i) for i in range(count))
            return count * _TABLE.size + sum(8 * -(-m // 64) for _, _, m, _ in shapes)

        shapes: list = []
        (n0, fpp, growth, tightening, first, count), rest = _HEADER.read(
            data, "ScalableBloomFilter", payload)
        for i, (n, _, m, k) in enumerate(shapes):  # the table of sub-filters, before their bits
            stored = _TABLE.unpack_from(rest, i * _TABLE.size)
            if stored[:2] != (m, k) or stored[2] > n or (i < count - 1 and stored[2] != n):
                raise ValueError(f"corrupt data: sub-filter {i} has m={stored[0]}, "
                                 f"k={stored[1]}, count={stored[2]}; these parameters give "
                                 f"m={m}, k={k}, at most {n} keys")
        new = cls(n0, fpp, growth, tightening, first_fpp=first)
        offset = count * _TABLE.size
        for i in range(count):
            if i == len(new.tables):  # the constructor made the first; its shapes give the rest
                new.tables.append(Table(shapes[i][2], shapes[i][3]))
            table = new.tables[i]
            table.count = _TABLE.unpack_from(rest, i * _TABLE.size)[2]
            size = table.bits.data.size
            table.bits.data[:] = np.frombuffer(rest[offset:offset + size], dtype=np.uint8)
            check_clear_beyond(table.bits.data, table.num_bits, f" in sub-filter {i}")
            offset += size
        return new

    def __repr__(self) -> str:
        """n0, p, the growth, the tightening, ``first_fpp`` (where it is not p (1 - r)), the
        sub-filters, the fill (of all their bits) and the keys inserted, counted (``added=``,
        ``len(f)``: a key found already is not counted).

        >>> f = ScalableBloomFilter(initial_capacity=100, fpp=0.01); f.add_many(range(300)); f
        ScalableBloomFilter(initial_capacity=100, fpp=0.01, growth=2, tightening=0.9, sub_filters=2, fill=0.49, added=299)
        """
        first = "" if self.first_fpp == self.fpp * (1 - self.tightening) \
            else f", first_fpp={self.first_fpp:.6g}"
        tables = list(self.tables)
        return filter_repr(self, f"initial_capacity={self.initial_capacity}, fpp={self.fpp}, "
                                 f"growth={self.growth}, tightening={self.tightening}{first}, "
                                 f"sub_filters={len(tables)}",
                           fill=sum(t.bits.count() for t in tables) / sum(t.num_bits for t in tables),
                           added=sum(t.count for t in tables))


def _shape(n0: int, growth: int, p0: float, tightening: float, i: int) -> tuple[int, float, int, int]:
    """Sub-filter i's (keys, rate, m, k) from the parameters, by arithmetic alone (a reader
    checks its input's length with them before allocating); ValueError past the limits.

    >>> _shape(100, 2, 0.001, 0.9, 2)
    (400, 0.0008100000000000001, 5927, 10)
    """
    if i >= _MAX_TABLES:
        raise ValueError(f"the filter is full (max_inserts reached): it already has "
                         f"{_MAX_TABLES} sub-filters; start with a larger initial_capacity or growth")
    n, p = n0 * growth ** i, p0 * tightening ** i
    if n > MAX_CAPACITY or p < 1e-300:
        raise ValueError("the filter is full (max_inserts reached): the next sub-filter would "
                         "hold more than 2**40 keys or err less "
                         "than 1e-300: start with a larger initial_capacity or tightening")
    m, k = size_for(n=n, p=p, asked=f"sub-filter {i} ({n} keys at fpp {p:.3g})")
    return n, p, m, k
