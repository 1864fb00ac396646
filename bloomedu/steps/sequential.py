"""Deduplicate a batch exactly as one message at a time would, through the bulk paths.

The one-at-a-time loop drops a message if the structure, updated by every earlier
message (including the earlier ones of its own batch), reports it present, and otherwise
keeps and adds it.  :func:`keep_in_order` gives exactly that answer for a batch of keys
with a few numpy calls:

1. The batch is cut at the next rotation, shift or new sub-filter (a segment holds at most
   as many messages as inserts remain before it), so inside a segment the structure only
   changes where its inserts write.
2. ``contains_many`` answers every message against the state before the segment.
3. A message not found can be found at its turn only if earlier messages of the segment
   may write every cell it still misses (shared cells: a false positive inside the batch;
   for the age-partitioned filter, a run of k slices), and, for the stable filter, a
   message found may be lost if one of its cells is low enough for the decrements of the
   inserts before it to bring it to 0.  Those rare messages are redone one by one, in
   order, with the kept messages before each added first.  For every structure but the stable filter an insert only sets
   bits or raises counters, so a message found before the segment is found at its turn,
   and a key met earlier in the segment is dropped (its first copy was either kept and
   added, or found).

Used by :func:`bloomedu.steps.expiry.deduplicate_windowed`; taught in
``notebooks/10_forgetting_old_clicks.ipynb``; tested in ``tests/test_expiry.py`` (equal
kept lists to the one-at-a-time loop, for every structure, by hypothesis).
"""

from __future__ import annotations

import numpy as np

from ..core.filter import BloomFilter
from ..core.positions import hashed_batches, positions, step
from ..variants import (AgePartitionedBloomFilter, CountingBloomFilter, RotatingBloomFilter,
                        ScalableBloomFilter, StableBloomFilter)

__all__ = ["keep_in_order", "keep_one_at_a_time"]

_MOST = 4096  # messages a segment: the stable filter's cell * (n + 1) tags stay in int64


def keep_one_at_a_time(stage, keys) -> np.ndarray:
    """The reference loop: keep a key iff ``stage`` does not report it, then add it.

    >>> from bloomedu import CountingBloomFilter
    >>> keep_one_at_a_time(CountingBloomFilter(100, 3), ["a", "b", "a"]).tolist()
    [True, True, False]
    """
    keep = np.zeros(len(keys), dtype=bool)
    for i, key in enumerate(keys.tolist() if isinstance(keys, np.ndarray) else keys):
        if key not in stage:
            keep[i] = True
            stage.add(key)
    return keep


def keep_in_order(stage, keys: np.ndarray) -> np.ndarray:
    """Which of ``keys`` (a numpy array) the one-at-a-time loop keeps, adding them to ``stage``.

    >>> from bloomedu import RotatingBloomFilter
    >>> keys = np.array([1, 2, 1, 3, 4, 5, 2], dtype=np.uint64)
    >>> a, b = RotatingBloomFilter(2, 0.01, 2), RotatingBloomFilter(2, 0.01, 2)
    >>> keep_in_order(a, keys).tolist() == keep_one_at_a_time(b, keys).tolist(), a == b
    (True, True)
    """
    keep = np.zeros(keys.size, dtype=bool)
    start = 0
    while start < keys.size:
        room = _room(stage)
        if room == 0:  # the next insert rotates, shifts or grows first: this message alone
            keep[start:start + 1] = keep_one_at_a_time(stage, keys[start:start + 1])
            start += 1
            continue
        end = min(keys.size, start + (_MOST if room is None else room))
        keep[start:end] = _segment(stage, keys[start:end])
        start = end
    return keep


def _room(stage) -> int | None:
    """Inserts before the structure next rotates, shifts or adds a sub-filter (None: never)."""
    if isinstance(stage, RotatingBloomFilter):
        return max(0, stage.capacity - stage.tables[-1].count)
    if isinstance(stage, AgePartitionedBloomFilter):
        return stage.generation_size - stage.count
    if isinstance(stage, ScalableBloomFilter):
        return max(0, stage.capacity(len(stage.tables) - 1) - stage.tables[-1].count)
    return None


def _segment(stage, keys: np.ndarray) -> np.ndarray:
    """:func:`keep_in_order` for keys among which the structure neither rotates nor shifts."""
    if isinstance(stage, AgePartitionedBloomFilter):  # its positions once: k + l slices
        hits, cells = _apbf_hits(stage, keys)
        seen, now_set = _runs(hits, stage.num_hashes), hits[:stage.num_hashes].T
    else:
        seen = stage.contains_many(keys)
        cells, now_set = _cells(stage, keys)  # (n, w): the cells a message's insert writes
    if isinstance(stage, StableBloomFilter):  # any message may be kept, and write
        covered = _covered(cells, np.ones(keys.size, dtype=bool))
        could_find = (now_set | covered).all(axis=1)  # every zero cell set by an earlier one
        risky = np.where(seen, _fragile(stage, cells, now_set), could_find)
        keep = ~seen & ~risky
    else:  # inserts only add: found stays found, and a repeat of the segment is dropped
        first = np.zeros(keys.size, dtype=bool)
        first[np.unique(keys, return_index=True)[1]] = True
        keep = ~seen & first
        covered = _covered(cells, keep)
        if isinstance(stage, AgePartitionedBloomFilter):
            hits[:stage.num_hashes] |= covered.T  # the bits earlier messages may set
            risky = _runs(hits, stage.num_hashes) & keep
        else:  # found at its turn only if every clear cell is written by an earlier message
            risky = (now_set | covered).all(axis=1) & keep
        keep &= ~risky
    done = 0
    for i in np.flatnonzero(risky).tolist():  # in order, after the kept messages before it
        _add(stage, keys[done:i][keep[done:i]])
        keep[i] = keep_one_at_a_time(stage, keys[i:i + 1])[0]
        done = i + 1
    _add(stage, keys[done:][keep[done:]])
    return keep


