"""bloomedu.core.theory against brute force: enumeration with fractions, Monte Carlo, real filters."""

import itertools
import math
import random
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest

from bloomedu import BloomFilter
from bloomedu.core.checks import MAX_HASHES
from bloomedu.core.theory import (bit_vector_false_positive_rate, bits_per_item, collision_probability,
                             estimate_count, exact_false_positive_rate, expected_collisions,
                             false_positive_rate, lower_bound_bits_per_item, measured_rate_std,
                             num_bits_for, optimal_num_hashes)


# --- independent references -------------------------------------------------------------
def occupancy(m, throws):
    """Exact distribution {X: P} of the bins hit by `throws` uniform throws, step by step."""
    dist = {0: Fraction(1)}
    for _ in range(throws):
        new = {}
        for j, p in dist.items():
            new[j] = new.get(j, 0) + p * Fraction(j, m)
            if j < m:
                new[j + 1] = new.get(j + 1, 0) + p * Fraction(m - j, m)
        dist = new
    return dist


def moment(m, throws, power):
    return sum(p * Fraction(j, m) ** power for j, p in occupancy(m, throws).items())


def moment_by_sum(m, throws, power):
    """The same moment from Stirling numbers and inclusion-exclusion, in exact integers."""
    stirling, total = stirling_row(power), Fraction(0)
    for r in range(1, min(power, m) + 1):
        covered = sum((-1) ** i * math.comb(r, i) * (m - i) ** throws for i in range(r + 1))
        total += Fraction(stirling[r] * math.perm(m, r) * covered, m ** (power + throws))
    return total if power else Fraction(1)


def enumerate_rate(m, n, k):
    """Every placement of the kn positions and every query: the definition, counted."""
    hits = total = 0
    for placed in itertools.product(range(m), repeat=k * n):
        bits = set(placed)
        for query in itertools.product(range(m), repeat=k):
            hits += all(q in bits for q in query)
            total += 1
    return Fraction(hits, total)


def stirling_row(k):
    rows = [[1]]
    for a in range(1, k + 1):
        prev = rows[-1] + [0]
        rows.append([0] + [b * prev[b] + prev[b - 1] for b in range(1, a + 1)])
    return rows[k]


def alternating_sum(m, n, k, digits):
    """Christensen et al.'s sum with Stirling numbers, in decimal at `digits` digits."""
    throws, stirling = k * n, stirling_row(k)
    with localcontext() as ctx:
        ctx.prec = digits
        bins = Decimal(m)
        powers = [((bins - i) / bins) ** throws for i in range(min(k, m) + 1)]
        total = Decimal(0)
        for r in range(1, min(k, m) + 1):
            covered = sum((-1) ** i * math.comb(r, i) * powers[i] for i in range(r + 1))
            total += stirling[r] * Decimal(math.perm(m, r)) / bins ** k * covered
        return float(total)


# --- birthday bound and the one-hash bit vector --------------------------------------------
def test_collisions_by_enumeration():
    for n, values in [(3, 4), (4, 3), (2, 7)]:
        tuples = list(itertools.product(range(values), repeat=n))
        repeats = Fraction(sum(n - len(set(t)) for t in tuples), len(tuples))
        assert expected_collisions(n, values) == pytest.approx(float(repeats), rel=1e-12)
        any_equal = Fraction(sum(len(set(t)) < n for t in tuples), len(tuples))
        assert collision_probability(n, values) == pytest.approx(float(any_equal), rel=1e-12)


def test_collisions_monte_carlo_and_large_n_branch():
    rng = np.random.default_rng(2)
    n, values, runs = 5000, 2**20, 400
    counts = [n - np.unique(rng.integers(values, size=n)).size for _ in range(runs)]
    mean = expected_collisions(n, values)
    assert abs(np.mean(counts) - mean) < 4 * math.sqrt(mean / runs)  # about Poisson
    n, values = 300_000, 2**40  # the n >= 200,000 branch against the exact log-product
    exact = -math.expm1(math.fsum(np.log1p(-np.arange(1, n) / values)))
    assert collision_probability(n, values) == pytest.approx(exact, rel=1e-6)
    assert collision_probability(6, 5) == 1.0
    assert collision_probability(23, 365) == pytest.approx(0.5072972, abs=1e-7)  # birthday


