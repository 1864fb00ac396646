"""An age-partitioned Bloom filter: a sliding window over the stream, forgotten slice by slice.

Shtul, Baquero and Almeida ("Age-partitioned Bloom filters", arXiv:2001.03147, 2020) built
it for duplicate detection over a sliding window.  The filter is k + l slices of m bits,
in a circular order from newest to oldest, and slice j (by its place in memory) has its own
hash, position j of the key.  The key's k + l positions are those of
``BloomFilter(m, k + l).bit_indices``: the step h2 is spread for the k + l values it uses
(:mod:`bloomedu.core.hashing`).  Each slice is its own array, so two equal values would
not collapse bits here (the empty key's h2 = 0 only puts it at one index in every slice);
k + l is chosen so that one rule, with one meaning, serves every structure.  An insert sets one bit in each of the k newest slices; after
every g inserts (a generation) the oldest slice is cleared and becomes the newest (a
shift).  A query looks for k consecutive slices that all have the key's bit set.

This is the paper's design, as its public implementations (CrowdStrike's ``apbf``,
decred's ``container/apbf``) also build it: an insert writes the k newest slices; the shift
is lazy, at the insert that finds the current generation already holding g keys; a query
scans newest to oldest for any run of k consecutive slices with the key's bit set.

A key's k bits move one slice older at each shift and the oldest of them is cleared at the
(l + 1)-th shift after its insert.  So a key is found for at least the l g inserts after its
own (:attr:`AgePartitionedBloomFilter.window`; the last key of a generation gets no more)
and at most (l + 1) g - 1 (the first key of a generation).  The implementations' "capacity
(l + 1) g" is the second figure: it holds for the first keys of a generation, and so for a
filter filled from empty, not for every key.

Slices have m = ceil(k g / ln 2) bits (half set once k generations wrote them).  The
false-positive rate is the chance of a run of k set bits, and it depends on when the query
comes inside a generation.  What this filter measures (``tests/test_variants_rates.py``, 5
sigma) is :func:`bloomedu.variants.theory.apbf_expected_false_positive_rate` with the
current generation's count (each slice's fill computed exactly), or, given its bits,
:meth:`AgePartitionedBloomFilter.false_positive_rate`.  The paper's formula,
:func:`~bloomedu.variants.theory.apbf_false_positive_rate`, takes the young slices' fills
as linear in their generations, (i + 1) / 2k, where they are 1 - 2^(-(i + 1)/k): it is an
approximation, not the rate at a stated moment.  Just
before a shift (the fullest moment) the rate is above it, by x1.04 (k = 5, l = 7) to x1.27
(k = 17, l = 13) at the ten (k, l) of the implementations' table, and up to x15 when k is
large and l small (k = 20, l = 1); just after a shift it is x0.70 to x0.95 of it there;
averaged over a generation x0.87 to x1.10
(:func:`~bloomedu.variants.theory.apbf_average_false_positive_rate`).

Taught in ``notebooks/15_forgetting_old_clicks.ipynb`` (its rate derived in
``notebooks/deeper/15_age_partitioned_rate.ipynb``); tested in
``tests/test_variants.py`` and ``tests/test_variants_rates.py``.
"""

from __future__ import annotations

import numpy as np

from ..core.bits import BitArray
from ..core.checks import MAX_HASHES, check_storage, whole_number
from ..core.filter import bit_position
from ..core import segments
from ..core.filter import positions
from ..core.hashing import hashed_batches, joined, key_hashes
from ..core.contract import filter_repr
from ..core.serial import Header, Shared, check_clear_beyond, locked
from .theory import apbf_slice_bits, run_probability

__all__ = ["AgePartitionedBloomFilter"]

# Version 2: the step h2 spread for the k + l values a key uses (the empty key's bits moved).
_HEADER = Header(b"BLMA", 2, "HHQQHQQ")  # k, l, g, m, base, count, inserted
MAX_GENERATION = 2 ** 36
_MAX_COUNT = 2 ** 64 - 1  # inserted is written in 64 bits


