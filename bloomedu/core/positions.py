"""A key's k positions in a table of m cells: the one place every filter gets them from.

MurmurHash3 x64 128 of the key gives (h1, h2) (:func:`~bloomedu.core.hashing.hash128`, or
:func:`~bloomedu.core.batch_hashing.hashed_chunks` for a batch), the step h2 is made odd if the k
values h1 + i*h2 would repeat (:func:`~bloomedu.core.hashing.spread_step`: the empty key's
h2 is 0), and position i is ``fmix64((h1 + i*h2) mod 2**64) mod m``
(:func:`~bloomedu.core.hashing.bit_position`; double hashing, Kirsch and Mitzenmacher 2006).
:class:`~bloomedu.core.filter.BloomFilter` and every structure of :mod:`bloomedu.variants`
take (h1, h2) from :func:`key_hashes` (one key) or :func:`hashed_batches` (a batch) and
nothing else, so no structure can place a key differently from ``BloomFilter(m, k)``
(``tests/test_layout.py`` checks that no other module of theirs hashes a key).

What "k" is, for the rule that spreads h2, is the number of values i = 0..k-1 a
structure uses for one key: k for a plain, counting, stable or rotating filter (its
generations share one key's k positions); k for each sub-filter of a scalable filter
(:func:`step`, from the key's unspread h2, so sub-filter t places a key exactly where
``BloomFilter(m_t, k_t)`` does); k + l for an age-partitioned filter, whose slice j uses
value j, so its positions are ``BloomFilter(m, k + l).bit_indices``.

Taught in ``notebooks/06_inside_the_filter.ipynb`` (double hashing); tested in
``tests/test_variants.py`` (every structure's positions, per key and in bulk, equal
``BloomFilter.bit_indices``) and ``tests/test_hashing.py``.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from .batch_hashing import fmix64_array, hashed_chunks
from .hashing import _double_hash_indices as double_hash_indices
from .hashing import _spread_step as spread_step
from .hashing import hash128, spread_steps

__all__ = ["key_hashes", "hashed_batches", "joined", "step", "key_positions", "positions",
           "CHUNK_KEYS"]

CHUNK_KEYS = 1 << 15  # keys per numpy batch: bounds a bulk call's memory
_ONE_PASS = 1 << 16  # positions computed in one pass over a (k, n) array, kept in the cache


def key_hashes(key, num_hashes: int | None, *, spread: bool = True) -> tuple[int, int]:
    """(h1, h2) of one key for a structure using k = ``num_hashes`` values per key.

    ``num_hashes=None`` (or ``spread=False``) gives h2 as hashed, for a structure whose
    tables use different k (spread it per table with :func:`step`).

    >>> key_hashes("", 3), key_hashes("", None)
    ((0, 1), (0, 0))
    """
    h1, h2 = hash128(key)
    return (h1, h2) if num_hashes is None or not spread else (h1, spread_step(h2, num_hashes))


def hashed_batches(keys, num_hashes: int | None, chunk_keys: int = CHUNK_KEYS, *,
                   spread: bool = True) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(h1, h2) uint64 arrays of :func:`key_hashes`, ``chunk_keys`` keys at a time.

    Any key kind bloomedu hashes (see :func:`~bloomedu.core.batch_hashing.hashed_chunks`).

    >>> [(h1.tolist(), h2.tolist()) for h1, h2 in hashed_batches([""], 3)]
    [([0], [1])]
    >>> [h1.size for h1, h2 in hashed_batches(np.arange(5, dtype=np.uint64), 3, chunk_keys=2)]
    [2, 2, 1]
    """
    for h1, h2 in hashed_chunks(keys, chunk_keys):
        if num_hashes is not None and spread:
            spread_steps(h2, num_hashes)
        yield h1, h2


def joined(batches) -> tuple[np.ndarray, np.ndarray]:
    """Every (h1, h2) batch of :func:`hashed_batches` as one pair of arrays (a segment's keys).

    >>> h1, h2 = joined(hashed_batches(np.arange(3, dtype=np.uint64), 3, chunk_keys=2))
    >>> h1.tolist() == [key_hashes(i, 3)[0] for i in range(3)]
    True
    """
    batches = list(batches)
    if not batches:
        return np.zeros(0, np.uint64), np.zeros(0, np.uint64)
    return np.concatenate([h1 for h1, _ in batches]), np.concatenate([h2 for _, h2 in batches])


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


def key_positions(key, num_hashes: int, num_cells: int, *, spread: bool = True) -> list[int]:
    """The k positions of one key among m cells: ``BloomFilter(m, k).bit_indices(key)``.

    >>> key_positions("123", 3, 1024), key_positions("", 3, 1024)
    ([524, 190, 435], [0, 812, 999])
    """
    h1, h2 = key_hashes(key, num_hashes, spread=spread)
    return double_hash_indices(h1, h2, num_hashes, num_cells)


def positions(h1: np.ndarray, h2: np.ndarray, num_hashes: int, num_cells: int,
              first: int = 0) -> np.ndarray:
    """A (k, n) int64 array: row i holds position ``first + i`` of every key (h2 spread already).

    >>> h1, h2 = key_hashes("123", 3)
    >>> positions(np.array([h1], np.uint64), np.array([h2], np.uint64), 3, 1024).ravel().tolist()
    [524, 190, 435]
    """
    m = np.uint64(num_cells)
    if num_hashes * h1.size <= _ONE_PASS:  # a few keys, many positions (an age-partitioned
        # filter's k + l slices): one pass over the (k, n) array instead of k small ones
        with np.errstate(over="ignore"):  # wraps modulo 2**64, as the running sum below
            running = h1 + h2 * np.arange(first, first + num_hashes, dtype=np.uint64)[:, None]
        out = np.empty_like(running)
        fmix64_array(out, np.empty_like(running), source=running)
        out %= m
        return out.view(np.int64)
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
