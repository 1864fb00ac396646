"""Rotating generations: a queue of Bloom filters, the oldest dropped as time moves on.

Article 1 suggests "always remove the messages older than an hour"; a Bloom filter cannot
remove one key, but it can drop a whole generation.  Here g filters of one size share each
key's positions (computed once): keys go into the newest, a query asks all g, and the
oldest is emptied and becomes the newest on :meth:`RotatingBloomFilter.rotate` or, by
itself, when the newest already holds ``capacity`` keys.  A key is therefore remembered for
at least g - 1 full generations after its own, (g - 1) * capacity inserts, and forgotten
after at most g generations.  Each generation errs with 1 - (1 - p)^(1/g), so a query of
all g errs with at most ``fpp`` (:func:`bloomedu.variants.theory.generation_fpp`).
pyprobables' ``RotatingBloomFilter`` is the same idea with the same rate in every filter.

Taught in ``notebooks/15_forgetting_old_clicks.ipynb``; tested in ``tests/test_variants.py``
and ``tests/test_variants_rates.py``.
"""

from __future__ import annotations

import struct
from collections import deque

import numpy as np

from ..core.checks import check_storage, probability, whole_number
from ..core.filter import bit_position
from ..core import segments
from ..core.filter import positions
from ..core.hashing import hashed_batches, joined, key_hashes
from ..core.contract import filter_repr
from ..core.serial import Header, Shared, check_clear_beyond, locked
from ..core.theory import size_for
from .bit_table import Table
from .theory import generation_fpp

__all__ = ["RotatingBloomFilter"]

# Version 2: the step h2 spread as BloomFilter's (the empty key's bits moved).
_HEADER = Header(b"BLMR", 2, "QdHQH")  # capacity, fpp, generations, m, k
MAX_CAPACITY = 2 ** 40


