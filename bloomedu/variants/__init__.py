"""Bloom filters that delete, grow and forget: beyond article 1's last property.

Article 1 ("Filtro di Bloom: un elemento appartiene all'insieme?") ends with "once added, an
item cannot be removed", and its first step suggests forgetting IDs older than an hour.
Each module here is one structure from the literature, with the ``add``/``in`` interface of
every dedup stage and numpy bulk paths (``add_many``/``contains_many``):

- :mod:`~bloomedu.variants.counting`: :class:`CountingBloomFilter` (Fan et al. 2000), removal;
- :mod:`~bloomedu.variants.scalable`: :class:`ScalableBloomFilter` (Almeida et al. 2007), growth;
- :mod:`~bloomedu.variants.rotating`: :class:`RotatingBloomFilter`, generations dropped in turn;
- :mod:`~bloomedu.variants.age_partitioned`: :class:`AgePartitionedBloomFilter` (Shtul,
  Baquero and Almeida 2020), a sliding window;
- :mod:`~bloomedu.variants.stable`: :class:`StableBloomFilter` (Deng and Rafiei 2006), fading;
- :mod:`~bloomedu.variants.blocked`: :class:`BlockedBloomFilter`, the split-block filter of Impala
  and Parquet: a key's bits in one 256-bit block, one cache miss per key (lesson 19);
- :mod:`~bloomedu.variants.cuckoo`: :class:`CuckooFilter` (Fan et al. 2014), fingerprints that
  move between two buckets, deletes, a rate set by the fingerprint's bits;
- :mod:`~bloomedu.variants.xor` and :mod:`~bloomedu.variants.binary_fuse`: :class:`XorFilter`
  (Graf and Lemire 2020) and :class:`BinaryFuseFilter` (2022), static filters built once from
  a key set by peeling (:mod:`~bloomedu.variants.peeling`), at 1.23 and 1.13 times the bound;
- :mod:`~bloomedu.variants.theory`: their formulas (:mod:`~bloomedu.variants.space`: bits per key
  against the lower bound log2(1/p)).

They share :mod:`bloomedu.core`: hashing and positions, bit and counter storage, argument
checks, versioned bytes and a per-filter lock.  Taught in
``notebooks/15_forgetting_old_clicks.ipynb`` (rotating, age-partitioned, stable),
``notebooks/16_deleting_and_growing.ipynb`` (stable, counting, scalable),
``notebooks/19_blocked_filters.ipynb`` (blocked) and ``notebooks/20_after_bloom.ipynb``
(cuckoo, xor, binary fuse); tested in ``tests/test_variants.py``,
``tests/test_variants_rates.py`` and ``tests/test_blocked.py``.

>>> from bloomedu import RotatingBloomFilter
>>> f = RotatingBloomFilter(capacity=1000, fpp=0.001, generations=4)
>>> f.add("123"); "123" in f
True
"""

from .age_partitioned import AgePartitionedBloomFilter
from .binary_fuse import BinaryFuseFilter
from .blocked import BlockedBloomFilter
from .counting import CountingBloomFilter
from .cuckoo import CuckooFilter
from .rotating import RotatingBloomFilter
from .scalable import ScalableBloomFilter
from .stable import StableBloomFilter
from .xor import XorFilter

__all__ = ["AgePartitionedBloomFilter", "BinaryFuseFilter", "BlockedBloomFilter", "CountingBloomFilter",
           "CuckooFilter", "RotatingBloomFilter", "ScalableBloomFilter", "StableBloomFilter",
           "XorFilter"]
