"""The numpy kernels of :class:`~bloomedu.variants.blocked.BlockedBloomFilter`.

A filter is an array of 32-bit words, eight to a 256-bit block.  A key's block is
read as one 32-byte row (a ``take`` on a ``V32`` view: one cache miss), its eight
masks are ORed in and the row is written back.

Writing rows back with ``words[block] = rows`` keeps one row per block when two
keys of a batch share a block (which one numpy does not promise).  So each chunk
of keys first finds, from its hashes alone, the keys whose block another key of
the chunk also uses (:class:`Batch`): tag a table at slot ``block mod 2**18`` with
each key's number and read the tags back; a key that finds another number shares
its slot, and a second write marks every key of such a slot; sorting the marked
keys by block keeps those that really share one.  A running OR of their masks
inside each block gives every key what the earlier keys of its block set (for
``add_many_new``) and every row the OR of all its keys, so all the writes to one
block carry the same row.  The other keys are alone in their block: read, OR and
write back 4,096 at a time, while their rows are still in L2.

Tested in ``tests/test_blocked.py``.
"""

from __future__ import annotations

import threading

import numpy as np

from ..core.checks import MAX_NUM_BITS, whole_number, zeros

__all__ = ["SALTS", "Batch", "aligned_words", "block_index", "masks", "apply", "contains",
           "popcount", "mean_block_rate"]

SALTS = np.array([0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D,
                  0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31], dtype=np.uint32)
APPLY_KEYS = 1 << 12  # keys per write-back: their 4,096 rows stay in L2 between read and write
_TAG_SLOTS = 1 << 18  # 1 MiB of tags: at 32,768 keys a chunk, 1 in 8 shares a slot by chance
_THIRTY_TWO, _TWENTY_SEVEN = np.uint64(32), np.uint32(27)
_THREAD = threading.local()  # one tag table per thread (batches are built on worker threads)
_BIT_COUNTS = np.array([bin(byte).count("1") for byte in range(256)], dtype=np.uint8)

LINE_BYTES = 64  # a cache line


