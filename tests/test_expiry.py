"""Article 1's expiry ("remove the messages older than an hour") and the windowed stream.

The stream's ground truth is checked against its definition, the exact dict with expiry
scores perfectly, and the batched loop keeps exactly what one key at a time keeps.
"""

import numpy as np
import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from bloomedu import (AgePartitionedBloomFilter, BloomFilter, CountingBloomFilter,
                      RotatingBloomFilter, ScalableBloomFilter, StableBloomFilter)
from bloomedu.core.keyed import KeyedBloomFilter
from bloomedu.steps.dedup import SeenIds
from bloomedu.steps.expiry import ExpiringIds, deduplicate_windowed
from bloomedu.steps.sequential import keep_in_order, keep_one_at_a_time
from bloomedu.workloads.clicks import (DOUBLE, FIRST, REPEAT, WindowedClicks, click_stream,
                                       score_windowed, windowed_click_stream)


@pytest.fixture(scope="module")
def stream():
    return windowed_click_stream(12, time_scale=20_000, seed=5)


def test_each_kind_is_what_its_name_says(stream):
    last = {}
    for key, when, kind in zip(stream.keys.tolist(), stream.times.tolist(), stream.kinds.tolist()):
        if kind == FIRST:
            assert key not in last
        elif kind == DOUBLE:
            assert 0.05 <= when - last[key] <= 2.0
        else:
            assert kind == REPEAT and when - last[key] >= 2 * 3600 - 2.0
        last[key] = when
    assert np.all(np.diff(stream.times) >= 0)
    assert (stream.kinds == DOUBLE).sum() > 100 and (stream.kinds == REPEAT).sum() > 100


def test_same_seed_same_stream_and_the_old_stream_is_unchanged():
    a, b = windowed_click_stream(3, time_scale=50_000, seed=1), windowed_click_stream(3, time_scale=50_000, seed=1)
    assert np.array_equal(a.keys, b.keys) and np.array_equal(a.times, b.times)
    clicks = click_stream(1000, rate=100, double_click_rate=0.1, seed=1)  # its doctest's figures
    assert (len(clicks), sum(c.duplicate for c in clicks)) == (1000, 84)


def test_the_exact_dict_with_expiry_is_perfect(stream):
    run = deduplicate_windowed(stream, ExpiringIds(window=3600))
    result = score_windowed(stream, run.kept)
    assert result.doubles_dropped == result.doubles and result.genuine_dropped == 0
    assert run.nbytes.max() <= 44 * 1.2 * stream.per_hour


def test_expiry_forgets_exactly_after_the_window():
    seen = ExpiringIds(window=10)
    seen.add("a", 0.0)
    assert seen.seen_at("a", 9.99) and not seen.seen_at("a", 10.0)
    seen.advance(10.0)
    assert len(seen) == 0
    with pytest.raises(ValueError, match="back in time"):
        seen.advance(5.0)
    with pytest.raises(ValueError, match="window"):
        ExpiringIds(window=0)


# Small structures over a small key space: repeats inside a batch, shared cells, false
# positives, rotations, shifts, new sub-filters and decrements to 0 all happen in a batch.
STAGES = {
    "rotating": lambda: RotatingBloomFilter(7, 0.2, 3),
    "age_partitioned": lambda: AgePartitionedBloomFilter(2, 3, 5),
    "stable": lambda: StableBloomFilter(40, 2, 2, 3, seed=1),
    "stable, 1-bit": lambda: StableBloomFilter(25, 3, 1, 1, seed=2),
    "counting": lambda: CountingBloomFilter(30, 3),
    "scalable": lambda: ScalableBloomFilter(3, 0.3, growth=2, tightening=0.5),
    "bloom": lambda: BloomFilter(40, 2),
    "keyed": lambda: KeyedBloomFilter(40, 2, bytes(range(16))),  # its positions: of the tags
    "bloom, scheme 1": lambda: _scheme_one(BloomFilter(40, 2)),   # the step h2 as hashed
}


def _scheme_one(f):
    """A filter read from the bytes of the older hashing scheme 1, which it keeps."""
    data = bytearray(f.to_bytes())
    data[6] = 1
    return BloomFilter.from_bytes(bytes(data))


