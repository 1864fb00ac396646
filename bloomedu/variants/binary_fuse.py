"""A binary fuse filter: a xor filter whose slots are near one another, 1.13 f bits a key.

Graf and Lemire ("Binary fuse filters: fast and smaller than xor filters", ACM Journal of
Experimental Algorithmics 27, 2022) cut the table into segments of L slots (a power of two)
and give each key ``arity`` consecutive segments, starting at a random one, and one random
slot in each.  Such "spatially coupled" hypergraphs peel at far fewer slots per key than
xor filters' three blocks: 1.125 n for arity 3 and 1.075 n for arity 4 once n is large
(the paper's sizes: ``L = 2**floor(ln n / ln 3.33 + 2.25)`` and a factor
``max(1.125, 0.875 + 0.25 ln(10**6) / ln n)`` for arity 3; ``2**floor(ln n / ln 2.91 - 0.5)``
and ``max(1.075, 0.77 + 0.305 ln(600000) / ln n)`` for arity 4), and a key's slots lie
within ``arity`` segments, close in memory.  The rate is 2**-f, as for a xor filter.

Here, for a key's mixed hash x (:mod:`bloomedu.variants.static`): its first slot is
``fastrange(x, S L)`` over the S segments where a window can start, in segment s; slot j
(j >= 1) is in segment s + j, at offset ``x mod L`` (j = 1), ``(x >> 18) mod L`` (j = 2) and
``fmix64(x) mod L`` (j = 3).  Built by peeling (:mod:`bloomedu.variants.peeling`).

Taught in ``notebooks/20_after_bloom.ipynb``; tested in
``tests/test_binary_fuse.py``; timed against PyPI's ``pyfusefilter`` by ``make bench``.
"""

from __future__ import annotations

import math

import numpy as np

from ..kernels.murmur import fmix64_array
from ..core.checks import one_of, whole_number
from .static import MAX_KEYS, StaticFilter, fastrange

__all__ = ["BinaryFuseFilter", "fuse_layout"]

_MAX_SEGMENT_LENGTH = 1 << 18
# arity: (the base of ln n in L, the shift, the factor for large n, its pull, its n)
_SIZING = {3: (3.33, 2.25, 1.125, 0.875, 0.25, 1e6), 4: (2.91, -0.5, 1.075, 0.77, 0.305, 6e5)}


def fuse_layout(num_keys: int, arity: int = 3) -> tuple[int, int, int]:
    """(segment length L, segments a window can start at S, slots (S + arity - 1) L).

    >>> fuse_layout(1_000_000), fuse_layout(1_000_000, 4)
    ((8192, 136, 1130496), (4096, 260, 1077248))
    >>> fuse_layout(0), fuse_layout(1)
    ((4, 1, 12), (4, 1, 12))
    """
    num_keys = whole_number(num_keys, "num_keys", 0, MAX_KEYS)
    base, shift, factor, pull, weight, reference = _SIZING[one_of(arity, "arity", (3, 4))]
    n = max(num_keys, 2)  # the formulas take ln n: 0 and 1 key are sized as 2
    length = 1 << max(2, min(int(math.floor(math.log(n) / math.log(base) + shift)), 18))
    size_factor = max(factor, pull + weight * math.log(reference) / math.log(n))
    capacity = round(n * size_factor)
    segments = max(1, math.ceil(capacity / length) - (arity - 1))
    return length, segments, (segments + arity - 1) * length


class BinaryFuseFilter(StaticFilter):
    """A binary fuse filter of a key set: 8- or 16-bit fingerprints, arity 3 or 4.

    >>> f = BinaryFuseFilter(range(1000), fingerprint_bits=8)
    >>> 999 in f, len(f), f.nbytes, BinaryFuseFilter(range(1000), arity=4).nbytes
    (True, 1000, 1408, 1376)
    >>> BinaryFuseFilter.from_bytes(f.to_bytes()) == f
    True
    """

    MAGIC = b"BLMF"
    ARITIES = (3, 4)

    def __init__(self, keys, fingerprint_bits: int = 8, arity: int = 3):
        super().__init__(keys, fingerprint_bits, arity)

    @classmethod
    def _layout(cls, num_keys: int, arity: int) -> dict[str, int]:
        length, count, num_slots = fuse_layout(num_keys, arity)
        return {"segment_length": length, "segment_count": count, "num_slots": num_slots}

    def _slots(self, mixed: np.ndarray) -> np.ndarray:
        length = self.segment_length
        mask = np.uint64(length - 1)
        first = fastrange(mixed, self.segment_count * length)
        start = first - first % length  # the first segment's first slot
        slots = np.empty((mixed.size, self.arity), dtype=np.int64)
        slots[:, 0] = first
        slots[:, 1] = start + length + (mixed & mask).astype(np.int64)
        slots[:, 2] = start + 2 * length + ((mixed >> np.uint64(18)) & mask).astype(np.int64)
        if self.arity == 4:
            remixed = np.empty_like(mixed)
            fmix64_array(remixed, np.empty_like(mixed), source=mixed)
            slots[:, 3] = start + 3 * length + (remixed & mask).astype(np.int64)
        return slots
