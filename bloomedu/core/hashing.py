"""Hash functions: the article's, and one 128-bit hash per key for the general filter.

Article 1 ("Filtro di Bloom: un elemento appartiene all'insieme?") hashes click IDs with the
npm package ``murmurhash`` (``murmurhash.v2``), truncates the hash to a few bits, and makes
several such hash functions by appending a salt to the input.  :func:`murmurhash2` and
:func:`n_bit_hash_function` reproduce them exactly.

The general :class:`~bloomedu.core.filter.BloomFilter` hashes each key once:
:func:`key_to_bytes` encodes it (str as UTF-8, an int as its 8 little-endian bytes),
:func:`hash128` gives the two 64-bit halves (h1, h2) of MurmurHash3 x64 128, and
:func:`key_hashes` makes the step h2 odd for the few keys (the empty key among them) whose k
values h1 + i*h2 would repeat (:func:`spread_step`).  The filter turns (h1, h2) into k
positions (:func:`bloomedu.core.filter.bit_position`).

A batch of keys goes through :func:`key_chunks` (one set of checks for every bulk path) and
:func:`hashed_batches`, which gives (h1, h2) as uint64 arrays, a chunk of keys at a time,
through the kernels of :mod:`bloomedu.kernels.murmur`, or their native twins when
:mod:`bloomedu.kernels.backend` picks them (both tested equal to :func:`hash128`).

Nothing here uses Python's built-in ``hash()``: it is salted per process, so bit positions
would change from one run to the next.

Taught in ``notebooks/02_hashed_ids.ipynb`` (MurmurHash), ``notebooks/04_salted_hashes.ipynb``
(the article's salted functions) and ``notebooks/06_inside_the_filter.ipynb`` (one hash, k
positions); tested in ``tests/test_hashing.py``.

>>> hash128("123") == key_hashes("123", 3)
True
"""

from __future__ import annotations

import struct
from itertools import islice
from typing import Callable, Iterable, Iterator

import mmh3
import numpy as np

from ..kernels import backend
from ..kernels.murmur import spread_steps
from .checks import MAX_HASHES, is_int, whole_number

__all__ = ["murmurhash2", "js_utf8", "murmur3_32", "n_bit_hash_function", "key_to_bytes",
           "hash128", "fmix64", "spread_step", "key_hashes", "step", "check_batch",
           "key_chunks", "cannot_fail", "key_list", "hashed_batches", "joined", "CHUNK_KEYS"]

_MASK32 = 0xFFFFFFFF
_MASK64 = 0xFFFFFFFFFFFFFFFF
_M2 = 0x5BD1E995  # MurmurHash2's multiplier
CHUNK_KEYS = 1 << 15  # keys hashed per numpy batch: bounds a bulk call's memory


# --- article 1: MurmurHash2 and its n-bit, salted functions ------------------------------
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


# --- the general filter: one 128-bit hash per key -----------------------------------------
def key_to_bytes(key: str | bytes | int) -> bytes:
    """Encode a key the way every :class:`~bloomedu.BloomFilter` hashes it.

    ``str`` becomes its UTF-8 bytes, bytes-like objects stay as they are, and an ``int`` in
    -2**63 .. 2**64-1 becomes the 8 little-endian bytes of its value modulo 2**64 (so -1 and
    2**64-1 are the same key, as in a uint64/int64 array).

    >>> key_to_bytes("città"), key_to_bytes(1)
    (b'citt\\xc3\\xa0', b'\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00')
    >>> key_to_bytes(1.0)
    Traceback (most recent call last):
    TypeError: key must be str, bytes or int, not float
    """
    if isinstance(key, str):
        return key.encode("utf-8")
    if isinstance(key, (bytes, bytearray, memoryview)):
        return bytes(key)
    if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
        value = int(key)
        if not -2 ** 63 <= value < 2 ** 64:
            shown = value if value.bit_length() <= 128 else f"an int of {value.bit_length()} bits"
            raise ValueError(f"int key must be in -2**63 .. 2**64-1, got {shown}")
        return (value & _MASK64).to_bytes(8, "little")
    if _is_arrow(key) and hasattr(key, "as_py"):  # a pyarrow scalar: the key it holds
        value = key.as_py()
        if value is None:
            raise ValueError("key is a pyarrow null: a null is no key")
        if _is_arrow(value) or not isinstance(value, (str, bytes, int)):
            raise TypeError(f"key must be str, bytes or int, not a pyarrow {key.type} scalar")
        return key_to_bytes(value)
    raise TypeError(f"key must be str, bytes or int, not {type(key).__name__}")


