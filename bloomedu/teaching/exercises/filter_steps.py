"""Exercises for part 1's filter lessons: article 1's ``BloomFilter(k, n)`` (step 5) and
the rate as m and k change.
"""

from __future__ import annotations

import math

from ...core import theory
from ._feedback import Exercise, Mistake, as_number, checker, fmt, hash_count, judge, judge_measured

__all__ = ["EXERCISES"]

LN2 = math.log(2)


def _classic(m: float, n: float, k: float) -> float:
    return 0.0 if n == 0 else (1 - math.exp(-k * n / m)) ** k if k > 0 else 1.0


def _bits_for(n: float, p: float, log=math.log) -> float:
    """-n log(p) / (ln 2)^2, unrounded, with ``log`` swappable to name a student's slip."""
    return -n * log(p) / LN2 ** 2


# --- lesson 05: the article's BloomFilter(k, n) ----------------------------------------
@checker
def article_filter_bytes(answer, num_hashes: int = 3, hash_bits: int = 16):
    """Bytes of bits in the article's ``BloomFilter(numberOfHashFunctions, numberOfBits)``.

    >>> article_filter_bytes(8192, num_hashes=3, hash_bits=16)
    Correct: the bytes of the filter's bit vector = 8,192.
    True
    """
    num_hashes = hash_count(num_hashes, "num_hashes")
    bits = 2 ** hash_bits
    return judge(answer, bits / 8, "the bytes of the filter's bit vector", rel=0, unit="bytes",
                 mistakes=[
        Mistake(hash_bits / 8, f"numberOfBits = {hash_bits} is the hash width: the vector has "
                f"2^{hash_bits} bits"),
        Mistake(num_hashes * bits / 8, f"the {num_hashes} hash functions share one vector; "
                "k does not change the size"),
        Mistake(bits * 8, "divide the bits by 8 to get bytes, don't multiply"),
    ], hint="2^numberOfBits bits, 8 to a byte.")


@checker
def article_filter_fpp(answer, num_hashes: int = 3, hash_bits: int = 8, n: int = 20):
    """Expected false-positive rate of the article's filter after n keys: m = 2^hash_bits.

    >>> article_filter_fpp(0.00912, num_hashes=3, hash_bits=8, n=20)
    Correct: the false-positive rate = 0.009121.
    True
    """
    num_hashes = hash_count(num_hashes, "num_hashes")
    m, k = 2 ** hash_bits, num_hashes
    return judge(answer, _classic(m, n, k), "the false-positive rate", rel=0.02, unit="rate",
                 mistakes=[
        Mistake(_classic(hash_bits, n, k), f"m = {hash_bits} is the hash width; the vector has "
                f"m = 2^{hash_bits} = {m} bits"),
        Mistake(1 - math.exp(-k * n / m), "that is the fraction of bits set; a false positive "
                f"needs all k = {k} bits of a new key set: raise it to the power k"),
        Mistake(_classic(m, n, 1), f"that is the rate of one hash function; this filter has k = {k}"),
    ], hint="(1 - e^(-kn/m))^k with m = 2^numberOfBits.")


@checker
def measured_fpp(answer, num_bits: int = 256, num_hashes: int = 3, n: int = 20,
                 trials: int = 100_000):
    """A false-positive rate measured on ``trials`` keys never inserted into an m-bit, k-hash filter.

    Accepted within 4 standard deviations of the exact rate (both from :mod:`bloomedu.core.theory`).

    >>> measured_fpp(0.0095, num_bits=256, num_hashes=3, n=20, trials=100_000)
    Correct: 0.0095 is within 4 standard deviations (4 x 0.0011) of the expected 0.009214.
    True
    """
    num_hashes = hash_count(num_hashes, "num_hashes")
    expected = theory.exact_false_positive_rate(num_bits, n, num_hashes)
    sd = theory.measured_rate_std(num_bits, n, num_hashes, trials)
    return judge_measured(answer, expected, sd, "the measured false-positive rate", trials=trials)


