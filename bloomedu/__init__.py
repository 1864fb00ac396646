"""bloomedu: Bloom filters taught step by step, correct to the bit.

The library behind the lessons in ``notebooks/``.  Each module names the
article step it implements; the README's table maps steps to modules, lessons
and tests.

>>> from bloomedu import BloomFilter
>>> f = BloomFilter.from_capacity(expected_items=1000, fpp=0.01)
>>> f.add("https://example.org/")
>>> "https://example.org/" in f
True
"""

from .bits import BitArray
from .clicks import Click, click_stream, score
from .dedup import HashedIds, SeenIds, deduplicate
from .filter import BloomFilter
from .hashing import murmur3_32, murmurhash2, n_bit_hash_function
from .salted import BitVector, SaltedBloomFilter

__version__ = "0.1.0"

__all__ = [
    "BitArray", "BitVector", "BloomFilter", "Click", "HashedIds", "SaltedBloomFilter",
    "SeenIds", "click_stream", "deduplicate", "murmur3_32", "murmurhash2",
    "n_bit_hash_function", "score",
]
