"""Parquet's Bloom filters, bit for bit: the split-block filter with Parquet's hash.

A Parquet file may carry, for each column chunk, a split-block Bloom filter
(parquet-format, ``BloomFilter.md``) so a reader can skip the row groups that
cannot hold a value.  Its layout is that of
:class:`~bloomedu.variants.blocked.BlockedBloomFilter`; only the hash differs:
XXH64 (seed 0) of the value's plain encoding, 8 little-endian bytes for an INT64
and the bytes themselves (no length prefix) for a BYTE_ARRAY string.  Those are
exactly :func:`~bloomedu.core.hashing.key_to_bytes` of an int and of a str, so
:class:`ParquetBloomFilter` takes the same keys as every other filter here.
(An INT32 column hashes 4 bytes: build its filter from 4-byte ``bytes`` keys.)

:func:`xxh64` is Yann Collet's XXH64 written out from its specification;
:func:`xxh64_uint64` is the same for 8-byte keys, vectorised in numpy.  The
bitset, :meth:`ParquetBloomFilter.to_parquet_bitset`, is what a Parquet file
stores after the filter's Thrift header.

Tested in ``tests/test_parquet.py`` against a file that pyarrow 26 wrote
(``tests/data/parquet_bloom.parquet``, made by ``tools/parquet_vectors.py``) and
against XXH64 values from the ``xxhash`` package; taught in
``notebooks/19_blocked_filters.ipynb``.
"""

from __future__ import annotations

import numpy as np

from ..core.hashing import key_to_bytes
from ..core.serial import as_bytes
from ..variants.blocked import BLOCK_BITS, BlockedBloomFilter

__all__ = ["ParquetBloomFilter", "xxh64", "xxh64_uint64"]

_MASK = (1 << 64) - 1
P1, P2, P3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
P4, P5 = 0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5


def _rotl(x: int, r: int) -> int:
    return (x << r | x >> (64 - r)) & _MASK


def _round(acc: int, lane: int) -> int:
    return _rotl((acc + lane * P2) & _MASK, 31) * P1 & _MASK


def xxh64(data: bytes, seed: int = 0) -> int:
    """XXH64 of ``data``: 64 bits, as the ``xxhash`` library computes it.

    >>> hex(xxh64(b"")), hex(xxh64(b"abc"))
    ('0xef46db3751d8e999', '0x44bc2cf5ad770999')
    """
    data, n = bytes(data), len(data)
    at = 0
    if n >= 32:
        v = [(seed + P1 + P2) & _MASK, (seed + P2) & _MASK, seed & _MASK, (seed - P1) & _MASK]
        while at + 32 <= n:
            for lane in range(4):
                v[lane] = _round(v[lane], int.from_bytes(data[at:at + 8], "little"))
                at += 8
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _MASK
        for lane in v:
            h = ((h ^ _round(0, lane)) * P1 + P4) & _MASK
    else:
        h = (seed + P5) & _MASK
    h = (h + n) & _MASK
    while at + 8 <= n:
        h = (_rotl(h ^ _round(0, int.from_bytes(data[at:at + 8], "little")), 27) * P1 + P4) & _MASK
        at += 8
    if at + 4 <= n:
        h = (_rotl(h ^ (int.from_bytes(data[at:at + 4], "little") * P1 & _MASK), 23) * P2
             + P3) & _MASK
        at += 4
    for byte in data[at:]:
        h = _rotl(h ^ (byte * P5 & _MASK), 11) * P1 & _MASK
    h ^= h >> 33
    h = h * P2 & _MASK
    h ^= h >> 29
    h = h * P3 & _MASK
    return h ^ h >> 32


_U = {name: np.uint64(value) for name, value in (("P1", P1), ("P2", P2), ("P3", P3), ("P4", P4),
                                                  ("start", (P5 + 8) & _MASK))}
_SHIFTS = {r: (np.uint64(r), np.uint64(64 - r)) for r in (27, 29, 31, 32, 33)}


def _rotl_array(x: np.ndarray, r: int) -> np.ndarray:
    left, right = _SHIFTS[r]
    return (x << left) | (x >> right)


def xxh64_uint64(keys: np.ndarray) -> np.ndarray:
    """XXH64 (seed 0) of each key's 8 little-endian bytes: the hash of an INT64 value.

    >>> int(xxh64_uint64(np.array([-1], dtype=np.int64))[0]) == xxh64(b"\\xff" * 8)
    True
    """
    keys = np.asarray(keys)
    if keys.dtype.kind not in "iu":
        raise TypeError(f"keys must be an integer array, not {keys.dtype}")
    lanes = keys.astype(np.int64, copy=False).view(np.uint64) if keys.dtype.itemsize == 8 \
        else keys.astype(np.int64).view(np.uint64)  # the value modulo 2**64, as key_to_bytes
    with np.errstate(over="ignore"):
        lane = _rotl_array(lanes * _U["P2"], 31) * _U["P1"]  # round(0, key)
        h = _rotl_array(lane ^ _U["start"], 27) * _U["P1"] + _U["P4"]
        h ^= h >> _SHIFTS[33][0]
        h *= _U["P2"]
        h ^= h >> _SHIFTS[29][0]
        h *= _U["P3"]
        h ^= h >> _SHIFTS[32][0]
    return h


class ParquetBloomFilter(BlockedBloomFilter):
    """A split-block filter hashed as Parquet hashes: XXH64 of INT64 / BYTE_ARRAY values.

    >>> f = ParquetBloomFilter(num_bits=8 * 1024)
    >>> f.add_many(np.arange(100, dtype=np.int64)); f.add("click-7")
    >>> bool(f.contains_many(np.arange(100)).all()), "click-7" in f, len(f.to_parquet_bitset())
    (True, True, 1024)
    """

    HASHING = 2  # in to_bytes: XXH64 of key_to_bytes (Parquet's hash), Parquet's bit choice

    def _hash(self, key) -> int:
        return xxh64(key_to_bytes(key))

    def _hash_integers(self, keys: np.ndarray) -> np.ndarray:
        return xxh64_uint64(keys)

    def _hash_keys(self, keys: list) -> np.ndarray:
        """XXH64 of every key of a chunk, one Python call each (a str or bytes key of any length)."""
        return np.fromiter((xxh64(key_to_bytes(key)) for key in keys), dtype=np.uint64,
                           count=len(keys))

    def to_parquet_bitset(self) -> bytes:
        """The filter's bytes as a Parquet file stores them after the filter's header.

        >>> len(ParquetBloomFilter(256).to_parquet_bitset())
        32
        """
        return self.words.astype("<u4").tobytes()

    @classmethod
    def from_parquet_bitset(cls, bitset: bytes) -> "ParquetBloomFilter":
        """A filter holding the bitset read from a Parquet file (a whole number of blocks).

        >>> ParquetBloomFilter.from_parquet_bitset(bytes(33))
        Traceback (most recent call last):
        ValueError: a Parquet bitset is a whole number of 32-byte blocks, got 33 bytes
        """
        bitset = as_bytes(bitset, "bitset")  # read in place: the words are copied once, below
        if not bitset or len(bitset) % 32:
            raise ValueError("a Parquet bitset is a whole number of 32-byte blocks, "
                             f"got {len(bitset)} bytes")
        new = cls(len(bitset) * 8 // BLOCK_BITS * BLOCK_BITS)
        new.words[:] = np.frombuffer(bitset, dtype="<u4")
        return new
