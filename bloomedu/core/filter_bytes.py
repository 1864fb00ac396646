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

A :class:`~bloomedu.core.keyed.KeyedBloomFilter` (hashing 3) puts 16 more bytes between the
header and the bits: a fingerprint of its secret (a keyed hash of a fixed text), so bytes read
back with another secret are refused instead of finding none of their keys.

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


def dump(hashing: int, data: np.ndarray, *, num_bits: int, num_hashes: int,
         extra: bytes = b"") -> bytes:
    """The header, ``extra`` (a keyed filter's fingerprint), then the bits (``data``).

    >>> dump(2, np.zeros(16, np.uint8), num_bits=100, num_hashes=3)[:8]
    b'BLMD\\x01\\x00\\x02\\x00'
    """
    return b"".join((_HEADER.pack(hashing, num_bits, num_hashes), extra, data))  # one copy


def load(data, hashing: int, reads: tuple[int, ...],
         extra: int = 0) -> tuple[int, int, int, np.ndarray, bytes]:
    """(hashing, m, k, the bits as a read-only uint8 array, the ``extra`` bytes before them)
    from what :func:`dump` wrote, for a filter whose scheme is ``hashing`` and that reads the
    schemes ``reads``; through the one reader (:class:`~bloomedu.core.serial.Header`): nothing
    the size of the header's m is allocated before the data is known to hold it.

    >>> load(b"BLMD" + bytes(20), 2, (1, 2))
    Traceback (most recent call last):
    ValueError: unsupported format version 0 of a bloomedu filter (this reads 1)
    """
    def payload(values):
        scheme, m, k = values
        if scheme not in reads:  # BloomFilter: 2, and the older 1
            older = [other for other in reads if other != hashing]
            raise ValueError(f"hashing {scheme} is not this filter's ({hashing})"
                             + (f", nor an older scheme it reads ({older[0]})" if older else ""))
        if not 1 <= m <= MAX_NUM_BITS or not 1 <= k <= MAX_HASHES:  # what __init__ accepts
            raise ValueError(f"corrupt header: num_bits={m} (1..2**63-1), "
                             f"num_hashes={k} (1..{MAX_HASHES})")
        return extra + 8 * -(-m // 64), f"a filter of num_bits={m}"

    (scheme, m, k), payload_bytes = _HEADER.read(data, "filter", payload)
    bits = np.frombuffer(payload_bytes[extra:], dtype=np.uint8)
    check_clear_beyond(bits, m)
    return scheme, m, k, bits, payload_bytes[:extra].tobytes()
