"""Article 1, step by step: from a dict of processed IDs to the article's ``BloomFilter(k, n)``.

- :mod:`~bloomedu.steps.dedup` (steps 1 and 2): :class:`~bloomedu.steps.dedup.SeenIds`, a dict of
  every processed ID, and :class:`~bloomedu.steps.dedup.HashedIds`, a set of their 32-bit hashes;
  :func:`~bloomedu.steps.dedup.deduplicate` runs any stage on a stream of messages.
- :mod:`~bloomedu.steps.salted` (steps 3 to 5): :class:`~bloomedu.steps.salted.BitVector`, one
  n-bit hash over 2**n bits, and :class:`~bloomedu.steps.salted.SaltedBloomFilter`, k salted
  n-bit hashes, bit for bit as the article's JavaScript.

>>> from bloomedu.steps import BitVector, SeenIds
>>> v = BitVector(hash_bits=8); v.add("123"); v.bit_indices("123")
[47]
"""

from .dedup import HashedIds, SeenIds, deduplicate
from .salted import BitVector, SaltedBloomFilter

__all__ = ["BitVector", "HashedIds", "SaltedBloomFilter", "SeenIds", "deduplicate"]
