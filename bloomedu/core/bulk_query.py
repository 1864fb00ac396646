"""Many keys' positions at once, and the bulk "might it be there?" of a Bloom filter.

:class:`~bloomedu.core.filter.BloomFilter` hashes a batch into (h1, h2) arrays, a chunk at a
time (:func:`~bloomedu.core.positions.hashed_batches`); this module turns them into positions,
round by round: round i computes position i of every key,
``fmix64((h1 + i*h2) mod 2**64) mod m``, exactly what
:func:`~bloomedu.core.hashing.bit_position` computes for one key.

The query (:func:`contains_many`) computes position i only for the keys whose first i bits
were all set: most absent keys fail at their first bit or two, so a query of absent keys
costs little more than two rounds.  The keys left after the first two rounds of each chunk
are pooled over chunks and finished together, so the later rounds still run on full arrays.

Used by ``BloomFilter.add_many``/``contains_many`` and :mod:`bloomedu.core.large`; taught in
``notebooks/08_sizing_a_filter.ipynb`` (a million keys on the bulk path); tested in ``tests/test_bulk.py``
and ``tests/test_bulk_fast_paths.py``.
"""

from __future__ import annotations

from typing import Iterable, Iterator

import numpy as np

from .batch_hashing import fmix64_array

__all__ = ["next_positions", "chunk_positions", "contains_many"]

FIRST_ROUNDS = 2  # rounds done chunk by chunk, before the survivors are pooled


def next_positions(running: np.ndarray, h2: np.ndarray, i: int, m64: np.uint64,
                   out: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """Position i of every key, into ``out``; ``running`` goes from h1 + (i-1)*h2 to h1 + i*h2.

    ``x % m`` is computed as ``x - (x // m) * m`` (numpy's ``//`` by a scalar is several
    times faster than its ``%``).

    >>> from bloomedu.core.hashing import bit_position
    >>> running, h2 = np.array([5], dtype=np.uint64), np.array([3], dtype=np.uint64)
    >>> out, scratch = np.empty_like(running), np.empty_like(running)
    >>> [int(next_positions(running, h2, i, np.uint64(1000), out, scratch)[0]) for i in range(3)]
    [581, 783, 540]
    >>> [bit_position(5, 3, i, 1000) for i in range(3)]
    [581, 783, 540]
    """
    if i > 0:
        running += h2  # wraps modulo 2**64, as in bit_position
    fmix64_array(out, scratch, source=running)
    np.floor_divide(out, m64, out=scratch)
    scratch *= m64
    out -= scratch
    return out.view(np.int64)  # below m < 2**63: a valid index


def chunk_positions(hashed: Iterable[tuple[np.ndarray, np.ndarray]], num_hashes: int,
                    m64: np.uint64) -> Iterator[np.ndarray]:
    """Every key's k positions: one array per chunk of (h1, h2) and per i (reused buffers:
    copy an array to keep it past the next one)."""
    for running, h2 in hashed:
        out, scratch = np.empty_like(running), np.empty_like(running)
        for i in range(num_hashes):
            yield next_positions(running, h2, i, m64, out, scratch)


def contains_many(bits, hashed: Iterable[tuple[np.ndarray, np.ndarray]], num_hashes: int,
                  m64: np.uint64, pool_size: int) -> np.ndarray:
    """For each key of ``hashed``, whether all its k bits of ``bits`` (a BitArray) are set.

    Survivors of the first rounds are pooled until ``pool_size`` of them are waiting.
    """
    query = _Query(bits, num_hashes, m64)
    answers, pool, pool_keys, pooled = [], [], 0, 0
    first = range(min(FIRST_ROUNDS, num_hashes))
    for running, h2 in hashed:
        pool.append(query.survivors(np.arange(pool_keys, pool_keys + running.size),
                                    running, h2, first))  # keys numbered within the pool
        pool_keys, pooled = pool_keys + running.size, pooled + pool[-1][0].size
        if pooled >= pool_size:  # the later rounds, on a chunk's worth of survivors
            answers.append(query.finish(pool, pool_keys, first.stop))
            pool, pool_keys, pooled = [], 0, 0
    if pool_keys:
        answers.append(query.finish(pool, pool_keys, first.stop))
    return np.concatenate(answers) if answers else np.zeros(0, dtype=bool)


class _Query:
    """The rounds of one :func:`contains_many` call on one filter's bits."""

    def __init__(self, bits, num_hashes: int, m64: np.uint64):
        self.bits, self.num_hashes, self.m64 = bits, num_hashes, m64

    def finish(self, pool: list, pool_keys: int, start: int) -> np.ndarray:
        """The answers of a pool's keys: the rounds from ``start`` on for its survivors."""
        alive = self.survivors(*(np.concatenate(parts) for parts in zip(*pool)),
                               range(start, self.num_hashes))[0]
        answer = np.zeros(pool_keys, dtype=bool)
        answer[alive] = True  # the pool's keys that passed every round
        return answer

    def survivors(self, alive: np.ndarray, running: np.ndarray, h2: np.ndarray, rounds: range):
        """The keys (numbers ``alive``) whose positions in ``rounds`` are all set, with their
        ``running`` (h1 + (i-1)*h2 before round i) and ``h2``, ready for the next round."""
        out, scratch = np.empty_like(running), np.empty_like(running)
        for i in rounds:
            positions = next_positions(running, h2, i, self.m64, out, scratch)
            survivors = np.flatnonzero(self.bits.get_unchecked(positions))  # take: faster
            alive = alive.take(survivors)                                    # than alive[found]
            running, h2 = running.take(survivors), h2.take(survivors)
            if i + 1 == self.num_hashes or not alive.size:
                break
            out, scratch = out[:alive.size], scratch[:alive.size]
        return alive, running, h2
