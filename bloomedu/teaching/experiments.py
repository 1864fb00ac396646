"""Measured false-positive rates against theory (lesson 07).

Article 1 ("Filtro di Bloom: un elemento appartiene all'insieme?") ends with a
list of properties: more hash functions and more bits mean fewer errors.  Here
those words become numbers: a fresh :class:`~bloomedu.core.filter.BloomFilter` of m
bits and k hashes gets n random keys, then keys that were never inserted are
queried, and the share answered "maybe" is the measured rate p.  A sweep does
that for a grid of (m, k, n) and sets each measurement beside the classic and
the exact formula of :mod:`bloomedu.core.theory`, with a Wilson 95% interval
(Wilson, "Probable inference, the law of succession, and statistical
inference", JASA 22(158), 1927).

Keys are random 64-bit integers: inserted keys are even and queried keys are
odd, so no query is ever a key that was inserted.

For comparison, :func:`measure_plain_double_hashing_rate` measures plain double
hashing (Kirsch and Mitzenmacher, "Less hashing, same performance: building a
better Bloom filter", ESA 2006) without the library's mixing step, on the same
keys: ``deeper/06_small_filters`` shows it running above the exact rate on small filters.

Taught in ``notebooks/07_false_positive_rate.ipynb`` (the sweep over k, m and n) and
``notebooks/deeper/07_measured_rates.ipynb`` (the 240-filter grid, z-scores); plain double
hashing in ``notebooks/deeper/06_small_filters.ipynb``; tested in
``tests/test_experiments.py``.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Iterable, Sequence

import numpy as np

from ..core.checks import MAX_HASHES, MAX_NUM_BITS, check_storage, real_number, whole_number
from ..core.filter import BloomFilter, positions
from ..core.hashing import hashed_batches, joined
from ..core.theory import exact_false_positive_rate, false_positive_rate
from ..i18n import N_, gettext

__all__ = ["Z95", "SweepRow", "column_header", "double_hash_positions", "format_table",
           "measure_false_positive_rate", "measure_plain_double_hashing_rate",
           "simulate_false_positive_rate", "sweep", "wilson_interval"]

Z95 = 1.959963984540054  # the standard normal's 97.5% point: two-sided 95%
_CHUNK = 1 << 18  # keys drawn and hashed per batch: bounds the working memory
_TOP = np.iinfo(np.uint64).max
_ONE = np.uint64(1)


_MOST = {"num_bits": MAX_NUM_BITS, "num_hashes": MAX_HASHES, "seed": None}  # the library's limits


def _whole(value, name: str, minimum: int) -> int:
    """An int in minimum..the library's limit for ``name`` (k <= 1024, every count < 2**63,
    any seed)."""
    return whole_number(value, name, minimum, _MOST.get(name, MAX_NUM_BITS))


def _arguments(check, num_bits, num_hashes, num_items, num_queries, seed) -> tuple:
    """Check m, k, n with ``check`` (one int, or a sequence of them), then q and the seed."""
    return (check(num_bits, "num_bits", 1), check(num_hashes, "num_hashes", 1),
            check(num_items, "num_items", 0), _whole(num_queries, "num_queries", 1),
            _whole(seed, "seed", 0))


def _bool_bits(m: int) -> np.ndarray:
    """m bits as one bool each (the model's own array), if this machine has the memory."""
    check_storage(m, f"num_bits={m}")
    return np.zeros(m, dtype=bool)


def _item_rng(seed: int) -> np.random.Generator:
    return np.random.default_rng([seed, 0])


def _query_rng(seed: int, num_items: int) -> np.random.Generator:
    return np.random.default_rng([seed, 1, num_items])


def _draw(rng: np.random.Generator, count: int, odd: bool) -> Iterable[np.ndarray]:
    """``count`` random uint64 keys in batches, all even (inserted) or all odd (queried)."""
    for start in range(0, count, _CHUNK):
        keys = rng.integers(_TOP, size=min(_CHUNK, count - start), dtype=np.uint64,
                            endpoint=True)
        yield keys | _ONE if odd else keys & ~_ONE


def _insert(bloom: BloomFilter, rng: np.random.Generator, count: int) -> None:
    for keys in _draw(rng, count, odd=False):
        bloom.add_many(keys)


def _false_positives(bloom: BloomFilter, seed: int, num_items: int, num_queries: int) -> int:
    rng = _query_rng(seed, num_items)
    return sum(int(np.count_nonzero(bloom.contains_many(keys)))
               for keys in _draw(rng, num_queries, odd=True))


def measure_false_positive_rate(*, num_bits: int, num_hashes: int, num_items: int,
                                num_queries: int, seed: int) -> float:
    """Insert n random keys into a fresh filter, query q others, return the share answered "maybe".

    The same arguments always give the same rate.  The spread to expect around
    :func:`~bloomedu.core.theory.exact_false_positive_rate` is
    :func:`~bloomedu.core.theory.measured_rate_std`.

    >>> measure_false_positive_rate(num_bits=2**16, num_hashes=4, num_items=0,
    ...                             num_queries=1000, seed=1)
    0.0
    >>> shape = dict(num_bits=2**16, num_hashes=4, num_items=8192, num_queries=20_000)
    >>> measure_false_positive_rate(**shape, seed=1) == measure_false_positive_rate(**shape, seed=1)
    True
    """
    m, k, n, q, seed = _arguments(_whole, num_bits, num_hashes, num_items, num_queries, seed)
    bloom = BloomFilter(m, k)
    _insert(bloom, _item_rng(seed), n)
    return _false_positives(bloom, seed, n, q) / q


def simulate_false_positive_rate(*, num_bits: int, num_hashes: int, num_items: int,
                                 num_queries: int, seed: int) -> float:
    """The model behind the exact formula, simulated: every one of the kn and kq positions uniform.

    No hashing at all: positions come straight from the random generator, so
    this is what :func:`~bloomedu.core.theory.exact_false_positive_rate` predicts on
    average, at any m.  A real filter derives its k positions from one hash
    per key, which can depart from the model when m is small.

    >>> simulate_false_positive_rate(num_bits=1, num_hashes=3, num_items=1, num_queries=10, seed=0)
    1.0
    """
    m, k, n, q, seed = _arguments(_whole, num_bits, num_hashes, num_items, num_queries, seed)
    rng = np.random.default_rng([seed, 2])
    bits = _bool_bits(m)
    for start in range(0, k * n, _CHUNK):
        bits[rng.integers(m, size=min(_CHUNK, k * n - start))] = True
    hits = 0
    for start in range(0, q, _CHUNK):
        probes = rng.integers(m, size=(min(_CHUNK, q - start), k))
        hits += int(np.count_nonzero(bits[probes].all(axis=1)))
    return hits / q


def double_hash_positions(keys, *, num_bits: int, num_hashes: int, mix: bool = True) -> np.ndarray:
    """The k positions of each key, one row per key: mixed as BloomFilter does, or plain.

    ``keys``: a uint64 array, or any keys :meth:`BloomFilter.add_many` takes (str, bytes, int).

    ``mix=True``: ``fmix64((h1 + i*h2) mod 2**64) mod m``, the positions of
    :class:`~bloomedu.core.filter.BloomFilter` (a step h2 whose k values repeat made
    odd, as there).  ``mix=False``: plain double
    hashing, ``(h1 + i*h2) mod 2**64 mod m``, the reduction Guava uses (it also
    clears the sign bit first: see :mod:`bloomedu.compat.guava`).
    ``deeper/06_small_filters`` compares the two; lesson 08 runs the day of clicks on the mixed ones.

    >>> keys = np.array([7], dtype=np.uint64)
    >>> by_library = double_hash_positions(keys, num_bits=1024, num_hashes=3)
    >>> by_library.tolist() == [BloomFilter(1024, 3).bit_indices(7)]
    True
    >>> double_hash_positions(keys, num_bits=1024, num_hashes=3, mix=False).shape
    (1, 3)
    >>> by_library = double_hash_positions(["123"], num_bits=1024, num_hashes=3)
    >>> by_library.tolist() == [BloomFilter(1024, 3).bit_indices("123")]
    True
    """
    m, k = _whole(num_bits, "num_bits", 1), _whole(num_hashes, "num_hashes", 1)
    h1, h2 = joined(hashed_batches(keys, k, spread=mix))
    if mix:  # BloomFilter's own positions
        return positions(h1, h2, num_bits=m, num_hashes=k).T
    values = h1[:, None] + np.arange(k, dtype=np.uint64) * h2[:, None]  # wraps modulo 2**64
    values -= values // np.uint64(m) * np.uint64(m)  # x mod m: numpy's // by a scalar is faster
    return values.view(np.int64)


def measure_plain_double_hashing_rate(*, num_bits: int, num_hashes: int, num_items: int,
                                      num_queries: int, seed: int) -> float:
    """:func:`measure_false_positive_rate` with plain double hashing: same keys, unmixed positions.

    The same n inserted and q queried keys as the library's filter gets for this
    seed, but positions ``(h1 + i*h2) mod 2**64 mod m`` (``double_hash_positions``
    with ``mix=False``), for comparison with the library's mixed positions.

    >>> measure_plain_double_hashing_rate(num_bits=2**16, num_hashes=4, num_items=0,
    ...                                   num_queries=1000, seed=1)
    0.0
    >>> measure_plain_double_hashing_rate(num_bits=1, num_hashes=4, num_items=1,
    ...                                   num_queries=1000, seed=1)
    1.0
    """
    m, k, n, q, seed = _arguments(_whole, num_bits, num_hashes, num_items, num_queries, seed)
    bits = _bool_bits(m)
    for keys in _draw(_item_rng(seed), n, odd=False):
        bits[double_hash_positions(keys, num_bits=m, num_hashes=k, mix=False)] = True
    hits = sum(int(np.count_nonzero(
                   bits[double_hash_positions(keys, num_bits=m, num_hashes=k, mix=False)].all(axis=1)))
               for keys in _draw(_query_rng(seed, n), q, odd=True))
    return hits / q


def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion: (low, high), 95% by default.

    Unlike p +- z sqrt(p(1-p)/q) it never leaves [0, 1] and is not empty when
    nothing was seen: 0 false positives in 20,000 queries still allows a rate up
    to about 1.9e-4.

    >>> [f"{x:.5f}" for x in wilson_interval(0, 20_000)]
    ['0.00000', '0.00019']
    >>> [f"{x:.4f}" for x in wilson_interval(50, 100)]
    ['0.4038', '0.5962']
    """
    trials = _whole(trials, "trials", 1)
    successes = _whole(successes, "successes", 0)
    if successes > trials:
        raise ValueError(f"successes must be at most trials={trials}, got {successes}")
    z = real_number(z, "z", 0.0, open_low=True, allowed="a positive number")
    p = successes / trials
    z2 = z * z / trials
    centre = (p + z2 / 2) / (1 + z2)
    half = z / (1 + z2) * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials))
    low = 0.0 if successes == 0 else min(p, max(0.0, centre - half))
    high = 1.0 if successes == trials else max(p, min(1.0, centre + half))
    return low, high


@dataclasses.dataclass(frozen=True)
class SweepRow:
    """One measured filter: its m, k, n, the measurement, and theory beside it.

    ``seed`` reproduces the row: ``measure_false_positive_rate(num_bits=..., num_hashes=...,
    num_items=..., num_queries=..., seed=seed) == rate``.

    >>> row = sweep(num_bits=2**10, num_hashes=2, num_items=100, num_queries=1000, seed=3)[0]
    >>> row.false_positives / row.num_queries == row.rate, row.low <= row.rate <= row.high
    (True, True)
    """

    num_bits: int
    num_hashes: int
    num_items: int
    num_queries: int
    false_positives: int
    rate: float
    low: float
    high: float
    classic: float
    exact: float
    seed: int


def _values(values, name: str, minimum: int) -> list[int]:
    if isinstance(values, numbers.Integral) and not isinstance(values, bool):
        values = [values]
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be an int or a sequence of ints >= {minimum}")
    values = [_whole(value, name, minimum) for value in values]
    if not values:
        raise ValueError(f"{name} must hold at least one value")
    return values


def _group_seed(seed: int, m: int, k: int) -> int:
    """A seed of its own for each (m, k): filters of different shapes are independent."""
    return int(np.random.SeedSequence([seed, m, k]).generate_state(1, np.uint64)[0])


def sweep(*, num_bits: int | Sequence[int], num_hashes: int | Sequence[int],
          num_items: int | Sequence[int], num_queries: int = 20_000,
          seed: int = 0) -> list[SweepRow]:
    """Measure every (m, k, n) of a grid: one :class:`SweepRow` per filter, in grid order.

    Each argument is one value or a sequence.  For each (m, k) the keys are
    inserted once, in order of growing n, and q fresh keys are queried at each
    n, so the whole grid costs about one filter per (m, k); each row is still
    exactly what :func:`measure_false_positive_rate` gives with the row's seed.

    >>> rows = sweep(num_bits=2**12, num_hashes=[1, 3], num_items=[64, 512], num_queries=2000)
    >>> [(r.num_hashes, r.num_items) for r in rows]
    [(1, 64), (1, 512), (3, 64), (3, 512)]
    >>> rows[1].rate == measure_false_positive_rate(num_bits=2**12, num_hashes=1, num_items=512,
    ...                                             num_queries=2000, seed=rows[1].seed)
    True
    """
    ms, ks, ns, q, seed = _arguments(_values, num_bits, num_hashes, num_items, num_queries, seed)
    rows = []
    for m in ms:
        for k in ks:
            group = _group_seed(seed, m, k)
            bloom, rng, inserted, counts = BloomFilter(m, k), _item_rng(group), 0, {}
            for n in sorted(set(ns)):
                _insert(bloom, rng, n - inserted)
                inserted = n
                counts[n] = _false_positives(bloom, group, n, q)
            for n in ns:
                rows.append(SweepRow(m, k, n, q, counts[n], counts[n] / q,
                                     *wilson_interval(counts[n], q),
                                     false_positive_rate(num_bits=m, num_hashes=k, n=n),
                                     exact_false_positive_rate(num_bits=m, num_hashes=k, n=n), group))
    return rows


_HEADERS = {"num_bits": "m", "num_hashes": "k", "num_items": "n", "num_queries": N_("queries"),
            "false_positives": "fp", "rate": N_("rate"), "low": N_("low"), "high": N_("high"),
            "classic": N_("classic"), "exact": N_("exact")}
TABLE_COLUMNS = ("num_bits", "num_hashes", "num_items", "num_queries", "false_positives",
                 "rate", "low", "high", "classic", "exact")


def column_header(column: str) -> str:
    """The English header of a table column: a SweepRow field by its symbol, else the name.

    >>> column_header("num_bits"), column_header("rate"), column_header("bits/item")
    ('m', 'rate', 'bits/item')
    """
    return _HEADERS.get(column, column)


def format_table(rows, columns: Sequence[str] = TABLE_COLUMNS, float_format: str = ".3e") -> str:
    """Rows (SweepRow or dicts) as a fixed-width text table, ints as they are, floats as ``float_format``.

    The headers are the columns' names (a SweepRow field by its symbol: ``num_bits`` is ``m``) in
    the current language (:mod:`bloomedu.i18n`); each column is as wide as its widest cell.

    >>> print(format_table([{"m": 1024, "rate": 0.0123}, {"m": 65536, "rate": 1.5e-05}],
    ...                    columns=["m", "rate"]))
        m       rate
     1024  1.230e-02
    65536  1.500e-05
    """
    rows = [dataclasses.asdict(row) if dataclasses.is_dataclass(row) else dict(row)
            for row in rows]
    missing = {c for c in columns for row in rows if c not in row}
    if missing:
        raise ValueError(f"columns not in every row: {sorted(missing)}")

    def cell(value) -> str:
        if isinstance(value, numbers.Integral):
            return str(value)
        if isinstance(value, numbers.Real):
            return format(float(value), float_format)
        return str(value)

    table = [[gettext(column_header(c)) for c in columns]] + [[cell(row[c]) for c in columns]
                                                        for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(columns))]
    return "\n".join("  ".join(text.rjust(width) for text, width in zip(line, widths))
                     for line in table)
