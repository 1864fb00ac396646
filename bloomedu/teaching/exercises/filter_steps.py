"""Exercises for part 1's filter lessons (05-08): article 1's ``BloomFilter(k, n)`` (step 5),
the general filter's k positions from one hash, the rate as m and k change, and a filter
sized from n and p (article 2's two wishes).
"""

from __future__ import annotations

import math

from ...core import theory
from ...core.checks import MAX_NUM_BITS, whole_number
from ...core.hashing import fmix64
from ...core.hashing import key_hashes
from ..clickday import expected_drops
from ...i18n import N_, gettext as _
from ._feedback import (LN2, Exercise, Mistake, as_number, bits_for, checker, classic_rate, fmt,
                        hash_count, judge, judge_measured)

__all__ = ["EXERCISES"]


# --- lesson 05: the article's BloomFilter(k, n) ----------------------------------------
@checker
def article_filter_bytes(answer, *, num_hashes: int = 3, hash_bits: int = 16):
    """Bytes of bits in the article's ``BloomFilter(numberOfHashFunctions, numberOfBits)``.

    >>> article_filter_bytes(8192, num_hashes=3, hash_bits=16)
    Correct: the bytes of the filter's bit vector = 8,192.
    True
    """
    num_hashes = hash_count(num_hashes, "num_hashes")
    bits = 2 ** hash_bits
    return judge(answer, bits / 8, _("the bytes of the filter's bit vector"), rel=0, unit="bytes",
                 mistakes=[
        Mistake(hash_bits / 8, _("numberOfBits = {hash_bits} is the hash width: the vector has "
                                 "2^{hash_bits} bits").format(hash_bits=hash_bits)),
        Mistake(num_hashes * bits / 8, _("the {num_hashes} hash functions share one vector; k does not "
                                         "change the size").format(num_hashes=num_hashes)),
        Mistake(bits * 8, _("divide the bits by 8 to get bytes, don't multiply")),
    ], hint=_("2^numberOfBits bits, 8 to a byte."))


@checker
def article_filter_fpp(answer, *, num_hashes: int = 3, hash_bits: int = 8, n: int = 20):
    """Expected false-positive rate of the article's filter after n keys: m = 2^hash_bits.

    >>> article_filter_fpp(0.00912, num_hashes=3, hash_bits=8, n=20)
    Correct: the false-positive rate = 0.009121.
    True
    """
    num_hashes = hash_count(num_hashes, "num_hashes")
    m, k = 2 ** hash_bits, num_hashes
    return judge(answer, classic_rate(m, n, k), _("the false-positive rate"), rel=0.02, unit="rate",
                 mistakes=[
        Mistake(classic_rate(hash_bits, n, k), _("m = {hash_bits} is the hash width; the vector has m = "
                                                 "2^{hash_bits} = {m} bits").format(hash_bits=hash_bits, m=m)),
        Mistake(1 - math.exp(-k * n / m), _("that is the fraction of bits set; a false positive needs all k "
                                            "= {k} bits of a new key set: raise it to the power k").format(k=k)),
        Mistake(classic_rate(m, n, 1), _("that is the rate of one hash function; this filter has k = {k}").format(k=k)),
    ], hint=_("(1 - e^(-kn/m))^k with m = 2^numberOfBits."))


@checker
def measured_fpp(answer, *, num_bits: int = 256, num_hashes: int = 3, n: int = 20,
                 trials: int = 100_000):
    """A false-positive rate measured on ``trials`` keys never inserted into an m-bit, k-hash filter.

    Accepted within 4 standard deviations of the exact rate (both from :mod:`bloomedu.core.theory`).

    >>> measured_fpp(0.0095, num_bits=256, num_hashes=3, n=20, trials=100_000)
    Correct: 0.0095 is within 4 standard deviations (4 x 0.0011) of the expected 0.009214.
    True
    """
    num_hashes = hash_count(num_hashes, "num_hashes")
    expected = theory.exact_false_positive_rate(num_bits=num_bits, num_hashes=num_hashes, n=n)
    sd = theory.measured_rate_std(num_bits=num_bits, num_hashes=num_hashes, n=n, num_queries=trials)
    return judge_measured(answer, expected, sd, _("the measured false-positive rate"), trials=trials)


