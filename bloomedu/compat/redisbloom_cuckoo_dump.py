"""CF.SCANDUMP's chunks and what CF.LOADCHUNK accepts, for RedisBloom's cuckoo filter.

``CF.SCANDUMP`` (``CF_GetEncodedChunk`` in RedisBloom 2.8.2's ``src/cf.c``) answers, for a
filter with items, (1, a 38-byte header) and then each sub-filter's bytes in pieces of at
most 16 MiB, each with the iterator that follows it; ``CF.LOADCHUNK`` replays them:
``CFHeader_Load`` checks the header (``CuckooFilter_ValidateIntegrity``) and allocates the
sub-filters it asks for, ``CF_LoadEncodedChunk`` copies a piece to the place its iterator
names.  :func:`load` refuses, with a ``ValueError`` naming the chunk, what the module
refuses, and also a header whose sub-filters need more bytes than the chunks carry (the
module would allocate them: a forged 38-byte header can ask for petabytes).  The same dump as
one string (the header, then every sub-filter's bytes: :func:`joined`) is the filter's
``to_bytes``, read back by :func:`read` through :mod:`bloomedu.core.serial`'s checks.

Used by :class:`bloomedu.compat.redisbloom_cuckoo.RedisCuckooFilter`; tested in
``tests/test_cuckoo_redis_model.py`` and ``tests/test_cuckoo_redis.py``.
"""

from __future__ import annotations

from ..core.checks import check_storage, is_int
from ..core.serial import as_bytes, expect_length
from .redisbloom_cuckoo_subfilter import HEADER, MAX_BUCKET_SIZE, MAX_NUM_BUCKETS, SubCuckoo, check_buckets
from .redisbloom_subfilter import MAX_CHUNK

__all__ = ["chunks", "header", "joined", "load", "load_chunk", "read"]


def header(f) -> bytes:
    """The 38-byte header of a filter (``fillCFHeader``).

    >>> from bloomedu.compat.redisbloom_cuckoo import RedisCuckooFilter
    >>> header(RedisCuckooFilter(8)).hex()
    '0000000000000000040000000000000000000000000000000100000000000000020014000100'
    """
    return HEADER.pack(f.num_items, f.num_buckets, f.num_deletes, len(f.filters),
                       f.bucket_size, f.max_iterations, f.expansion)


def chunks(f) -> list[tuple[int, bytes]]:
    """The header and every piece ``CF_GetEncodedChunk`` returns, each after its iterator.

    >>> from bloomedu.compat.redisbloom_cuckoo import RedisCuckooFilter
    >>> [(iterator, len(data)) for iterator, data in chunks(RedisCuckooFilter(8))]
    [(1, 38), (9, 8)]
    """
    pairs, position = [(1, header(f))], 1
    for sub in f.filters:
        size = sub.nbytes
        for start in range(0, size, MAX_CHUNK):
            piece = bytes(sub.data[start:start + MAX_CHUNK])
            position += len(piece)
            pairs.append((position, piece))
    return pairs


def load(cls, chunks):
    """What :meth:`~bloomedu.compat.redisbloom_cuckoo.RedisCuckooFilter.loadchunks` returns:
    the header checked as ``CuckooFilter_ValidateIntegrity`` checks it, its sizes against the
    bytes the chunks carry (before anything is allocated), then each chunk copied where its
    iterator says.

    >>> from bloomedu.compat.redisbloom_cuckoo import RedisCuckooFilter
    >>> load(RedisCuckooFilter, [(1, bytes(38))])
    Traceback (most recent call last):
    ValueError: chunks[0] is a header of bucket size 0 (CF.LOADCHUNK: Couldn't create filter!)
    """
    chunks = [_chunk(pair, i) for i, pair in enumerate(chunks)]
    if not chunks or chunks[0][0] != 1:
        raise ValueError("chunks must start with the header, (1, data): CF.LOADCHUNK "
                         "answers 'ERR not found' to a chunk for a key that has no filter")
    head = chunks[0][1]
    if len(head) != HEADER.size:
        raise ValueError(f"chunks[0] is {len(head)} bytes: a header is {HEADER.size} "
                         "(CF.LOADCHUNK: Invalid header)")
    carried = sum(len(data) for _, data in chunks[1:])
    new, sizes, total = _from_header(cls, head, carried, "chunks[0]")
    if carried != total or len(sizes) != len(new.filters):
        asked = f"{total} bytes" if len(sizes) == len(new.filters) else f"over {carried} bytes"
        raise ValueError(f"the header asks for {len(new.filters)} sub-filter(s) of {asked} in "
                         f"all, and the chunks after it carry {carried}")
    _allocate(new, sizes, "chunks[0]")
    for i, (position, data) in enumerate(chunks[1:], 1):
        load_chunk(new, position, data, i)
    return new


def joined(f) -> bytes:
    """The dump as one string: the header, then every sub-filter's bytes in order (what the
    data of all of ``CF.SCANDUMP``'s pairs joined make, the header included even when empty).

    >>> from bloomedu.compat.redisbloom_cuckoo import RedisCuckooFilter
    >>> len(joined(RedisCuckooFilter(8)))   # 38 + 4 buckets of 2
    46
    """
    return b"".join([header(f), *(bytes(sub.data) for sub in f.filters)])


