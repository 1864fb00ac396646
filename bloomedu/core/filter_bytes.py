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

import numpy as np

from .checks import MAX_HASHES, MAX_NUM_BITS
from .serial import Header, check_clear_beyond

__all__ = ["dump", "load"]

_HEADER = Header(b"BLMD", 1, "HQQ")  # hashing, m, k


def dump(f) -> bytes:
    """The header, then the bits, read under the filter's lock (no write halfway through).

    >>> from bloomedu import BloomFilter
    >>> dump(BloomFilter(100, 3))[:8]
    b'BLMD\\x01\\x00\\x02\\x00'
    """
    header = _HEADER.pack(f.HASHING, f.num_bits, f.num_hashes)
    with f._lock:
        return b"".join((header, f.bits.data))  # one copy of the bits


def load(cls, data):
    """A new ``cls`` (BloomFilter or a subclass) from what :func:`dump` wrote, through the one
    reader (:class:`~bloomedu.core.serial.Header`): nothing the size of the header's m is
    allocated before the data is known to hold it.

    >>> from bloomedu import BloomFilter
    >>> load(BloomFilter, b"BLMD" + bytes(20))
    Traceback (most recent call last):
    ValueError: unsupported format version 0 of a bloomedu filter (this reads 1)
    """
    def payload(values):
        hashing, m, k = values
        if hashing not in cls._READ_HASHING:  # BloomFilter: 2, and the older 1
            older = [scheme for scheme in cls._READ_HASHING if scheme != cls.HASHING]
            raise ValueError(f"hashing {hashing} is not this filter's ({cls.HASHING})"
                             + (f", nor an older scheme it reads ({older[0]})" if older else ""))
        if not 1 <= m <= MAX_NUM_BITS or not 1 <= k <= MAX_HASHES:  # what __init__ accepts
            raise ValueError(f"corrupt header: num_bits={m} (1..2**63-1), "
                             f"num_hashes={k} (1..{MAX_HASHES})")
        return 8 * -(-m // 64), f"a filter of num_bits={m}"

    (hashing, m, k), bits = _HEADER.read(data, "filter", payload)
    new = cls(m, k)
    if hashing != new.HASHING:  # scheme 1: its keys keep the positions they were added at
        new.HASHING = hashing
    new.bits.data[:] = np.frombuffer(bits, dtype=np.uint8)
    check_clear_beyond(new.bits.data, m)
    return new
