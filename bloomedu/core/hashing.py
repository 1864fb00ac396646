"""Hash functions for every step of the first article, and for the general filter.

Article 1 ("Filtro di Bloom: un elemento appartiene all'insieme?") hashes click
IDs with the npm package ``murmurhash`` (``murmurhash.v2``), truncates the hash
to n bits, and makes several n-bit hash functions by appending a salt to the
input.  This module reproduces those functions exactly (:func:`murmurhash2`,
:func:`n_bit_hash_function`) and adds what the general :class:`~bloomedu.core.filter.BloomFilter`
needs: stable key encoding (:func:`key_to_bytes`), one 128-bit MurmurHash3 per
key (:func:`hash128`) and k positions from it by double hashing (Kirsch and
Mitzenmacher, "Less hashing, same performance", ESA 2006), with the step h2 made
odd for the few keys (the empty key among them) whose k values would repeat
(:func:`spread_step`).  A batch of keys is hashed by
:mod:`bloomedu.core.batch_hashing` (numpy integer arrays in numpy, by value,
whatever their byte order).

Taught in ``notebooks/02_hashed_ids.ipynb`` (MurmurHash),
``notebooks/04_salted_hashes.ipynb`` (the article's salted functions) and
``notebooks/06_inside_the_filter.ipynb`` (double hashing; why the positions are mixed, in
``notebooks/deeper/06_small_filters.ipynb``); tested in ``tests/test_hashing.py``.

Nothing here uses Python's built-in ``hash()``: it is salted per process, so
bit positions would change from one run to the next.
"""

from __future__ import annotations

import struct
from typing import Callable

import mmh3
import numpy as np

from .checks import MAX_HASHES, MAX_NUM_BITS, is_int, whole_number

__all__ = [
    "murmurhash2",
    "js_utf8",
    "murmur3_32",
    "n_bit_hash_function",
    "key_to_bytes",
    "hash128",
    "fmix64",
    "bit_position",
    "double_hash_indices",
    "spread_step",
    "spread_steps",
]

_MASK32 = 0xFFFFFFFF
_MASK64 = 0xFFFFFFFFFFFFFFFF
_M2 = 0x5BD1E995  # MurmurHash2's multiplier


def _utf8(data: str | bytes, name: str = "data") -> bytes:
    if isinstance(data, str):
        return data.encode("utf-8")
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise TypeError(f"{name} must be str or bytes, not {type(data).__name__}")


def js_utf8(text: str) -> bytes:
    r"""The bytes JavaScript's ``Buffer.from(text)`` / ``TextEncoder`` give for a string.

    UTF-8, where a JavaScript string's lone surrogate (half of a UTF-16 pair)
    becomes U+FFFD and two halves of a pair, even as separate Python code
    points, become the one character they encode.  Python's own
    ``str.encode("utf-8")`` refuses both.

    >>> js_utf8("città"), js_utf8("\ud800x"), js_utf8("\ud83d\ude00") == "\U0001F600".encode()
    (b'citt\xc3\xa0', b'\xef\xbf\xbdx', True)
    """
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # surrogates: go through UTF-16 code units, as JavaScript does
        units = text.encode("utf-16-le", "surrogatepass")
        return units.decode("utf-16-le", "replace").encode("utf-8")


def murmurhash2(data: str | bytes, seed: int = 0) -> int:
    """MurmurHash2, 32 bits, exactly as the npm package ``murmurhash`` computes ``v2``.

    Strings are hashed as the UTF-8 bytes Node gives them (:func:`js_utf8`);
    the result is unsigned.

    >>> murmurhash2("123")
    2461496879
    >>> murmurhash2("123nejakaSul") % 2**8   # the article's firstHashFunction("123")
    42
    """
    data = js_utf8(data) if isinstance(data, str) else _utf8(data)
    if not is_int(seed) or not 0 <= seed <= _MASK32:
        raise ValueError(f"seed must be an int in 0..2**32-1, got {seed!r}")
    seed, length = int(seed), len(data)
    h = (seed ^ length) & _MASK32
    whole = length - length % 4
    for k in struct.unpack_from(f"<{whole // 4}I", data):  # the 4-byte little-endian blocks
        k = (k * _M2) & _MASK32
        k ^= k >> 24
        k = (k * _M2) & _MASK32
        h = ((h * _M2) & _MASK32) ^ k
    tail = data[whole:]
    if tail:
        h ^= int.from_bytes(tail, "little")
        h = (h * _M2) & _MASK32
    h ^= h >> 13
    h = (h * _M2) & _MASK32
    h ^= h >> 15
    return h