# --- lesson 06: inside the filter, k positions from one hash ------------------------------
@checker
def double_hash_position(answer, *, key: str = "789", num_bits: int = 1000, num_hashes: int = 3,
                         i: int = 2):
    """Position i (counted from 0) of a str key in ``BloomFilter(m, k)``:
    fmix64((h1 + i*h2) mod 2^64) mod m, with (h1, h2) the key's MurmurHash3 x64 128.

    >>> double_hash_position(876, key="123", num_bits=1000, i=0)
    Correct: position 0 of '123' in BloomFilter(1000, 3) = 876.
    True
    """
    m = whole_number(num_bits, "num_bits", 1, MAX_NUM_BITS)
    k = hash_count(num_hashes, "num_hashes")
    i = whole_number(i, "i", 0, k - 1)
    h1, h2 = key_hashes(key, k)
    mask = 2 ** 64 - 1
    position = lambda j: fmix64((h1 + j * h2) & mask) % m  # noqa: E731
    mistakes = [
        Mistake(((h1 + i * h2) & mask) % m, _("that is (h1 + i*h2) mod 2^64 mod m without fmix64: "
                "bloomedu mixes each value before taking it modulo m")),
        Mistake((h1 + i * h2) % m, _("that skips both the mod 2^64 and fmix64: keep h1 + i*h2 to 64 bits, "
                "mix it with fmix64, then take it modulo m")),
        Mistake(fmix64((h2 + i * h1) & mask) % m, _("you swapped h1 and h2: the start is h1, the step h2")),
        Mistake(fmix64((h1 + i * h2) & mask), _("that is the mixed 64-bit value; take it modulo m")),
    ]
    mistakes += [Mistake(position(j), _("that is position {j}: positions count from i = 0, so position "
                                        "{i} uses h1 + {i}*h2").format(j=j, i=i)) for j in (i - 1, i + 1) if 0 <= j < k]
    return judge(answer, position(i), _("position {i} of {key} in BloomFilter({m}, {k})").format(i=i, key=repr(key), m=m, k=k), rel=0,
                 mistakes=mistakes, hint=_("h1, h2 = hash128(key); fmix64((h1 + i*h2) % 2**64) % m."))


def _coinciding(m: int, k: int) -> float:
    """The chance that k independent uniform positions in m cells are not all distinct."""
    return 1 - math.prod(1 - j / m for j in range(k))


@checker
def coinciding_positions(answer, *, num_bits: int = 64, num_hashes: int = 4):
    """The share of keys whose k positions are not all distinct, positions independent and uniform:
    1 - (1 - 1/m)(1 - 2/m)...(1 - (k-1)/m).

    >>> coinciding_positions(0.0918, num_bits=32, num_hashes=3)
    Correct: the share of keys with fewer than 3 distinct positions = 0.0918.
    True
    """
    m = whole_number(num_bits, "num_bits", 1, MAX_NUM_BITS)
    k = hash_count(num_hashes, "num_hashes")
    correct = _coinciding(m, k)
    pairs = k * (k - 1) / 2
    return judge(answer, correct, _("the share of keys with fewer than {k} distinct positions").format(k=k),
                 rel=0.005, unit="rate", mistakes=[
        Mistake(1 - correct, _("that is the share whose positions are all distinct; the question "
                "asks for the others")),
        Mistake(pairs / m, _("that adds the chances of the {pairs} pairs as if two pairs "
                             "could never coincide at once; multiply instead the chances that "
                             "each new position misses the ones before it").format(pairs=format(pairs, ".0f"))),
        Mistake(-math.expm1(-pairs / m), _("that is the birthday approximation 1 - e^(-k(k-1)/(2m)); "
                "the exact share is 1 minus the product of (1 - j/m) for j < k")),
        Mistake(1 / m, _("1/m is the chance that two given positions coincide; here k positions "
                "can coincide in any pair")),
    ], hint=_("position j misses the j positions before it with probability 1 - j/m."))


