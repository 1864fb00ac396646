"""Exercises for lessons 15 and 16: deduplicators that forget, delete and grow.

Lesson 15 (article 1's "remove the messages older than an hour"): sizing rotating
generations, the stable filter's stable point (Deng and Rafiei 2006), and a rate measured on
an age-partitioned filter (Shtul, Baquero and Almeida 2020).  Lesson 16 (article 1's "cannot
be removed", and traffic not known in advance): the bound a scalable filter stays under
(Almeida et al. 2007), the saturated counters of a counting filter (Fan et al. 2000), and a
rate measured on a scalable filter.  Posed in ``notebooks/15_forgetting_old_clicks.ipynb``
and ``notebooks/16_deleting_and_growing.ipynb``, answered in their solutions notebooks;
tested in ``tests/test_exercises.py``.
"""

from __future__ import annotations

import math

from ...core.checks import MAX_HASHES, whole_number
from ...core.theory import LN2, exact_false_positive_rate, measured_rate_std, num_bits_for, size_for
from ...variants import theory as vt
from ...i18n import N_, gettext as _
from ._feedback import Exercise, Mistake, checker, judge, judge_measured

__all__ = ["EXERCISES"]


def _generation_bytes(capacity: float, fpp: float) -> float:
    return -capacity * math.log(fpp) / LN2 ** 2 / 8


@checker
def rotating_filter_bytes(answer, window: int = 36_000_000, fpp: float = 0.001,
                          generations: int = 4):
    """Bytes of g generations that remember at least ``window`` keys and err with ``fpp`` in all.

    Each generation holds window / (g - 1) keys at 1 - (1 - p)^(1/g); accepted within 1%.

    >>> rotating_filter_bytes(103_676_000, window=36_000_000, fpp=0.001, generations=4)
    Correct: the bytes of the rotating filter = 103,573,181.
    True
    """
    g = generations
    capacity = window / (g - 1)
    correct = g * num_bits_for(n=math.ceil(capacity), p=vt.generation_fpp(fpp, g)) / 8
    return judge(answer, correct, _("the bytes of the rotating filter"), rel=0.01, unit="bytes",
                 mistakes=[
        Mistake(g * _generation_bytes(capacity, fpp), _("each generation must err less than p: a query asks all {g}, so "
                                                        "each gets 1 - (1 - p)^(1/g), about p/{g}").format(g=g)),
        Mistake(g * _generation_bytes(window, vt.generation_fpp(fpp, g)), _("a generation holds window / (g - 1) keys: the oldest of the {g} "
                                                                            "may be dropped at any time, so the other {value} must hold the "
                                                                            "window").format(g=g, value=g - 1)),
        Mistake(g * _generation_bytes(window / g, vt.generation_fpp(fpp, g)), _("with window / g "
                "keys a generation, a key is only sure to survive (g - 1) g-ths of the window; "
                "use window / (g - 1)")),
        Mistake(correct / g, _("that is one generation; there are {g}").format(g=g)),
    ], hint=_("g generations of m = -n ln p_gen / (ln 2)^2 bits, n = window / (g - 1)."))


@checker
def stable_zero_fraction(answer, *, num_cells: int = 1_000_000, num_hashes: int = 4,
                         max_value: int = 3, decrements: int = 60):
    """The fraction of zero cells of a stable Bloom filter at its stable point.

    >>> stable_zero_fraction(0.82399, num_cells=1_000_000, num_hashes=4, max_value=3, decrements=60)
    Correct: the fraction of zero cells = 0.824.
    True
    """
    m, k, top, p = num_cells, num_hashes, max_value, decrements
    correct = vt.stable_zero_fraction(num_cells=m, num_hashes=k, max_value=top, decrements=p)
    q = 1 / (1 + 1 / (p * (1 / k - 1 / m)))
    return judge(answer, correct, _("the fraction of zero cells"), rel=2e-3, mistakes=[
        Mistake(q, _("that is the chance that one event before a setting is a "
                     "decrement; a cell is 0 after Max = {top} of them in a row: "
                     "raise it to the power Max").format(top=top)),
        Mistake((1 - correct) ** k, _("that is the false-positive rate (1 - z)^K; the question "
                "asks the fraction of zeros z")),
        Mistake(1 - correct, _("that is the fraction of non-zero cells")),
        Mistake((1 / (1 + 1 / (p / k))) ** top, _("close, but keep the 1/m term: P (1/K - 1/m)"),
                1e-7),
    ], hint=_("(1 / (1 + 1 / (P (1/K - 1/m))))^Max."))


