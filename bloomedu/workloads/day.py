"""A whole day of clicks, fast: article 1's 10,000 messages a second for 24 hours.

Article 1 sizes its problem at 10,000 click messages a second kept for a day,
864,000,000 IDs.  :func:`bloomedu.workloads.clicks.click_stream` builds one
``Click`` object per message, which is right for a lesson and far too slow for
a day; here the same stream comes as numpy arrays, a million messages at a time:
64-bit click IDs (distinct for distinct clicks), and for each message whether it
is the second copy of a double click.

As in ``click_stream``: genuine clicks arrive at random (rate
``rate / (1 + double_click_rate)``), each is doubled with probability
``double_click_rate``, and its copy arrives 0.05 to 1 s later, among the clicks
of that moment.  A copy due after a chunk's last genuine click goes into the next
chunk.  The n-th genuine click's ID is the splitmix64 mix of ``seed * 2**40 + n``,
a bijection of 64-bit words, so no two clicks share an ID by chance.

:func:`deduplicate` runs the day through a filter in three stages that overlap on the
machine's cores (making the stream, hashing, inserting), each on a thread of its own
(:func:`bloomedu.kernels.stages.staged`), with exactly the answers of ``add_many_new``.

Used by ``make bench-day`` (``benchmarks/day.py``); tested in ``tests/test_day.py`` and
``tests/test_day_pipeline.py``.
"""

from __future__ import annotations

import time

from typing import Callable, Iterable, Iterator

import numpy as np

from ..kernels.stages import StageClock, staged
from .clicks import check_count, check_rate, uuid4_text

__all__ = ["CHUNK_MESSAGES", "DAY_MESSAGES", "PIECE_KEYS", "day_chunks", "deduplicate",
           "splitmix64", "uuid_ids"]

DAY_MESSAGES = 10_000 * 86_400  # article 1: 10,000 messages a second for a day
CHUNK_MESSAGES = 1 << 20
_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)
_PIECE = 1 << 16
PIECE_KEYS = 1 << 15  # keys hashed and inserted per step of deduplicate: their work stays in L2


def splitmix64(counters: np.ndarray) -> np.ndarray:
    """Steele, Lea and Flood's splitmix64 output for each 64-bit counter (a bijection).

    Computed 65,536 values at a time, in place, so every pass stays in L2.

    >>> hex(int(splitmix64(np.array([0], dtype=np.uint64))[0]))   # the generator's first output
    '0xe220a8397b1dcdaf'
    """
    out = np.empty(counters.size, dtype=np.uint64)
    for start in range(0, counters.size, _PIECE):
        z = out[start:start + _PIECE]
        np.multiply(counters[start:start + _PIECE], _GAMMA, out=z)
        z += _GAMMA  # the state after one step from seed = counter * gamma
        scratch = np.empty_like(z)
        for shift, multiplier in ((_S30, _M1), (_S27, _M2)):
            z ^= np.right_shift(z, shift, out=scratch)
            z *= multiplier
        z ^= np.right_shift(z, _S31, out=scratch)
    return out