@checker
def measured_coinciding_positions(answer, *, num_bits: int = 64, num_hashes: int = 4,
                                  trials: int = 100_000):
    """A measured share of ``trials`` keys whose k positions in ``BloomFilter(m, k)`` coincide.

    >>> measured_coinciding_positions(0.0905, num_bits=64, num_hashes=4, trials=100_000)
    Correct: 0.0905 is within 4 standard deviations (4 x 0.00091) of the expected 0.09109.
    True
    """
    m = whole_number(num_bits, "num_bits", 1, MAX_NUM_BITS)
    k = hash_count(num_hashes, "num_hashes")
    trials = whole_number(trials, "trials", 1, MAX_NUM_BITS)
    expected = _coinciding(m, k)
    sd = math.sqrt(expected * (1 - expected) / trials)
    return judge_measured(answer, expected, sd, _("the share of keys whose positions coincide"),
                          mistakes=[
        Mistake(1 - expected, _("that is the share whose positions are all distinct"), 4 * sd),
        Mistake(expected * trials, _("you gave a count ({value} of {trials} keys); divide by the "
                                     "number of keys").format(value=fmt(as_number(answer) or 0), trials=format(trials, ",")), 4 * sd * trials + 1),
        Mistake(100 * expected, _("you gave a percentage; give the share as a fraction"), 400 * sd),
    ])


# --- lesson 07: the rate as m and k change ---------------------------------------------
@checker
def optimal_k(answer, *, num_bits: int = 10_000, n: int = 1000):
    """The best whole number of hash functions for m bits and n keys: (m/n) ln 2, rounded.

    >>> optimal_k(7, num_bits=10_000, n=1000)
    Correct: k = 7.
    True
    >>> optimal_k(6, num_bits=10_000, n=1000)
    Not quite: your k = 6 is the best whole k when m/n is between 7.9 and 9.4, but this filter has m/n = 10.
    False
    """
    m = num_bits
    best = theory.optimal_num_hashes(num_bits=m, n=n)
    ratio = m / n
    mistakes = [
        Mistake(round(ratio * math.log10(2)), _("you used log10 instead of ln: k = (m/n) ln 2"), 0),
        Mistake(ratio * LN2, _("k counts hash functions, so it is a whole number: round (m/n) ln 2"),
                0.01),
        Mistake(round(ratio), _("k = (m/n) ln 2, not m/n"), 0),
        Mistake(n / m * LN2, _("m/n is bits per key: k = (m/n) ln 2, not (n/m) ln 2"), 0.01),
    ]
    given = as_number(answer)
    if given is not None and given.is_integer() and given >= 1 and given != best:
        low, high = max(given - 0.5, 0) / LN2, (given + 0.5) / LN2
        mistakes.append(Mistake(given, _("your k = {given} is the best whole k when m/n is between {low} "
                                         "and {high}, but this filter has m/n = {ratio}").format(given=int(given), low=format(low, ".1f"), high=format(high, ".1f"), ratio=format(ratio, ".3g")), 0))
    return judge(answer, best, _("k"), rel=0, mistakes=mistakes, hint=_("k = (m/n) ln 2."))


def _rates(m, n, k) -> list[float]:
    """The classic rate, and the exact one where theory has it: either is accepted."""
    rates = [classic_rate(m, n, k)]
    exact = getattr(theory, "exact_false_positive_rate", None)
    if exact is not None:
        rates.append(exact(num_bits=m, num_hashes=k, n=n))
    return rates


