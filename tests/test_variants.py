"""The structures that delete, grow and forget (bloomedu.variants): their promises, one by one.

Each keeps every key it promises to keep (hypothesis, one key at a time and in bulk), gives
the same state whether keys come one by one or in a batch, hashes a key exactly as
BloomFilter does, refuses bad parameters and bad bytes with errors that name what is wrong
(leaving the structure unchanged), pickles at every protocol (threads: tests/test_threads.py).
Their rates against the papers' formulas are in tests/test_variants_rates.py.
"""

import pickle
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bloomedu import (AgePartitionedBloomFilter, BloomFilter, CountingBloomFilter,
                      RotatingBloomFilter, ScalableBloomFilter, StableBloomFilter)
from bloomedu.core.counters import CounterArray
from bloomedu.core.filter import key_positions
import filter_registry

keys_lists = st.lists(st.one_of(st.text(max_size=12), st.integers(-2 ** 63, 2 ** 64 - 1),
                                st.binary(max_size=12)), max_size=80)

MAKERS = {
    "counting4": lambda: CountingBloomFilter(500, 3),
    "counting8": lambda: CountingBloomFilter(500, 3, counter_bits=8),
    "scalable": lambda: ScalableBloomFilter(10, 0.01),
    "rotating": lambda: RotatingBloomFilter(capacity=20, fpp=0.01, generations=3),
    "age_partitioned": lambda: AgePartitionedBloomFilter(3, 2, 10),
    "stable": lambda: StableBloomFilter(600, 3, 3, 2, seed=5),
}


def _memory(structure) -> int:
    """How many of the latest distinct inserts the structure promises to keep (its registry
    entry's word)."""
    promise = filter_registry.memory(structure)
    return 10 ** 9 if promise is None else promise


@pytest.mark.parametrize("name", MAKERS)
@settings(deadline=None)
@given(keys=keys_lists)
def test_no_key_it_promises_to_keep_is_reported_absent(name, keys):
    for bulk in (False, True):
        f = MAKERS[name]()
        if bulk:
            f.add_many(keys)
        else:
            for key in keys:
                f.add(key)
        kept = keys[max(0, len(keys) - 1 - _memory(f)):]  # the last key, and those it promises
        assert all(key in f for key in kept)
        assert f.contains_many(kept).all() if kept else True


@pytest.mark.parametrize("name", MAKERS)
@settings(deadline=None)
@given(keys=keys_lists, cut=st.integers(0, 80))
def test_one_by_one_and_in_batches_end_in_the_same_state(name, keys, cut):
    one, batch = MAKERS[name](), MAKERS[name]()
    for key in keys:
        one.add(key)
    batch.add_many(keys[:cut])
    batch.add_many(keys[cut:])
    if name == "scalable":  # a batch skips keys found before it, one by one also in it
        assert len(batch) >= len(one) - len(keys) // 10 - 1
        assert batch.contains_many(keys).all()
        return
    assert one.to_bytes() == batch.to_bytes()
    assert [key in one for key in keys] == batch.contains_many(keys).tolist()


@given(keys=keys_lists, m=st.integers(1, 5000), k=st.integers(1, 12))
@settings(deadline=None)
def test_positions_are_the_bloom_filters(keys, m, k):
    bloom = BloomFilter(m, k)
    assert all(key_positions(key, num_bits=m, num_hashes=k) == bloom.bit_indices(key) for key in keys)
    assert all(CountingBloomFilter(m, k).cell_indices(key) == bloom.bit_indices(key)
               for key in keys[:5])


def _set_after_one_add(structure, key, bulk):
    if bulk:
        structure.add_many([key])
    else:
        structure.add(key)
    return structure


def _bloom_bits(m, k, key) -> set:
    return set(BloomFilter(m, k).bit_indices(key))


one_key = st.one_of(st.just(""), st.just(b""), st.text(max_size=6), st.integers(-2 ** 63, 2 ** 64 - 1))


@pytest.mark.parametrize("bulk", [False, True], ids=["add", "add_many"])
@given(key=one_key, m=st.integers(1, 300), k=st.integers(1, 12), l=st.integers(1, 4),
       g=st.integers(1, 40))
