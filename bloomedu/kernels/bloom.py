"""A Bloom filter's bulk insert and query on plain arrays: the kernels behind ``add_many``,
``add_many_new`` and ``contains_many``.

The reference is :class:`bloomedu.core.filter.BloomFilter`: position i of a key is
``fmix64((h1 + i*h2) mod 2**64) mod m`` (:func:`bloomedu.core.filter.bit_position`), bit b
lives in byte ``b >> 3`` under mask ``1 << (b & 7)``.  The kernels here take the filter's
bytes (``data``, a uint8 array), m, k and batches of (h1, h2) uint64 arrays (the step h2
already spread), and set or read exactly the bits the reference would; ``tests/test_bulk.py``
and ``tests/test_large.py`` check them bit for bit against it on the same keys.

What makes them fast, each in one place:

- :func:`next_positions`: position i of a whole batch from position i - 1 (a running sum
  h1 + i*h2, and ``x % m`` as ``x - (x // m) * m``, several times faster in numpy);
- :func:`insert` chooses the write strategy for the size of the filter, and only there:
  a batch small next to m goes through ``np.bitwise_or.at``; a filter of up to 40 Mi bits
  stages its bits in a byte-per-bit scratch array, packed and ORed in once (all or nothing);
  a larger one sorts its positions and writes them in order (a random write into an array far
  larger than the cache costs 5 to 10 times a sorted one), on two threads
  (:mod:`bloomedu.kernels.threads`): one sorts a batch while the other writes its own;
- :func:`add_new` gives, for every key, whether some bit of its own was still clear at its
  turn, exactly as a loop of ``in`` then ``add`` would: each job sorts (position, key) pairs,
  so for every position the batch's first key to set it comes first;
- :func:`contains` computes position i only for the keys whose first i bits are all set
  (most absent keys fail at their first bit or two), pooling the survivors of the first rounds.

``data[b] |= mask`` with repeated indices keeps only one write per byte: :func:`set_bits`
reads every byte back and writes again the bits that were lost (at most 8 rounds).

>>> data = np.zeros(128, dtype=np.uint8)                 # m = 1024
>>> hashed = [(np.array([5], np.uint64), np.array([3], np.uint64))]
>>> insert(data, hashed, num_bits=1024, num_hashes=3)
>>> swapped = [(hashed[0][1], hashed[0][0])]
>>> contains(data, hashed, num_bits=1024, num_hashes=3).tolist(), contains(data, swapped, num_bits=1024, num_hashes=3).tolist()
([True], [False])
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Iterable

import numpy as np

from .murmur import fmix64_array
from .threads import ordered_map

__all__ = ["next_positions", "stages", "insert", "set_positions", "add_new", "contains",
           "set_sorted", "set_bits", "bit_masks", "STAGE_LIMIT_BITS"]

Hashed = Iterable[tuple[np.ndarray, np.ndarray]]

STAGE_LIMIT_BITS = 40 << 20  # up to this m, insert stages every bit first: all or nothing
SCATTER_SHARE = 1 / 64  # a batch below m/64 positions goes through np.bitwise_or.at
JOB_POSITIONS = 1 << 22  # positions sorted together: 16 MiB of uint32, 32 MiB of uint64
PIECE_POSITIONS = 1 << 16  # positions written per numpy call once sorted: stays in L2
FIRST_ROUNDS = 2  # contains: rounds done chunk by chunk, before the survivors are pooled
POOL_KEYS = 1 << 15  # contains: survivors pooled before the later rounds
_KEY_BITS = 20  # add_new: a job's keys are numbered in 20 bits, below their positions
_NO_LOCK = nullcontext()


# --- positions --------------------------------------------------------------------------
def next_positions(running: np.ndarray, h2: np.ndarray, i: int, m64: np.uint64,
                   out: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """Position i of every key, into ``out``; ``running`` goes from h1 + (i-1)*h2 to h1 + i*h2.

    >>> from bloomedu.core.filter import bit_position
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


