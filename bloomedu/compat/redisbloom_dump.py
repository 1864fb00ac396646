"""Reading RedisBloom's ``BF.SCANDUMP``: its header checked as the module checks it, before
anything it describes is allocated.

A dump is a packed header (the chain's size, number of sub-filters, options, expansion, then
53 bytes a sub-filter) and each sub-filter's bits.  A forged header could set k (hashes) to
2**32 - 1 with a bpe that agrees, or announce a gigabyte of bits in 73 bytes: here each
sub-filter's bpe must be the one its error rate gives, its k and size follow from them, and
the bits must all be there (:func:`read`; :func:`load_chunks` for ``BF.LOADCHUNK``'s pairs)
before the filter is built.  Used by
:class:`bloomedu.compat.redisbloom.RedisBloomFilter`; tested in
``tests/test_redisbloom_model.py`` and ``tests/test_conformance.py``.

>>> from bloomedu.compat.redisbloom import RedisBloomFilter
>>> f = RedisBloomFilter(0.01, 10); f.add("x")
True
>>> read(RedisBloomFilter, f.to_bytes()) == f
True
"""

from __future__ import annotations

import math
import struct
from typing import Iterable

import numpy as np

from ..core.checks import check_storage
from ..core.serial import as_bytes, expect_length
from .redisbloom_subfilter import (ENTS_IS_BITS, FORCE64, LINK, LN2, NO_SCALING, NOROUND, TIGHTENING,
                               SubFilter, bits_per_entry, link_bytes)

__all__ = ["HEADER", "read", "load_chunks"]

HEADER = struct.Struct("<QIII")  # size, number of sub-filters, options, expansion
_MAX_LINKS = 1 << 16  # sub-filters a dump may announce: each growth at least doubles or adds


def read(cls, data):
    """:meth:`~bloomedu.compat.redisbloom.RedisBloomFilter.from_bytes`: the header, its
    length, then the bits."""
    data = as_bytes(data)
    if len(data) < HEADER.size:
        raise ValueError(f"data is truncated: {len(data)} bytes, the header alone is "
                         f"{HEADER.size}")
    count = HEADER.unpack_from(data)[1]
    if count > _MAX_LINKS:
        raise ValueError(f"received bad data: {count} sub-filters (at most {_MAX_LINKS})")
    head = HEADER.size + LINK.size * count
    if len(data) < head:
        raise ValueError(f"data is truncated: {len(data)} bytes, the header of {count} "
                         f"sub-filters alone is {head}")
    fields = _read_header(data[:head])
    expect_length(data, head + sum(link[0] for link in fields),
                  f"a chain of {count} sub-filters")
    new = _from_fields(cls, data[:head], fields)
    offset = head
    for link in new.links:
        link.data[:] = np.frombuffer(data, dtype=np.uint8, count=link.nbytes, offset=offset)
        offset += link.nbytes
    return new


def load_chunks(cls, pairs: Iterable[tuple[int, bytes]]):
    """:meth:`~bloomedu.compat.redisbloom.RedisBloomFilter.loadchunks`: every pair read and
    checked, then one :func:`read`."""
    pairs = iter(pairs)
    first = next(pairs, None)
    if first is None or first[0] != 1:
        raise ValueError("the first pair must be the header, with iterator 1")
    header = as_bytes(first[1]).tobytes()  # bytes(n) of an int would allocate n zeros
    sizes = [fields[0] for fields in _read_header(header)]
    pieces = sorted((_chunk_offset(iterator, len(data), sizes), data.tobytes())
                    for iterator, data in ((iterator, as_bytes(data)) for iterator, data in pairs))
    covered = 0
    for offset, data in pieces:
        if offset != covered:
            break
        covered += len(data)
    if covered != sum(sizes) or len(pieces) and pieces[-1][0] + len(pieces[-1][1]) != covered:
        raise ValueError("received bad data: the chunks do not hold every byte of the "
                         "sub-filters exactly once")
    return cls.from_bytes(header + b"".join(data for _, data in pieces))


def _read_header(header) -> list[tuple]:
    """Each sub-filter's fields, checked as the module checks them (and each one's size
    against its entries and error, which leaves no room for a forged k or size)."""
    if len(header) < HEADER.size or \
            len(header) != HEADER.size + LINK.size * HEADER.unpack_from(header)[1]:
        raise ValueError("received bad data: the header's length does not match its "
                         "number of sub-filters")
    size, count, options, _ = HEADER.unpack_from(header)
    if options & ~(NOROUND | ENTS_IS_BITS | FORCE64 | NO_SCALING):
        raise ValueError(f"received bad data: unknown options {options:#x}")
    if options & ~NO_SCALING != FORCE64 | NOROUND:
        raise ValueError(f"options {options:#x}: this model reads the filters BF.RESERVE and "
                         "BF.ADD make (FORCE64 | NOROUND, and NONSCALING); older layouts "
                         "are not supported")
    links = [LINK.unpack_from(header, HEADER.size + index * LINK.size) for index in range(count)]
    for index, (nbytes, bits, link_size, error, bpe, hashes, entries, n2) in enumerate(links):
        if not 0 < error < 1 or bits == 0 or bits != nbytes * 8 or n2 != 0 or \
                bpe != bits_per_entry(error) or hashes != int(math.ceil(LN2 * bpe)) or \
                nbytes != link_bytes(entries, bpe) or link_size > entries:
            raise ValueError(f"received bad data: sub-filter {index} fails the module's "
                             "integrity check")
    if sum(link[2] for link in links) != size:
        raise ValueError("received bad data: the sub-filters' sizes do not add up")
    return links


def _from_fields(cls, header, links: list[tuple]):
    """A filter of the header's sub-filters, their bits all 0 (memory checked first)."""
    check_storage(sum(link[0] for link in links), f"a chain of {len(links)} sub-filters")
    size, _, options, expansion = HEADER.unpack_from(header)
    new = cls.__new__(cls)
    new.options, new.expansion, new.size, new.links = options, expansion, size, []
    for nbytes, bits, link_size, error, bpe, hashes, entries, n2 in links:
        link = SubFilter()
        link.nbytes, link.bits, link.size = nbytes, bits, link_size
        link.error, link.bpe = error, bpe
        link.hashes, link.entries, link.n2 = hashes, entries, n2
        link.data = np.zeros(nbytes, dtype=np.uint8)
        new.links.append(link)
    first = new.links[0] if new.links else None
    new.capacity = first.entries if first else 0
    new.error_rate = first.error / (1.0 if new.nonscaling else TIGHTENING) if first else 0.0
    return new


def _chunk_offset(iterator: int, length: int, sizes: list[int]) -> int:
    """Where a ``BF.LOADCHUNK`` piece of ``length`` bytes goes among sub-filters of ``sizes``
    bytes, as the module finds it: its iterator is one past the piece's last byte."""
    if iterator <= 0 or iterator < length:
        raise ValueError(f"received bad data: iterator {iterator} for {length} bytes")
    offset = start = iterator - length - 1
    for size in sizes:
        if offset < size:
            if length > size - offset:
                raise ValueError("invalid chunk - Too big for current filter")
            return start
        offset -= size
    raise ValueError("invalid offset - no link found")
