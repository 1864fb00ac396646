"""A batch of keys hashed at once: the bulk path of every filter.

The one way in for a batch of keys: :func:`key_chunks` checks a batch and hands it over a
chunk at a time (every filter's bulk path reads its keys through it, whatever hash it then
uses), and :func:`hashed_chunks` gives (h1, h2), the two 64-bit halves of
:func:`~bloomedu.core.hashing.hash128`, for a batch of keys, a chunk at a time: a numpy
integer array of any dtype and byte order is hashed in numpy, by value
(:func:`murmur3_128_uint64`, MurmurHash3 x64 128 written out for 8-byte keys); str, bytes
and int keys go through one mmh3 call each, with ASCII str and bytes taken as they are.
What cannot be hashed as ``add`` hashes it is refused before anything is hashed: a
fixed-width ``S``/``U`` array whose element ends in NUL (numpy cannot tell it from the
shorter key), float and bool arrays, a single str passed as a batch.

Used in ``notebooks/09_one_million_urls.ipynb`` (a million URLs' hashes, sorted); tested in
``tests/test_hashing.py``, ``tests/test_bulk.py`` and ``tests/test_bulk_fast_paths.py``.
"""

from __future__ import annotations

from itertools import islice
from typing import Iterable, Iterator

import mmh3
import numpy as np

from .hashing import fmix64, hash128, key_to_bytes  # noqa: F401  (fmix64, hash128: doctests)

__all__ = ["fmix64_array", "murmur3_128_uint64", "check_batch", "key_chunks", "key_list",
           "hashed_chunks"]

# --- MurmurHash3 x64 128 of 8-byte keys, vectorised ----------------------------
# With 8 bytes of input there is no full 16-byte block: the key is the tail k1.
_C1 = np.uint64(0x87C37B91114253D5)
_C2 = np.uint64(0x4CF5AD432745937F)
_F1 = np.uint64(0xFF51AFD7ED558CCD)
_F2 = np.uint64(0xC4CEB9FE1A85EC53)
_EIGHT = np.uint64(8)
_R31, _S33 = np.uint64(31), np.uint64(33)


