"""The general filter's bulk insert when its bits are far larger than the cache, and its
bulk "add and say which keys were new" (the dedup of article 1, a batch at a time).

:meth:`BloomFilter.add_many <bloomedu.core.filter.BloomFilter.add_many>` on a filter
above 40 Mi bits comes here.  Every key is hashed first (a bad key raises before any
bit is set), then jobs of about four million positions are computed and sorted on
worker threads (:mod:`bloomedu.core.pipeline`) while the calling thread writes the
previous job's bits in order (:func:`bloomedu.core.scatter.set_sorted`).

:func:`add_new` gives, for every key, whether it was new: whether some bit of its
own was still clear when its turn came, exactly as a loop of ``in`` then ``add``
would, earlier keys of the same batch included.  Each job sorts (position, key)
pairs, so for every position the first key of the batch to set it comes first; a
key is new iff it is first at a position whose bit was clear before the batch.

Tested in ``tests/test_large.py``; ``make bench`` (W4) and ``make bench-day`` time it.
"""

from __future__ import annotations

import numpy as np

from .bulk_query import next_positions
from .pipeline import ordered_map
from .scatter import BATCH_POSITIONS, PIECE_POSITIONS, bit_masks, set_bits, set_sorted

__all__ = ["insert", "add_new"]

CHUNK_KEYS = 1 << 15  # keys hashed per numpy call
_KEY_BITS = 20  # add_new: a job's keys are numbered in 20 bits, below its positions


def _jobs(f, keys, keys_per_job: int) -> list:
    """The keys cut into jobs of about ``keys_per_job`` keys, each a list of hashed chunks
    or (for an integer array) a slice still to hash.  Other keys are all hashed here,
    first: a bad key raises before any bit is set."""
    chunks_per_job = max(1, keys_per_job // CHUNK_KEYS)
    if isinstance(keys, np.ndarray) and keys.dtype.kind in "iu":
        flat = keys.ravel()
        step = chunks_per_job * CHUNK_KEYS
        return [flat[start:start + step] for start in range(0, flat.size, step)]
    hashed = list(f._hashed_chunks(keys))
    return [hashed[start:start + chunks_per_job] for start in range(0, len(hashed), chunks_per_job)]


def _hashed(f, job) -> list:
    """A job's (h1, h2) chunks, each step spread as ``f`` spreads it (``f._hashed_chunks``)."""
    return list(f._hashed_chunks(job)) if isinstance(job, np.ndarray) else job


def _positions(f, hashed: list, dtype) -> np.ndarray:
    """Every position of every key in ``hashed``: key-major within a chunk, i-major inside."""
    size = sum(running.size for running, _ in hashed)
    positions = np.empty(size * f.num_hashes, dtype=dtype)
    filled = 0
    for running, h2 in hashed:
        out, scratch = np.empty_like(running), np.empty_like(running)
        for i in range(f.num_hashes):
            positions[filled:filled + running.size] = next_positions(running, h2, i, f._m64,
                                                                     out, scratch)
            filled += running.size
    return positions


def insert(f, keys) -> None:
    """Set the bits of every key (a numpy integer array or an iterable of keys).

    >>> from bloomedu import BloomFilter
    >>> f = BloomFilter(1 << 12, 3)
    >>> insert(f, ["a", "b"]); "a" in f and "b" in f
    True
    """
    dtype = np.uint32 if f.bits.data.size * 8 <= 1 << 32 else np.uint64

    def sorted_positions(job) -> np.ndarray:
        positions = _positions(f, _hashed(f, job), dtype)
        positions.sort()
        return positions

    for positions in ordered_map(sorted_positions, _jobs(f, keys, BATCH_POSITIONS // f.num_hashes)):
        with f._lock:  # the writes only: hashing and sorting run outside it
            set_sorted(f.bits.data, positions)


def add_new(f, keys) -> np.ndarray:
    """Add every key; True for each key that was new (some of its bits still clear at its turn).

    >>> from bloomedu import BloomFilter
    >>> add_new(BloomFilter(1 << 12, 3), ["a", "b", "a"]).tolist()
    [True, True, False]
    """
    key_bits = _KEY_BITS  # (position << 20 | key) in a uint64: m below 2**44, 2 TiB of bits
    keys_per_job = min(BATCH_POSITIONS // f.num_hashes, 1 << key_bits)

    def sorted_pairs(job) -> tuple[np.ndarray, int]:
        hashed = _hashed(f, job)
        pairs = _positions(f, hashed, np.uint64)
        num_keys = pairs.size // f.num_hashes
        pairs <<= np.uint64(key_bits)
        key_index, start = np.arange(num_keys, dtype=np.uint64), 0
        for running, _ in hashed:  # each chunk is k runs of its keys, i-major
            block = pairs[start * f.num_hashes:(start + running.size) * f.num_hashes]
            block.reshape(f.num_hashes, running.size)[...] |= key_index[start:start + running.size]
            start += running.size
        pairs.sort()
        return pairs, num_keys

    answers = []
    for pairs, num_keys in ordered_map(sorted_pairs, _jobs(f, keys, keys_per_job)):
        with f._lock:  # a job's reads and writes together: its answers are a sequential loop's
            answers.append(_apply_new(f.bits.data, pairs, num_keys, key_bits))
    return np.concatenate(answers) if answers else np.zeros(0, dtype=bool)


def _apply_new(data: np.ndarray, pairs: np.ndarray, num_keys: int, key_bits: int) -> np.ndarray:
    """Set the bits of one job's sorted (position << key_bits | key) pairs; which keys were new."""
    new = np.zeros(num_keys, dtype=bool)
    shift, low = np.uint64(key_bits), np.uint64((1 << key_bits) - 1)
    previous = None  # the position before the piece, for the first of its runs
    for start in range(0, pairs.size, PIECE_POSITIONS):
        piece = pairs[start:start + PIECE_POSITIONS]
        positions = piece >> shift
        first = np.empty(positions.size, dtype=bool)  # the batch's first key at this position
        np.not_equal(positions[1:], positions[:-1], out=first[1:])
        first[0] = previous is None or positions[0] != previous
        previous = positions[-1]
        byte_index, masks = (positions >> np.uint64(3)).astype(np.intp), bit_masks(positions)
        was_clear = (data.take(byte_index) & masks) == 0
        credited = np.flatnonzero(was_clear & first)
        new[(piece.take(credited) & low).astype(np.intp)] = True
        set_bits(data, byte_index, masks)
    return new