_ARROW_INTEGERS = {f"{sign}int{bits}" for sign in ("", "u") for bits in (8, 16, 32, 64)}


def _is_arrow(value) -> bool:
    """True for a pyarrow object (pyarrow is not a dependency: told by its type's module)."""
    return type(value).__module__.partition(".")[0] == "pyarrow"


def _arrow_batch(keys):
    """A pyarrow Array or ChunkedArray of keys as a numpy integer array or a list of str or
    bytes; nulls refused (a null is no key)."""
    if keys.null_count:
        raise ValueError(f"keys holds {keys.null_count} nulls (a pyarrow {keys.type} array): "
                         "a null is no key; drop them first (keys.drop_null())")
    if str(keys.type) in _ARROW_INTEGERS:
        return np.asarray(keys)
    return keys.to_pylist()


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
    if type(x) is not int or not 0 <= x <= _MASK64:  # the filters' own calls pass this at once
        x = whole_number(x, "x", 0, _MASK64)
    x ^= x >> 33
    x = (x * 0xFF51AFD7ED558CCD) & _MASK64
    x ^= x >> 33
    x = (x * 0xC4CEB9FE1A85EC53) & _MASK64
    return x ^ (x >> 33)


def spread_step(h2: int, num_hashes: int) -> int:
    """The step of a key's k positions: h2, or h2 | 1 if its k values would not all differ.

    Position i is ``fmix64(h1 + i*h2 mod 2**64) mod m``.  The k values h1 + i*h2 (i < k)
    differ exactly when h2 has at least k distinct multiples modulo 2**64; with
    L = (k-1).bit_length() that fails exactly when 2**(65 - L) divides h2.  The empty key
    hashes to h2 = 0, so all its k positions were one bit.  Such a step (h2 = 0, and otherwise
    about one key in 2**(64 - L)) is made odd, and an odd step has 2**64 distinct multiples.
    Every other key keeps its h2.  (:func:`bloomedu.kernels.murmur.spread_steps` does the
    same to a whole array.)

    >>> spread_step(0, 7), spread_step(2**62, 7), spread_step(2**61, 7), spread_step(12345, 7)
    (1, 4611686018427387905, 2305843009213693952, 12345)
    """
    h2 = whole_number(h2, "h2", 0, _MASK64)
    num_hashes = whole_number(num_hashes, "num_hashes", 1, MAX_HASHES + 1024)
    mask = (1 << (65 - (num_hashes - 1).bit_length())) - 1
    return h2 | 1 if num_hashes > 1 and h2 & mask == 0 else h2


def key_hashes(key, num_hashes: int | None, *, spread: bool = True) -> tuple[int, int]:
    """(h1, h2) of one key for a structure that takes k = ``num_hashes`` positions a key.

    ``num_hashes=None`` (or ``spread=False``) gives h2 as hashed, for a structure whose tables
    use different k (spread it per table with :func:`step`).

    >>> key_hashes("", 3), key_hashes("", None)
    ((0, 1), (0, 0))
    """
    h1, h2 = hash128(key)
    return (h1, h2) if num_hashes is None or not spread else (h1, spread_step(h2, num_hashes))


def step(h2, num_hashes: int):
    """The step for k = ``num_hashes`` from an unspread h2: an int, or a new uint64 array.

    >>> step(0, 3), step(np.zeros(2, np.uint64), 3).tolist(), step(0, 1)
    (1, [1, 1], 0)
    """
    if isinstance(h2, np.ndarray):
        h2 = h2.copy()
        spread_steps(h2, num_hashes)
        return h2
    return spread_step(h2, num_hashes)


