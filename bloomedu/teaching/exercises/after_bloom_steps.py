"""Exercises for lesson 20: the filters after Bloom (cuckoo, xor, binary fuse) and the lower bound.

A cuckoo filter's fingerprint bits from its rate (Fan, Andersen, Kaminsky and Mitzenmacher
2014: a query compares 2b slots, so p is at most 2b / 2**f), the keys it loses when keys never
added are deleted, and a xor filter's measured rate (Graf and Lemire 2020: 2**-f).

Posed in ``notebooks/20_after_bloom.ipynb``, answered in
``notebooks/solutions/20_after_bloom_solutions.ipynb``; tested in ``tests/test_exercises.py``.
"""

from __future__ import annotations

import math

from ...core.checks import probability, real_number, whole_number
from ...variants.space import cuckoo_false_positive_rate
from ...i18n import N_, gettext as _
from ._feedback import Exercise, Mistake, checker, fmt, judge, judge_measured

__all__ = ["cuckoo_fingerprint_bits", "keys_lost_to_deletes", "measured_xor_fpp", "EXERCISES"]


@checker
def cuckoo_fingerprint_bits(answer, fpp: float = 0.001, bucket_size: int = 4):
    """The fewest whole fingerprint bits f with 2b / 2**f at most p: the rate of a cuckoo
    filter whose every slot is full stays under p.

    >>> cuckoo_fingerprint_bits(13, fpp=0.001, bucket_size=4)
    Correct: the fewest fingerprint bits = 13.
    True
    >>> cuckoo_fingerprint_bits(10, fpp=0.001, bucket_size=4)
    Not quite: 10 bits is the lower bound's log2(1/p), rounded up; a query compares its fingerprint with the 2b = 8 slots of two buckets, so 2b/2^f <= p needs f = log2(2b/p).
    False
    """
    p = probability(fpp, "fpp")
    b = whole_number(bucket_size, "bucket_size", 1, 1 << 16)
    exact = math.log2(2 * b / p)
    bits = math.ceil(exact - 1e-12)
    slips = [
        Mistake(math.ceil(-math.log2(p)), _("{value} bits is the lower bound's log2(1/p), rounded up; a "
                                            "query compares its fingerprint with the 2b = {value2} slots of "
                                            "two buckets, so 2b/2^f <= p needs f = log2(2b/p)").format(value=math.ceil(-math.log2(p)), value2=2 * b)),
        Mistake(bits - 1, _("with f = {value} the bound 2b/2^f is {value2}, above p = {p}: "
                            "count both buckets (2b slots, not b) and round up").format(value=bits - 1, value2=fmt(2 * b / 2 ** (bits - 1)), p=fmt(p))),
        Mistake(exact, _("log2(2b/p) = {exact} is right, but a fingerprint has a whole "
                         "number of bits: round up").format(exact=format(exact, ".2f")), 0.05),
        Mistake(math.ceil(math.log(2 * b / p)), _("you used ln; bits count powers of 2: log2(2b/p)")),
        Mistake(math.ceil(math.log10(2 * b / p)), _("you used log10; bits count powers of 2: "
                "log2(2b/p)")),
        Mistake(math.ceil(-math.log2(p) / math.log(2)), _("that is a Bloom filter's bits a key, "
                "1.44 log2(1/p); the question asks the cuckoo filter's fingerprint bits f")),
    ]
    return judge(answer, bits, _("the fewest fingerprint bits"), mistakes=slips, abs_tol=1e-9,
                 hint=_("2b / 2^f <= p, so f = log2(2b/p), rounded up."))


