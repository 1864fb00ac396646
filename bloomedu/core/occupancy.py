"""The exact false-positive rate: moments of the number of bits a filter has set.

Bose, Guo, Kranakis, Maheshwari, Morin, Morrison, Smid and Tang ("On the
false-positive rate of Bloom filters", IPL 108(4), 2008) showed that Bloom's
(1 - e^(-kn/m))^k is not the exact rate; Christensen, Roginsky and Jimeno ("A
new analysis of the false positive rate of a Bloom filter", IPL 110(21), 2010)
gave it as a sum of Stirling numbers.  With t = kn positions thrown uniformly
into m bits and X the bits they set, the rate is E[(X/m)^k], the chance that k
more throws (a query) land only on set bits.  That sum alternates and cancels
hundreds of digits; this module computes the same value with positive terms
only, in three steps:

1. Probes first (the throws are exchangeable): the k query throws hit R distinct
   bits, a chain r -> r+1 with probability 1 - r/m, k steps
   (:func:`_distinct_probes`).
2. Q_r, the chance that the t throws cover r given bits (:func:`covered`):

   - when r (1 - 1/m)^t <= 1/2 for every r, by inclusion-exclusion,
     sum_j (-1)^j C(r, j) (1 - j/m)^t, whose terms fall at least as fast as
     2^-j / j!, so nothing cancels;
   - otherwise the throws that land on the r bits are s ~ Binomial(t, r/m),
     uniform over them, and Q_r = sum_s P(s) a_r(s), where a_r(s), the chance
     that s throws into r bins fill them all (r! S(s, r) / r^s), follows
     a_r(s+1) = a_r(s) + ((r-1)/r)^s a_{r-1}(s).  The sum over s stops where a
     bound shows the rest below 2^-56 of Q_r: occupancy counts are negatively
     associated (Dubhashi and Ranjan, "Balls and bins: a study in negative
     dependence", 1998), so a_r(s) <= (1 - (1 - 1/r)^s)^r.

3. E[(X/m)^k] = sum_r P(R = r) Q_r.

All terms are positive, so the relative error is a few roundings per term:
below 1e-11 in every case checked against the alternating sum in 900-digit
decimals (``tests/test_theory.py``), down to results near 1e-290 (tinier ones
lose digits; below the smallest double they are 0.0).  The cost is about
k^2 ln k operations at worst, a fraction of a second at k = 1024
(:data:`~bloomedu.core.checks.MAX_HASHES`).

Taught in ``notebooks/07_false_positive_rate.ipynb`` (through
:func:`bloomedu.core.theory.exact_false_positive_rate`) and derived in
``notebooks/deeper/07_exact_rate.ipynb``; tested in
``tests/test_theory.py``.
"""

from __future__ import annotations

import math

import numpy as np

from .checks import MAX_HASHES, MAX_NUM_BITS, whole_number

__all__ = ["covered", "occupancy_moments"]

_FLOOR = -700.0  # exp() of less is set to 0 (subnormal floats are slow and inexact)
_TINY = 1e-300
_SERIES_TERMS = 24  # inclusion-exclusion: the next term is below 2^-25 / 25!
_TAIL = 2.0 ** -56  # the neglected part of each Q_r, relative


def _log_stay(j: int, m: int) -> float:
    """log(1 - j/m): the log of the chance that a throw misses j given bins of m."""
    return math.log1p(-j / m) if j < m else -math.inf


def _exp(x: np.ndarray) -> np.ndarray:
    np.putmask(x, x < _FLOOR, -np.inf)
    return np.exp(x, out=x)


def _distinct_probes(m: int, power: int) -> np.ndarray:
    """P(R = r), r = 0..min(power, m): the distinct bins ``power`` uniform throws hit."""
    states = min(power, m) + 1
    r = np.arange(states, dtype=np.float64)
    onward, stay = (m - r) / m, r / m
    vector = np.zeros(states)
    vector[0] = 1.0
    for _ in range(power):
        moved = vector * onward
        vector *= stay
        vector[1:] += moved[:-1]
    np.putmask(vector, vector < _TINY, 0.0)
    return vector


