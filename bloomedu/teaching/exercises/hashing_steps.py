"""Exercises for lessons 01-04: article 1's steps 1 to 4 ("Filtro di Bloom: un elemento
appartiene all'insieme?"): a dict of IDs, hashed IDs and the birthday bound, the
single-hash bit vector, salted hash functions.
"""

from __future__ import annotations

import math

from ...core import theory
from ...core.hashing import murmur3_32, murmurhash2
from ...i18n import N_, gettext as _
from ._feedback import (Exercise, Mistake, as_number, bits_set_moments, checker, fmt,
                        hash_count, judge, judge_measured)

__all__ = ["EXERCISES"]


# --- lesson 01: a dict of every ID --------------------------------------------------
@checker
def id_storage_bytes(answer, rate: int = 10_000, seconds: int = 86_400, id_chars: int = 36):
    """Bytes of the raw IDs kept for ``seconds`` at ``rate`` IDs a second, one byte a character.

    >>> id_storage_bytes(31_104_000_000)
    Correct: the bytes of the IDs = 31,104,000,000. That is 31.1 GB, the article's "at least 31 GB".
    True
    """
    ids = rate * seconds
    correct = ids * id_chars
    return judge(answer, correct, _("the bytes of the IDs"), unit="bytes", mistakes=[
        Mistake(ids, _("that is the number of IDs ({ids}); each takes {id_chars} bytes").format(ids=fmt(ids), id_chars=id_chars)),
        Mistake(rate * 3600 * id_chars, _("that is one hour of IDs; the question keeps {seconds} seconds").format(seconds=fmt(seconds))),
        Mistake(2 * correct, _("two bytes a character is JavaScript's in-memory UTF-16; count one "
                "byte per ASCII character")),
    ], hint=_("IDs a second x seconds x bytes per ID."),
        note=f'That is {correct / 1e9:.1f} GB, the article\'s "at least 31 GB".'
        if (rate, seconds, id_chars) == (10_000, 86_400, 36) else "")


@checker
def seen_ids_after(answer, messages: int = 1000, duplicates: int = 20):
    """How many IDs a dict of seen IDs holds after a stream with known duplicates.

    >>> seen_ids_after(980, messages=1000, duplicates=20)
    Correct: the number of IDs in the dict = 980.
    True
    """
    return judge(answer, messages - duplicates, _("the number of IDs in the dict"), rel=0, mistakes=[
        Mistake(messages, _("the dict holds each ID once: a second copy of a double click adds nothing")),
        Mistake(duplicates, _("that is the number of duplicates, the messages the dict drops")),
    ])


@checker
def bytes_per_id(answer, id_chars: int = 36):
    """A measured number of bytes Python spends per ID kept in a dict (any CPython is in range).

    >>> bytes_per_id(36)  # doctest: +ELLIPSIS
    Not quite: that is less than one str of 36 characters takes (about 85 bytes): ...
    False
    """
    low, high = id_chars + 40, id_chars + 400
    given = as_number(answer)
    if given is not None and low <= given <= high:
        print(_("Correct: a plausible measurement; Python spends several times "
                "the {id_chars} characters on each ID (the str object's header "
                "and the dict's table).").format(id_chars=id_chars))
        return True
    return judge(answer, (low + high) / 2, _("the bytes per ID"), abs_tol=(high - low) / 2, mistakes=[
        Mistake(low / 2, _("that is less than one str of {id_chars} characters takes (about "
                           "{value} bytes): the characters alone, or the dict's table "
                           "without the strings? Make the IDs inside the measured function").format(id_chars=id_chars, value=id_chars + 49), tolerance=low / 2),
        Mistake(1e6 * high, _("that looks like the total; divide by the number of IDs"),
                tolerance=1e6 * high - 10 * high),
    ], hint=_("measure many IDs (say 100,000) at once and divide; expect {low} "
              "to {high}.").format(low=low, high=high))


