"""Exercises for part 2's last lessons, article 2's real systems and the explorer: Guava's
filter bit for bit (lesson 12), Bitcoin's BIP37 filter as a light wallet (bitcoinj) sizes it and
a node checks it (lesson 13),
and the explorer of m, k and n (lesson 14: its fill ratio, the bottom of its curve, a rate
measured on URLs).
"""

from __future__ import annotations

import math

from ...core import theory
from ...compat.bip37 import bip37_filter_bytes, bip37_num_hash_funcs, bitcoinj_sizing
from ...compat.guava import guava_num_bits, guava_num_hashes
from ...i18n import N_, gettext as _
from ._feedback import (LN2, Exercise, Mistake, bits_for, bits_set_moments, checker, classic_rate,
                        fmt, hash_count, judge, judge_measured)

__all__ = ["EXERCISES"]


# --- lessons 12 and 13: Guava and Bitcoin ----------------------------------------------
def _bip37(n: int, p: float) -> tuple[int, int, int]:
    """(uncapped bytes, bytes, k) of the BIP37 filter a bitcoinj wallet sizes and sends."""
    nbytes, k = bitcoinj_sizing(n_elements=n, fp_rate=p)
    return int(bits_for(n, p)) // 8, nbytes, k


def _core_k(n: int, p: float) -> int:
    """k of Bitcoin Core's own constructor, ``CBloomFilter(n, p, ...)``: bits // n, then ln 2."""
    return bip37_num_hash_funcs(bip37_filter_bytes(n_elements=n, fp_rate=p), n)


@checker
def guava_bit_size(answer, *, n: int = 1_000_000, p: float = 0.001):
    """Bits Guava allocates for n expected insertions at rate p: m truncated, in 64-bit words.

    >>> guava_bit_size(14_377_600, n=1_000_000, p=0.001)
    Correct: Guava's bit size = 14,377,600.
    True
    """
    m = guava_num_bits(n=n, p=p)
    correct = 64 * math.ceil(m / 64)
    return judge(answer, correct, _("Guava's bit size"), rel=0, unit="bits", mistakes=[
        Mistake(m, _("Guava stores whole 64-bit words (long[]): round m up to a multiple of 64"), 1),
        Mistake(correct / 64, _("that is the number of 64-bit words; the question asks bits")),
        Mistake(64 * math.ceil(bits_for(n, p, math.log10) / 64), _("you used log10 instead of ln")),
    ], hint=_("m = -n ln p / (ln 2)^2 truncated to a whole number, rounded up to 64-bit words."))


@checker
def guava_bits_set(answer, *, n: int = 10, p: float = 0.1, strings: int = 8):
    """Bits expected set in Guava's ``create(n, p)`` after ``strings`` distinct strings.

    Guava's positions run over bitSize (m rounded up to 64-bit words), not over m:
    bitSize (1 - (1 - 1/bitSize)^(k strings)).

    >>> guava_bits_set(20.1, n=10, p=0.1, strings=8)
    Correct: the expected number of bits set = 20.14. bitSize = 64, k = 3: 24 positions.
    True
    """
    m = guava_num_bits(n=n, p=p)
    k, size = guava_num_hashes(num_bits=m, n=n), 64 * math.ceil(m / 64)
    correct, unused = bits_set_moments(size, k * strings)
    return judge(answer, correct, _("the expected number of bits set"), rel=0.01, mistakes=[
        Mistake(bits_set_moments(m, k * strings)[0], _("you used m = {m}; Guava's positions run modulo bitSize = "
                                                       "{size}, its padding bits included").format(m=fmt(m), size=fmt(size))),
        Mistake(k * strings, _("{k} x {strings} counts every position, but two strings can "
                               "share a bit").format(k=k, strings=strings)),
        Mistake(correct / size, _("that is the fraction of bits set; the question asks how many")),
        Mistake(size - correct, _("that is the number of bits still 0")),
        Mistake(bits_set_moments(size, strings)[0], _("each string sets k = {k} positions, not one").format(k=k)),
    ], hint=_("a bit stays 0 through all k x strings positions with probability (1 - 1/bitSize)^(k strings)."),
        note=_("bitSize = {size}, k = {k}: {value} positions.").format(size=fmt(size), k=k, value=k * strings))


@checker
def bip37_bytes(answer, *, n: int = 100_000, p: float = 0.0001):
    """Bytes of the BIP37 filter a wallet sizes: capped at the 36,000 a node accepts.

    >>> bip37_bytes(36_000, n=100_000, p=0.0001)
    Correct: the BIP37 filter's bytes = 36,000.
    True
    """
    uncapped, correct, unused = _bip37(n, p)
    return judge(answer, correct, _("the BIP37 filter's bytes"), rel=0, abs_tol=1, unit="bytes",
                 mistakes=[
        Mistake(uncapped, _("a node refuses a filter over 36,000 bytes, so the wallet caps it there"),
                1),
        Mistake(min(bits_for(n, p, math.log10), 288_000) / 8, _("you used log10 instead of ln"), 1),
    ], hint=_("-n ln p / (ln 2)^2 bits, at most 36,000 x 8, then / 8."))


