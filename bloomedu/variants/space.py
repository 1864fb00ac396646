"""Bits per key against the lower bound: the formulas of the filters that came after Bloom.

A filter that answers "maybe" for a fraction p of absent keys needs at least log2(1/p) bits
a key (Carter, Floyd, Gill, Markowsky and Wegman 1978: the filter picks one of the
(U choose n) key sets' covers, each covering p U keys, so it tells at least
log2((U choose n) / (pU choose n)) = n log2(1/p) bits, for a universe U much larger than n).
A Bloom filter at its best k spends log2(1/p) / ln 2 = 1.44 log2(1/p) (article 2's sizing).
The structures since come closer:

- cuckoo filters (Fan et al. 2014): f-bit fingerprints in buckets of b at load a cost f / a
  bits a key, for a rate of about 2b a / 2**f (:func:`cuckoo_false_positive_rate`);
- xor filters (Graf and Lemire 2020): 1.23 f bits a key, rate 2**-f;
- binary fuse filters (Graf and Lemire 2022): 1.125 f (3-wise) or 1.075 f (4-wise) bits a
  key for large n, rate 2**-f.

Used by :mod:`bloomedu.variants.cuckoo`, :mod:`bloomedu.variants.xor` and
:mod:`bloomedu.variants.binary_fuse`; tested in ``tests/test_cuckoo_rates.py``,
``tests/test_xor.py`` and ``tests/test_binary_fuse.py``.
"""

from __future__ import annotations

import math

from ..core.checks import one_of, probability, real_number, whole_number

__all__ = ["lower_bound_bits", "bloom_bits_per_key", "cuckoo_false_positive_rate",
           "cuckoo_rate_bound", "cuckoo_bits_per_key", "XOR_FACTOR", "FUSE_FACTORS",
           "static_bits_per_key"]

XOR_FACTOR = 1.23                   # slots per key of a xor filter (Graf and Lemire 2020)
FUSE_FACTORS = {3: 1.125, 4: 1.075}  # of a binary fuse filter for large n (2022)


def lower_bound_bits(fpp: float) -> float:
    """log2(1/p): the fewest bits a key any filter with false-positive rate p can spend.

    >>> round(lower_bound_bits(0.001), 3), lower_bound_bits(2 ** -8)
    (9.966, 8.0)
    """
    return -math.log2(probability(fpp, "fpp"))


def bloom_bits_per_key(fpp: float) -> float:
    """A Bloom filter's bits a key at its best k: log2(1/p) / ln 2, 1.44 times the bound.

    >>> round(bloom_bits_per_key(0.001), 2), round(bloom_bits_per_key(0.01) / lower_bound_bits(0.01), 3)
    (14.38, 1.443)
    """
    return lower_bound_bits(fpp) / math.log(2)


def cuckoo_false_positive_rate(fingerprint_bits: int, bucket_size: int, load: float = 1.0) -> float:
    """The rate of a cuckoo filter at a load factor: an absent key's 2b slots each hold a
    fingerprint with probability ``load``, equal to the key's with probability 1/(2**f - 1):
    1 - (1 - 1/(2**f - 1))**(2 b load).

    >>> round(cuckoo_false_positive_rate(12, 4, 0.95), 6), round(cuckoo_rate_bound(12, 4), 6)
    (0.001854, 0.001953)
    """
    f = whole_number(fingerprint_bits, "fingerprint_bits", 2, 64)
    b = whole_number(bucket_size, "bucket_size", 1, 1 << 16)
    a = real_number(load, "load", 0.0, 1.0)
    return -math.expm1(2 * b * a * math.log1p(-1 / ((1 << f) - 1)))


def cuckoo_rate_bound(fingerprint_bits: int, bucket_size: int) -> float:
    """The paper's bound on a cuckoo filter's rate: 2b / 2**f (every slot full).

    >>> cuckoo_rate_bound(8, 4)
    0.03125
    """
    f = whole_number(fingerprint_bits, "fingerprint_bits", 2, 64)
    return 2 * whole_number(bucket_size, "bucket_size", 1, 1 << 16) / 2 ** f


def cuckoo_bits_per_key(fingerprint_bits: int, load: float) -> float:
    """f / load: a packed table's bits a key at a load factor.

    >>> cuckoo_bits_per_key(12, 0.95) > 12
    True
    """
    load = real_number(load, "load", 0.0, 1.0, open_low=True)
    return whole_number(fingerprint_bits, "fingerprint_bits", 2, 64) / load


def static_bits_per_key(fingerprint_bits: int, kind: str = "xor", arity: int = 3) -> float:
    """The bits a key of a xor or binary fuse filter for large n: factor * f (rate 2**-f).

    >>> static_bits_per_key(8), static_bits_per_key(8, "fuse"), static_bits_per_key(8, "fuse", 4)
    (9.84, 9.0, 8.6)
    """
    f = whole_number(fingerprint_bits, "fingerprint_bits", 1, 64)
    if kind == "xor":
        return XOR_FACTOR * f
    if kind != "fuse":
        raise ValueError(f"kind must be 'xor' or 'fuse', got {kind!r}")
    return FUSE_FACTORS[one_of(arity, "arity", tuple(FUSE_FACTORS))] * f
