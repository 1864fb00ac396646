"""Exercises for part 2's first lessons, article 2 ("Bloom Filter: come memorizzare 1 Milione
di stringhe in meno di 2MB?"): a million URLs in under 2 MB (lesson 09), the blacklist cache
in front of a database (lesson 10), and what a filter is not (lesson 11): a set, an
intersection, safe from someone who knows its hash.
"""

from __future__ import annotations

import math

from ...core import theory
from ...i18n import N_, gettext as _
from ._feedback import (LN2, Exercise, Mistake, as_number, bits_for, checker, classic_rate, fmt,
                        judge, judge_measured)

__all__ = ["EXERCISES"]


# --- lesson 09: a million URLs in under 2 MB ---------------------------------------------
@checker
def filter_bytes(answer, *, n: int = 1_000_000, p: float = 0.001):
    """Bytes of a Bloom filter sized for n items at rate p: m = -n ln p / (ln 2)^2 bits, / 8.

    >>> filter_bytes(1_797_199, n=1_000_000, p=0.001)
    Correct: the bytes of the filter = 1,797,199. That is 1.71 MiB.
    True
    """
    m = theory.num_bits_for(n=n, p=p)
    correct = math.ceil(m / 8)
    return judge(answer, correct, _("the bytes of the filter"), rel=1e-4, unit="bytes", mistakes=[
        Mistake(bits_for(n, p, math.log10) / 8, _("you used log10 instead of ln")),
        Mistake(bits_for(n, p, math.log2) / 8, _("you used log2 instead of ln")),
        Mistake(-n * math.log(p) / LN2 / 8, _("the denominator is (ln 2)^2, not ln 2")),
        Mistake(bits_for(n, p / 100) / 8, _("you used p = {value}: a percentage read as a rate (the second "
                                            "article writes 0.001% for 1 in 1000, which is 0.1% = 0.001)").format(value=format(p / 100, "g"))),
    ], hint=_("m = -n ln p / (ln 2)^2 bits, then 8 bits to a byte."),
        note=_("That is {value} MiB.").format(value=format(m / 8 / 2 ** 20, ".2f")))


@checker
def rate_in_budget(answer, *, n: int = 1_000_000, nbytes: int = 1_048_576):
    """The lowest rate a Bloom filter of n items reaches in ``nbytes`` bytes, at its best k:
    m = 8 x nbytes bits, p = e^(-(m/n)(ln 2)^2) (lesson 08's sizing, read the other way).

    The best whole k gives the same rate to within 1%, and is accepted too.

    >>> rate_in_budget(0.01776, n=1_000_000, nbytes=1_048_576)
    Correct: the lowest rate in 1,048,576 bytes = 0.01777. About 1 URL in 56, 18 times the 0.001 of 1,797,200 bytes.
    True
    >>> rate_in_budget(0.6044, n=1_000_000, nbytes=1_048_576)
    Not quite: that takes the 1,048,576 bytes as bits: a byte is 8 bits, so m = 8,388,608.
    False
    """
    m = 8 * nbytes
    correct = math.exp(-(m / n) * LN2 ** 2)
    sized = math.ceil(theory.num_bits_for(n=n, p=0.001) / 64) * 8
    return judge(answer, correct, _("the lowest rate in {nbytes} bytes").format(nbytes=format(nbytes, ",")), rel=0.01, unit="rate",
                 mistakes=[
        Mistake(math.exp(-(nbytes / n) * LN2 ** 2), _("that takes the {nbytes} bytes as bits: a byte is 8 bits, so m = "
                                                      "{m}").format(nbytes=format(nbytes, ","), m=format(m, ","))),
        Mistake(math.exp(-(8e6 * nbytes / 2 ** 20 / n) * LN2 ** 2), _("that reads the budget as "
                "megabytes (10^6 bytes); 1 MiB is 1,048,576 bytes")),
        Mistake(math.exp(-(m / n) * LN2), _("the exponent has (ln 2)^2, not ln 2: p = e^(-(m/n)(ln 2)^2)")),
        Mistake(m / n, _("that is the bits per URL, m/n; the rate is e^(-(m/n)(ln 2)^2)")),
    ], hint=_("m = 8 x bytes; at the best k the rate is e^(-(m/n)(ln 2)^2)."),
        note=_("About 1 URL in {value}, {value2} times the 0.001 of {sized} "
               "bytes.").format(value=format(1 / correct, ",.0f"), value2=format(correct / 0.001, ".0f"), sized=format(sized, ",")))