@pytest.mark.parametrize("name", STAGES)
@settings(deadline=None)
@given(keys=st.lists(st.integers(0, 60), max_size=120), batch=st.integers(1, 70))
def test_batched_is_exactly_one_at_a_time(name, keys, batch):
    """deduplicate_windowed keeps exactly the messages the one-at-a-time loop keeps, and
    leaves the structure in the same state, whatever the batch size."""
    stream = WindowedClicks(np.array(keys, dtype=np.uint64), np.arange(len(keys), dtype=float),
                            np.zeros(len(keys), np.int8), 1.0, 1.0, (0.0, 1.0), (0.0, 1.0))
    batched, alone = STAGES[name](), STAGES[name]()
    run = deduplicate_windowed(stream, batched, batch=batch) if keys else None
    kept = keep_one_at_a_time(alone, np.array(keys, dtype=np.uint64))
    assert (run.kept.tolist() if keys else []) == kept.tolist()
    assert batched.to_bytes() == alone.to_bytes()


def test_batched_is_exactly_one_at_a_time_on_the_click_stream(stream):
    for make in (lambda: RotatingBloomFilter(600, 0.01, 4), lambda: StableBloomFilter(3000, 3, 2, 4)):
        batched, alone = make(), make()
        run = deduplicate_windowed(stream, batched, batch=512)
        assert run.kept.tolist() == keep_one_at_a_time(alone, stream.keys).tolist()
        assert batched == alone


def test_bad_stream_arguments_name_the_argument():
    with pytest.raises(ValueError, match="hours"):
        windowed_click_stream(-1)
    with pytest.raises(ValueError, match="double_gap"):
        windowed_click_stream(1, double_gap=(5.0, 9000.0))
    with pytest.raises(ValueError, match="kept"):
        score_windowed(windowed_click_stream(1, time_scale=100_000), np.zeros(3, bool))


# --- bad times and keys are refused whole, never stored in part -----------------------------
@pytest.mark.parametrize("call, error", [
    (lambda s: s.add_many(["a", "b", "c"], times=[1.0]), ValueError),   # zip would keep "a"
    (lambda s: s.add_many(["a", "b", "c"], times=[1.0, 2.0, float("nan")]), ValueError),
    (lambda s: s.add_many(["a", 1.5, "c"]), TypeError),
    (lambda s: s.add_many(["a", "b"], times=5.0), TypeError),
    (lambda s: s.add("x", now=float("nan")), ValueError),
    (lambda s: s.add("x", now=float("inf")), ValueError),
    (lambda s: s.add("x", now="5"), TypeError),
    (lambda s: s.add("x", now=True), TypeError),
    (lambda s: s.advance(float("nan")), ValueError),
    (lambda s: s.advance("10"), TypeError),
    (lambda s: s.contains_many(["a", "b"], times=[1.0]), ValueError),
])
def test_a_bad_time_or_key_changes_nothing(call, error):
    seen = ExpiringIds(window=60)
    seen.add("kept", now=0.0)
    before = (seen.now, dict(seen.last_seen))
    with pytest.raises(error):
        call(seen)
    assert (seen.now, seen.last_seen) == before and "kept" in seen and seen.now == 0.0


@pytest.mark.parametrize("make", [lambda: ExpiringIds(window=60), SeenIds])
@pytest.mark.parametrize("key", [float("nan"), 1.0, True, np.bool_(True), np.float64(2.0),
                                 1 + 0j, [1, 2]])
def test_exact_sets_refuse_the_keys_every_filter_refuses(make, key):
    """In a dict, True, 1 and 1.0 are one key and NaN is never found again: refused, as the
    filters refuse bool and float keys; 1 and numpy's int 1 stay one key, as in a filter."""
    seen = make()
    seen.add(1)
    with pytest.raises(TypeError, match="key must be"):
        seen.add(key)
    with pytest.raises(TypeError, match="key must be"):
        key in seen
    assert len(seen) == 1 and np.int64(1) in seen and 2 not in seen


@pytest.mark.parametrize("make", [lambda: CountingBloomFilter(2000, 3),
                                  lambda: RotatingBloomFilter(100, 0.01, 2),
                                  lambda: ScalableBloomFilter(20, 0.01)])
def test_an_object_array_mixing_key_kinds_is_kept_in_order(make):
    """numpy cannot sort str beside int: repeats are found by the keys' bytes, as the filters
    hash them ("a" and b"a" are one key)."""
    keys = np.array(["a", 1, b"b", "a", 1, b"a", 2 ** 64 - 1, -1] * 20, dtype=object)
    assert keep_in_order(make(), keys).tolist() == keep_one_at_a_time(make(), keys).tolist()
