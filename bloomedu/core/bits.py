"""Packed bit storage: one bit per bit, in a numpy byte array.

Article 1, step 3 stores seen hashes as ones in a vector of 2**n bits.  A list
of booleans spends 8 bytes a slot on a pointer; here each bit is a bit.  Bit b
lives in byte ``b >> 3`` under mask ``1 << (b & 7)`` (least significant bit
first).  Read as little-endian 64-bit words, that is word ``b >> 6`` under mask
``1 << (b & 63)``: the layout of Guava's ``long[]`` and of Bitcoin's BIP37
``vData``, so the compatible filters in :mod:`bloomedu.compat` share it.
"""

from __future__ import annotations

from itertools import chain
from typing import Iterable

import numpy as np

from .checks import is_int
from .scatter import set_all

__all__ = ["BitArray"]

# Above this many positions per bit of the array, setting bits through a byte
# scratch array and np.packbits beats np.bitwise_or.at (measured: the scratch
# costs about as much as m/64 calls' worth of np.bitwise_or.at).
_SCRATCH_THRESHOLD = 1 / 64
_SCRATCH_LIMIT_BYTES = 40 << 20  # one byte per bit: m up to 40 Mi bits


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
        if not is_int(num_bits) or num_bits <= 0:
            raise ValueError(f"num_bits must be a positive int, got {num_bits!r}")
        if word_bits not in (8, 16, 32, 64):
            raise ValueError(f"word_bits must be 8, 16, 32 or 64, got {word_bits!r}")
        self.num_bits = int(num_bits)
        num_words = -(-self.num_bits // word_bits)
        self.data = np.zeros(num_words * word_bits // 8, dtype=np.uint8)

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

    def set_chunks(self, chunks: Iterable[np.ndarray]) -> None:
        """Set the bits of every index array that ``chunks`` yields.

        All or nothing while the scratch fits (m up to 40 Mi bits): every chunk
        is staged first and the array changes only once the iterable is
        exhausted, so an error raised by a chunk generator leaves it unchanged.
        Above that, the indices are sorted and set a batch at a time as the
        chunks come (:mod:`bloomedu.core.scatter`), so a caller that needs all or
        nothing checks its keys first, as ``BloomFilter.add_many`` does.
        The indices are not checked (the filter's are below m by construction).

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
                set_all(self.data, self.data.size * 8, chain(pending, [indices], chunks))
                return
        if scratch is not None:
            self.data |= np.packbits(scratch, bitorder="little")
        if pending:
            indices = np.concatenate(pending)
            masks = np.left_shift(np.uint8(1), (indices & 7).astype(np.uint8))
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
        """Number of bits set to 1.

        >>> bits = BitArray(100); bits.set_many(np.array([1, 1, 50])); bits.count()
        2
        """
        return int(np.unpackbits(self.data).sum(dtype=np.int64))

    @property
    def nbytes(self) -> int:
        """Bytes of storage (padding to whole words included).

        >>> BitArray(65).nbytes, BitArray(65, word_bits=8).nbytes
        (16, 9)
        """
        return int(self.data.nbytes)

    def to_bools(self) -> np.ndarray:
        """The first ``num_bits`` bits as a bool array (for drawing and teaching).

        >>> bits = BitArray(4); bits.set(1); bits.to_bools().tolist()
        [False, True, False, False]
        """
        return np.unpackbits(self.data, bitorder="little")[: self.num_bits].astype(bool)

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

    def __repr__(self) -> str:
        return f"BitArray(num_bits={self.num_bits}, set={self.count()})"
