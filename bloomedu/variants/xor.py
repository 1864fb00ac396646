"""A xor filter: three slots a key, the XOR of which is the key's fingerprint.

Graf and Lemire ("Xor filters: faster and smaller than Bloom and cuckoo filters", ACM
Journal of Experimental Algorithmics 25, 2020) store, for a fixed key set, one table of
c = 1.23 n + 32 slots of f bits, cut in three blocks of c/3: key x has one slot in each
block, and the table is filled (by peeling, :mod:`bloomedu.variants.peeling`) so that the
three slots XOR to x's fingerprint.  A query reads three slots: a key of the set always
matches, another with probability 2**-f; the filter spends 1.23 f bits a key, against
log2(1/p) = f for the lower bound and 1.44 f for a Bloom filter.  It cannot take a new key:
build it again.

Slot j of a key is ``j * c/3 + fastrange(rotl(x, 21 j), c/3)`` for its mixed hash x
(:mod:`bloomedu.variants.static`).  1.23 is the paper's: below about 1.222 slots a key, a
random 3-hypergraph almost surely keeps a 2-core and cannot be peeled.

Taught in ``notebooks/20_after_bloom.ipynb``; tested in
``tests/test_xor.py``; timed against PyPI's ``pyfusefilter`` by ``make bench``.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.checks import whole_number
from .static import MAX_KEYS, StaticFilter, fastrange, rotl

__all__ = ["XorFilter", "xor_slots_for"]


def xor_slots_for(num_keys: int) -> int:
    """c = floor(1.23 n) + 32, rounded up to a multiple of 3.

    >>> xor_slots_for(1_000_000), xor_slots_for(0)
    (1230033, 33)
    """
    num_keys = whole_number(num_keys, "num_keys", 0, MAX_KEYS)
    return 3 * math.ceil((math.floor(1.23 * num_keys) + 32) / 3)


class XorFilter(StaticFilter):
    """A xor filter of a key set, with 8- or 16-bit fingerprints.

    >>> f = XorFilter(["123", "456", "123"], fingerprint_bits=8)
    >>> "123" in f, "456" in f, len(f), f.nbytes
    (True, True, 2, 36)
    >>> f.contains_many(["123", "789"]).tolist()
    [True, False]
    >>> XorFilter.from_bytes(f.to_bytes()) == f
    True
    """

    MAGIC = b"BLMX"
    ARITIES = (3,)

    def __init__(self, keys, fingerprint_bits: int = 8):
        super().__init__(keys, fingerprint_bits, 3)

    @classmethod
    def _layout(cls, num_keys: int, arity: int) -> dict[str, int]:
        num_slots = xor_slots_for(num_keys)
        return {"num_slots": num_slots, "block_length": num_slots // 3}

    def _slots(self, mixed: np.ndarray) -> np.ndarray:
        length = self.block_length
        slots = np.empty((mixed.size, 3), dtype=np.int64)
        slots[:, 0] = fastrange(mixed, length)
        slots[:, 1] = length + fastrange(rotl(mixed, 21), length)
        slots[:, 2] = 2 * length + fastrange(rotl(mixed, 42), length)
        return slots
