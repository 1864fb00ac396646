"""Bytes in and out: the one reader every filter's ``from_bytes`` goes through, and the base of
the variants.

A forged header must not make a reader build what it describes: a 1,202-byte input once
asked for 254 GiB.  So every reader does the same three things, in this order, here:

1. :func:`as_bytes`: the input is bytes-like (``TypeError`` otherwise), read in place (a
   ``memoryview``, no copy);
2. the header's fields are checked and the exact length they imply computed, by arithmetic
   alone (:meth:`Header.read` takes that computation from its caller);
3. :func:`expect_length`: the input has exactly that length (truncated or padded is a
   ``ValueError``), so what the reader then allocates is about the size of its input.

Only then is anything built; bits past the filter's m (:func:`check_clear_beyond`) and cells
past its count are checked on the bytes themselves, never on an unpacked copy.  The formats
of real systems (Guava's ``writeTo``, BIP37's ``filterload``, RedisBloom's ``SCANDUMP``) have
no magic or version; their readers use :func:`as_bytes` and :func:`expect_length` the same
way.

- :class:`Header`: a versioned header (4-byte magic, format version, then fixed fields,
  little-endian) and its strict reader.
- :class:`Shared`: the abstract base of :mod:`bloomedu.variants`' structures, a
  :class:`~bloomedu.core.contract.Filter` like every filter of the library, with its lock (one
  per structure, never pickled), held by each public method that reads or changes the state
  (:func:`locked`).  Each writes ``to_bytes`` and ``from_bytes``, so it pickles, copies and
  compares through its bytes (every protocol, 0 to 5).

Tested in ``tests/test_conformance.py`` (every reader against forged bytes, under
``tracemalloc``), ``tests/test_variants.py`` and ``tests/test_pickling.py``.
"""

from __future__ import annotations

import struct
from abc import abstractmethod
from typing import Callable

import numpy as np

from .contract import Filter, locked

__all__ = ["Header", "Shared", "as_bytes", "check_clear_beyond", "expect_length", "locked"]


def as_bytes(data, name: str = "data") -> memoryview:
    """``data`` as a flat memoryview of bytes, not copied; TypeError if it is not bytes-like.

    >>> as_bytes(bytearray(b"ab")).tobytes(), len(as_bytes(memoryview(b"abcd")[1:]))
    (b'ab', 3)
    >>> as_bytes("text")
    Traceback (most recent call last):
    TypeError: data must be bytes, not str
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"{name} must be bytes, not {type(data).__name__}")
    return memoryview(data).cast("B")


def expect_length(data, expected: int, what: str) -> None:
    """Refuse ``data`` unless it is exactly ``expected`` bytes long (``what`` takes that many).

    >>> expect_length(b"abc", 4, "a filter of num_bits=8")
    Traceback (most recent call last):
    ValueError: data is truncated: 3 bytes, a filter of num_bits=8 takes 4
    >>> expect_length(b"abcde", 4, "a filter of num_bits=8")
    Traceback (most recent call last):
    ValueError: data is padded: 5 bytes, a filter of num_bits=8 takes 4 (the rest is trailing bytes)
    """
    if len(data) != expected:
        state = "truncated" if len(data) < expected else "padded"
        raise ValueError(f"data is {state}: {len(data)} bytes, {what} takes {expected}"
                         + ("" if state == "truncated" else " (the rest is trailing bytes)"))


def check_clear_beyond(data: np.ndarray, num_bits: int, where: str = "") -> None:
    """Refuse a bit array (uint8, bit j in byte j // 8) with a bit set at or past ``num_bits``.

    Only the bytes from bit m on are read: nothing is unpacked.

    >>> check_clear_beyond(np.array([0xFF, 0x0F], dtype=np.uint8), 12)
    >>> check_clear_beyond(np.array([0xFF, 0x1F], dtype=np.uint8), 12, " in slice 0")
    Traceback (most recent call last):
    ValueError: corrupt data: bits set beyond num_bits=12 in slice 0
    """
    tail = data[num_bits // 8:]
    if tail.size and (int(tail[0]) >> (num_bits % 8) or tail[1:].any()):
        raise ValueError(f"corrupt data: bits set beyond num_bits={num_bits}{where}")


class Header:
    """A header: magic, version (u16), then ``fields`` (a struct format, little-endian).

    >>> h = Header(b"TEST", 1, "QI")
    >>> data = h.pack(7, 3) + b"payload"
    >>> values, payload = h.read(data, "TestFilter", lambda values: 7)
    >>> values, payload.tobytes()
    ((7, 3), b'payload')
    >>> h.read(b"NOPE" + data[4:], "TestFilter", lambda values: 7)
    Traceback (most recent call last):
    ValueError: not a bloomedu TestFilter: magic b'NOPE', expected b'TEST'
    """

    def __init__(self, magic: bytes, version: int, fields: str):
        self.magic, self.version = magic, version
        self.struct = struct.Struct("<4sH" + fields)

    @property
    def size(self) -> int:
        return self.struct.size

    def pack(self, *values) -> bytes:
        return self.struct.pack(self.magic, self.version, *values)

    def read(self, data, kind: str, payload: Callable[[tuple], int | tuple[int, str]]) \
            -> tuple[tuple, memoryview]:
        """(the field values, the bytes after the header, in place), after the checks above.

        ``payload(values)`` checks the fields (a ``ValueError`` naming what is wrong) and
        returns the payload's exact length, or (length, what takes it) for the message.
        """
        data = as_bytes(data)
        if len(data) < self.size:
            raise ValueError(f"data is truncated: {len(data)} bytes, "
                             f"the header alone is {self.size}")
        magic, version, *values = self.struct.unpack_from(data)
        if magic != self.magic:
            raise ValueError(f"not a bloomedu {kind}: magic {magic!r}, expected {self.magic!r}")
        if version != self.version:
            raise ValueError(f"unsupported format version {version} of a bloomedu {kind} "
                             f"(this reads {self.version})")
        expected = payload(tuple(values))
        size, what = expected if isinstance(expected, tuple) else \
            (expected, f"a {kind} of these parameters")
        expect_length(data, self.size + size, what)
        return tuple(values), data[self.size:]


class Shared(Filter):
    """Base of the variant structures: a :class:`~bloomedu.core.contract.Filter` that pickles,
    copies and compares through the bytes it writes and reads.

    Threads may share a structure, with the promise :class:`~bloomedu.BloomFilter` makes:
    once ``add`` or ``add_many`` has returned, every later read finds the keys (as long as
    the structure promises to keep them), and no two writes interleave.  Unlike
    ``BloomFilter``'s, reads hold the lock too: these structures' writes also clear state
    (a rotation, a shift, a decrement, a removal), so a read must not see one halfway.
    The lock is not reentrant: a locked method calls the unlocked ``_rotate``/``_shift``.
    """

    @abstractmethod
    def to_bytes(self) -> bytes:
        """The structure's parameters and state, as its ``from_bytes`` reads them."""

    @classmethod
    @abstractmethod
    def from_bytes(cls, data):
        """The structure ``data`` (bytes-like) holds, after the checks of :class:`Header`."""
