"""The live explorer of lesson 14: the numbers behind the panel, and the panel's wiring."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest

from bloomedu import BloomFilter
from hypothesis import given, settings
from hypothesis import strategies as st

from bloomedu.core.checks import MAX_HASHES
from bloomedu.teaching.experiments import wilson_interval
from bloomedu.teaching.explorer import (DENSE_HASHES, KEY_TYPES, _curve_points, explore, explorer,
                                        make_keys)
from bloomedu.core.theory import exact_false_positive_rate, measured_rate_std, optimal_num_hashes


def classic_by_hand(m, n, k):
    return (1 - math.exp(-k * n / m)) ** k


@pytest.mark.parametrize("key_type", KEY_TYPES)
def test_inserted_and_query_keys_never_coincide(key_type):
    inserted = make_keys(key_type, 5000, seed=3, inserted=True)
    queries = make_keys(key_type, 5000, seed=3, inserted=False)
    as_set = set(np.asarray(inserted).tolist())
    assert len(as_set) == 5000
    assert as_set.isdisjoint(np.asarray(queries).tolist())


@pytest.mark.parametrize("key_type", KEY_TYPES)
def test_keys_are_seeded_and_a_longer_draw_extends_a_shorter_one(key_type):
    short = make_keys(key_type, 10, seed=5, inserted=True)
    long = make_keys(key_type, 30, seed=5, inserted=True)
    assert list(long[:10]) == list(short)
    assert list(make_keys(key_type, 10, seed=6, inserted=True)) != list(short)


def test_key_types():
    ints = make_keys("uint64", 3, seed=1, inserted=True)
    assert ints.dtype == np.uint64 and (ints < 2**63).all()
    urls = make_keys("url", 3, seed=1, inserted=False)
    assert all(url.startswith("https://") and "/out/" in url for url in urls)


@pytest.mark.parametrize("over", ["k", "n"])
def test_same_arguments_same_numbers(over):
    assert explore(num_bits=5000, num_hashes=3, n=600, key_type="url", over=over, num_queries=3000, seed=9) == \
        explore(num_bits=5000, num_hashes=3, n=600, key_type="url", over=over, num_queries=3000, seed=9)


@pytest.mark.parametrize("key_type", KEY_TYPES)
def test_current_point_does_not_depend_on_the_curve_axis(key_type):
    over_k = explore(num_bits=8000, num_hashes=5, n=900, key_type=key_type, over="k", num_queries=4000, seed=1)
    over_n = explore(num_bits=8000, num_hashes=5, n=900, key_type=key_type, over="n", num_queries=4000, seed=1)
    for field in ("false_positives", "measured", "fill_ratio", "classic", "exact", "optimal_k"):
        assert getattr(over_k, field) == getattr(over_n, field), field


def test_current_point_is_a_real_filter_built_from_the_same_keys():
    e = explore(num_bits=4096, num_hashes=3, n=500, key_type="uint64", over="k", num_queries=6000, seed=4)
    bloom = BloomFilter(4096, 3)
    bloom.add_many(make_keys("uint64", 500, seed=4, inserted=True))
    hits = bloom.contains_many(make_keys("uint64", 6000, seed=4, inserted=False))
    assert e.false_positives == int(hits.sum())
    assert e.measured == hits.mean()
    assert e.fill_ratio == bloom.bits_set() / 4096


@pytest.mark.parametrize("key_type", KEY_TYPES)
@pytest.mark.parametrize("m, k, n", [(10_000, 7, 1000), (2000, 2, 400), (50_000, 4, 8000)])
def test_measured_rates_follow_the_theory_within_four_standard_deviations(key_type, m, k, n):
    queries = 20_000
    e = explore(num_bits=m, num_hashes=k, n=n, key_type=key_type, over="k", num_queries=queries, seed=11)
    for kk, got, exact in zip(e.curve_x, e.curve_measured, e.curve_exact):
        assert abs(got - exact) <= 4 * measured_rate_std(num_bits=m, num_hashes=kk, n=n, num_queries=queries), (kk, got, exact)
    # given the filter's own fill ratio, each absent key is a false positive with chance rho^k
    p = e.fill_ratio ** k
    assert abs(e.measured - p) <= 4 * math.sqrt(p * (1 - p) / queries) + 1 / queries
    q0 = (1 - 1 / m) ** (k * n)
    assert abs((1 - e.fill_ratio) - q0) <= 4 * math.sqrt(q0 * (1 - q0) / m)


def test_curve_over_k_and_the_optimum():
    e = explore(num_bits=10_000, num_hashes=3, n=1000, key_type="uint64", over="k", num_queries=2000, max_k=12)
    assert e.curve_x == tuple(range(1, 13))
    assert e.curve_classic == tuple(pytest.approx(classic_by_hand(10_000, 1000, k))
                                    for k in range(1, 13))
    assert e.classic == pytest.approx(classic_by_hand(10_000, 1000, 3))
    assert e.optimal_k == 1 + int(np.argmin(e.curve_classic))
    assert round(10 * math.log(2)) == e.optimal_k  # (m/n) ln 2 = 6.93
    wide = explore(num_bits=1000, num_hashes=20, n=10, num_queries=100, max_k=5)  # m/n = 100: the best k is 69
    assert wide.curve_x[:16] == tuple(range(1, 17)) and 20 in wide.curve_x
    assert wide.optimal_k == 69 and wide.curve_x[-1] == 69
    with pytest.raises(ValueError, match="max_k"):
        explore(num_bits=1000, num_hashes=3, n=100, max_k=MAX_HASHES + 1)


@settings(deadline=None)
@given(m=st.integers(1, 2**32), n=st.integers(1, 10_000_000), k=st.integers(1, MAX_HASHES),
       max_k=st.integers(1, 64))
def test_the_k_axis_reaches_the_optimal_k_it_prints(m, n, k, max_k):
    """The k axis goes as far as the optimal k the panel prints (34 here, not stopping at 12)."""
    points = _curve_points("k", m, k, n, max_k)
    best = optimal_num_hashes(num_bits=m, n=n)
    assert best in points and k in points and points[-1] == max(best, k, max_k)
    assert points[:DENSE_HASHES] == list(range(1, min(points[-1], DENSE_HASHES) + 1))
    assert points == sorted(set(points)) and len(points) <= 45  # at most 45 filters a redraw
    gaps = [b / a for a, b in zip(points, points[1:]) if a >= DENSE_HASHES]
    assert all(gap <= 1.25 for gap in gaps)  # no stretch of the curve left unmeasured


def test_the_plot_of_a_wide_filter_reaches_the_optimal_k():
    # 50 bits a key: the best k is 35
    e = explore(num_bits=50_000, num_hashes=4, n=1000, key_type="uint64", over="k", num_queries=2000)
    ax = e.plot()
    classic = next(line for line in ax.get_lines() if line.get_label().startswith("classic"))
    assert e.optimal_k == 35 and max(classic.get_xdata()) == 35 and ax.get_xlim()[1] >= 35
    plt.close("all")


def test_curve_over_n_reaches_twice_n_and_contains_n():
    e = explore(num_bits=10_000, num_hashes=4, n=1000, key_type="uint64", over="n", num_queries=2000)
    assert e.curve_x[-1] == 2000 and 1000 in e.curve_x
    assert list(e.curve_x) == sorted(set(e.curve_x))
    assert all(a <= b for a, b in zip(e.curve_measured, e.curve_measured[1:]))  # a filter only fills
    assert e.curve_exact[e.curve_x.index(1000)] == e.exact
    assert e.curve_exact == tuple(exact_false_positive_rate(num_bits=10_000, num_hashes=4, n=n) for n in e.curve_x)
    assert e.curve_errors()[e.curve_x.index(1000)] == e.standard_error


def test_exact_rate_is_never_below_the_classic_one():
    e = explore(num_bits=256, num_hashes=4, n=40, key_type="uint64", over="k", num_queries=1000)
    assert all(exact >= classic - 1e-12 for exact, classic in zip(e.curve_exact, e.curve_classic))


def test_printed_tables_show_the_numbers():
    e = explore(num_bits=10_000, num_hashes=4, n=1000, key_type="uint64", over="k", num_queries=2000)
    summary, table = e.summary(), e.curve_table()
    assert f"{e.measured:.5f}" in summary and f"{e.classic:.5f}" in summary
    assert f"optimal k       {e.optimal_k}" in summary
    assert len(table.splitlines()) == 1 + len(e.curve_x)
    assert table.count("<- current") == 1


def test_plot_marks_the_current_point():
    e = explore(num_bits=10_000, num_hashes=4, n=1000, key_type="uint64", over="k", num_queries=2000)
    ax = e.plot()
    labels = [line.get_label() for line in ax.get_lines()]
    assert "current" in labels and any(label.startswith("classic") for label in labels)
    star = ax.get_lines()[labels.index("current")]
    assert (star.get_xdata()[0], star.get_ydata()[0]) == (4, e.measured)
    plt.close("all")


def test_a_rate_measured_as_zero_is_shown_as_0_of_n_with_its_upper_bound():
    """A measured 0, which a log axis cannot show, is printed as 0 of n with its upper bound."""
    e = explore(num_bits=50_000, num_hashes=8, n=1000, key_type="uint64", over="k", num_queries=4000)
    bound = wilson_interval(0, 4000)[1]
    assert e.false_positives == 0 and e.zero_bound == bound
    assert f"measured rate   0 of 4000 absent keys: below {bound:.5f}" in e.summary()
    zeros = [x for x, got in zip(e.curve_x, e.curve_measured) if got == 0]
    assert e.zero_points == tuple(zeros) and 8 in zeros and len(zeros) < len(e.curve_x)
    ax = e.plot()
    lines = {line.get_label(): line for line in ax.get_lines()}
    (label,) = [name for name in lines if name.startswith("0 of 4,000")]
    assert f"{bound:.1e}" in label and label in [t.get_text() for t in ax.get_legend().get_texts()]
    assert list(lines[label].get_xdata()) == zeros
    assert list(lines[label].get_ydata()) == [bound] * len(zeros)
    star = lines["current"]
    assert (star.get_xdata()[0], star.get_ydata()[0]) == (8, bound)  # not hidden either
    plt.close("all")


def test_no_zero_no_note():
    e = explore(num_bits=10_000, num_hashes=4, n=1000, key_type="uint64", over="k", num_queries=2000)
    assert e.zero_points == () and "no false positive" not in e.summary()
    assert not [line for line in e.plot().get_lines() if line.get_label().startswith("0 of")]
    plt.close("all")


def test_the_curve_over_n_marks_its_empty_start_too():
    e = explore(num_bits=10_000, num_hashes=4, n=1000, key_type="url", over="n", num_queries=2000, seed=9)
    assert e.zero_points and e.zero_points[0] == e.curve_x[0]
    assert f"no false positive at n = {e.zero_points[0]}" in e.summary()


def test_small_rates_print_their_digits():
    e = explore(num_bits=50_000, num_hashes=8, n=1000, key_type="uint64", over="k", num_queries=1000)
    assert f"classic formula {e.classic:.2e}" in e.summary() and e.classic < 1e-4
    assert f"{e.curve_exact[-1]:9.2e}" in e.curve_table().splitlines()[-1]


@pytest.mark.parametrize("kwargs, name", [
    ({"num_bits": 0}, "num_bits"), ({"num_hashes": 0}, "num_hashes"), ({"n": True}, "n"),
    ({"num_bits": 2.5}, "num_bits"), ({"num_queries": -1}, "num_queries"),
    ({"key_type": "float"}, "key_type"), ({"over": "m"}, "over"),
    ({"num_hashes": MAX_HASHES + 1}, "num_hashes"),
])
def test_bad_arguments_name_the_argument(kwargs, name):
    args = {"num_bits": 1000, "num_hashes": 3, "n": 100, **kwargs}
    with pytest.raises(ValueError, match=name):
        explore(**args)
    with pytest.raises(ValueError, match=name):
        explorer(**args)


def test_bad_key_count():
    with pytest.raises(ValueError, match="count"):
        make_keys("url", 0, seed=1, inserted=True)


def test_widget_redraws_from_explore_when_a_slider_moves():
    panel = explorer(num_bits=10_000, num_hashes=4, n=1000, num_queries=2000)
    controls, numbers = panel.children[0].children, panel.children[1]
    assert explore(num_bits=10_000, num_hashes=4, n=1000, num_queries=2000).summary() in numbers.value
    controls[0].value = 20_000
    controls[3].value = "url"
    assert explore(num_bits=20_000, num_hashes=4, n=1000, key_type="url", num_queries=2000).summary() in numbers.value
    controls[4].value = "n"
    assert "m = 20000 bits" in numbers.value
    plt.close("all")


def test_the_k_slider_reaches_the_optimal_k_the_panel_prints():
    panel = explorer(num_bits=50_000, num_hashes=4, n=1000, num_queries=500)
    controls, numbers = panel.children[0].children, panel.children[1]
    assert "optimal k       35" in numbers.value and controls[1].max >= 35
    controls[0].value = 100_000  # 100 bits a key: the best k is 69
    assert "optimal k       69" in numbers.value and controls[1].max >= 69
    controls[1].value = 69
    assert "k = 69" in numbers.value
    plt.close("all")


def test_widget_starts_at_the_values_asked_for_even_outside_the_default_ranges():
    panel = explorer(num_bits=64, num_hashes=20, n=5, key_type="url", over="n", num_queries=500)
    assert [c.value for c in panel.children[0].children] == [64, 20, 5, "url", "n"]
    e = explore(num_bits=64, num_hashes=20, n=5, key_type="url", over="n", num_queries=500)
    assert e.summary() in panel.children[1].value
    plt.close("all")
