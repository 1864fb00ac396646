"""What every structure of :mod:`bloomedu.variants` shares: bytes, pickles and a lock.

- :class:`Header`: a versioned header (4-byte magic, format version, then fixed fields,
  little-endian) and a strict reader: wrong type, truncation, another magic, another
  version or trailing bytes each get their own ``ValueError``/``TypeError``.
- :class:`Shared`: the base class.  Each structure holds a per-filter lock
  (``threading.RLock``) around every method that reads or changes its state, so threads
  may share one filter: concurrent ``add``, ``add_many``, ``in`` and rotations lose no key.
  Pickling goes through ``to_bytes``/``from_bytes`` (every protocol, 0 to 5).

Tested in ``tests/test_variants.py``.
"""

from __future__ import annotations

import struct
import threading
from functools import wraps

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


def locked(method):
    """Run ``method`` holding the instance's lock."""
    @wraps(method)
    def run(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)
    return run


class Shared:
    """Base of the variant structures: a per-filter lock, pickling through bytes, equality."""

    def _init_lock(self) -> None:
        self._lock = threading.RLock()

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
