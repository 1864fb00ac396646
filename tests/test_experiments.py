"""bloomedu.teaching.experiments: measured rates follow the exact formula; sweep rows are consistent."""

import math

import numpy as np
import pytest

from bloomedu import BloomFilter
from bloomedu.teaching.experiments import (_draw, _item_rng, _query_rng, double_hash_positions,
                                  format_table, measure_false_positive_rate,
                                  measure_plain_double_hashing_rate,
                                  simulate_false_positive_rate, sweep, wilson_interval)
from bloomedu.core.hashing import hash128
from bloomedu.core.theory import exact_false_positive_rate, false_positive_rate, measured_rate_std

QUERIES = 20_000


@pytest.mark.parametrize("m,k,n,seed", [
    (2**14, 4, 2048, 1), (10_000, 7, 1000, 2), (1000, 3, 300, 3), (2**16, 1, 30_000, 4),
    (50_000, 2, 20_000, 5), (3000, 5, 200, 6), (2**18, 8, 16_384, 7),
])
def test_measured_rate_within_four_std_of_exact(m, k, n, seed):
    rate = measure_false_positive_rate(num_bits=m, num_hashes=k, num_items=n, num_queries=QUERIES, seed=seed)
    spread = measured_rate_std(num_bits=m, num_hashes=k, n=n, num_queries=QUERIES)
    assert abs(rate - exact_false_positive_rate(num_bits=m, num_hashes=k, n=n)) < 4 * spread


@pytest.mark.parametrize("m,k,n", [(8, 3, 1), (16, 8, 2), (64, 4, 8), (97, 5, 10), (1024, 10, 50)])
def test_simulated_model_averages_to_exact_at_small_m(m, k, n):
    runs, queries = 100, 2000
    shape = dict(num_bits=m, num_hashes=k, num_items=n, num_queries=queries)
    rates = [simulate_false_positive_rate(**shape, seed=seed) for seed in range(runs)]
    spread = measured_rate_std(num_bits=m, num_hashes=k, n=n, num_queries=queries) / math.sqrt(runs)
    assert abs(np.mean(rates) - exact_false_positive_rate(num_bits=m, num_hashes=k, n=n)) < 4 * spread


@pytest.mark.parametrize("m,k,n", [(16, 6, 2), (32, 3, 3), (64, 4, 8), (1024, 10, 50),
                                   (2**14, 6, 256)])
def test_real_filter_averages_to_exact_at_small_m(m, k, n):
    # The real BloomFilter, hashing included: plain (h1 + i*h2) mod m ran 3x to 20x above
    # the exact rate at these points; fmix64 per position must bring it to the exact rate.
    runs, queries = 100, 20_000
    shape = dict(num_bits=m, num_hashes=k, num_items=n, num_queries=queries)
    rates = [measure_false_positive_rate(**shape, seed=seed) for seed in range(runs)]
    spread = measured_rate_std(num_bits=m, num_hashes=k, n=n, num_queries=queries) / math.sqrt(runs)
    assert abs(np.mean(rates) - exact_false_positive_rate(num_bits=m, num_hashes=k, n=n)) < 4 * spread


@pytest.mark.parametrize("m,k", [(1000, 4), (2**10, 7), (1, 3)])
def test_double_hash_positions_mixed_and_plain(m, k):
    keys = np.random.default_rng(m + k).integers(2**64 - 1, size=200, dtype=np.uint64,
                                                 endpoint=True)
    mixed = double_hash_positions(keys, num_bits=m, num_hashes=k)
    plain = double_hash_positions(keys, num_bits=m, num_hashes=k, mix=False)
    assert mixed.shape == plain.shape == (200, k)
    bloom = BloomFilter(m, k)
    for key, mixed_row, plain_row in zip(keys.tolist(), mixed.tolist(), plain.tolist()):
        h1, h2 = hash128(key)
        assert mixed_row == bloom.bit_indices(key)
        assert plain_row == [((h1 + i * h2) % 2**64) % m for i in range(k)]


def test_plain_positions_collapse_when_h2_is_a_multiple_of_m():
    m, k = 16, 6
    keys = np.random.default_rng(1).integers(2**64 - 1, size=20_000, dtype=np.uint64,
                                             endpoint=True)
    plain = double_hash_positions(keys, num_bits=m, num_hashes=k, mix=False)
    h2_zero = np.array([hash128(key)[1] % m == 0 for key in keys.tolist()])
    one_bit = (plain == plain[:, :1]).all(axis=1)
    assert (one_bit == h2_zero).all()  # plain: one position exactly when h2 mod m = 0
    share, sd = one_bit.mean(), math.sqrt((1 / m) * (1 - 1 / m) / keys.size)
    assert abs(share - 1 / m) < 4 * sd
    mixed = double_hash_positions(keys, num_bits=m, num_hashes=k)
    # mixed: all k positions on one bit only by chance, m^-(k-1) = 1e-6 per key
    assert not (mixed == mixed[:, :1]).all(axis=1).any()


