"""Threads: concurrent writes to one filter lose nothing, and no pair of filters deadlocks.

Every filter holds one lock (``bloomedu.core.contract.Filter`` makes it for each instance)
around each write to its bits.  Without it, two threads' read-modify-writes of
the same byte (numpy's fancy-index ``data[i] |= mask``, an in-place ``|=`` with
the GIL released, or the per-key ``data[j] |= mask`` of ``add``) keep only one
of the two writes.  Each test here runs several threads started together at a
barrier, with the interpreter switching threads every microsecond, then
compares the filter with one built by a single thread from the same keys: the
bits must be equal, so the test asserts the same thing on every run.  The
large filter is over 40 Mi bits, where ``add_many`` cannot stage its bits and
writes chunk by chunk.
"""

import pickle
import sys

import numpy as np
import pytest

from bloomedu import (AgePartitionedBloomFilter, BitVector, BloomFilter, CountingBloomFilter,
                      RotatingBloomFilter, SaltedBloomFilter, ScalableBloomFilter,
                      StableBloomFilter)
from bloomedu.compat.bip37 import Bip37Filter
from bloomedu.compat.guava import GuavaBloomFilter
from bloomedu.core.keyed import KeyedBloomFilter
from bloomedu.variants import BlockedBloomFilter
from conformance_support import run_together

SIZES = {"staged": 200_000, "over 40 Mi bits": 3_000_000}  # from_capacity(n, 0.001)