@checker
def measured_apbf_fpp(answer, num_hashes: int = 6, extra_slices: int = 4,
                      generation_size: int = 1000, trials: int = 100_000):
    """A false-positive rate measured on an age-partitioned filter just before a shift.

    Accepted within 4 standard deviations of the rate with exact slice fills.

    >>> measured_apbf_fpp(0.0226, num_hashes=6, extra_slices=4, generation_size=1000)
    Correct: 0.0226 is within 4 standard deviations (4 x 0.00048) of the expected 0.02325.
    True
    """
    expected = vt.apbf_expected_false_positive_rate(num_hashes, extra_slices, generation_size)
    sd = math.sqrt(expected * (1 - expected) / trials)
    return judge_measured(answer, expected, sd, _("the measured false-positive rate"),
                          trials=trials)


@checker
def scalable_bound(answer, first_fpp: float = 0.009, tightening: float = 0.9):
    """The bound p0 / (1 - r) a scalable filter's rate stays under, however far it grows.

    >>> scalable_bound(0.09, first_fpp=0.009, tightening=0.9)
    Correct: the bound on the scalable filter's rate = 0.09.
    True
    """
    p0, r = first_fpp, tightening
    correct = vt.scalable_bound(p0, r)
    product = vt.compound_false_positive_rate(vt.scalable_fpps(p0, r, 2000))
    return judge(answer, correct, _("the bound on the scalable filter's rate"), rel=2e-3, unit="rate",
                 mistakes=[
        Mistake(p0, _("that is the first sub-filter's rate alone; every sub-filter added errs "
                "too, so add up p0 + p0 r + p0 r^2 + ...")),
        Mistake(p0 * r / (1 - r), _("the sum starts with the first sub-filter, which errs with "
                "p0 itself: p0 + p0 r + ... = p0 / (1 - r)")),
        Mistake(p0 / r, _("divide by 1 - r, not by r: p0 + p0 r + ... = p0 / (1 - r)")),
        Mistake(product, _("that is the limit of the product 1 - (1 - p0)(1 - p0 r)..., the rate "
                "itself, which is indeed below the bound; the question asks the bound, the sum "
                "p0 / (1 - r)"), 1e-4),
        Mistake(1 - r, _("that is 1 - r alone; the bound is p0 / (1 - r)")),
    ], hint=_("a geometric series: p0 + p0 r + p0 r^2 + ... = p0 / (1 - r)."))


@checker
def saturated_counters(answer, *, num_cells: int = 100_000, num_hashes: int = 7, n: int = 100_000):
    """Counters of a counting filter stuck at 15 (4 bits) after n distinct keys: m P(count >= 15).

    Each of the kn increments lands on a given counter with chance 1/m, so a counter's count
    is Binomial(kn, 1/m), about Poisson(kn/m).

    >>> saturated_counters(572, num_cells=100_000, num_hashes=7, n=100_000)
    Correct: the expected number of saturated counters = 571.7.
    True
    """
    m = whole_number(num_cells, "num_cells", 1, 2 ** 40)
    k = whole_number(num_hashes, "num_hashes", 1, MAX_HASHES)
    n = whole_number(n, "n", 0, 2 ** 40)
    at_least = lambda j: m * vt.counter_tail(num_cells=m, num_hashes=k, n=n, value=j)  # noqa: E731
    exactly = at_least(15) - at_least(16)
    return judge(answer, at_least(15), _("the expected number of saturated counters"), rel=0.01,
                 mistakes=[
        Mistake(exactly, _("that counts the counters at exactly 15 increments; a counter stays "
                "at 15 once it gets there, so count those with 15 or more")),
        Mistake(at_least(16), _("a 4-bit counter saturates at 15, its largest value: count 15 "
                "or more increments, not 16 or more")),
        Mistake(at_least(15) / m, _("that is one counter's chance; multiply by the m counters")),
        Mistake(m * (1 - math.exp(-k * n / m)), _("that is the number of non-zero counters; "
                "saturated ones have 15 or more increments")),
    ], hint=_("m P(X >= 15) with X ~ Binomial(kn, 1/m), about Poisson(kn/m)."))