@settings(deadline=None)
def test_every_structure_places_a_key_where_bloom_filter_does(bulk, key, m, k, l, g):
    """Per key and in bulk, the cells a key sets are BloomFilter(m, k)'s bits for it (k + l
    values for the age-partitioned filter, each sub-filter's own m and k for the scalable)."""
    expected = _bloom_bits(m, k, key)
    counting = _set_after_one_add(CountingBloomFilter(m, k), key, bulk)
    assert set(np.flatnonzero(counting.counters.values()).tolist()) == expected
    stable = _set_after_one_add(StableBloomFilter(m, k, 3, 2, seed=1), key, bulk)
    assert set(np.flatnonzero(stable.cells.values()).tolist()) == expected
    rotating = _set_after_one_add(RotatingBloomFilter(g, 0.5 ** k, 2), key, bulk)
    newest = rotating.tables[-1]
    assert set(np.flatnonzero(newest.bits.to_bools()).tolist()) == \
        _bloom_bits(newest.num_bits, newest.num_hashes, key)
    scalable = ScalableBloomFilter(1, 0.01, growth=2)
    for _ in range(k % 4):  # the key goes into sub-filter k % 4, of its own m and k
        scalable._grow()
    last = _set_after_one_add(scalable, key, bulk).tables[-1]
    assert last.count == 1 and set(np.flatnonzero(last.bits.to_bools()).tolist()) == \
        _bloom_bits(last.num_bits, last.num_hashes, key)
    apbf = _set_after_one_add(AgePartitionedBloomFilter(k, l, g), key, bulk)
    spread = BloomFilter(apbf.num_bits, k + l).bit_indices(key)
    for j in range(k + l):
        bits = np.flatnonzero(apbf.slices[j].to_bools()).tolist()
        assert bits == ([spread[j]] if j in apbf.order()[:k] else [])


@pytest.mark.parametrize("bits", range(1, 9))
def test_counter_array_packs_and_reads_back(bits):
    rng = np.random.default_rng(bits)
    cells = CounterArray(1001, bits)
    values = rng.integers(0, cells.max_value + 1, size=1001)
    chosen = rng.permutation(1001)[:700]
    cells.put(np.sort(chosen), values[np.sort(chosen)])
    expected = np.zeros(1001, dtype=np.int64)
    expected[chosen] = values[chosen]
    assert cells.values().tolist() == expected.tolist()
    assert cells.take(np.arange(1001)).tolist() == expected.tolist()
    assert [cells.get(i) for i in range(0, 1001, 97)] == expected[::97].tolist()
    assert cells.histogram().tolist() == np.bincount(expected, minlength=cells.max_value + 1).tolist()


# --- the counting filter's pitfalls --------------------------------------------------------
def test_counters_saturate_and_never_wrap():
    f = CountingBloomFilter(50, 2)
    for _ in range(40):
        f.add("x")
    assert f.saturated() >= 1 and "x" in f
    values = f.counters.values()
    assert values.max() == 15  # stuck at the top, not wrapped round to 0
    for _ in range(40):
        f.remove("x")  # a saturated counter is never decremented: "x" stays
    assert "x" in f


def test_removing_a_key_never_added_is_refused_and_changes_nothing():
    f = CountingBloomFilter(1000, 3)
    f.add_many(["a", "b"])
    before = f.to_bytes()
    with pytest.raises(ValueError, match="never added: its counter at cell"):
        f.remove("zzz")
    with pytest.raises(ValueError, match="never added"):
        f.remove_many(["a", "zzz"])
    with pytest.raises(ValueError, match="never added"):
        f.remove_many(["a", "a"])  # added once, removed twice
    assert f.to_bytes() == before


def test_removing_a_false_positive_loses_another_key():
    f = CountingBloomFilter(64, 2)
    inserted = [f"id-{i}" for i in range(24)]
    f.add_many(inserted)
    impostor = next(f"other-{i}" for i in range(10_000) if f"other-{i}" in f)
    f.remove(impostor)  # cannot be told from an added key
    assert any(key not in f for key in inserted)


