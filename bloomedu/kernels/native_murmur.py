"""MurmurHash3 x64 128 of many keys in one compiled loop: the native twin of :mod:`~bloomedu.kernels.murmur`.

The reference is :func:`bloomedu.core.hashing.hash128` (``mmh3`` of :func:`~bloomedu.core.hashing.key_to_bytes`);
the numpy kernels of :mod:`bloomedu.kernels.murmur` give the same (h1, h2) for a batch.  Here
(``bloomedu[fast]``, numba):

- :func:`joined_keys` lays a batch of str/bytes keys end to end in one uint8 buffer with the
  offsets where each starts.  A batch of ASCII str costs no Python work per key: ``"".join``,
  one ``encode`` (a copy: ASCII is its own UTF-8) and ``map(len, ...)``; any other batch is
  encoded key by key exactly as the numpy path does (so the same key is refused the same way);
- :func:`hash_joined` runs MurmurHash3 over each key's bytes of the buffer (16-byte blocks,
  then the tail), :func:`hash_uint64` over 64-bit integer keys (8 bytes: the tail alone);
- :func:`murmur3_128_list` and :func:`murmur3_128_uint64` have the numpy kernels' signatures.

Tested bit for bit against ``hash128`` in ``tests/test_native_kernels.py``.

>>> from bloomedu.core.hashing import hash128, key_to_bytes
>>> keys = ["", "a\\x00", "città", b"\\x00" * 17, 7]
>>> h1, h2 = murmur3_128_list(keys, key_to_bytes)
>>> [(int(a), int(b)) for a, b in zip(h1, h2)] == [hash128(key) for key in keys]
True
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .jit import njit

__all__ = ["joined_keys", "hash_joined", "hash_uint64", "murmur3_128_list",
           "murmur3_128_uint64", "fmix64"]

_C1 = np.uint64(0x87C37B91114253D5)
_C2 = np.uint64(0x4CF5AD432745937F)
_F1 = np.uint64(0xFF51AFD7ED558CCD)
_F2 = np.uint64(0xC4CEB9FE1A85EC53)
_N1 = np.uint64(0x52DCE729)
_N2 = np.uint64(0x38495AB5)
_FIVE, _EIGHT, _ZERO = np.uint64(5), np.uint64(8), np.uint64(0)
_R27, _R31, _R33 = np.uint64(27), np.uint64(31), np.uint64(33)
_L37, _L33, _L31 = np.uint64(37), np.uint64(33), np.uint64(31)  # 64 - r, for the rotations


@njit
def fmix64(x):
    """MurmurHash3's 64-bit finaliser of one uint64.

    >>> from bloomedu.core.hashing import fmix64 as reference
    >>> int(fmix64(np.uint64(1))) == reference(1)
    True
    """
    x ^= x >> _R33
    x *= _F1
    x ^= x >> _R33
    x *= _F2
    return x ^ (x >> _R33)


@njit
def _load64(buffer, start):
    """The 8 bytes of ``buffer`` from ``start``, little-endian, as a uint64."""
    value = _ZERO
    for byte in range(8):
        value |= np.uint64(buffer[start + byte]) << np.uint64(8 * byte)
    return value


@njit
def _mix_k1(k1):
    k1 *= _C1
    k1 = (k1 << _R31) | (k1 >> _L33)
    return k1 * _C2


@njit
def _mix_k2(k2):
    k2 *= _C2
    k2 = (k2 << _R33) | (k2 >> _L31)
    return k2 * _C1


@njit
def _hash_bytes(buffer, start, end):
    """(h1, h2) of MurmurHash3 x64 128, seed 0, of ``buffer[start:end]``."""
    length = end - start
    h1, h2 = _ZERO, _ZERO
    body_end = start + (length & ~15)
    for block in range(start, body_end, 16):
        h1 ^= _mix_k1(_load64(buffer, block))
        h1 = (h1 << _R27) | (h1 >> _L37)
        h1 += h2
        h1 = h1 * _FIVE + _N1
        h2 ^= _mix_k2(_load64(buffer, block + 8))
        h2 = (h2 << _R31) | (h2 >> _L33)
        h2 += h1
        h2 = h2 * _FIVE + _N2
    rest = length & 15
    if rest:
        k1, k2 = _ZERO, _ZERO
        for byte in range(rest):
            value = np.uint64(buffer[body_end + byte])
            if byte < 8:
                k1 |= value << np.uint64(8 * byte)
            else:
                k2 |= value << np.uint64(8 * (byte - 8))
        if rest > 8:
            h2 ^= _mix_k2(k2)
        h1 ^= _mix_k1(k1)
    size = np.uint64(length)
    h1 ^= size
    h2 ^= size
    h1 += h2
    h2 += h1
    h1 = fmix64(h1)
    h2 = fmix64(h2)
    h1 += h2
    h2 += h1
    return h1, h2


@njit
def hash_joined(buffer, offsets, h1, h2):
    """Key i is ``buffer[offsets[i]:offsets[i + 1]]``: its (h1, h2) into ``h1[i]``, ``h2[i]``.

    >>> import mmh3
    >>> buffer = np.frombuffer(b"abc", np.uint8); offsets = np.array([0, 1, 3])
    >>> h1, h2 = np.empty(2, np.uint64), np.empty(2, np.uint64)
    >>> hash_joined(buffer, offsets, h1, h2)
    >>> (int(h1[1]), int(h2[1])) == mmh3.hash64(b"bc", 0, signed=False)
    True
    """
    for i in range(h1.size):
        h1[i], h2[i] = _hash_bytes(buffer, offsets[i], offsets[i + 1])


@njit
def hash_one_uint64(key):
    """(h1, h2) of a key that is the 8 little-endian bytes of the uint64 ``key``."""
    h1 = _mix_k1(key) ^ _EIGHT  # no 16-byte block: the tail k1, then h1 ^= length
    h1 += _EIGHT  # h1 += h2, where h2 = length
    h2 = h1 + _EIGHT  # h2 += h1
    h1 = fmix64(h1)
    h2 = fmix64(h2)
    h1 += h2
    return h1, h2 + h1


@njit
def hash_uint64(keys, h1, h2):
    """(h1, h2) of every key of a uint64 array (each key its 8 little-endian bytes).

    >>> from bloomedu.core.hashing import hash128
    >>> h1, h2 = np.empty(1, np.uint64), np.empty(1, np.uint64)
    >>> hash_uint64(np.array([2**64 - 1], np.uint64), h1, h2)
    >>> (int(h1[0]), int(h2[0])) == hash128(-1)
    True
    """
    for i in range(keys.size):
        h1[i], h2[i] = hash_one_uint64(keys[i])


def joined_keys(keys: list, encode: Callable[[object], bytes]) -> tuple[np.ndarray, np.ndarray]:
    """A list of keys as one uint8 buffer and ``len(keys) + 1`` int64 offsets: key i is
    ``buffer[offsets[i]:offsets[i + 1]]``, the bytes ``hash128`` hashes.

    A batch of ASCII str, or of bytes, is joined as it is; in any other batch every key but a
    bytes goes through ``encode`` (which raises for a key it refuses, the first in the list).

    >>> from bloomedu.core.hashing import key_to_bytes
    >>> buffer, offsets = joined_keys(["ab", "", "é"], key_to_bytes)
    >>> buffer.tobytes(), offsets.tolist()
    (b'ab\\xc3\\xa9', [0, 2, 2, 4])
    """
    try:
        text = "".join(keys)
    except TypeError:  # a key that is not a str
        text = None
    if text is not None and text.isascii():  # every key ASCII: its characters are its bytes
        data = text.encode("ascii")
    else:
        if text is not None or set(map(type, keys)) != {bytes}:
            keys = [key if type(key) is bytes else encode(key) for key in keys]
        data = b"".join(keys)
    offsets = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, keys), dtype=np.int64, count=len(keys)), out=offsets[1:])
    return np.frombuffer(data, dtype=np.uint8), offsets


def murmur3_128_list(keys: list, encode: Callable[[object], bytes]) -> tuple[np.ndarray, np.ndarray]:
    """(h1, h2) uint64 arrays of MurmurHash3 x64 128 (seed 0) of every key of a list: the
    numpy kernel's signature and results.

    >>> from bloomedu.core.hashing import hash128, key_to_bytes
    >>> h1, h2 = murmur3_128_list(["x" * 40], key_to_bytes)
    >>> (int(h1[0]), int(h2[0])) == hash128("x" * 40)
    True
    """
    buffer, offsets = joined_keys(keys, encode)
    h1, h2 = np.empty(len(keys), dtype=np.uint64), np.empty(len(keys), dtype=np.uint64)
    hash_joined(buffer, offsets, h1, h2)
    return h1, h2


def murmur3_128_uint64(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(h1, h2) of each key of an integer array, by value (any dtype and byte order), as
    :func:`bloomedu.kernels.murmur.murmur3_128_uint64`.

    >>> from bloomedu.core.hashing import hash128
    >>> h1, h2 = murmur3_128_uint64(np.array([-1, 5], dtype=">i2"))
    >>> (int(h1[0]), int(h2[0])) == hash128(-1)
    True
    """
    keys = np.asarray(keys)
    if keys.dtype.kind not in "iu":
        raise TypeError(f"keys must be an integer array, not {keys.dtype}")
    values = np.ascontiguousarray(keys.ravel()).astype(np.uint64, copy=False)  # two's complement
    h1, h2 = np.empty(values.size, dtype=np.uint64), np.empty(values.size, dtype=np.uint64)
    hash_uint64(values, h1, h2)
    return h1, h2
