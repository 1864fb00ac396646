"""Deduplicate a batch exactly as one message at a time would, through the bulk paths.

The one-at-a-time loop drops a message if the structure, updated by every earlier
message (including the earlier ones of its own batch), reports it present, and otherwise
keeps and adds it.  :func:`keep_in_order` gives exactly that answer for a batch of keys
with a few numpy calls:

1. The batch is cut at the next rotation, shift or new sub-filter (a segment holds at most
   as many messages as inserts remain before it), so inside a segment the structure only
   changes where its inserts write.
2. The structure answers every message against the state before the segment.
3. A message not found can be found at its turn only if earlier messages of the segment
   may write every cell it still misses (shared cells: a false positive inside the batch;
   for the age-partitioned filter, a run of k slices), and, for the stable filter, a
   message found may be lost if one of its cells is low enough for the decrements of the
   inserts before it to bring it to 0.  Those rare messages are redone one by one, in
   order, with the kept messages before each added first.  For every structure but the stable filter an insert only sets
   bits or raises counters, so a message found before the segment is found at its turn,
   and a key met earlier in the segment is dropped (its first copy was either kept and
   added, or found).

The structure answers both questions itself (:mod:`bloomedu.core.segments`): this module names
no class and reads no field.  Used by :func:`bloomedu.steps.expiry.deduplicate_windowed`; taught in
``notebooks/15_forgetting_old_clicks.ipynb``; tested in ``tests/test_expiry.py`` (equal
kept lists to the one-at-a-time loop, for every structure, by hypothesis).
"""

from __future__ import annotations

import numpy as np

from ..core.hashing import key_to_bytes
from ..core.segments import covered

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

    A structure that changes shape or forgets (the variants) answers for itself what a batch
    may change (``inserts_before_change`` and ``segment_writes``,
    :mod:`bloomedu.core.segments`); one that already answers "which keys were new" in bulk
    (``BloomFilter.add_many_new``) is asked that; any other is refused.

    >>> from bloomedu import RotatingBloomFilter
    >>> keys = np.array([1, 2, 1, 3, 4, 5, 2], dtype=np.uint64)
    >>> a, b = RotatingBloomFilter(2, 0.01, 2), RotatingBloomFilter(2, 0.01, 2)
    >>> keep_in_order(a, keys).tolist() == keep_one_at_a_time(b, keys).tolist(), a == b
    (True, True)
    """
    if not (callable(getattr(stage, "segment_writes", None))
            and callable(getattr(stage, "inserts_before_change", None))):
        if callable(getattr(stage, "add_many_new", None)):  # the loop's answers, in bulk
            return np.asarray(stage.add_many_new(keys), dtype=bool)
        raise TypeError(f"stage must say what a batch may change (inserts_before_change and "
                        f"segment_writes, bloomedu.core.segments) or have add_many_new: "
                        f"{type(stage).__name__} has neither")
    keep = np.zeros(keys.size, dtype=bool)
    start = 0
    while start < keys.size:
        room = stage.inserts_before_change()
        if room == 0:  # the next insert rotates, shifts or grows first: this message alone
            keep[start:start + 1] = keep_one_at_a_time(stage, keys[start:start + 1])
            start += 1
            continue
        end = min(keys.size, start + (_MOST if room is None else room))
        keep[start:end] = _segment(stage, keys[start:end])
        start = end
    return keep


def _segment(stage, keys: np.ndarray) -> np.ndarray:
    """:func:`keep_in_order` for keys among which the structure changes no shape."""
    writes = stage.segment_writes(keys)
    seen = writes.seen
    if not writes.monotone:  # any message may be kept, and write; a found one may be lost
        could_find = writes.found_if(covered(writes.cells, np.ones(keys.size, dtype=bool)))
        risky = np.where(seen, writes.may_lose, could_find)
        keep = ~seen & ~risky
    else:  # inserts only add: found stays found, and a repeat of the segment is dropped
        first = _first_occurrences(keys)
        keep = ~seen & first
        risky = writes.found_if(covered(writes.cells, keep)) & keep
        keep &= ~risky
    done = 0
    for i in np.flatnonzero(risky).tolist():  # in order, after the kept messages before it
        _add(stage, keys[done:i][keep[done:i]])
        keep[i] = keep_one_at_a_time(stage, keys[i:i + 1])[0]
        done = i + 1
    _add(stage, keys[done:][keep[done:]])
    return keep


def _first_occurrences(keys: np.ndarray) -> np.ndarray:
    """True at the first occurrence of each key.  A key is its bytes, as the filters hash it
    (``key_to_bytes``: ``"ab"`` and ``b"ab"`` are one key), so an object array may mix kinds
    that numpy cannot sort together.

    >>> _first_occurrences(np.array(["a", 1, b"a", 1], dtype=object)).tolist()
    [True, True, False, False]
    """
    first = np.zeros(keys.size, dtype=bool)
    if keys.dtype.kind in "iuSU":
        first[np.unique(keys, return_index=True)[1]] = True
        return first
    seen: set[bytes] = set()
    for i, key in enumerate(keys.tolist()):
        encoded = key_to_bytes(key)
        if encoded not in seen:
            seen.add(encoded)
            first[i] = True
    return first


def _add(stage, keys: np.ndarray) -> None:
    """``add_many``, or ``add`` one by one for a few keys (cheaper than a bulk call)."""
    if keys.size < 8:
        for key in keys.tolist():
            stage.add(key)
    else:
        stage.add_many(keys)