def test_remove_many_equals_one_by_one():
    a, b = CountingBloomFilter(400, 4), CountingBloomFilter(400, 4)
    keys = [f"k{i}" for i in range(150)]
    a.add_many(keys)
    b.add_many(keys)
    for key in keys[:70]:
        a.remove(key)
    b.remove_many(keys[:70])
    assert a == b and b.contains_many(keys[70:]).all()


# --- windows -------------------------------------------------------------------------------
def test_rotating_remembers_g_minus_1_generations_and_forgets_after_g():
    f = RotatingBloomFilter(capacity=100, fpp=1e-6, generations=4)
    f.add_many(range(100))      # generation 1: keys 0..99
    f.add_many(range(100, 400))  # three more: key 0 now in the oldest
    assert f.contains_many(range(400)).all()
    f.add(400)                   # the fifth generation starts: the first is dropped
    assert not f.contains_many(range(100)).any() and f.contains_many(range(100, 401)).all()
    f.rotate()
    assert f.loads() == [0, 1, 100, 100]


def test_age_partitioned_window_is_l_times_g_inserts():
    k, l, g = 10, 4, 50
    f = AgePartitionedBloomFilter(k, l, g)
    first = np.arange(g, dtype=np.uint64)  # a full generation: key g-1 is its last
    f.add_many(first)
    f.add_many(np.arange(g, g + l * g, dtype=np.uint64))  # l g inserts after it
    assert f.contains_many(first).all()
    f.add(10 ** 9)  # the (l + 1)-th shift clears one bit of every key of the first generation
    assert f.contains_many(np.arange(g, g + l * g, dtype=np.uint64)).all()
    assert f.contains_many(first).mean() < 1  # some are still found: k - 1 bits and a lucky one
    f.add_many(np.arange(2 * 10 ** 9, 2 * 10 ** 9 + k * g, dtype=np.uint64))
    assert f.contains_many(first).mean() < 0.1  # all their bits cleared: false positives only


def test_stable_filter_is_seeded_and_reproducible():
    a = StableBloomFilter(1000, 3, 2, 4, seed=11)
    b = StableBloomFilter(1000, 3, 2, 4, seed=11)
    c = StableBloomFilter(1000, 3, 2, 4, seed=12)
    for f in (a, b, c):
        f.add_many(range(500))
    assert a == b and a != c
    assert a.decrement_cells(7) == a._decrement_array(7, 1)[0].tolist()


def test_scalable_filter_grows_by_growth_and_tightens():
    f = ScalableBloomFilter(100, 0.01, growth=4, tightening=0.5)
    f.add_many(np.arange(10_000, dtype=np.uint64))
    caps = [f.capacity(i) for i in range(len(f.tables))]
    assert caps[:3] == [100, 400, 1600] and sum(t.count for t in f.tables) == len(f)
    assert f.first_fpp == pytest.approx(0.005) and f.bound == pytest.approx(0.01)