def _all_positions(hashed: list, num_hashes: int, m64: np.uint64, dtype) -> np.ndarray:
    """Every position of every key of ``hashed`` in one array: a chunk's keys for i = 0, then
    for i = 1, and so on (``running`` is copied: the caller's h1 stays as it was)."""
    positions = np.empty(sum(h1.size for h1, _ in hashed) * num_hashes, dtype=dtype)
    filled = 0
    for h1, h2 in hashed:
        running, out, scratch = h1.copy(), np.empty_like(h1), np.empty_like(h1)
        for i in range(num_hashes):
            positions[filled:filled + h1.size] = next_positions(running, h2, i, m64, out, scratch)
            filled += h1.size
    return positions


# --- writing bits ---------------------------------------------------------------------------
def bit_masks(positions: np.ndarray) -> np.ndarray:
    """``1 << (p & 7)`` for every position p, as uint8.

    >>> bit_masks(np.array([0, 7, 9])).tolist()
    [1, 128, 2]
    """
    shifts = positions.astype(np.uint8)  # keeps the low 8 bits
    shifts &= 7
    return np.left_shift(np.uint8(1), shifts, out=shifts)


def set_bits(data: np.ndarray, byte_index: np.ndarray, masks: np.ndarray) -> None:
    """``data[byte_index] |= masks`` without losing a bit when several masks share a byte.

    Write, read back, write again what was lost: after a round each byte holds the value of
    one of its writers, so every writer of that bit is done; a byte has 8 bits, so at most 8
    rounds.  On sorted indices the read-back hits lines just written.

    >>> data = np.zeros(1, dtype=np.uint8)
    >>> set_bits(data, np.zeros(8, dtype=np.intp), bit_masks(np.arange(8))); int(data[0])
    255
    """
    while byte_index.size:
        data[byte_index] = data.take(byte_index) | masks
        lost = np.flatnonzero((data.take(byte_index) & masks) == 0)
        byte_index, masks = byte_index.take(lost), masks.take(lost)


def set_sorted(data: np.ndarray, positions: np.ndarray) -> None:
    """Set bit p of ``data`` for every p of the sorted ``positions``, a cache-sized piece at a time.

    >>> data = np.zeros(2, dtype=np.uint8)
    >>> set_sorted(data, np.array([1, 2, 2, 3, 9], dtype=np.uint32)); data.tolist()
    [14, 2]
    """
    for start in range(0, positions.size, PIECE_POSITIONS):
        piece = positions[start:start + PIECE_POSITIONS]
        set_bits(data, (piece >> 3).astype(np.intp), bit_masks(piece))


def stages(data: np.ndarray) -> bool:
    """True when a write into ``data`` can be staged whole (one scratch byte per bit, at most
    40 MiB): then :func:`insert` and :func:`set_positions` are all or nothing.

    >>> stages(np.zeros(8, np.uint8)), stages(np.zeros(6 << 20, np.uint8))
    (True, False)
    """
    return data.size * 8 <= STAGE_LIMIT_BITS


def insert(data: np.ndarray, hashed: Hashed, *, num_bits: int, num_hashes: int,
           lock: AbstractContextManager = _NO_LOCK, checked: bool = False) -> None:
    """Set the k bits of every key of ``hashed`` in ``data``; all or nothing: if ``hashed``
    raises, ``data`` is as it was.  (``checked``, no chunk can fail, lets the native twin write
    chunk by chunk; these kernels stage every chunk's positions either way.)

    ``lock`` is held around each write to ``data``, never while positions are computed or
    sorted.  Above 40 Mi bits every key is hashed first, then its positions are sorted and
    written a job at a time, on two threads.

    >>> data = np.zeros(8, dtype=np.uint8)
    >>> insert(data, [(np.array([0, 1], np.uint64), np.array([1, 1], np.uint64))], num_bits=64, num_hashes=2)
    >>> from bloomedu.core.filter import bit_position
    >>> np.flatnonzero(np.unpackbits(data, bitorder="little")).tolist()
    [0, 39, 44]
    >>> sorted({bit_position(h1, 1, i, 64) for h1 in (0, 1) for i in (0, 1)})
    [0, 39, 44]
    """
    m64 = np.uint64(num_bits)
    if not stages(data):
        return _insert_sorted(data, num_bits, num_hashes, list(hashed), lock)  # hash all first
    chunks = (_all_positions([chunk], num_hashes, m64, np.int64) for chunk in hashed)
    set_positions(data, num_bits, chunks, lock)


