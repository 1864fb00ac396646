"""The general Bloom filter and what it stands on.

- :mod:`~bloomedu.core.filter`: :class:`~bloomedu.core.filter.BloomFilter`, any m bits and any k,
  sized from (n, p) with ``from_capacity``: the reference to read, its position formula for one
  key (``bit_position``) and for an array (``bit_positions``); its bulk methods hand plain
  arrays to the kernels of :mod:`bloomedu.kernels`.
- :mod:`~bloomedu.core.bits`: :class:`~bloomedu.core.bits.BitArray`, the packed bit storage every
  filter in the library shares.
- :mod:`~bloomedu.core.hashing`: every hash function (the article's MurmurHash2; MurmurHash3's
  (h1, h2) of a key, and of a batch through one set of checks).
- :mod:`~bloomedu.core.theory`: the formulas the lessons measure against.
- :mod:`~bloomedu.core.occupancy`: the exact false-positive rate, with positive terms only.
- :mod:`~bloomedu.core.checks`: what every argument may be, and the limits (k <= 1024, memory).
- :mod:`~bloomedu.core.contract`: :class:`~bloomedu.core.contract.Filter`, the one abstract base
  of every filter (``add`` and ``in``, the bulk forms, copies, bytes, and the lock each filter
  holds around its writes, so threads can share one).

>>> from bloomedu.core import BitArray, BloomFilter
>>> BloomFilter(1024, 3).bits.nbytes == BitArray(1024).nbytes
True
"""

from .bits import BitArray
from .filter import BloomFilter

__all__ = ["BitArray", "BloomFilter"]
