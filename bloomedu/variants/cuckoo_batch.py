"""The cuckoo filter's inserts: one key with its walk of evictions, and a batch in numpy.

One key (:func:`insert_one`): the first empty slot of bucket i1, else of i2, else
:func:`kick`: from i1 (or i2, by the key's top hash bit) evict the slot the key's hash picks
for that step, move the evicted fingerprint to its other bucket, and go on until a bucket has
room or :data:`MAX_KICKS` moves are made; then undo every move.
Each write is noted in a journal of (flat slot, old value), so a failed call is undone.

A batch (:func:`insert_batch`) ends with exactly the table a loop of :func:`insert_one`
would leave.  Without evictions, a key's slot depends only on how many earlier keys of the
batch went to its buckets: key j takes i1 if i1 had more empty slots than the earlier keys
that went to i1, else i2 likewise.  :func:`settle` finds every key's choice by iterating
that rule on all keys at once (each round in numpy: a sort, two searches) until no choice
changes; after any round, the keys before the first one that changed, and that one, are
already final (each depends only on the keys before it), so the rounds converge.  A key
that needs an eviction walks alone, in its turn; the walk passes through full buckets only
and adds a fingerprint to one bucket, its last, so the keys after it keep their slots
unless one of their buckets is that one (there the next window starts).

Used by :mod:`bloomedu.variants.cuckoo`; tested in ``tests/test_cuckoo.py`` (a batch's table
equals the loop's, at every load, with duplicates and evictions).
"""

from __future__ import annotations

import numpy as np

from ..kernels.murmur import fmix64_array
from ..core.hashing import fmix64

__all__ = ["MAX_KICKS", "insert_one", "kick", "insert_batch", "settle", "undo", "earlier_counts"]

MAX_KICKS = 500  # the paper's limit on moves for one insert

_GOLDEN = 0x9E3779B97F4A7C15  # steps of the walk's slot choices
_MASK64 = (1 << 64) - 1
_MAX_ROUNDS = 64
_FIRST_WINDOW, _MAX_WINDOW, _MIN_WINDOW = 1024, 1 << 15, 64


def other_bucket(fingerprint: int, bucket: int, num_buckets: int) -> int:
    """The other bucket of a fingerprint in ``bucket``: (fmix64(fp) - bucket) mod B, so
    each of a key's two buckets leads to the other.

    >>> other_bucket(7, other_bucket(7, 3, 10), 10)
    3
    """
    return (fmix64(fingerprint) % num_buckets - bucket) % num_buckets