def set_positions(data: np.ndarray, num_bits: int, chunks: Iterable[np.ndarray],
                  lock: AbstractContextManager = _NO_LOCK) -> None:
    """Set bit p of ``data`` for every position p (below ``num_bits``) of every array that
    ``chunks`` yields: the write strategy for each size, chosen here.

    While :func:`stages` holds it is all or nothing (an error raised by ``chunks`` leaves
    ``data`` unchanged): a few positions next to m go through ``np.bitwise_or.at``, more
    through a byte-per-bit scratch packed once.  Above that, positions are sorted and set a
    batch at a time as the chunks come.

    >>> data = np.zeros(2, dtype=np.uint8)
    >>> set_positions(data, 16, (np.array([i, i + 8]) for i in range(3)))
    >>> np.flatnonzero(np.unpackbits(data, bitorder="little")).tolist()
    [0, 1, 2, 8, 9, 10]
    """
    if not stages(data):
        return _set_in_sorted_batches(data, num_bits, chunks, lock)
    staged, scratch, few = [], None, 0
    for positions in chunks:
        if scratch is None and few + positions.size < num_bits * SCATTER_SHARE:
            staged.append(positions.ravel().copy())  # the caller may reuse its buffer
            few += positions.size
            continue
        if scratch is None:  # one byte per bit of the filter, packed at the end
            scratch = np.zeros(data.size * 8, dtype=np.uint8)
            for earlier in staged:
                scratch[earlier] = 1
        scratch[positions] = 1
    if scratch is not None:
        packed = np.packbits(scratch, bitorder="little")
        with lock:
            data |= packed
    elif staged:
        positions = np.concatenate(staged)
        with lock:
            np.bitwise_or.at(data, positions >> 3, bit_masks(positions))


def _set_in_sorted_batches(data: np.ndarray, num_bits: int, chunks: Iterable[np.ndarray],
                           lock: AbstractContextManager) -> None:
    """Collect positions into one buffer; when it is full, sort it and set its bits in order."""
    buffer = np.empty(JOB_POSITIONS, dtype=np.uint32 if num_bits <= 1 << 32 else np.uint64)
    filled = 0
    for positions in chunks:
        positions = positions.ravel()
        while positions.size:
            room = min(buffer.size - filled, positions.size)
            buffer[filled:filled + room] = positions[:room]
            filled, positions = filled + room, positions[room:]
            if filled == buffer.size:
                buffer.sort()
                with lock:
                    set_sorted(data, buffer)
                filled = 0
    queued = buffer[:filled]
    queued.sort()
    with lock:
        set_sorted(data, queued)


def _jobs(hashed: list, keys_per_job: int) -> list[list]:
    """The hashed chunks cut into jobs of at most ``keys_per_job`` keys each."""
    jobs, job, room = [], [], keys_per_job
    for h1, h2 in hashed:
        start = 0
        while start < h1.size:
            take = min(room, h1.size - start)
            job.append((h1[start:start + take], h2[start:start + take]))
            start, room = start + take, room - take
            if not room:
                jobs.append(job)
                job, room = [], keys_per_job
    return jobs + ([job] if job else [])


