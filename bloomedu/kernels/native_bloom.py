"""A Bloom filter's bulk insert, add-new and query in one compiled loop: the native twin of :mod:`~bloomedu.kernels.bloom`.

The reference is :class:`bloomedu.core.filter.BloomFilter`: position i of a key is
``fmix64((h1 + i*h2) mod 2**64) mod m``, bit b lives in byte ``b >> 3`` under mask
``1 << (b & 7)``.  The numpy kernels have to sort positions to write them safely and quickly;
a compiled loop just walks the keys in order, each key's k positions in turn, exactly as
``add`` and ``in`` do one key at a time.  While it works on key j it computes the positions of
key j + :data:`AHEAD` and asks the CPU to fetch their cache lines (:func:`~bloomedu.kernels.jit.prefetch`),
so on a filter far larger than the cache several misses are in flight at once.

:func:`insert`, :func:`add_new` and :func:`contains` take what the numpy ones take (the
filter's bytes, batches of (h1, h2) with h2 spread, m, k, the lock) and give the same bits and
answers; ``tests/test_native_kernels.py`` checks them bit for bit.  An insert hashes every
chunk before it sets a bit, so a bad key leaves the filter as it was.

>>> from bloomedu.kernels import bloom
>>> keys = [(np.array([5, 6], np.uint64), np.array([3, 9], np.uint64))]
>>> ours, theirs = np.zeros(128, np.uint8), np.zeros(128, np.uint8)    # m = 1024 bits
>>> insert(ours, keys, num_bits=1024, num_hashes=3); bloom.insert(theirs, keys, num_bits=1024, num_hashes=3)
>>> bool((ours == theirs).all()), contains(ours, keys, num_bits=1024, num_hashes=3).tolist()
(True, [True, True])
"""

from __future__ import annotations

import operator
from contextlib import AbstractContextManager, nullcontext
from typing import Iterable

import numpy as np

from .jit import mulhi, njit, prefetch
from .native_murmur import fmix64

__all__ = ["set_keys", "add_keys_new", "query_keys", "insert", "add_new", "contains", "AHEAD",
           "reciprocal", "reduce"]

AHEAD = 8  # keys whose positions are computed (and prefetched) before their turn
_ONE8, _SEVEN, _THREE = np.uint8(1), np.uint64(7), np.uint64(3)
_NO_LOCK = nullcontext()


