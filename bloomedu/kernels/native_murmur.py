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

import ctypes
import sys
from typing import Callable

import numpy as np

from .jit import address_of, njit, peek8, peek32, peek64

__all__ = ["PADDING", "CPYTHON_STR", "joined_keys", "hash_joined", "hash_at", "hash_str_list",
           "list_items", "hash_uint64", "murmur3_128_list", "spread_steps",
           "murmur3_128_uint64", "fmix64"]

_C1 = np.uint64(0x87C37B91114253D5)
_C2 = np.uint64(0x4CF5AD432745937F)
_F1 = np.uint64(0xFF51AFD7ED558CCD)
_F2 = np.uint64(0xC4CEB9FE1A85EC53)
_N1 = np.uint64(0x52DCE729)
_N2 = np.uint64(0x38495AB5)
_FIVE, _EIGHT, _ZERO = np.uint64(5), np.uint64(8), np.uint64(0)
_ALL = np.uint64(2 ** 64 - 1)
_PAGE_LOW, _PAGE_ROOM = np.uint64(4095), np.uint64(4096 - 16)  # 4 KiB pages, the smallest
_LITTLE = sys.byteorder == "little"  # a uint64 read is then MurmurHash3's little-endian word
PADDING = 16  # zero bytes after the last key of a joined buffer: every tail is read in words
_PAD_STR, _PAD_BYTES = "\0" * PADDING, b"\0" * PADDING
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
def _tail_words(tail, rest):
    """The (k1, k2) words of a key's last ``rest`` (1 to 15) bytes at address ``tail``,
    little-endian, zero above the key.  Two whole-word reads when they stay inside the tail's
    memory page (a page is mapped whole, so reading past the key there cannot fault), byte by
    byte otherwise."""
    k1, k2 = _ZERO, _ZERO
    if tail & _PAGE_LOW <= _PAGE_ROOM and _LITTLE:
        k1 = peek64(tail)
        if rest > 8:
            k2 = peek64(tail + _EIGHT) & (_ALL >> np.uint64(128 - 8 * rest))
        elif rest < 8:
            k1 &= _ALL >> np.uint64(64 - 8 * rest)
    else:
        for byte in range(rest):
            value = np.uint64(peek8(tail + np.uint64(byte)))
            if byte < 8:
                k1 |= value << np.uint64(8 * byte)
            else:
                k2 |= value << np.uint64(8 * (byte - 8))
    return k1, k2


@njit
def _block_word(address):
    """8 bytes at ``address`` as MurmurHash3 reads them: little-endian."""
    if _LITTLE:
        return peek64(address)
    value = _ZERO
    for byte in range(8):
        value |= np.uint64(peek8(address + np.uint64(byte))) << np.uint64(8 * byte)
    return value


@njit
def hash_at(address, length):
    """(h1, h2) of MurmurHash3 x64 128, seed 0, of the ``length`` bytes at ``address``.

    >>> import mmh3
    >>> data = np.frombuffer(b"a key of twenty bytes", np.uint8)
    >>> h = hash_at(np.uint64(data.ctypes.data), np.uint64(20))
    >>> (int(h[0]), int(h[1])) == mmh3.hash64(b"a key of twenty byte", 0, signed=False)
    True
    """
    h1, h2 = _ZERO, _ZERO
    body = length & ~np.uint64(15)
    for block in range(0, body, 16):
        h1 ^= _mix_k1(_block_word(address + np.uint64(block)))
        h1 = (h1 << _R27) | (h1 >> _L37)
        h1 += h2
        h1 = h1 * _FIVE + _N1
        h2 ^= _mix_k2(_block_word(address + np.uint64(block + 8)))
        h2 = (h2 << _R31) | (h2 >> _L33)
        h2 += h1
        h2 = h2 * _FIVE + _N2
    rest = length & np.uint64(15)
    if rest:
        k1, k2 = _tail_words(address + body, rest)
        if rest > 8:
            h2 ^= _mix_k2(k2)
        h1 ^= _mix_k1(k1)
    h1 ^= length
    h2 ^= length
    h1 += h2
    h2 += h1
    h1 = fmix64(h1)
    h2 = fmix64(h2)
    h1 += h2
    h2 += h1
    return h1, h2


