"""A counting Bloom filter: each bit becomes a small counter, so keys can be removed.

Article 1 ends its list of properties with "once added, an item cannot be removed", and
lesson 05 shows why (clearing a key's bits erases other keys).  Fan, Cao, Almeida and
Broder ("Summary cache: a scalable wide-area web cache sharing protocol", IEEE/ACM
Transactions on Networking 8(3), 2000) replace each bit by a counter: ``add`` increments
the key's k counters, ``remove`` decrements them, and ``in`` asks that all k be non-zero.
Two pitfalls, both handled here and shown in the lesson:

- a counter that reaches its maximum (15 for 4 bits) stays there: it never wraps to 0, and
  is never decremented again, since its true count is no longer known;
- removing a key that was never added is refused whenever that can be seen (one of its
  counters is 0, or too small for the times the key uses it); a key never added that is a
  false positive cannot be told from an added one, and removing it takes counts from other
  keys: a false negative for one of them (lesson 16 finds one).

Taught in ``notebooks/16_deleting_and_growing.ipynb`` (Fan's bound on overflow derived in
``notebooks/deeper/16_counting_overflow.ipynb``); tested in ``tests/test_variants.py``
and ``tests/test_variants_rates.py``.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ..core.checks import MAX_HASHES, one_of, whole_number
from ..core.counters import MAX_CELLS, CounterArray
from ..core.filter import bit_position
from ..core import segments
from ..core.filter import key_positions, positions
from ..core.hashing import hashed_batches, joined, key_hashes
from ..core.contract import filter_repr
from ..core.serial import Header, Shared, locked
from ..core.theory import estimate_count

__all__ = ["CountingBloomFilter"]

# Version 2: the step h2 spread as BloomFilter's (the empty key's cells moved).
_HEADER = Header(b"BLMC", 2, "QHB")  # m, k, counter bits


class CountingBloomFilter(Shared):
    """A Bloom filter of ``num_cells`` counters (m) of ``counter_bits`` bits, ``num_hashes`` (k).

    >>> f = CountingBloomFilter(num_cells=1000, num_hashes=3)
    >>> f.add("123"); f.add("456")
    >>> "123" in f, "789" in f
    (True, False)
    >>> f.remove("123")
    >>> "123" in f, "456" in f, f.nbytes
    (False, True, 500)
    >>> f.remove("789")
    Traceback (most recent call last):
    ValueError: cannot remove a key that was never added: its counter at cell 296 is 0
    """

    def __init__(self, num_cells: int, num_hashes: int, counter_bits: int = 4):
        m = whole_number(num_cells, "num_cells", 1, MAX_CELLS)
        k = whole_number(num_hashes, "num_hashes", 1, MAX_HASHES)
        bits = one_of(counter_bits, "counter_bits", (4, 8))
        self.num_cells, self.num_hashes, self.counter_bits = m, k, bits
        self.counters = CounterArray(m, bits)  # refuses what memory cannot hold

    @property
    def max_count(self) -> int:
        """The largest value a counter holds (15 for 4 bits); a counter there is saturated."""
        return self.counters.max_value

    def cell_indices(self, key) -> list[int]:
        """The key's k cells, the positions ``BloomFilter(m, k).bit_indices`` would give.

        >>> CountingBloomFilter(1024, 3).cell_indices("123")
        [524, 190, 435]
        """
        return key_positions(key, num_bits=self.num_cells, num_hashes=self.num_hashes)

    # --- one key ---------------------------------------------------------------------
    @locked
    def add(self, key) -> None:
        """Increment the key's k counters (a saturated counter stays at its maximum)."""
        top = self.max_count
        for cell, times in Counter(self.cell_indices(key)).items():
            self.counters.set(cell, min(top, self.counters.get(cell) + times))

    @locked
    def __contains__(self, key) -> bool:
        """True if all k counters are non-zero: added, or a false positive."""
        h1, h2 = key_hashes(key, self.num_hashes)
        get, m = self.counters.get, self.num_cells
        for i in range(self.num_hashes):
            if not get(bit_position(h1, h2, i, m)):
                return False
        return True

    @locked
    def remove(self, key) -> None:
        """Decrement the key's k counters; refuse (filter unchanged) when it cannot have been added.

        A saturated counter is left as it is.  A key found by ``in`` that was never added
        (a false positive) cannot be detected: removing it makes another key vanish.
        """
        uses = Counter(self.cell_indices(key))
        values = {cell: self.counters.get(cell) for cell in uses}
        top = self.max_count
        for cell, times in uses.items():
            if values[cell] == 0:
                raise ValueError("cannot remove a key that was never added: its counter at "
                                 f"cell {cell} is 0")
            if values[cell] < times and values[cell] != top:
                raise ValueError(f"cannot remove a key that was never added: it uses cell {cell} "
                                 f"{times} times and its counter is {values[cell]}")
        for cell, times in uses.items():
            if values[cell] != top:
                self.counters.set(cell, values[cell] - times)

    # --- many keys ---------------------------------------------------------------------
    def _uses(self, keys) -> tuple[np.ndarray, np.ndarray]:
        """Every cell the keys use and how many times (all keys hashed before any change)."""
        cells = [positions(h1, h2, num_bits=self.num_cells, num_hashes=self.num_hashes).ravel()
                 for h1, h2 in hashed_batches(keys, self.num_hashes)]
        if not cells:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.unique(np.concatenate(cells), return_counts=True)

    @locked
    def add_many(self, keys) -> None:
        """``add`` every key: the counters end exactly as after adding them one by one.

        >>> f = CountingBloomFilter(1000, 3); f.add_many(["a", "b", "a"])
        >>> f.contains_many(["a", "b", "c"]).tolist()
        [True, True, False]
        """
        cells, times = self._uses(keys)
        old = self.counters.take(cells).astype(np.int64)
        self.counters.put(cells, np.minimum(old + times, self.max_count))

    @locked
    def remove_many(self, keys) -> None:
        """``remove`` every key, all or nothing: refused (filter unchanged) if any removal is.

        >>> f = CountingBloomFilter(1000, 3); f.add_many(["a", "b"]); f.remove_many(["a"])
        >>> f.contains_many(["a", "b"]).tolist()
        [False, True]
        """
        cells, times = self._uses(keys)
        old = self.counters.take(cells).astype(np.int64)
        stuck = old == self.max_count
        short = ~stuck & (old < times)
        if short.any():
            i = int(np.flatnonzero(short)[0])
            raise ValueError(f"cannot remove keys that were never added: cell {int(cells[i])} "
                             f"is used {int(times[i])} times and its counter is {int(old[i])}")
        self.counters.put(cells, np.where(stuck, old, old - times))

    @locked
    def contains_many(self, keys) -> np.ndarray:
        """For each key, whether all k of its counters are non-zero (a bool array)."""
        answers = [self.counters.all_nonzero(positions(h1, h2, num_bits=self.num_cells, num_hashes=self.num_hashes))
                   for h1, h2 in hashed_batches(keys, self.num_hashes)]
        return np.concatenate(answers) if answers else np.zeros(0, dtype=bool)

    # --- what a batch may change (bloomedu.steps.sequential) -------------------------
    def inserts_before_change(self) -> None:
        """None: a counting filter never changes shape (:mod:`bloomedu.core.segments`)."""
        return None

    @locked
    def segment_writes(self, keys) -> segments.Writes:
        """The counters each key's ``add`` raises and which are non-zero now."""
        h1, h2 = joined(hashed_batches(keys, self.num_hashes))
        cells = positions(h1, h2, num_bits=self.num_cells, num_hashes=self.num_hashes)
        now_set = self.counters.take(cells) > 0
        return segments.Writes(now_set.all(axis=0), cells.T, now_set.T)

    # --- what it holds -------------------------------------------------------------------
    @property
    def nbytes(self) -> int:
        """Bytes of counter storage: m/2 for 4-bit counters, m for 8-bit."""
        return self.counters.nbytes

    @locked
    def saturated(self) -> int:
        """How many counters are stuck at their maximum.

        >>> f = CountingBloomFilter(10, 1); f.add_many(["x"] * 20); f.saturated()
        1
        """
        return int(self.counters.histogram()[self.max_count])

    @locked
    def to_bytes(self) -> bytes:
        """A versioned header (magic ``BLMC``, version, m, k, counter bits), then the counters.

        >>> f = CountingBloomFilter(100, 3); f.add("x")
        >>> CountingBloomFilter.from_bytes(f.to_bytes()) == f
        True
        """
        return _HEADER.pack(self.num_cells, self.num_hashes, self.counter_bits) + \
            self.counters.data.tobytes()

    @classmethod
    def from_bytes(cls, data) -> "CountingBloomFilter":
        """Read what :meth:`to_bytes` wrote; anything else raises ``ValueError`` (the length
        checked against the header before anything is allocated)."""
        def payload(values):
            m, k, bits = values
            m = whole_number(m, "num_cells", 1, MAX_CELLS)
            whole_number(k, "num_hashes", 1, MAX_HASHES)
            return CounterArray.storage_bytes(m, one_of(bits, "counter_bits", (4, 8)))

        (m, k, bits), stored = _HEADER.read(data, "CountingBloomFilter", payload)
        new = cls(m, k, bits)
        new.counters.data[:] = np.frombuffer(stored, dtype=np.uint8)
        wrong = new.counters.corruption()
        if wrong:
            raise ValueError(f"corrupt data: {wrong}")
        return new

    def __repr__(self) -> str:
        """m, k, the counter width, the fill (counters above zero) and the keys in it, estimated
        from the fill (``added~``: keys added minus keys removed, as a Bloom filter estimates).

        >>> f = CountingBloomFilter(num_cells=1000, num_hashes=3); f.add_many(range(100)); f
        CountingBloomFilter(num_cells=1000, num_hashes=3, counter_bits=4, fill=0.26, added~100)
        """
        used = self.num_cells - int(self.counters.histogram()[0])
        return filter_repr(self, f"num_cells={self.num_cells}, num_hashes={self.num_hashes}, "
                                 f"counter_bits={self.counter_bits}",
                           fill=used / self.num_cells, estimated=True,
                           added=estimate_count(num_bits=self.num_cells,
                                                num_hashes=self.num_hashes, bits_set=used))

