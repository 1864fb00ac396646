"""Spark's own Murmur3 x86_32: the hash of ``org.apache.spark.util.sketch.BloomFilter``.

Spark's sketch library carries its own copy of Austin Appleby's MurmurHash3 x86_32
(``org.apache.spark.util.sketch.Murmur3_x86_32``, from Guava's ``Murmur3_32HashFunction``),
and its Bloom filter (:mod:`bloomedu.compat.spark`) hashes every key twice with it:
h1 = H(key, seed), h2 = H(key, h1).  It differs from standard MurmurHash3 in one place:

- the 4-byte blocks are read little-endian and mixed as usual (``mix_k1``, ``mix_h1``);
- each trailing byte (the last ``len % 4``) is mixed **on its own, as a full block**: the byte
  read as a signed Java ``byte``, sign-extended to an int, through ``mix_k1`` and ``mix_h1``
  (standard MurmurHash3 packs the tail into one block and skips ``mix_h1``);
- the finaliser xors in the length, as usual.

So the two agree exactly when the length is a multiple of 4.  A long is hashed as two ints,
its low half then its high half, with length 8: exactly the hash of its 8 little-endian bytes,
so Spark's ``putLong(x)`` and ``putBinary`` of those bytes set the same bits.

:func:`spark_hash_bytes` and :func:`spark_hash_long` are the reference, one key at a time;
:func:`spark_hash_longs` and :func:`spark_hash_bytes_many` are numpy kernels beside them,
fed plain arrays (tested equal to the reference on every length and seed in
``tests/test_spark_vectors.py``, which also pins hashes the JVM computed, from
``tests/data/spark_vectors.json``).  Results are Java ints, -2**31 .. 2**31-1.

>>> spark_hash_bytes(b"abcd", 0) == mmh3.hash(b"abcd", 0)   # a length a multiple of 4
True
>>> spark_hash_bytes(b"abc", 0), mmh3.hash(b"abc", 0)        # not: the tail is mixed apart
(-849139816, -1277324294)
"""

from __future__ import annotations

import mmh3  # noqa: F401 - used by the docstring's comparison with standard MurmurHash3
import numpy as np

from ..core.checks import whole_number

__all__ = ["spark_hash_bytes", "spark_hash_long", "spark_hash_longs", "spark_hash_bytes_many",
           "java_int"]

_MASK32 = 0xFFFFFFFF
C1, C2 = 0xCC9E2D51, 0x1B873593
_U32 = {name: np.uint32(value) for name, value in
        (("C1", C1), ("C2", C2), ("five", 5), ("add", 0xE6546B64), ("F1", 0x85EBCA6B),
         ("F2", 0xC2B2AE35))}


def java_int(value, name: str, bits: int = 32) -> int:
    """``value`` as a Python int in a Java int's range (``bits=64``: a long's), or a clear error
    naming ``name``.

    >>> java_int(-1, "seed"), java_int(np.int64(2**40), "value", 64)
    (-1, 1099511627776)
    """
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if type(value) is int and low <= value <= high:  # the filters' own calls pass here at once
        return value
    return whole_number(value, name, low, high)


def _signed(value: int) -> int:
    """The low 32 bits as a Java int."""
    value &= _MASK32
    return value - (1 << 32) if value & 0x80000000 else value


def _rotl(x: int, r: int) -> int:
    return (x << r | x >> (32 - r)) & _MASK32


def _mix_k1(k1: int) -> int:
    return _rotl(k1 * C1 & _MASK32, 15) * C2 & _MASK32


def _mix_h1(h1: int, k1: int) -> int:
    return (_rotl(h1 ^ k1, 13) * 5 + 0xE6546B64) & _MASK32


def _fmix(h1: int, length: int) -> int:
    h1 ^= length
    h1 ^= h1 >> 16
    h1 = h1 * 0x85EBCA6B & _MASK32
    h1 ^= h1 >> 13
    h1 = h1 * 0xC2B2AE35 & _MASK32
    return h1 ^ h1 >> 16


def spark_hash_bytes(data: bytes, seed: int) -> int:
    """``Murmur3_x86_32.hashUnsafeBytes``: Spark's hash of a byte string (``putBinary``,
    and ``putString`` of the string's UTF-8 bytes), as a Java int.

    ``seed`` is a Java int, -2**31 .. 2**31-1.

    >>> spark_hash_bytes(b"", 0), spark_hash_bytes("città".encode(), 0)
    (0, -838629824)
    >>> h1 = spark_hash_bytes(b"a", 0); h1, spark_hash_bytes(b"a", h1)   # h2: seeded with h1
    (721651713, -1891752531)
    """
    data = bytes(data)
    h1 = java_int(seed, "seed") & _MASK32
    aligned = len(data) - len(data) % 4
    for at in range(0, aligned, 4):
        h1 = _mix_h1(h1, _mix_k1(int.from_bytes(data[at:at + 4], "little")))
    for byte in data[aligned:]:  # each trailing byte, sign-extended, is a block of its own
        h1 = _mix_h1(h1, _mix_k1((byte - 256 if byte >= 128 else byte) & _MASK32))
    return _signed(_fmix(h1, len(data)))