@njit
def hash_joined(buffer, offsets, h1, h2):
    """Key i is ``buffer[offsets[i]:offsets[i + 1]]``: its (h1, h2) into ``h1[i]``, ``h2[i]``;
    the buffer holds at least :data:`PADDING` bytes after the last key (:func:`joined_keys`).

    >>> import mmh3
    >>> buffer = np.frombuffer(b"abc" + bytes(PADDING), np.uint8); offsets = np.array([0, 1, 3])
    >>> h1, h2 = np.empty(2, np.uint64), np.empty(2, np.uint64)
    >>> hash_joined(buffer, offsets, h1, h2)
    >>> (int(h1[1]), int(h2[1])) == mmh3.hash64(b"bc", 0, signed=False)
    True
    """
    base = address_of(buffer)
    for i in range(h1.size):
        h1[i], h2[i] = hash_at(base + np.uint64(offsets[i]), np.uint64(offsets[i + 1] - offsets[i]))


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


@njit(nogil=False)
def hash_str_list(items, count, str_type, data_offset, h1, h2):
    """Hash ``count`` keys straight from CPython's str objects: ``items`` is the address of a
    list's array of object pointers.  Each key must be an exact ``str`` stored compact and
    ASCII (its characters are then its UTF-8 bytes, ``data_offset`` bytes into the object);
    the first that is not stops the loop.  Returns the number of keys hashed.  It holds the
    GIL (no other thread can change the list or free a key while it reads them).

    >>> from bloomedu.core.hashing import hash128
    >>> keys = ["".join(["ab", "c"]), "é"]
    >>> h1, h2 = np.empty(2, np.uint64), np.empty(2, np.uint64)
    >>> CPYTHON_STR is None or (hash_str_list(np.uint64(list_items(keys)), 2, *CPYTHON_STR, h1, h2) == 1
    ...                         and (int(h1[0]), int(h2[0])) == hash128("abc"))
    True
    """
    for i in range(count):
        key = peek64(items + np.uint64(8 * i))
        if peek64(key + _TYPE_AT) != str_type or peek32(key + _STATE_AT) & _STATE_MASK != _ASCII_STATE:
            return i
        h1[i], h2[i] = hash_at(key + data_offset, peek64(key + _LENGTH_AT))
    return count


def list_items(keys: list) -> int:
    """The address of a CPython list's array of pointers to its items (``ob_item``).

    >>> CPYTHON_STR is None or list_items([1]) > 0
    True
    """
    return ctypes.c_void_p.from_address(id(keys) + _ITEMS_AT).value or 0


def _cpython_str() -> tuple[np.uint64, np.uint64] | None:
    """(the address of the ``str`` type, where a compact ASCII str keeps its characters) when
    this interpreter lays its objects out as :func:`hash_str_list` reads them, checked on
    live objects; None otherwise (another Python, 32 bits, a free-threaded build), and then
    :func:`murmur3_128_list` always joins the keys first."""
    if sys.implementation.name != "cpython" or sys.maxsize != 2 ** 63 - 1:
        return None
    data = sys.getsizeof("") - 1  # sizeof(PyASCIIObject): the characters follow it
    try:
        probe = "".join(["bloom", "edu\0!"])  # made now: compact ASCII, never interned
        other = "".join(["citt", "à"])
        state = ctypes.c_uint32.from_address(id(probe) + int(_STATE_AT)).value
        other_state = ctypes.c_uint32.from_address(id(other) + int(_STATE_AT)).value
        holder = [probe, other]
        fits = (ctypes.c_void_p.from_address(id(probe) + int(_TYPE_AT)).value == id(str)
                and ctypes.c_ssize_t.from_address(id(probe) + int(_LENGTH_AT)).value == len(probe)
                and ctypes.string_at(id(probe) + data, len(probe)) == probe.encode()
                and state & int(_STATE_MASK) == int(_ASCII_STATE)
                and other_state & int(_STATE_MASK) != int(_ASCII_STATE)
                and ctypes.c_void_p.from_address(list_items(holder)).value == id(probe))
    except (ValueError, OSError):
        return None
    return (np.uint64(id(str)), np.uint64(data)) if fits else None


