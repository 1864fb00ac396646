"""A bit table of m bits and k hashes, the unit the rotating and scalable filters stack.

Not a filter of its own: :class:`~bloomedu.core.bits.BitArray` storage, positions from
(h1, h2) that :mod:`bloomedu.core.hashing` gave for this table's k, and a count of the
keys written into it.  Used by :mod:`bloomedu.variants.rotating` and
:mod:`bloomedu.variants.scalable`; tested through them in ``tests/test_variants.py``.
"""

from __future__ import annotations

import numpy as np

from ..core.bits import BitArray
from ..core.filter import bit_position

__all__ = ["Table"]


class Table:
    """m bits, k hashes, and how many keys were added (``count``).

    >>> from bloomedu.core.hashing import key_hashes
    >>> t = Table(1024, 3); t.add_hashed(*key_hashes("123", 3))
    >>> t.bits.count(), t.count
    (3, 1)
    """

    __slots__ = ("num_bits", "num_hashes", "bits", "count", "view")

    def __init__(self, num_bits: int, num_hashes: int):
        self.num_bits, self.num_hashes = num_bits, num_hashes
        self.bits = BitArray(num_bits, word_bits=64)
        self.view = memoryview(self.bits.data)  # one byte as a Python int: fast per-key access
        self.count = 0

    def add_hashed(self, h1: int, h2: int) -> None:
        view, m = self.view, self.num_bits
        for i in range(self.num_hashes):
            index = bit_position(h1, h2, i, m)
            view[index >> 3] |= 1 << (index & 7)
        self.count += 1

    def has_hashed(self, h1: int, h2: int) -> bool:
        """True if all k bits are set; positions computed one at a time, a clear bit stops."""
        view, m = self.view, self.num_bits
        for i in range(self.num_hashes):
            index = bit_position(h1, h2, i, m)
            if not view[index >> 3] >> (index & 7) & 1:
                return False
        return True

    def has_indices(self, indices) -> bool:
        """True if every bit of ``indices`` (ints below m) is set."""
        view = self.view
        return all(view[i >> 3] >> (i & 7) & 1 for i in indices)

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
