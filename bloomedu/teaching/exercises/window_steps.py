"""Exercises for lesson 15: deduplicators that forget (article 1's "remove the messages older
than an hour"): sizing rotating generations, the stable filter's stable point (Deng and
Rafiei 2006), and a rate measured on an age-partitioned filter (Shtul, Baquero and Almeida 2020).
"""

from __future__ import annotations

import math

from ...core.theory import LN2, num_bits_for
from ...variants import theory as vt
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
    correct = g * num_bits_for(math.ceil(capacity), vt.generation_fpp(fpp, g)) / 8
    return judge(answer, correct, "the bytes of the rotating filter", rel=0.01, unit="bytes",
                 mistakes=[
        Mistake(g * _generation_bytes(capacity, fpp), "each generation must err less than p: "
                f"a query asks all {g}, so each gets 1 - (1 - p)^(1/g), about p/{g}"),
        Mistake(g * _generation_bytes(window, vt.generation_fpp(fpp, g)), "a generation holds "
                f"window / (g - 1) keys: the oldest of the {g} may be dropped at any time, so "
                f"the other {g - 1} must hold the window"),
        Mistake(g * _generation_bytes(window / g, vt.generation_fpp(fpp, g)), "with window / g "
                "keys a generation, a key is only sure to survive (g - 1) g-ths of the window; "
                "use window / (g - 1)"),
        Mistake(correct / g, f"that is one generation; there are {g}"),
    ], hint="g generations of m = -n ln p_gen / (ln 2)^2 bits, n = window / (g - 1).")


@checker
def stable_zero_fraction(answer, num_cells: int = 1_000_000, num_hashes: int = 4,
                         max_value: int = 3, decrements: int = 60):
    """The fraction of zero cells of a stable Bloom filter at its stable point.

    >>> stable_zero_fraction(0.82399, num_cells=1_000_000, num_hashes=4, max_value=3, decrements=60)
    Correct: the fraction of zero cells = 0.824.
    True
    """
    m, k, top, p = num_cells, num_hashes, max_value, decrements
    correct = vt.stable_zero_fraction(m, k, top, p)
    q = 1 / (1 + 1 / (p * (1 / k - 1 / m)))
    return judge(answer, correct, "the fraction of zero cells", rel=2e-3, mistakes=[
        Mistake(q, f"that is the chance that one event before a setting is a decrement; a cell "
                f"is 0 after Max = {top} of them in a row: raise it to the power Max"),
        Mistake((1 - correct) ** k, "that is the false-positive rate (1 - z)^K; the question "
                "asks the fraction of zeros z"),
        Mistake(1 - correct, "that is the fraction of non-zero cells"),
        Mistake((1 / (1 + 1 / (p / k))) ** top, "close, but keep the 1/m term: P (1/K - 1/m)",
                1e-7),
    ], hint="(1 / (1 + 1 / (P (1/K - 1/m))))^Max.")


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
    return judge_measured(answer, expected, sd, "the measured false-positive rate",
                          trials=trials)


EXERCISES = [
    Exercise("15", 1, "compute", "How many bytes does a rotating filter of {generations} "
             "generations need to remember at least the last {window:,} keys at a "
             "false-positive rate of {fpp} over all its generations?", "rotating_filter_bytes",
             {"window": 36_000_000, "fpp": 0.001, "generations": 4}),
    Exercise("15", 2, "predict", "What fraction of its {num_cells:,} cells will a stable "
             "filter with K = {num_hashes}, Max = {max_value} and P = {decrements} hold at 0 "
             "once it is stable?", "stable_zero_fraction",
             {"num_cells": 1_000_000, "num_hashes": 4, "max_value": 3, "decrements": 60}),
    Exercise("15", 3, "measure", "Fill AgePartitionedBloomFilter({num_hashes}, {extra_slices}, "
             "{generation_size}) with 30 generations of keys and query {trials:,} keys never "
             "inserted: what fraction does it report present?", "measured_apbf_fpp",
             {"num_hashes": 6, "extra_slices": 4, "generation_size": 1000, "trials": 100_000}),
]