_TYPE_AT, _LENGTH_AT, _STATE_AT = np.uint64(8), np.uint64(16), np.uint64(32)  # 64-bit CPython
_ITEMS_AT = 24  # a list's ob_item, after its reference count, type and size
_STATE_MASK, _ASCII_STATE = np.uint32(0b1111100), np.uint32(0b1100100)  # kind 1, compact, ascii
CPYTHON_STR = _cpython_str()


def joined_keys(keys: list, encode: Callable[[object], bytes]) -> tuple[np.ndarray, np.ndarray]:
    """A list of keys as one uint8 buffer and ``len(keys) + 1`` int64 offsets: key i is
    ``buffer[offsets[i]:offsets[i + 1]]``, the bytes ``hash128`` hashes; :data:`PADDING` zero
    bytes follow the last key (the hash reads a key's tail as whole 8-byte words and masks it).

    A batch of ASCII str, or of bytes, is joined as it is; in any other batch every key but a
    bytes goes through ``encode`` (which raises for a key it refuses, the first in the list).

    >>> from bloomedu.core.hashing import key_to_bytes
    >>> buffer, offsets = joined_keys(["ab", "", "é"], key_to_bytes)
    >>> buffer[:offsets[-1]].tobytes(), offsets.tolist(), int(buffer.size - offsets[-1]) == PADDING
    (b'ab\\xc3\\xa9', [0, 2, 2, 4], True)
    """
    padded = list(keys)  # a copy of the pointers: the padding joins in, no second copy of the text
    padded.append(_PAD_STR)
    try:
        text = "".join(padded)
    except TypeError:  # a key that is not a str
        text = None
    if text is not None and text.isascii():  # every key ASCII: its characters are its bytes
        data = text.encode("ascii")
    else:
        if text is not None or set(map(type, keys)) != {bytes}:
            keys = [key if type(key) is bytes else encode(key) for key in keys]
        padded = list(keys)
        padded.append(_PAD_BYTES)
        data = b"".join(padded)
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
    h1, h2 = np.empty(len(keys), dtype=np.uint64), np.empty(len(keys), dtype=np.uint64)
    if CPYTHON_STR is not None and type(keys) is list:  # str keys read where they are
        if hash_str_list(np.uint64(list_items(keys)), len(keys), *CPYTHON_STR, h1, h2) == len(keys):
            return h1, h2
    buffer, offsets = joined_keys(keys, encode)
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


@njit
def _spread(h2, mask):
    for i in range(h2.size):
        if h2[i] & mask == 0:
            h2[i] |= np.uint64(1)


def spread_steps(h2: np.ndarray, num_hashes: int) -> None:
    """:func:`bloomedu.kernels.murmur.spread_steps` in one compiled pass: h2 made odd where
    the k values h1 + i*h2 would repeat (:func:`bloomedu.core.hashing.spread_step`).

    >>> from bloomedu.core.hashing import spread_step
    >>> h2 = np.array([0, 2**62, 12345], dtype=np.uint64); spread_steps(h2, 7)
    >>> h2.tolist() == [spread_step(x, 7) for x in [0, 2**62, 12345]]
    True
    """
    if num_hashes > 1:
        _spread(h2, np.uint64((1 << (65 - (num_hashes - 1).bit_length())) - 1))
