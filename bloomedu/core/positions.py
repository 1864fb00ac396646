"""A key's k positions in a table of m cells, one key or a numpy batch at a time.

Every structure of :mod:`bloomedu.variants` finds a key's cells exactly as
:class:`~bloomedu.core.filter.BloomFilter` finds its bits: MurmurHash3 x64 128 of the key
gives (h1, h2) (:func:`~bloomedu.core.hashing.hash128`, or
:func:`~bloomedu.core.hashing.hashed_chunks` for a batch), and position i is
``fmix64((h1 + i*h2) mod 2**64) mod m`` (:func:`~bloomedu.core.hashing.bit_position`).
A key is hashed once; structures with several tables of one size (generations, slices)
reuse the same positions, and tables of other sizes (the scalable filter's) reuse (h1, h2).

Tested in ``tests/test_variants.py`` (the bulk positions equal ``BloomFilter.bit_indices``).
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from .hashing import double_hash_indices, fmix64_array, hash128, hashed_chunks

__all__ = ["key_positions", "positions", "hashed_batches", "CHUNK_KEYS"]

CHUNK_KEYS = 1 << 15  # keys per numpy batch: bounds a bulk call's memory


def key_positions(key, num_hashes: int, num_cells: int) -> list[int]:
    """The k positions of one key among m cells, as ``BloomFilter(m, k).bit_indices`` gives.

    >>> key_positions("123", 3, 1024)
    [524, 190, 435]
    """
    h1, h2 = hash128(key)
    return double_hash_indices(h1, h2, num_hashes, num_cells)


def positions(h1: np.ndarray, h2: np.ndarray, num_hashes: int, num_cells: int,
              first: int = 0) -> np.ndarray:
    """A (k, n) int64 array: row i holds position ``first + i`` of every key.

    >>> h1, h2 = hash128("123")
    >>> positions(np.array([h1], np.uint64), np.array([h2], np.uint64), 3, 1024).ravel().tolist()
    [524, 190, 435]
    """
    m = np.uint64(num_cells)
    out = np.empty((num_hashes, h1.size), dtype=np.uint64)
    scratch = np.empty(h1.size, dtype=np.uint64)
    with np.errstate(over="ignore"):
        running = h1 + h2 * np.uint64(first)  # wraps modulo 2**64
        for i in range(num_hashes):
            if i:
                running += h2
            fmix64_array(out[i], scratch, source=running)
    out %= m
    return out.view(np.int64)


def hashed_batches(keys, chunk_keys: int = CHUNK_KEYS) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(h1, h2) uint64 arrays for ``chunk_keys`` keys at a time (any key kind bloomedu hashes).

    >>> [h1.size for h1, h2 in hashed_batches(np.arange(5, dtype=np.uint64), chunk_keys=2)]
    [2, 2, 1]
    """
    yield from hashed_chunks(keys, chunk_keys)