def read(cls, data):
    """What :meth:`~bloomedu.compat.redisbloom_cuckoo.RedisCuckooFilter.from_bytes` returns:
    the header checked as CF.LOADCHUNK checks it, then the length its sub-filters imply
    (:func:`~bloomedu.core.serial.expect_length`), before anything is allocated.

    >>> from bloomedu.compat.redisbloom_cuckoo import RedisCuckooFilter
    >>> read(RedisCuckooFilter, joined(RedisCuckooFilter(8))[:-1])
    Traceback (most recent call last):
    ValueError: data is truncated: 45 bytes, a filter of 1 sub-filter(s) of 4 buckets of 2 takes 46
    """
    data = as_bytes(data)
    if len(data) < HEADER.size:
        raise ValueError(f"data is truncated: {len(data)} bytes, the header alone is "
                         f"{HEADER.size}")
    new, sizes, total = _from_header(cls, data[:HEADER.size], len(data) - HEADER.size,
                                     "data's header")
    what = f"a filter of {len(new.filters)} sub-filter(s) of {new.num_buckets} buckets of " \
           f"{new.bucket_size}"
    expect_length(data, HEADER.size + total, what)
    _allocate(new, sizes, "data's header")
    offset = HEADER.size
    for sub in new.filters:
        sub.data[:] = data[offset:offset + sub.nbytes]
        offset += sub.nbytes
    return new


def _from_header(cls, head, carried: int, where: str):
    """(a filter with the header's fields and no sub-filter yet, the buckets of each
    sub-filter, their bytes in all); the sizes are summed only while they stay within the
    ``carried`` bytes (a forged header asks for 2**1000), so fewer sizes than sub-filters
    means more than ``carried``."""
    new = cls.__new__(cls)
    (new.num_items, new.num_buckets, new.num_deletes, num_filters, new.bucket_size,
     new.max_iterations, new.expansion) = HEADER.unpack(head)
    num_filters &= 0xFFFF  # the module keeps the count in 16 bits
    _check_header(new, num_filters, where)
    sizes, total, buckets = [], 0, new.num_buckets
    for _ in range(num_filters):  # sub-filter i: num_buckets * expansion ** i buckets
        sizes.append(buckets)
        total += buckets * new.bucket_size
        if total > carried:
            break
        buckets *= new.expansion
    new.filters = [None] * num_filters  # counted here, made by _allocate
    return new, sizes, total


def _allocate(new, sizes: list[int], where: str) -> None:
    """Make the sub-filters, once their sizes have been checked against the input."""
    for i, buckets in enumerate(sizes):
        check_buckets(buckets, new.bucket_size, f"{where}'s sub-filter {i}", loaded=True)
    check_storage(sum(sizes) * new.bucket_size, f"{where} (the header)")
    new.filters = [SubCuckoo(buckets, new.bucket_size) for buckets in sizes]


def load_chunk(f, position: int, data: bytes, i: int) -> None:
    """``CF_LoadEncodedChunk``: copy ``data`` to where its iterator says it ends."""
    refused = ValueError(f"chunks[{i}] = ({position}, {len(data)} bytes) does not fit the "
                         "filter (CF.LOADCHUNK: Couldn't load chunk!)")
    if position == 1:
        raise ValueError(f"chunks[{i}] is a second header (CF.LOADCHUNK: item exists)")
    if not data or position <= 0 or position - 1 < len(data):
        raise refused
    offset = position - len(data) - 1
    for sub in f.filters:
        if offset < sub.nbytes:
            break
        offset -= sub.nbytes
    if offset + len(data) > sub.nbytes:
        raise refused
    sub.data[offset:offset + len(data)] = data


def _chunk(pair, i: int) -> tuple[int, bytes]:
    """One (iterator, data) pair, checked for its types."""
    try:
        position, data = pair
    except (TypeError, ValueError):
        raise TypeError(f"chunks[{i}] must be an (iterator, data) pair, not "
                        f"{type(pair).__name__}") from None
    if not is_int(position):
        raise TypeError(f"chunks[{i}]'s iterator must be an int, not {type(position).__name__}")
    if position == 0:
        raise ValueError(f"chunks[{i}]'s iterator is 0 (CF.LOADCHUNK: Invalid position)")
    return int(position), bytes(as_bytes(data, f"chunks[{i}]'s data"))


def _check_header(new, num_filters: int, where: str) -> None:
    """``CuckooFilter_ValidateIntegrity``: what CF.LOADCHUNK refuses in a header."""
    problems = [(not 1 <= new.bucket_size <= MAX_BUCKET_SIZE, f"bucket size {new.bucket_size}"),
                (not 1 <= new.num_buckets <= MAX_NUM_BUCKETS
                 or new.num_buckets & (new.num_buckets - 1), f"{new.num_buckets} buckets"),
                (num_filters == 0, "0 sub-filters (mod 2**16)"),
                (new.max_iterations == 0, "max iterations 0")]
    for bad, what in problems:
        if bad:
            raise ValueError(f"{where} is a header of {what} (CF.LOADCHUNK: Couldn't create filter!)")
