"""Formulas for the structures that forget, delete and grow, from the papers that built them.

Symbols as everywhere in bloomedu: m cells (bits or counters), k hash functions, n items,
p false-positive rate; a function of two or more of them takes them by keyword only, in
that order (as in :mod:`bloomedu.core.theory`).  Each function cites its paper; lessons
``notebooks/15_forgetting_old_clicks.ipynb`` and ``notebooks/16_deleting_and_growing.ipynb``
measure them (derived in ``notebooks/deeper/15_age_partitioned_rate.ipynb``,
``notebooks/deeper/16_stable_filter_chain.ipynb`` and
``notebooks/deeper/16_counting_overflow.ipynb``), and
``tests/test_variants_rates.py`` holds each structure to it within a few standard deviations.

- Counting filters (Fan, Cao, Almeida and Broder, "Summary cache", IEEE/ACM ToN 8(3), 2000):
  the chance that a counter reaches a value, and their bound on an overflow of 4-bit counters.
- Scalable filters (Almeida, Baquero, Preguiça and Hutchison, "Scalable Bloom filters",
  IPL 101(6), 2007): sub-filter i errs with p0 r^i, so the compound rate stays below p0/(1 - r).
- Rotating generations: a query errs if any generation errs, 1 - prod(1 - p_j).
- Age-partitioned filters (Shtul, Baquero and Almeida, "Age-partitioned Bloom filters",
  arXiv:2001.03147, 2020): slices of m = ceil(k g / ln 2) bits, and the rate as the chance
  of a run of k set bits among k + l slices: the paper's (linear fills, an approximation)
  and the exact fills at a given moment of a generation, which the filter measures.
- Stable filters (Deng and Rafiei, "Approximately detecting duplicates for streaming data
  using stable Bloom filters", SIGMOD 2006): the fraction of zero cells at the stable point,
  the stable false-positive rate, and false negatives as the gap to a duplicate grows.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.checks import MAX_HASHES, probability, real_number, whole_number
from ..core.theory import exact_false_positive_rate

__all__ = [
    "counter_tail", "counter_overflow_bound",
    "scalable_fpps", "scalable_bound", "compound_false_positive_rate",
    "generation_fpp", "rotating_false_positive_rate",
    "apbf_slice_bits", "apbf_false_positive_rate", "apbf_expected_fills", "run_probability",
    "apbf_expected_false_positive_rate", "apbf_average_false_positive_rate",
    "stable_zero_fraction", "stable_false_positive_rate", "stable_decrements_for",
    "stable_zero_fraction_after", "stable_false_negative_rate",
]

LN2 = math.log(2)
_BIG = 2 ** 62


# --- counting filters -----------------------------------------------------------------
def counter_tail(*, num_cells: int, num_hashes: int, n: int, value: int) -> float:
    """Chance that one counter has been incremented at least ``value`` times after n keys.

    Each of the kn increments lands on a given cell with probability 1/m, so its count is
    Binomial(kn, 1/m) (Fan et al. 2000, section V.C); with 4-bit counters, ``value = 15``
    is the chance that a counter is stuck at its maximum (saturated).

    >>> f"{counter_tail(num_cells=1000, num_hashes=8, n=1000, value=15):.5f}"
    '0.01721'
    """
    m = whole_number(num_cells, "num_cells", 1, _BIG)
    k = whole_number(num_hashes, "num_hashes", 1, MAX_HASHES)
    n = whole_number(n, "n", 0, _BIG)
    j0 = whole_number(value, "value", 0, _BIG)
    trials, q = n * k, 1.0 / m
    if j0 == 0:
        return 1.0
    if j0 > trials:
        return 0.0
    if q == 1.0:
        return 1.0
    def term(j):  # C(N, j) q^j (1 - q)^(N - j), in logs
        return math.exp(math.lgamma(trials + 1) - math.lgamma(j + 1) - math.lgamma(trials - j + 1)
                        + j * math.log(q) + (trials - j) * math.log1p(-q))
    mean = trials * q
    if j0 <= mean:  # the lower tail is the short one
        return max(0.0, 1.0 - math.fsum(term(j) for j in range(j0)))
    total, j = 0.0, j0
    while j <= trials:
        t = term(j)
        total += t
        if t < total * 1e-17:
            break
        j += 1
    return min(1.0, total)


def counter_overflow_bound(*, num_cells: int, num_hashes: int, n: int,
                           counter_bits: int = 4) -> float:
    """Fan et al.'s bound on the chance that any counter needs more than ``counter_bits`` bits.

    Pr(max count >= j) <= m (e n k / (j m))^j with j = 2**counter_bits; at the best
    k = (m/n) ln 2 that is m (e ln 2 / 16)^16 = m * 1.37e-15 for 4-bit counters, the paper's
    reason why four bits suffice.

    >>> f"{(math.e * LN2 / 16) ** 16:.3g}"   # the paper's factor for 4-bit counters
    '1.37e-15'
    >>> f"{counter_overflow_bound(num_cells=14_377_588, num_hashes=10, n=1_000_000):.2e}"
    '2.08e-08'
    """
    m = whole_number(num_cells, "num_cells", 1, _BIG)
    k = whole_number(num_hashes, "num_hashes", 1, MAX_HASHES)
    j = 2 ** whole_number(counter_bits, "counter_bits", 1, 16)
    return min(1.0, m * (math.e * whole_number(n, "n", 0, _BIG) * k / (j * m)) ** j)


# --- scalable filters ---------------------------------------------------------------------
def scalable_fpps(first_fpp: float, tightening: float, count: int) -> list[float]:
    """The error rates p0, p0 r, p0 r^2, ... of the first ``count`` sub-filters (Almeida et al.).

    >>> scalable_fpps(0.0005, 0.5, 3)
    [0.0005, 0.00025, 0.000125]
    """
    p0 = probability(first_fpp, "first_fpp")
    r = real_number(tightening, "tightening", 0.0, 1.0, open_low=True)
    return [p0 * r ** i for i in range(whole_number(count, "count", 0, 1 << 20))]


def scalable_bound(first_fpp: float, tightening: float) -> float:
    """The compound rate's limit as the filter grows without end: p0 / (1 - r).

    1 - prod(1 - p0 r^i) < sum p0 r^i = p0 / (1 - r); so p0 = p (1 - r) meets a target p.

    >>> round(scalable_bound(0.001 * (1 - 0.9), 0.9), 12), round(scalable_bound(0.0009, 0.9), 6)
    (0.001, 0.009)
    """
    p0 = probability(first_fpp, "first_fpp")
    r = probability(tightening, "tightening")
    return p0 / (1 - r)


def compound_false_positive_rate(rates) -> float:
    """The chance that at least one of several independent filters errs: 1 - prod(1 - p_i).

    >>> round(compound_false_positive_rate([0.001, 0.001]), 7)
    0.001999
    """
    return -math.expm1(math.fsum(math.log1p(-float(p)) for p in rates))


# --- rotating generations -----------------------------------------------------------------
def generation_fpp(fpp: float, generations: int) -> float:
    """The rate each of g generations may have so that a query of all of them errs with p.

    1 - (1 - p_gen)^g = p, so p_gen = 1 - (1 - p)^(1/g), a little above p / g.

    >>> f"{generation_fpp(0.001, 4):.6e}"
    '2.500938e-04'
    """
    p = probability(fpp, "fpp")
    g = whole_number(generations, "generations", 1, 1 << 20)
    return -math.expm1(math.log1p(-p) / g)


def rotating_false_positive_rate(*, num_bits: int, num_hashes: int, loads) -> float:
    """The rate of a query over generations of m bits and k hashes holding ``loads`` keys each.

    Each generation errs with its exact rate (:func:`bloomedu.core.theory.exact_false_positive_rate`);
    they are independent bit arrays, so the query errs with 1 - prod(1 - p_j).

    >>> f"{rotating_false_positive_rate(num_bits=9586, num_hashes=7, loads=[1000, 1000, 500]):.5f}"
    '0.02023'
    """
    return compound_false_positive_rate(
        exact_false_positive_rate(num_bits=num_bits, num_hashes=num_hashes, n=n) for n in loads)


# --- age-partitioned filters -------------------------------------------------------------------
def apbf_slice_bits(num_hashes: int, generation_size: int) -> int:
    """Bits per slice, m = ceil(k g / ln 2): a slice written by k generations of g keys is half set.

    >>> apbf_slice_bits(10, 1000)
    14427
    """
    k = whole_number(num_hashes, "num_hashes", 1, MAX_HASHES)
    g = whole_number(generation_size, "generation_size", 1, _BIG)
    return math.ceil(k * g / LN2)


def run_probability(fills, num_hashes: int) -> float:
    """Chance that k consecutive slices all have a fresh key's bit set, slice a with chance fills[a].

    A dynamic program over the slices, newest to oldest, on the length of the current run of
    set bits (0 .. k-1, and "found"): the query of an age-partitioned filter.

    >>> run_probability([0.5, 0.5, 0.5], 2)
    0.375
    """
    k = whole_number(num_hashes, "num_hashes", 1, MAX_HASHES)
    run = np.zeros(k)
    run[0], found = 1.0, 0.0
    for r in fills:
        r = float(r)
        found += run[k - 1] * r
        shifted = np.empty(k)
        shifted[0] = (1 - r) * run.sum()
        shifted[1:] = r * run[:-1]
        run = shifted
    return float(found)


def apbf_false_positive_rate(num_hashes: int, extra_slices: int) -> float:
    """The paper's false-positive rate of an age-partitioned filter with k + l slices.

    Shtul, Baquero and Almeida's recurrence (2020) for the chance of a run of k set bits
    (:func:`run_probability`) with the i-th newest slice set at (i + 1) / 2k for i < k and
    the l older slices at 1/2: the fills just before a shift if each slice's fill grew
    *linearly* with the generations it received.  Its public implementations compute the
    same (CrowdStrike's ``apbf.CalculateFalsePositiveRate``, decred's ``apbf.CalcFPRate``);
    their tables give 0.100586 for k = 4, l = 3 and 0.001211 for k = 10, l = 7.

    Fills do not grow linearly: a slice of m = k g / ln 2 bits that received j
    generations is set at 1 - 2^(-j/k), above j / 2k for 0 < j < k.  So this formula is
    an approximation, not the rate at any one moment: the true rate just before a shift
    (:func:`apbf_expected_false_positive_rate`) is above it (x1.07 at k = 4, l = 3; x1.22
    at k = 10, l = 7; x1.27 at k = 17, l = 13; and much more when k is large and l small:
    x15 at k = 20, l = 1), just after a shift below it (x0.70 to x0.95 at the paper's
    table points), and averaged over a generation
    (:func:`apbf_average_false_positive_rate`) close to it (x0.87 to x1.10 there).

    >>> f"{apbf_false_positive_rate(4, 3):.6f}", f"{apbf_false_positive_rate(10, 7):.6f}"
    ('0.100586', '0.001211')
    """
    k = whole_number(num_hashes, "num_hashes", 1, MAX_HASHES)
    l = whole_number(extra_slices, "extra_slices", 1, 1024)
    return run_probability([(i + 1) / (2 * k) if i < k else 0.5 for i in range(k + l)], k)


def apbf_expected_fills(num_hashes: int, extra_slices: int, generation_size: int,
                        count: int | None = None) -> list[float]:
    """The expected fill of each slice, newest first, in a filter that has run for a long time.

    With ``count`` keys in the current generation (default g, just before a shift), slice a
    has received count [a < k] + g min(a, k) keys, so its fill is 1 - (1 - 1/m)^that.

    >>> [round(x, 4) for x in apbf_expected_fills(2, 1, 100)]
    [0.2929, 0.5, 0.5]
    """
    k = whole_number(num_hashes, "num_hashes", 1, MAX_HASHES)
    l = whole_number(extra_slices, "extra_slices", 1, 1024)
    g = whole_number(generation_size, "generation_size", 1, _BIG)
    j = g if count is None else whole_number(count, "count", 0, g)
    m = apbf_slice_bits(k, g)
    log_empty = math.log1p(-1 / m) if m > 1 else -math.inf
    return [-math.expm1((j * (a < k) + g * min(a, k)) * log_empty) for a in range(k + l)]


def apbf_expected_false_positive_rate(num_hashes: int, extra_slices: int, generation_size: int,
                                      count: int | None = None) -> float:
    """The rate with ``count`` keys in the current generation, each slice's fill computed exactly.

    The same run of k set bits as :func:`apbf_false_positive_rate`, with the fills of
    :func:`apbf_expected_fills` (default ``count = g``, the fullest moment, just before a
    shift).  This is the rate a long-running filter measures (``tests/test_variants_rates.py``
    holds it within 5 sigma): the newest slice, holding g keys of the k g that half fill a
    slice, is set at 1 - 2^(-1/k), above the paper's 1/2k.

    >>> f"{apbf_expected_false_positive_rate(10, 7, 1000):.6f}"
    '0.001474'
    """
    return run_probability(apbf_expected_fills(num_hashes, extra_slices, generation_size, count),
                           num_hashes)


def apbf_average_false_positive_rate(num_hashes: int, extra_slices: int,
                                     generation_size: int) -> float:
    """The rate averaged over a generation: a query after each of its g inserts, in turn.

    The mean of :func:`apbf_expected_false_positive_rate` over ``count = 1 .. g`` (at most
    257 points, evenly spread, for a large g).  Close to the paper's formula.

    >>> f"{apbf_average_false_positive_rate(10, 7, 1000):.6f}", f"{apbf_false_positive_rate(10, 7):.6f}"
    ('0.001224', '0.001211')
    """
    g = whole_number(generation_size, "generation_size", 1, _BIG)
    counts = sorted(set(np.linspace(1, g, min(g, 257)).round().astype(int).tolist()))
    return math.fsum(apbf_expected_false_positive_rate(num_hashes, extra_slices, g, c)
                     for c in counts) / len(counts)


# --- stable filters ---------------------------------------------------------------------------
def _stable_args(num_cells, num_hashes, max_value, decrements):
    m, k = whole_number(num_cells, "num_cells", 1, _BIG), whole_number(num_hashes, "num_hashes", 1, MAX_HASHES)
    if k > m:  # K distinct cells an insert: the formulas' chance K/m of a cell
        raise ValueError(f"num_hashes must be at most num_cells={m} (the formulas take K of the "
                         f"m cells per insert), got {k}")
    return m, k, whole_number(max_value, "max_value", 1, 255), whole_number(decrements, "decrements", 1, _BIG)


def stable_zero_fraction(*, num_cells: int, num_hashes: int, max_value: int,
                         decrements: int) -> float:
    """Deng and Rafiei's fraction of zero cells at the stable point.

    A cell is set to Max with chance K/m per insert and decremented (and not set) with
    chance (P/m)(1 - K/m); it is 0 when its last Max events were all decrements:
    (1 / (1 + 1 / (P (1/K - 1/m))))^Max.

    >>> f"{stable_zero_fraction(num_cells=100_000, num_hashes=4, max_value=3, decrements=60):.5f}"
    '0.82397'
    """
    m, k, top, p = _stable_args(num_cells, num_hashes, max_value, decrements)
    if k == m:  # every insert sets every cell to Max: none is ever 0
        return 0.0
    return (1 / (1 + 1 / (p * (1 / k - 1 / m)))) ** top


def stable_false_positive_rate(*, num_cells: int, num_hashes: int, max_value: int,
                               decrements: int) -> float:
    """The stable false-positive rate, (1 - zero fraction)^K (Deng and Rafiei 2006).

    >>> shape = dict(num_cells=100_000, num_hashes=4, max_value=3, decrements=60)
    >>> f"{stable_false_positive_rate(**shape):.6f}"
    '0.000960'
    """
    zero = stable_zero_fraction(num_cells=num_cells, num_hashes=num_hashes, max_value=max_value,
                                decrements=decrements)
    return (1 - zero) ** int(num_hashes)


def stable_decrements_for(*, num_cells: int, num_hashes: int, max_value: int, fpp: float) -> int:
    """The P that gives a stable false-positive rate of at most ``fpp`` (rounded up).

    Solve (1 - z)^K = p for the zero fraction z, then z = q^Max for q, then
    q = 1 / (1 + 1 / (P (1/K - 1/m))) for P.

    >>> stable_decrements_for(num_cells=100_000, num_hashes=4, max_value=3, fpp=0.001)
    60
    """
    m, k, top, _ = _stable_args(num_cells, num_hashes, max_value, 1)
    p = probability(fpp, "fpp")
    if k == m:
        raise ValueError(f"with num_hashes = num_cells = {m} every insert sets every cell: the "
                         f"rate is 1 for any number of decrements, never fpp={p}")
    q = (1 - p ** (1 / k)) ** (1 / top)
    if q >= 1:  # a zero fraction of 1 - p**(1/K) rounds to 1: no finite P reaches it
        raise ValueError(f"fpp={p} is too small for num_cells={m}, num_hashes={k}, "
                         f"max_value={top}: no number of decrements keeps the rate that low")
    return max(1, math.ceil(1 / ((1 / q - 1) * (1 / k - 1 / m)) - 1e-9))


def _stable_chain(m: int, k: int, top: int, p: int, start: int, steps: int) -> np.ndarray:
    """Distribution of a cell's decrements since its last setting (0..Max, Max meaning 0).

    One insert: Binomial(P, 1/m) decrements land on the cell, then it is set to Max with
    chance 1 - (1 - 1/m)^K, exactly as :class:`~bloomedu.variants.stable.StableBloomFilter`
    does it.
    """
    states = top + 1
    d = np.arange(states)
    log_q = math.log1p(-1 / m) if m > 1 else -math.inf
    binom = np.array([math.exp(math.lgamma(p + 1) - math.lgamma(j + 1) - math.lgamma(p - j + 1)
                               + j * math.log(1 / m) + (p - j) * log_q) if j <= p else 0.0
                      for j in d])
    binom[top] = max(0.0, 1 - binom[:top].sum())  # top or more decrements
    set_chance = -math.expm1(k * log_q) if m > 1 else 1.0
    step = np.zeros((states, states))
    for state in d:
        for j in d:
            step[state, min(state + j, top)] += (1 - set_chance) * binom[j]
        step[state, 0] += set_chance
    vector = np.zeros(states)
    vector[start] = 1.0
    while steps:
        if steps & 1:
            vector = vector @ step
        steps >>= 1
        if steps:
            step = step @ step
    return vector


def stable_zero_fraction_after(*, num_cells: int, num_hashes: int, max_value: int, decrements: int,
                               inserts: int) -> float:
    """The expected fraction of zero cells after ``inserts`` keys went into an empty filter.

    It approaches :func:`stable_zero_fraction` geometrically (Deng and Rafiei's convergence).

    >>> shape = dict(num_cells=100_000, num_hashes=4, max_value=3, decrements=60)
    >>> f"{stable_zero_fraction_after(**shape, inserts=10**6):.4f}"
    '0.8240'
    """
    m, k, top, p = _stable_args(num_cells, num_hashes, max_value, decrements)
    return float(_stable_chain(m, k, top, p, start=top,
                               steps=whole_number(inserts, "inserts", 0, _BIG))[top])


def stable_false_negative_rate(*, num_cells: int, num_hashes: int, max_value: int, decrements: int,
                               gap: int) -> float:
    """Chance that a key is reported absent after ``gap`` other keys were inserted since it.

    Its K cells start at Max; each reaches 0 after Max decrements with no setting between
    (:func:`_stable_chain`); the key is lost when any one does: 1 - (1 - z_gap)^K.

    >>> shape = dict(num_cells=100_000, num_hashes=4, max_value=3, decrements=60)
    >>> [f"{stable_false_negative_rate(**shape, gap=gap):.4f}" for gap in (0, 1000)]
    ['0.0000', '0.0868']
    """
    m, k, top, p = _stable_args(num_cells, num_hashes, max_value, decrements)
    zero = float(_stable_chain(m, k, top, p, start=0, steps=whole_number(gap, "gap", 0, _BIG))[top])
    return -math.expm1(k * math.log1p(-zero)) if zero < 1 else 1.0