def day_chunks(num_messages: int = DAY_MESSAGES, rate: float = 10_000.0,
               double_click_rate: float = 0.02, seed: int = 0,
               chunk: int = CHUNK_MESSAGES) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(ids, is_copy) arrays, ``num_messages`` messages in all: ``chunk`` genuine clicks
    and the copies due among them at a time.

    ``ids`` are uint64 click IDs in arrival order; ``is_copy`` marks the second
    copy of each double click.  The stream is cut after ``num_messages``: a copy
    due after the cut is not in it.

    No arrival time is drawn for the genuine clicks: with arrivals at random at
    rate r, the number of genuine clicks between a click and its copy d seconds
    later is Poisson with mean r d, which is all the order of the stream needs.

    >>> chunks = list(day_chunks(10_000, rate=100, double_click_rate=0.1, seed=1, chunk=4096))
    >>> sum(ids.size for ids, _ in chunks), int(sum(copy.sum() for _, copy in chunks))
    (10000, 913)
    >>> ids = np.concatenate([ids for ids, _ in chunks])
    >>> copies = np.concatenate([copy for _, copy in chunks])
    >>> bool(np.isin(ids[copies], ids[~copies]).all()), len(set(ids[~copies].tolist()))
    (True, 9087)
    """
    num_messages = check_count(num_messages, "num_messages")
    rate = check_rate(rate, "rate", 1e-9, None)
    double_click_rate = check_rate(double_click_rate, "double_click_rate", 0.0, 1.0)
    chunk = check_count(chunk, "chunk", minimum=1)
    rng = np.random.default_rng(seed)
    genuine_rate = rate / (1.0 + double_click_rate)
    base = np.uint64((int(seed) % (1 << 24)) << 40)  # 2**40 clicks per seed: 3.5 years of them
    genuine, sent = 0, 0  # genuine clicks made, messages sent
    late_after, late_ids = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint64)
    while sent < num_messages:
        ids = splitmix64(base + np.arange(genuine, genuine + chunk, dtype=np.uint64))
        doubled = np.sort(rng.choice(chunk, rng.binomial(chunk, double_click_rate), replace=False))
        between = rng.poisson(genuine_rate * rng.uniform(0.05, 1.0, doubled.size))
        after = np.concatenate([late_after, genuine + doubled + between])  # copy follows this one
        copy_ids = np.concatenate([late_ids, ids[doubled]])
        due = after < genuine + chunk
        late_after, late_ids = after[~due], copy_ids[~due]
        order = np.argsort(after[due], kind="stable")
        places = after[due][order] - genuine + 1 + np.arange(order.size)  # in the merged chunk
        is_copy = np.zeros(chunk + order.size, dtype=bool)
        is_copy[places] = True
        stream = np.empty(is_copy.size, dtype=np.uint64)
        stream[places] = copy_ids[due][order]
        stream[~is_copy] = ids
        count = min(stream.size, num_messages - sent)  # the day ends after num_messages
        yield stream[:count], is_copy[:count]
        genuine, sent = genuine + chunk, sent + count


def uuid_ids(ids: np.ndarray) -> list[str]:
    """The article's 36-character UUID v4 string for each 64-bit click ID (the same ID,
    the same string: a copy of a double click keeps its original's text).

    The 16 random bytes are the ID and splitmix64 of the ID, both little-endian.

    >>> a, b = uuid_ids(np.array([1, 2, 1], dtype=np.uint64))[::2], uuid_ids(np.array([2], dtype=np.uint64))
    >>> a[0] == a[1], len(a[0]), a[0][14], b[0] != a[0]
    (True, 36, '4', True)
    """
    ids = np.ascontiguousarray(ids, dtype=np.uint64)
    raw = np.empty((ids.size, 16), dtype=np.uint8)
    raw[:, :8] = ids.astype("<u8").view(np.uint8).reshape(-1, 8)
    raw[:, 8:] = splitmix64(ids).astype("<u8").view(np.uint8).reshape(-1, 8)
    return [text.decode("ascii") for text in uuid4_text(raw).tolist()]


def _stage_kernels(f, piece: int, in_flight: int) -> tuple[Callable, Callable]:
    """(prepare, write) for filter ``f``: ``prepare(keys)`` does what needs no filter (hashing,
    and for the blocked filter on numpy's kernels the batch of shared blocks); ``write(prepared,
    present)`` inserts in order and sets ``present`` (True: the key was there already).

    On the native kernels the hashes of a uint64 array go into a ring of ``in_flight`` buffers
    made once (no page fault per piece): a buffer is reused only after ``in_flight`` later
    pieces, more than the pipeline ever holds between the two stages."""
    from ..core.hashing import hashed_batches
    from ..kernels import backend
    from ..variants.blocked import BlockedBloomFilter

    if not isinstance(f, BlockedBloomFilter) or type(f) is not BlockedBloomFilter:
        def write_any(keys, present: np.ndarray) -> None:  # any other filter: its add_many_new
            np.logical_not(f.add_many_new(keys), out=present)
        return (lambda keys: keys), write_any

    def h1_of(keys: np.ndarray) -> np.ndarray:
        return next(hashed_batches(keys, None, keys.size))[0]

    if backend.active() == "native":
        from ..kernels import native_murmur

        ring = np.ones((in_flight, piece), dtype=np.uint64)  # touched now, not in the timed part
        scratch = np.empty(piece, dtype=np.uint64)  # h2, unused (the hash stage's own)
        turn = [0]

        def h1_of(keys: np.ndarray, h1_of=h1_of) -> np.ndarray:  # noqa: F811 - the fast case
            if keys.dtype != np.uint64 or not keys.flags.c_contiguous:
                return h1_of(keys)  # any other integer array: the filter's own hashing
            h1 = ring[turn[0] % in_flight, :keys.size]
            turn[0] += 1
            native_murmur.hash_uint64(keys, h1, scratch[:keys.size])
            return h1

    return (lambda keys: f.batch_of(h1_of(keys))), f.add_batch_new


def deduplicate(f, chunks: Iterable[tuple[np.ndarray, np.ndarray]], *,
                clock: StageClock | None = None, workers: int | None = None,
                piece: int = PIECE_KEYS) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(ids, is_copy, dropped) for each chunk of :func:`day_chunks`: ``dropped`` is True where
    the filter already held the ID (``not f.add_many_new(ids)``, bit for bit the same filter).

    Three stages overlap, each on a thread of its own: the stream (``chunks``), hashing a piece
    of ``piece`` keys, and inserting the pieces in order.  ``clock`` receives each stage's
    thread CPU seconds (``stream``, ``hash``, ``insert``); ``workers=1`` runs them one after
    the other in this thread.

    >>> from bloomedu.variants import BlockedBloomFilter
    >>> f = BlockedBloomFilter.from_capacity(20_000, 0.001)
    >>> runs = list(deduplicate(f, day_chunks(20_000, seed=3, chunk=4096)))
    >>> all(dropped[copy].all() for _, copy, dropped in runs)   # every second copy caught
    True
    """
    piece = check_count(piece, "piece", minimum=1)
    clock = clock if clock is not None else StageClock()
    depth = 4  # pieces queued between hashing and inserting (chunks of the stream: 2)
    prepare, write = _stage_kernels(f, piece, in_flight=2 * depth + 4)

    def hashed(chunk):
        ids = chunk[0]
        if ids.size == 0:
            yield chunk, 0, None
        for start in range(0, ids.size, piece):
            yield chunk, start, prepare(ids[start:start + piece])

    dropped = None
    for (ids, is_copy), start, prepared in staged(chunks, hashed, clock=clock, workers=workers,
                                                  names=["stream", "hash"], depth=(2, depth)):
        begun = time.thread_time()
        if start == 0:
            dropped = np.empty(ids.size, dtype=bool)
        if prepared is not None:
            write(prepared, dropped[start:start + piece])
        clock.add("insert", time.thread_time() - begun)
        if start + piece >= ids.size:
            yield ids, is_copy, dropped