@pytest.fixture(autouse=True)
def switch_often():
    """Hand the GIL between threads every microsecond, so a race shows on the first run."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


def key_sets(seed: int, ints: int, strs: int):
    rng = np.random.default_rng(seed)
    words = [f"https://host{v % 89}.example/{v:x}" for v in rng.integers(0, 2 ** 62, strs)]
    return rng.integers(0, 2 ** 64, ints, dtype=np.uint64), words


@pytest.mark.parametrize("capacity", SIZES.values(), ids=SIZES.keys())
def test_concurrent_add_add_many_or_and_lose_no_key(capacity):
    f = BloomFilter.from_capacity(capacity, 0.001)
    assert f.bits.stages_everything == (capacity < 2_000_000)
    big, small_batches = key_sets(1, 70_000, 0)[0], key_sets(2, 40 * 500, 0)[0].reshape(40, 500)
    words, singles = key_sets(3, 0, 20_000)[1], key_sets(4, 0, 1500)[1]
    ored_ints, ored_words = key_sets(5, 20_000, 2000)
    ored = BloomFilter(f.num_bits, f.num_hashes)
    ored.add_many(ored_ints)
    ored.add_many(ored_words)
    everything = BloomFilter(f.num_bits, f.num_hashes)  # one thread, the same keys
    for keys in (big, small_batches, words, singles, ored_ints, ored_words):
        everything.add_many(keys)

    writers = [
        lambda: f.add_many(big),  # more positions than m/64: the scratch or the sorted path
        lambda: [f.add_many(batch) for batch in small_batches],  # np.bitwise_or.at
        lambda: [f.add_many(words[i:i + 1000]) for i in range(0, len(words), 1000)],
        lambda: [f.add(key) for key in singles],
    ]
    finished = []

    def in_place_union_and_intersection():  # for as long as the writers write
        while len(finished) < len(writers):
            f.__ior__(ored)
            f.__iand__(everything)  # clears no bit any key sets: must not undo a concurrent add

    run_together([lambda job=job: (job(), finished.append(job)) for job in writers]
                 + [in_place_union_and_intersection])
    assert f.bits == everything.bits
    for keys in (big, small_batches, words, singles, ored_ints, ored_words):
        assert f.contains_many(keys).all()


def test_crossed_unions_do_not_deadlock():
    a, b = BloomFilter(1 << 20, 3), BloomFilter(1 << 20, 3)
    a.add_many(np.arange(1000, dtype=np.uint64))
    b.add_many(np.arange(1000, 2000, dtype=np.uint64))

    def union(target, source):
        for _ in range(300):
            target |= source

    run_together([lambda: union(a, b), lambda: union(b, a), lambda: union(a, a)], timeout=30)
    assert a == b and a.contains_many(np.arange(2000, dtype=np.uint64)).all()


def test_reads_during_writes_never_miss_a_key_whose_add_returned():
    f = BloomFilter.from_capacity(100_000, 0.001)
    added, misses = [], []
    keys = [f"key-{i}" for i in range(3000)]

    def writer():
        for i in range(0, len(keys), 100):
            f.add_many(keys[i:i + 100])
            added.append(i + 100)  # every key before this index is in

    def reader():
        while not added or added[-1] < len(keys):
            done = added[-1] if added else 0
            misses.extend(np.flatnonzero(~f.contains_many(keys[:done])).tolist())

    run_together([writer, reader, reader])
    assert misses == [] and f.contains_many(keys).all()


def test_copy_and_to_bytes_during_writes_are_snapshots_of_whole_adds():
    f = BloomFilter(1 << 16, 4)
    batches = [np.arange(i * 400, (i + 1) * 400, dtype=np.uint64) for i in range(40)]
    seen = []

    def writer():
        for batch in batches:
            f.add_many(batch)

    def snapshotter():
        for _ in range(60):
            seen.append(f.copy())
            seen.append(BloomFilter.from_bytes(f.to_bytes()))

    run_together([writer, snapshotter])
    prefixes = [BloomFilter(1 << 16, 4)]
    for batch in batches:
        prefixes.append(prefixes[-1].copy())
        prefixes[-1].add_many(batch)
    prefix_bytes = {p.to_bytes() for p in prefixes}
    assert all(snapshot.to_bytes() in prefix_bytes for snapshot in seen)  # never half a batch


def test_a_filter_pickles_without_its_lock_and_the_copy_has_its_own():
    f = BloomFilter(1 << 16, 4)
    f.add("x")
    g = pickle.loads(pickle.dumps(f))
    assert g == f and g._lock is not f._lock
    with f._lock:  # f's lock held: g still takes writes
        g.add("y")
    assert "y" in g and "y" not in f


# --- the other mutable filters share the mechanism -----------------------------------------
# Their per-key writes are a few bytecodes that CPython 3.11 does not interrupt, so these pass
# without the lock there too; they hold the shared mechanism to the same promise (an
# interpreter without the GIL runs them truly in parallel).
OTHERS = {
    "SaltedBloomFilter": (lambda: SaltedBloomFilter(4, 16), "add"),
    "BitVector": (lambda: BitVector(16), "add"),
    "GuavaBloomFilter put": (lambda: GuavaBloomFilter.create(20_000, 0.01), "put"),
    "GuavaBloomFilter put_many": (lambda: GuavaBloomFilter.create(20_000, 0.01), "put_many"),
    "Bip37Filter": (lambda: Bip37Filter(20_000, 0.01), "insert"),
    "KeyedBloomFilter": (lambda: KeyedBloomFilter(1 << 16, 4, bytes(16)), "add"),
    "BlockedBloomFilter add": (lambda: BlockedBloomFilter(1 << 16), "add"),
    "BlockedBloomFilter add_many": (lambda: BlockedBloomFilter(1 << 16), "add_many"),
    "BlockedBloomFilter add_many_new": (lambda: BlockedBloomFilter(1 << 16), "add_many_new"),
}


@pytest.mark.parametrize("make, method", OTHERS.values(), ids=OTHERS.keys())
def test_other_filters_lose_no_key_to_concurrent_adds(make, method):
    f, alone = make(), make()
    as_bytes = isinstance(f, Bip37Filter)
    parts = [[f"{t}-{i}".encode() if as_bytes else f"{t}-{i}" for i in range(600)]
             for t in range(4)]
    if method in ("put_many", "add_many", "add_many_new"):
        jobs = [lambda part=part: [getattr(f, method)(part[i:i + 50]) for i in range(0, 600, 50)]
                for part in parts]
    else:
        jobs = [lambda part=part: [getattr(f, method)(key) for key in part] for part in parts]
    run_together(jobs)
    for part in parts:
        for key in part:
            alone.add(key)
    assert f == alone if not isinstance(f, SaltedBloomFilter) else f.bits == alone.bits
    assert all(key in f for part in parts for key in part)


# --- the variants: the same promise, and one lock each -----------------------------------------
# Each promises to keep every key of these 4 x 8200 inserts (the window of the rotating and
# age-partitioned filters is 40,000 inserts); the stable filter promises only its last
# (Max - 1) // P inserts, so for it the test asks that no insert is lost (its count, and the
# key each thread added last: 254 decrements of one of its cells, among 32,200 decrements
# spread over 200,000 cells, do not happen).
VARIANTS = {
    "CountingBloomFilter": lambda: CountingBloomFilter(200_000, 4),
    "ScalableBloomFilter": lambda: ScalableBloomFilter(1000, 0.001),
    "RotatingBloomFilter": lambda: RotatingBloomFilter(capacity=20_000, fpp=0.001, generations=3),
    "AgePartitionedBloomFilter": lambda: AgePartitionedBloomFilter(4, 8, 5000),
    "StableBloomFilter": lambda: StableBloomFilter(200_000, 3, 8, 1, seed=3),
}


@pytest.mark.parametrize("name", VARIANTS)
def test_variants_lose_no_key_to_concurrent_adds_rotations_and_reads(name):
    f = VARIANTS[name]()
    blocks = [np.arange(i * 8000, (i + 1) * 8000, dtype=np.uint64) for i in range(4)]
    strays = [f"{i}-{j}" for i in range(4) for j in range(50)]
    misses = []

    def writer(block, words):
        for part in np.array_split(block, 8):
            f.add_many(part)
            if not isinstance(f, StableBloomFilter):  # every key whose add returned is found
                misses.extend(np.flatnonzero(~f.contains_many(part)).tolist())
        for word in words:
            f.add(word)
            misses.extend([] if word in f else [word])

    run_together([lambda b=block, w=strays[i * 50:(i + 1) * 50]: writer(b, w)
                  for i, block in enumerate(blocks)])
    assert misses == []
    if isinstance(f, StableBloomFilter):
        assert f.inserted == 4 * 8050 and all(w in f for w in strays[49::50])
        return
    assert all(f.contains_many(b).all() for b in blocks) and f.contains_many(strays).all()
    if isinstance(f, CountingBloomFilter):  # order does not change counters: as one thread
        alone = VARIANTS[name]()
        for block in blocks:
            alone.add_many(block)
        alone.add_many(strays)
        assert f == alone
    assert f._lock is not VARIANTS[name]()._lock and not f._lock.locked()