def reciprocal(num_bits: int) -> np.uint64:
    """``floor(2**64 / m)`` (2**64 - 1 for m = 1): what :func:`reduce` multiplies by.

    >>> int(reciprocal(3)), int(reciprocal(1))
    (6148914691236517205, 18446744073709551615)
    >>> reciprocal(0)
    Traceback (most recent call last):
    ValueError: num_bits must be in 1 .. 2**63 - 1, got 0
    """
    try:
        m = operator.index(num_bits)
    except TypeError:
        raise TypeError(f"num_bits must be a whole number, not {type(num_bits).__name__}") from None
    if not 1 <= m < 2 ** 63:
        raise ValueError(f"num_bits must be in 1 .. 2**63 - 1, got {m}")
    return np.uint64(min((1 << 64) // m, (1 << 64) - 1))


@njit
def reduce(x, m, inverse):
    """``x mod m`` for uint64 x and m, with ``inverse = reciprocal(m)``: no division.

    ``mulhi(x, inverse)`` is ``floor(x * floor(2**64/m) / 2**64)``, which falls short of
    ``floor(x / m)`` by at most 1 (the product is off by less than x / 2**64 < 1), so the
    remainder is below 2m and one subtraction finishes it (Barrett's reduction).  A 64-bit
    division costs 25 to 40 cycles, k of them a key; this is a multiply and a compare.

    >>> x = np.uint64(2**64 - 1)
    >>> [int(reduce(x, np.uint64(m), reciprocal(m))) for m in (1, 3, 1000, 2**62 + 1)] == [(2**64 - 1) % m for m in (1, 3, 1000, 2**62 + 1)]
    True
    """
    rest = x - mulhi(x, inverse) * m
    return rest - m if rest >= m else rest


@njit
def _walk(data, h1, h2, num_bits, inverse, num_hashes, new):
    """Every key in order: set its k bits; ``new[j]`` whether one was clear.

    Step j first writes key j - AHEAD from its slot of the ring, then computes key j's
    positions into that slot and prefetches their lines: one place computes positions and
    one place writes them."""
    m = np.uint64(num_bits)
    count = h1.size
    ring = np.empty((AHEAD, max(num_hashes, 1)), dtype=np.uint64)
    for j in range(count + AHEAD):
        slot = j % AHEAD
        done = j - AHEAD
        if done >= 0:
            clear = False
            for i in range(num_hashes):
                position = ring[slot, i]
                byte = position >> _THREE
                mask = _ONE8 << np.uint8(position & _SEVEN)
                old = data[byte]
                clear |= old & mask == 0  # no branch: whether a bit was clear is unpredictable
                data[byte] = old | mask
            new[done] = clear
        if j < count:
            running, step = h1[j], h2[j]
            for i in range(num_hashes):
                position = reduce(fmix64(running), m, inverse)
                ring[slot, i] = position
                prefetch(data, position >> _THREE)
                running += step


@njit
def set_keys(data, h1, h2, num_bits, inverse, num_hashes):
    """Set the k bits of every key (h1[j], h2[j]) in ``data`` (m = ``num_bits``).

    >>> from bloomedu.core.filter import bit_position
    >>> data = np.zeros(8, np.uint8)
    >>> set_keys(data, np.array([0, 1], np.uint64), np.array([1, 1], np.uint64), 64, reciprocal(64), 2)
    >>> np.flatnonzero(np.unpackbits(data, bitorder="little")).tolist()
    [0, 39, 44]
    """
    scratch = np.empty(h1.size, dtype=np.bool_)
    _walk(data, h1, h2, num_bits, inverse, num_hashes, scratch)


@njit
def add_keys_new(data, h1, h2, num_bits, inverse, num_hashes, new):
    """Set every key's bits in order; ``new[j]``: some bit of key j was clear at its turn.

    >>> data, new = np.zeros(8, np.uint8), np.empty(3, bool)
    >>> add_keys_new(data, np.array([0, 7, 0], np.uint64), np.array([0, 7, 0], np.uint64), 64, reciprocal(64), 2, new)
    >>> new.tolist()
    [True, True, False]
    """
    _walk(data, h1, h2, num_bits, inverse, num_hashes, new)


@njit
def query_keys(data, h1, h2, num_bits, inverse, num_hashes, found):
    """``found[j]``: all k bits of key j are set.

    The first two bits of a key are read without a branch (their lines prefetched
    :data:`AHEAD` keys before): in a filter near its design fill about half the bits are set,
    so an absent key stops at its first or second bit about three times in four, and a branch
    on each bit would guess wrong half the time.  The rest stop at the first clear bit.

    >>> data, found = np.zeros(8, np.uint8), np.empty(2, bool); data[0] = 1
    >>> query_keys(data, np.array([0, 1], np.uint64), np.array([0, 0], np.uint64), 64, reciprocal(64), 1, found)
    >>> found.tolist()
    [True, False]
    """
    m = np.uint64(num_bits)
    count = h1.size
    first = min(num_hashes, 2)
    for j in range(count + AHEAD):  # step j: fetch key j's first lines, query key j - AHEAD
        if j < count:
            running = h1[j]
            for i in range(first):
                prefetch(data, reduce(fmix64(running), m, inverse) >> _THREE)
                running += h2[j]
        key = j - AHEAD
        if key < 0:
            continue
        running, step = h1[key], h2[key]
        bits = _ONE8
        for i in range(first):
            position = reduce(fmix64(running), m, inverse)
            bits &= data[position >> _THREE] >> np.uint8(position & _SEVEN)
            running += step
        hit = bits & _ONE8 != 0
        if hit:
            for i in range(first, num_hashes):  # stops at the first clear bit
                position = reduce(fmix64(running), m, inverse)
                if data[position >> _THREE] & (_ONE8 << np.uint8(position & _SEVEN)) == 0:
                    hit = False
                    break
                running += step
        found[key] = hit


def _contiguous(hashed) -> list:
    """Every (h1, h2) batch of ``hashed``, hashed before anything is written, as contiguous
    uint64 arrays."""
    return [(np.ascontiguousarray(h1, np.uint64), np.ascontiguousarray(h2, np.uint64))
            for h1, h2 in hashed]


def insert(data: np.ndarray, hashed: Iterable, *, num_bits: int, num_hashes: int,
           lock: AbstractContextManager = _NO_LOCK, checked: bool = False) -> None:
    """Set the k bits of every key of ``hashed``; all or nothing: every chunk is hashed before
    a bit is set, unless ``checked`` says no chunk can fail (an integer array, its dtype
    accepted): then each chunk is written as it comes, and the next chunk's hashes reuse the
    memory this one's held instead of faulting fresh pages in (a million keys: about 4,000
    page faults a call).

    >>> data = np.zeros(8, dtype=np.uint8)
    >>> insert(data, [(np.array([0, 1], np.uint64), np.array([1, 1], np.uint64))], num_bits=64, num_hashes=2)
    >>> np.flatnonzero(np.unpackbits(data, bitorder="little")).tolist()
    [0, 39, 44]
    """
    inverse = reciprocal(num_bits)
    batches = (_contiguous([batch])[0] for batch in hashed) if checked else _contiguous(hashed)
    for h1, h2 in batches:
        with lock:
            set_keys(data, h1, h2, num_bits, inverse, num_hashes)


def add_new(data: np.ndarray, hashed: Iterable, *, num_bits: int, num_hashes: int,
            lock: AbstractContextManager = _NO_LOCK) -> np.ndarray:
    """Insert every key; True for each key that was new, as a loop of ``in`` then ``add``.

    >>> data, key = np.zeros(8, dtype=np.uint8), (np.array([0, 7, 0], np.uint64),) * 2
    >>> add_new(data, [key], num_bits=64, num_hashes=2).tolist()
    [True, True, False]
    """
    batches, inverse = _contiguous(hashed), reciprocal(num_bits)
    new = np.empty(sum(h1.size for h1, _ in batches), dtype=bool)
    with lock:
        done = 0
        for h1, h2 in batches:
            add_keys_new(data, h1, h2, num_bits, inverse, num_hashes, new[done:done + h1.size])
            done += h1.size
    return new


def contains(data: np.ndarray, hashed: Iterable, *, num_bits: int, num_hashes: int) -> np.ndarray:
    """For each key of ``hashed``, whether all its k bits of ``data`` are set.

    The chunks are queried one after the other on this thread: each chunk's hashes then reuse
    the memory of the chunk before (on worker threads each would fault fresh pages in, and a
    fresh process measured 1.5 to 2 times slower so).

    >>> data = np.zeros(8, dtype=np.uint8); data[0] = 1
    >>> contains(data, [(np.array([0, 1], np.uint64), np.array([0, 0], np.uint64))], num_bits=64, num_hashes=1).tolist()
    [True, False]
    """
    inverse, answers = reciprocal(num_bits), []
    for batch in hashed:
        h1, h2 = _contiguous([batch])[0]
        found = np.empty(h1.size, dtype=bool)
        query_keys(data, h1, h2, num_bits, inverse, num_hashes, found)
        answers.append(found)
    return np.concatenate(answers) if answers else np.zeros(0, dtype=bool)
