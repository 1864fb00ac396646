"""A stable Bloom filter: a fixed memory that keeps forgetting, built for duplicates in streams.

Deng and Rafiei ("Approximately detecting duplicates for streaming data using stable Bloom
filters", SIGMOD 2006) keep m cells of d bits (Max = 2^d - 1).  Each insert first
decrements P cells chosen at random (a cell at 0 stays at 0), then sets its own K cells to
Max; a key is reported seen when all K of its cells are non-zero.  Old keys fade, and the
fraction of zero cells settles at a stable point whatever the stream's length
(:func:`bloomedu.variants.theory.stable_zero_fraction`), and with it the false-positive
rate.  The price: a key can fade before its duplicate arrives, a false negative whose
chance grows with the gap (:func:`~bloomedu.variants.theory.stable_false_negative_rate`).
The one promise: a key just inserted is found, and still found after (Max - 1) // P more
inserts (each can take at most P from a cell).

The P cells of insert number t are drawn from a counter-based generator seeded by
``seed``: cell j is ``fmix64(seed' + (t P + j + 1) * 0x9E3779B97F4A7C15) mod m``.  So the
randomness is reproducible, and inserting keys one by one or in a batch gives the same
cells bit for bit.  Taught in ``notebooks/15_forgetting_old_clicks.ipynb`` (a day through it) and
``notebooks/16_deleting_and_growing.ipynb`` (its false negatives against the gap), its Markov
chain in ``notebooks/deeper/16_stable_filter_chain.ipynb``; tested in
``tests/test_variants.py`` and ``tests/test_variants_rates.py``.
"""

from __future__ import annotations

import numpy as np

from ..core.checks import MAX_HASHES, whole_number
from ..core.counters import MAX_CELLS, CounterArray
from ..kernels.murmur import fmix64_array
from ..core.filter import bit_position
from ..core.filter import bit_indices
from ..core.hashing import fmix64
from ..core import segments
from ..core.filter import positions
from ..core.hashing import hashed_batches, joined, key_hashes
from ..core.contract import filter_repr
from ..core.serial import Header, Shared, locked

__all__ = ["StableBloomFilter"]

# Version 2: the step h2 spread as BloomFilter's (the empty key's cells moved).
_HEADER = Header(b"BLMT", 2, "QHBQQQ")  # m, K, d, P, seed, inserted
_MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_SEED_SALT = 0x632BE59BD9B4E019