def test_plain_rate_is_the_hand_made_experiment_on_the_same_keys():
    m, k, n, q, seed = 64, 3, 10, 3000, 4
    inserted = np.concatenate(list(_draw(_item_rng(seed), n, odd=False))).tolist()
    queried = np.concatenate(list(_draw(_query_rng(seed, n), q, odd=True))).tolist()

    def positions(key):
        h1, h2 = hash128(key)
        return [((h1 + i * h2) % 2**64) % m for i in range(k)]

    bits = {pos for key in inserted for pos in positions(key)}
    by_hand = sum(all(pos in bits for pos in positions(key)) for key in queried) / q
    assert measure_plain_double_hashing_rate(num_bits=m, num_hashes=k, num_items=n, num_queries=q, seed=seed) == by_hand


def test_plain_double_hashing_runs_above_exact_on_small_filters_only():
    runs, queries = 20, 20_000
    small = [measure_plain_double_hashing_rate(num_bits=1024, num_hashes=10, num_items=50,
                                               num_queries=queries, seed=seed) for seed in range(runs)]
    spread = measured_rate_std(num_bits=1024, num_hashes=10, n=50, num_queries=queries) / math.sqrt(runs)
    assert np.mean(small) > exact_false_positive_rate(num_bits=1024, num_hashes=10, n=50) + 10 * spread
    large = measure_plain_double_hashing_rate(num_bits=2**16, num_hashes=4, num_items=8192,
                                              num_queries=QUERIES, seed=1)
    shape = dict(num_bits=2**16, num_hashes=4, n=8192)
    assert abs(large - exact_false_positive_rate(**shape)) < 4 * measured_rate_std(
        **shape, num_queries=QUERIES)


def test_measurement_is_deterministic_and_depends_on_the_seed():
    args = dict(num_bits=2**12, num_hashes=3, num_items=600, num_queries=5000)
    assert measure_false_positive_rate(**args, seed=9) == measure_false_positive_rate(**args, seed=9)
    assert measure_false_positive_rate(**args, seed=9) != measure_false_positive_rate(**args, seed=10)
    assert simulate_false_positive_rate(**args, seed=9) == simulate_false_positive_rate(**args, seed=9)


def test_queries_are_never_inserted_keys():
    rng = np.random.default_rng(0)
    inserted = np.concatenate(list(_draw(rng, 300_000, odd=False)))
    queried = np.concatenate(list(_draw(rng, 300_000, odd=True)))
    assert (inserted % 2 == 0).all() and (queried % 2 == 1).all()
    assert inserted.size == queried.size == 300_000  # more than one batch each
    assert measure_false_positive_rate(num_bits=2**24, num_hashes=8, num_items=1000, num_queries=5000, seed=0) == 0.0
    assert measure_false_positive_rate(num_bits=1, num_hashes=1, num_items=1, num_queries=5000, seed=0) == 1.0


def test_sweep_rows_are_consistent():
    ms, ks, ns = [2**10, 2**12], [1, 4], [300, 10, 0, 100]
    rows = sweep(num_bits=ms, num_hashes=ks, num_items=ns, num_queries=3000, seed=5)
    assert [(r.num_bits, r.num_hashes, r.num_items) for r in rows] == [
        (m, k, n) for m in ms for k in ks for n in ns]
    for row in rows:
        assert row.num_queries == 3000
        assert row.false_positives / row.num_queries == row.rate
        assert row.low <= row.rate <= row.high
        assert (row.low, row.high) == wilson_interval(row.false_positives, row.num_queries)
        shape = dict(num_bits=row.num_bits, num_hashes=row.num_hashes, n=row.num_items)
        assert row.classic == false_positive_rate(**shape)
        assert row.exact == exact_false_positive_rate(**shape)
        assert row.rate == measure_false_positive_rate(num_bits=row.num_bits, num_hashes=row.num_hashes,
                                                       num_items=row.num_items, num_queries=3000, seed=row.seed)
    assert [r.rate for r in rows if r.num_items == 0] == [0.0] * 4
    alone = sweep(num_bits=2**12, num_hashes=4, num_items=100, num_queries=3000, seed=5)[0]
    assert alone == next(r for r in rows if (r.num_bits, r.num_hashes, r.num_items) == (2**12, 4, 100))


