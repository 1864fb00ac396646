"""Packed bit storage: one bit per bit, in a numpy byte array.

Article 1, step 3 stores seen hashes as ones in a vector of 2**n bits.  A list
of booleans spends 8 bytes a slot on a pointer; here each bit is a bit.  Bit b
lives in byte ``b >> 3`` under mask ``1 << (b & 7)`` (least significant bit
first).  Read as little-endian 64-bit words, that is word ``b >> 6`` under mask
``1 << (b & 63)``: the layout of Guava's ``long[]`` and of Bitcoin's BIP37
``vData``, so the compatible filters in :mod:`bloomedu.compat` share it.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from itertools import chain
from typing import Iterable

import numpy as np

from .checks import MAX_NUM_BITS, is_int, one_of, whole_number, zeros
from .scatter import set_all

__all__ = ["BitArray", "count_ones"]

# Above this many positions per bit of the array, setting bits through a byte
# scratch array and np.packbits beats np.bitwise_or.at (measured: the scratch
# costs about as much as m/64 calls' worth of np.bitwise_or.at).
_SCRATCH_THRESHOLD = 1 / 64
_SCRATCH_LIMIT_BYTES = 40 << 20  # one byte per bit: m up to 40 Mi bits
_COUNT_CHUNK = 1 << 20  # bytes counted at a time: whole-array reads need no more than this
_HAS_BITWISE_COUNT = hasattr(np, "bitwise_count")  # numpy >= 2.0
_ONES_IN_BYTE = np.array([bin(byte).count("1") for byte in range(256)], dtype=np.uint8)


def count_ones(data: np.ndarray) -> int:
    """The number of 1 bits in a uint8 array, read 1 MiB at a time (exact, any numpy >= 1.24).

    ``np.bitwise_count`` (numpy 2.0 on) counts each 64-bit word; older numpy
    looks each byte up in a 256-entry table, 128 KiB at a time (the lookup turns
    each byte into an 8-byte index).  Either way the temporaries stay near a
    megabyte, so counting a 1.7 GiB filter needs about a megabyte.

    >>> count_ones(np.array([0, 1, 255, 128], dtype=np.uint8))
    10
    """
    total = 0
    step = _COUNT_CHUNK if _HAS_BITWISE_COUNT else _COUNT_CHUNK // 8
    for start in range(0, data.size, step):
        chunk = data[start:start + step]
        if _HAS_BITWISE_COUNT:
            words = chunk.view(np.uint64) if chunk.size % 8 == 0 else chunk
            total += int(np.bitwise_count(words).sum(dtype=np.int64))
        else:
            total += int(_ONES_IN_BYTE.take(chunk).sum(dtype=np.int64))
    return total
_NO_LOCK = nullcontext()


class BitArray:
    """A fixed-size array of bits, padded to whole words of ``word_bits`` bits.

    >>> bits = BitArray(10)
    >>> bits.set(3); bits.set(9)
    >>> bits[3], bits[4], bits.count(), bits.nbytes
    (True, False, 2, 8)
    >>> BitArray(256, word_bits=8).nbytes   # the article's 2**8-bit vector
    32
    """

    __slots__ = ("num_bits", "data")

    def __init__(self, num_bits: int, word_bits: int = 64):
        num_bits = whole_number(num_bits, "num_bits", 1, MAX_NUM_BITS)
        word_bits = one_of(word_bits, "word_bits", (8, 16, 32, 64))
        self.num_bits = num_bits
        num_words = -(-num_bits // word_bits)
        self.data = zeros(num_words * word_bits // 8, f"num_bits={num_bits}")

    # --- one bit at a time: what the lessons show ---------------------------------
    def _check(self, index: int) -> int:
        if not is_int(index):
            raise TypeError(f"bit index must be an int, not {type(index).__name__}")
        if not 0 <= index < self.num_bits:
            raise IndexError(f"bit index must be in 0..{self.num_bits - 1}, got {index}")
        return int(index)

    def __getitem__(self, index: int) -> bool:
        index = self._check(index)
        return bool(self.data[index >> 3] >> (index & 7) & 1)

    def set(self, index: int) -> None:
        """Set one bit to 1.

        >>> bits = BitArray(16); bits.set(9); int(bits.data[1])   # byte 1, bit 1
        2
        """
        index = self._check(index)
        self.data[index >> 3] |= 1 << (index & 7)

    def clear(self, index: int) -> None:
        """Set one bit to 0 (a Bloom filter never does this; lesson 05 shows why).

        >>> bits = BitArray(16); bits.set(9); bits.clear(9); bits[9]
        False
        """
        index = self._check(index)
        self.data[index >> 3] &= 0xFF ^ (1 << (index & 7))

    # --- many bits at once: the vectorised path -----------------------------------
    def set_many(self, indices: np.ndarray) -> None:
        """Set every bit in ``indices`` (ints in 0..num_bits-1, any shape, repeats allowed).

        >>> bits = BitArray(16)
        >>> bits.set_many(np.array([0, 1, 1, 2, 9]))
        >>> bits.to_bools().nonzero()[0].tolist()
        [0, 1, 2, 9]

        ``data[i >> 3] |= mask`` with fancy indexing keeps only one of several
        writes to the same byte and silently loses bits.  So: a batch small
        next to m goes through ``np.bitwise_or.at``; a large one through a
        byte-per-bit scratch array packed with ``np.packbits`` when that scratch
        fits in 40 MiB, or else sorted batches written in order
        (:mod:`bloomedu.core.scatter`).
        """
        self.set_chunks([self._checked(indices).ravel()])

    def _checked(self, indices) -> np.ndarray:
        indices = np.asarray(indices)
        if indices.dtype.kind not in "iu":
            raise TypeError(f"bit indices must be integers, not {indices.dtype}")
        if indices.size and not (0 <= indices.min() and indices.max() < self.num_bits):
            raise IndexError(f"bit indices must be in 0..{self.num_bits - 1}, got "
                             f"{indices.min()}..{indices.max()}")
        return indices

    @property
    def stages_everything(self) -> bool:
        """True when :meth:`set_chunks` is all or nothing (its scratch fits in 40 MiB).

        >>> BitArray(1000).stages_everything
        True
        """
        return self.data.size * 8 <= _SCRATCH_LIMIT_BYTES

    def set_chunks(self, chunks: Iterable[np.ndarray],
                   lock: AbstractContextManager = _NO_LOCK) -> None:
        """Set the bits of every index array that ``chunks`` yields.

        All or nothing while the scratch fits (m up to 40 Mi bits): every chunk
        is staged first and the array changes only once the iterable is
        exhausted, so an error raised by a chunk generator leaves it unchanged.
        Above that, the indices are sorted and set a batch at a time as the
        chunks come (:mod:`bloomedu.core.scatter`), so a caller that needs all or
        nothing checks its keys first, as ``BloomFilter.add_many`` does.
        The indices are not checked (the filter's are below m by construction).
        ``lock`` (a filter's, :class:`~bloomedu.core.contract.Filter`) is held around each
        write to the bits, not while ``chunks`` computes the indices.

        >>> bits = BitArray(16)
        >>> bits.set_chunks(np.array([i, i + 8]) for i in range(3))
        >>> bits.to_bools().nonzero()[0].tolist()
        [0, 1, 2, 8, 9, 10]
        """
        threshold = self.num_bits * _SCRATCH_THRESHOLD
        pending, pending_size, scratch = [], 0, None
        chunks = iter(chunks)  # the large path below takes over the rest of it
        for indices in chunks:
            if scratch is not None:
                scratch[indices] = 1
            elif pending_size + indices.size < threshold:
                pending.append(indices.ravel().copy())  # the caller may reuse its buffer
                pending_size += indices.size
            elif self.stages_everything:
                scratch = np.zeros(self.data.size * 8, dtype=np.uint8)
                for staged in pending + [indices]:
                    scratch[staged] = 1
                pending = []
            else:  # m too large to stage: sorted batches, set as they fill (bloomedu.core.scatter)
                set_all(self.data, self.data.size * 8, chain(pending, [indices], chunks), lock)
                return
        if scratch is not None:
            packed = np.packbits(scratch, bitorder="little")
            with lock:
                self.data |= packed
        if pending:
            indices = np.concatenate(pending)
            masks = np.left_shift(np.uint8(1), (indices & 7).astype(np.uint8))
            with lock:
                np.bitwise_or.at(self.data, indices >> 3, masks)

    def get_many(self, indices: np.ndarray) -> np.ndarray:
        """The bits at ``indices`` as a bool array of the same shape.

        >>> bits = BitArray(16); bits.set(9)
        >>> bits.get_many(np.array([8, 9])).tolist()
        [False, True]
        """
        return self.get_unchecked(self._checked(indices))

    def get_unchecked(self, indices: np.ndarray) -> np.ndarray:
        """:meth:`get_many` without the range check, for indices known to be below m.

        >>> BitArray(16).get_unchecked(np.array([3])).tolist()
        [False]
        """
        shifts = indices.astype(np.uint8)  # keeps the low 8 bits
        shifts &= 7
        found = self.data.take(indices >> 3)  # take: faster than self.data[indices >> 3]
        found >>= shifts
        found &= 1
        return found.view(bool)

    # --- whole-array views --------------------------------------------------------
    def count(self) -> int:
        """Number of bits set to 1, counted in chunks: extra memory about 1 MiB at any size.

        >>> bits = BitArray(100); bits.set_many(np.array([1, 1, 50])); bits.count()
        2
        """
        return count_ones(self.data)

    @property
    def nbytes(self) -> int:
        """Bytes of storage (padding to whole words included).

        >>> BitArray(65).nbytes, BitArray(65, word_bits=8).nbytes
        (16, 9)
        """
        return int(self.data.nbytes)

    def to_bools(self) -> np.ndarray:
        """The first ``num_bits`` bits as a bool array (for drawing and teaching).

        It costs one byte per bit, eight times the storage (a 1.7 GiB filter would
        ask for 13.6 GiB): fine for the small filters lessons draw; whole-array
        reads such as :meth:`count` work in chunks instead.

        >>> bits = BitArray(4); bits.set(1); bits.to_bools().tolist()
        [False, True, False, False]
        """
        return np.unpackbits(self.data, bitorder="little")[: self.num_bits].view(bool)

    def __len__(self) -> int:
        return self.num_bits

    def __eq__(self, other: object) -> bool:
        """Equal when the sizes and every bit agree.

        >>> BitArray(8) == BitArray(8), BitArray(8) == BitArray(9)
        (True, False)
        """
        if not isinstance(other, BitArray):
            return NotImplemented
        return self.num_bits == other.num_bits and np.array_equal(self.data, other.data)

    def copy(self) -> "BitArray":
        """An independent copy.

        >>> bits = BitArray(8); twin = bits.copy(); twin.set(0)
        >>> bits[0], twin[0], bits == twin
        (False, True, False)
        """
        new = object.__new__(BitArray)
        new.num_bits = self.num_bits
        new.data = self.data.copy()
        return new

    def __reduce__(self):
        """Pickle as the size and the raw bytes, at every protocol (``__slots__`` alone would
        refuse protocols 0 and 1).

        >>> import pickle
        >>> bits = BitArray(70); bits.set(69)
        >>> pickle.loads(pickle.dumps(bits, protocol=0)) == bits
        True
        """
        return BitArray._restore, (self.num_bits, self.data.tobytes())

    @classmethod
    def _restore(cls, num_bits: int, data: bytes) -> "BitArray":
        new = object.__new__(cls)
        new.num_bits = num_bits
        new.data = np.frombuffer(data, dtype=np.uint8).copy()
        return new

    def __repr__(self) -> str:
        """Size and bits set (counted in chunks, so cheap in memory at any size).

        >>> BitArray(10)
        BitArray(num_bits=10, set=0)
        """
        return f"BitArray(num_bits={self.num_bits}, set={self.count()})"
