"""A day of clicks, deduplicated by a Bloom filter: the genuine clicks it drops as it fills.

Article 1 ("Filtro di Bloom: un elemento appartiene all'insieme?") asks how to
remember a day of click IDs, 864,000,000 of them at 10,000 a second.  A
filter-based dedup stage drops a genuine click when the filter, holding every
ID before it, wrongly claims it: with m bits and k hashes, ID number i is
dropped with probability p(i) = (1 - e^(-ki/m))^k, a rate that grows all day.

- :func:`expected_drops` integrates that rate over the day, in closed form:
  with u = 1 - e^(-ki/m), di = m du / (k (1 - u)), so the sum of p(i) over
  i < n is (m/k) times the integral of u^k / (1 - u) from 0 to
  U = 1 - e^(-kn/m), which is (m/k) times the sum over j > k of U^j / j.
- :func:`dropped_messages` says, for a whole stream at once, which messages a
  filter-based stage drops, from the k positions of each message: exactly what
  :func:`bloomedu.steps.dedup.deduplicate` would keep and drop, message by
  message, but in numpy.

Taught at the end of ``notebooks/08_sizing_a_filter.ipynb``; tested in
``tests/test_clickday.py``.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.checks import MAX_HASHES, MAX_NUM_BITS, whole_number

__all__ = ["IDS_PER_DAY", "expected_drops", "dropped_messages"]

IDS_PER_DAY = 10_000 * 24 * 60 * 60  # the article's 864,000,000


def expected_drops(*, num_bits: int, num_hashes: int, n: int) -> float:
    """Expected genuine clicks dropped while n distinct IDs go through a filter of m bits, k hashes.

    The sum over i < n of (1 - e^(-ki/m))^k, in its closed form
    (m/k) * sum over j > k of U^j / j, with U = 1 - e^(-kn/m).  With k = 1 it
    is n - m(1 - e^(-n/m)): the expected collisions of lesson 02's hashes.

    >>> round(expected_drops(num_bits=2**32, num_hashes=1, n=864_000_000))  # lesson 02's 81 million
    81357892
    >>> exact = sum((1 - math.exp(-3 * i / 1000)) ** 3 for i in range(300))
    >>> abs(expected_drops(num_bits=1000, num_hashes=3, n=300) - exact) < 0.5
    True
    """
    m = whole_number(num_bits, "num_bits", 1, MAX_NUM_BITS)
    k = whole_number(num_hashes, "num_hashes", 1, MAX_HASHES)
    n = whole_number(n, "n", 0, MAX_NUM_BITS)
    full = -math.expm1(-k * n / m)  # U, the share of bits set after the n IDs
    if full < 0.9:  # the tail of the series converges fast and has no cancellation
        term, total, j = full ** (k + 1), 0.0, k + 1
        while term > 1e-18 * max(total, 1e-300):
            total += term / j
            term *= full
            j += 1
        return m / k * total
    return n - m / k * sum(full ** j / j for j in range(1, k + 1))


def dropped_messages(positions: np.ndarray, num_bits: int) -> np.ndarray:
    """For each message, in stream order, whether a filter-based dedup stage drops it.

    ``positions`` holds the k bit positions of each message, one row per
    message.  The stage drops message i when all its bits were set by the
    messages before it; a dropped message sets no new bit, so the bits the
    stage holds are those of every message before i, kept or not.

    >>> dropped_messages(np.array([[1, 2], [3, 4], [1, 2], [2, 3], [5, 0]]), 6).tolist()
    [False, False, True, True, False]
    """
    positions = np.asarray(positions)
    if positions.ndim != 2 or positions.dtype.kind not in "iu":
        raise ValueError("positions must be a 2-d integer array, one row of k positions a message")
    m = whole_number(num_bits, "num_bits", 1, MAX_NUM_BITS)
    if positions.size and (positions.min() < 0 or positions.max() >= m):
        raise ValueError(f"positions must lie in 0..num_bits-1 = {m - 1}")
    count, k = positions.shape
    bits, first = np.unique(positions.ravel(), return_index=True)  # first setting of each bit
    first_message = np.full(m, count, dtype=np.int64)
    first_message[bits] = first // k
    return first_message[positions].max(axis=1, initial=-1) < np.arange(count)
