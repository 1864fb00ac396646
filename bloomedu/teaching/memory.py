"""Measuring memory, so the lessons report what Python really spends.

Article 1 estimates 31 GB a day for 864,000,000 IDs of 36 characters; lesson 01
sets that beside bytes measured with :mod:`tracemalloc`.

Taught in ``notebooks/01_seen_ids.ipynb``, ``notebooks/02_hashed_ids.ipynb``,
``notebooks/03_bit_vector.ipynb`` and ``notebooks/09_one_million_urls.ipynb`` (what a million URLs cost elsewhere); tested
in its doctest.
"""

from __future__ import annotations

import tracemalloc
from typing import Any, Callable

__all__ = ["allocated_bytes"]


def allocated_bytes(build: Callable[[], Any]) -> tuple[Any, int]:
    """Call ``build()`` and return (its result, bytes it allocated and kept alive).

    Counts Python and numpy allocations made during the call that are still
    held when it returns (tracemalloc's current size, before minus after).

    >>> ids, nbytes = allocated_bytes(lambda: [str(i) for i in range(1000)])
    >>> 50_000 < nbytes < 100_000
    True
    """
    already_tracing = tracemalloc.is_tracing()
    if not already_tracing:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        result = build()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        if not already_tracing:
            tracemalloc.stop()
    return result, after - before