@checker
def bip37_hashes(answer, *, n: int = 40, p: float = 0.1):
    """The k a bitcoinj wallet puts in its ``filterload``: (m / n) x ln 2 truncated, 1 to 50.

    >>> bip37_hashes(3, n=40, p=0.1)
    Correct: the wallet's k = 3. m = 184 bits: 184 / 40 x ln 2 = 3.19 truncates to 3.
    True
    """
    unused, nbytes, k = _bip37(n, p)
    m = 8 * nbytes
    real = m / n * LN2
    return judge(answer, k, _("the wallet's k"), rel=0, mistakes=[
        Mistake(_core_k(n, p), _("that is Bitcoin Core's own constructor, which divides in whole "
                                 "numbers ({m} // {n} = {value}); bitcoinj divides {m} / {n} = "
                                 "{value2} before ln 2").format(m=fmt(m), n=n, value=m // n, value2=format(m / n, ".2f")), 0),
        Mistake(round(bits_for(n, p) / n * LN2), _("that is the textbook k for the m asked for; "
                "the wallet sizes m in whole bytes and truncates k"), 0),
        Mistake(round(real), _("k is truncated, not rounded: {real} gives {real2}").format(real=format(real, ".2f"), real2=int(real)), 0),
        Mistake(m // n, _("k = (m / n) x ln 2: you left out ln 2"), 0),
        Mistake(nbytes, _("that is the filter's size in bytes; the question asks its hash functions"), 0),
    ], hint=_("m = 8 x (-n ln p / (ln 2)^2 truncated, // 8); then k = int(m / n x ln 2), at least 1."),
        note=_("m = {m} bits: {m} / {n} x ln 2 = {real} truncates to {k}.").format(m=fmt(m), n=n, real=format(real, ".2f"), k=k))


@checker
def bip37_fpp(answer, *, n: int = 100_000, p: float = 0.0001):
    """The false-positive rate of the BIP37 filter a bitcoinj wallet sends, capped and k truncated.

    >>> bip37_fpp(0.2933, n=100_000, p=0.0001)
    Correct: the BIP37 filter's false-positive rate = 0.2934. k = 1 and m = 288,000 bits.
    True
    """
    unused, nbytes, k = _bip37(n, p)
    m = 8 * nbytes
    correct = classic_rate(m, n, k)
    rounded_k = max(1, round(m / n * LN2))
    mistakes = [Mistake(classic_rate(m, n, rounded_k), _("the wallet truncates m / n x ln 2 = {value}, so k = {k}, not "
                                                         "{rounded_k}").format(value=format(m / n * LN2, ".3f"), k=k, rounded_k=rounded_k))]
    if m < int(bits_for(n, p)):
        mistakes.append(Mistake(p, _("that is the rate asked for; the node's 36,000-byte limit leaves "
                                     "{m} bits, so the real rate is worse").format(m=fmt(m))))
    return judge(answer, correct, _("the BIP37 filter's false-positive rate"), rel=0.01, unit="rate",
                 mistakes=mistakes, hint=_("find the capped size and Bitcoin Core's k first, then (1 - e^(-kn/m))^k."),
        note=_("k = {k} and m = {m} bits.").format(k=k, m=fmt(m)))


@checker
def measured_bip37_fpp(answer, *, n: int = 100_000, p: float = 0.0001, trials: int = 100_000):
    """A rate measured on ``trials`` items never inserted into the wallet's filter holding n items.

    The filter is ``Bip37Filter.sized(*bitcoinj_sizing(n_elements=n, fp_rate=p))``:
    its m and k are the wallet's (capped size, truncated k), so the question does
    not give them away.

    >>> measured_bip37_fpp(0.2925, n=100_000, p=0.0001, trials=100_000)
    Correct: 0.2925 is within 4 standard deviations (4 x 0.0015) of the expected 0.2934.
    True
    """
    unused, nbytes, k = _bip37(n, p)
    m = 8 * nbytes
    expected = theory.exact_false_positive_rate(num_bits=m, num_hashes=k, n=n)
    sd = theory.measured_rate_std(num_bits=m, num_hashes=k, n=n, num_queries=trials)
    slips = [Mistake(p, _("that is the rate asked for; the filter the wallet sends has m = "
                          "{m} bits and k = {k}, so measure it").format(m=fmt(m), k=k), 4 * sd)]
    return judge_measured(answer, expected, sd, _("the measured false-positive rate"), trials=trials,
                          mistakes=slips)


# --- lesson 14: the explorer ----------------------------------------------------------------
@checker
def fill_ratio(answer, *, num_bits: int = 20_000, num_hashes: int = 3, n: int = 2_500):
    """The fraction of m bits expected to be set after n keys with k hashes: 1 - e^(-kn/m).

    The exact 1 - (1 - 1/m)^(kn) is accepted too: at thousands of bits the two agree.

    >>> fill_ratio(0.3127, num_bits=20_000, num_hashes=3, n=2_500)
    Correct: the fill ratio = 0.3127.
    True
    >>> fill_ratio(0.3127 ** 3, num_bits=20_000, num_hashes=3, n=2_500)
    Not quite: that is the false-positive rate (the fill raised to the power k = 3); the fill ratio is the fraction of bits set.
    False
    """
    m, k = num_bits, hash_count(num_hashes, "num_hashes")
    fill = -math.expm1(-k * n / m)
    return judge(answer, fill, _("the fill ratio"), rel=0.002, mistakes=[
        Mistake(fill ** k, _("that is the false-positive rate (the fill raised to the power k "
                             "= {k}); the fill ratio is the fraction of bits set").format(k=k)),
        Mistake(-math.expm1(-n / m), _("each key sets k = {k} bits, not one: the exponent is -kn/m").format(k=k)),
        Mistake(math.exp(-k * n / m), _("that is the fraction of bits still 0; the fill is 1 minus it")),
        Mistake(k * n / m, _("kn/m counts a bit set twice as two; a bit stays 0 with probability "
                "e^(-kn/m), so the fill is 1 - e^(-kn/m)")),
        Mistake(m * fill, _("that is the number of bits set; divide by m = {m} for the ratio").format(m=fmt(m))),
        Mistake(100 * fill, _("you gave a percentage; give the fill ratio as a fraction (50% is 0.5)")),
        Mistake(-math.expm1(-k * m / n), _("you swapped m and n: the exponent is -kn/m")),
    ], hint=_("1 - e^(-kn/m)."))


EXERCISES = [
    Exercise("12", 1, "compute",
             N_("How many bits does Guava allocate (its bitSize) for {n:,} expected insertions at "
                "fpp = {p}?"),
             "guava_bit_size", {"n": 1_000_000, "p": 0.01}),
    Exercise("12", 2, "predict",
             N_("Guava's create({n}, {p}) holds {strings} different strings. How many of its bits "
                "do you expect to be set?"),
             "guava_bits_set", {"n": 10, "p": 0.1, "strings": 8}),
    Exercise("12", 3, "measure",
             N_("Put {n:,} malicious URLs into GuavaBloomFilter.create({n:_}, 0.01) (bitSize = "
                "{num_bits:,}, k = {num_hashes}) and measure its rate on {trials:,} safe URLs."),
             "measured_fpp",
             {"num_bits": 958_528, "num_hashes": 7, "n": 100_000, "trials": 100_000}),
    Exercise("13", 1, "compute",
             N_("A light wallet built on bitcoinj sizes its BIP37 filter for {n} elements at rate "
                "{p}. How many hash functions does its filterload carry?"),
             "bip37_hashes", {"n": 40, "p": 0.1}),
    Exercise("13", 2, "predict",
             N_("A bitcoinj wallet sizes its BIP37 filter for {n:,} elements at rate {p}, within "
                "the 36,000 bytes a node accepts. What false-positive rate does the filter it "
                "sends really have?"),
             "bip37_fpp", {"n": 100_000, "p": 0.0001}),
    Exercise("13", 3, "measure",
             N_("Build that filter (Bip37Filter.sized(*bitcoinj_sizing(n_elements={n:_}, "
                "fp_rate={p}))), insert {n:,} random 20-byte items and measure the fraction of "
                "{trials:,} other random 20-byte items it matches."),
             "measured_bip37_fpp", {"n": 100_000, "p": 0.0001, "trials": 100_000}),
    Exercise("14", 1, "compute",
             N_("What fraction of its m = {num_bits:,} bits does a filter with k = {num_hashes} "
                "hash functions have set after n = {n:,} keys?"),
             "fill_ratio", {"num_bits": 20_000, "num_hashes": 3, "n": 2_500}),
    Exercise("14", 2, "predict",
             N_("Set the explorer to m = {num_bits:,} bits and n = {n:,} keys with the curve over "
                "k: at which whole k does the curve of the formulas bottom out?"),
             "optimal_k", {"num_bits": 8_000, "n": 1_000}),
    Exercise("14", 3, "measure",
             N_("With URL keys, measure the false-positive rate of BloomFilter({num_bits:_}, "
                "{num_hashes}) holding {n:,} URLs on {trials:,} URLs never inserted."),
             "measured_fpp", {"num_bits": 8_000, "num_hashes": 3, "n": 1_000, "trials": 20_000}),
]