@checker
def fpp(answer, *, num_bits: int = 10_000, num_hashes: int = 7, n: int = 1000):
    """The expected false-positive rate (1 - e^(-kn/m))^k (the exact rate is accepted too).

    >>> fpp(0.00819, num_bits=10_000, num_hashes=7, n=1000)
    Correct: the false-positive rate = 0.008194.
    True
    """
    m, k = num_bits, hash_count(num_hashes, "num_hashes")
    rates, given = _rates(m, n, k), as_number(answer)
    closest = rates[0] if given is None else min(rates, key=lambda rate: abs(rate - given))
    fill = 1 - math.exp(-k * n / m)
    return judge(answer, closest, _("the false-positive rate"), rel=0.01, unit="rate", mistakes=[
        Mistake(fill, _("that is the fraction of bits set; all k = {k} bits must be set: "
                        "raise it to the power k").format(k=k)),
        Mistake(math.exp(-k * n / m), _("that is the chance a given bit is still 0")),
        Mistake(0.5 ** k, _("(1/2)^k holds when exactly half the bits are set; here {fill} "
                            "are").format(fill=format(fill, ".1%")),
                0.002 * 0.5 ** k),
        Mistake(classic_rate(n, m, k), _("you swapped m and n: the exponent is -kn/m")),
    ], hint=_("(1 - e^(-kn/m))^k."))


# --- lesson 08: a filter sized from n and p -------------------------------------------------
@checker
def sized_num_bits(answer, *, n: int = 50_000, p: float = 0.02):
    """The bits m of a filter sized for n items at rate p: ceil(-n ln p / (ln 2)^2).

    >>> sized_num_bits(407_119, n=50_000, p=0.02)
    Correct: the number of bits m = 407,119.
    True
    """
    correct = theory.num_bits_for(n=n, p=p)
    return judge(answer, correct, _("the number of bits m"), rel=1e-5, abs_tol=1, unit="bits", mistakes=[
        Mistake(bits_for(n, p, math.log10), _("you used log10 instead of ln")),
        Mistake(bits_for(n, p, math.log2), _("you used log2 instead of ln")),
        Mistake(-n * math.log(p) / LN2, _("the denominator is (ln 2)^2, not ln 2")),
        Mistake(bits_for(n, p / 100), _("you used p = {value}: p = {p} is already a rate, {p_} as a "
                                        "percentage").format(value=format(p / 100, "g"), p=p, p_=format(p, ".0%"))),
        Mistake(correct / n, _("that is m/n, the bits per item; multiply by n")),
        Mistake(theory.optimal_num_hashes(num_bits=correct, n=n),
                _("that is k, the number of hash functions; the question asks the bits m"), 0),
    ], hint=_("m = -n ln p / (ln 2)^2, rounded up to a whole bit."))


@checker
def day_share_dropped(answer, *, n: int = 1_000_000, p: float = 0.001):
    """The share of n distinct first clicks that a dedup stage drops with a filter sized for
    n at rate p: the mean over i < n of (1 - e^(-ki/m))^k, m and k as ``from_capacity`` sizes.

    >>> day_share_dropped(0.0001217, n=1_000_000, p=0.001)
    Correct: the share of the clicks dropped = 0.0001217. That is 0.122 of p: m = 14,377,588, k = 10.
    True
    """
    n = whole_number(n, "n", 1, MAX_NUM_BITS)
    m = theory.num_bits_for(n=n, p=p)
    k = theory.optimal_num_hashes(num_bits=m, n=n)
    share = expected_drops(num_bits=m, num_hashes=k, n=n) / n
    return judge(answer, share, _("the share of the clicks dropped"), rel=0.01, unit="rate", mistakes=[
        Mistake(p, _("that is the rate when the filter is full, at the n-th click; "
                     "the clicks before it met an emptier filter and were dropped far "
                     "less often")),
        Mistake(p / 2, _("that assumes the rate grows in proportion to the clicks; it "
                         "grows like a power of them, (1 - e^(-ki/m))^k with k = {k}, so "
                         "it stays low most of the day").format(k=k)),
        Mistake(share * n, _("that is the number of clicks dropped; divide by n = {n}").format(n=format(n, ","))),
    ], hint=_("add up (1 - e^(-k i/m))^k over i = 0 .. n-1 and divide by n."),
        note=_("That is {value} of p: m = {m}, k = {k}.").format(value=format(share / p, ".3f"), m=format(m, ","), k=k))


