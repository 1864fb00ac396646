"""The general Bloom filter: any m bits, any k hash functions.

Article 1 ends with a ``BloomFilter(numberOfHashFunctions, numberOfBits)`` whose
size is a power of two and whose k hash functions are k salted MurmurHash2
calls (that one is :class:`bloomedu.SaltedBloomFilter`).  Here m is any size,
and each key is hashed once: MurmurHash3 x64 128 gives (h1, h2), and the k
positions are ``h1 + i*h2`` modulo 2**64, then modulo m (Kirsch and
Mitzenmacher, ESA 2006: double hashing keeps the false-positive rate of k
independent hashes).  Article 2 sizes a filter from n and p; so does
:meth:`BloomFilter.from_capacity`.

The per-key methods (``add``, ``in``, ``bit_indices``) are written to be read;
``add_many``/``contains_many`` do the same work on numpy arrays, in chunks.
"""

from __future__ import annotations

from itertools import islice
from typing import Iterable, Iterator

import mmh3
import numpy as np

from .bits import BitArray
from .hashing import double_hash_indices, hash128, key_to_bytes, murmur3_128_uint64
from .theory import LN2, num_bits_for

__all__ = ["BloomFilter"]

_CHUNK_KEYS = 1 << 14  # keys per chunk: bounds a bulk call's memory, keeps buffers in cache


def _is_int_array(keys) -> bool:
    return isinstance(keys, np.ndarray) and keys.dtype.kind in "iu"


def _ascii_strs(keys: list) -> bool:
    """True if every key is an ASCII str (a cheap test: str.isascii reads a flag).

    Only those and bytes go to ``mmh3.hash_bytes`` as they are: it reads any
    buffer (a numpy scalar, say) unlike ``key_to_bytes``, and mmh3 5.x crashes
    the interpreter on a str UTF-8 cannot encode (a lone surrogate).
    """
    try:
        return all(map(str.isascii, keys))
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


def _positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return int(value)