class StableBloomFilter(Shared):
    """m cells of d bits; each insert decrements P random cells, then sets its K cells to Max.

    >>> f = StableBloomFilter(num_cells=1000, num_hashes=3, bits_per_cell=2, decrements=5, seed=1)
    >>> f.add("123"); "123" in f, "456" in f
    (True, False)
    >>> f.add_many(range(2000)); "123" in f, f.zero_fraction()
    (False, 0.25)
    """

    def __init__(self, num_cells: int, num_hashes: int, bits_per_cell: int, decrements: int,
                 seed: int = 0):
        self.num_cells = whole_number(num_cells, "num_cells", 1, MAX_CELLS)
        self.num_hashes = whole_number(num_hashes, "num_hashes", 1, MAX_HASHES)
        self.bits_per_cell = whole_number(bits_per_cell, "bits_per_cell", 1, 8)
        self.decrements = whole_number(decrements, "decrements", 1, 1 << 20)
        self.seed = whole_number(seed, "seed", 0, _MASK64)
        self.cells = CounterArray(self.num_cells, self.bits_per_cell)
        self.max_value = self.cells.max_value
        self.inserted = 0
        self._seed_mix = fmix64((self.seed + _SEED_SALT) & _MASK64)
        self._drops_block: tuple[int, list] = (0, [])

    # --- the random cells ------------------------------------------------------------------
    def decrement_cells(self, insert: int) -> list[int]:
        """The P cells that insert number ``insert`` (0 for the first) decrements.

        >>> StableBloomFilter(1000, 3, 2, 4, seed=1).decrement_cells(0)
        [320, 586, 936, 376]
        """
        base = insert * self.decrements + 1
        return [fmix64((self._seed_mix + (base + j) * _GOLDEN) & _MASK64) % self.num_cells
                for j in range(self.decrements)]

    def _decrement_array(self, first: int, count: int) -> np.ndarray:
        """:meth:`decrement_cells` of inserts ``first .. first + count - 1``, as a (count, P) array."""
        p = self.decrements
        with np.errstate(over="ignore"):
            x = np.arange(count, dtype=np.uint64)[:, None] * np.uint64(p) + \
                np.arange(1, p + 1, dtype=np.uint64) + np.uint64(first * p % (1 << 64))
            x *= np.uint64(_GOLDEN)
            x += np.uint64(self._seed_mix)
            out = np.empty_like(x)
            fmix64_array(out.ravel(), np.empty(x.size, np.uint64), source=x.ravel())
        out %= np.uint64(self.num_cells)
        return out.view(np.int64)

    # --- one key ---------------------------------------------------------------------
    @locked
    def add(self, key) -> None:
        """Decrement this insert's P random cells, then set the key's K cells to Max."""
        h1, h2 = key_hashes(key, self.num_hashes)  # hashed first: a key of a bad type changes nothing
        cells = self.cells
        per, width, mask, view = cells.per_byte, cells.width, cells.mask, cells.view
        for cell in self._drops_of(self.inserted):
            byte, shift = cell // per, (cell % per) * width
            value = view[byte]
            if value >> shift & mask:  # a cell at 0 stays at 0
                view[byte] = value - (1 << shift)
        top = self.max_value
        for cell in bit_indices(h1, h2, num_bits=self.num_cells, num_hashes=self.num_hashes):
            cells.set(cell, top)
        self.inserted = (self.inserted + 1) & _MASK64  # the insert number: counted modulo 2**64

    def _drops_of(self, insert: int) -> list[int]:
        """:meth:`decrement_cells` of one insert, from a block computed in numpy at a time.

        The block doubles while inserts follow one another, up to 16,384 cells: a loop of
        adds pays one numpy call per block, a single add on a fresh filter a small one.
        """
        first, block = self._drops_block
        if not first <= insert < first + len(block):
            inserts = 2 * len(block) if insert == first + len(block) else 0  # the next block
            cells = min(max(inserts * self.decrements, 64), 1 << 14)
            size = max(1, cells // self.decrements)
            first, block = insert, self._decrement_array(insert, size).tolist()
            self._drops_block = (first, block)
        return block[insert - first]

    @locked
    def __contains__(self, key) -> bool:
        """True if all K of the key's cells are non-zero: seen recently, or a false positive."""
        h1, h2 = key_hashes(key, self.num_hashes)
        get, m = self.cells.get, self.num_cells
        for i in range(self.num_hashes):
            if not get(bit_position(h1, h2, i, m)):
                return False
        return True

    # --- many keys ---------------------------------------------------------------------
    @locked
    def add_many(self, keys) -> None:
        """``add`` every key in order; the cells end exactly as after adding them one by one.

        Per cell, only two facts of the batch matter: the last insert that set it, and the
        decrements it received after that one (or in the whole batch, if none set it).
        """
        batches = list(hashed_batches(keys, self.num_hashes))  # all hashed before any change
        for h1, h2 in batches:
            count = h1.size
            sets = positions(h1, h2, num_bits=self.num_cells, num_hashes=self.num_hashes)  # (K, count)
            drops = self._decrement_array(self.inserted, count)  # (count, P)
            cells, where = np.unique(np.concatenate([sets.ravel(), drops.ravel()]),
                                     return_inverse=True)
            where = where.ravel()
            set_at, drop_at = where[:sets.size], where[sets.size:]
            last = np.full(cells.size, -1, dtype=np.int64)
            np.maximum.at(last, set_at, np.tile(np.arange(count), self.num_hashes))
            steps = np.repeat(np.arange(count), self.decrements)
            later = steps > last[drop_at]
            taken = np.bincount(drop_at[later], minlength=cells.size)
            start = np.where(last >= 0, self.max_value, self.cells.take(cells).astype(np.int64))
            self.cells.put(cells, np.maximum(start - taken, 0))
            self.inserted = (self.inserted + count) & _MASK64

    @locked
    def contains_many(self, keys) -> np.ndarray:
        """For each key, whether all K of its cells are non-zero."""
        answers = [self.cells.all_nonzero(positions(h1, h2, num_bits=self.num_cells, num_hashes=self.num_hashes))
                   for h1, h2 in hashed_batches(keys, self.num_hashes)]
        return np.concatenate(answers) if answers else np.zeros(0, dtype=bool)

    # --- what a batch may change (bloomedu.steps.sequential) -------------------------
    def inserts_before_change(self) -> None:
        """None: the cells never change shape (each insert decrements, see ``may_lose``)."""
        return None

    @locked
    def segment_writes(self, keys) -> segments.Writes:
        """The cells each key's ``add`` sets to Max and which are non-zero now; and, since
        every insert first decrements P cells, which keys found now may be lost at their turn:
        one of their cells holds 1..d, d the decrements the inserts before them could make it."""
        h1, h2 = joined(hashed_batches(keys, self.num_hashes))
        cells = positions(h1, h2, num_bits=self.num_cells, num_hashes=self.num_hashes)
        values = self.cells.take(cells).astype(np.int64)
        n, w = h1.size, self.num_hashes
        drops = self._decrement_array(self.inserted, n)  # row t: insert t of the segment
        span = n + 1
        tagged = np.sort((drops * span + np.arange(n)[:, None]).ravel())  # cell, then row
        base = cells.T.ravel() * span
        before = np.searchsorted(tagged, base + np.repeat(np.arange(n), w)) - \
            np.searchsorted(tagged, base)  # decrements of the cell in rows 0..j-1
        flat = values.T.ravel()
        fragile = ((flat > 0) & (flat <= before)).reshape(n, w).any(axis=1)
        now_set = values > 0
        return segments.Writes(now_set.all(axis=0), cells.T, now_set.T, may_lose=fragile)

    # --- what it holds -----------------------------------------------------------------------
    @property
    def nbytes(self) -> int:
        """Bytes of cell storage (d bits a cell, stored at 1, 2, 4 or 8 bits)."""
        return self.cells.nbytes

    @locked
    def zero_fraction(self) -> float:
        """The fraction of cells at 0 (Deng and Rafiei's measure of the stable point)."""
        return float(self.cells.histogram()[0]) / self.num_cells

    @locked
    def to_bytes(self) -> bytes:
        """A versioned header (magic ``BLMT``: m, K, d, P, seed, inserts so far), then the cells."""
        return _HEADER.pack(self.num_cells, self.num_hashes, self.bits_per_cell, self.decrements,
                            self.seed, self.inserted) + self.cells.data.tobytes()

    @classmethod
    def from_bytes(cls, data) -> "StableBloomFilter":
        """Read what :meth:`to_bytes` wrote; anything else raises ``ValueError`` (the length
        checked against the header before anything is allocated)."""
        def payload(values):
            m, k, d = values[:3]
            m = whole_number(m, "num_cells", 1, MAX_CELLS)
            whole_number(k, "num_hashes", 1, MAX_HASHES)
            return CounterArray.storage_bytes(m, whole_number(d, "bits_per_cell", 1, 8))

        (m, k, d, p, seed, inserted), stored = _HEADER.read(data, "StableBloomFilter", payload)
        new = cls(m, k, d, p, seed)
        new.cells.data[:] = np.frombuffer(stored, dtype=np.uint8)
        wrong = new.cells.corruption()
        if wrong:
            raise ValueError(f"corrupt data: {wrong}")
        new.inserted = inserted
        return new

    def __repr__(self) -> str:
        """Its parameters, the fill (cells above zero, which settles near a stable point) and
        the keys inserted since it was made, counted (``added=``, modulo 2**64).

        >>> f = StableBloomFilter(num_cells=1000, num_hashes=3, bits_per_cell=2, decrements=5)
        >>> f.add_many(range(2000)); f
        StableBloomFilter(num_cells=1000, num_hashes=3, bits_per_cell=2, decrements=5, seed=0, fill=0.77, added=2000)
        """
        used = self.num_cells - int(self.cells.histogram()[0])
        return filter_repr(self, f"num_cells={self.num_cells}, num_hashes={self.num_hashes}, "
                                 f"bits_per_cell={self.bits_per_cell}, decrements={self.decrements}, "
                                 f"seed={self.seed}",
                           fill=used / self.num_cells, added=self.inserted)
