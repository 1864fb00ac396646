"""MurmurHash64A (Austin Appleby's 64-bit MurmurHash2), one key at a time and in numpy.

RedisBloom hashes every item twice with it (``deps/murmur2/MurmurHash2.c`` in
RedisBloom's source): a = MurmurHash64A(item, 0xc6a4a7935bd1e995), then
b = MurmurHash64A(item, a).  The item is read as little-endian 64-bit blocks,
then a tail of 0 to 7 bytes (the byte order of the x86-64 and ARM64 machines
Redis runs on).

:func:`murmurhash64a` is the readable version; :func:`murmurhash64a_many`
hashes a whole batch of items of any lengths in numpy and equals it bit for
bit (``tests/test_redisbloom_model.py`` checks both against each other with
hypothesis, and against hashes recorded from the running module).  Used by
:mod:`bloomedu.compat.redisbloom`; taught in
``notebooks/17_redisbloom.ipynb``.
"""

from __future__ import annotations

import struct

import numpy as np

__all__ = ["M64", "SEED", "murmurhash64a", "murmurhash64a_many", "pack_items"]

M64 = 0xC6A4A7935BD1E995       # the multiplier, also RedisBloom's first seed
SEED = M64
_MASK = (1 << 64) - 1
_R = 47
_M = np.uint64(M64)
_R47 = np.uint64(_R)
_EIGHT = np.arange(8, dtype=np.int64)
# The tail's bytes kept for a tail of r = 0..7 bytes (little-endian: the low r bytes).
_TAIL_MASKS = np.array([(1 << (8 * r)) - 1 for r in range(8)], dtype=np.uint64)
_SCALAR_BELOW = 16  # keys still running in a round of fewer: finished one by one


def murmurhash64a(data: bytes, seed: int = SEED) -> int:
    """MurmurHash64A of ``data`` with a 64-bit ``seed``, as an unsigned int.

    >>> hex(murmurhash64a(b"")), hex(murmurhash64a(b"123"))
    ('0x1ab11ea5a7b2c56e', '0x840f45b15008893e')
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be bytes, not {type(data).__name__}")
    data = bytes(data)
    length = len(data)
    h = (seed ^ (length * M64)) & _MASK
    whole = length - length % 8
    for (k,) in struct.iter_unpack("<Q", data[:whole]):
        k = (k * M64) & _MASK
        k ^= k >> _R
        k = (k * M64) & _MASK
        h = ((h ^ k) * M64) & _MASK
    tail = data[whole:]
    if tail:
        h = ((h ^ int.from_bytes(tail, "little")) * M64) & _MASK
    h ^= h >> _R
    h = (h * M64) & _MASK
    return h ^ (h >> _R)


def pack_items(items: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The items joined in one buffer (padded by 8 zero bytes), their offsets and lengths.

    >>> buffer, offsets, lengths = pack_items([b"ab", b"", b"cde"])
    >>> bytes(buffer), offsets.tolist(), lengths.tolist()
    (b'abcde\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00', [0, 2, 2], [2, 0, 3])
    """
    lengths = np.fromiter(map(len, items), dtype=np.int64, count=len(items))
    offsets = np.zeros(len(items), dtype=np.int64)
    np.cumsum(lengths[:-1], out=offsets[1:])
    buffer = np.frombuffer(b"".join(items) + bytes(8), dtype=np.uint8)
    return buffer, offsets, lengths


def _mix_blocks(blocks: np.ndarray) -> np.ndarray:
    """k *= m; k ^= k >> r; k *= m, for every 64-bit block (in place)."""
    blocks *= _M
    blocks ^= blocks >> _R47
    blocks *= _M
    return blocks


def _blocks_at(buffer: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The little-endian 64-bit words that start at each byte offset in ``starts``."""
    return buffer[starts[:, None] + _EIGHT].view("<u8").ravel().astype(np.uint64)


def murmurhash64a_many(buffer: np.ndarray, offsets: np.ndarray, lengths: np.ndarray,
                       seeds) -> np.ndarray:
    """MurmurHash64A of every item in a :func:`pack_items` buffer, each with its seed.

    ``seeds``: one int for all, or a uint64 array (RedisBloom's second hash is
    seeded with each item's first).  Items are hashed a block at a time in
    numpy, longest first; the few longest finish one by one, their blocks
    mixed in numpy.

    >>> packed = pack_items([b"", b"123", b"a longer item"])
    >>> [int(h) for h in murmurhash64a_many(*packed, SEED)] == [
    ...     murmurhash64a(b""), murmurhash64a(b"123"), murmurhash64a(b"a longer item")]
    True
    """
    count = lengths.size
    with np.errstate(over="ignore"):
        h = lengths.astype(np.uint64) * _M
        h ^= np.asarray(seeds, dtype=np.uint64)
        num_blocks = lengths // 8
        order = np.argsort(-num_blocks, kind="stable")  # longest first: a round's keys are a prefix
        blocks_sorted = num_blocks[order]
        starts = offsets[order]
        hs = h[order]
        rounds = int(blocks_sorted[0]) if count else 0
        # active[j]: how many keys have more than j blocks
        active = np.searchsorted(-blocks_sorted, -np.arange(rounds), side="left") if rounds else []
        for j in range(rounds):
            running = int(active[j])
            if running < _SCALAR_BELOW:
                _finish_one_by_one(buffer, starts[:running], blocks_sorted[:running], j, hs)
                break
            k = _mix_blocks(_blocks_at(buffer, starts[:running] + 8 * j))
            hs[:running] ^= k
            hs[:running] *= _M
        h[order] = hs
        tails = lengths & 7
        tail = _blocks_at(buffer, offsets + 8 * num_blocks) & _TAIL_MASKS[tails]
        with_tail = tails > 0
        h[with_tail] = (h[with_tail] ^ tail[with_tail]) * _M
        h ^= h >> _R47
        h *= _M
        h ^= h >> _R47
    return h


def _finish_one_by_one(buffer: np.ndarray, starts: np.ndarray, num_blocks: np.ndarray,
                       first: int, hs: np.ndarray) -> None:
    """The blocks from ``first`` on of a few long keys: mixed in numpy, chained in Python."""
    for i in range(starts.size):
        start, stop = int(starts[i]) + 8 * first, int(starts[i]) + 8 * int(num_blocks[i])
        mixed = _mix_blocks(buffer[start:stop].view("<u8").astype(np.uint64)).tolist()
        h = int(hs[i])
        for k in mixed:
            h = ((h ^ k) * M64) & _MASK
        hs[i] = h