def test_bit_vector_rate_by_enumeration_and_as_k_1():
    for m, n in [(1, 2), (4, 3), (5, 2), (3, 0)]:
        assert bit_vector_false_positive_rate(num_bits=m, n=n) == pytest.approx(
            float(enumerate_rate(m, n, 1)), rel=1e-12, abs=1e-15)
    assert bit_vector_false_positive_rate(num_bits=256, n=100) == pytest.approx(
        exact_false_positive_rate(num_bits=256, num_hashes=1, n=100), rel=1e-12)


# --- the exact rate ----------------------------------------------------------------------
def test_the_two_references_agree():
    for m, throws, power in [(1, 3, 2), (5, 0, 3), (7, 6, 4), (30, 20, 9), (12, 40, 1)]:
        assert moment(m, throws, power) == moment_by_sum(m, throws, power)


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (2, 1, 2), (3, 2, 2), (4, 1, 3), (5, 2, 1), (3, 1, 4)])
def test_exact_rate_counts_every_placement(m, n, k):
    assert exact_false_positive_rate(num_bits=m, num_hashes=k, n=n) == pytest.approx(float(enumerate_rate(m, n, k)),
                                                               rel=1e-13)


def test_exact_rate_against_fractions_on_many_points():
    chooser = random.Random(6)
    cases = [(1, 4, 3), (2, 5, 7), (10, 0, 3), (7, 3, 12), (50, 40, 30), (200, 10, 45),
             (1000, 1, 20), (60, 3, 64)]
    for _ in range(25):
        m = chooser.choice([2, 3, 8, 31, 100, 257])
        k = chooser.randint(1, 16)
        cases.append((m, chooser.randint(0, 3 * m // k + 1), k))
    for m, n, k in cases:
        expected = float(moment_by_sum(m, k * n, k))
        assert exact_false_positive_rate(num_bits=m, num_hashes=k, n=n) == pytest.approx(expected, rel=1e-10, abs=0)


@pytest.mark.parametrize("m,n,k,digits", [
    (100_000, 100_000, 10, 60),   # kn = 10^6: the size the lesson promises
    (100_000, 10, 30, 250),       # light load: the alternating sum cancels 70 digits
    (10_000, 500, 150, 400),      # k above the long-double chains
    (100_000, 1, 100, 500),       # tiny but representable: about 1e-300
])
def test_exact_rate_large_against_high_precision_sum(m, n, k, digits):
    assert exact_false_positive_rate(num_bits=m, num_hashes=k, n=n) == pytest.approx(alternating_sum(m, n, k, digits),
                                                               rel=1e-9)


def test_exact_rate_edges():
    assert exact_false_positive_rate(num_bits=1000, num_hashes=5, n=0) == 0.0
    assert exact_false_positive_rate(num_bits=1, num_hashes=9, n=1) == 1.0
    assert exact_false_positive_rate(num_bits=10, num_hashes=3, n=10_000) == pytest.approx(1.0, abs=1e-300)
    assert exact_false_positive_rate(num_bits=100_000, num_hashes=200, n=1) == 0.0  # about 1e-600: below doubles
    assert exact_false_positive_rate(num_bits=np.int64(64), num_hashes=2, n=1e1) == \
        exact_false_positive_rate(num_bits=64, num_hashes=2, n=10)


def test_exact_is_above_classic_and_meets_it_as_m_grows():
    for m in (8, 64, 1000, 2**14):
        for k in (1, 2, 4, 8, 12):
            for n in {1, max(1, m // (4 * k)), max(1, m // k), 2 * m // k + 1}:
                shape = dict(num_bits=m, num_hashes=k, n=n)
                assert exact_false_positive_rate(**shape) >= false_positive_rate(**shape) * (1 - 1e-12)
    shapes = [dict(num_bits=m, num_hashes=4, n=m // 8) for m in (2**6, 2**10, 2**14, 2**18, 2**22)]
    gaps = [exact_false_positive_rate(**shape) / false_positive_rate(**shape) - 1 for shape in shapes]
    assert all(a > b > 0 for a, b in zip(gaps, gaps[1:]))
    assert gaps[-1] < 1e-5


def test_measured_rate_std_from_the_two_moments():
    for m, n, k, q in [(1000, 100, 4, 20_000), (16, 2, 3, 100), (257, 30, 5, 1)]:
        mean, square = moment_by_sum(m, k * n, k), moment_by_sum(m, k * n, 2 * k)
        variance = (mean - square) / q + square - mean ** 2
        assert measured_rate_std(num_bits=m, num_hashes=k, n=n, num_queries=q) == pytest.approx(math.sqrt(variance), rel=1e-9)
    assert measured_rate_std(num_bits=1000, num_hashes=3, n=0, num_queries=100) == 0.0


# --- sizing -------------------------------------------------------------------------------
def test_optimal_num_hashes_is_the_best_whole_k():
    for m, n in [(10_000, 1000), (1000, 1000), (9586, 1000), (2**16, 2**13), (100, 3), (64, 640)]:
        best = min(range(1, 200), key=lambda k: false_positive_rate(num_bits=m, num_hashes=k, n=n))
        assert optimal_num_hashes(num_bits=m, n=n) == best


def test_num_bits_for_is_the_fewest_bits_and_matches_from_capacity():
    for n, p in [(1_000_000, 0.001), (1000, 0.01), (7, 0.5), (12345, 1e-6)]:
        m = num_bits_for(n=n, p=p)
        assert BloomFilter.from_capacity(n, p).num_bits == m
        rate = lambda bits: math.exp(-bits / n * math.log(2) ** 2)  # classic rate at the best real k
        assert rate(m) <= p * (1 + 1e-12) and rate(m - 1) > p * (1 - 1e-12)


# Where (m/n) ln 2 lies just below a half-way point, rounding it and taking the better of the
# two whole k disagree: at p = 2**-10.495, (m/n) ln 2 = 10.495 rounds to 10, and k = 11 errs less.
SPLIT_P = 2 ** -10.495


def test_one_sizing_rule_and_one_best_k_for_the_command_line_and_every_class():
    from bloomedu import RotatingBloomFilter, ScalableBloomFilter
    from bloomedu.cli import size_report
    from bloomedu.core.keyed import KeyedBloomFilter
    from bloomedu.core.theory import size_for
    from bloomedu.variants.theory import generation_fpp

    m, k = size_for(n=1000, p=SPLIT_P)
    assert (m, k) == (num_bits_for(n=1000, p=SPLIT_P), optimal_num_hashes(num_bits=m, n=1000)) and k == 11
    assert (BloomFilter.from_capacity(1000, SPLIT_P).num_hashes, size_report(items=1000, fpp=SPLIT_P).num_hashes,
            KeyedBloomFilter.from_capacity(1000, SPLIT_P, bytes(16)).num_hashes) == (k, k, k)
    for g in (2, 3, 5):  # a generation's rate: sized by the same rule
        rotating = RotatingBloomFilter(1000, SPLIT_P, g)
        assert (rotating.num_bits, rotating.num_hashes) == size_for(n=1000, p=generation_fpp(SPLIT_P, g))
    scalable = ScalableBloomFilter(1000, 0.01, first_fpp=SPLIT_P)
    scalable.add_many(range(5000))
    for i, table in enumerate(scalable.tables):
        assert (table.num_bits, table.num_hashes) == size_for(n=scalable.capacity(i),
                                                              p=SPLIT_P * 0.9 ** i)


def test_bits_per_item_and_the_lower_bound():
    for p in (0.5, 0.01, 0.001, 1e-9):
        assert lower_bound_bits_per_item(p) == pytest.approx(math.log(1 / p, 2))
        assert bits_per_item(p) / lower_bound_bits_per_item(p) == pytest.approx(math.log2(math.e))
        assert bits_per_item(p) == pytest.approx(num_bits_for(n=10**9, p=p) / 10**9, rel=1e-8)


# --- counting what is in a filter --------------------------------------------------------
def test_estimate_count_recovers_n_on_real_filters():
    rng = np.random.default_rng(4)
    for m, k, n in [(2**16, 4, 5000), (10_000, 7, 1000), (2**14, 2, 12_000)]:
        bloom = BloomFilter(m, k)
        bloom.add_many(rng.integers(2**63, size=n, dtype=np.uint64))
        # variance of the empty bits after kn throws, then the delta method
        t = k * n
        empty_var = (m * (m - 1) * (1 - 2 / m) ** t + m * (1 - 1 / m) ** t
                     - (m * (1 - 1 / m) ** t) ** 2)
        std = math.sqrt(empty_var) / (k * (1 - 1 / m) ** t)
        assert abs(estimate_count(num_bits=m, num_hashes=k, bits_set=bloom.bits_set()) - n) < 4 * std + 0.01 * n


def test_estimate_count_edges_and_inverse():
    assert estimate_count(num_bits=100, num_hashes=3, bits_set=0) == 0.0
    assert estimate_count(num_bits=100, num_hashes=3, bits_set=100) == math.inf
    m, k, n = 10_000, 5, 800
    expected_set = m * -math.expm1(-k * n / m)
    assert estimate_count(num_bits=m, num_hashes=k, bits_set=expected_set) == pytest.approx(n, rel=1e-12)


# --- bad input ------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda: exact_false_positive_rate(num_bits=0, num_hashes=1, n=1),
    lambda: exact_false_positive_rate(num_bits=10, num_hashes=1, n=-1),
    lambda: exact_false_positive_rate(num_bits=10, num_hashes=0, n=1),
    lambda: exact_false_positive_rate(num_bits=10.5, num_hashes=1, n=1),
    lambda: measured_rate_std(num_bits=10, num_hashes=1, n=1, num_queries=0),
    lambda: estimate_count(num_bits=10, num_hashes=1, bits_set=11),
    lambda: estimate_count(num_bits=10, num_hashes=1, bits_set=-1),
    lambda: estimate_count(num_bits=0, num_hashes=1, bits_set=1),
    lambda: estimate_count(num_bits=10, num_hashes=0, bits_set=1),
    lambda: bits_per_item(0), lambda: bits_per_item(1), lambda: lower_bound_bits_per_item(1.5),
    lambda: false_positive_rate(num_bits=0, num_hashes=1, n=1), lambda: optimal_num_hashes(num_bits=10, n=0),
    lambda: num_bits_for(n=10, p=0), lambda: collision_probability(-1, 10),
    lambda: expected_collisions(3, 0), lambda: bit_vector_false_positive_rate(num_bits=0, n=3),
])
def test_bad_values_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


@pytest.mark.parametrize("call", [
    lambda: exact_false_positive_rate(num_bits="10", num_hashes=1, n=1),
    lambda: exact_false_positive_rate(num_bits=10, num_hashes=1, n=True),
    lambda: measured_rate_std(num_bits=10, num_hashes=1, n=1, num_queries=None),
])
def test_bad_types_raise_type_error(call):
    with pytest.raises(TypeError):
        call()


def test_error_names_argument_and_range():
    with pytest.raises(ValueError, match=r"num_hashes must be a whole number in 1\.\.1024, got 0"):
        exact_false_positive_rate(num_bits=10, num_hashes=0, n=1)
    with pytest.raises(ValueError, match=r"bits_set must be a number from 0 to num_bits=10"):
        estimate_count(num_bits=10, num_hashes=1, bits_set=11)


# --- at the bound: k = MAX_HASHES ---------------------------------------------------------
def moments_by_counting(m, throws, powers):
    """E[(X/m)^power] for each power, by counting words in exact integers (object arrays).

    D[r]: words of `power` letters over m with exactly r distinct letters; N[r]: words of
    `throws` letters that use all of r given letters.  The moment is sum_r D[r] N[r] / m^(...).
    """
    most = min(max(powers), m)
    r = np.arange(most + 1, dtype=object)
    words = np.zeros(most + 1, dtype=object)
    words[0] = 1
    for _ in range(throws):
        words[1:] = (m - r[1:]) * words[1:] + r[1:] * words[:-1]
        words[0] *= m
    moments, distinct, done = [], np.zeros(most + 1, dtype=object), 0
    distinct[0] = 1
    for power in sorted(powers):
        for _ in range(power - done):
            distinct[1:] = r[1:] * distinct[1:] + (m - r[1:] + 1) * distinct[:-1]
            distinct[0] = 0
        done = power
        moments.append(Fraction(int(np.dot(distinct, words)), m ** (power + throws)))
    return moments


def test_moments_by_counting_agree_with_the_other_references():
    for m, throws, power in [(1, 3, 2), (7, 6, 4), (30, 20, 9), (12, 40, 1)]:
        assert moments_by_counting(m, throws, [power]) == [moment(m, throws, power)]


def test_exact_rate_at_the_largest_k():
    k = MAX_HASHES
    for m, n in [(1100, 1), (200, 2)]:  # thinned throws; inclusion-exclusion
        [mean] = moments_by_counting(m, k * n, [k])
        assert float(mean) > 1e-290
        assert exact_false_positive_rate(num_bits=m, num_hashes=k, n=n) == pytest.approx(float(mean), rel=1e-11)


def test_measured_rate_std_at_the_largest_k():
    m, n, k, q = 200, 2, MAX_HASHES, 1000
    mean, square = moments_by_counting(m, k * n, [k, 2 * k])
    std = math.sqrt(float((mean - square) / q + square - mean ** 2))
    assert measured_rate_std(num_bits=m, num_hashes=k, n=n, num_queries=q) == pytest.approx(std, rel=1e-9)