def aligned_words(count: int) -> np.ndarray:
    """``count`` zeroed little-endian uint32 words whose first byte starts a cache line.

    numpy aligns its arrays to 16 bytes only; a 32-byte block at offset 48 of a line would
    touch two lines.

    >>> aligned_words(16).ctypes.data % 64
    0
    """
    count = whole_number(count, "count", 0, MAX_NUM_BITS // 32)
    raw = zeros(4 * count + LINE_BYTES, f"{count} words").view("<u4")
    skip = (-raw.ctypes.data % LINE_BYTES) // 4
    return raw[skip:skip + count]


def block_index(h: np.ndarray, num_blocks: int) -> np.ndarray:
    """Each hash's block: ``((h >> 32) * num_blocks) >> 32`` (exact in uint64: both < 2**32).

    >>> block_index(np.array([2**63, 2**64 - 1], dtype=np.uint64), 10).tolist()
    [5, 9]
    """
    top = h >> _THIRTY_TWO
    top *= np.uint64(num_blocks)
    top >>= _THIRTY_TWO
    return top.astype(np.intp)


def masks(h: np.ndarray) -> np.ndarray:
    """Each hash's eight word masks, ``1 << ((h mod 2**32) * SALT[w] mod 2**32 >> 27)``, (n, 8).

    Computed one word at a time over all the keys (an inner loop of n, not of 8).

    >>> masks(np.array([0], dtype=np.uint64)).tolist()
    [[1, 1, 1, 1, 1, 1, 1, 1]]
    """
    low = h.astype(np.uint32)  # h mod 2**32
    shifts = np.empty_like(low)
    out = np.empty((h.size, 8), dtype=np.uint32)
    for w, salt in enumerate(SALTS):
        np.multiply(low, salt, out=shifts)  # wraps modulo 2**32
        shifts >>= _TWENTY_SEVEN
        np.left_shift(np.uint32(1), shifts, out=out[:, w])
    return out


def _covered(key_masks: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Whether every mask bit is set in its row: the 8 words read as 4 uint64."""
    missing = np.bitwise_and(key_masks, ~rows).view(np.uint64)
    missing[:, 0] |= missing[:, 1]
    missing[:, 2] |= missing[:, 3]
    missing[:, 0] |= missing[:, 2]
    return missing[:, 0] == 0


def _rows(words: np.ndarray, block: np.ndarray) -> np.ndarray:
    """The 32-byte rows of ``block``, as (n, 8) words: one ``take`` of a ``V32`` view."""
    return words.view("V32").take(block).view("<u4").reshape(-1, 8)


def contains(words: np.ndarray, block: np.ndarray, key_masks: np.ndarray) -> np.ndarray:
    """For each key, whether its 8 bits are set.

    >>> words = np.zeros(8, dtype="<u4"); words[:] = 1
    >>> contains(words, np.array([0, 0]), masks(np.array([0, 1], dtype=np.uint64))).tolist()
    [True, False]
    """
    return _covered(key_masks, _rows(words, block))


class Batch:
    """One chunk of keys ready to write: the keys alone in their block this chunk, and the
    keys that share one, sorted by block, then batch order, with what each must OR in.

    Built from hashes alone (on a worker thread); :func:`apply` then touches the filter.

    >>> batch = Batch(np.array([3, 1, 3], dtype=np.intp), masks(np.arange(3, dtype=np.uint64)))
    >>> batch.alone.tolist(), batch.shared.tolist()
    ([1], [0, 2])
    """

    __slots__ = ("size", "alone", "alone_block", "alone_masks", "shared", "shared_block",
                 "shared_masks", "shared_before", "shared_total")

    def __init__(self, block: np.ndarray, key_masks: np.ndarray):
        self.size = block.size
        shared = _sharing_candidates(block)
        if shared.size:  # keep the keys whose block really has another key this chunk
            shared = _by_block(block, shared)
            blocks_in_order = block.take(shared)
            first = np.r_[True, blocks_in_order[1:] != blocks_in_order[:-1]]
            last = np.r_[first[1:], True]
            keep = ~(first & last)
            shared, first = shared[keep], first[keep]
        alone = np.ones(block.size, dtype=bool)
        alone[shared] = False
        self.alone = np.flatnonzero(alone)
        self.alone_block = block.take(self.alone)  # take(axis=0): far faster than [rows]
        self.alone_masks = key_masks.take(self.alone, axis=0)
        self.shared, self.shared_block = shared, block.take(shared)
        self.shared_masks = key_masks.take(shared, axis=0)
        if shared.size:
            self.shared_before, self.shared_total = _group_ors(self.shared_masks, first)


def _sharing_candidates(block: np.ndarray) -> np.ndarray:
    """The keys whose tag slot (``block mod 2**18``) another key also takes: every key that
    shares a block, and about 1 in 8 others (at 32,768 keys a chunk)."""
    slots = block & (_TAG_SLOTS - 1)
    numbers = np.arange(block.size, dtype=np.int32)
    tags = _tag_table()
    tags[slots] = numbers  # one number per slot survives, whichever numpy writes last
    lost = tags.take(slots) != numbers
    if not lost.any():
        return np.zeros(0, dtype=np.intp)
    tags[slots[lost]] = -1  # every slot with two or more keys
    return np.flatnonzero(tags.take(slots) == -1)


def _tag_table() -> np.ndarray:
    """This thread's tag table (only slots written in the same call are ever read)."""
    tags = getattr(_THREAD, "tags", None)
    if tags is None:
        tags = _THREAD.tags = np.empty(_TAG_SLOTS, dtype=np.int32)
    return tags


def _by_block(block: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """``candidates`` (increasing key numbers) sorted by block, then by key number."""
    packed = block.take(candidates).astype(np.int64) << 32 | candidates  # block < 2**32
    packed.sort()
    return packed & 0xFFFFFFFF


def _group_ors(ordered: np.ndarray, first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For (n, 8) masks sorted by group (``first`` marks each group's start): the OR of the
    masks before each one in its group, and the OR of its whole group.

    A running OR inside each group by doubling steps (Hillis and Steele's scan), on the
    masks read as one flat array of 8n words so every numpy loop runs over n, not 8.
    """
    group = np.cumsum(first) - 1
    running = ordered.copy()
    flat = running.reshape(-1)
    step = 1
    while step < ordered.shape[0]:
        same = group[step:] == group[:-step]
        if not same.any():
            break
        flat[8 * step:] |= flat[:-8 * step] * np.repeat(same, 8)
        step *= 2
    before = np.zeros_like(running)
    before[1:] = running[:-1]
    before.reshape(-1)[np.repeat(first, 8)] = 0  # the first key of a group sees the old row
    last = np.flatnonzero(np.r_[first[1:], True])
    return before, running.take(last, axis=0).take(group, axis=0)


def apply(words: np.ndarray, batch: Batch, report: bool) -> np.ndarray | None:
    """OR every key's masks into its block, keys in order; with ``report``, whether each
    key's bits were all set already when its turn came (earlier keys of the batch count).

    >>> words = np.zeros(16, dtype="<u4")
    >>> key_masks = masks(np.array([5, 6, 5], dtype=np.uint64))
    >>> apply(words, Batch(np.array([1, 1, 1]), key_masks), report=True).tolist()
    [False, False, True]
    >>> words[8:].tolist() == (key_masks[0] | key_masks[1]).tolist()
    True
    """
    present = np.empty(batch.size, dtype=bool) if report else None
    rows_of = words.view("V32")
    for start in range(0, batch.alone.size, APPLY_KEYS):  # read and write back while in L2
        block = batch.alone_block[start:start + APPLY_KEYS]
        key_masks = batch.alone_masks[start:start + APPLY_KEYS]
        rows = _rows(words, block)
        if report:
            present[batch.alone[start:start + APPLY_KEYS]] = _covered(key_masks, rows)
        rows |= key_masks
        rows_of[block] = rows.view("V32").ravel()
    if batch.shared.size:  # blocks of several keys: every write to one block carries one row
        rows = _rows(words, batch.shared_block)
        if report:
            present[batch.shared] = _covered(batch.shared_masks, rows | batch.shared_before)
        rows |= batch.shared_total
        rows_of[batch.shared_block] = rows.view("V32").ravel()
    return present


def popcount(words: np.ndarray) -> int:
    """Number of 1 bits, counted a megabyte at a time.

    >>> popcount(np.array([3, 2**31], dtype="<u4"))
    3
    """
    octets = words.view(np.uint8)
    return sum(int(_BIT_COUNTS.take(octets[start:start + (1 << 20)]).sum(dtype=np.int64))
               for start in range(0, octets.size, 1 << 20))


def mean_block_rate(words: np.ndarray) -> float:
    """The mean over blocks of the product of the 8 words' fill ratios (32 bits each).

    >>> mean_block_rate(np.full(16, 2**32 - 1, dtype="<u4"))
    1.0
    """
    octets = words.view(np.uint8).reshape(-1, 8, 4)
    total = 0.0
    for start in range(0, octets.shape[0], 1 << 15):
        counts = _BIT_COUNTS.take(octets[start:start + (1 << 15)]).sum(axis=2, dtype=np.int64)
        total += float(np.prod(counts / 32.0, axis=1).sum())
    return total / octets.shape[0]