def covered(m: int, throws: int, most: int) -> np.ndarray:
    """Q_r for r = 0..most: the chance that ``throws`` uniform throws into m bins hit r given bins.

    >>> covered(m=4, throws=3, most=2).round(6).tolist()   # r = 2: 1 - 2 (3/4)^3 + (1/2)^3
    [1.0, 0.578125, 0.28125]
    """
    m = whole_number(m, "m", 1, MAX_NUM_BITS)
    throws = whole_number(throws, "throws", 0, MAX_NUM_BITS * MAX_HASHES)  # k n of a filter
    most = whole_number(most, "most", 0, 2 * MAX_HASHES)  # the highest moment asked for
    r = np.arange(most + 1, dtype=np.float64)
    if throws == 0:
        return (r == 0).astype(np.float64)
    if most * math.exp(throws * _log_stay(1, m)) <= 0.5:
        total, choose = np.ones(most + 1), np.ones(most + 1)
        for j in range(1, min(most, _SERIES_TERMS) + 1):
            choose *= np.maximum(r - (j - 1), 0) / j
            total += choose * ((-1) ** j * math.exp(throws * _log_stay(j, m)))
        return total
    top = throws if m <= most else min(throws, max(_last_throw_count(m, throws, most) * 5 // 4,
                                                   most + 64))
    while True:
        q, complete = _thinned(m, throws, most, top)
        if complete or top == throws:
            return q
        top = min(throws, top * 3 // 2)


def _log_falling(s: np.ndarray, t: int) -> np.ndarray:
    """log(t (t-1) ... (t-s+1)) - s log t, for s = 0, 1, 2, ... (an arange)."""
    steps = np.log1p(-np.arange(s.size - 1, dtype=np.float64) / t)
    return np.concatenate([[0.0], np.cumsum(steps)])


def _log_factorial(s: np.ndarray) -> np.ndarray:
    return np.array([math.lgamma(x + 1.0) for x in s.tolist()])


def _last_throw_count(m: int, t: int, most: int) -> int:
    """Where the terms of Q_most become negligible, located with the bound on a_r(s)."""
    mu = t * most / m
    top = int(min(t, math.ceil(mu + 10 * math.sqrt(mu) + 4 * most + 50)))
    s = np.arange(top + 1, dtype=np.float64)
    p = most / m
    log_terms = (s * (math.log(mu) - math.log1p(-p)) + t * math.log1p(-p) + _log_falling(s, t)
                 - _log_factorial(s) + most * np.log(-np.expm1(-np.maximum(s, 0.5) / most)))
    big = np.flatnonzero(log_terms > log_terms.max() - 60)
    return int(big[-1]) + 32


def _thinned(m: int, t: int, most: int, top: int) -> tuple[np.ndarray, bool]:
    """Q_r for r = 0..most from the thinned throws s = 0..top; and whether the cut is proven."""
    s = np.arange(top + 1, dtype=np.float64)
    shared = _log_falling(s, t) - _log_factorial(s)
    q = np.zeros(most + 1)
    q[0] = 1.0
    fill = np.zeros(top + 1)  # a_r(s) for the current r, starting with a_0
    fill[0] = 1.0
    complete = True
    for r in range(1, most + 1):
        if r > top:  # top throws cannot cover r bins; exact only if top is all of them
            return q, top == t
        previous, fill = fill, np.zeros(top + 1)
        if r == 1:
            fill[1:] = 1.0
        else:
            step = _exp(s[r - 1:top] * math.log1p(-1 / r))
            step *= previous[r - 1:top]
            np.cumsum(step, out=fill[r:])
            np.putmask(fill, fill < _TINY, 0.0)
        if r == m:  # every throw lands on the r bins
            q[r] = fill[t]
            continue
        p = r / m
        log_p = shared[r:] + s[r:] * (math.log(t * p) - math.log1p(-p)) + t * math.log1p(-p)
        last = float(log_p[-1])
        q[r] = float(np.dot(_exp(log_p), fill[r:]))
        if top < t and not _tail_is_negligible(last, q[r], p, t, top, r):
            complete = False
    return q, complete


def _tail_is_negligible(log_last: float, q: float, p: float, t: int, top: int, r: int) -> bool:
    """Whether sum over s > top of P(s) a_r(s) is below 2^-56 of q, by the bound on a_r."""
    bound = r * math.log(-math.expm1(top * math.log1p(-1 / r))) if r > 1 else 0.0
    growth = (t - top) / (top + 1) * p / (1 - p)
    if r > 1:
        growth *= ((-math.expm1((top + 1) * math.log1p(-1 / r)))
                   / -math.expm1(top * math.log1p(-1 / r))) ** r
    if growth >= 1:
        return False
    tail = math.exp(min(log_last + bound, 700.0)) * growth / (1 - growth)
    return tail <= max(_TAIL * q, 1e-300)


def occupancy_moments(m: int, throws: int, powers: list[int]) -> list[float]:
    """E[(X/m)^power] for each power, X the bins that ``throws`` uniform throws into m bins hit.

    >>> [f"{v:.6f}" for v in occupancy_moments(m=16, throws=4, powers=[2, 4])]
    ['0.052873', '0.002990']
    """
    most = min(max(powers), m)
    q = covered(m, throws, most)
    moments = []
    for power in powers:
        distinct = _distinct_probes(m, power)
        moments.append(min(1.0, max(0.0, float(np.dot(distinct, q[:distinct.size])))))
    return moments