def fmix64_array(h: np.ndarray, scratch: np.ndarray, source: np.ndarray | None = None) -> None:
    """:func:`fmix64` of every element of ``source`` (default: ``h`` itself), into ``h``.

    ``scratch``: a buffer like ``h``.  Reading the first step from ``source``
    saves copying it into ``h`` first.

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

    Equal bit for bit to ``mmh3.hash64(key_to_bytes(int(key)), signed=False)``:
    a key is its value, whatever the array's dtype and byte order (``">u8"``
    from the network, a strided view).

    >>> h1, h2 = murmur3_128_uint64(np.array([1], dtype=np.uint64))
    >>> (int(h1[0]), int(h2[0])) == hash128(1)
    True
    >>> h1, h2 = murmur3_128_uint64(np.array([1], dtype=">u8"))   # big-endian: the same key
    >>> (int(h1[0]), int(h2[0])) == hash128(1)
    True

    With 8 bytes of input there is no full 16-byte block: the key is the tail
    ``k1``.  Every step works in place on three buffers of the keys' size.
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


# --- a batch of keys, hashed chunk by chunk (BloomFilter.add_many/contains_many) -------
_PIECE_KEYS = 4096  # str/bytes keys checked and hashed per call: their objects stay in cache

def _is_int_array(keys) -> bool:
    return isinstance(keys, np.ndarray) and keys.dtype.kind in "iu"


def _ascii_strs(keys: list) -> bool:
    """True if every key is an ASCII str: joining them fails on any other type,
    and ``isascii`` of the result reads a flag (faster than one call per key).

    Only those and bytes go to ``mmh3.hash_bytes`` as they are: it reads some
    buffers (a read-only numpy array) that ``key_to_bytes`` refuses, and mmh3
    5.3 crashes the interpreter on a str UTF-8 cannot encode (a lone surrogate).
    """
    try:
        return "".join(keys).isascii()
    except TypeError:  # a key that is not a str
        return False


def _chunked(keys: Iterable, size: int) -> Iterator[list]:
    """Lists of ``size`` keys (the last one shorter) from any iterable."""
    if isinstance(keys, (list, tuple)):
        for start in range(0, len(keys), size):
            yield keys[start:start + size]
        return
    iterator = iter(keys)
    while chunk := list(islice(iterator, size)):
        yield chunk


def check_batch(keys) -> None:
    """Raise TypeError if ``keys`` is one key (a str is iterable, but it is not a batch).

    >>> check_batch(["abc"]); check_batch("abc")
    Traceback (most recent call last):
    ...
    TypeError: keys must be an iterable of keys (use add/in for a single key), not str
    """
    if isinstance(keys, (str, bytes, bytearray, memoryview, int, np.generic)):
        raise TypeError("keys must be an iterable of keys (use add/in for a single key), "
                        f"not {type(keys).__name__}")


def key_chunks(keys, chunk_keys: int = 1 << 14) -> Iterator[np.ndarray | list]:
    """The keys of a batch, checked, ``chunk_keys`` at a time: flat slices of an integer array
    (each key is its value), lists of the Python keys of anything else.

    Every bulk path of the library takes its keys from here, so what one filter refuses
    every filter refuses: one key passed as a batch (a str is iterable, but it is not a
    batch), an array of floats, bools or anything but integers, str, bytes and objects, and an
    ``S``/``U`` array with an element that ends in NUL (:func:`_refuse_trailing_nul`, checked
    over the whole array before the first chunk).  The keys themselves are checked by whoever
    encodes them (:func:`~bloomedu.core.hashing.key_to_bytes` for bloomedu's own hash).

    >>> [chunk.tolist() for chunk in key_chunks(np.arange(5, dtype=">u2"), 2)]
    [[0, 1], [2, 3], [4]]
    >>> list(key_chunks(np.array(["ab", "cd"]))), list(key_chunks(iter("xyz"), 2))
    ([['ab', 'cd']], [['x', 'y'], ['z']])
    >>> next(key_chunks(np.array([1.5])))
    Traceback (most recent call last):
    ...
    TypeError: keys array must hold integers, str or bytes, not float64: ...
    """
    if not isinstance(keys, np.ndarray):
        check_batch(keys)
        yield from _chunked(keys, chunk_keys)
        return
    flat = keys.ravel() if keys.flags.c_contiguous else keys.flat  # no copy of the whole array
    if _is_int_array(keys):
        for start in range(0, keys.size, chunk_keys):
            yield flat[start:start + chunk_keys]
        return
    if keys.dtype.kind not in "OUS":
        raise TypeError(f"keys array must hold integers, str or bytes, not {keys.dtype}: "
                        "add refuses float and bool keys too (convert whole numbers "
                        "with keys.astype(np.int64))")
    if keys.dtype.kind in "US":
        _refuse_trailing_nul(keys, flat, chunk_keys)
    for start in range(0, keys.size, chunk_keys):
        yield flat[start:start + chunk_keys].tolist()


def key_list(keys) -> list:
    """Every key of a batch as a Python list, through :func:`key_chunks`'s checks (an integer
    array's keys as Python ints): for filters that encode their keys one by one.

    >>> key_list(np.array([1, 2], dtype=">i8")), key_list(("a", b"b"))
    ([1, 2], ['a', b'b'])
    """
    out: list = []
    for chunk in key_chunks(keys, 1 << 16):
        out += chunk.tolist() if isinstance(chunk, np.ndarray) else chunk
    return out


def hashed_chunks(keys, chunk_keys: int = 1 << 14) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(h1, h2) uint64 arrays of :func:`hash128`, for ``chunk_keys`` keys at a time.

    ``keys``: a numpy integer array of any dtype and byte order (hashed in
    numpy, by value), or any iterable of keys (str, bytes, int: one mmh3 call
    each), or a numpy ``S``/``U``/object array of such keys, as :func:`key_chunks`
    hands them over.  A bad key raises when its chunk is reached; a bad batch (an
    ``S`` or ``U`` array with an element that ends in NUL) before anything is hashed.

    >>> chunks = list(hashed_chunks(["città", 1, b"x"], chunk_keys=2))
    >>> first_halves = [h1.tolist() for h1, h2 in chunks]
    >>> first_halves == [[hash128("città")[0], hash128(1)[0]], [hash128(b"x")[0]]]
    True
    >>> next(hashed_chunks(np.array([b"ab", b"c"])))
    Traceback (most recent call last):
    ...
    ValueError: keys[1] of the S2 array ends in NUL: ...
    """
    for chunk in key_chunks(keys, chunk_keys):
        if isinstance(chunk, np.ndarray):
            yield murmur3_128_uint64(chunk)
        else:  # pieces of 4,096 keys: their objects stay in cache while they are hashed
            yield _halves(list(_digest_pieces(chunk, min(chunk_keys, _PIECE_KEYS))))


def _refuse_trailing_nul(keys: np.ndarray, flat, chunk_keys: int) -> None:
    """Raise ValueError if an element of an ``S`` or ``U`` array ends in NUL.

    numpy stores each element in the array's full width, padding a shorter one
    with NULs, and drops trailing NULs when it reads one back: ``b"ab"`` and
    ``b"ab\\x00"`` are the same element of an ``S3`` array.  An element whose
    last byte (``S``) or character (``U``) is not NUL is exactly its stored
    bytes or characters, and is hashed as ``add`` hashes them; any other could
    be several keys, so the call is refused, naming it.
    """
    width, unit = keys.dtype.itemsize, 1 if keys.dtype.kind == "S" else 4
    for start in range(0, keys.size, chunk_keys):
        piece = np.ascontiguousarray(flat[start:start + chunk_keys])
        last = piece.view(np.uint8).reshape(-1, width)[:, width - unit:]
        ends_in_nul = ~last.any(axis=1)
        if ends_in_nul.any():
            offset = int(np.argmax(ends_in_nul))
            index = start + offset
            where = index if keys.ndim == 1 else tuple(int(i) for i in np.unravel_index(
                index, keys.shape))
            name = keys.dtype.str.lstrip("|<>=")
            value = piece[offset].item()
            if unit == 1:
                hint = (f"a list of bytes: keys.tolist() if the NULs are padding, "
                        f"keys.view('V{width}').tolist() if they belong to the keys")
            else:
                hint = "a list of str (keys.tolist() if the NULs are padding)"
            raise ValueError(
                f"keys[{where}] of the {name} array ends in NUL: numpy pads shorter elements "
                f"with NULs and drops trailing NULs when it reads one, so {value!r} cannot be "
                f"told from {value!r} followed by NULs; pass {hint}, or an object array")


def _digest_pieces(keys: Iterable, size: int) -> Iterator[bytes]:
    """The 16-byte MurmurHash3 digests of ``size`` keys at a time, joined.

    A list or tuple of ASCII str is hashed straight from an iterator over it
    (no slice of the list, no separate check): ``filter(str.isascii, ..)``
    drops any other str, and a piece that lost a key is hashed again the
    careful way; a key that is not a str sends the rest the careful way.
    """
    if not isinstance(keys, (list, tuple)):
        yield from _careful_digest_pieces(keys, size)
        return
    iterator = iter(keys)
    for start in range(0, len(keys), size):
        count = min(size, len(keys) - start)
        try:
            digests = b"".join(map(mmh3.hash_bytes, filter(str.isascii, islice(iterator, count))))
        except TypeError:  # str.isascii of a key that is not a str
            yield from _careful_digest_pieces(islice(keys, start, None), size)
            return
        if len(digests) < 16 * count:  # a non-ASCII str was left out
            digests = next(_careful_digest_pieces(keys[start:start + count], count))
        yield digests


def _careful_digest_pieces(keys: Iterable, size: int) -> Iterator[bytes]:
    """:func:`_digest_pieces` for any iterable: keys other than ASCII str or bytes go
    through :func:`key_to_bytes` (a bad key raises there)."""
    for piece in _chunked(keys, size):
        if not _ascii_strs(piece) and set(map(type, piece)) != {bytes}:
            piece = [key_to_bytes(key) for key in piece]
        yield b"".join(map(mmh3.hash_bytes, piece))  # faster than np.fromiter(.., "S16")


def _halves(digests: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """(h1, h2) from runs of 16-byte MurmurHash3 digests: two little-endian uint64 each."""
    halves = np.frombuffer(b"".join(digests), dtype="<u8").reshape(-1, 2).T
    return halves[0].copy(), halves[1].copy()  # writable (the bytes are not), contiguous
