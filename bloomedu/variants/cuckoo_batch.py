"""The cuckoo filter's inserts: one key with its walk of evictions, and a batch in numpy.

One key (:func:`insert_one`): the first empty slot of bucket i1, else of i2, else
:func:`kick`: from i1 (or i2, by the key's top hash bit) evict the slot the key's hash picks
for that step, move the evicted fingerprint to its other bucket, and go on until a bucket has
room or :data:`~bloomedu.variants.cuckoo.MAX_KICKS` moves are made; then undo every move.
Each write is noted in a journal of (flat slot, old value), so a failed call is undone.

A batch (:func:`insert_batch`) ends with exactly the table a loop of :func:`insert_one`
would leave.  Without evictions, a key's slot depends only on how many earlier keys of the
batch went to its buckets: key j takes i1 if i1 had more empty slots than the earlier keys
that went to i1, else i2 likewise.  :func:`settle` finds every key's choice by iterating
that rule on all keys at once (each round in numpy: a sort, two searches) until no choice
changes; after any round, the keys before the first one that changed, and that one, are
already final (each depends only on the keys before it), so the rounds converge.  The keys
up to the first that needs an eviction are written at once; that key walks alone; the rest
start again.

Used by :mod:`bloomedu.variants.cuckoo`; tested in ``tests/test_cuckoo.py`` (a batch's table
equals the loop's, at every load, with duplicates and evictions).
"""

from __future__ import annotations

import numpy as np

from ..core.hashing import fmix64

__all__ = ["insert_one", "kick", "insert_batch", "settle", "undo", "earlier_counts"]

_GOLDEN = 0x9E3779B97F4A7C15  # steps of the walk's slot choices
_MASK64 = (1 << 64) - 1
_MAX_ROUNDS = 64
_FIRST_WINDOW, _MAX_WINDOW, _MIN_WINDOW = 1024, 1 << 15, 64


def insert_one(f, fingerprint: int, i1: int, i2: int, h1: int, journal: list) -> bool:
    """Store one fingerprint: an empty slot of i1, else of i2, else a walk (:func:`kick`)."""
    table = f.table
    for bucket in (i1, i2):
        empty = np.flatnonzero(table[bucket] == 0)
        if empty.size:
            slot = int(empty[0])
            journal.append((bucket * f.bucket_size + slot, 0))
            table[bucket, slot] = fingerprint
            return True
    return kick(f, fingerprint, i1, i2, h1, journal)


def kick(f, fingerprint: int, i1: int, i2: int, h1: int, journal: list) -> bool:
    """The walk of evictions for a key whose two buckets are full; undone if it fails."""
    from .cuckoo import MAX_KICKS

    flat, b = f.table.reshape(-1), f.bucket_size
    mark = len(journal)
    bucket = i2 if h1 >> 63 else i1
    for step in range(1, MAX_KICKS + 1):
        at = bucket * b + fmix64((h1 + step * _GOLDEN) & _MASK64) % b
        victim = int(flat[at])
        journal.append((at, victim))
        flat[at] = fingerprint
        fingerprint, bucket = victim, f._other(victim, bucket)
        empty = np.flatnonzero(f.table[bucket] == 0)
        if empty.size:
            at = bucket * b + int(empty[0])
            journal.append((at, 0))
            flat[at] = fingerprint
            return True
    undo(f, journal, mark)
    return False


def undo(f, journal: list, mark: int = 0) -> None:
    """Put back every slot the journal wrote after ``mark``, last write first."""
    flat = f.table.reshape(-1)
    while len(journal) > mark:
        at, old = journal.pop()
        flat[at] = old


def earlier_counts(target: np.ndarray, *queries: np.ndarray) -> list[np.ndarray]:
    """For each query array and each j: how many k < j have ``target[k] == query[j]``
    (a target of -1 is none).  One sort of the targets, then two searches per query.

    >>> earlier_counts(np.array([5, 5, -1, 5]), np.array([5, 5, 5, 3]))[0].tolist()
    [0, 1, 2, 0]
    """
    n = target.size
    index = np.arange(n, dtype=np.int64)
    chosen = target >= 0
    ordered = np.sort(target[chosen] * n + index[chosen])
    return [np.searchsorted(ordered, query * n + index) - np.searchsorted(ordered, query * n)
            for query in queries]


def settle(table: np.ndarray, i1: np.ndarray, i2: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """(keys final, choice, rank): each key's bucket as a loop would choose it (1: i1, 2: i2,
    0: both full, an eviction), and how many keys before it chose the same bucket.

    Exact for the first ``keys final`` keys (all, unless the rounds ran out).

    >>> table = np.zeros((2, 1), np.uint8)   # two buckets of one slot
    >>> settled, choice, rank = settle(table, np.array([0, 0, 1]), np.array([1, 1, 0]))
    >>> settled, choice.tolist(), rank.tolist()
    (3, [1, 2, 0], [0, 0, 1])
    """
    b = table.shape[1]
    free1 = b - np.count_nonzero(table[i1], axis=1)
    free2 = b - np.count_nonzero(table[i2], axis=1)
    choice = np.where(free1 > 0, 1, np.where(free2 > 0, 2, 0))
    settled = 0
    for _ in range(_MAX_ROUNDS):
        target = np.where(choice == 1, i1, np.where(choice == 2, i2, -1))
        before1, before2 = earlier_counts(target, i1, i2)
        new = np.where(free1 > before1, 1, np.where(free2 > before2, 2, 0))
        changed = np.flatnonzero(new != choice)
        choice = new
        if not changed.size:
            settled = i1.size
            break
        settled = int(changed[0]) + 1
    return settled, choice, np.where(choice == 1, before1, before2)


def _place(f, fingerprints, buckets, rank, journal: list) -> None:
    """Write each fingerprint into the (rank+1)-th empty slot of its bucket (all at once)."""
    rows = f.table[buckets]
    slot = np.argmax(np.cumsum(rows == 0, axis=1) == (rank + 1)[:, None], axis=1)
    at = buckets * f.bucket_size + slot
    journal.append((at, np.zeros(at.size, dtype=f.table.dtype)))
    f.table.reshape(-1)[at] = fingerprints


def insert_batch(f, h1: np.ndarray, h2: np.ndarray, journal: list) -> int | None:
    """Insert a batch of hashed keys as a loop of :func:`insert_one` would; the index of the
    first key that does not fit (the rest not tried), or None."""
    fingerprints, i1, i2 = f._batch(h1, h2)
    start, window = 0, _FIRST_WINDOW
    while start < h1.size:
        part = slice(start, start + window)
        settled, choice, rank = settle(f.table, i1[part], i2[part])
        evict = np.flatnonzero(choice[:settled] == 0)
        stop = int(evict[0]) if evict.size else settled
        go = slice(start, start + stop)
        buckets = np.where(choice[:stop] == 1, i1[go], i2[go])
        _place(f, fingerprints[go], buckets, rank[:stop], journal)
        start += stop
        if evict.size:
            key = start
            if not kick(f, int(fingerprints[key]), int(i1[key]), int(i2[key]), int(h1[key]),
                        journal):
                return key
            start += 1
            window = max(_MIN_WINDOW, 2 * stop)  # evictions are near: smaller windows
        else:
            window = min(_MAX_WINDOW, 2 * window)
    return None
