"""The data behind lesson 20's plot of bits a key against the rate (bloomedu/teaching/space_curves.py).

Each curve is checked against its structure's formula and, where bloomedu builds the structure,
against a filter actually built: the curve must say what the library spends.
"""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pytest

from bloomedu import BinaryFuseFilter, BloomFilter, CuckooFilter, XorFilter
from bloomedu.teaching.space_curves import (STRUCTURES, cuckoo_beats_bloom_below, curves,
                                            draw_bits_per_key)
from bloomedu.variants import BlockedBloomFilter
from bloomedu.variants.blocked import split_block_false_positive_rate

matplotlib.use("Agg")


def at(curve, rate):
    """The curve's bits a key at a rate, interpolated in log(rate)."""
    rates, bits = curve
    order = np.argsort(rates)
    return float(np.interp(math.log(rate), np.log(rates[order]), bits[order]))


def test_every_structure_has_a_curve_falling_in_rate_as_bits_grow():
    found = curves()
    assert list(found) == list(STRUCTURES)
    for name, (rates, bits) in found.items():
        assert rates.shape == bits.shape and rates.size >= 20, name
        assert np.all((rates > 0) & (rates < 1)), name
        order = np.argsort(bits)
        assert np.all(np.diff(rates[order]) < 0), name  # more bits, a lower rate


def test_no_curve_goes_below_the_lower_bound():
    found = curves()
    for name in STRUCTURES[1:]:
        rates, bits = found[name]
        assert np.all(bits >= -np.log2(rates) - 1e-9), name


def test_the_curves_are_the_formulas_the_lesson_derives():
    found = curves()
    p = 2.0 ** -8
    assert at(found["lower bound"], p) == pytest.approx(8, rel=1e-3)
    assert at(found["Bloom filter"], p) == pytest.approx(8 / math.log(2), rel=1e-3)
    rates, bits = found["xor filter"]
    assert (rates[6], bits[6]) == (p, pytest.approx(1.23 * 8))
    rates, bits = found["binary fuse filter"]
    assert (rates[6], bits[6]) == (p, pytest.approx(1.125 * 8))
    rates, bits = found["cuckoo filter"]  # f = 12 at load 0.9, buckets of 4
    assert bits[10] == pytest.approx(12 / 0.9)
    assert rates[10] == pytest.approx(1 - (1 - 1 / 4095) ** (2 * 4 * 0.9))
    assert rates[10] < 2 * 4 / 2 ** 12  # under the paper's bound 2b/2**f
    rates, bits = curves(bucket_size=2, load=0.8)["cuckoo filter"]
    assert bits[10] == pytest.approx(12 / 0.8) and rates[10] == pytest.approx(1 - (1 - 1 / 4095) ** 3.2)


def test_the_curves_say_what_the_library_spends():
    n = 20_000
    keys = np.arange(n, dtype=np.uint64)
    found = curves(n=n)
    bloom = BloomFilter.from_capacity(n, 0.001)
    assert bloom.num_bits / n == pytest.approx(at(found["Bloom filter"], 0.001), rel=2e-3)
    blocked = BlockedBloomFilter(n * 16)
    rates, bits = found["blocked filter"]
    (row,) = np.flatnonzero(bits == 16)
    assert rates[row] == split_block_false_positive_rate(num_blocks=blocked.num_blocks, n=n)
    cuckoo = CuckooFilter(n, 12, 4)
    cuckoo.add_many(keys)
    assert cuckoo.num_bits / n == pytest.approx(curves(load=cuckoo.load_factor, n=n)["cuckoo filter"][1][10])
    # the static filters' formulas are for large n: a filter of n keys adds its constant
    assert XorFilter(keys, 8).bits_per_key == pytest.approx(8 * (1.23 + 32 / n), rel=1e-3)
    assert 1.125 * 8 <= BinaryFuseFilter(np.arange(10 ** 6, dtype=np.uint64), 8).bits_per_key < 1.135 * 8


def test_the_crossing_is_where_the_cuckoo_and_bloom_curves_meet():
    for bucket_size, load in [(4, 0.9), (4, 0.95), (2, 0.84), (8, 0.98)]:
        p = cuckoo_beats_bloom_below(bucket_size, load)
        # at p, f/a bits for the cuckoo filter equal the Bloom filter's log2(1/p)/ln 2
        f = math.log2(1 + 1 / -math.expm1(math.log1p(-p) / (2 * bucket_size * load)))
        assert f / load == pytest.approx(-math.log2(p) / math.log(2), rel=1e-6)
        # below it (one more fingerprint bit) the cuckoo filter spends less, above it more
        for extra, wins in [(1, True), (-1, False)]:
            g = f + extra
            rate = -math.expm1(2 * bucket_size * load * math.log1p(-1 / (2 ** g - 1)))
            assert (g / load < -math.log2(rate) / math.log(2)) is wins
    assert cuckoo_beats_bloom_below(4, 0.95) > cuckoo_beats_bloom_below(4, 0.9)  # fuller, better


def test_a_cuckoo_filter_too_empty_never_beats_bloom():
    with pytest.raises(ValueError, match="never spends fewer bits"):
        cuckoo_beats_bloom_below(4, 0.3)


@pytest.mark.parametrize("bad, error", [({"bucket_size": 0}, ValueError), ({"load": 0}, ValueError),
                                        ({"load": 1.5}, ValueError), ({"load": "0.9"}, TypeError),
                                        ({"n": 0}, ValueError)])
def test_bad_arguments_are_named(bad, error):
    name = next(iter(bad))
    with pytest.raises(error, match=name):
        curves(**bad)
    if name != "n":
        with pytest.raises(error, match=name):
            cuckoo_beats_bloom_below(**bad)


def test_the_plot_draws_each_curve_and_each_measured_point_in_its_colour():
    import matplotlib.pyplot as plt

    measured = {"xor filter": [(0.0039, 9.84)], "cuckoo filter": [(0.0017, 13.3), (0.0018, 12.5)]}
    ax = draw_bits_per_key(curves(), measured)
    lines = ax.get_lines()
    assert [line.get_label() for line in lines[:1]] == ["lower bound"]
    labels = [line.get_label() for line in lines if not line.get_label().startswith("_")]
    assert labels == list(STRUCTURES)
    dots = [line for line in lines if line.get_marker() == "o"]
    assert [len(line.get_xdata()) for line in dots] == [2, 1]  # cuckoo first, in drawing order
    curve_colour = {line.get_label(): line.get_color() for line in lines if line.get_label() in STRUCTURES}
    assert dots[0].get_color() == curve_colour["cuckoo filter"]
    assert dots[1].get_color() == curve_colour["xor filter"]
    assert tuple(ax.figure.get_size_inches()) == (7.0, 4.4)
    with pytest.raises(ValueError, match="measured names"):
        draw_bits_per_key(curves(), {"quotient filter": [(0.01, 10)]})
    plt.close("all")
