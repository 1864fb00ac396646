"""Exercises for lesson 19: blocked filters, one cache miss per key, and what that costs.

Posed in ``notebooks/19_blocked_filters.ipynb``, answered in
``notebooks/solutions/19_blocked_filters_solutions.ipynb``; tested in ``tests/test_exercises.py``.
"""

from __future__ import annotations

import math

from ...i18n import N_, gettext as _
from ._feedback import Exercise, Mistake, checker, fmt, judge, judge_measured

__all__ = ["cache_lines_touched", "split_block_fpp", "measured_blocked_fpp", "EXERCISES"]

_LINE_BITS = 512  # a 64-byte cache line


def _split_block_moments(n: float, num_blocks: int) -> tuple[float, float]:
    """Mean and variance over blocks of a block's rate (1 - (31/32)^j)^8, j ~ Poisson(n/B)."""
    mean = n / num_blocks
    spread = 12 * math.sqrt(mean) + 12
    first, second = 0.0, 0.0
    for j in range(max(1, int(mean - spread)), int(mean + spread) + 1):
        weight = math.exp(j * math.log(mean) - mean - math.lgamma(j + 1))
        rate = (-math.expm1(j * math.log1p(-1 / 32))) ** 8
        first, second = first + weight * rate, second + weight * rate * rate
    return first, second - first * first


@checker
def cache_lines_touched(answer, *, num_bits: int = 14_377_588, num_hashes: int = 10):
    """Expected distinct 64-byte cache lines that the k positions of one key fall in.

    L lines of 512 bits; k uniform positions miss a given line with probability
    (1 - 1/L)^k, so the expected number of lines touched is L (1 - (1 - 1/L)^k).

    >>> cache_lines_touched(9.998, num_bits=14_377_588, num_hashes=10)
    Correct: the expected number of cache lines touched = 9.998.
    True
    >>> cache_lines_touched(1, num_bits=14_377_588, num_hashes=10)
    Not quite: one line is the blocked filter's answer; this plain filter spreads its k = 10 positions over all 28,082 lines.
    False
    """
    lines = math.ceil(num_bits / _LINE_BITS)
    expected = lines * -math.expm1(num_hashes * math.log1p(-1 / lines))
    return judge(answer, expected, _("the expected number of cache lines touched"), rel=2e-3,
                 mistakes=[Mistake(1, _("one line is the blocked filter's answer; this plain filter "
                                        "spreads its k = {num_hashes} positions over all {lines} lines").format(num_hashes=num_hashes, lines=format(lines, ",")), 0.5),
                           Mistake(lines, _("that is the number of lines in the filter; the question is how "
                                            "many of them one key's k = {num_hashes} positions fall in").format(num_hashes=num_hashes))],
                 hint=_("k positions in L lines: L (1 - (1 - 1/L)^k), about k when L is large."))


@checker
def split_block_fpp(answer, *, num_blocks: int = 1_000, n: int = 20_000):
    """The rate of a split-block filter of ``num_blocks`` 256-bit blocks after n keys.

    >>> split_block_fpp(0.003974, n=20_000, num_blocks=1_000)
    Correct: the split-block false-positive rate = 0.003974.
    True
    >>> split_block_fpp(0.002176, n=20_000, num_blocks=1_000)
    Not quite: that is a plain filter's rate with k = 8 and the same m; a blocked filter's blocks fill unevenly, so average the rate over the Poisson number of keys per block.
    False
    """
    rate, unused = _split_block_moments(n, num_blocks)
    load = n / num_blocks
    m = 256 * num_blocks
    return judge(answer, rate, _("the split-block false-positive rate"), rel=5e-3, unit="rate",
                 mistakes=[
                     Mistake((-math.expm1(-8 * n / m)) ** 8, _("that is a plain filter's rate with "
                             "k = 8 and the same m; a blocked filter's blocks fill unevenly, so "
                             "average the rate over the Poisson number of keys per block")),
                     Mistake((-math.expm1(load * math.log1p(-1 / 32))) ** 8, _("that is the rate of a block with exactly the mean load, {load} "
                                                                               "keys; blocks hold a Poisson number of keys and the rate is "
                                                                               "convex in it, so average over that distribution").format(load=fmt(load))),
                 ], hint=_("the sum over j of Poisson(j; n/B) (1 - (31/32)^j)^8."))


@checker
def measured_blocked_fpp(answer, *, num_bits: int = 256_000, n: int = 20_000,
                         trials: int = 100_000):
    """A rate measured on ``trials`` keys never inserted, for BlockedBloomFilter(num_bits)
    holding n keys: within 4 standard deviations of the Poisson average.

    The spread has two parts: the queries (a binomial count) and the filter itself (which
    blocks got many keys), the variance of a block's rate over the blocks.

    >>> measured_blocked_fpp(0.0041, num_bits=256_000, n=20_000, trials=100_000)
    Correct: 0.0041 is within 4 standard deviations (4 x 0.00025) of the expected 0.003974.
    True
    """
    num_blocks = -(-num_bits // 256)
    rate, block_variance = _split_block_moments(n, num_blocks)
    sd = math.sqrt(rate * (1 - rate) / trials + block_variance / num_blocks)
    return judge_measured(answer, rate, sd, _("the measured rate of the blocked filter"),
                          trials=trials)


EXERCISES = [
    Exercise("19", 1, "compute",
             N_("On average, how many distinct 64-byte cache lines do the k = {num_hashes} "
                "positions of one key touch in BloomFilter.from_capacity(1_000_000, 0.001), m = "
                "{num_bits:,} bits?"),
             "cache_lines_touched", {"num_bits": 14_377_588, "num_hashes": 10}),
    Exercise("19", 2, "predict",
             N_("What false-positive rate do you expect from a split-block filter of "
                "{num_blocks:,} blocks (256 bits each) after n = {n:,} keys?"),
             "split_block_fpp", {"n": 20_000, "num_blocks": 1_000}),
    Exercise("19", 3, "measure",
             N_("Fill BlockedBloomFilter({num_bits:_}) with {n:,} random keys and measure its "
                "false-positive rate on {trials:,} keys never inserted."),
             "measured_blocked_fpp", {"num_bits": 256_000, "n": 20_000, "trials": 100_000}),
]
