"""Formulas: what the lessons measure against.

Symbols as in the literature: m bits, k hash functions, n inserted items,
p false-positive rate.

- The birthday bound for a b-bit hash (lesson 02; derived in ``deeper/02_birthday_bound``).
- The single-hash bit vector of article 1, step 3: 1 - (1 - 1/m)^n (lesson 03).
- The classic Bloom rate (1 - e^(-kn/m))^k (Bloom 1970, as usually simplified),
  its optimum k = (m/n) ln 2 and the sizing m = -n ln p / (ln 2)^2 that article
  2's Guava example uses: :func:`size_for` is the one sizing rule of the library (the
  command line, ``BloomFilter.from_capacity`` and every variant's tables), with the best
  whole k of :func:`optimal_num_hashes` (the rate in lesson 07, the sizing in lesson 08).
- The exact rate when the kn positions are independent and uniform (Bose et
  al. 2008; Christensen, Roginsky and Jimeno 2010), which the classic one only
  approaches from below, and the spread of a rate measured with q queries
  (lesson 07; derived in ``deeper/07_exact_rate`` and ``deeper/07_measured_rates``); both
  computed in :mod:`bloomedu.core.occupancy`.
- Space: bits per item against the information-theoretic lower bound, and
  estimating n back from the number of bits set (Swamidass and Baldi 2007).

A function of two or more of m, k, n and p takes them by keyword only, declared in
that order: ``false_positive_rate(num_bits=9586, num_hashes=7, n=1000)``.  Called by
position, as ``false_positive_rate(9586, 7, 1000)``, it raises TypeError rather than
answer with k and n swapped.

Every argument goes through :mod:`bloomedu.core.checks` first: any integer or
real type works (numpy scalars, ``Fraction``, ``Decimal``) and gives the result
its Python value gives, and k is at most 1024 (``MAX_HASHES``) everywhere.

Taught in ``notebooks/02_hashed_ids.ipynb``, ``notebooks/03_bit_vector.ipynb``,
``notebooks/07_false_positive_rate.ipynb`` and ``notebooks/08_sizing_a_filter.ipynb``; tested in
``tests/test_theory.py``.
"""

from __future__ import annotations

import math

from .checks import MAX_HASHES, MAX_NUM_BITS, probability, real_number, whole_number
from .occupancy import occupancy_moments

__all__ = [
    "expected_collisions",
    "collision_probability",
    "bit_vector_false_positive_rate",
    "false_positive_rate",
    "optimal_num_hashes",
    "num_bits_for",
    "hashes_for",
    "size_for",
    "estimate_count",
    "exact_false_positive_rate",
    "measured_rate_std",
    "bits_per_item",
    "lower_bound_bits_per_item",
]

LN2 = math.log(2)


def _positive(value, name: str) -> float:
    return real_number(value, name, 0.0, open_low=True, allowed="a positive number")


def _non_negative(value, name: str) -> float:
    return real_number(value, name, 0.0, allowed="a non-negative number")


def _hashes(value) -> float:
    """k: a positive number up to MAX_HASHES (a real k is allowed in the classic formula)."""
    return real_number(value, "num_hashes", 0.0, MAX_HASHES, open_low=True,
                       allowed=f"a number in (0, {MAX_HASHES}]")


def _whole(value, name: str, minimum: int, top: int = MAX_NUM_BITS) -> int:
    """``value`` as an int in minimum..top; numpy integers and whole floats (1e5) are accepted."""
    return whole_number(value, name, minimum, top, whole_floats=True)


def expected_collisions(n: int, num_values: int) -> float:
    """Expected number of n items whose hash was already taken (n minus distinct hashes).

    n uniform hashes into N values leave N(1 - (1 - 1/N)^n) distinct ones; the
    rest are items a hashed-ID dedup would take for duplicates.  About
    n^2 / (2N) while that is small.

    >>> round(expected_collisions(100_000, 2**32), 4)
    1.1641
    """
    n = _non_negative(n, "n")
    N = _positive(num_values, "num_values")
    distinct = -N * math.expm1(n * math.log1p(-1.0 / N)) if N > 1 else min(n, 1.0)
    return n - distinct


def collision_probability(n: int, num_values: int) -> float:
    """Probability that at least two of n uniform hashes into N values are equal.

    Exact product form prod_{i<n} (1 - i/N), computed in logs; the famous 50%
    point of a 32-bit hash is near n = 77,163.

    >>> round(collision_probability(77_163, 2**32), 3)
    0.5
    """
    n = int(_non_negative(n, "n"))
    N = _positive(num_values, "num_values")
    if n > N:
        return 1.0
    log_none = math.fsum(math.log1p(-i / N) for i in range(1, n)) if n < 200_000 else \
        -n * (n - 1) / (2 * N)
    return -math.expm1(log_none)


