"""MurmurHash3 x64 128 of many keys at once: the kernel behind every filter's bulk path.

The reference is :func:`bloomedu.core.hashing.hash128`, one key at a time through ``mmh3``.
Here the same two 64-bit halves (h1, h2) come out for a whole batch:

- :func:`murmur3_128_uint64`: an integer array, hashed in numpy by value (each key is its 8
  little-endian bytes, whatever the array's dtype and byte order): MurmurHash3 written out for
  8-byte input, where there is no full 16-byte block and the key is the tail ``k1``;
- :func:`murmur3_128_list`: a list of str and bytes keys, one ``mmh3.hash_bytes`` call each,
  the digests joined and read back as two uint64 arrays;
- :func:`fmix64_array`: MurmurHash3's 64-bit finaliser of every element of an array.

Tested bit for bit against ``hash128`` and ``fmix64`` in ``tests/test_hashing.py`` and
``tests/test_bulk_fast_paths.py``.

>>> import mmh3
>>> h1, h2 = murmur3_128_uint64(np.array([1], dtype=">u8"))   # big-endian: the same key 1
>>> (int(h1[0]), int(h2[0])) == mmh3.hash64((1).to_bytes(8, "little"), 0, signed=False)
True
"""

from __future__ import annotations

from itertools import islice
from typing import Callable

import mmh3
import numpy as np

__all__ = ["fmix64_array", "murmur3_128_uint64", "murmur3_128_list", "spread_steps"]

_C1 = np.uint64(0x87C37B91114253D5)
_C2 = np.uint64(0x4CF5AD432745937F)
_F1 = np.uint64(0xFF51AFD7ED558CCD)
_F2 = np.uint64(0xC4CEB9FE1A85EC53)
_EIGHT = np.uint64(8)
_R31, _S33 = np.uint64(31), np.uint64(33)
PIECE_KEYS = 4096  # str/bytes keys hashed per join: their objects stay in cache


def fmix64_array(h: np.ndarray, scratch: np.ndarray, source: np.ndarray | None = None) -> None:
    """``fmix64`` of every element of ``source`` (default: ``h`` itself), into ``h``.

    ``scratch``: a buffer like ``h``.  Reading the first step from ``source`` saves copying it
    into ``h`` first.

    >>> from bloomedu.core.hashing import fmix64
    >>> h = np.array([1], dtype=np.uint64); fmix64_array(h, np.empty_like(h))
    >>> int(h[0]) == fmix64(1)
    True
    """
    source = h if source is None else source
    np.bitwise_xor(source, np.right_shift(source, _S33, out=scratch), out=h)
    h *= _F1
    h ^= np.right_shift(h, _S33, out=scratch)
    h *= _F2
    h ^= np.right_shift(h, _S33, out=scratch)


def murmur3_128_uint64(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """MurmurHash3 x64 128 (seed 0) of each key's 8 little-endian bytes, in numpy.

    A key is its value, whatever the array's dtype and byte order (``">u8"`` from the network,
    a strided view): equal bit for bit to ``hash128(int(key))``.

    >>> from bloomedu.core.hashing import hash128
    >>> h1, h2 = murmur3_128_uint64(np.array([-1], dtype=np.int8))   # the key -1, as add(-1)
    >>> (int(h1[0]), int(h2[0])) == hash128(-1)
    True
    """
    keys = np.asarray(keys)
    if keys.dtype.kind not in "iu":
        raise TypeError(f"keys must be an integer array, not {keys.dtype}")
    if keys.dtype.itemsize == 8:  # read as uint64 in place: native byte order first (">u8")
        native = keys.dtype.newbyteorder("=")
        keys = np.ascontiguousarray(keys, dtype=native).view(np.uint64)  # two's complement
    with np.errstate(over="ignore"):
        h1 = np.multiply(keys, _C1, dtype=np.uint64, casting="unsafe")  # k1 *= c1
        scratch = np.right_shift(h1, _S33)
        h1 <<= _R31
        h1 |= scratch                        # k1 = rotl64(k1, 31)
        h1 *= _C2                            # k1 *= c2; h1 = 0 ^ k1
        h1 ^= _EIGHT                         # h1 ^= length
        h1 += _EIGHT                         # h1 += h2, where h2 = 0 ^ length = 8
        h2 = np.add(h1, _EIGHT)              # h2 += h1
        fmix64_array(h1, scratch)
        fmix64_array(h2, scratch)
        h1 += h2
        h2 += h1
    return h1, h2


def murmur3_128_list(keys: list, encode: Callable[[object], bytes]) -> tuple[np.ndarray, np.ndarray]:
    """(h1, h2) uint64 arrays of MurmurHash3 x64 128 (seed 0) of every key of a list.

    ASCII str and bytes keys are hashed as they are; any other key goes through ``encode``
    first (which raises for a key it refuses), so a key is hashed as its encoded bytes.

    >>> from bloomedu.core.hashing import hash128, key_to_bytes
    >>> h1, h2 = murmur3_128_list(["città", b"x", 3], key_to_bytes)
    >>> [(int(a), int(b)) for a, b in zip(h1, h2)] == [hash128("città"), hash128(b"x"), hash128(3)]
    True
    """
    digests = []
    for start in range(0, len(keys), PIECE_KEYS):  # a piece's objects stay in cache
        piece = keys[start:start + PIECE_KEYS]
        digests.append(_ascii_digests(piece) or _encoded_digests(piece, encode))
    halves = np.frombuffer(b"".join(digests), dtype="<u8").reshape(-1, 2).T
    return halves[0].copy(), halves[1].copy()  # writable (the bytes are not), contiguous


def _ascii_digests(piece: list) -> bytes | None:
    """The joined digests if every key of ``piece`` is an ASCII str, else None.

    ``filter(str.isascii, ...)`` drops any other str (then the digests come up short) and
    raises TypeError on a key that is not a str.  mmh3 is never handed a str it would have to
    encode itself: mmh3 5.3 crashes the interpreter on one UTF-8 cannot encode (a lone
    surrogate).
    """
    try:
        digests = b"".join(map(mmh3.hash_bytes, filter(str.isascii, islice(piece, None))))
    except TypeError:  # a key that is not a str
        return None
    return digests if len(digests) == 16 * len(piece) else None


def _encoded_digests(piece: list, encode: Callable[[object], bytes]) -> bytes:
    """The joined digests of a piece with keys other than ASCII str: bytes as they are,
    everything else through ``encode``."""
    if set(map(type, piece)) != {bytes}:
        piece = [key if type(key) is bytes or (type(key) is str and key.isascii())
                 else encode(key) for key in piece]
    return b"".join(map(mmh3.hash_bytes, piece))


def spread_steps(h2: np.ndarray, num_hashes: int) -> None:
    """``spread_step`` of every element of a uint64 array, in place: h2 made odd where the
    k values h1 + i*h2 would repeat (:func:`bloomedu.core.hashing.spread_step`).

    >>> from bloomedu.core.hashing import spread_step
    >>> h2 = np.array([0, 2**62, 12345], dtype=np.uint64); spread_steps(h2, 7)
    >>> h2.tolist() == [spread_step(x, 7) for x in [0, 2**62, 12345]]
    True
    """
    if num_hashes == 1:  # one value: nothing to repeat
        return
    mask = (1 << (65 - (num_hashes - 1).bit_length())) - 1  # as spread_step's
    kept = np.bitwise_and(h2, np.uint64(mask))  # 0: the k values repeat
    if not kept.all():
        np.bitwise_or(h2, np.uint64(1), out=h2, where=kept == 0)
