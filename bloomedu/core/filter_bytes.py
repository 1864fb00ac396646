"""The bytes of a :class:`~bloomedu.core.filter.BloomFilter` (``to_bytes``/``from_bytes``, pickle).

A 24-byte little-endian header, then the bit storage as it is in memory:

=========  =======  ==================================================================
bytes      field    meaning
=========  =======  ==================================================================
0-3        magic    ``b"BLMD"``
4-5        version  1 (the layout of this header)
6-7        hashing  the scheme that places keys (``BloomFilter.HASHING``: 2, 1 is read; 3 keyed)
8-15       m        ``num_bits``, 1 to 2**63 - 1
16-23      k        ``num_hashes``, 1 to 1024
24-        bits     8 * ceil(m / 64) bytes, bit j of the filter is bit j % 8 of byte j // 8
=========  =======  ==================================================================

The reader refuses anything else with a ``ValueError`` that says what is wrong (another
magic or version, a k the constructor refuses, truncated or padded data, a bit set past m),
before it allocates a filter of the header's size.

Tested in ``tests/test_serialization.py`` and ``tests/test_pickling.py``.
"""

from __future__ import annotations

import struct

import numpy as np

from .checks import MAX_HASHES, MAX_NUM_BITS

__all__ = ["dump", "load"]

_HEADER = struct.Struct("<4sHHQQ")
_MAGIC = b"BLMD"
_FORMAT_VERSION = 1


def dump(f) -> bytes:
    """The header, then the bits, read under the filter's lock (no write halfway through).

    >>> from bloomedu import BloomFilter
    >>> dump(BloomFilter(100, 3))[:8]
    b'BLMD\\x01\\x00\\x02\\x00'
    """
    header = _HEADER.pack(_MAGIC, _FORMAT_VERSION, f.HASHING, f.num_bits, f.num_hashes)
    with f._lock:
        return b"".join((header, f.bits.data))  # one copy of the bits


def load(cls, data):
    """A new ``cls`` (BloomFilter or a subclass) from what :func:`dump` wrote.

    >>> from bloomedu import BloomFilter
    >>> load(BloomFilter, b"BLMD" + bytes(20))
    Traceback (most recent call last):
    ValueError: unsupported format version 0 (this reads 1)
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be bytes, not {type(data).__name__}")
    data = memoryview(data).cast("B")  # no copy of the bits before they are checked
    if len(data) < _HEADER.size:
        raise ValueError(f"data is truncated: {len(data)} bytes, "
                         f"the header alone is {_HEADER.size}")
    magic, version, hashing, m, k = _HEADER.unpack_from(data)
    if magic != _MAGIC:
        raise ValueError(f"not a bloomedu filter: magic {magic!r}, expected {_MAGIC!r}")
    if version != _FORMAT_VERSION:
        raise ValueError(f"unsupported format version {version} (this reads {_FORMAT_VERSION})")
    if hashing not in cls._READ_HASHING:  # BloomFilter: 2, and the older 1
        older = [scheme for scheme in cls._READ_HASHING if scheme != cls.HASHING]
        raise ValueError(f"hashing {hashing} is not this filter's ({cls.HASHING})"
                         + (f", nor an older scheme it reads ({older[0]})" if older else ""))
    if not 1 <= m <= MAX_NUM_BITS or not 1 <= k <= MAX_HASHES:  # what __init__ accepts
        raise ValueError(f"corrupt header: num_bits={m} (1..2**63-1), "
                         f"num_hashes={k} (1..{MAX_HASHES})")
    expected = _HEADER.size + 8 * -(-m // 64)
    if len(data) != expected:
        state = "truncated" if len(data) < expected else "padded"
        raise ValueError(f"data is {state}: {len(data)} bytes, a filter of num_bits={m} "
                         f"takes {expected}")
    new = cls(m, k)
    if hashing != new.HASHING:  # scheme 1: its keys keep the positions they were added at
        new.HASHING = hashing
    new.bits.data[:] = np.frombuffer(data, dtype=np.uint8, offset=_HEADER.size)
    padding = np.unpackbits(new.bits.data[m // 8:], bitorder="little")[m % 8:]
    if padding.any():
        raise ValueError(f"corrupt data: bits set beyond num_bits={m}")
    return new