@checker
def flagged_every_time(answer, urls: int = 250_000, lookups: int = 2, p: float = 0.001):
    """Safe URLs answered "maybe" on every one of ``lookups`` lookups: p x urls, not p^lookups.

    A URL's k bits are fixed by its hash, so a false positive is one on every lookup.

    >>> flagged_every_time(250, urls=250_000, lookups=2, p=0.001)
    Correct: the safe URLs flagged every time = 250. The same URLs each time: asking again clears none.
    True
    >>> flagged_every_time(0.25, urls=250_000, lookups=2, p=0.001)
    Not quite: that treats each lookup as a fresh coin toss (p^2); a URL's bits never change, so a URL flagged once is flagged on every lookup.
    False
    """
    correct = p * urls
    return judge(answer, correct, _("the safe URLs flagged every time"), rel=0.01, mistakes=[
        Mistake(p, _("that is the rate; the question asks how many of the {urls} URLs").format(urls=format(urls, ",")), 0.01 * p),
        Mistake(p ** lookups * urls, _("that treats each lookup as a fresh coin toss (p^{lookups}); a "
                                       "URL's bits never change, so a URL flagged once is flagged on "
                                       "every lookup").format(lookups=lookups),
                max(1.0, 0.01 * p ** lookups * urls)),
        Mistake(lookups * correct, _("that counts lookups ({lookups} a URL); the question asks how "
                                     "many URLs").format(lookups=lookups)),
        Mistake(urls - correct, _("those are the URLs the filter answers 'no'")),
    ], hint=_("what fraction of safe URLs does the filter flag once, and does asking again change it?"),
        note=_("The same URLs each time: asking again clears none."))


# --- lesson 10: the blacklist cache in front of a database -------------------------------
@checker
def database_lookups(answer, safe: int = 1_000_000, blacklisted: int = 5_000, p: float = 0.001):
    """Expected lookups reaching the slow database behind a filter of rate p.

    >>> database_lookups(6000, safe=1_000_000, blacklisted=5_000, p=0.001)
    Correct: the expected database lookups = 6,000.
    True
    """
    return judge(answer, blacklisted + p * safe, _("the expected database lookups"), mistakes=[
        Mistake(blacklisted + p / 100 * safe, _("0.001% is 1 in 100,000; the rate here is p = {p} (the second "
                                                "article's percentage is a typo)").format(p=p)),
        Mistake(p * safe, _("every blacklisted URL also passes the filter and reaches the database")),
        Mistake(blacklisted, _("the false positives among the safe URLs reach the database too")),
        Mistake(safe + blacklisted, _("only URLs the filter calls 'maybe' reach the database")),
    ], hint=_("the blacklisted URLs, plus p times the safe ones."))


@checker
def waiting_seconds(answer, visits: int = 100_000, blacklisted: int = 1_000, p: float = 0.001,
                    latency_ms: float = 2):
    """Seconds of waiting for a database latency_ms away, behind a filter of rate p.

    Every blacklisted visit and p of the safe ones make a round trip.

    >>> waiting_seconds(2.198, visits=100_000, blacklisted=1_000, p=0.001, latency_ms=2)
    Correct: the seconds spent waiting = 2.198. Without the filter: 200 s.
    True
    """
    trip = latency_ms / 1000
    trips = blacklisted + p * (visits - blacklisted)
    correct = trips * trip
    return judge(answer, correct, _("the seconds spent waiting"), rel=0.005, mistakes=[
        Mistake(visits * trip, _("that is the database alone; behind the filter only its 'maybe' "
                "answers make a round trip")),
        Mistake(blacklisted * trip, _("the false positives among the safe visits wait too")),
        Mistake(p * (visits - blacklisted) * trip, _("every blacklisted visit passes the filter and "
                "waits for the database")),
        Mistake(correct * 1000, _("you gave milliseconds; the question asks seconds")),
        Mistake(trips, _("that is the number of round trips; each waits {latency_ms} ms").format(latency_ms=fmt(latency_ms))),
    ], hint=_("(the blacklisted visits + p x the safe ones) round trips, each of latency_ms / 1000 s."),
        note=_("Without the filter: {value} s.").format(value=fmt(visits * trip)))