def buckets_of(h1: np.ndarray, h2: np.ndarray, num_buckets: int,
               fingerprint_bits: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(fingerprints, i1, i2) of a batch of (h1, h2) as arrays: a fingerprint of
    ``fingerprint_bits`` bits (never 0) from h2, i1 = h1 mod B, i2 by :func:`other_bucket`.

    >>> fp, i1, i2 = buckets_of(np.array([5], np.uint64), np.array([9], np.uint64), 10, 8)
    >>> int(fp[0]), int(i1[0]), int(i2[0]) == other_bucket(10, 5, 10)
    (10, 5, True)
    """
    nb = np.uint64(num_buckets)
    fingerprints = h2 % np.uint64((1 << fingerprint_bits) - 1) + np.uint64(1)
    mixed = np.empty_like(fingerprints)
    fmix64_array(mixed, np.empty_like(fingerprints), source=fingerprints)
    i1 = h1 % nb
    i2 = (mixed % nb + nb - i1) % nb
    return fingerprints, i1.astype(np.int64), i2.astype(np.int64)


def insert_one(f, fingerprint: int, i1: int, i2: int, h1: int, journal: list) -> bool:
    """Store one fingerprint: an empty slot of i1, else of i2, else a walk (:func:`kick`)."""
    flat, b = f.table.reshape(-1), f.bucket_size
    if any(_put_in_empty(flat, bucket, b, fingerprint, journal) for bucket in (i1, i2)):
        return True
    return kick(f, fingerprint, i1, i2, h1, journal) >= 0


def _put_in_empty(flat: np.ndarray, bucket: int, b: int, fingerprint: int, journal: list) -> bool:
    """Write the fingerprint into the bucket's first empty slot, if it has one."""
    row = flat[bucket * b:(bucket + 1) * b].tolist()
    if 0 not in row:
        return False
    at = bucket * b + row.index(0)
    journal.append((at, 0))
    flat[at] = fingerprint
    return True


def kick(f, fingerprint: int, i1: int, i2: int, h1: int, journal: list) -> int:
    """The walk of evictions for a key whose two buckets are full: the bucket where it ended
    (the only bucket that gained a fingerprint), or -1 when it failed and was undone."""
    flat, b = f.table.reshape(-1), f.bucket_size
    mark = len(journal)
    bucket = i2 if h1 >> 63 else i1
    for step in range(1, MAX_KICKS + 1):
        at = bucket * b + fmix64((h1 + step * _GOLDEN) & _MASK64) % b
        victim = int(flat[at])
        journal.append((at, victim))
        flat[at] = fingerprint
        fingerprint, bucket = victim, other_bucket(victim, bucket, f.num_buckets)
        if _put_in_empty(flat, bucket, b, fingerprint, journal):
            return bucket
    undo(f, journal, mark)
    return -1


def undo(f, journal: list, mark: int = 0) -> None:
    """Put back every slot the journal wrote after ``mark``, last write first."""
    flat = f.table.reshape(-1)
    while len(journal) > mark:
        at, old = journal.pop()
        flat[at] = old


def earlier_counts(target: np.ndarray, first: np.ndarray,
                   second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each j: how many k < j have ``target[k] == first[j]``, and ``== second[j]``
    (a target of -1 is none).

    One sort of every target and query as ``bucket * 4n + 4 * index + kind`` (kind 0 and 1:
    the two queries, 3: a target), so that within a bucket the targets before index j come
    before j's queries and its own target after them; a running count of targets then
    answers every query.

    >>> [c.tolist() for c in earlier_counts(np.array([5, 5, -1, 5]), np.array([5, 5, 5, 3]),
    ...                                     np.array([3, 3, 3, 5]))]
    [[0, 1, 2, 0], [0, 0, 0, 2]]
    """
    n = target.size
    scale, index = 4 * n, np.arange(n, dtype=np.int64)
    chosen = target >= 0
    events = np.sort(np.concatenate([first * scale + 4 * index, second * scale + 4 * index + 1,
                                     target[chosen] * scale + 4 * index[chosen] + 3]))
    kind = events & 3
    is_target = kind == 3
    before = np.cumsum(is_target) - is_target  # targets before each event
    bucket = events // scale
    starts = np.flatnonzero(np.concatenate([[True], bucket[1:] != bucket[:-1]]))
    base = np.repeat(before[starts], np.diff(np.append(starts, events.size)))
    counts = before - base  # targets of the same bucket before each event
    where = (events % scale) // 4
    answers = []
    for query in (0, 1):
        mine = kind == query
        out = np.empty(n, dtype=np.int64)
        out[where[mine]] = counts[mine]
        answers.append(out)
    return answers[0], answers[1]


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


def _slots(table: np.ndarray, buckets: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """The flat slot of the (rank+1)-th empty slot of each bucket, in the table as it is now."""
    rows = table[buckets]
    slot = np.argmax(np.cumsum(rows == 0, axis=1) == (rank + 1)[:, None], axis=1)
    return buckets * table.shape[1] + slot


def insert_batch(f, h1: np.ndarray, h2: np.ndarray, journal: list) -> int | None:
    """Insert a batch of hashed keys as a loop of :func:`insert_one` would; the index of the
    first key that does not fit (the rest not tried), or None.

    A window of keys is settled at once and each key's slot found in the table as the window
    starts.  A key that needs an eviction walks alone, in its turn; its walk goes through full
    buckets only and gains a fingerprint in one bucket, its last: the keys after it keep their
    slots unless one of their buckets is that one, where the next window starts.
    """
    fingerprints, i1, i2 = buckets_of(h1, h2, f.num_buckets, f.fingerprint_bits)
    flat = f.table.reshape(-1)
    start, window = 0, _FIRST_WINDOW
    while start < h1.size:
        end = min(h1.size, start + window)
        settled, choice, rank = settle(f.table, i1[start:end], i2[start:end])
        choice, rank = choice[:settled], rank[:settled]
        ones, twos = i1[start:start + settled], i2[start:start + settled]
        at = _slots(f.table, np.where(choice == 2, twos, ones), np.where(choice == 0, 0, rank))
        evictions = np.flatnonzero(choice == 0).tolist()
        done, limit = 0, settled
        while done < limit:
            upto = min(evictions[0], limit) if evictions else limit
            if upto > done:  # these keys go straight into their slots
                journal.append((at[done:upto], np.zeros(upto - done, dtype=f.table.dtype)))
                flat[at[done:upto]] = fingerprints[start + done:start + upto]
            done = upto
            if done == limit:
                break
            key = start + evictions.pop(0)
            last = kick(f, int(fingerprints[key]), int(i1[key]), int(i2[key]), int(h1[key]), journal)
            if last < 0:
                return key
            done += 1
            touched = np.flatnonzero((ones[done:limit] == last) | (twos[done:limit] == last))
            if touched.size:
                limit = done + int(touched[0])
        whole = limit == end - start  # the window went through: try a larger one
        start += limit
        window = min(_MAX_WINDOW, 2 * window) if whole else max(_MIN_WINDOW, 2 * limit)
    return None