def bit_vector_false_positive_rate(*, num_bits: int, n: int) -> float:
    """Chance that a new key's bit is already set after n keys went into m bits (k = 1).

    1 - (1 - 1/m)^n: the article's step-3 vector with m = 2**hash_bits.

    >>> round(bit_vector_false_positive_rate(num_bits=256, n=3), 5)
    0.01167
    """
    m = _positive(num_bits, "num_bits")
    n = _non_negative(n, "n")
    return -math.expm1(n * math.log1p(-1.0 / m)) if m > 1 else (1.0 if n else 0.0)


def false_positive_rate(*, num_bits: int, num_hashes: int, n: int) -> float:
    """The classic approximation (1 - e^(-kn/m))^k.

    >>> round(false_positive_rate(num_bits=9586, num_hashes=7, n=1000), 5)
    0.01003
    """
    m = _positive(num_bits, "num_bits")
    n = _non_negative(n, "n")
    k = _hashes(num_hashes)
    return (-math.expm1(-k * n / m)) ** k


def optimal_num_hashes(*, num_bits: int, n: int) -> int:
    """The k that minimises the classic rate, (m/n) ln 2, rounded to the nearer whole k >= 1.

    Rounding compares the classic rate at the floor and the ceiling, so the
    whole number returned is the better of the two.  It is at most
    :data:`~bloomedu.core.checks.MAX_HASHES` (1024): from m/n = 1477 on, where
    the best k would pass it, the rate at k = 1024 is already below 2**-1024,
    0.0 in floats, like the rate at any larger k.

    >>> optimal_num_hashes(num_bits=10_000, n=1000), optimal_num_hashes(num_bits=10**9, n=1)
    (7, 1024)
    """
    m = _positive(num_bits, "num_bits")
    n = _positive(n, "n")
    best = min(m / n * LN2, MAX_HASHES)
    low, high = max(1, math.floor(best)), max(1, math.ceil(best))
    return min((low, high), key=lambda k: (false_positive_rate(num_bits=m, num_hashes=k, n=n), k))


def num_bits_for(*, n: int, p: float) -> int:
    """Bits a filter needs for n items at false-positive rate p: ceil(-n ln p / (ln 2)^2).

    >>> num_bits_for(n=1_000_000, p=0.001)
    14377588
    """
    n = _positive(n, "n")
    p = probability(p, "p")
    bits = -n * math.log(p) / LN2 ** 2
    if not math.isfinite(bits):
        raise ValueError(f"n={n!r} at p={p!r} needs more bits than a float can count")
    return math.ceil(bits)


def hashes_for(*, num_bits: int, n: int, asked: str | None = None) -> int:
    """The k a filter of m bits for n keys takes: :func:`optimal_num_hashes`, the best whole k.

    Where (m/n) ln 2 is beyond ``MAX_HASHES`` (a rate below about 2**-1024, the doubles'
    end) a ValueError says what was ``asked`` (the caller's arguments) instead of capping k.

    >>> hashes_for(num_bits=9586, n=1000)    # (m/n) ln 2 = 6.64 -> 7
    7
    >>> hashes_for(num_bits=15142, n=1000)   # 10.4954: 11 errs less than 10
    11
    >>> hashes_for(num_bits=10**9, n=1, asked="n=1 at p=1e-320")
    Traceback (most recent call last):
    ValueError: n=1 at p=1e-320 needs k = 693147181 hash functions, more than 1024: the rate must be at least about 2**-1024 (k = log2(1/p))
    """
    m = _positive(num_bits, "num_bits")
    n = _positive(n, "n")
    best = m / n * LN2
    if best > MAX_HASHES + 0.5:
        asked = asked or f"num_bits={num_bits!r} for n={n!r}"
        raise ValueError(f"{asked} needs k = {round(best)} hash functions, more than "
                         f"{MAX_HASHES}: the rate must be at least about 2**-{MAX_HASHES} "
                         "(k = log2(1/p))")
    return optimal_num_hashes(num_bits=m, n=n)


def size_for(*, n: int, p: float, asked: str | None = None) -> tuple[int, int]:
    """(m, k) of a filter for n keys at rate p: :func:`num_bits_for` and :func:`hashes_for`.

    The one sizing rule of the library: ``BloomFilter.from_capacity``, the command line
    (``bloomedu size``) and the tables of the rotating and scalable filters all size with
    it.  ``asked`` names the caller's arguments in the errors (more than 2**63 - 1 bits or
    1024 hash functions).

    >>> size_for(n=1_000_000, p=0.001)
    (14377588, 10)
    >>> size_for(n=2**62, p=0.01, asked="expected_items=2**62 at fpp=0.01")
    Traceback (most recent call last):
    ValueError: expected_items=2**62 at fpp=0.01 needs 44203279704715722752 bits, more than the 2**63-1 a filter can hold
    """
    m = num_bits_for(n=n, p=p)
    asked = asked or f"n={n!r} at p={p!r}"
    if m > MAX_NUM_BITS:
        raise ValueError(f"{asked} needs {m} bits, more than the 2**63-1 a filter can hold")
    return m, hashes_for(num_bits=m, n=n, asked=asked)