# --- a batch of keys ----------------------------------------------------------------------
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

    Every bulk path of the library takes its keys from here, so what one filter takes every
    filter takes (a pyarrow array too: an integer one as its values, any other as its Python
    values, and no nulls), and what one filter refuses every filter refuses: one key passed
    as a batch, an array of floats, bools or anything but integers, str, bytes and objects,
    and an ``S``/``U`` array with an element that ends in NUL (numpy cannot tell ``b"ab"`` from ``b"ab\\x00"`` in it; checked over the whole array
    before the first chunk).  The keys themselves are checked by whoever encodes them
    (:func:`key_to_bytes` for bloomedu's own hash).

    >>> [chunk.tolist() for chunk in key_chunks(np.arange(5, dtype=">u2"), 2)]
    [[0, 1], [2, 3], [4]]
    >>> list(key_chunks(np.array(["ab", "cd"]))), list(key_chunks(iter("xyz"), 2))
    ([['ab', 'cd']], [['x', 'y'], ['z']])
    >>> next(key_chunks(np.array([1.5])))
    Traceback (most recent call last):
    ...
    TypeError: keys array must hold integers, str or bytes, not float64: ...
    """
    if _is_arrow(keys) and hasattr(keys, "to_pylist") and hasattr(keys, "null_count"):
        yield from key_chunks(_arrow_batch(keys), chunk_keys)  # a pyarrow (chunked) array
        return
    if not isinstance(keys, np.ndarray):
        check_batch(keys)
        if isinstance(keys, (list, tuple)):
            for start in range(0, len(keys), chunk_keys):
                yield list(keys[start:start + chunk_keys])
            return
        iterator = iter(keys)
        while chunk := list(islice(iterator, chunk_keys)):
            yield chunk
        return
    flat = keys.ravel() if keys.flags.c_contiguous else keys.flat  # no copy of the whole array
    if keys.dtype.kind in "iu":
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


def _refuse_trailing_nul(keys: np.ndarray, flat, chunk_keys: int) -> None:
    """Raise ValueError if an element of an ``S`` or ``U`` array ends in NUL.

    numpy stores each element in the array's full width, padding a shorter one with NULs, and
    drops trailing NULs when it reads one back: ``b"ab"`` and ``b"ab\\x00"`` are the same
    element of an ``S3`` array.  An element whose last byte (``S``) or character (``U``) is not
    NUL is exactly what was stored; any other could be several keys, so the call is refused.
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


def cannot_fail(keys) -> bool:
    """True when no chunk of :func:`key_chunks` can raise once the first is made: a numpy
    integer array (its dtype is checked before the first chunk, and every value is a key).

    >>> cannot_fail(np.arange(3, dtype=">i2")), cannot_fail([1, 2]), cannot_fail(np.array(["a"]))
    (True, False, False)
    """
    return isinstance(keys, np.ndarray) and keys.dtype.kind in "iu"


def key_list(keys) -> list:
    """Every key of a batch as a Python list, through :func:`key_chunks`'s checks (an integer
    array's keys as Python ints): for structures that encode their keys one by one.

    >>> key_list(np.array([1, 2], dtype=">i8")), key_list(("a", b"b"))
    ([1, 2], ['a', b'b'])
    """
    out: list = []
    for chunk in key_chunks(keys, 1 << 16):
        out += chunk.tolist() if isinstance(chunk, np.ndarray) else chunk
    return out


def hashed_batches(keys, num_hashes: int | None, chunk_keys: int | None = None, *,
                   spread: bool = True) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(h1, h2) uint64 arrays of :func:`key_hashes` for a batch of keys, ``chunk_keys`` at a time.

    ``keys``: a numpy integer array of any dtype and byte order (each key is its value), or any
    iterable of str, bytes and int keys, or an ``S``/``U``/object array of them
    (:func:`key_chunks` checks the batch).  A bad key raises when its chunk is reached.
    ``chunk_keys`` defaults to :data:`CHUNK_KEYS`.

    >>> [(h1.tolist(), h2.tolist()) for h1, h2 in hashed_batches([""], 3)]
    [([0], [1])]
    >>> [h1.size for h1, h2 in hashed_batches(np.arange(5, dtype=np.uint64), 3, chunk_keys=2)]
    [2, 2, 1]
    >>> first, = hashed_batches(["città", 1], None)
    >>> [int(h) for h in first[0]] == [hash128("città")[0], hash128(1)[0]]
    True
    """
    for chunk in key_chunks(keys, chunk_keys or CHUNK_KEYS):
        kernels = backend.murmur()  # numpy's or the native one: the same (h1, h2)
        if isinstance(chunk, np.ndarray):
            h1, h2 = kernels.murmur3_128_uint64(chunk)
        else:
            h1, h2 = kernels.murmur3_128_list(chunk, key_to_bytes)
        if num_hashes is not None and spread:
            kernels.spread_steps(h2, num_hashes)
        yield h1, h2


def joined(batches: Iterable[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Every (h1, h2) batch of :func:`hashed_batches` as one pair of arrays.

    >>> h1, h2 = joined(hashed_batches(np.arange(3, dtype=np.uint64), 3, chunk_keys=2))
    >>> h1.tolist() == [key_hashes(i, 3)[0] for i in range(3)]
    True
    """
    batches = list(batches)
    if not batches:
        return np.zeros(0, np.uint64), np.zeros(0, np.uint64)
    return np.concatenate([h1 for h1, _ in batches]), np.concatenate([h2 for _, h2 in batches])