# --- bad parameters and bad bytes ------------------------------------------------------------
BAD = [
    (CountingBloomFilter, dict(num_cells=0, num_hashes=3), "num_cells must be an int in 1.."),
    (CountingBloomFilter, dict(num_cells=10, num_hashes=0), "num_hashes must be an int in 1..1024"),
    (CountingBloomFilter, dict(num_cells=10, num_hashes=3, counter_bits=5), "counter_bits must be one of 4, 8"),
    (CountingBloomFilter, dict(num_cells=2.5, num_hashes=3), "num_cells"),
    (ScalableBloomFilter, dict(initial_capacity=0, fpp=0.01), "initial_capacity"),
    (ScalableBloomFilter, dict(initial_capacity=10, fpp=1.5), "fpp must be a number strictly between 0 and 1"),
    (ScalableBloomFilter, dict(initial_capacity=10, fpp=0.01, growth=0), "growth must be an int in 1..64"),
    (ScalableBloomFilter, dict(initial_capacity=10, fpp=0.01, tightening=1.0), "tightening"),
    (ScalableBloomFilter, dict(initial_capacity=10, fpp=float("nan")), "fpp"),
    (RotatingBloomFilter, dict(capacity=10, fpp=0.01, generations=1), "generations must be an int in 2..1024"),
    (RotatingBloomFilter, dict(capacity=-1, fpp=0.01, generations=3), "capacity"),
    (RotatingBloomFilter, dict(capacity=10, fpp=0, generations=3), "fpp"),
    (AgePartitionedBloomFilter, dict(num_hashes=0, extra_slices=2, generation_size=10), "num_hashes"),
    (AgePartitionedBloomFilter, dict(num_hashes=3, extra_slices=0, generation_size=10), "extra_slices must be an int in 1..1024"),
    (AgePartitionedBloomFilter, dict(num_hashes=3, extra_slices=2, generation_size=True), "generation_size"),
    (StableBloomFilter, dict(num_cells=100, num_hashes=3, bits_per_cell=9, decrements=2), "bits_per_cell must be an int in 1..8"),
    (StableBloomFilter, dict(num_cells=100, num_hashes=3, bits_per_cell=2, decrements=0), "decrements"),
    (StableBloomFilter, dict(num_cells=100, num_hashes=3, bits_per_cell=2, decrements=2, seed=-1), "seed"),
]


@pytest.mark.parametrize("cls, kwargs, message", BAD, ids=[f"{c.__name__}-{m[:20]}" for c, _, m in BAD])
def test_bad_parameters_name_the_argument_and_range(cls, kwargs, message):
    wrong_type = kwargs.get("num_cells") == 2.5 or kwargs.get("generation_size") is True
    with pytest.raises(TypeError if wrong_type else ValueError, match=message):  # type: TypeError
        cls(**kwargs)


@pytest.mark.parametrize("name", MAKERS)
def test_bad_keys_leave_the_structure_unchanged(name):
    f = MAKERS[name]()
    f.add_many(["a", "b"])
    before = f.to_bytes()
    with pytest.raises(TypeError):
        f.add_many(["c", 1.5])
    with pytest.raises(TypeError):
        f.add(None)
    assert f.to_bytes() == before


@pytest.mark.parametrize("name", MAKERS)
def test_bytes_are_versioned_and_read_strictly(name):
    f = MAKERS[name]()
    f.add_many([f"key{i}" for i in range(45)])
    data = f.to_bytes()
    cls = type(f)
    assert cls.from_bytes(data) == f and cls.from_bytes(bytearray(data)) == f
    with pytest.raises(ValueError, match="truncated"):
        cls.from_bytes(data[:-1])
    with pytest.raises(ValueError, match="padded|corrupt"):
        cls.from_bytes(data + b"\x00")
    with pytest.raises(ValueError, match="truncated"):
        cls.from_bytes(data[:5])
    with pytest.raises(ValueError, match="magic"):
        cls.from_bytes(b"XXXX" + data[4:])
    with pytest.raises(ValueError, match="version"):
        cls.from_bytes(data[:4] + b"\x09\x00" + data[6:])
    with pytest.raises(TypeError, match="bytes"):
        cls.from_bytes("text")


@pytest.mark.parametrize("name", MAKERS)
@pytest.mark.parametrize("protocol", range(6))
def test_pickles_at_every_protocol_with_the_same_answers(name, protocol):
    f = MAKERS[name]()
    keys = [f"key{i}" for i in range(30)] + list(range(30))
    f.add_many(keys)
    copy = pickle.loads(pickle.dumps(f, protocol=protocol))
    assert copy == f and copy.contains_many(keys).tolist() == f.contains_many(keys).tolist()
    copy.add("more")  # a working, independent structure
    assert copy != f


# --- a reader builds nothing larger than its input, and a counter never breaks to_bytes -----------
def forge_sizes(data: bytes):
    """``data`` with each 8-byte little-endian field of its header set to sizes from a megabit
    to a gigabit: what a forged header asks for (the parameters still valid, the bits missing)."""
    for at in range(6, 48):
        for value in (2 ** 20, 2 ** 27, 2 ** 30, 2 ** 33):
            yield data[:at] + value.to_bytes(8, "little") + data[at + 8:]


