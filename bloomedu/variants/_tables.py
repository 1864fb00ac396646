"""A bit table of m bits and k hashes, the unit the rotating and scalable filters stack.

Not a filter of its own: :class:`~bloomedu.core.bits.BitArray` storage, positions from
:mod:`bloomedu.core.positions`, and a count of the keys written into it.  Tested through
the filters in ``tests/test_variants.py``.
"""

from __future__ import annotations

import numpy as np

from ..core.bits import BitArray
from ..core.hashing import double_hash_indices

__all__ = ["Table"]


class Table:
    """m bits, k hashes, and how many keys were added (``count``).

    >>> t = Table(1024, 3); t.add_hashed(*__import__("bloomedu").core.hashing.hash128("123"))
    >>> t.bits.count(), t.count
    (3, 1)
    """

    __slots__ = ("num_bits", "num_hashes", "bits", "count")

    def __init__(self, num_bits: int, num_hashes: int):
        self.num_bits, self.num_hashes = num_bits, num_hashes
        self.bits = BitArray(num_bits, word_bits=64)
        self.count = 0

    def add_hashed(self, h1: int, h2: int) -> None:
        for index in double_hash_indices(h1, h2, self.num_hashes, self.num_bits):
            self.bits.set(index)
        self.count += 1

    def has_hashed(self, h1: int, h2: int) -> bool:
        bits = self.bits
        return all(bits[i] for i in double_hash_indices(h1, h2, self.num_hashes, self.num_bits))

    def set_positions(self, pos: np.ndarray, keys: int) -> None:
        """Set the bits of a (k, n) position array and count its n keys."""
        if pos.size:
            self.bits.set_chunks([pos.ravel()])
        self.count += keys

    def has_positions(self, pos: np.ndarray) -> np.ndarray:
        """For each column of a (k, n) position array, whether all its bits are set."""
        return self.bits.get_unchecked(pos.ravel()).reshape(pos.shape).all(axis=0)

    def clear(self) -> None:
        self.bits.data[:] = 0
        self.count = 0