class AgePartitionedBloomFilter(Shared):
    """k + l slices of m = ceil(k g / ln 2) bits; a shift every g inserts.

    >>> f = AgePartitionedBloomFilter(num_hashes=4, extra_slices=3, generation_size=100)
    >>> f.num_bits, f.window, f.nbytes
    (578, 300, 560)
    >>> f.add("first"); f.add_many(range(300))
    >>> "first" in f                  # 300 inserts since: still inside the window
    True
    >>> f.add_many(range(300, 400)); "first" in f
    False
    """

    def __init__(self, num_hashes: int, extra_slices: int, generation_size: int):
        self.num_hashes = whole_number(num_hashes, "num_hashes", 1, MAX_HASHES)
        self.extra_slices = whole_number(extra_slices, "extra_slices", 1, 1024)
        self.generation_size = whole_number(generation_size, "generation_size", 1, MAX_GENERATION)
        self.num_slices = self.num_hashes + self.extra_slices
        self.num_bits = apbf_slice_bits(self.num_hashes, self.generation_size)
        check_storage(self.num_slices * 8 * -(-self.num_bits // 64),
                      f"num_hashes={self.num_hashes}, extra_slices={self.extra_slices}, "
                      f"generation_size={self.generation_size} ({self.num_slices} slices of "
                      f"num_bits={self.num_bits})")
        self.slices = [BitArray(self.num_bits, word_bits=64) for _ in range(self.num_slices)]
        self._views = [memoryview(s.data) for s in self.slices]  # fast per-key access
        self.base = 0  # the newest slice's place in memory
        self.count = 0  # keys in the current generation
        self.inserted = 0

    @property
    def window(self) -> int:
        """Inserts a key survives at least: l g."""
        return self.extra_slices * self.generation_size

    def order(self) -> list[int]:
        """The slices' places in memory, newest first."""
        return [(self.base + a) % self.num_slices for a in range(self.num_slices)]

    @locked
    def shift(self) -> None:
        """Start a new generation now: clear the oldest slice and make it the newest."""
        self._shift()

    def _shift(self) -> None:
        self.base = (self.base - 1) % self.num_slices
        self.slices[self.base].data[:] = 0
        self.count = 0

    # --- one key ---------------------------------------------------------------------
    @locked
    def add(self, key) -> None:
        """Set the key's bit in each of the k newest slices (shifting first after g inserts)."""
        h1, h2 = key_hashes(key, self.num_slices)  # first: a key of a bad type changes nothing
        if self.count == self.generation_size:
            self._shift()
        views, m, n, base = self._views, self.num_bits, self.num_slices, self.base
        for a in range(self.num_hashes):
            j = (base + a) % n  # slice j (by place in memory) uses position j of the key
            index = bit_position(h1, h2, j, m)
            views[j][index >> 3] |= 1 << (index & 7)
        self.count += 1
        self.inserted = min(self.inserted + 1, _MAX_COUNT)  # a 64-bit count: it stops at its top

    @locked
    def __contains__(self, key) -> bool:
        """True if k consecutive slices all have the key's bit set (scanned newest first)."""
        h1, h2 = key_hashes(key, self.num_slices)
        views, m, n, k, base = self._views, self.num_bits, self.num_slices, self.num_hashes, self.base
        run = 0
        for a in range(n):
            if n - a + run < k:  # too few slices left to complete a run
                return False
            j = (base + a) % n
            index = bit_position(h1, h2, j, m)
            if views[j][index >> 3] >> (index & 7) & 1:
                run += 1
                if run == k:
                    return True
            else:
                run = 0
        return False

    # --- many keys ---------------------------------------------------------------------
    @locked
    def add_many(self, keys) -> None:
        """``add`` every key in order: the shifts fall inside the batch exactly as one by one."""
        batches = [positions(h1, h2, num_bits=self.num_bits, num_hashes=self.num_slices)  # all hashed before any change
                   for h1, h2 in hashed_batches(keys, self.num_slices)]
        for pos in batches:
            start = 0
            while start < pos.shape[1]:
                if self.count == self.generation_size:
                    self._shift()
                part = pos[:, start:start + self.generation_size - self.count]
                for j in self.order()[:self.num_hashes]:
                    self.slices[j].set_chunks([part[j]])
                self.count += part.shape[1]
                self.inserted = min(self.inserted + part.shape[1], _MAX_COUNT)
                start += part.shape[1]

    @locked
    def contains_many(self, keys) -> np.ndarray:
        """For each key, whether k consecutive slices all have its bit set."""
        answers, order, k = [], self.order(), self.num_hashes
        for h1, h2 in hashed_batches(keys, self.num_slices):
            pos = positions(h1, h2, num_bits=self.num_bits, num_hashes=self.num_slices)
            runs = np.zeros(h1.size, dtype=np.int64)
            found = np.zeros(h1.size, dtype=bool)
            for j in order:
                hit = self.slices[j].get_unchecked(pos[j])
                runs = np.where(hit, runs + 1, 0)
                found |= runs >= k
            answers.append(found)
        return np.concatenate(answers) if answers else np.zeros(0, dtype=bool)

    # --- what a batch may change (bloomedu.steps.sequential) -------------------------
    @locked
    def inserts_before_change(self) -> int:
        """Inserts before the next shift (0: the next insert shifts first)."""
        return self.generation_size - self.count

    @locked
    def segment_writes(self, keys) -> segments.RunWrites:
        """Each slice's bit of each key (newest first), and the bits an insert sets in the k
        newest slices (slice j, bit b: cell j m + b); found on a run of k set slices."""
        h1, h2 = joined(hashed_batches(keys, self.num_slices))
        every = positions(h1, h2, num_bits=self.num_bits, num_hashes=self.num_slices)
        order = self.order()
        hits = np.array([self.slices[j].get_unchecked(every[j]) for j in order]).reshape(
            len(order), h1.size)
        newest = np.array(order[:self.num_hashes], dtype=np.int64)
        cells = (every[newest] + newest[:, None] * self.num_bits).T
        return segments.RunWrites(segments.runs(hits, self.num_hashes), cells,
                                  hits[:self.num_hashes].T, hits=hits, k=self.num_hashes)

    # --- what it holds -----------------------------------------------------------------------
    @property
    def nbytes(self) -> int:
        """Bytes of bit storage: k + l slices of 8 * ceil(m / 64) bytes (constant)."""
        return self.num_slices * self.slices[0].nbytes

    @locked
    def fills(self) -> list[float]:
        """Each slice's fraction of bits set, newest first."""
        return [self.slices[j].count() / self.num_bits for j in self.order()]

    def false_positive_rate(self) -> float:
        """The chance that a key never added is found, given the bits set now.

        A fresh key's bit in each slice is an independent uniform position, so this is
        :func:`~bloomedu.variants.theory.run_probability` of :meth:`fills`: exact for this
        state, whether or not the filter has run long (the paper's and the expected
        formulas assume a long-running filter).

        >>> f = AgePartitionedBloomFilter(2, 1, 10); f.false_positive_rate()
        0.0
        """
        return run_probability(self.fills(), self.num_hashes)

    @locked
    def to_bytes(self) -> bytes:
        """A versioned header (magic ``BLMA``: k, l, g, m, base, count, inserted), then the slices."""
        head = _HEADER.pack(self.num_hashes, self.extra_slices, self.generation_size,
                            self.num_bits, self.base, self.count, self.inserted)
        return head + b"".join(s.data.tobytes() for s in self.slices)

    @classmethod
    def from_bytes(cls, data) -> "AgePartitionedBloomFilter":
        """Read what :meth:`to_bytes` wrote; anything else raises ``ValueError`` (the length
        checked against the slices the parameters make before any is allocated)."""
        def payload(values):
            k, l, g, m, base, count, inserted = values
            k = whole_number(k, "num_hashes", 1, MAX_HASHES)
            l = whole_number(l, "extra_slices", 1, 1024)
            g = whole_number(g, "generation_size", 1, MAX_GENERATION)
            bits = apbf_slice_bits(k, g)
            if m != bits or not 0 <= base < k + l or count > g or inserted < count:
                raise ValueError(f"corrupt header: m={m} (expected {bits}), base={base} "
                                 f"(0..{k + l - 1}), count={count} (0..{g}), inserted={inserted}")
            return (k + l) * 8 * -(-m // 64)

        (k, l, g, m, base, count, inserted), rest = _HEADER.read(
            data, "AgePartitionedBloomFilter", payload)
        new = cls(k, l, g)
        size = new.slices[0].data.size
        for i, s in enumerate(new.slices):
            s.data[:] = np.frombuffer(rest, dtype=np.uint8, count=size, offset=i * size)
            check_clear_beyond(s.data, m, f" in slice {i}")
        new.base, new.count, new.inserted = base, count, inserted
        return new

    def __repr__(self) -> str:
        """k, l, g, the fill (of all k + l slices) and the keys inserted since it was made,
        counted (``added=``: every insert, also the ones it has forgotten since).

        >>> f = AgePartitionedBloomFilter(num_hashes=4, extra_slices=3, generation_size=100)
        >>> f.add_many(range(250)); f
        AgePartitionedBloomFilter(num_hashes=4, extra_slices=3, generation_size=100, fill=0.21, added=250)
        """
        slices = list(self.slices)
        return filter_repr(self, f"num_hashes={self.num_hashes}, extra_slices={self.extra_slices}, "
                                 f"generation_size={self.generation_size}",
                           fill=sum(s.count() for s in slices) / (len(slices) * self.num_bits),
                           added=self.inserted)