# --- lesson 02: hashed IDs and the birthday bound -----------------------------------------
@checker
def expected_collisions(answer, *, hash_bits: int = 32, n: int = 100_000):
    """Expected number of the n IDs whose b-bit hash was already taken, about n^2 / 2^(b+1).

    >>> expected_collisions(1.164, n=100_000, hash_bits=32)
    Correct: the expected number of collisions = 1.164.
    True
    """
    N = 2 ** hash_bits
    return judge(answer, theory.expected_collisions(n, N), _("the expected number of collisions"),
                 rel=0.02, mistakes=[
        Mistake(n * n / N, _("each pair of IDs counts once: there are about n^2/2 pairs, not n^2")),
        Mistake(theory.collision_probability(n, N), _("that is the probability of at least one "
                "collision; the question asks how many to expect")),
        Mistake(n * n / (2 * hash_bits), _("divide by the number of hash values 2^{hash_bits}, not by the "
                                           "{hash_bits} bits").format(hash_bits=hash_bits)),
        Mistake(n / N, _("n/N is one ID's chance of hitting one given value; count pairs: n^2/(2N)")),
    ], hint=_("about n^2 / (2N) for N = 2^hash_bits values."))


@checker
def birthday_half(answer, hash_bits: int = 32):
    """The number of IDs at which a collision of a b-bit hash becomes more likely than not.

    >>> birthday_half(77_163, hash_bits=32)
    Correct: the number of IDs = 77,164.
    True
    """
    N = 2 ** hash_bits
    n = math.ceil(math.sqrt(2 * N * math.log(2)))
    while n > 2 and theory.collision_probability(n - 1, N) >= 0.5:
        n -= 1
    while theory.collision_probability(n, N) < 0.5:
        n += 1
    return judge(answer, n, _("the number of IDs"), rel=0.01, mistakes=[
        Mistake(math.sqrt(N), _("sqrt(2^{hash_bits}) is the right scale, but the 50% point is "
                                "sqrt(2 ln 2) = 1.18 times it").format(hash_bits=hash_bits)),
        Mistake(math.sqrt(N * math.log(2)), _("you solved n^2/N = ln 2; the pairs are n^2/2, so "
                "solve n^2/(2N) = ln 2")),
        Mistake(N / 2, _("half of all hash values is far too many: that is the birthday paradox")),
        Mistake(N, _("with every value taken a collision is certain; the 50% point comes much earlier")),
    ], hint=_("P(no collision) is about e^(-n^2/(2N)); solve for P = 1/2."))


@checker
def genuine_dropped(answer, genuine: int = 100_000, hash_bits: int = 24):
    """A measured count of genuine clicks that a b-bit hashed-ID dedup dropped.

    >>> genuine_dropped(300, genuine=100_000, hash_bits=24)
    Correct: 300 is within 4 standard deviations (4 x 18) of the expected 297.4.
    True
    """
    expected = theory.expected_collisions(genuine, 2 ** hash_bits)
    return judge_measured(answer, expected, math.sqrt(expected) + 0.5,
                          _("the number of genuine clicks dropped"), mistakes=[
        Mistake(expected / genuine, _("you gave a fraction; count the genuine clicks dropped"),
                tolerance=4 * (math.sqrt(expected) + 0.5) / genuine),
        Mistake(0, _("no drop at all: a dict of IDs is exact, but {hash_bits}-bit "
                     "hashes collide; did the stage keep only the hashes?").format(hash_bits=hash_bits), tolerance=0.5),
    ])


# --- lesson 03: one hash, one bit per value ------------------------------------------------
@checker
def bit_vector_fpp(answer, *, hash_bits: int = 8, items: int = 100):
    """False-positive rate of a vector of 2^b bits after ``items`` IDs: 1 - (1 - 2^-b)^items.

    >>> bit_vector_fpp(0.3238, hash_bits=8, items=100)
    Correct: the false-positive rate = 0.3239.
    True
    """
    m = 2 ** hash_bits
    correct = 1 - (1 - 1 / m) ** items
    return judge(answer, correct, _("the false-positive rate"), rel=0.01, unit="rate", mistakes=[
        Mistake(items / m, _("items/m adds up the chances as if no two IDs shared a bit; take "
                "1 - (chance the bit is still 0)")),
        Mistake(1 - correct, _("that is the chance the new ID's bit is still 0; a false positive is "
                "the opposite")),
        Mistake(1 - (1 - 1 / hash_bits) ** items, _("the vector has 2^{hash_bits} bits, not {hash_bits}").format(hash_bits=hash_bits)),
    ], hint=_("each earlier ID misses the new ID's bit with probability 1 - 1/m."))