@pytest.mark.parametrize("name", MAKERS)
def test_a_forged_header_is_refused_before_what_it_describes_is_built(name):
    f = MAKERS[name]()
    f.add_many(range(30))
    data = f.to_bytes()
    tracemalloc.start()
    try:
        for blob in forge_sizes(data):
            tracemalloc.reset_peak()
            try:
                type(f).from_bytes(blob)
            except ValueError:
                pass
            assert tracemalloc.get_traced_memory()[1] < 4 * len(blob) + (1 << 20)
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("name", ["rotating", "age_partitioned", "scalable", "counting4", "stable"])
def test_reading_a_large_structure_unpacks_nothing(name):
    """The padding check read each table at 8 bytes a bit; it reads the last bytes only."""
    big = {"rotating": lambda: RotatingBloomFilter(200_000, 0.01, 2),
           "age_partitioned": lambda: AgePartitionedBloomFilter(1, 1, 2_000_000),
           "scalable": lambda: ScalableBloomFilter(400_000, 0.01),
           "counting4": lambda: CountingBloomFilter(2_000_000, 3),
           "stable": lambda: StableBloomFilter(4_000_000, 3, 1, 1)}[name]()
    data = big.to_bytes()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        read = type(big).from_bytes(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert read == big and len(data) > 400_000 and peak < 2 * len(data) + (1 << 20)


@pytest.mark.parametrize("name", ["stable", "age_partitioned"])
def test_a_counter_at_its_top_does_not_break_the_next_to_bytes(name):
    f = MAKERS[name]()
    data = bytearray(f.to_bytes())
    at = _HEADER_INSERTED[name]
    data[at:at + 8] = b"\xff" * 8  # inserted = 2**64 - 1
    g = type(f).from_bytes(bytes(data))
    assert g.inserted == 2 ** 64 - 1
    g.add("one more")
    g.add_many(["and", "more"])
    assert type(f).from_bytes(g.to_bytes()) == g and "one more" in g


_HEADER_INSERTED = {"stable": 6 + 8 + 2 + 1 + 8 + 8, "age_partitioned": 6 + 2 + 2 + 8 + 8 + 2 + 8}


@pytest.mark.parametrize("capacity, fpp, growth, n", [(100, 0.2, 2, 3000), (300, 0.01, 2, 3000),
                                                      (50, 0.5, 1, 600), (7, 0.3, 4, 2000)])
def test_scalable_add_many_leaves_what_a_loop_of_add_leaves(capacity, fpp, growth, n):
    """In a batch, a key that is a false positive of the batch's earlier keys, or a repeat, is
    skipped exactly as add skips it: the same counts, the same bits, the same bytes."""
    rng = np.random.default_rng(n)
    keys = [str(v) for v in rng.integers(0, n // 2, n)]  # repeats, and false positives
    batch, loop = ScalableBloomFilter(capacity, fpp, growth), ScalableBloomFilter(capacity, fpp, growth)
    for start in range(0, n, 700):  # several batches, each crossing sub-filter boundaries
        batch.add_many(keys[start:start + 700])
    for key in keys:
        loop.add(key)
    assert [t.count for t in batch.tables] == [t.count for t in loop.tables]
    assert batch.to_bytes() == loop.to_bytes()


def test_a_scalable_filter_that_cannot_grow_says_so_and_refuses_changing_nothing():
    """growth=1 opens 64 sub-filters of the same size and then is full: max_inserts says when,
    and past it add refuses and changes nothing."""
    f = ScalableBloomFilter(10, 0.01, growth=1)
    assert f.max_inserts == 640
    for i in range(5000):
        before = f.to_bytes()
        try:
            f.add(f"key-{i}")
        except ValueError as error:
            assert "is full" in str(error) and f.to_bytes() == before
            break
    else:
        raise AssertionError("5,000 keys did not fill 64 sub-filters of 10")
    assert len(f) == f.max_inserts
    assert all(f.contains_many([f"key-{j}" for j in range(i)]))
