"""What a batch of inserts may change: the question every structure answers for itself.

Article 1's deduplicator, run a batch at a time over the windowed click stream (lesson 15),
must keep exactly the messages a loop of one message at a time keeps.
:func:`bloomedu.steps.sequential.keep_in_order` deduplicates a batch exactly as a loop of
``in`` then ``add`` would, with bulk calls.  It never looks inside a structure: it asks it
two things, through methods the structure defines (a structure without them is refused):

- ``inserts_before_change()``: how many inserts remain before the structure changes shape
  (rotates, shifts, opens a sub-filter; ``None``: never), so a segment never crosses one;
- ``segment_writes(keys)``: a :class:`Writes` for those keys, inserted in order inside one
  segment: whether each is found now, the cells each one's insert writes and which of them are
  set now, and how a query of a key turns out if earlier keys of the segment write some of its
  cells (:meth:`Writes.found_if`).

:class:`Writes` suits a structure whose query asks that every cell of the key be set and
whose inserts only set bits or raise counters (BloomFilter, counting, rotating, scalable);
:class:`RunWrites` the age-partitioned filter (a run of k slices); a structure whose inserts
also clear (the stable filter) says which found keys the segment's earlier inserts may lose
(``may_lose``).

Tested in ``tests/test_expiry.py`` (every structure, the batched answers equal to the loop's).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Writes", "RunWrites", "covered", "runs"]


@dataclass
class Writes:
    """A segment of n keys: ``seen`` (n,), and (n, w) arrays of the cells each key's insert
    writes (ids unique across the structure's tables) and whether each is set now.

    >>> w = Writes(np.array([False, False]), np.array([[1, 2], [2, 3]]),
    ...            np.array([[False, False], [False, True]]))
    >>> w.found_if(covered(w.cells, np.array([True, True]))).tolist()   # key 1: 2 by key 0, 3 set
    [False, True]
    """

    seen: np.ndarray
    cells: np.ndarray
    now_set: np.ndarray
    may_lose: np.ndarray | None = None  # keys found now that earlier inserts may lose (None: none)

    @property
    def monotone(self) -> bool:
        """True when inserts only set: a key found stays found, a repeat is found."""
        return self.may_lose is None

    def found_if(self, written: np.ndarray) -> np.ndarray:
        """Whether each key could be found at its turn, when earlier keys write the cells
        marked in ``written`` ((n, w), from :func:`covered`): every cell set now or written."""
        return (self.now_set | written).all(axis=1)


@dataclass
class RunWrites(Writes):
    """An age-partitioned segment: ``hits`` (k + l, n), each slice (newest first) holding each
    key's bit; an insert writes the k newest; a key is found on a run of k set slices."""

    hits: np.ndarray | None = None
    k: int = 1

    def found_if(self, written: np.ndarray) -> np.ndarray:
        hits = self.hits.copy()
        hits[:self.k] |= written.T
        return runs(hits, self.k)


def covered(cells: np.ndarray, writers: np.ndarray) -> np.ndarray:
    """(n, w): whether each cell of key j is written by a writer i < j (``writers``: (n,) bool).

    >>> covered(np.array([[1, 2], [2, 5], [1, 9]]), np.array([True, False, True])).tolist()
    [[False, False], [True, False], [True, False]]
    """
    n, w = cells.shape
    written = cells[writers].ravel()
    by = np.repeat(np.flatnonzero(writers), w)
    if not written.size:
        return np.zeros((n, w), dtype=bool)
    order = np.lexsort((by, written))  # by cell, then by key: the first writer first
    written, by = written[order], by[order]
    first = np.concatenate(([True], written[1:] != written[:-1]))
    written, by = written[first], by[first]
    at = np.searchsorted(written, cells.ravel()).clip(max=written.size - 1)
    earlier = (written[at] == cells.ravel()) & (by[at] < np.repeat(np.arange(n), w))
    return earlier.reshape(n, w)


def runs(hits: np.ndarray, k: int) -> np.ndarray:
    """For each column, whether k consecutive rows are all True (an age-partitioned query).

    >>> runs(np.array([[1, 1], [1, 0], [0, 1]], dtype=bool), 2).tolist()
    [True, False]
    """
    sums = np.zeros((hits.shape[0] + 1, hits.shape[1]), dtype=np.int32)
    np.cumsum(hits, axis=0, out=sums[1:])
    return (sums[k:] - sums[:-k] == k).any(axis=0)  # rows a..a+k-1 all set, for some a
