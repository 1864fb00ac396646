"""CF.SCANDUMP's chunks and what CF.LOADCHUNK accepts, for RedisBloom's cuckoo filter.

``CF.SCANDUMP`` (``CF_GetEncodedChunk`` in RedisBloom 2.8.2's ``src/cf.c``) answers, for a
filter with items, (1, a 38-byte header) and then each sub-filter's bytes in pieces of at
most 16 MiB, each with the iterator that follows it; ``CF.LOADCHUNK`` replays them:
``CFHeader_Load`` checks the header (``CuckooFilter_ValidateIntegrity``) and allocates the
sub-filters it asks for, ``CF_LoadEncodedChunk`` copies a piece to the place its iterator
names.  :func:`load` refuses, with a ``ValueError`` naming the chunk, what the module
refuses, and also a header whose sub-filters need more bytes than the chunks carry (the
module would allocate them: a forged 38-byte header can ask for petabytes).

Used by :class:`bloomedu.compat.redisbloom_cuckoo.RedisCuckooFilter`; tested in
``tests/test_cuckoo_redis_model.py`` and ``tests/test_cuckoo_redis.py``.
"""

from __future__ import annotations

from ..core.checks import check_storage, is_int
from .redisbloom_cuckoo_parts import HEADER, MAX_BUCKET_SIZE, MAX_NUM_BUCKETS, SubCuckoo, check_buckets
from .redisbloom_parts import MAX_CHUNK

__all__ = ["chunks", "header", "load", "load_chunk"]


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
    new = cls.__new__(cls)
    (new.num_items, new.num_buckets, new.num_deletes, num_filters, new.bucket_size,
     new.max_iterations, new.expansion) = HEADER.unpack(head)
    num_filters &= 0xFFFF  # the module keeps the count in 16 bits
    _check_header(new, num_filters)
    carried = sum(len(data) for _, data in chunks[1:])
    sizes, total, buckets = [], 0, new.num_buckets
    for i in range(num_filters):  # sub-filter i: num_buckets * expansion ** i buckets
        sizes.append(buckets)
        total += buckets * new.bucket_size
        if total > carried:  # stop before the numbers grow: a forged header asks for 2**1000
            break
        buckets *= new.expansion
    if carried != total or len(sizes) != num_filters:
        asked = f"{total} bytes" if len(sizes) == num_filters else f"over {carried} bytes"
        raise ValueError(f"the header asks for {num_filters} sub-filter(s) of {asked} in "
                         f"all, and the chunks after it carry {carried}")
    for i, buckets in enumerate(sizes):
        check_buckets(buckets, new.bucket_size, f"chunks[0]'s sub-filter {i}", loaded=True)
    check_storage(total, "chunks[0] (the header)")
    new.filters = [SubCuckoo(buckets, new.bucket_size) for buckets in sizes]
    for i, (position, data) in enumerate(chunks[1:], 1):
        load_chunk(new, position, data, i)
    return new

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
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"chunks[{i}]'s data must be bytes, not {type(data).__name__}")
    return int(position), bytes(data)


def _check_header(new, num_filters: int) -> None:
    """``CuckooFilter_ValidateIntegrity``: what CF.LOADCHUNK refuses in a header."""
    problems = [(not 1 <= new.bucket_size <= MAX_BUCKET_SIZE, f"bucket size {new.bucket_size}"),
                (not 1 <= new.num_buckets <= MAX_NUM_BUCKETS
                 or new.num_buckets & (new.num_buckets - 1), f"{new.num_buckets} buckets"),
                (num_filters == 0, "0 sub-filters (mod 2**16)"),
                (new.max_iterations == 0, "max iterations 0")]
    for bad, what in problems:
        if bad:
            raise ValueError(f"chunks[0] is a header of {what} (CF.LOADCHUNK: Couldn't create filter!)")
