"""Setting bits in a bit array far larger than the cache: sort a batch, then write in order.

A Bloom filter insert sets k bits per key at random places.  Once the bits no
longer fit in the cache (above 40 Mi bits, where :class:`~bloomedu.core.bits.BitArray`
stops staging them in a byte scratch), each random write is a cache miss and,
in a filter of a gigabyte, a TLB miss as well: measured here (``make bench``),
a random ``take`` from a 1.5 GB array costs 5 to 10 times a sorted one.  So the
positions of several million bits are sorted first (numpy's sort: x86-simd-sort
on AVX2 machines under numpy 2, introsort under numpy 1.24; both exact), and
then written in order, a cache-sized piece at a time.

``data[b] = data[b] | mask`` keeps only one of several writes to one byte
(which one numpy does not promise), so :func:`set_bits` reads every byte back
and writes again the bits that were lost (at most 8 rounds: a byte has 8 bits).
Measured against the alternatives on sorted pieces (``np.bitwise_or.reduceat``
over runs of equal bytes, or giving each run the OR of its masks first), the
read-back is the cheapest: it touches lines that were just written.

Used by :meth:`bloomedu.core.bits.BitArray.set_chunks` (its large path);
tested in ``tests/test_scatter.py``; ``make bench`` (workload W4) times it.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Iterable

import numpy as np

__all__ = ["SortedBatches", "bit_masks", "set_all", "set_bits", "set_sorted"]

BATCH_POSITIONS = 1 << 22  # positions sorted together: 16 MiB of uint32, 32 MiB of uint64
PIECE_POSITIONS = 1 << 16  # positions written per numpy call once sorted: stays in L2
_BIT = np.array([1 << b for b in range(8)], dtype=np.uint8)  # the mask of bit b in a byte


def set_sorted(data: np.ndarray, positions: np.ndarray) -> None:
    """Set bit p of the byte array ``data`` (LSB first) for every p in the sorted ``positions``.

    >>> data = np.zeros(2, dtype=np.uint8)
    >>> set_sorted(data, np.array([1, 2, 2, 3, 9], dtype=np.uint32))
    >>> data.tolist()   # bits 1, 2, 3 of byte 0 and bit 1 of byte 1
    [14, 2]
    """
    for start in range(0, positions.size, PIECE_POSITIONS):
        piece = positions[start:start + PIECE_POSITIONS]
        set_bits(data, (piece >> 3).astype(np.intp), bit_masks(piece))


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

    Write, read back, write again what was lost: after a round each byte holds
    the value of one of its writers (the old byte OR that writer's mask), so
    every writer of that bit is done.  A byte has 8 bits, so at most 8 rounds,
    whatever the order numpy applies repeated writes in.  On sorted indices
    the read-back hits lines just written (in L1 or L2).

    >>> data = np.zeros(1, dtype=np.uint8)
    >>> set_bits(data, np.zeros(8, dtype=np.intp), bit_masks(np.arange(8))); int(data[0])
    255
    """
    while byte_index.size:
        data[byte_index] = data.take(byte_index) | masks
        lost = np.flatnonzero((data.take(byte_index) & masks) == 0)
        byte_index, masks = byte_index.take(lost), masks.take(lost)


class SortedBatches:
    """Collect positions into one buffer, sort it when full and set its bits.

    ``num_bits`` decides the buffer's type: uint32 while every position fits
    (sorting 4-byte values is about twice as fast), else uint64.  ``lock`` (a
    filter's, :class:`~bloomedu.core.contract.Filter`) is held around each write, not
    while a batch is sorted.

    >>> data = np.zeros(8, dtype=np.uint8)
    >>> batches = SortedBatches(data, num_bits=64)
    >>> batches.add(np.array([63, 0])); batches.add(np.array([9])); batches.flush()
    >>> np.flatnonzero(np.unpackbits(data, bitorder="little")).tolist()
    [0, 9, 63]
    """

    def __init__(self, data: np.ndarray, num_bits: int, size: int = BATCH_POSITIONS,
                 lock: AbstractContextManager = nullcontext()):
        self.data, self.lock = data, lock
        dtype = np.uint32 if num_bits <= 1 << 32 else np.uint64
        self.buffer = np.empty(size, dtype=dtype)
        self.filled = 0

    def add(self, positions: np.ndarray) -> None:
        """Queue ``positions`` (integers below ``num_bits``); a full buffer is sorted and set."""
        positions = positions.ravel()
        while positions.size:
            room = min(self.buffer.size - self.filled, positions.size)
            self.buffer[self.filled:self.filled + room] = positions[:room]
            self.filled += room
            positions = positions[room:]
            if self.filled == self.buffer.size:
                self.flush()

    def flush(self) -> None:
        """Sort what is queued and set its bits."""
        queued = self.buffer[:self.filled]
        queued.sort()
        with self.lock:
            set_sorted(self.data, queued)
        self.filled = 0


def set_all(data: np.ndarray, num_bits: int, chunks: Iterable[np.ndarray],
            lock: AbstractContextManager = nullcontext()) -> None:
    """Set every position that ``chunks`` yields, batch by batch (not all or nothing),
    holding ``lock`` around each batch's write.

    >>> data = np.zeros(1, dtype=np.uint8)
    >>> set_all(data, 8, [np.array([0, 7]), np.array([7])]); int(data[0])
    129
    """
    batches = SortedBatches(data, num_bits, lock=lock)
    for positions in chunks:
        batches.add(positions)
    batches.flush()
