"""Deduplicate a batch exactly as one message at a time would, through the bulk paths.

The one-at-a-time loop drops a message if the structure, updated by every earlier
message (including the earlier ones of its own batch), reports it present, and otherwise
keeps and adds it.  :func:`keep_in_order` gives exactly that answer for a batch of keys
with a few numpy calls:

1. The batch is cut at the next rotation, shift or new sub-filter (a segment holds at most
   as many messages as inserts remain before it), so inside a segment the structure only
   changes where its inserts write.
2. ``contains_many`` answers every message against the state before the segment.
3. A message's answer can differ from that only if an earlier message of the segment may
   write one of the cells its query reads (a shared cell), or, for the stable filter, if
   one of its cells is low enough for the segment's decrements to bring it to 0.  Those
   rare messages are redone one by one, in order, with the kept messages before each
   added in bulk first.  For every structure but the stable filter an insert only sets
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
        end = keys.size if room is None else min(keys.size, start + room)
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
    seen = stage.contains_many(keys)
    cells = _written_cells(stage, keys)  # (n, w): what each message's insert would write
    if isinstance(stage, StableBloomFilter):
        risky = _reads_an_earlier_write(cells, np.ones(keys.size, dtype=bool)) | \
            _fragile(stage, cells, keys.size)
        keep = ~seen & ~risky
    else:  # inserts only add: found stays found, and a repeat of the segment is dropped
        first = np.zeros(keys.size, dtype=bool)
        first[np.unique(keys, return_index=True)[1]] = True
        keep = ~seen & first
        risky = _reads_an_earlier_write(cells, keep) & keep
        keep &= ~risky
    done = 0
    for i in np.flatnonzero(risky).tolist():  # in order, after the kept messages before it
        stage.add_many(keys[done:i][keep[done:i]])
        keep[i] = keep_one_at_a_time(stage, keys[i:i + 1])[0]
        done = i + 1
    stage.add_many(keys[done:][keep[done:]])
    return keep


def _written_cells(stage, keys: np.ndarray) -> np.ndarray:
    """(n, w) int64 ids of the cells each key's insert writes, which are also the only cells
    of its query that can change inside a segment (the newest table, the k newest slices)."""
    if isinstance(stage, ScalableBloomFilter):
        table = stage.tables[-1]
        h1, h2 = _hashes(keys, None)
        return positions(h1, step(h2, table.num_hashes), table.num_hashes, table.num_bits).T
    if isinstance(stage, AgePartitionedBloomFilter):
        h1, h2 = _hashes(keys, stage.num_slices)
        newest = np.array(stage.order()[:stage.num_hashes], dtype=np.int64)
        every = positions(h1, h2, stage.num_slices, stage.num_bits)
        return (every[newest] + newest[:, None] * stage.num_bits).T  # slice j, bit b: j m + b
    if isinstance(stage, (CountingBloomFilter, StableBloomFilter)):
        size = stage.num_cells
    elif isinstance(stage, (RotatingBloomFilter, BloomFilter)):
        size = stage.num_bits
    else:
        raise TypeError("stage must be a BloomFilter or a structure of bloomedu.variants, "
                        f"not {type(stage).__name__}")
    h1, h2 = _hashes(keys, stage.num_hashes)
    return positions(h1, h2, stage.num_hashes, size).T


def _hashes(keys, num_hashes):
    batches = list(hashed_batches(keys, num_hashes, max(1, keys.size)))
    return batches[0] if batches else (np.zeros(0, np.uint64), np.zeros(0, np.uint64))


def _reads_an_earlier_write(cells: np.ndarray, writers: np.ndarray) -> np.ndarray:
    """For each message j, whether one of its cells is written by a writer i < j."""
    n, w = cells.shape
    written = cells[writers].ravel()
    by = np.repeat(np.flatnonzero(writers), w)
    if not written.size:
        return np.zeros(n, dtype=bool)
    order = np.lexsort((by, written))  # by cell, then by message: the first writer first
    written, by = written[order], by[order]
    first = np.concatenate(([True], written[1:] != written[:-1]))
    written, by = written[first], by[first]
    at = np.searchsorted(written, cells.ravel()).clip(max=written.size - 1)
    earlier = (written[at] == cells.ravel()) & (by[at] < np.repeat(np.arange(n), w))
    return earlier.reshape(n, w).any(axis=1)


def _fragile(stage: StableBloomFilter, cells: np.ndarray, count: int) -> np.ndarray:
    """For each message, whether one of its cells holds 1..d, where d is how often the
    decrements of the segment's inserts (at most ``count``) could hit it: it may reach 0."""
    drops, hits = np.unique(stage._decrement_array(stage.inserted, count), return_counts=True)
    values = stage.cells.take(drops).astype(np.int64)
    fragile = drops[(values > 0) & (values <= hits)]
    return np.isin(cells, fragile).any(axis=1)