def _add(stage, keys: np.ndarray) -> None:
    """``add_many``, or ``add`` one by one for a few keys (cheaper than a bulk call)."""
    if keys.size < 8:
        for key in keys.tolist():
            stage.add(key)
    else:
        stage.add_many(keys)


def _cells(stage, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n, w) int64 ids of the cells each key's insert writes, which are also the only cells
    of its query that can change inside a segment (the newest table), and whether each is
    set (non-zero) now."""
    if isinstance(stage, ScalableBloomFilter):
        table = stage.tables[-1]
        h1, h2 = _hashes(keys, None)
        cells = positions(h1, step(h2, table.num_hashes), table.num_hashes, table.num_bits)
        return cells.T, table.bits.get_unchecked(cells).T
    if isinstance(stage, (CountingBloomFilter, StableBloomFilter)):
        size = stage.num_cells
    elif isinstance(stage, (RotatingBloomFilter, BloomFilter)):
        size = stage.num_bits
    else:
        raise TypeError("stage must be a BloomFilter or a structure of bloomedu.variants, "
                        f"not {type(stage).__name__}")
    h1, h2 = _hashes(keys, stage.num_hashes)
    cells = positions(h1, h2, stage.num_hashes, size)
    if isinstance(stage, CountingBloomFilter):
        now_set = stage.counters.take(cells) > 0
    elif isinstance(stage, StableBloomFilter):
        now_set = stage.cells.take(cells) > 0
    else:
        now_set = (stage.tables[-1].bits if isinstance(stage, RotatingBloomFilter)
                   else stage.bits).get_unchecked(cells)
    return cells.T, now_set.T


def _hashes(keys, num_hashes):
    batches = list(hashed_batches(keys, num_hashes, max(1, keys.size)))
    return batches[0] if batches else (np.zeros(0, np.uint64), np.zeros(0, np.uint64))


def _covered(cells: np.ndarray, writers: np.ndarray) -> np.ndarray:
    """(n, w): whether each cell of message j is written by a writer i < j."""
    n, w = cells.shape
    written = cells[writers].ravel()
    by = np.repeat(np.flatnonzero(writers), w)
    if not written.size:
        return np.zeros((n, w), dtype=bool)
    order = np.lexsort((by, written))  # by cell, then by message: the first writer first
    written, by = written[order], by[order]
    first = np.concatenate(([True], written[1:] != written[:-1]))
    written, by = written[first], by[first]
    at = np.searchsorted(written, cells.ravel()).clip(max=written.size - 1)
    earlier = (written[at] == cells.ravel()) & (by[at] < np.repeat(np.arange(n), w))
    return earlier.reshape(n, w)


def _apbf_hits(stage: AgePartitionedBloomFilter, keys: np.ndarray):
    """(k + l, n) whether each slice, newest first, has each key's bit set; and the (n, k)
    ids of the bits an insert writes in the k newest slices (slice j, bit b: j m + b)."""
    h1, h2 = _hashes(keys, stage.num_slices)
    every = positions(h1, h2, stage.num_slices, stage.num_bits)
    order = stage.order()
    hits = np.array([stage.slices[j].get_unchecked(every[j]) for j in order]).reshape(
        len(order), keys.size)
    newest = np.array(order[:stage.num_hashes], dtype=np.int64)
    return hits, (every[newest] + newest[:, None] * stage.num_bits).T


def _runs(hits: np.ndarray, k: int) -> np.ndarray:
    """For each column, whether k consecutive rows are all True (the filter's query)."""
    sums = np.zeros((hits.shape[0] + 1, hits.shape[1]), dtype=np.int32)
    np.cumsum(hits, axis=0, out=sums[1:])
    return (sums[k:] - sums[:-k] == k).any(axis=0)  # rows a..a+k-1 all set, for some a


def _fragile(stage: StableBloomFilter, cells: np.ndarray, now_set: np.ndarray) -> np.ndarray:
    """For each message j, whether one of its cells holds 1..d, where d is how often the
    decrements of the (at most j) inserts before it could hit it: it may reach 0."""
    n, w = cells.shape
    drops = stage._decrement_array(stage.inserted, n)  # row t: insert t of the segment
    span = n + 1
    tagged = np.sort((drops * span + np.arange(n)[:, None]).ravel())  # cell, then row
    base = cells.ravel() * span
    before = np.searchsorted(tagged, base + np.repeat(np.arange(n), w)) - \
        np.searchsorted(tagged, base)  # decrements of the cell in rows 0..j-1
    values = stage.cells.take(cells).astype(np.int64).ravel()
    return ((values > 0) & (values <= before)).reshape(n, w).any(axis=1)