def estimate_count(*, num_bits: int, num_hashes: int, bits_set: int) -> float:
    """Estimate n from the X bits set in a filter: -(m/k) ln(1 - X/m).

    Swamidass and Baldi, "Mathematical correction for fingerprint similarity
    measures to improve chemical retrieval", J. Chem. Inf. Model. 47(3), 2007:
    after n keys each bit is still 0 with probability about e^(-kn/m), so
    X ~ m (1 - e^(-kn/m)); solving for n gives the estimate.  An empty filter
    gives 0.  A full filter (X = m) is consistent with any n large enough, so
    the estimate is ``math.inf``: the count cannot be told any more.

    >>> round(estimate_count(num_bits=10_000, num_hashes=7, bits_set=5000), 2)
    990.21
    >>> [estimate_count(num_bits=10_000, num_hashes=7, bits_set=x) for x in (0, 10_000)]
    [0.0, inf]
    """
    m = _positive(num_bits, "num_bits")
    k = _hashes(num_hashes)
    bits_set = real_number(bits_set, "bits_set", 0.0, m,
                           allowed=f"a number from 0 to num_bits={num_bits!r}")
    if bits_set == m:
        return math.inf
    return -m / k * math.log1p(-bits_set / m) + 0.0


def exact_false_positive_rate(*, num_bits: int, num_hashes: int, n: int) -> float:
    """The exact false-positive rate when all kn positions are independent and uniform.

    Bose, Guo, Kranakis, Maheshwari, Morin, Morrison, Smid and Tang, "On the
    false-positive rate of Bloom filters", Information Processing Letters
    108(4), 2008, showed that Bloom's (1 - e^(-kn/m))^k is not the exact rate;
    Christensen, Roginsky and Jimeno, "A new analysis of the false positive
    rate of a Bloom filter", IPL 110(21), 2010, gave the exact value and proved
    the classic one a lower bound.  The rate is E[(X/m)^k], X the bits set
    after kn uniform throws, computed with positive terms only
    (:mod:`bloomedu.core.occupancy`): a relative error below 1e-11, and a
    fraction of a second even at k = 1024, the most any function here takes.
    A result below the smallest double (about 1e-308) is returned as 0.0.

    >>> f"{exact_false_positive_rate(num_bits=16, num_hashes=2, n=2):.6f}"
    '0.052873'
    >>> f"{false_positive_rate(num_bits=16, num_hashes=2, n=2):.6f}"
    '0.048929'
    >>> exact_false_positive_rate(num_bits=1000, num_hashes=3, n=0)
    0.0
    """
    m = _whole(num_bits, "num_bits", 1)
    n = _whole(n, "n", 0)
    k = _whole(num_hashes, "num_hashes", 1, MAX_HASHES)
    return occupancy_moments(m, k * n, [k])[0]


def measured_rate_std(*, num_bits: int, num_hashes: int, n: int, num_queries: int) -> float:
    """Standard deviation of a false-positive rate measured on a fresh filter with q queries.

    Given the filter, each absent query is a false positive with probability
    p_X = (X/m)^k, so the count is binomial; but X itself varies from filter to
    filter.  Both parts: Var = E[p_X (1 - p_X)] / q + Var(p_X), from the exact
    moments E[(X/m)^k] and E[(X/m)^(2k)] (same model as
    :func:`exact_false_positive_rate`).

    >>> f"{measured_rate_std(num_bits=1000, num_hashes=4, n=100, num_queries=20_000):.5f}"
    '0.00120'
    """
    m = _whole(num_bits, "num_bits", 1)
    n = _whole(n, "n", 0)
    k = _whole(num_hashes, "num_hashes", 1, MAX_HASHES)
    q = _whole(num_queries, "num_queries", 1)
    mean, square = occupancy_moments(m, k * n, [k, 2 * k])
    return math.sqrt(max(0.0, (mean - square) / q + square - mean * mean))


def _rate(p) -> float:
    return probability(p, "p")


def bits_per_item(p: float) -> float:
    """Bits per item a Bloom filter with the best k needs for rate p: log2(1/p) / ln 2.

    About 1.44 times :func:`lower_bound_bits_per_item`: the price of a
    structure that can add items one at a time and answer with k bit probes
    (Broder and Mitzenmacher, "Network applications of Bloom filters: a
    survey", Internet Mathematics 1(4), 2004).

    >>> f"{bits_per_item(0.01):.3f}", f"{bits_per_item(0.01) / lower_bound_bits_per_item(0.01):.4f}"
    ('9.585', '1.4427')
    """
    return -math.log2(_rate(p)) / LN2


def lower_bound_bits_per_item(p: float) -> float:
    """The fewest bits per item any structure answering "maybe in the set" with rate p can use.

    log2(1/p): Carter, Floyd, Gill, Markowsky and Wegman, "Exact and
    approximate membership testers", STOC 1978.

    >>> lower_bound_bits_per_item(1 / 1024)
    10.0
    """
    return -math.log2(_rate(p))
