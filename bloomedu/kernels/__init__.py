"""Fast paths: kernels that take plain numpy arrays and give bits or answers back.

Every algorithm of the library has one plain reference a student can read: the Bloom filter's
in :mod:`bloomedu.core.filter`, the key hashing in :mod:`bloomedu.core.hashing`.  A kernel here
does the same work on many keys at once, fast; it never takes a filter, only arrays (hashes in,
bits or answers out), and each is tested bit for bit against its reference:

- :mod:`~bloomedu.kernels.murmur`: MurmurHash3 x64 128 of a batch of keys (integer arrays in
  numpy, str and bytes through one mmh3 call each) and ``fmix64`` of an array
  (``tests/test_hashing.py``, ``tests/test_bulk_fast_paths.py``);
- :mod:`~bloomedu.kernels.bloom`: a Bloom filter's bulk insert, its "which keys were new", and
  its bulk query, on the bit storage's bytes (``tests/test_bulk.py``, ``tests/test_large.py``);
  the write strategy for each size of filter is chosen in one place, :func:`~bloomedu.kernels.bloom.insert`;
- :mod:`~bloomedu.kernels.threads`: two cores for one bulk call (prepare the next batch while
  this one is written), exactly the result of one thread.
- with ``bloomedu[fast]`` (numba), their compiled twins :mod:`~bloomedu.kernels.native_murmur`
  and :mod:`~bloomedu.kernels.native_bloom` (and the blocked filter's
  :mod:`~bloomedu.variants.blocked_native`), compiled by :mod:`~bloomedu.kernels.jit`; the
  filters pick one or the other through :mod:`~bloomedu.kernels.backend`
  (``BLOOMEDU_KERNELS=auto|numpy|native``), and both give the same bits
  (``tests/test_native_kernels.py``).

>>> import numpy as np
>>> from bloomedu.kernels import bloom, murmur
>>> from bloomedu.core.filter import BloomFilter
>>> f = BloomFilter(1024, 3)
>>> h1, h2 = murmur.murmur3_128_uint64(np.array([7], dtype=np.uint64))
>>> bloom.insert(f.bits.data, [(h1, h2)], num_bits=1024, num_hashes=3)   # h2 needs no spreading
>>> 7 in f
True
"""
