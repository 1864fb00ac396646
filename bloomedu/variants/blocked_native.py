"""The compiled kernels of :class:`~bloomedu.variants.blocked.BlockedBloomFilter`: the native twin of :mod:`~bloomedu.variants.blocked_kernels`.

A key's block is ``((h >> 32) * num_blocks) >> 32`` and its bit in word w is
``((h mod 2**32) * SALT[w] mod 2**32) >> 27`` (:meth:`~bloomedu.variants.blocked.BlockedBloomFilter.block_and_masks`,
the reference).  The numpy kernels must first find the keys of a chunk that share a block
(:class:`~bloomedu.variants.blocked_kernels.Batch`) to write them safely; a compiled loop
walks the keys in order, one read-modify-write of one 32-byte block each, so earlier keys of
the batch count for :func:`add_new` by construction.  The block of key j + :data:`AHEAD` is
prefetched while key j is written: a random block of a filter far larger than the cache then
costs about one memory latency divided by the misses in flight.  The eight words of a block
are read, masked and written as one 256-bit vector (:func:`~bloomedu.kernels.jit.block8_in_then_add`):
numba leaves the eight-step loop scalar, and on a filter of the day's size that loop took 40 to
50 ns a key against 15 to 16 with the vector (50 million keys into the day's 1.7 GiB filter,
the C loop of ``benchmarks/c/split_block.c`` 26 to 28 in the same runs).  :func:`add_new` and
:func:`contains` each write the prefetch into their own loop (the first :data:`AHEAD` blocks,
then one block ahead of each key) rather than share a helper: a helper that took the whole
hash array was not inlined by numba and cost as much as the block update itself (25 to 38 ns a
key against 14 to 15, commit bd9616d), and one loop with a write flag would put a branch in the
day's hot loop.

:func:`add_new_uint64` also hashes: the key's MurmurHash3 h1 of its 8 bytes
(:func:`bloomedu.kernels.native_murmur.hash_one_uint64`), in the same loop.

Tested bit for bit against the numpy kernels and ``add``/``in`` in ``tests/test_native_kernels.py``.

>>> words, h = np.zeros(16, dtype="<u4"), np.array([5, 6, 5], dtype=np.uint64)
>>> present = np.empty(3, bool); add_new(words, h, 2, present); (~present).tolist()
[True, True, False]
>>> found = np.empty(2, bool); contains(words, np.array([5, 7], np.uint64), 2, found); found.tolist()
[True, False]
"""

from __future__ import annotations

import numpy as np

from ..kernels.jit import block8_holds, block8_in_then_add, njit, prefetch
from ..kernels.native_murmur import hash_one_uint64
from .blocked_kernels import SALTS

__all__ = ["add", "add_new", "contains", "add_new_uint64", "AHEAD"]

AHEAD = 16  # keys between a block's prefetch and its write
_SALTS32 = np.ascontiguousarray(SALTS, dtype=np.uint32)
_THIRTY_TWO, _EIGHT = np.uint64(32), np.uint64(8)


@njit
def _block(h, num_blocks):
    return ((h >> _THIRTY_TWO) * num_blocks) >> _THIRTY_TWO


@njit
def _add_one(words, h, num_blocks):
    """OR key h's eight masks into its block (one 256-bit vector:
    :func:`~bloomedu.kernels.jit.block8_in_then_add`); True if they were all set already."""
    return block8_in_then_add(words, _block(h, num_blocks) * _EIGHT, h, _SALTS32)


@njit
def _fetch(words, h, num_blocks):
    """Ask the CPU to start loading key h's block (a hint: nothing waits for it)."""
    prefetch(words, _block(h, num_blocks) * _EIGHT)


@njit
def add_new(words, h, num_blocks, present):
    """Insert the keys of 64-bit hashes ``h`` in order; ``present[j]``: key j's eight bits were
    all set already at its turn (earlier keys count), as ``in`` then ``add``.

    >>> words, present = np.zeros(8, "<u4"), np.empty(2, bool)
    >>> add_new(words, np.array([9, 9], np.uint64), 1, present); present.tolist()
    [False, True]
    """
    blocks, count = np.uint64(num_blocks), h.size
    for j in range(min(AHEAD, count)):
        _fetch(words, h[j], blocks)
    for j in range(count):
        if j + AHEAD < count:
            _fetch(words, h[j + AHEAD], blocks)
        present[j] = _add_one(words, h[j], blocks)


@njit
def add(words, h, num_blocks):
    """Insert the keys of 64-bit hashes ``h``.

    >>> words = np.zeros(8, "<u4"); add(words, np.array([0], np.uint64), 1); words.tolist()
    [1, 1, 1, 1, 1, 1, 1, 1]
    """
    add_new(words, h, num_blocks, np.empty(h.size, dtype=np.bool_))


@njit
def contains(words, h, num_blocks, found):
    """``found[j]``: all eight bits of key j's block are set.

    >>> words, found = np.ones(8, "<u4"), np.empty(2, bool)
    >>> contains(words, np.array([0, 1], np.uint64), 1, found); found.tolist()
    [True, False]
    """
    blocks, count = np.uint64(num_blocks), h.size
    for j in range(min(AHEAD, count)):
        _fetch(words, h[j], blocks)
    for j in range(count):
        if j + AHEAD < count:
            _fetch(words, h[j + AHEAD], blocks)
        found[j] = block8_holds(words, _block(h[j], blocks) * _EIGHT, h[j], _SALTS32)


@njit
def add_new_uint64(words, keys, num_blocks, present):
    """:func:`add_new` of 64-bit integer keys, hashed in the same loop (h1 of MurmurHash3 of
    each key's 8 little-endian bytes, as ``hash128``).

    >>> from bloomedu.variants.blocked import BlockedBloomFilter
    >>> f = BlockedBloomFilter(4096); f.add(3)
    >>> present = np.empty(2, bool); add_new_uint64(f.words, np.array([3, 4], np.uint64), f.num_blocks, present)
    >>> present.tolist(), 4 in f
    ([True, False], True)
    """
    blocks = np.uint64(num_blocks)
    count = keys.size
    ring = np.empty(AHEAD, dtype=np.uint64)
    for j in range(min(AHEAD, count)):
        ring[j] = hash_one_uint64(keys[j])[0]
        _fetch(words, ring[j], blocks)
    for j in range(count):
        slot = j % AHEAD
        h = ring[slot]
        if j + AHEAD < count:
            later = hash_one_uint64(keys[j + AHEAD])[0]
            ring[slot] = later
            _fetch(words, later, blocks)
        present[j] = _add_one(words, h, blocks)
