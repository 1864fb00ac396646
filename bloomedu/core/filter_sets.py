"""Union and intersection of two Bloom filters, bit by bit, without holding two locks.

The filter of the keys of two filters with the same m, k and hashing is the OR of their
bits (article 2's filters built on separate shards of a blacklist merge this way, lesson 11);
the AND keeps every common key but is not the filter of the common keys.  Each block of the
other filter's bits is copied under its lock, then combined into this one's under this one's
lock, so ``a |= b`` and ``b |= a`` in two threads cannot deadlock.

Taught in ``notebooks/11_a_filter_is_not_a_set.ipynb`` (sections 1 and 2); tested in
``tests/test_serialization.py`` and ``tests/test_threads.py``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SetOperations"]

_BLOCK_BYTES = 1 << 20  # |= and &=: bytes of the other filter copied under its lock at a time


class SetOperations:
    """``|``, ``&``, ``|=`` and ``&=`` for a filter with ``bits``, ``bits_snapshot``, ``copy``
    and ``_check_compatible`` (:class:`~bloomedu.core.filter.BloomFilter`).

    >>> from bloomedu import BloomFilter
    >>> issubclass(BloomFilter, SetOperations)
    True
    """

    __slots__ = ()

    def _combine(self, other: "SetOperations", operation) -> "SetOperations":
        """``self.bits = operation(self.bits, other.bits)``, block by block, in place.

        Each block of the other filter's bits is copied under its lock, then
        combined into this one's under this one's lock: never both at once, so
        ``a |= b`` and ``b |= a`` in two threads cannot deadlock, and at most
        one block (1 MiB) is copied at a time.
        """
        other, mine = self._check_compatible(other), self.bits.data
        for start in range(0, mine.size, _BLOCK_BYTES):
            block = other.bits_snapshot(start, start + _BLOCK_BYTES)  # under the other's lock
            with self._lock:
                target = mine[start:start + _BLOCK_BYTES]
                operation(target, block, out=target)
        return self

    def __or__(self, other: "SetOperations") -> "SetOperations":
        """The union: a filter holding every key of both (exactly the filter of all their keys).

        >>> from bloomedu import BloomFilter
        >>> a, b = BloomFilter(1024, 3), BloomFilter(1024, 3)
        >>> a.add("x"); b.add("y")
        >>> "x" in a | b and "y" in a | b
        True
        >>> a | BloomFilter(2048, 3)
        Traceback (most recent call last):
        ValueError: num_bits differs: 1024 vs 2048
        """
        return self.copy().__ior__(other)

    def __and__(self, other: "SetOperations") -> "SetOperations":
        """The intersection: every key in both is still found (with more false positives than
        a filter built from the common keys alone).

        >>> from bloomedu import BloomFilter
        >>> a, b = BloomFilter(1024, 3), BloomFilter(1024, 3)
        >>> a.add_many(["x", "y"]); b.add_many(["y", "z"])
        >>> "y" in a & b
        True
        """
        return self.copy().__iand__(other)

    def __ior__(self, other: "SetOperations") -> "SetOperations":
        """In-place union, ``a |= b``.

        >>> from bloomedu import BloomFilter
        >>> a, b = BloomFilter(64, 2), BloomFilter(64, 2); b.add("y")
        >>> a |= b; "y" in a
        True
        """
        return self._combine(other, np.bitwise_or)

    def __iand__(self, other: "SetOperations") -> "SetOperations":
        """In-place intersection, ``a &= b``.

        >>> from bloomedu import BloomFilter
        >>> a, b = BloomFilter(64, 2), BloomFilter(64, 2); a.add("y")
        >>> a &= b; a.bits_set()
        0
        """
        return self._combine(other, np.bitwise_and)