@checker
def measured_sized_fpp(answer, *, n: int = 200_000, p: float = 0.005, trials: int = 1_000_000):
    """A false-positive rate measured on ``trials`` keys never inserted into
    ``BloomFilter.from_capacity(n, p)`` holding n keys.

    >>> measured_sized_fpp(0.00502, n=200_000, p=0.005, trials=1_000_000)
    Correct: 0.00502 is within 4 standard deviations (4 x 7.2e-05) of the expected 0.005017.
    True
    """
    m = theory.num_bits_for(n=n, p=p)
    k = theory.optimal_num_hashes(num_bits=m, n=n)
    return measured_fpp.__wrapped__(answer, num_bits=m, num_hashes=k, n=n, trials=trials)


EXERCISES = [
    Exercise("05", 1, "compute",
             N_("How many bytes of bits does the article's BloomFilter({num_hashes}, {hash_bits}) "
                "hold?"),
             "article_filter_bytes", {"num_hashes": 3, "hash_bits": 20}),
    Exercise("05", 2, "predict",
             N_("What false-positive rate do you expect from the article's "
                "BloomFilter({num_hashes}, {hash_bits}) after {n} IDs?"),
             "article_filter_fpp", {"num_hashes": 3, "hash_bits": 8, "n": 20}),
    Exercise("05", 3, "measure",
             N_("Add {n} random IDs to SaltedBloomFilter({num_hashes}, 8) and test {trials:,} new "
                "IDs: what fraction does it claim to contain?"),
             "measured_fpp", {"num_bits": 256, "num_hashes": 3, "n": 20, "trials": 100_000}),
    Exercise("06", 1, "compute",
             N_("Which bit is position i = {i} (counted from 0) of the key {key!r} in "
                "BloomFilter({num_bits:_}, {num_hashes})? Compute it by hand with hash128 and "
                "fmix64."),
             "double_hash_position", {"key": "789", "num_bits": 1000, "num_hashes": 3, "i": 2}),
    Exercise("06", 2, "predict",
             N_("If a key's {num_hashes} positions in {num_bits} bits were independent uniform "
                "draws, what share of keys would have fewer than {num_hashes} distinct positions?"),
             "coinciding_positions", {"num_bits": 64, "num_hashes": 4}),
    Exercise("06", 3, "measure",
             N_("Measure that share on {trials:,} random keys in BloomFilter({num_bits}, "
                "{num_hashes}): the keys whose positions are not all distinct."),
             "measured_coinciding_positions", {"num_bits": 64, "num_hashes": 4, "trials": 100_000}),
    Exercise("07", 1, "compute",
             N_("What is the best whole number of hash functions k for m = {num_bits:,} bits and n "
                "= {n:,} keys?"),
             "optimal_k", {"num_bits": 12_000, "n": 1000}),
    Exercise("07", 2, "predict",
             N_("What false-positive rate do you expect with m = {num_bits:,}, n = {n:,} and k = "
                "{num_hashes}?"),
             "fpp", {"num_bits": 12_000, "num_hashes": 8, "n": 1000}),
    Exercise("07", 3, "measure",
             N_("Fill BloomFilter({num_bits:_}, {num_hashes}) with {n:,} random keys and measure "
                "its false-positive rate on {trials:,} new keys."),
             "measured_fpp", {"num_bits": 10_000, "num_hashes": 7, "n": 1000, "trials": 100_000}),
    Exercise("08", 1, "compute",
             N_("How many bits m does a filter sized for n = {n:,} items at p = {p} need?"),
             "sized_num_bits", {"n": 50_000, "p": 0.02}),
    Exercise("08", 2, "predict",
             N_("A filter sized for n = {n:,} at p = {p} reaches that rate only when its n-th key "
                "goes in. Deduplicating n distinct clicks with it, what share of them does it "
                "drop?"),
             "day_share_dropped", {"n": 1_000_000, "p": 0.01}),
    Exercise("08", 3, "measure",
             N_("Fill BloomFilter.from_capacity({n:_}, {p}) with {n:,} random keys and measure its "
                "false-positive rate on {trials:,} keys never inserted."),
             "measured_sized_fpp", {"n": 200_000, "p": 0.005, "trials": 1_000_000}),
]