def _insert_sorted(data: np.ndarray, num_bits: int, num_hashes: int, hashed: list,
                   lock: AbstractContextManager) -> None:
    """:func:`insert` for a filter above 40 Mi bits: sorted jobs, each written in order."""
    m64 = np.uint64(num_bits)
    dtype = np.uint32 if data.size * 8 <= 1 << 32 else np.uint64
    jobs = _jobs(hashed, max(1, JOB_POSITIONS // num_hashes))

    def sort_and_write(job: list) -> None:  # on a worker thread: ORs commute, so any order will do
        positions = _all_positions(job, num_hashes, m64, dtype)
        positions.sort()
        with lock:  # the writes only: positions are computed and sorted outside it
            set_sorted(data, positions)

    for _ in ordered_map(sort_and_write, jobs):
        pass


def add_new(data: np.ndarray, hashed: Hashed, *, num_bits: int, num_hashes: int,
            lock: AbstractContextManager = _NO_LOCK) -> np.ndarray:
    """Insert every key; True for each key that was new (some of its bits still clear at its
    turn, earlier keys of the batch included), as a loop of ``in`` then ``add``.

    >>> data, key = np.zeros(8, dtype=np.uint8), (np.array([0, 7, 0], np.uint64),) * 2
    >>> add_new(data, [key], num_bits=64, num_hashes=2).tolist()
    [True, True, False]
    """
    m64 = np.uint64(num_bits)
    key_bits = _KEY_BITS  # (position << 20 | key) in a uint64: m below 2**44
    jobs = _jobs(list(hashed), min(JOB_POSITIONS // num_hashes, 1 << key_bits))

    def sorted_pairs(job: list) -> tuple[np.ndarray, int]:
        pairs = _all_positions(job, num_hashes, m64, np.uint64)
        num_keys = pairs.size // num_hashes
        pairs <<= np.uint64(key_bits)
        key_index, start = np.arange(num_keys, dtype=np.uint64), 0
        for h1, _ in job:  # each chunk is k runs of its keys, i-major
            block = pairs[start * num_hashes:(start + h1.size) * num_hashes]
            block.reshape(num_hashes, h1.size)[...] |= key_index[start:start + h1.size]
            start += h1.size
        pairs.sort()
        return pairs, num_keys

    answers = []
    for pairs, num_keys in ordered_map(sorted_pairs, jobs):
        with lock:  # a job's reads and writes together: its answers are a sequential loop's
            answers.append(_apply_new(data, pairs, num_keys, key_bits))
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


# --- reading bits ---------------------------------------------------------------------------
def _bits_at(data: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The bits of ``data`` at ``positions`` (below m), as a bool array."""
    shifts = positions.astype(np.uint8)  # keeps the low 8 bits
    shifts &= 7
    found = data.take(positions >> 3)  # take: faster than data[positions >> 3]
    found >>= shifts
    found &= 1
    return found.view(bool)


def contains(data: np.ndarray, hashed: Hashed, *, num_bits: int, num_hashes: int) -> np.ndarray:
    """For each key of ``hashed``, whether all its k bits of ``data`` are set.

    >>> data = np.zeros(8, dtype=np.uint8); data[0] = 1
    >>> hashed = [(np.array([0, 1], np.uint64), np.array([0, 0], np.uint64))]
    >>> contains(data, hashed, num_bits=64, num_hashes=1).tolist()
    [True, False]
    """
    m64 = np.uint64(num_bits)
    first = range(min(FIRST_ROUNDS, num_hashes))
    answers, pool, pool_keys, pooled = [], [], 0, 0
    for h1, h2 in hashed:
        alive = np.arange(pool_keys, pool_keys + h1.size)  # keys numbered within the pool
        pool.append(_survivors(data, m64, num_hashes, alive, h1.copy(), h2, first))
        pool_keys, pooled = pool_keys + h1.size, pooled + pool[-1][0].size
        if pooled >= POOL_KEYS:  # the later rounds, on a chunk's worth of survivors
            answers.append(_finish(data, m64, num_hashes, pool, pool_keys, first.stop))
            pool, pool_keys, pooled = [], 0, 0
    if pool_keys:
        answers.append(_finish(data, m64, num_hashes, pool, pool_keys, first.stop))
    return np.concatenate(answers) if answers else np.zeros(0, dtype=bool)


def _finish(data, m64, num_hashes: int, pool: list, pool_keys: int, start: int) -> np.ndarray:
    """The answers of a pool's keys: the rounds from ``start`` on for its survivors."""
    alive = _survivors(data, m64, num_hashes, *(np.concatenate(parts) for parts in zip(*pool)),
                       range(start, num_hashes))[0]
    answer = np.zeros(pool_keys, dtype=bool)
    answer[alive] = True  # the pool's keys that passed every round
    return answer


def _survivors(data, m64, num_hashes: int, alive: np.ndarray, running: np.ndarray,
               h2: np.ndarray, rounds: range):
    """The keys (numbers ``alive``) whose positions in ``rounds`` are all set, with their
    ``running`` (h1 + (i-1)*h2 before round i) and ``h2``, ready for the next round."""
    out, scratch = np.empty_like(running), np.empty_like(running)
    for i in rounds:
        positions = next_positions(running, h2, i, m64, out, scratch)
        survivors = np.flatnonzero(_bits_at(data, positions))
        alive = alive.take(survivors)  # take: faster than alive[survivors]
        running, h2 = running.take(survivors), h2.take(survivors)
        if i + 1 == num_hashes or not alive.size:
            break
        out, scratch = out[:alive.size], scratch[:alive.size]
    return alive, running, h2
