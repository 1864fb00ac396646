"""Hypergraph peeling, in numpy: how xor and binary fuse filters are built.

Each key has ``arity`` slots (3 or 4) in a table of m slots, and a fingerprint; the table
must hold values such that for every key the XOR of its slots is its fingerprint.  Think
of the slots as vertices and each key as an edge joining its slots (a hypergraph):

1. **Peel**: a slot that only one key uses can be set last, to whatever that key needs,
   whatever the key's other slots hold.  So take every such slot, note which key it is
   for, remove those keys (their other slots lose a user), and repeat on the slots left
   with one user.  Each slot keeps its count of users and the XOR of their key numbers:
   when the count is 1, that XOR *is* the key.  If every key is removed, the keys can be
   stored; if some are left (a 2-core: a knot where every slot has two users or more),
   the caller tries again with another hash seed.  A key alone in two slots at once is
   taken once.
2. **Assign**, in the reverse order of peeling: each key's slot gets its fingerprint XOR its
   other slots, which were all set already (or are never set and stay 0).

One round of either step works on every key of that round at once (``np.subtract.at`` and
``np.bitwise_xor.at`` spread a round's removals): keys peeled in the same round never share
a slot, because the slot each was peeled from had no other user.  Graf and Lemire, "Xor
filters: faster and smaller than Bloom and cuckoo filters" (JEA 2020), section 3, and
"Binary fuse filters: fast and smaller than xor filters" (JEA 2022).

Used by :mod:`bloomedu.variants.static`; tested in ``tests/test_xor.py`` and
``tests/test_binary_fuse.py``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["peel", "assign", "matches"]


def peel(slots: np.ndarray, num_slots: int) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """The peeling rounds of keys with these slots, or None if some keys cannot be peeled.

    ``slots``: an (n, arity) int64 array, row i the slots of key i, all different.  Each
    round is (keys, the slot each was peeled from), both int64 arrays.

    >>> slots = np.array([[0, 1, 2], [1, 2, 3]])
    >>> [(keys.tolist(), alone.tolist()) for keys, alone in peel(slots, 4)]
    [([0, 1], [0, 3])]
    >>> peel(np.array([[0, 1, 2], [0, 1, 2]]), 3) is None   # the same slots twice: a knot
    True
    """
    count_keys, arity = slots.shape
    users = np.bincount(slots.ravel(), minlength=num_slots)
    key_xor = np.zeros(num_slots, dtype=np.int64)  # the XOR of the numbers of each slot's users
    np.bitwise_xor.at(key_xor, slots.ravel(), np.repeat(np.arange(count_keys), arity))
    rounds, peeled = [], 0
    alone = np.flatnonzero(users == 1)
    while alone.size:
        keys, first = _first_of_each(key_xor[alone])
        rounds.append((keys, alone[first]))
        peeled += keys.size
        touched = slots[keys].ravel()
        np.subtract.at(users, touched, 1)
        np.bitwise_xor.at(key_xor, touched, np.repeat(keys, arity))
        alone, _ = _first_of_each(touched[users[touched] == 1])
    return rounds if peeled == count_keys else None


def _first_of_each(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values, sorted, and where each first occurs (``np.unique`` with
    ``return_index``, by one sort: faster on the many small arrays of late rounds).

    >>> [part.tolist() for part in _first_of_each(np.array([7, 3, 7, 1]))]
    [[1, 3, 7], [3, 1, 0]]
    """
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    new = np.ones(ordered.size, dtype=bool)
    new[1:] = ordered[1:] != ordered[:-1]
    return ordered[new], order[new]


def assign(rounds, slots: np.ndarray, fingerprints: np.ndarray, num_slots: int,
           dtype) -> np.ndarray:
    """The table: each key's peeled slot set, last round first, so its slots XOR to its fingerprint.

    >>> slots = np.array([[0, 1, 2], [1, 2, 3]]); fps = np.array([5, 9], np.uint8)
    >>> table = assign(peel(slots, 4), slots, fps, 4, np.uint8)
    >>> matches(table, slots, fps).tolist()
    [True, True]
    """
    table = np.zeros(num_slots, dtype=dtype)
    for keys, alone in reversed(rounds):
        value = fingerprints[keys].astype(dtype)
        for column in slots[keys].T:  # the peeled slot is still 0: it adds nothing
            value ^= table[column]
        table[alone] = value
    return table


def matches(table: np.ndarray, slots: np.ndarray, fingerprints: np.ndarray) -> np.ndarray:
    """For each key, whether the XOR of its slots equals its fingerprint (a bool array)."""
    value = table[slots[:, 0]].copy()
    for column in slots[:, 1:].T:
        value ^= table[column]
    return value == fingerprints