@checker
def bit_vector_hash_bits(answer, *, items: int = 1000, fpp: float = 0.01):
    """The fewest hash bits b for which 2^b bits hold ``items`` IDs at rate at most ``fpp``.

    >>> bit_vector_hash_bits(17, items=1000, fpp=0.01)
    Correct: the hash width in bits = 17.
    True
    """
    b = 1
    while theory.bit_vector_false_positive_rate(num_bits=2 ** b, n=items) > fpp:
        b += 1
    rate_below = theory.bit_vector_false_positive_rate(num_bits=2 ** (b - 1), n=items)
    needed = math.ceil(-1 / math.expm1(math.log1p(-fpp) / items))
    return judge(answer, b, _("the hash width in bits"), rel=0, mistakes=[
        Mistake(b - 1, _("with {value} bits the rate is {rate_below}, above {fpp}: round "
                         "up").format(value=b - 1, rate_below=format(rate_below, ".4f"), fpp=fpp)),
        Mistake(2 ** b, _("that is the number of bits m in the vector; the question asks the hash "
                "width hash_bits, with m = 2**hash_bits")),
        Mistake(2 ** b / 8, _("that is the vector's size in bytes; the question asks the hash width")),
        Mistake(needed, _("that is the fewest bits m; the hash width is log2(m), rounded up"),
                tolerance=0.01 * needed),
    ], hint=_("try hash_bits = 10, 11, ... until 1 - (1 - 2**-hash_bits)^items is at most the rate."))


@checker
def measured_bit_vector_fpp(answer, *, hash_bits: int = 8, items: int = 40, trials: int = 10_000):
    """A measured false-positive rate of a 2^b-bit vector holding ``items`` IDs, on ``trials`` new IDs.

    >>> measured_bit_vector_fpp(0.1451, hash_bits=8, items=40, trials=10_000)
    Correct: 0.1451 is within 4 standard deviations (4 x 0.007) of the expected 0.1449.
    True
    """
    m = 2 ** hash_bits
    expected = theory.bit_vector_false_positive_rate(num_bits=m, n=items)
    sd = theory.measured_rate_std(num_bits=m, num_hashes=1, n=items, num_queries=trials)
    return judge_measured(answer, expected, sd, _("the measured false-positive rate"), trials=trials)


# --- lesson 04: salted hash functions ----------------------------------------------------
@checker
def salted_hash(answer, text: str = "123", salt: str = "nejakaSul", hash_bits: int = 8):
    """The article's n-bit salted hash: murmurhash.v2(text + salt) % 2^n.

    >>> salted_hash(42)
    Correct: the salted hash = 42.
    True
    """
    size = 2 ** hash_bits
    return judge(answer, murmurhash2(text + salt) % size, _("the salted hash"), rel=0, mistakes=[
        Mistake(murmurhash2(text) % size, _("that is the hash without the salt; append the salt "
                "to the input")),
        Mistake(murmurhash2(salt + text) % size, _("the salt goes after the text, not before")),
        Mistake(murmurhash2(text + salt), _("that is the whole 32-bit hash; keep it modulo 2^{hash_bits}").format(hash_bits=hash_bits)),
        Mistake(murmur3_32(text + salt) % size, _("that is MurmurHash3; the article's murmurhash.v2 "
                "is MurmurHash2")),
        Mistake(murmurhash2(text + salt) >> (32 - hash_bits), _("that keeps the top bits; the "
                "article keeps the remainder modulo 2^n, the low bits")),
    ], hint=_("bloomedu.murmurhash2(text + salt) % 2**hash_bits."))


@checker
def expected_bits_set(answer, *, num_bits: int = 256, num_hashes: int = 3, n: int = 50):
    """Expected number of bits set after n keys, each setting k of m bits: m(1 - (1 - 1/m)^kn).

    >>> expected_bits_set(113.6, num_bits=256, num_hashes=3, n=50)
    Correct: the expected number of bits set = 113.7.
    True
    """
    num_hashes = hash_count(num_hashes, "num_hashes")
    m, k = num_bits, num_hashes
    mean, unused = bits_set_moments(m, k * n)
    return judge(answer, mean, _("the expected number of bits set"), rel=0.01, mistakes=[
        Mistake(k * n, _("k x n counts every setting, but a bit set twice is still one bit")),
        Mistake(mean / m, _("that is the fraction of bits set; the question asks how many")),
        Mistake(m - mean, _("that is the number of bits still 0")),
        Mistake(m * (1 - (1 - 1 / m) ** n), _("each key sets k = {k} bits, not one").format(k=k)),
    ], hint=_("a given bit stays 0 through all k x n settings with probability (1 - 1/m)^(kn)."))