@checker
def keys_lost_to_deletes(answer, deletes: int = 50_000, fingerprint_bits: int = 12,
                         bucket_size: int = 4, load: float = 0.9):
    """Keys that were added and go missing when ``deletes`` keys never added are deleted from a
    cuckoo filter at a load factor: each such delete removes another key's fingerprint when
    the key is a false positive, with probability 1 - (1 - 1/(2**f - 1))**(2 b a).

    >>> keys_lost_to_deletes(88, deletes=50_000, fingerprint_bits=12, bucket_size=4, load=0.9)
    Correct: the keys lost = 87.85.
    True
    >>> keys_lost_to_deletes(0, deletes=50_000, fingerprint_bits=12, bucket_size=4, load=0.9)
    Not quite: a key never added usually finds no fingerprint to delete, but when it is a false positive it deletes the fingerprint another key put in its bucket, and that key is lost.
    False
    """
    count = whole_number(deletes, "deletes", 0, 1 << 40)
    f = whole_number(fingerprint_bits, "fingerprint_bits", 2, 64)
    b = whole_number(bucket_size, "bucket_size", 1, 1 << 16)
    a = real_number(load, "load", 0.0, 1.0)
    rate = cuckoo_false_positive_rate(f, b, a)
    slips = [
        Mistake(rate, _("you gave the rate; the question asks how many keys, the rate "
                        "times the {count} deletes").format(count=format(count, ",")), 0.1 * rate),
        Mistake(0, _("a key never added usually finds no fingerprint to delete, but when it is a "
                "false positive it deletes the fingerprint another key put in its bucket, and "
                "that key is lost"), 0.5),
        Mistake(count * 2 * b / 2 ** f, _("that is 2b/2^f, the bound for a full table; at load a = {a} "
                                          "only that fraction of the 2b slots holds a fingerprint").format(a=fmt(a))),
        Mistake(count * rate / 2, _("you counted one bucket; a delete looks in both, 2b slots")),
        Mistake(count / 2 ** f, _("that is one slot's chance; a delete compares the fingerprint "
                "with all 2b slots of its two buckets")),
    ]
    return judge(answer, count * rate, _("the keys lost"), mistakes=slips, rel=0.01,
                 hint=_("each delete is a false positive with probability about 2 b a / 2^f."))


@checker
def measured_xor_fpp(answer, n: int = 100_000, trials: int = 100_000, fingerprint_bits: int = 8):
    """A xor filter's rate measured on ``trials`` keys never added: within 4 standard deviations
    of 2**-f (each absent key matches its three slots' XOR with probability 2**-f, alone).

    >>> measured_xor_fpp(0.0040, n=100_000, trials=100_000, fingerprint_bits=8)
    Correct: 0.004 is within 4 standard deviations (4 x 0.0002) of the expected 0.003906.
    True
    """
    whole_number(n, "n", 1, 1 << 40)
    count = whole_number(trials, "trials", 1, 1 << 40)
    f = whole_number(fingerprint_bits, "fingerprint_bits", 1, 64)
    p = 2.0 ** -f
    sd = math.sqrt(p * (1 - p) / count)
    return judge_measured(answer, p, sd, _("the measured rate of the xor filter"), trials=count)


EXERCISES = [
    Exercise("20", 1, "compute",
             N_("What is the fewest whole number of fingerprint bits f that keeps a cuckoo filter "
                "with buckets of b = {bucket_size} under p = {fpp} even when every slot is full "
                "(the bound $2b/2^f$)?"),
             "cuckoo_fingerprint_bits", {"fpp": 0.001, "bucket_size": 4}),
    Exercise("20", 2, "predict",
             N_("A CuckooFilter with {fingerprint_bits}-bit fingerprints and buckets of "
                "{bucket_size} holds its keys at a load of {load}. You delete {deletes:,} keys "
                "that were never added. How many of the keys that were added do you expect to lose?"),
             "keys_lost_to_deletes",
             {"deletes": 50_000, "fingerprint_bits": 12, "bucket_size": 4, "load": 0.9}),
    Exercise("20", 3, "measure",
             N_("Build XorFilter(keys, {fingerprint_bits}) from {n:,} random keys and measure its "
                "false-positive rate on {trials:,} keys never added."),
             "measured_xor_fpp", {"n": 100_000, "trials": 100_000, "fingerprint_bits": 8}),
]