class BloomFilter:
    """A Bloom filter of ``num_bits`` bits (m) and ``num_hashes`` hash functions (k).

    >>> f = BloomFilter(num_bits=1024, num_hashes=3)
    >>> f.add("123")
    >>> "123" in f, "456" in f
    (True, False)
    >>> f.bit_indices("123")
    [874, 723, 572]
    >>> f.nbytes
    128
    """

    def __init__(self, num_bits: int, num_hashes: int):
        self.num_bits = _positive_int(num_bits, "num_bits")
        self.num_hashes = _positive_int(num_hashes, "num_hashes")
        self.bits = BitArray(self.num_bits, word_bits=64)
        self._m64 = np.uint64(self.num_bits)

    @classmethod
    def from_capacity(cls, expected_items: int, fpp: float) -> "BloomFilter":
        """Size a filter for n expected items at false-positive rate p.

        m = ceil(-n ln p / (ln 2)^2) and k = round((m / n) ln 2), at least 1.

        >>> f = BloomFilter.from_capacity(1_000_000, 0.001)
        >>> f.num_bits, f.num_hashes, f.nbytes
        (14377588, 10, 1797200)
        """
        n = _positive_int(expected_items, "expected_items")
        if isinstance(fpp, bool) or not isinstance(fpp, (int, float, np.floating)) \
                or not 0.0 < fpp < 1.0:
            raise ValueError(f"fpp must be a float strictly between 0 and 1, got {fpp!r}")
        m = num_bits_for(n, float(fpp))
        return cls(m, max(1, round(m / n * LN2)))

    # --- one key at a time ------------------------------------------------------
    def bit_indices(self, key: str | bytes | int) -> list[int]:
        """The k bit positions of a key, for i = 0..k-1."""
        h1, h2 = hash128(key)
        return double_hash_indices(h1, h2, self.num_hashes, self.num_bits)

    def add(self, key: str | bytes | int) -> None:
        """Insert a key: set its k bits."""
        for index in self.bit_indices(key):
            self.bits.set(index)

    def __contains__(self, key: str | bytes | int) -> bool:
        """True if all k bits of the key are set: inserted, or a false positive."""
        return all(self.bits[index] for index in self.bit_indices(key))

    # --- many keys at once --------------------------------------------------------
    def _hashed_chunks(self, keys) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield (h1, h2) uint64 arrays, chunk by chunk, for a batch of keys.

        A bad key raises when its chunk is reached; ``add_many`` stages bits so
        that the filter is unchanged in that case.
        """
        if _is_int_array(keys):
            flat = keys.ravel()
            for start in range(0, flat.size, _CHUNK_KEYS):
                yield murmur3_128_uint64(flat[start:start + _CHUNK_KEYS])
            return
        if isinstance(keys, np.ndarray):
            if keys.dtype.kind not in "OUS":
                raise TypeError(f"keys array must hold integers, str or bytes, not {keys.dtype}")
            keys = keys.ravel().tolist()
        elif isinstance(keys, (str, bytes, bytearray, memoryview, int, np.generic)):
            raise TypeError("keys must be an iterable of keys (use add/in for a single key), "
                            f"not {type(keys).__name__}")
        for chunk in _chunked(keys, _CHUNK_KEYS):
            if not _ascii_strs(chunk) and set(map(type, chunk)) != {bytes}:
                chunk = [key_to_bytes(key) for key in chunk]  # a bad key raises here
            digests = np.fromiter(map(mmh3.hash_bytes, chunk), dtype="S16", count=len(chunk))
            halves = digests.view("<u8").reshape(-1, 2).T
            yield np.ascontiguousarray(halves[0]), np.ascontiguousarray(halves[1])

    def _next_positions(self, running: np.ndarray, h2: np.ndarray, i: int,
                        out: np.ndarray) -> np.ndarray:
        """Position i of every key, into ``out``; ``running`` goes from h1 + (i-1)*h2 to h1 + i*h2.

        ``x % m`` is written ``x - (x // m) * m``: numpy divides by a scalar
        with a multiply and a shift, several times faster than its ``%``.
        """
        if i > 0:
            running += h2  # wraps modulo 2**64, as in double_hash_indices
        np.floor_divide(running, self._m64, out=out)
        out *= self._m64
        np.subtract(running, out, out=out)
        return out.view(np.int64)  # below m < 2**63: a valid index

    def _chunk_positions(self, keys) -> Iterator[np.ndarray]:
        """Every key's k positions: one array per chunk of keys and per i."""
        for running, h2 in self._hashed_chunks(keys):
            out = np.empty_like(running)
            for i in range(self.num_hashes):
                yield self._next_positions(running, h2, i, out)

    def add_many(self, keys) -> None:
        """Insert many keys: a numpy integer array, or an iterable of str/bytes/int.

        Sets exactly the bits that ``add`` would set for each key.  If a key is
        rejected, no bit of the filter has changed: for m up to 40 Mi bits the
        bits are staged in a scratch array first; a larger filter checks every
        key in a first pass.

        >>> f = BloomFilter(1024, 3)
        >>> f.add_many(np.arange(100, dtype=np.uint64))
        >>> bool(f.contains_many(np.arange(100, dtype=np.uint64)).all())
        True
        """
        if not self.bits.stages_everything and not _is_int_array(keys):
            keys = keys if isinstance(keys, (list, tuple, np.ndarray)) else list(keys)
            for _ in self._hashed_chunks(keys):  # the checking pass: raises on a bad key
                pass
        self.bits.set_chunks(self._chunk_positions(keys))

    def contains_many(self, keys) -> np.ndarray:
        """A bool array: for each key, whether the filter might contain it.

        >>> f = BloomFilter(1024, 3)
        >>> f.add_many(["a", "b"])
        >>> f.contains_many(["a", "b", "zzz"]).tolist()
        [True, True, False]

        Position i is computed only for the keys whose first i bits are all
        set: most absent keys are ruled out by their first bit or two.
        """
        answers = []
        for running, h2 in self._hashed_chunks(keys):
            answer = np.zeros(running.size, dtype=bool)
            alive, out = np.arange(running.size), np.empty_like(running)
            for i in range(self.num_hashes):
                found = self.bits.get_many(self._next_positions(running, h2, i, out))
                survivors = np.flatnonzero(found)  # then take: faster than alive[found]
                alive = alive.take(survivors)
                if i + 1 < self.num_hashes:
                    running, h2, out = running.take(survivors), h2.take(survivors), out[:alive.size]
            answer[alive] = True
            answers.append(answer)
        return np.concatenate(answers) if answers else np.zeros(0, dtype=bool)

    # --- what the filter holds ----------------------------------------------------
    @property
    def nbytes(self) -> int:
        """Bytes of bit storage: 8 * ceil(m / 64)."""
        return self.bits.nbytes

    def bits_set(self) -> int:
        """Number of bits set to 1."""
        return self.bits.count()

    def __repr__(self) -> str:
        return f"BloomFilter(num_bits={self.num_bits}, num_hashes={self.num_hashes})"