class RotatingBloomFilter(Shared):
    """``generations`` filters of ``capacity`` keys each; a query of all of them errs with ``fpp``.

    >>> f = RotatingBloomFilter(capacity=1000, fpp=0.001, generations=3)
    >>> f.add("old"); f.add_many(range(2500))
    >>> "old" in f, f.loads()          # 2501 keys: "old" is in the oldest generation
    (True, [501, 1000, 1000])
    >>> f.rotate(); "old" in f, f.loads()
    (False, [0, 501, 1000])
    """

    def __init__(self, capacity: int, fpp: float, generations: int):
        self.capacity = whole_number(capacity, "capacity", 1, MAX_CAPACITY)
        self.fpp = probability(fpp, "fpp")
        self.generations = whole_number(generations, "generations", 2, 1024)
        self.generation_fpp = generation_fpp(self.fpp, self.generations)
        self.num_bits, self.num_hashes = size_for(n=self.capacity, p=self.generation_fpp,
                                                  asked=f"capacity={self.capacity} at fpp={self.fpp}")
        check_storage(self.generations * 8 * -(-self.num_bits // 64),
                      f"capacity={self.capacity}, fpp={self.fpp}, generations={self.generations} "
                      f"({self.generations} generations of num_bits={self.num_bits})")
        self.tables = deque(Table(self.num_bits, self.num_hashes) for _ in range(self.generations))

    @locked
    def rotate(self) -> None:
        """Drop the oldest generation: its keys are forgotten (unless also in a newer one)."""
        self._rotate()

    def _rotate(self) -> None:
        oldest = self.tables.popleft()
        oldest.clear()
        self.tables.append(oldest)

    def loads(self) -> list[int]:
        """Keys in each generation, newest first."""
        return [t.count for t in reversed(self.tables)]

    def _has(self, indices) -> bool:
        return any(t.has_indices(indices) for t in reversed(self.tables))

    # --- one key ---------------------------------------------------------------------
    @locked
    def __contains__(self, key) -> bool:
        """True if some generation has all k of the key's bits set."""
        h1, h2 = key_hashes(key, self.num_hashes)
        m, known = self.num_bits, []  # positions computed as the tables need them
        for t in reversed(self.tables):
            view = t.view
            for i in range(self.num_hashes):
                if i == len(known):
                    known.append(bit_position(h1, h2, i, m))
                index = known[i]
                if not view[index >> 3] >> (index & 7) & 1:
                    break
            else:
                return True
        return False

    @locked
    def add(self, key) -> None:
        """Insert into the newest generation (rotating first if it already holds ``capacity``)."""
        h1, h2 = key_hashes(key, self.num_hashes)
        if self.tables[-1].count >= self.capacity:
            self._rotate()
        self.tables[-1].add_hashed(h1, h2)

    # --- many keys ---------------------------------------------------------------------
    @locked
    def add_many(self, keys) -> None:
        """``add`` every key in order: generations rotate inside the batch exactly as one by one."""
        batches = [positions(h1, h2, num_bits=self.num_bits, num_hashes=self.num_hashes)  # all hashed before any change
                   for h1, h2 in hashed_batches(keys, self.num_hashes)]
        for pos in batches:
            start = 0
            while start < pos.shape[1]:
                if self.tables[-1].count >= self.capacity:
                    self._rotate()
                room = self.capacity - self.tables[-1].count
                part = pos[:, start:start + room]
                self.tables[-1].set_positions(part, part.shape[1])
                start += part.shape[1]

    @locked
    def contains_many(self, keys) -> np.ndarray:
        """For each key, whether some generation might hold it."""
        answers = []
        for h1, h2 in hashed_batches(keys, self.num_hashes):
            pos = positions(h1, h2, num_bits=self.num_bits, num_hashes=self.num_hashes)
            found = np.zeros(h1.size, dtype=bool)
            for t in reversed(self.tables):
                found |= t.has_positions(pos)
            answers.append(found)
        return np.concatenate(answers) if answers else np.zeros(0, dtype=bool)

    # --- what a batch may change (bloomedu.steps.sequential) -------------------------
    @locked
    def inserts_before_change(self) -> int:
        """Inserts before the next rotation (0: the next insert rotates first)."""
        return max(0, self.capacity - self.tables[-1].count)

    @locked
    def segment_writes(self, keys) -> segments.Writes:
        """The bits each key's ``add`` sets in the newest generation, the only one an insert
        changes; found or not, in any generation."""
        h1, h2 = joined(hashed_batches(keys, self.num_hashes))
        cells = positions(h1, h2, num_bits=self.num_bits, num_hashes=self.num_hashes)
        now_set = self.tables[-1].bits.get_unchecked(cells)
        seen = np.zeros(h1.size, dtype=bool)
        for t in self.tables:
            seen |= t.has_positions(cells)
        return segments.Writes(seen, cells.T, now_set.T)

    # --- what it holds ---------------------------------------------------------------------
    @property
    def nbytes(self) -> int:
        """Bytes of bit storage: g generations of 8 * ceil(m / 64) bytes (constant)."""
        return self.generations * self.tables[0].bits.nbytes

    @locked
    def to_bytes(self) -> bytes:
        """A versioned header (magic ``BLMR``), the generations' loads, then their bits, oldest first."""
        head = _HEADER.pack(self.capacity, self.fpp, self.generations, self.num_bits,
                            self.num_hashes)
        counts = struct.pack(f"<{self.generations}Q", *(t.count for t in self.tables))
        return head + counts + b"".join(t.bits.data.tobytes() for t in self.tables)

    @classmethod
    def from_bytes(cls, data) -> "RotatingBloomFilter":
        """Read what :meth:`to_bytes` wrote; anything else raises ``ValueError`` (the length
        checked against the generations the parameters make before any is allocated)."""
        def payload(values):
            capacity, fpp, g, m, k = values
            capacity = whole_number(capacity, "capacity", 1, MAX_CAPACITY)
            g = whole_number(g, "generations", 2, 1024)
            shape = size_for(n=capacity, p=generation_fpp(probability(fpp, "fpp"), g))
            if (m, k) != shape:
                raise ValueError(f"corrupt header: m={m}, k={k}, but these parameters give "
                                 f"m={shape[0]}, k={shape[1]}")
            return 8 * g + g * 8 * -(-m // 64)

        (capacity, fpp, g, m, k), rest = _HEADER.read(data, "RotatingBloomFilter", payload)
        counts = struct.unpack_from(f"<{g}Q", rest)
        if max(counts) > capacity:
            raise ValueError(f"corrupt data: a generation holds {max(counts)} keys, "
                             f"capacity is {capacity}")
        new = cls(capacity, fpp, g)
        size = new.tables[0].bits.data.size
        for i, (t, count) in enumerate(zip(new.tables, counts)):
            t.count = count
            t.bits.data[:] = np.frombuffer(rest, dtype=np.uint8, count=size, offset=8 * g + i * size)
            check_clear_beyond(t.bits.data, m, f" in generation {i}")
        return new

    def __repr__(self) -> str:
        """n, p, the generations, the fill (of all their bits) and the keys the generations
        hold now, counted (``added=``: the sum of :meth:`loads`; forgotten keys are not).

        >>> f = RotatingBloomFilter(capacity=100, fpp=0.01, generations=3); f.add_many(range(450)); f
        RotatingBloomFilter(capacity=100, fpp=0.01, generations=3, fill=0.43, added=250)
        """
        tables = list(self.tables)
        return filter_repr(self, f"capacity={self.capacity}, fpp={self.fpp}, "
                                 f"generations={self.generations}",
                           fill=sum(t.bits.count() for t in tables) / (len(tables) * self.num_bits),
                           added=sum(t.count for t in tables))
