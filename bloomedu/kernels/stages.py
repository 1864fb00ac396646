"""A pipeline of stages, each on a thread of its own, with each stage's CPU time measured.

``staged(source, step_1, ..., step_n)`` runs the source (an iterator: a seeded stream that must
run in order) on one thread and each step on one more; a step takes one item of the stage before
and yields any number of items to the next; the caller consumes the last stage's items, in order,
on its own thread.  Stages hand items over through bounded queues (``depth`` items each), so
memory stays bounded and a fast stage waits for a slow one without spinning.  numpy and numba
kernels compiled with ``nogil=True`` release the GIL, so on a machine of two cores the stages
really run at the same time: :class:`StageClock` holds each stage's thread CPU time
(``time.thread_time``), which the caller compares with the wall time.

With ``workers=1`` (``BLOOMEDU_WORKERS=1``: :data:`bloomedu.kernels.threads.WORKERS`)
everything runs in the calling thread, one item after the other, giving the same items in the
same order (the tests compare the two).

Used by :func:`bloomedu.workloads.day.deduplicate` (``make bench-day``); tested in
``tests/test_day_pipeline.py``.

>>> clock = StageClock()
>>> list(staged(iter([1, 2, 3]), lambda x: [x, 10 * x], clock=clock, workers=2))
[1, 10, 2, 20, 3, 30]
>>> sorted(clock.cpu_s)
['source', 'step 1']
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Callable, Iterable, Iterator, Sequence

from . import threads

__all__ = ["StageClock", "in_background", "staged"]

_DONE = object()


class StageClock:
    """Thread CPU seconds of each stage (``cpu_s``: name -> seconds), filled as stages end.

    >>> StageClock().total_cpu_s()
    0.0
    """

    def __init__(self):
        self.cpu_s: dict[str, float] = {}
        self._lock = threading.Lock()

    def add(self, name: str, seconds: float) -> None:
        with self._lock:
            self.cpu_s[name] = self.cpu_s.get(name, 0.0) + seconds

    def total_cpu_s(self) -> float:
        return sum(self.cpu_s.values(), 0.0)


def staged(source: Iterable, *steps: Callable[[object], Iterable], depth: int | Sequence[int] = 4,
           clock: StageClock | None = None, names: list[str] | None = None,
           workers: int | None = None) -> Iterator:
    """The items of the last stage: ``source``, then each step applied to each item of the
    stage before (a step returns an iterable of items).

    ``depth``: the items waiting between two stages, one number for all, or one for each
    stage's output (the source's first).  ``names``: one per stage, the source first (default ``source``, ``step 1``, ...); the CPU
    time of each is added into ``clock``.  An exception in any stage is raised here; if the
    caller stops early, every stage stops after the item it is working on.

    >>> list(staged(range(3), lambda x: [x + 1], workers=1))
    [1, 2, 3]
    """
    workers = threads.WORKERS if workers is None else workers  # read now: tests set it
    names = names or ["source"] + [f"step {i}" for i in range(1, len(steps) + 1)]
    if len(names) != len(steps) + 1:
        raise ValueError(f"names must name the source and each step: {len(steps) + 1} names, "
                         f"not {len(names)}")
    clock = clock if clock is not None else StageClock()
    if workers <= 1:
        yield from _in_line(iter(source), steps, clock, names)
        return
    stop = threading.Event()
    depths = [depth] * (len(steps) + 1) if isinstance(depth, int) else list(depth)
    if len(depths) != len(steps) + 1 or min(depths) < 1:
        raise ValueError(f"depth must be a number >= 1 or one per stage ({len(steps) + 1}), "
                         f"not {depth!r}")
    queues = [queue.Queue(maxsize=size) for size in depths]

    def offer(q: queue.Queue, entry) -> bool:
        while not stop.is_set():
            try:
                q.put(entry, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False  # the consumer has gone

    def taken(q: queue.Queue) -> Iterator:
        while True:
            item, error = q.get()
            if error is not None:
                raise error
            if item is _DONE:
                return
            yield item

    def run(name: str, produce: Callable[[], Iterator], out: queue.Queue) -> None:
        start = time.thread_time()
        try:
            for item in produce():
                if not offer(out, (item, None)):
                    return
            offer(out, (_DONE, None))
        except BaseException as error:  # handed on to the consumer
            offer(out, (_DONE, error))
        finally:
            clock.add(name, time.thread_time() - start)

    def source_items() -> Iterator:
        return iter(source)

    def step_items(step, q_in) -> Callable[[], Iterator]:
        return lambda: (out for item in taken(q_in) for out in step(item))

    producers = [source_items] + [step_items(step, q) for step, q in zip(steps, queues)]
    runners = [threading.Thread(target=run, args=(name, produce, out), daemon=True,
                                name=f"bloomedu-{name}")
               for name, produce, out in zip(names, producers, queues)]
    for thread in runners:
        thread.start()
    try:
        yield from taken(queues[-1])
    finally:
        stop.set()
        for q in queues:  # wake a stage blocked on an empty queue: it then sees stop
            try:
                q.put_nowait((_DONE, None))
            except queue.Full:
                pass
        for thread in runners:
            thread.join()


def in_background(items: Iterable, depth: int = 2) -> Iterator:
    """The items of ``items``, produced on a thread up to ``depth`` items ahead: a pipeline
    of one stage (:func:`staged` with no step).

    For a producer that must run in order (a seeded stream): it makes item j+1
    while the caller works on item j.  Its exceptions are raised here; if the
    caller stops early, the thread stops after the item it is making.

    >>> list(in_background(iter(range(4))))
    [0, 1, 2, 3]
    """
    return staged(items, depth=depth, names=["producer"])


def _in_line(items: Iterator, steps, clock: StageClock, names: list[str]) -> Iterator:
    """The same items, every stage in the calling thread; each stage's CPU time is its own
    (the clock stops while an item is handed on)."""
    def timed(name: str, make: Callable[[], Iterable]) -> Iterator:
        start = time.thread_time()
        iterator = iter(make())  # a step returning a list does its work here
        clock.add(name, time.thread_time() - start)
        while True:
            start = time.thread_time()
            try:
                item = next(iterator)
            except StopIteration:
                return
            finally:
                clock.add(name, time.thread_time() - start)
            yield item

    def push(level: int, item) -> Iterator:
        if level == len(steps):
            yield item
            return
        for out in timed(names[level + 1], lambda: steps[level](item)):
            yield from push(level + 1, out)

    for item in timed(names[0], lambda: items):
        yield from push(0, item)