def spark_hash_long(value: int, seed: int) -> int:
    """``Murmur3_x86_32.hashLong``: Spark's hash of a Java long (``putLong``), as a Java int:
    the low 32 bits, then the high 32 bits, each a block, then the finaliser with length 8.

    >>> spark_hash_long(0, 0), spark_hash_long(-1, 0), spark_hash_long(2**63 - 1, 42)
    (1669671676, 1651860712, -1604625029)
    """
    value, seed = java_int(value, "value", 64), java_int(seed, "seed")
    h1 = _mix_h1(seed & _MASK32, _mix_k1(value & _MASK32))
    h1 = _mix_h1(h1, _mix_k1(value >> 32 & _MASK32))
    return _signed(_fmix(h1, 8))


# --- numpy kernels: plain arrays in, int32 hashes out ----------------------------------------
def _rotl_u32(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def _mix_k1_u32(k1: np.ndarray) -> np.ndarray:
    return _rotl_u32(k1 * _U32["C1"], 15) * _U32["C2"]


def _mix_h1_u32(h1: np.ndarray, k1: np.ndarray) -> np.ndarray:
    return _rotl_u32(h1 ^ k1, 13) * _U32["five"] + _U32["add"]


def _fmix_u32(h1: np.ndarray, length: int) -> np.ndarray:
    h1 = h1 ^ np.uint32(length)
    h1 ^= h1 >> np.uint32(16)
    h1 *= _U32["F1"]
    h1 ^= h1 >> np.uint32(13)
    h1 *= _U32["F2"]
    h1 ^= h1 >> np.uint32(16)
    return h1


def _seeds(seeds, size: int) -> np.ndarray:
    """``seeds`` (one Java int, or one per key) as a uint32 array of ``size``."""
    out = np.asarray(seeds, dtype=np.int64) & _MASK32
    return np.broadcast_to(out.astype(np.uint32), (size,)).copy()


def spark_hash_longs(values: np.ndarray, seeds) -> np.ndarray:
    """:func:`spark_hash_long` of every value of an int64 array, with one seed or a seed per
    value (an int32 array: the second hash is seeded with the first), as an int32 array.

    >>> spark_hash_longs(np.array([0, -1, 2**63 - 1]), np.array([0, 0, 42])).tolist()
    [1669671676, 1651860712, -1604625029]
    """
    values = np.asarray(values)
    if values.dtype != np.int64:
        raise TypeError(f"values must be an int64 array, not {values.dtype}")
    words = values.astype("<i8", copy=False).view(np.uint64)
    with np.errstate(over="ignore"):
        h1 = _mix_h1_u32(_seeds(seeds, values.size), _mix_k1_u32(words.astype(np.uint32)))
        h1 = _mix_h1_u32(h1, _mix_k1_u32((words >> np.uint64(32)).astype(np.uint32)))
        return _fmix_u32(h1, 8).view(np.int32)


def spark_hash_bytes_many(items: list, seeds) -> np.ndarray:
    """:func:`spark_hash_bytes` of every byte string of a list, with one seed or a seed per
    item, as an int32 array.  The items are grouped by length, so each group is one
    (count, length) byte matrix hashed a column of blocks at a time.

    >>> spark_hash_bytes_many([b"", b"abc", "città".encode()], 0).tolist()
    [0, -849139816, -838629824]
    """
    seeds = _seeds(seeds, len(items))
    out = np.zeros(len(items), dtype=np.uint32)
    lengths = np.fromiter(map(len, items), dtype=np.int64, count=len(items))
    order = np.argsort(lengths, kind="stable")
    starts = np.flatnonzero(np.diff(lengths[order], prepend=-1)) if len(items) else []
    for begin, end in zip(starts, [*starts[1:], len(items)]):
        members = order[begin:end]
        length = int(lengths[members[0]])
        matrix = np.frombuffer(b"".join(items[i] for i in members.tolist()),
                               dtype=np.uint8).reshape(len(members), length)
        aligned = length - length % 4
        blocks = np.ascontiguousarray(matrix[:, :aligned]).view("<u4").astype(np.uint32)
        with np.errstate(over="ignore"):
            h1 = seeds[members]
            for column in range(aligned // 4):
                h1 = _mix_h1_u32(h1, _mix_k1_u32(blocks[:, column]))
            for at in range(aligned, length):  # each trailing byte, sign-extended, alone
                tail = matrix[:, at].view(np.int8).astype(np.int32).view(np.uint32)
                h1 = _mix_h1_u32(h1, _mix_k1_u32(tail))
            out[members] = _fmix_u32(h1, length)
    return out.view(np.int32)