@checker
def measured_bits_set(answer, *, num_bits: int = 256, num_hashes: int = 3, n: int = 50):
    """A measured number of bits set after inserting n fresh keys into an empty filter.

    >>> measured_bits_set(118, num_bits=256, num_hashes=3, n=50)
    Correct: 118 is within 4 standard deviations (4 x 4.1) of the expected 113.7.
    True
    """
    num_hashes = hash_count(num_hashes, "num_hashes")
    mean, sd = bits_set_moments(num_bits, num_hashes * n)
    return judge_measured(answer, mean, sd, _("the number of bits set"), mistakes=[
        Mistake(num_hashes * n, _("k x n counts every setting; count the distinct bits that are 1 "
                "(a set of positions, or bits.count())"), tolerance=0.5),
        Mistake(mean / num_bits, _("that is the fraction of bits set; count them"),
                tolerance=4 * sd / num_bits),
    ])


EXERCISES = [
    Exercise("01", 1, "compute",
             N_("The business drops the dashes from its IDs, leaving {id_chars} hex characters of "
                "one byte each. How many bytes do the raw IDs of one day take, at {rate:,} "
                "messages a second for {seconds:,} seconds?"),
             "id_storage_bytes", {"rate": 10_000, "seconds": 86_400, "id_chars": 32}),
    Exercise("01", 2, "predict",
             N_("A stream of {messages:,} messages holds {duplicates} double-click copies. How "
                "many IDs will the dict hold at the end?"),
             "seen_ids_after", {"messages": 1000, "duplicates": 20}),
    Exercise("01", 3, "measure",
             N_("With bloomedu.teaching.memory.allocated_bytes, measure the bytes Python spends "
                "per ID kept in a SeenIds of 100,000 fresh {id_chars}-character IDs (UUIDs without "
                "their dashes), the ID strings included."),
             "bytes_per_id", {"id_chars": 32}),
    Exercise("02", 1, "compute",
             N_("One hour of clicks brings {n:,} IDs. How many of them are expected to hit a "
                "{hash_bits}-bit hash value already taken?"),
             "expected_collisions", {"n": 36_000_000, "hash_bits": 32}),
    Exercise("02", 2, "predict",
             N_("After how many IDs is a collision of a {hash_bits}-bit hash more likely than "
                "not?"),
             "birthday_half", {"hash_bits": 24}),
    Exercise("02", 3, "measure",
             N_("Deduplicate {genuine:,} genuine clicks (the first {genuine:,} messages of a click "
                "stream that are not double clicks) with a HashedIds that keeps {hash_bits}-bit "
                "MurmurHash3 hashes: how many genuine clicks were dropped?"),
             "genuine_dropped", {"genuine": 100_000, "hash_bits": 22}),
    Exercise("03", 1, "compute",
             N_("What is the false-positive rate of a vector of $2^{hash_bits}$ bits after {items} "
                "IDs?"),
             "bit_vector_fpp", {"hash_bits": 8, "items": 100}),
    Exercise("03", 2, "predict",
             N_("How many hash bits (hash_bits) must the vector use so that {items:,} IDs give a "
                "false-positive rate of at most {fpp}?"),
             "bit_vector_hash_bits", {"items": 1000, "fpp": 0.01}),
    Exercise("03", 3, "measure",
             N_("Insert {items} random IDs into BitVector(hash_bits={hash_bits}) and test "
                "{trials:,} new IDs: what fraction does it claim to have seen?"),
             "measured_bit_vector_fpp", {"hash_bits": 8, "items": 40, "trials": 10_000}),
    Exercise("04", 1, "compute",
             N_("What does the article's construction give for {text!r} with a {hash_bits}-bit "
                "hash function salted with {salt!r}?"),
             "salted_hash", {"text": "789", "salt": "nejakaJinaSul", "hash_bits": 10}),
    Exercise("04", 2, "predict",
             N_("{num_hashes} hash functions of 8 bits, salted \"0\", \"1\" and \"2\", each set "
                "one bit of the same {num_bits} bits for every key. If they behave as independent, "
                "how many bits do you expect to be set after {n} keys?"),
             "expected_bits_set", {"num_bits": 256, "num_hashes": 3, "n": 50}),
    Exercise("04", 3, "measure",
             N_("Set those bits for {n} random IDs ({num_hashes} functions salted \"0\" to \"2\", "
                "8 bits, one vector of {num_bits} bits) and count the distinct bits set."),
             "measured_bits_set", {"num_bits": 256, "num_hashes": 3, "n": 50}),
]
