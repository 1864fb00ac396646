"""Two cores for one bulk call: prepare the next batch while the current one is written.

numpy releases the GIL inside its loops (hashing, computing positions, sorting,
``take``), so a worker thread can hash and sort batch j+1 while another writes batch j
into the filter.  :func:`ordered_map` hands the results back in order, so a caller whose
answers depend on the order (``add_new``) writes them on its own thread, one batch after
the other; an insert, whose writes commute, writes on the workers under the filter's lock.
Either way the bits are exactly those of a single thread (``WORKERS = 1`` runs everything
in the calling thread, which the tests compare against).

Used by :mod:`bloomedu.kernels.bloom` and :mod:`bloomedu.variants.blocked`; tested
in ``tests/test_large.py``; ``make bench`` (W4) and ``make bench-day`` time it.
"""

from __future__ import annotations

import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable, Iterator, TypeVar

__all__ = ["WORKERS", "ordered_map"]

# Threads preparing batches (1: no thread at all); BLOOMEDU_WORKERS=1 in the environment sets it.
WORKERS = int(os.environ.get("BLOOMEDU_WORKERS", 0)) or min(2, os.cpu_count() or 1)

Item, Result = TypeVar("Item"), TypeVar("Result")


def ordered_map(function: Callable[[Item], Result], items: Iterable[Item],
                workers: int | None = None) -> Iterator[Result]:
    """``function(item)`` for every item, computed on worker threads, yielded in order.

    At most ``2 * workers`` results are in flight, so memory stays bounded
    whatever the number of items.  An exception raised by ``function`` is
    raised here, at its item's turn; the items after it are not started.

    >>> list(ordered_map(lambda x: x * x, range(5), workers=2))
    [0, 1, 4, 9, 16]
    """
    workers = WORKERS if workers is None else workers
    if workers <= 1:
        yield from map(function, items)
        return
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="bloomedu") as pool:
        pending: deque = deque()
        try:
            for item in items:
                pending.append(pool.submit(function, item))
                if len(pending) >= 2 * workers:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:  # an error, or the consumer stopped early: start nothing more
            for future in pending:
                future.cancel()
