"""bloomedu: Bloom filters taught step by step, correct to the bit.

The library behind the lessons in ``notebooks/``, in one folder per part:

- ``bloomedu.steps``: article 1's steps (a dict of IDs, hashed IDs, the bit vector,
  the salted ``BloomFilter(k, n)``);
- ``bloomedu.core``: the general filter (the reference a student reads), its bit storage,
  hashing and theory, and the one abstract base every filter takes;
- ``bloomedu.kernels``: the fast paths, fed plain arrays and tested bit for bit against the
  reference (MurmurHash3 of a batch, a Bloom filter's bulk insert and query);
- ``bloomedu.compat``: filters bit for bit as real systems build them (Guava, Bitcoin);
- ``bloomedu.services``: a filter in front of a slow store;
- ``bloomedu.workloads``: the seeded click stream and URL sets;
- ``bloomedu.teaching``: plots, experiments, demos and exercises for the lessons;
- ``bloomedu.variants``: filters that delete, grow and forget (counting, scalable,
  rotating, age-partitioned, stable), and what came after Bloom (cuckoo, xor, binary fuse).

Each module names the article step it implements; the README's table maps steps to
modules, lessons and tests.

>>> from bloomedu import BloomFilter
>>> f = BloomFilter.from_capacity(expected_items=1000, fpp=0.01)
>>> f.add("https://example.org/")
>>> "https://example.org/" in f
True
"""

from .core.bits import BitArray
from .core.filter import BloomFilter
from .core.hashing import murmur3_32, murmurhash2, n_bit_hash_function
from .steps.dedup import HashedIds, SeenIds, deduplicate
from .steps.salted import BitVector, SaltedBloomFilter
from .variants import (AgePartitionedBloomFilter, BinaryFuseFilter, BlockedBloomFilter,
                       CountingBloomFilter, CuckooFilter, RotatingBloomFilter, ScalableBloomFilter,
                       StableBloomFilter, XorFilter)
from .workloads.clicks import Click, click_stream, score

__version__ = "0.1.0"

__all__ = [
    "BitArray", "BitVector", "BloomFilter", "Click", "HashedIds", "SaltedBloomFilter",
    "SeenIds", "click_stream", "deduplicate", "murmur3_32", "murmurhash2",
    "n_bit_hash_function", "score",
    "AgePartitionedBloomFilter", "BinaryFuseFilter", "BlockedBloomFilter", "CountingBloomFilter",
    "CuckooFilter", "RotatingBloomFilter", "ScalableBloomFilter", "StableBloomFilter", "XorFilter",
]
