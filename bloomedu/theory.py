"""Formulas: what the lessons measure against.

Symbols as in the literature: m bits, k hash functions, n inserted items,
p false-positive rate.

- The birthday bound for a b-bit hash (lesson 02).
- The single-hash bit vector of article 1, step 3: 1 - (1 - 1/m)^n (lesson 03).
- The classic Bloom rate (1 - e^(-kn/m))^k (Bloom 1970, as usually simplified),
  its optimum k = (m/n) ln 2 and the sizing m = -n ln p / (ln 2)^2 that article
  2's Guava example uses.
"""

from __future__ import annotations

import math
import numbers

__all__ = [
    "expected_collisions",
    "collision_probability",
    "bit_vector_false_positive_rate",
    "false_positive_rate",
    "optimal_num_hashes",
    "num_bits_for",
    "estimate_count",
]

LN2 = math.log(2)


def _positive(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return value


def _non_negative(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ValueError(f"{name} must be a non-negative number, got {value!r}")
    return value


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


def bit_vector_false_positive_rate(num_bits: int, n: int) -> float:
    """Chance that a new key's bit is already set after n keys went into m bits (k = 1).

    1 - (1 - 1/m)^n: the article's step-3 vector with m = 2**hash_bits.

    >>> round(bit_vector_false_positive_rate(256, 3), 5)
    0.01167
    """
    m = _positive(num_bits, "num_bits")
    n = _non_negative(n, "n")
    return -math.expm1(n * math.log1p(-1.0 / m)) if m > 1 else (1.0 if n else 0.0)


def false_positive_rate(num_bits: int, n: int, num_hashes: int) -> float:
    """The classic approximation (1 - e^(-kn/m))^k.

    >>> round(false_positive_rate(num_bits=9586, n=1000, num_hashes=7), 5)
    0.01003
    """
    m = _positive(num_bits, "num_bits")
    n = _non_negative(n, "n")
    k = _positive(num_hashes, "num_hashes")
    return (-math.expm1(-k * n / m)) ** k


def optimal_num_hashes(num_bits: int, n: int) -> int:
    """The k that minimises the classic rate, (m/n) ln 2, rounded to the nearer whole k >= 1.

    Rounding compares the classic rate at the floor and the ceiling, so the
    whole number returned is the better of the two.

    >>> optimal_num_hashes(num_bits=10_000, n=1000)
    7
    """
    m = _positive(num_bits, "num_bits")
    n = _positive(n, "n")
    best = m / n * LN2
    low, high = max(1, math.floor(best)), max(1, math.ceil(best))
    return min((low, high), key=lambda k: (false_positive_rate(m, n, k), k))


def num_bits_for(n: int, p: float) -> int:
    """Bits a filter needs for n items at false-positive rate p: ceil(-n ln p / (ln 2)^2).

    >>> num_bits_for(1_000_000, 0.001)
    14377588
    """
    n = _positive(n, "n")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p < 1:
        raise ValueError(f"p must be strictly between 0 and 1, got {p!r}")
    return math.ceil(-n * math.log(p) / LN2 ** 2)


def estimate_count(bits_set: int, num_bits: int, num_hashes: int) -> float:
    """Estimate n from the X bits set in a filter: -(m/k) ln(1 - X/m).

    Swamidass and Baldi, "Mathematical correction for fingerprint similarity
    measures to improve chemical retrieval", J. Chem. Inf. Model. 47(3), 2007:
    after n keys each bit is still 0 with probability about e^(-kn/m), so
    X ~ m (1 - e^(-kn/m)); solving for n gives the estimate.  An empty filter
    gives 0.  A full filter (X = m) is consistent with any n large enough, so
    the estimate is ``math.inf``: the count cannot be told any more.

    >>> round(estimate_count(bits_set=5000, num_bits=10_000, num_hashes=7), 2)
    990.21
    >>> estimate_count(0, 10_000, 7), estimate_count(10_000, 10_000, 7)
    (0.0, inf)
    """
    m = _positive(num_bits, "num_bits")
    k = _positive(num_hashes, "num_hashes")
    if isinstance(bits_set, bool) or not isinstance(bits_set, numbers.Real) \
            or not 0 <= bits_set <= m:
        raise ValueError(f"bits_set must be a number from 0 to num_bits={m!r}, got {bits_set!r}")
    if bits_set == m:
        return math.inf
    return -m / k * math.log1p(-bits_set / m) + 0.0
