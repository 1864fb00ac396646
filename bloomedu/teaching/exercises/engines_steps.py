"""Exercises for lesson 21: the Bloom filters inside Spark and PostgreSQL.

How many bytes Spark's ``BloomFilter.writeTo`` writes for a filter sized from n and p (its bits
rounded up to 64-bit words, after a header of 32-bit fields), how many rows a PostgreSQL bloom
index hands to the recheck for values no row holds, and the false-positive rate of Spark's
filter, measured on bloomedu's model of it.  Posed in ``notebooks/21_inside_the_engines.ipynb``,
answered in ``notebooks/solutions/21_inside_the_engines_solutions.ipynb``; tested in
``tests/test_exercises.py``.
"""

from __future__ import annotations

import math

from ...core import theory
from ...core.checks import MAX_NUM_BITS, one_of, probability, whole_number
from ...i18n import N_, gettext as _
from ._feedback import Exercise, Mistake, checker, judge, judge_measured

__all__ = ["spark_sizing", "EXERCISES"]

_LN2_SQUARED = math.log(2) * math.log(2)  # as Spark's Java computes it


def spark_sizing(*, n: int, p: float, log=math.log) -> tuple[int, int]:
    """(bits, k) of Spark's ``BloomFilter.create(n, p)``: the bits rounded up to 64-bit words.

    ``numBits = (long)(-n ln p / (ln 2)^2)``, ``k = max(1, round(numBits / n * ln 2))``, and the
    bit array holds whole 64-bit words, its size the filter's m.

    >>> spark_sizing(n=100_000, p=0.01)
    (958528, 7)
    """
    n = whole_number(n, "n", 1, MAX_NUM_BITS)
    p = probability(p, "p")
    bits = int(-n * log(p) / _LN2_SQUARED)
    k = max(1, int(math.floor(bits / n * math.log(2) + 0.5)))  # Java's Math.round
    return 64 * -(-bits // 64), k


@checker
def spark_filter_bytes(answer, *, n: int = 1_000_000, p: float = 0.02, version: int = 2):
    """Bytes of Spark's ``writeTo`` for ``BloomFilter.create(n, p)`` in format ``version``.

    A header of 32-bit fields (version, k, the seed in version 2, the number of words), then the
    64-bit words.

    >>> spark_filter_bytes(1_017_816, n=1_000_000, p=0.02, version=2)
    Correct: the bytes writeTo writes = 1,017,816.
    True
    """
    bits, unused = spark_sizing(n=n, p=p)
    header = 16 if one_of(version, "version", (1, 2)) == 2 else 12
    correct = header + bits // 8
    raw = int(-n * math.log(p) / _LN2_SQUARED)
    return judge(answer, correct, _("the bytes writeTo writes"), rel=0, abs_tol=0.5, unit="bytes",
                 mistakes=[
        Mistake(bits // 8, "the words follow a header: 32-bit fields for the version, k, "
                + ("the seed " if version == 2 else "") + "and the number of words", 0.5),
        Mistake(28 - header + bits // 8, f"version {version} writes "
                + ("four header fields: version, k, seed and the number of words" if version == 2
                   else "three header fields: version, k and the number of words"), 0.5),
        Mistake(header + raw / 8, _("Spark keeps whole 64-bit words: round the bits up to a "
                "multiple of 64 first"), 1),
        Mistake(header + spark_sizing(n=n, p=p, log=math.log10)[0] // 8, _("you used log10 instead of ln"),
                8),
    ], hint=_("bits = floor(-n ln p / (ln 2)^2) rounded up to 64-bit words; bytes = header + bits / 8."))


def _false_candidates(rows: float, length: int, columns: int, bits: int, query_columns: int,
                      ) -> float:
    set_bits = columns * bits  # one row's bits, as if all distinct
    return rows * (1 - (1 - 1 / length) ** set_bits) ** (query_columns * bits)


@checker
def bloom_index_rechecks(answer, *, rows: int = 1_000_000, length: int = 80, columns: int = 4,
                         bits: int = 2, query_columns: int = 1):
    """Expected rows a bloom index hands to the recheck for values that no row holds.

    Each row sets ``columns * bits`` of its ``length``-bit signature; a query on
    ``query_columns`` of them asks for ``query_columns * bits`` bits, and a row that holds
    none of the values passes if all of them are set by chance.

    >>> bloom_index_rechecks(9165, rows=1_000_000, length=80, columns=4, bits=2, query_columns=1)
    Correct: the expected rows rechecked = 9165.
    True
    """
    rows = whole_number(rows, "rows", 1, MAX_NUM_BITS)
    length = whole_number(length, "length", 1, 4096)
    columns = whole_number(columns, "columns", 1, 32)
    bits = whole_number(bits, "bits", 1, 4095)
    query_columns = whole_number(query_columns, "query_columns", 1, columns)
    correct = _false_candidates(rows, length, columns, bits, query_columns)
    slip = lambda value: 0.02 * value  # noqa: E731 - a slip computed with rounded numbers
    one_column = _false_candidates(rows, length, 1, bits, query_columns)
    every_column = _false_candidates(rows, length, columns, bits, columns)
    words = _false_candidates(rows, length // 16, columns, bits, query_columns)
    linear = rows * (columns * bits / length) ** (query_columns * bits)
    return judge(answer, correct, _("the expected rows rechecked"), rel=2e-3, mistakes=[
        Mistake(one_column, _("every column of a row sets its bits in the same signature: "
                              "{value} bits a row, not {bits}").format(value=columns * bits, bits=bits), slip(one_column)),
        Mistake(every_column, _("the query names {query_columns} column(s), so it asks for "
                                "{value} bits, not every column's").format(query_columns=query_columns, value=query_columns * bits), slip(every_column)),
        Mistake(words, _("length counts bits (stored in 16-bit words): use it as the signature's m"),
                slip(words)),
        Mistake(linear, _("the chance that a bit is set is 1 - (1 - 1/{length})^{value}, a "
                          "little under {value}/{length}").format(length=length, value=columns * bits), slip(linear)),
    ], hint=_("a bit is set with probability 1 - (1 - 1/length)^(columns x bits); the query asks "
            "for query_columns x bits of them."))


@checker
def measured_spark_fpp(answer, *, n: int = 100_000, p: float = 0.03, trials: int = 100_000):
    """A rate measured on ``trials`` items never put into SparkBloomFilter(n, p) holding n.

    >>> measured_spark_fpp(0.0297, n=100_000, p=0.03, trials=100_000)
    Correct: 0.0297 is within 4 standard deviations (4 x 0.00055) of the expected 0.03.
    True
    """
    m, k = spark_sizing(n=n, p=p)
    expected = theory.exact_false_positive_rate(num_bits=m, num_hashes=k, n=n)
    sd = theory.measured_rate_std(num_bits=m, num_hashes=k, n=n, num_queries=trials)
    return judge_measured(answer, expected, sd, _("Spark's measured false-positive rate"),
                          trials=trials)


EXERCISES = [
    Exercise("21", 1, "compute",
             N_("How many bytes does Spark's writeTo write for a version-{version} "
                "BloomFilter.create({n:_}, {p})?"),
             "spark_filter_bytes", {"n": 1_000_000, "p": 0.02, "version": 2}),
    Exercise("21", 2, "predict",
             N_("A bloom index of length={length} with {bits} bits for each of its {columns} "
                "columns holds {rows:,} rows. A query names {query_columns} column(s), with a "
                "value no row holds: how many rows, on average, does the index hand to the recheck?"),
             "bloom_index_rechecks",
             {"rows": 1_000_000, "length": 80, "columns": 4, "bits": 2, "query_columns": 1}),
    Exercise("21", 3, "measure",
             N_("Put {n:,} distinct IDs into SparkBloomFilter({n:_}, {p}) and measure the fraction "
                "of {trials:,} other IDs it claims to hold."),
             "measured_spark_fpp", {"n": 100_000, "p": 0.03, "trials": 100_000}),
]