def murmur3_32(data: str | bytes, seed: int = 0) -> int:
    """MurmurHash3 x86 32-bit of the UTF-8 bytes, unsigned (``mmh3.hash``).

    >>> murmur3_32("123")
    2662625771
    """
    return mmh3.hash(_utf8(data), seed, signed=False)


def n_bit_hash_function(n: int, salt: str,
                        hash_function: Callable[[str], int] = murmurhash2) -> Callable[[str], int]:
    """Return the article's n-bit hash function: ``text -> hash_function(text + salt) % 2**n``.

    >>> first = n_bit_hash_function(8, "nejakaSul")
    >>> second = n_bit_hash_function(8, "nejakaJinaSul")
    >>> first("123"), second("123")
    (42, 174)
    """
    if not is_int(n) or not 1 <= n <= 32:
        raise ValueError(f"n (hash bits) must be an int in 1..32, got {n!r}")
    if not isinstance(salt, str):
        raise TypeError(f"salt must be str, not {type(salt).__name__}")
    n = int(n)
    upper_bound = 2 ** n

    def n_bit_hash(text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"text must be str, not {type(text).__name__}")
        return hash_function(text + salt) % upper_bound

    n_bit_hash.__name__ = f"hash_{n}bit_salt_{salt}"
    n_bit_hash.__qualname__ = n_bit_hash.__name__
    return n_bit_hash


def key_to_bytes(key: str | bytes | int) -> bytes:
    """Encode a key the way every :class:`~bloomedu.BloomFilter` hashes it.

    ``str`` becomes its UTF-8 bytes, bytes-like objects stay as they are, and an
    ``int`` in -2**63 .. 2**64-1 becomes the 8 little-endian bytes of its value
    modulo 2**64 (so -1 and 2**64-1 are the same key, as in a uint64/int64 array).

    >>> key_to_bytes("città")
    b'citt\\xc3\\xa0'
    >>> key_to_bytes(1)
    b'\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00'
    """
    if isinstance(key, str):
        return key.encode("utf-8")
    if isinstance(key, (bytes, bytearray, memoryview)):
        return bytes(key)
    if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
        value = int(key)
        if not -2 ** 63 <= value < 2 ** 64:
            raise ValueError(f"int key must be in -2**63 .. 2**64-1, got {value}")
        return (value & _MASK64).to_bytes(8, "little")
    raise TypeError(f"key must be str, bytes or int, not {type(key).__name__}")


def hash128(key: str | bytes | int) -> tuple[int, int]:
    """The two 64-bit halves (h1, h2) of MurmurHash3 x64 128 (seed 0) of a key.

    >>> hash128("città")
    (12618118603063681779, 4151455998188086581)
    """
    return mmh3.hash64(key_to_bytes(key), 0, signed=False)


def fmix64(x: int) -> int:
    """MurmurHash3's 64-bit finaliser: a bijection that spreads every input bit over all 64.

    >>> fmix64(0), fmix64(1)
    (0, 12994781566227106604)
    """
    return _fmix64(whole_number(x, "x", 0, _MASK64))


def _fmix64(x: int) -> int:
    """:func:`fmix64` of a Python int known to be in 0..2**64-1 (the filters' own calls)."""
    x ^= x >> 33
    x = (x * 0xFF51AFD7ED558CCD) & _MASK64
    x ^= x >> 33
    x = (x * 0xC4CEB9FE1A85EC53) & _MASK64
    return x ^ (x >> 33)


def bit_position(h1: int, h2: int, i: int, num_bits: int) -> int:
    """Position i of a key: ``fmix64((h1 + i*h2) mod 2**64) mod m``.

    Double hashing (Kirsch and Mitzenmacher, ESA 2006) makes k distinct 64-bit
    values from one 128-bit hash.  Reducing ``h1 + i*h2`` straight modulo m, as
    Guava does, ties the k positions together whenever h2 mod m is 0 or has a
    small order (about one key in m): on small filters the false-positive rate
    then runs several times above the exact rate (``notebooks/deeper/06_small_filters``
    measures it).
    Mixing each value with ``fmix64`` first removes that.

    >>> bit_position(10, 3, i=1, num_bits=8)
    5
    """
    h1, h2, i, num_bits = _position_arguments(h1, h2, i, num_bits)
    return fmix64((h1 + i * h2) & _MASK64) % num_bits


