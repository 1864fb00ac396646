"""A chunk of keys' bits as Redis commands, and the answers read back from their replies.

:class:`~bloomedu.services.redis_filter.RedisBackedFilter` keeps BloomFilter's bytes in
Redis strings (parts of ``part_bits`` bits).  For a chunk of keys the client computes every
position (:mod:`bloomedu.core.hashing`), groups them by part and, for each part, picks
the cheaper of two ways to touch them, both cheap commands with no interpreter loop:

- **sparse**: ``BITFIELD part SET u1 o 1 ...`` (``BITFIELD_RO ... GET u1 o`` to read), one
  operation per bit; the server parses four arguments a bit, about 0.4 µs of server CPU
  each, and answers each bit's old value;
- **dense**: ``GETRANGE part 0 last`` reads the old bytes the chunk's bits fall in, ``SET``
  puts the chunk's bits as one string into a scratch key and ``BITOP OR part part scratch``
  ORs them in: a few commands whose cost grows with the bytes, about 0.6 ns a byte.

A part gets the dense way when its share of the chunk's bits outweighs its bytes
(:func:`dense`), which is the case whenever the chunk's bits are more than about 1/700 of
the filter's (the lesson's and the benchmark's filters); a filter far larger than the
chunk gets the sparse way.  Either way the answers are those of adding the chunk's keys
one after another: ``BITFIELD`` applies its operations in order and answers each old
value; for a dense part the client reads the old bytes and counts a position as new only
for the first key of the chunk that sets it.  ``make bench`` measures both ways
(``benchmarks/redis_bench.py``).

Used by ``bloomedu/services/redis_filter.py``; tested in ``tests/test_redis_filter.py``.
"""

from __future__ import annotations

import numpy as np

from .redis_wire import bitfield, command

__all__ = ["ChunkPlan", "dense", "redis_offsets"]

# Server CPU, measured on valkey 9.1 and redis 7.0 (make bench prints them again):
_SPARSE_NS = {True: 400.0, False: 250.0}        # one BITFIELD operation, write / read
_DENSE_NS = {True: 5000.0, False: 2000.0}       # the dense way's commands, fixed part
_DENSE_NS_PER_BYTE = {True: 0.6, False: 0.2}    # ... and per byte read, sent and ORed


def redis_offsets(positions: np.ndarray) -> np.ndarray:
    """BloomFilter bit positions as Redis ``SETBIT``/``BITFIELD`` offsets.

    Within a byte Redis counts from the top bit, BloomFilter from the bottom, so the
    bytes are the same: bit b is offset (b & ~7) | (7 - (b & 7)).

    >>> redis_offsets(np.array([0, 7, 8, 9])).tolist()
    [7, 0, 15, 14]
    """
    positions = np.asarray(positions, dtype=np.int64)
    return (positions & ~7) | (7 - (positions & 7))


def dense(bits: int, part_bytes: int, write: bool) -> bool:
    """True when reading (and ORing) ``part_bytes`` bytes costs the server less than
    ``bits`` BITFIELD operations.

    >>> dense(10, 1 << 17, True), dense(50_000, 1 << 17, True)
    (False, True)
    """
    return bits * _SPARSE_NS[write] > _DENSE_NS[write] + _DENSE_NS_PER_BYTE[write] * part_bytes


class ChunkPlan:
    """The commands that add (``write=True``) or look up a chunk's keys, and their answers.

    ``positions``: a (keys, k) array of BloomFilter positions; ``part_bits``: bits per part;
    ``part_bytes``: each part's length in bytes; ``part_keys``: each part's Redis key;
    ``scratch``: a key of the same hash slot the dense way may use (deleted at the end).

    >>> plan = ChunkPlan(np.array([[3, 70], [3, 70]]), 64, [8, 8], ["p0", "p1"], write=True,
    ...                  scratch="s")
    >>> len(plan.commands)                        # one BITFIELD for each part touched
    2
    >>> plan.answers([[0, 1], [0, 1]]).tolist()   # old values: the second copy finds both set
    [True, False]
    """

    def __init__(self, positions: np.ndarray, part_bits: int, part_bytes: list[int],
                 part_keys: list[str], *, write: bool, scratch: str):
        self.keys, self.k = positions.shape
        self.write = write
        flat = positions.ravel()
        part = flat // part_bits
        order = np.argsort(part, kind="stable")          # each part's bits, in key order
        parts, starts = np.unique(part[order], return_index=True)
        self.parts = parts.tolist()                       # the parts this chunk touches
        self.steps: list[tuple[str, np.ndarray, np.ndarray]] = []  # (way, where in flat, local bits)
        self.commands: list[bytes] = []
        used_scratch = False
        for j, place in zip(parts.tolist(), np.split(order, starts[1:])):
            local = flat[place] - j * part_bits
            key = part_keys[j]
            if dense(place.size, part_bytes[j], write):
                last = int(local.max()) >> 3
                self.steps.append(("dense", place, local))
                self.commands.append(command("GETRANGE", key, 0, last))
                if write:
                    wanted = np.unique(local)
                    delta = np.bincount(wanted >> 3, weights=1 << (wanted & 7),
                                        minlength=last + 1).astype(np.uint8)
                    self.commands += [command("SET", scratch, delta.tobytes()),
                                      command("BITOP", "OR", key, key, scratch)]
                    used_scratch = True
            else:
                self.steps.append(("sparse", place, local))
                self.commands.append(bitfield(key, redis_offsets(local), write=write))
        if used_scratch:
            self.commands.append(command("DEL", scratch))

    def answers(self, replies: list) -> np.ndarray:
        """From the commands' replies (in order): for each key, True if it was new (``write``)
        or if all its bits are set (a lookup)."""
        found = np.zeros(self.keys * self.k, dtype=bool)  # write: this position was 0 before
        at = 0
        for way, place, local in self.steps:
            reply = replies[at]
            if way == "dense":
                old = np.frombuffer(reply or b"", dtype=np.uint8)
                old = np.pad(old, (0, (int(local.max()) >> 3) + 1 - old.size))
                bit = (old[local >> 3] >> (local & 7).astype(np.uint8)) & 1
                if self.write:
                    first = np.zeros(local.size, dtype=bool)
                    first[np.unique(local, return_index=True)[1]] = True
                    found[place] = (bit == 0) & first
                else:
                    found[place] = bit == 1
                at += 3 if self.write else 1
            else:
                bits = np.asarray(reply, dtype=np.int64)
                found[place] = (bits == 0) if self.write else (bits == 1)
                at += 1
        rows = found.reshape(self.keys, self.k)
        return rows.any(axis=1) if self.write else rows.all(axis=1)
