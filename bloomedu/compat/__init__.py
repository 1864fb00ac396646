"""Bloom filters that agree bit for bit with real systems (article 2's last part).

"Bloom Filter: come memorizzare 1 Milione di stringhe in meno di 2MB?" builds its
filter with Google Guava and ends with Bitcoin light wallets.  These modules
reproduce both exactly, so a filter made here can be read by Java or sent to a
Bitcoin node, and the other way round:

- :mod:`bloomedu.compat.guava`: :class:`GuavaBloomFilter`, Guava 31.1's
  ``BloomFilter`` of strings, with its ``writeTo`` byte stream.
- :mod:`bloomedu.compat.bip37`: :class:`Bip37Filter`, Bitcoin Core's BIP37
  filter, with its ``filterload`` payload.
- :mod:`bloomedu.compat.parquet`: :class:`ParquetBloomFilter`, the split-block filter of
  Parquet files (XXH64), whose bitset is the one pyarrow writes (lesson 19).
- :mod:`bloomedu.compat.spark`: :class:`SparkBloomFilter`, Apache Spark's ``BloomFilter``
  (``df.stat.bloomFilter``) in both versions of its ``writeTo`` bytes, with Spark's own
  Murmur3 in :mod:`bloomedu.compat.spark_murmur`.

>>> from bloomedu.compat import Bip37Filter, GuavaBloomFilter
>>> GuavaBloomFilter.create(10, 0.1).bit_size, Bip37Filter(3, 0.01).n_hash_funcs
(64, 5)
"""

from .bip37 import Bip37Filter
from .guava import GuavaBloomFilter
from .parquet import ParquetBloomFilter
from .spark import SparkBloomFilter

__all__ = ["Bip37Filter", "GuavaBloomFilter", "ParquetBloomFilter", "SparkBloomFilter"]