def _position_arguments(h1, h2, i, num_bits, name: str = "i") -> tuple[int, int, int, int]:
    """h1, h2 in 0..2**64-1, i (or k, as ``name``) at most k + l, m in 1..2**63-1, as ints."""
    return (whole_number(h1, "h1", 0, _MASK64), whole_number(h2, "h2", 0, _MASK64),
            whole_number(i, name, 0 if name == "i" else 1, MAX_HASHES + 1024),
            whole_number(num_bits, "num_bits", 1, MAX_NUM_BITS))


def _bit_position(h1: int, h2: int, i: int, num_bits: int) -> int:
    """:func:`bit_position` of arguments known to be in range: every filter's per-key path."""
    return _fmix64((h1 + i * h2) & _MASK64) % num_bits


def double_hash_indices(h1: int, h2: int, num_hashes: int, num_bits: int) -> list[int]:
    """The k bit positions ``fmix64((h1 + i*h2) mod 2**64) mod m`` for i = 0..k-1.

    >>> double_hash_indices(10, 3, num_hashes=4, num_bits=8)
    [5, 5, 4, 1]
    """
    h1, h2, num_hashes, num_bits = _position_arguments(h1, h2, num_hashes, num_bits, "num_hashes")
    return _double_hash_indices(h1, h2, num_hashes, num_bits)


def _double_hash_indices(h1: int, h2: int, num_hashes: int, num_bits: int) -> list[int]:
    """:func:`double_hash_indices` of arguments known to be in range."""
    return [_bit_position(h1, h2, i, num_bits) for i in range(num_hashes)]


def _step_mask(num_hashes: int) -> int:
    """For k >= 2: h2 & mask == 0 exactly when h1 + i*h2 mod 2**64, i = 0..k-1, repeat.

    Those k values are distinct exactly when h2 has at least k distinct multiples
    mod 2**64, i.e. when 2**64 / gcd(h2, 2**64) >= k; with L = (k-1).bit_length()
    (so 2**L >= k > 2**(L-1)) that fails exactly when 2**(65-L) divides h2.
    """
    return (1 << (65 - (num_hashes - 1).bit_length())) - 1


def spread_step(h2: int, num_hashes: int) -> int:
    """The step of a key's k positions: h2, or h2 | 1 if its k values would not be distinct.

    Position i is ``fmix64(h1 + i*h2 mod 2**64) mod m``.  If 2**(65 - L) divides
    h2, with L = (k-1).bit_length() and k >= 2, two of the k values h1 + i*h2
    coincide: the empty key hashes to h2 = 0, so all its k positions were one
    bit.  Such a step (h2 = 0, and otherwise about one key in 2**(64 - L)) is
    made odd; an odd step has 2**64 distinct multiples, so the k values differ.
    Every other key keeps its h2, and its positions.

    >>> spread_step(0, 7), spread_step(2**62, 7), spread_step(2**61, 7), spread_step(12345, 7)
    (1, 4611686018427387905, 2305843009213693952, 12345)
    """
    return _spread_step(whole_number(h2, "h2", 0, _MASK64),
                        whole_number(num_hashes, "num_hashes", 1, MAX_HASHES + 1024))


def _spread_step(h2: int, num_hashes: int) -> int:
    """:func:`spread_step` of arguments known to be in range."""
    return h2 | 1 if num_hashes > 1 and h2 & _step_mask(num_hashes) == 0 else h2


def spread_steps(h2: np.ndarray, num_hashes: int) -> None:
    """:func:`spread_step` of every element of a uint64 array, in place.

    >>> h2 = np.array([0, 2**62, 12345], dtype=np.uint64); spread_steps(h2, 7)
    >>> h2.tolist() == [spread_step(x, 7) for x in [0, 2**62, 12345]]
    True
    """
    if num_hashes == 1:  # one value: nothing to repeat
        return
    kept = np.bitwise_and(h2, np.uint64(_step_mask(num_hashes)))  # 0: the k values repeat
    if not kept.all():
        np.bitwise_or(h2, np.uint64(1), out=h2, where=kept == 0)
