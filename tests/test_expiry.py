"""Article 1's expiry ("remove the messages older than an hour") and the windowed stream.

The stream's ground truth is checked against its definition, the exact dict with expiry
scores perfectly, and the batched loop agrees with one key at a time.
"""

import numpy as np
import pytest

from bloomedu import RotatingBloomFilter
from bloomedu.steps.expiry import ExpiringIds, deduplicate_windowed
from bloomedu.workloads.clicks import (DOUBLE, FIRST, REPEAT, click_stream, score_windowed,
                                       windowed_click_stream)


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


def test_batched_and_one_at_a_time_agree_for_a_rotating_filter(stream):
    batched = deduplicate_windowed(stream, RotatingBloomFilter(600, 0.001, 4), batch=64)
    one = RotatingBloomFilter(600, 0.001, 4)
    kept = []
    for key in stream.keys.tolist():
        kept.append(key not in one)
        if kept[-1]:
            one.add(key)
    differ = int((np.array(kept) != batched.kept).sum())
    assert differ <= 5  # only false positives among keys of one batch, or a rotation inside it


def test_bad_stream_arguments_name_the_argument():
    with pytest.raises(ValueError, match="hours"):
        windowed_click_stream(-1)
    with pytest.raises(ValueError, match="double_gap"):
        windowed_click_stream(1, double_gap=(5.0, 9000.0))
    with pytest.raises(ValueError, match="kept"):
        score_windowed(windowed_click_stream(1, time_scale=100_000), np.zeros(3, bool))
