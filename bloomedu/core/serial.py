"""What every structure of :mod:`bloomedu.variants` shares: bytes, pickles and a lock.

- :class:`Header`: a versioned header (4-byte magic, format version, then fixed fields,
  little-endian) and a strict reader: wrong type, truncation, another magic, another
  version or trailing bytes each get their own ``ValueError``/``TypeError``.
- :class:`Shared`: the base class, a :class:`~bloomedu.core.locking.LockedWrites` like
  every filter of the library: one lock per structure, made in ``__new__``, never pickled.
  Each public method that reads or changes the state holds it (:func:`locked`).
  Pickling goes through ``to_bytes``/``from_bytes`` (every protocol, 0 to 5).

Tested in ``tests/test_variants.py``, ``tests/test_pickling.py`` and ``tests/test_threads.py``.
"""

from __future__ import annotations

import struct

from .contract import Filter
from .locking import LockedWrites, locked

__all__ = ["Header", "Shared", "locked"]


class Header:
    """A header: magic, version (u16), then ``fields`` (a struct format, little-endian).

    >>> h = Header(b"TEST", 1, "QI")
    >>> data = h.pack(7, 3) + b"payload"
    >>> h.unpack(data, "TestFilter")
    ((7, 3), b'payload')
    >>> h.unpack(b"NOPE" + data[4:], "TestFilter")
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

    def unpack(self, data, kind: str) -> tuple[tuple, bytes]:
        """(the field values, the bytes after the header); refuses anything else."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"data must be bytes, not {type(data).__name__}")
        data = bytes(data)
        if len(data) < self.size:
            raise ValueError(f"data is truncated: {len(data)} bytes, the header alone is {self.size}")
        magic, version, *values = self.struct.unpack_from(data)
        if magic != self.magic:
            raise ValueError(f"not a bloomedu {kind}: magic {magic!r}, expected {self.magic!r}")
        if version != self.version:
            raise ValueError(f"unsupported {kind} format version {version} (this reads {self.version})")
        return tuple(values), data[self.size:]


def expect_length(payload: bytes, expected: int, kind: str) -> None:
    """Refuse a payload that is not exactly ``expected`` bytes long."""
    if len(payload) != expected:
        state = "truncated" if len(payload) < expected else "padded"
        raise ValueError(f"{kind} data is {state}: {len(payload)} bytes after the header, "
                         f"its parameters need {expected}")


class Shared(Filter, LockedWrites):
    """Base of the variant structures: the filters' lock, pickling through bytes, equality.

    Threads may share a structure, with the promise :class:`~bloomedu.BloomFilter` makes:
    once ``add`` or ``add_many`` has returned, every later read finds the keys (as long as
    the structure promises to keep them), and no two writes interleave.  Unlike
    ``BloomFilter``'s, reads hold the lock too: these structures' writes also clear state
    (a rotation, a shift, a decrement, a removal), so a read must not see one halfway.
    The lock is not reentrant: a locked method calls the unlocked ``_rotate``/``_shift``.
    """

    def to_bytes(self) -> bytes:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def __reduce__(self):
        return type(self).from_bytes, (self.to_bytes(),)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.to_bytes() == other.to_bytes()

    __hash__ = None  # mutable: not a dict key

    def copy(self):
        """An independent structure with the same parameters and state."""
        return type(self).from_bytes(self.to_bytes())