def test_sweep_intervals_cover_exact_about_95_percent():
    rows = sweep(num_bits=[2**12, 2**14], num_hashes=[1, 2, 4, 6],
                 num_items=[2**8, 2**9, 2**10, 2**11], num_queries=4000, seed=1)
    covered = sum(r.low <= r.exact <= r.high for r in rows)
    # 32 rows, P(covered) near 0.95 each: fewer than 25 has probability below 1e-3
    assert covered >= 25


def test_wilson_interval_endpoints_solve_the_score_equation():
    z = 1.959963984540054
    for successes, trials in [(1, 10), (37, 200), (999, 1000), (5, 20_000)]:
        phat = successes / trials
        for p in wilson_interval(successes, trials):
            assert (phat - p) ** 2 == pytest.approx(z * z * p * (1 - p) / trials, rel=1e-9)
    low, high = wilson_interval(0, 100)
    assert low == 0.0 and high == pytest.approx(z * z / (100 + z * z))
    assert wilson_interval(100, 100)[1] == 1.0
    narrow, wide = wilson_interval(50, 100, z=1.0), wilson_interval(50, 100, z=3.0)
    assert wide[0] < narrow[0] < narrow[1] < wide[1]


def test_format_table_is_fixed_width():
    rows = sweep(num_bits=2**10, num_hashes=[1, 2], num_items=[10, 200], num_queries=500)
    text = format_table(rows)
    lines = text.splitlines()
    assert len(lines) == 5 and len({len(line) for line in lines}) == 1
    assert lines[0].split() == ["m", "k", "n", "queries", "fp", "rate", "low", "high", "classic",
                                "exact"]
    assert lines[2].split()[:3] == ["1024", "1", "200"]
    assert f"{rows[1].exact:.3e}" in lines[2]
    assert format_table([{"a": 0.5}], ["a"], float_format=".2f").splitlines() == ["   a", "0.50"]
    with pytest.raises(ValueError, match="columns not in every row"):
        format_table([{"a": 1}], ["a", "b"])


@pytest.mark.parametrize("call", [
    lambda: measure_false_positive_rate(num_bits=0, num_hashes=1, num_items=1, num_queries=1, seed=0),
    lambda: measure_false_positive_rate(num_bits=8, num_hashes=0, num_items=1, num_queries=1, seed=0),
    lambda: measure_false_positive_rate(num_bits=8, num_hashes=1, num_items=-1, num_queries=1, seed=0),
    lambda: measure_false_positive_rate(num_bits=8, num_hashes=1, num_items=1, num_queries=0, seed=0),
    lambda: measure_false_positive_rate(num_bits=8, num_hashes=1, num_items=1, num_queries=1, seed=-1),
    lambda: sweep(num_bits=[], num_hashes=1, num_items=1),
    lambda: sweep(num_bits=[8, 0], num_hashes=1, num_items=1),
    lambda: wilson_interval(3, 2),
    lambda: wilson_interval(1, 0),
    lambda: wilson_interval(1, 2, z=0),
    lambda: simulate_false_positive_rate(num_bits=8, num_hashes=1, num_items=1, num_queries=0, seed=0),
    lambda: measure_plain_double_hashing_rate(num_bits=0, num_hashes=1, num_items=1, num_queries=1, seed=0),
    lambda: double_hash_positions(np.arange(3, dtype=np.uint64), num_bits=8, num_hashes=0),
])
def test_bad_values_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


@pytest.mark.parametrize("call", [
    lambda: measure_false_positive_rate(num_bits=8.0, num_hashes=1, num_items=1, num_queries=1, seed=0),
    lambda: measure_false_positive_rate(num_bits=8, num_hashes=True, num_items=1, num_queries=1, seed=0),
    lambda: measure_false_positive_rate(num_bits=8, num_hashes=1, num_items=1, num_queries=1, seed=None),
    lambda: sweep(num_bits="8", num_hashes=1, num_items=1),
    lambda: sweep(num_bits=[8], num_hashes=[1.5], num_items=1),
])
def test_bad_types_raise_type_error(call):
    with pytest.raises(TypeError):
        call()


def test_errors_name_argument_and_range():
    with pytest.raises(ValueError, match=r"num_queries must be an int in 1\.\.2\*\*63-1, got 0"):
        measure_false_positive_rate(num_bits=8, num_hashes=1, num_items=1, num_queries=0, seed=0)
    with pytest.raises(ValueError, match=r"num_items must hold at least one value"):
        sweep(num_bits=8, num_hashes=1, num_items=[])
