"""Instructor demos: collisions (article 1, steps 2-3), false positives (step 5), figures' data."""

import math
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest

from bloomedu import BitVector, BloomFilter, SaltedBloomFilter, murmurhash2, n_bit_hash_function
from bloomedu.teaching.classroom import (bit_setters, draw_key_bits, fill_curve, find_collision,
                                find_false_positive, plot_fill)
from bloomedu.workloads.clicks import uuid4_strings

UUID = r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"


# --- find_collision ------------------------------------------------------------------
@pytest.mark.parametrize("hash_bits", [8, 16, 20])
def test_collision_is_real_and_found_within_the_birthday_bound(hash_bits):
    h = n_bit_hash_function(hash_bits, "")
    tries = []
    for seed in range(20):
        c = find_collision(h, seed=seed)
        assert c.first != c.second
        assert h(c.first) == h(c.second) == c.value
        assert re.match(UUID, c.first) and re.match(UUID, c.second)
        tries.append(c.tries)
    # first repeat among N values: mean sqrt(pi N / 2), sd about 0.52 sqrt(N); 20 runs
    N = 2 ** hash_bits
    mean, sd = math.sqrt(math.pi * N / 2), math.sqrt((2 - math.pi / 2) * N)
    assert abs(np.mean(tries) - mean) < 4 * sd / math.sqrt(20)


def test_collision_is_the_first_repeat_and_deterministic():
    h = n_bit_hash_function(12, "salt")
    c = find_collision(h, seed=7)
    assert find_collision(h, seed=7) == c
    ids = uuid4_strings(c.tries, np.random.default_rng(7))
    values = [h(i) for i in ids]
    assert len(set(values[:-1])) == c.tries - 1          # no repeat before the last
    assert ids[-1] == c.second and values.index(c.value) == ids.index(c.first)


def test_collision_of_a_bit_vector_and_of_given_keys():
    vector = BitVector(hash_bits=10)
    c = find_collision(vector, seed=3)
    assert vector.bit_indices(c.first) == vector.bit_indices(c.second) == [c.value]
    keys = [f"url-{i}" for i in range(5000)]
    c = find_collision(lambda k: murmurhash2(k) % 1000, keys=keys)
    assert c.first in keys and c.second in keys and c.first != c.second
    assert murmurhash2(c.first) % 1000 == murmurhash2(c.second) % 1000


def test_collision_search_is_bounded_with_a_clear_error():
    with pytest.raises(LookupError, match="max_tries=10"):
        find_collision(n_bit_hash_function(32, ""), max_tries=10)
    with pytest.raises(LookupError, match="raise max_tries"):
        find_collision(lambda k: k, keys=["a", "b", "c"])
    with pytest.raises(ValueError, match="max_tries must be a positive int"):
        find_collision(n_bit_hash_function(8, ""), max_tries=0)
    with pytest.raises(TypeError, match="hash_function must be callable"):
        find_collision(42)


# --- find_false_positive and bit_setters ------------------------------------------------
def _filled(bloom_filter, count, seed):
    keys = uuid4_strings(count, np.random.default_rng(seed))
    for key in keys:
        bloom_filter.add(key)
    return keys


@pytest.mark.parametrize("make", [lambda: SaltedBloomFilter(3, 8), lambda: BloomFilter(300, 3)])
def test_false_positive_is_never_inserted_and_each_bit_names_its_setters(make):
    f = make()
    added = _filled(f, 40, seed=1)
    fp = find_false_positive(f, added, seed=5)
    assert fp.key in f and fp.key not in added
    assert fp.positions == list(f.bit_indices(fp.key))
    for bit in fp.bits:
        assert bit.is_set and bit.setters
        # exactly the inserted keys whose own positions include this bit
        assert set(bit.setters) == {k for k in added if bit.position in f.bit_indices(k)}
    assert find_false_positive(f, added, seed=5) == fp
    assert str(fp).count("\n  bit ") == f.num_hashes


def test_false_positive_with_integer_keys_leaves_the_filter_unchanged():
    f = BloomFilter(500, 3)
    added = np.arange(120, dtype=np.uint64)
    f.add_many(added)
    before = f.bits.copy()
    fp = find_false_positive(f, added, keys=range(10**6, 2 * 10**6))
    assert f.bits == before
    assert fp.key in f and fp.key >= 10**6
    for bit in fp.bits:
        assert {int(k) for k in bit.setters} == {int(k) for k in added
                                                  if bit.position in f.bit_indices(int(k))}