# --- lesson 07: the rate as m and k change ---------------------------------------------
@checker
def optimal_k(answer, m: int = 10_000, n: int = 1000):
    """The best whole number of hash functions for m bits and n keys: (m/n) ln 2, rounded.

    >>> optimal_k(7, m=10_000, n=1000)
    Correct: k = 7.
    True
    >>> optimal_k(6, m=10_000, n=1000)
    Not quite: your k = 6 is the best whole k when m/n is between 7.9 and 9.4, but this filter has m/n = 10.
    False
    """
    best = theory.optimal_num_hashes(m, n)
    ratio = m / n
    mistakes = [
        Mistake(round(ratio * math.log10(2)), "you used log10 instead of ln: k = (m/n) ln 2", 0),
        Mistake(ratio * LN2, "k counts hash functions, so it is a whole number: round (m/n) ln 2",
                0.01),
        Mistake(round(ratio), "k = (m/n) ln 2, not m/n", 0),
        Mistake(n / m * LN2, "m/n is bits per key: k = (m/n) ln 2, not (n/m) ln 2", 0.01),
    ]
    given = as_number(answer)
    if given is not None and given.is_integer() and given >= 1 and given != best:
        low, high = max(given - 0.5, 0) / LN2, (given + 0.5) / LN2
        mistakes.append(Mistake(given, f"your k = {int(given)} is the best whole k when m/n is "
                                f"between {low:.1f} and {high:.1f}, but this filter has m/n = "
                                f"{ratio:.3g}", 0))
    return judge(answer, best, "k", rel=0, mistakes=mistakes, hint="k = (m/n) ln 2.")


def _rates(m, n, k) -> list[float]:
    """The classic rate, and the exact one where theory has it: either is accepted."""
    rates = [_classic(m, n, k)]
    exact = getattr(theory, "exact_false_positive_rate", None)
    if exact is not None:
        rates.append(exact(m, n, k))
    return rates


@checker
def fpp(answer, m: int = 10_000, n: int = 1000, k: int = 7):
    """The expected false-positive rate (1 - e^(-kn/m))^k (the exact rate is accepted too).

    >>> fpp(0.00819, m=10_000, n=1000, k=7)
    Correct: the false-positive rate = 0.008194.
    True
    """
    k = hash_count(k, "k")
    rates, given = _rates(m, n, k), as_number(answer)
    closest = rates[0] if given is None else min(rates, key=lambda rate: abs(rate - given))
    fill = 1 - math.exp(-k * n / m)
    return judge(answer, closest, "the false-positive rate", rel=0.01, unit="rate", mistakes=[
        Mistake(fill, f"that is the fraction of bits set; all k = {k} bits must be set: raise it "
                "to the power k"),
        Mistake(math.exp(-k * n / m), "that is the chance a given bit is still 0"),
        Mistake(0.5 ** k, f"(1/2)^k holds when exactly half the bits are set; here {fill:.1%} are",
                0.002 * 0.5 ** k),
        Mistake(_classic(n, m, k), "you swapped m and n: the exponent is -kn/m"),
    ], hint="(1 - e^(-kn/m))^k.")


# --- lesson 09: a million URLs, and the cache in front of the database -----------------------


EXERCISES = [
    Exercise("05", 1, "compute", "How many bytes of bits does the article's BloomFilter("
             "{num_hashes}, {hash_bits}) hold?", "article_filter_bytes",
             {"num_hashes": 3, "hash_bits": 20}),
    Exercise("05", 2, "predict", "What false-positive rate do you expect from the article's "
             "BloomFilter({num_hashes}, {hash_bits}) after {n} IDs?", "article_filter_fpp",
             {"num_hashes": 3, "hash_bits": 8, "n": 20}),
    Exercise("05", 3, "measure", "Add {n} random IDs to SaltedBloomFilter({num_hashes}, 8) and "
             "test {trials:,} new IDs: what fraction does it claim to contain?", "measured_fpp",
             {"num_bits": 256, "num_hashes": 3, "n": 20, "trials": 100_000}),
    Exercise("07", 1, "compute", "What is the best whole number of hash functions k for m = {m:,} "
             "bits and n = {n:,} keys?", "optimal_k", {"m": 10_000, "n": 1000}),
    Exercise("07", 2, "predict", "What false-positive rate do you expect with m = {m:,}, "
             "n = {n:,} and k = {k}?", "fpp", {"m": 10_000, "n": 1000, "k": 7}),
    Exercise("07", 3, "measure", "Fill BloomFilter({num_bits:_}, {num_hashes}) with {n:,} random "
             "keys and measure its false-positive rate on {trials:,} new keys.", "measured_fpp",
             {"num_bits": 10_000, "num_hashes": 7, "n": 1000, "trials": 100_000}),
]