@checker
def database_share(answer, *, n: int = 100_000, p: float = 0.01, trials: int = 100_000):
    """The measured share of safe URLs a BlacklistCache sends on to its database.

    The cache's filter is ``BloomFilter.from_capacity(n, p)``; the share is its
    false-positive rate, accepted within 4 standard deviations of the exact rate.

    >>> database_share(0.0101, n=100_000, p=0.01, trials=100_000)
    Correct: 0.0101 is within 4 standard deviations (4 x 0.00032) of the expected 0.01004. Each of those URLs cost one query and was answered as not blacklisted.
    True
    """
    m, k = theory.size_for(n=n, p=p)
    expected = theory.exact_false_positive_rate(num_bits=m, num_hashes=k, n=n)
    sd = theory.measured_rate_std(num_bits=m, num_hashes=k, n=n, num_queries=trials)
    return judge_measured(answer, expected, sd, _("the share of safe URLs sent to the database"),
                          trials=trials, mistakes=[
        Mistake(1 - expected, _("that is the share the filter settled alone (the queries saved); the "
                "question asks the share that reached the database"), 4 * sd),
    ], note=_("Each of those URLs cost one query and was answered as not blacklisted."))


# --- lesson 11: a filter is not a set -------------------------------------------------------
@checker
def estimated_count(answer, *, num_bits: int = 958_506, num_hashes: int = 7, bits_set: int = 300_000):
    """Keys in a filter, estimated from its bits set X: n = -(m/k) ln(1 - X/m).

    >>> estimated_count(51_404, num_bits=958_506, num_hashes=7, bits_set=300_000)
    Correct: the estimated number of keys = 51,404. An estimate: the bits cannot say exactly.
    True
    """
    m, k, x = num_bits, num_hashes, bits_set
    correct = round(-m / k * math.log1p(-x / m))
    return judge(answer, correct, _("the estimated number of keys"), rel=0.005, mistakes=[
        Mistake(x / k, _("that counts every set bit as one key's own; keys share bits, so "
                         "a fill of X/m means n = -(m/k) ln(1 - X/m) keys, more than X/k")),
        Mistake(-m * math.log1p(-x / m), _("each key sets k = {k} bits: divide by k").format(k=k)),
        Mistake(-m / k * math.log10(1 - x / m), _("you used log10 instead of ln")),
        Mistake(-m / k * math.log(x / m), _("a bit is still 0 with probability e^(-kn/m), so take "
                "ln(1 - X/m), the share of bits still 0, not ln(X/m)")),
        Mistake(x, _("that is the number of bits set, not of keys")),
    ], hint=_("a bit is 0 with probability e^(-kn/m): set 1 - X/m equal to it and solve for n."),
        note=_("An estimate: the bits cannot say exactly."))


@checker
def and_claim_rate(answer, *, n: int = 100_000, p: float = 0.01, n_b: int = 50_000,
                   shared: int = 10_000):
    """The rate at which ``A & B`` claims a key of A that B never held: B's false-positive rate.

    A and B are both ``BloomFilter.from_capacity(n, p)``; B holds n_b keys, ``shared``
    of them also in A.  The key is in A, so A's k bits are set; the AND keeps them
    exactly when B's are set too.  The exact rate is accepted as well.

    >>> and_claim_rate(0.000251, n=100_000, p=0.01, n_b=50_000, shared=10_000)
    Correct: the rate A & B claims a key only in A = 0.0002507. B's own false-positive rate: A & B is not the intersection.
    True
    """
    m, k = theory.size_for(n=n, p=p)
    b_rate = classic_rate(m, n_b, k)
    rates = [b_rate, theory.exact_false_positive_rate(num_bits=m, num_hashes=k, n=n_b)]
    given = as_number(answer)
    correct = b_rate if given is None else min(rates, key=lambda rate: abs(rate - given))
    return judge(answer, correct, _("the rate A & B claims a key only in A"), rel=0.01, unit="rate",
                 mistakes=[
        Mistake(classic_rate(m, shared, k), _("that is the rate of a filter of the {shared} shared keys; A & B "
                                              "keeps every bit that A and B both set, whoever set them").format(shared=format(shared, ","))),
        Mistake(b_rate * classic_rate(m, n, k), _("the key is in A, so A's bits are all set: only B "
                "has to err")),
        Mistake(0, _("A & B is not the intersection's filter: it claims keys B never held"), 1e-9),
        Mistake(classic_rate(m, n, k), _("that is A's rate with its {n} keys; the key is in A, so what "
                                         "matters is B's fill").format(n=format(n, ","))),
    ], hint=_("A's bits for the key are all 1; the AND keeps them when B's are 1 too."),
        note=_("B's own false-positive rate: A & B is not the intersection."))


