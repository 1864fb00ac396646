"""Bloom filter variants beyond the classic one, each with the same interface (``add``, ``in``,
``add_many``, ``contains_many``, pickling, bytes).

- :mod:`~bloomedu.variants.blocked`: :class:`~bloomedu.variants.blocked.BlockedBloomFilter`,
  the split-block filter of Impala and Parquet: a key's bits in one 256-bit block, one
  cache miss per key (lesson 12).

>>> from bloomedu.variants import BlockedBloomFilter
>>> f = BlockedBloomFilter.from_capacity(1000, 0.01); f.add("x"); "x" in f
True
"""

from .blocked import BlockedBloomFilter

__all__ = ["BlockedBloomFilter"]
