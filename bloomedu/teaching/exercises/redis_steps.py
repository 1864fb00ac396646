"""Exercises for lesson 17: RedisBloom's BF.RESERVE sizing, its growth, and the rate of its chain.

Article 1's deduplicator shared on Redis: how many bits ``BF.RESERVE`` gives the first
sub-filter (half the error rate, floor, whole 64-bit words), how many sub-filters a
stream opens, and the false-positive rate of the whole chain, measured.
"""

from __future__ import annotations

import math

from ...core import theory
from ...core.checks import MAX_NUM_BITS, whole_number
from ._feedback import Exercise, Mistake, checker, judge, judge_measured

__all__ = ["EXERCISES", "chain_loads"]

_LN2_SQUARED = 0.480453013918201  # RedisBloom's (ln 2)^2


def _module_bits(entries: int, error: float, log=math.log, whole_words: bool = True) -> int:
    bits = max(1, int(entries * -log(error) / _LN2_SQUARED))
    return 64 * -(-bits // 64) if whole_words else bits


_MOST_LINKS = 10_000  # sub-filters chain_loads lists: with expansion 2 a chain of 2**63 has 63


def chain_loads(capacity: int, expansion: int, n: int) -> list[tuple[int, float, int]]:
    """(entries, error, items) of each sub-filter after n distinct items, none a false positive.

    >>> chain_loads(1000, 2, 5000)
    [(1000, 0.005, 1000), (2000, 0.0025, 2000), (4000, 0.00125, 2000)]
    """
    capacity = whole_number(capacity, "capacity", 1, MAX_NUM_BITS)
    expansion = whole_number(expansion, "expansion", 1, MAX_NUM_BITS)
    n = whole_number(n, "n", 0, MAX_NUM_BITS)
    if expansion == 1 and -(-n // capacity) > _MOST_LINKS:
        raise ValueError(f"n={n} items in sub-filters of capacity={capacity} make "
                         f"{-(-n // capacity):,} sub-filters, more than the {_MOST_LINKS:,} "
                         "this table lists")
    loads, entries, error = [], capacity, 0.01 / 2
    while n > 0:
        loads.append((entries, error, min(n, entries)))
        n -= entries
        entries, error = entries * expansion, error / 2
    return loads


@checker
def redisbloom_bits(answer, error: float = 0.001, capacity: int = 1_000_000):
    """Bits of the first sub-filter of ``BF.RESERVE key error capacity``.

    >>> redisbloom_bits(15_820_288, error=0.001, capacity=1_000_000)
    Correct: the first sub-filter's bits = 15,820,288.
    True
    """
    correct = _module_bits(capacity, error / 2)
    return judge(answer, correct, "the first sub-filter's bits", rel=0, abs_tol=0.5, unit="bits",
                 mistakes=[
        Mistake(_module_bits(capacity, error), "a scaling filter sizes its first sub-filter for "
                "half the error rate (error/2); error itself is for NONSCALING"),
        Mistake(theory.num_bits_for(capacity, error), "that is lesson 09's from_capacity; RedisBloom "
                "uses half the error rate and whole 64-bit words", 64),
        Mistake(_module_bits(capacity, error / 2, whole_words=False), "the module rounds the bits "
                "up to whole 64-bit words", 0.5),
        Mistake(_module_bits(capacity, error / 2, math.log10), "you used log10 instead of ln", 64),
    ], hint="bits = floor(capacity * -ln(error/2) / (ln 2)^2), rounded up to a multiple of 64.")


@checker
def redisbloom_filters(answer, capacity: int = 1000, expansion: int = 2, n: int = 10_000):
    """Sub-filters (``Number of filters`` in BF.INFO) after n distinct items.

    >>> redisbloom_filters(4, capacity=1000, expansion=2, n=10_000)
    Correct: the number of sub-filters = 4.
    True
    """
    correct = len(chain_loads(capacity, expansion, n))
    return judge(answer, correct, "the number of sub-filters", rel=0, mistakes=[
        Mistake(math.ceil(n / capacity), f"each new sub-filter holds {expansion} times the last "
                "one's capacity, not the same", 0),
        Mistake(correct - 1, "a new sub-filter opens when the newest is full and one more new "
                "item arrives: count the one that holds the last items", 0),
        Mistake(correct + 1, "the last sub-filter is not full, and no further one opens", 0),
    ], hint="capacities c, c*e, c*e^2, ... add up until they hold n.")


def _chain_rate(capacity: int, expansion: int, n: int, trials: int) -> tuple[float, float]:
    """The chain's expected rate 1 - prod(1 - p_i) over its sub-filters, and its sd."""
    survive, variance = 1.0, 0.0
    for entries, error, items in chain_loads(capacity, expansion, n):
        bits, k = _module_bits(entries, error), math.ceil(0.693147180559945 * -math.log(error) / _LN2_SQUARED)
        rate = theory.exact_false_positive_rate(bits, items, k)
        survive *= 1 - rate
        variance += theory.measured_rate_std(bits, items, k, trials) ** 2
    return 1 - survive, math.sqrt(variance)


@checker
def measured_chain_fpp(answer, capacity: int = 1000, expansion: int = 2, n: int = 10_000,
                       trials: int = 100_000):
    """A rate measured on ``trials`` IDs never added to RedisBloomFilter(0.01, capacity) holding n.

    >>> measured_chain_fpp(0.0085, capacity=1000, expansion=2, n=10_000, trials=100_000)
    Correct: 0.0085 is within 4 standard deviations (4 x 0.00037) of the expected 0.008639.
    True
    """
    expected, sd = _chain_rate(capacity, expansion, n, trials)
    return judge_measured(answer, expected, sd, "the chain's measured false-positive rate",
                          trials=trials)


EXERCISES = [
    Exercise("17", 1, "compute", "How many bits does BF.RESERVE key {error} {capacity:_} give its "
             "first sub-filter?", "redisbloom_bits", {"error": 0.001, "capacity": 1_000_000}),
    Exercise("17", 2, "predict", "BF.RESERVE key 0.01 {capacity:_} (expansion {expansion}) receives "
             "{n:,} distinct IDs. How many sub-filters does BF.INFO report?", "redisbloom_filters",
             {"capacity": 1000, "expansion": 2, "n": 10_000}),
    Exercise("17", 3, "measure", "Add {n:,} distinct IDs to RedisBloomFilter(0.01, {capacity:_}) and "
             "measure the fraction of {trials:,} other IDs it claims to hold.", "measured_chain_fpp",
             {"capacity": 1000, "expansion": 2, "n": 10_000, "trials": 100_000}),
]