@checker
def measured_keyed_rate(answer, *, n: int = 10_000, p: float = 0.01, candidates: int = 200_000):
    """The measured share of crafted URLs (false positives of the public filter) a keyed filter claims.

    Both filters are sized by ``from_capacity(n, p)``: the public ``BloomFilter``, from
    whose ``candidates`` the attacker keeps the false positives (about its rate times
    ``candidates`` of them), and ``KeyedBloomFilter`` with a secret, to which the crafted
    URLs are ordinary URLs, claimed at its exact rate.

    >>> measured_keyed_rate(0.0105, n=10_000, p=0.01, candidates=200_000)
    Correct: 0.0105 is within 4 standard deviations (4 x 0.0022) of the expected 0.01004. The crafted URLs are ordinary URLs to the keyed filter.
    True
    """
    m, k = theory.size_for(n=n, p=p)
    expected = theory.exact_false_positive_rate(num_bits=m, num_hashes=k, n=n)
    trials = max(1, round(expected * candidates))  # about how many URLs were crafted
    sd = theory.measured_rate_std(num_bits=m, num_hashes=k, n=n, num_queries=trials)
    return judge_measured(answer, expected, sd, _("the keyed filter's rate on the crafted URLs"),
                          trials=trials, mistakes=[
        Mistake(1.0, _("that is the public filter's rate on them: it claims every crafted URL by "
                "construction; measure the keyed filter"), 0.02),
    ], note=_("The crafted URLs are ordinary URLs to the keyed filter."))


EXERCISES = [
    Exercise("09", 1, "compute",
             N_("The blacklist of {n:,} URLs must fit in 1 MiB ({nbytes:,} bytes). What is the "
                "lowest false-positive rate a Bloom filter reaches in it, with the best k?"),
             "rate_in_budget", {"n": 1_000_000, "nbytes": 1_048_576}),
    Exercise("09", 2, "predict",
             N_("{urls:,} safe URLs are each looked up {lookups} times in a filter of rate {p} "
                "holding 1,000,000 malicious URLs. How many of them are answered 'maybe' every "
                "time?"),
             "flagged_every_time", {"urls": 250_000, "lookups": 2, "p": 0.001}),
    Exercise("09", 3, "measure",
             N_("Fill BloomFilter.from_capacity({n:_}, 0.001) (m = {num_bits:,}, k = {num_hashes}) "
                "with {n:,} URLs and measure its rate on {trials:,} new URLs."),
             "measured_fpp",
             {"num_bits": 14_377_588, "num_hashes": 10, "n": 1_000_000,
                              "trials": 1_000_000}),
    Exercise("10", 1, "compute",
             N_("The database is {latency_ms} ms away. How many seconds do {visits:,} visits, "
                "{blacklisted:,} of them to blacklisted URLs, spend waiting for it behind a filter "
                "of rate {p}?"),
             "waiting_seconds",
             {"visits": 100_000, "blacklisted": 1_000, "p": 0.001, "latency_ms": 2}),
    Exercise("10", 2, "predict",
             N_("{safe:,} safe and {blacklisted:,} blacklisted URLs are looked up through a filter "
                "of rate {p}: how many lookups reach the database?"),
             "database_lookups", {"safe": 1_000_000, "blacklisted": 5_000, "p": 0.001}),
    Exercise("10", 3, "measure",
             N_("Build a BlacklistCache of {n:,} malicious URLs at fpp = {p} and look up "
                "{trials:,} safe URLs: what share of them reaches the database?"),
             "database_share", {"n": 100_000, "p": 0.01, "trials": 100_000}),
    Exercise("11", 1, "compute",
             N_("A filter of m = {num_bits:,} bits and k = {num_hashes} hash functions has "
                "{bits_set:,} bits set. About how many keys went into it?"),
             "estimated_count", {"num_bits": 958_506, "num_hashes": 7, "bits_set": 300_000}),
    Exercise("11", 2, "predict",
             N_("A and B are both BloomFilter.from_capacity({n:_}, {p}); A holds {n:,} URLs and B "
                "{n_b:,}, {shared:,} of them also in A. At what rate does A & B claim a URL that "
                "is in A but not in B?"),
             "and_claim_rate", {"n": 100_000, "p": 0.01, "n_b": 50_000, "shared": 10_000}),
    Exercise("11", 3, "measure",
             N_("Craft the false positives of a public BloomFilter.from_capacity({n:_}, {p}) of "
                "{n:,} malicious URLs from {candidates:,} candidate URLs, then measure the share "
                "of them that KeyedBloomFilter.from_capacity({n:_}, {p}, secret) of the same URLs "
                "claims."),
             "measured_keyed_rate", {"n": 10_000, "p": 0.01, "candidates": 200_000}),
]