def test_false_positive_found_after_about_one_over_p_tries():
    f = BloomFilter(2000, 4)
    added = _filled(f, 400, seed=2)
    p = (f.bits_set() / f.num_bits) ** 4     # rate given this filter's fill
    tries = [find_false_positive(f, added, seed=s).tries for s in range(100, 130)]  # not seed 2
    # geometric: mean 1/p, sd sqrt(1-p)/p; 30 runs
    assert abs(np.mean(tries) - 1 / p) < 4 * math.sqrt(1 - p) / p / math.sqrt(30)


def test_false_positive_search_is_bounded_with_clear_errors():
    f = SaltedBloomFilter(3, 16)
    added = _filled(f, 3, seed=0)
    with pytest.raises(LookupError, match="max_tries=100\\b"):
        find_false_positive(f, added, max_tries=100)
    with pytest.raises(ValueError, match="non-empty list"):
        find_false_positive(f, [])
    with pytest.raises(ValueError, match="does not contain"):
        find_false_positive(f, added + ["never-added"])


def test_bit_setters_reports_clear_bits_of_an_absent_key():
    f = SaltedBloomFilter(3, 16)
    added = _filled(f, 5, seed=0)
    rows = bit_setters(f, "surely-absent", added)
    assert [r.position for r in rows] == f.bit_indices("surely-absent")
    assert any(not r.is_set for r in rows)
    assert all(r.setters == () for r in rows if not r.is_set)


# --- figures and the data behind them ----------------------------------------------------
@pytest.mark.parametrize("make", [lambda: SaltedBloomFilter(3, 10), lambda: BloomFilter(1024, 3)])
def test_fill_curve_follows_one_minus_e_to_the_minus_kn_over_m(make):
    f = make()
    keys = uuid4_strings(600, np.random.default_rng(4))
    curve = fill_curve(f, keys, points=12)
    assert curve.n[0] == 0 and curve.n[-1] == 600 and np.all(np.diff(curve.n) > 0)
    assert curve.measured[0] == 0 and np.all(np.diff(curve.measured) >= 0)
    assert curve.measured[-1] == f.bits.count() / 1024
    m, k = 1024, 3
    theory = 1 - np.exp(-k * curve.n / m)
    assert np.allclose(curve.theory, theory)
    # bits set after T = kn throws into m cells: sd below sqrt(m)/2 bits
    assert np.all(np.abs(curve.measured - theory) * m < 4 * math.sqrt(m) / 2 + 2)


def test_fill_curve_needs_an_empty_filter():
    f = BloomFilter(64, 2)
    f.add("x")
    with pytest.raises(ValueError, match="must be empty"):
        fill_curve(f, ["a"])
    with pytest.raises(ValueError, match="points"):
        fill_curve(BloomFilter(64, 2), ["a"], points=0)


def test_plots_draw_the_data():
    curve = fill_curve(BloomFilter(512, 2), range(300), points=10)
    ax = plot_fill(curve)
    measured, theory = ax.get_lines()[:2]
    assert np.array_equal(measured.get_xdata(), curve.n)
    assert np.array_equal(theory.get_ydata(), curve.theory)
    f = SaltedBloomFilter(3, 8)
    added = _filled(f, 30, seed=3)
    fp = find_false_positive(f, added, seed=0)
    ax = draw_key_bits(f, fp.key, added)
    grid = ax.images[0].get_array()
    assert [int(grid.flat[p]) for p in fp.positions] == [2, 2, 2]    # highlighted
    set_elsewhere = [p for p in range(256) if f.bits[p] and p not in fp.positions]
    assert np.all(grid.flat[set_elsewhere] == 1)
    labels = [t.get_text() for t in ax.texts[-3:]]
    for label, bit in zip(labels, fp.bits):
        assert label == f"bit {bit.position} = 1, set by " + ", ".join(map(repr, bit.setters))
    plt.close("all")


def test_draw_key_bits_refuses_a_filter_too_big_to_draw():
    f = BloomFilter(20_000, 3)
    f.add("a")
    with pytest.raises(ValueError, match="at most 16,384 bits"):
        draw_key_bits(f, "b", ["a"])