def _scalable_rate(initial_capacity: int, fpp: float, n: int, trials: int,
                   growth: int = 2, tightening: float = 0.9) -> tuple[float, float]:
    """The expected rate of ScalableBloomFilter(initial_capacity, fpp) after n distinct keys,
    and its standard deviation: sub-filters of n0 s^i keys at p (1 - r) r^i, the last part full."""
    n0 = whole_number(initial_capacity, "initial_capacity", 1, 2 ** 40)
    n = whole_number(n, "n", 0, 2 ** 40)
    p0, rates, variance, i = fpp * (1 - tightening), [], 0.0, 0
    while n > 0 and i < 64:
        capacity = n0 * growth ** i
        m, k = size_for(n=capacity, p=p0 * tightening ** i)
        load = min(n, capacity)
        rates.append(exact_false_positive_rate(num_bits=m, num_hashes=k, n=load))
        variance += measured_rate_std(num_bits=m, num_hashes=k, n=load, num_queries=trials) ** 2
        n, i = n - load, i + 1
    return vt.compound_false_positive_rate(rates), math.sqrt(variance)


@checker
def measured_scalable_fpp(answer, *, initial_capacity: int = 100, n: int = 10_000,
                          fpp: float = 0.01, trials: int = 100_000):
    """A rate measured on ``trials`` keys never added to ScalableBloomFilter(initial_capacity,
    fpp) holding n keys: within 4 standard deviations of 1 - prod(1 - p_i).

    >>> measured_scalable_fpp(0.0046, initial_capacity=100, fpp=0.01, n=10_000)
    Correct: 0.0046 is within 4 standard deviations (4 x 0.00029) of the expected 0.004708.
    True
    """
    expected, sd = _scalable_rate(initial_capacity, fpp, n, trials)
    return judge_measured(answer, expected, sd, _("the scalable filter's measured false-positive rate"),
                          trials=trials, mistakes=[
        Mistake(fpp, _("{fpp} is the bound the filter promises to stay under, not what "
                       "it measures: query keys never added and count").format(fpp=fpp), 1e-12)])


EXERCISES = [
    Exercise("15", 1, "compute",
             N_("How many bytes does a rotating filter of {generations} generations need to "
                "remember at least the last {window:,} keys at a false-positive rate of {fpp} over "
                "all its generations?"),
             "rotating_filter_bytes", {"window": 36_000_000, "fpp": 0.001, "generations": 8}),
    Exercise("15", 2, "predict",
             N_("What fraction of its {num_cells:,} cells will a stable filter with K = "
                "{num_hashes}, Max = {max_value} and P = {decrements} hold at 0 once it is "
                "stable?"),
             "stable_zero_fraction",
             {"num_cells": 1_000_000, "num_hashes": 4, "max_value": 3, "decrements": 60}),
    Exercise("15", 3, "measure",
             N_("Fill AgePartitionedBloomFilter({num_hashes}, {extra_slices}, {generation_size}) "
                "with 30 generations of keys and query {trials:,} keys never inserted: what "
                "fraction does it report present?"),
             "measured_apbf_fpp",
             {"num_hashes": 6, "extra_slices": 4, "generation_size": 1000, "trials": 100_000}),
    Exercise("16", 1, "compute",
             N_("A scalable filter's first sub-filter errs with $p_0 = {first_fpp}$ and each new "
                "one with r = {tightening} times the rate of the one before. Bounding the compound "
                "rate by the sum of the sub-filters' rates, below what rate does it stay however "
                "far it grows?"),
             "scalable_bound", {"first_fpp": 0.02, "tightening": 0.8}),
    Exercise("16", 2, "predict",
             N_("CountingBloomFilter({num_cells:_}, {num_hashes}) receives {n:,} distinct keys. "
                "How many of its 4-bit counters do you expect to be stuck at their largest value, "
                "15?"),
             "saturated_counters", {"num_cells": 100_000, "num_hashes": 7, "n": 100_000}),
    Exercise("16", 3, "measure",
             N_("Add {n:,} distinct keys to ScalableBloomFilter({initial_capacity}, {fpp}) and "
                "measure the fraction of {trials:,} keys never added that it reports present."),
             "measured_scalable_fpp",
             {"initial_capacity": 1000, "fpp": 0.001, "n": 50_000, "trials": 100_000}),
]
