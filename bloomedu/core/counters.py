"""Packed small counters: m cells of b bits each in a numpy byte array.

A counting Bloom filter (Fan, Cao, Almeida and Broder 2000) replaces each bit by a
4-bit counter; a stable Bloom filter (Deng and Rafiei 2006) keeps cells of d bits.
Cells are stored at a width of 1, 2, 4 or 8 bits (the smallest that holds b bits), so
a 4-bit counter takes half a byte: cell c is in byte ``c * w // 8``, at bit
``c * w % 8`` (least significant first, the layout of :class:`~bloomedu.core.bits.BitArray`).

Writes go through :meth:`CounterArray.put` with *distinct* cells: two cells that share
a byte are written with ``np.bitwise_and.at``/``np.bitwise_or.at``, which never loses
one of two updates to the same byte.  Used by :mod:`bloomedu.variants.counting` and
:mod:`bloomedu.variants.stable`; tested in ``tests/test_variants.py``.
"""

from __future__ import annotations

import numpy as np

from .checks import MAX_NUM_BITS, whole_number, zeros

__all__ = ["CounterArray"]

MAX_CELLS = MAX_NUM_BITS  # cells are int64 numpy indices; memory is checked before allocating


class CounterArray:
    """``num_cells`` counters of ``bits_per_cell`` bits (1 to 8), all starting at 0.

    >>> cells = CounterArray(10, bits_per_cell=4)
    >>> cells.put(np.array([3, 4]), np.array([15, 2]))
    >>> cells.get(3), cells.get(4), cells.max_value, cells.nbytes
    (15, 2, 15, 5)

    ``per_byte`` cells share a byte, each ``mask`` wide; ``view`` reads one byte of ``data``
    as a Python int (the fast way to a single cell in a per-key loop).
    """

    __slots__ = ("num_cells", "bits_per_cell", "width", "max_value", "data", "per_byte", "view", "mask")

    def __init__(self, num_cells: int, bits_per_cell: int = 4):
        self.num_cells = whole_number(num_cells, "num_cells", 1, MAX_CELLS)
        self.bits_per_cell = whole_number(bits_per_cell, "bits_per_cell", 1, 8)
        self.width = next(w for w in (1, 2, 4, 8) if w >= self.bits_per_cell)
        self.max_value = (1 << self.bits_per_cell) - 1
        self.per_byte = 8 // self.width
        self.data = zeros(-(-self.num_cells // self.per_byte), f"num_cells={self.num_cells}")
        self.view = memoryview(self.data)  # one byte as a Python int: fast per-cell access
        self.mask = (1 << self.width) - 1

    # --- one cell -------------------------------------------------------------------
    def get(self, cell: int) -> int:
        """The value of one cell.

        >>> CounterArray(4).get(2)
        0
        """
        per = self.per_byte
        return (self.view[cell // per] >> ((cell % per) * self.width)) & self.mask

    def set(self, cell: int, value: int) -> None:
        """Write one cell (``value`` in 0..max_value).

        >>> cells = CounterArray(4, 2); cells.set(1, 3); cells.get(1), int(cells.data[0])
        (3, 12)
        """
        per = self.per_byte
        byte, shift = cell // per, (cell % per) * self.width
        view = self.view
        view[byte] = (view[byte] & ~(self.mask << shift) & 0xFF) | (value << shift)

    # --- many cells -------------------------------------------------------------------
    def take(self, cells: np.ndarray) -> np.ndarray:
        """The values of ``cells`` (int array of any shape, repeats allowed), as uint8.

        >>> cells = CounterArray(8); cells.set(5, 9)
        >>> cells.take(np.array([5, 5, 0])).tolist()
        [9, 9, 0]
        """
        if self.width == 8:
            return self.data.take(cells)
        values = self.data.take(cells // self.per_byte)
        values >>= ((cells % self.per_byte) * self.width).astype(np.uint8)
        values &= self.mask
        return values

    def all_nonzero(self, cells: np.ndarray) -> np.ndarray:
        """For each column of ``cells`` (a (k, n) array: a key's k cells), whether none is 0.

        >>> cells = CounterArray(8); cells.set(5, 9)
        >>> cells.all_nonzero(np.array([[5, 5], [5, 0]])).tolist()
        [True, False]
        """
        return (self.take(cells) > 0).all(axis=0)

    def put(self, cells: np.ndarray, values: np.ndarray) -> None:
        """Write ``values`` into ``cells``, which must be distinct (``np.unique`` output).

        >>> cells = CounterArray(4); cells.put(np.array([0, 1]), np.array([1, 2]))
        >>> int(cells.data[0])
        33
        """
        values = np.asarray(values).astype(np.uint8)
        if self.width == 8:
            self.data[cells] = values
            return
        byte = cells // self.per_byte
        shift = ((cells % self.per_byte) * self.width).astype(np.uint8)
        mask = np.left_shift(np.uint8((1 << self.width) - 1), shift)
        np.bitwise_and.at(self.data, byte, ~mask)
        np.bitwise_or.at(self.data, byte, np.left_shift(values, shift))

    def values(self, start: int = 0, stop: int | None = None) -> np.ndarray:
        """The values of cells ``start`` to ``stop`` (default: every cell) as a uint8 array,
        one byte per cell; ``start`` a multiple of :attr:`per_byte`.

        >>> cells = CounterArray(3); cells.set(2, 7); cells.values().tolist()
        [0, 0, 7]
        >>> cells.values(2).tolist()
        [7]
        """
        start = whole_number(start, "start", 0, self.num_cells)
        if start % self.per_byte:
            raise ValueError(f"start must be a multiple of per_byte={self.per_byte}, got {start}")
        stop = self.num_cells if stop is None else whole_number(stop, "stop", start, MAX_CELLS)
        stop = min(stop, self.num_cells)
        data = self.data[start // self.per_byte:-(-stop // self.per_byte)]
        if self.width == 8:
            return data.copy()
        shifts = np.arange(0, 8, self.width, dtype=np.uint8)
        unpacked = (data[:, None] >> shifts) & self.mask
        return unpacked.ravel()[:stop - start].astype(np.uint8)

    def histogram(self) -> np.ndarray:
        """How many cells hold each value 0..max_value.

        >>> cells = CounterArray(5); cells.set(0, 3); cells.histogram()[:4].tolist()
        [4, 0, 0, 1]
        """
        counts = np.zeros(self.max_value + 1, dtype=np.int64)
        step = self.per_byte << 20  # a megabyte's cells: a bounded unpacking at a time
        for start in range(0, self.num_cells, step):
            values = self.values(start, start + step)
            counts += np.bincount(values, minlength=1 << self.width)[:self.max_value + 1]
        return counts

    @staticmethod
    def storage_bytes(num_cells: int, bits_per_cell: int) -> int:
        """Bytes that ``CounterArray(num_cells, bits_per_cell)`` stores, by arithmetic alone
        (a reader checks its input's length with it before allocating).

        >>> CounterArray.storage_bytes(10, 4), CounterArray(10, 3).nbytes
        (5, 5)
        """
        width = next(w for w in (1, 2, 4, 8) if w >= bits_per_cell)
        return -(-num_cells // (8 // width))

    def corruption(self) -> str | None:
        """What in the stored bytes no sequence of writes could leave, or None: a cell past
        ``num_cells`` that is not 0, or a cell above ``max_value`` (d bits stored at a wider
        width).  Read a megabyte at a time, nothing unpacked.

        >>> cells = CounterArray(3, 3); cells.corruption() is None
        True
        >>> cells.data[0] = 0x80; cells.corruption()   # cell 1 holds 8, more than 3 bits hold
        'a cell holds more than bits_per_cell=3 allows'
        """
        per, width = self.per_byte, self.width
        spare = self.data.size * per - self.num_cells
        if spare and int(self.data[-1]) >> ((per - spare) * width):
            return f"counters set beyond num_cells={self.num_cells}"
        excess = ((1 << width) - 1) ^ self.max_value  # the stored bits a cell may not use
        if excess:
            mask = np.uint8(sum(excess << (c * width) for c in range(per)) & 0xFF)
            for start in range(0, self.data.size, 1 << 20):
                if np.bitwise_and(self.data[start:start + (1 << 20)], mask).any():
                    return f"a cell holds more than bits_per_cell={self.bits_per_cell} allows"
        return None

    @property
    def nbytes(self) -> int:
        """Bytes of storage: m cells at the stored width, rounded up to a byte."""
        return int(self.data.nbytes)

    def copy(self) -> "CounterArray":
        new = CounterArray(self.num_cells, self.bits_per_cell)
        new.data[:] = self.data
        return new

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CounterArray):
            return NotImplemented
        return (self.num_cells, self.bits_per_cell) == (other.num_cells, other.bits_per_cell) \
            and np.array_equal(self.data, other.data)

    __hash__ = None

    def __repr__(self) -> str:
        return f"CounterArray(num_cells={self.num_cells}, bits_per_cell={self.bits_per_cell})"
