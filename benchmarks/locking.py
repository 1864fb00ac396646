"""What the filter's lock costs: one uncontended acquire and release per write.

    python -m benchmarks.locking KEYS_DIRECTORY

Every write to a filter's bits holds its lock (``bloomedu.core.contract.Filter``'s), and
nothing else changes when no other thread is there: ``add`` takes it once per
key, ``add_many`` once per write of staged bits (once per call up to 40 Mi
bits, once per chunk of sorted positions above).  So the lock's cost is the
number of acquisitions a call makes (counted here by wrapping the lock) times
the time of one uncontended ``with lock:`` (timed here, minus the empty loop),
set beside the call's own time.  Also timed: two threads writing one shared
filter against two threads writing a filter each (the same work), which is
what waiting for the lock costs.  Best of 5, one warm process.
``KEYS_DIRECTORY``: where ``benchmarks.workloads.write_keys`` wrote the keys.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

from bloomedu import BloomFilter

from .breakdown import _best_ms
from .workloads import WORKLOADS, read_keys

_LOOPS = 200_000
_SINGLE_KEYS = 20_000
_LARGE_CAPACITY = 3_000_000  # from_capacity(3e6, 0.001): 43 Mi bits, add_many writes by chunks


class _Counting:
    """A lock that counts its acquisitions (for counting only, never timed)."""

    def __init__(self, lock) -> None:
        self.lock, self.count = lock, 0

    def __enter__(self):
        self.count += 1
        return self.lock.__enter__()

    def __exit__(self, *exc):
        return self.lock.__exit__(*exc)


def acquisitions(f: BloomFilter, call) -> int:
    """How many times ``call()`` takes the filter's lock."""
    real, f._lock = f._lock, _Counting(f._lock)
    try:
        call()
        return f._lock.count
    finally:
        f._lock = real


def lock_ns() -> float:
    """One uncontended ``with lock:``, in ns: a loop of them minus the same empty loop."""
    lock = threading.Lock()

    def locked():
        for _ in range(_LOOPS):
            with lock:
                pass

    def empty():
        for _ in range(_LOOPS):
            pass

    return (_best_ms(locked) - _best_ms(empty)) * 1e6 / _LOOPS


def _in_threads(jobs) -> None:
    threads = [threading.Thread(target=job) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def measure(directory: Path) -> dict:
    """Per call: time and lock acquisitions; and two threads' time over one thread's."""
    urls, _ = read_keys(directory, "W1")
    uints, _ = read_keys(directory, "W2")
    singles = urls[:_SINGLE_KEYS]
    w1, w2 = WORKLOADS["W1"][:2], WORKLOADS["W2"][:2]
    calls = {  # name: (make a fresh filter, the call)
        f"`add`, {len(singles):,} W1 URLs one by one":
            (lambda: BloomFilter.from_capacity(*w1), lambda f: [f.add(u) for u in singles]),
        f"`add_many`, W1: {len(urls):,} URLs":
            (lambda: BloomFilter.from_capacity(*w1), lambda f: f.add_many(urls)),
        f"`add_many`, W2: {len(uints):,} uint64":
            (lambda: BloomFilter.from_capacity(*w2), lambda f: f.add_many(uints)),
        "`add_many`, W2's keys into a 43 Mi-bit filter":
            (lambda: BloomFilter.from_capacity(_LARGE_CAPACITY, 0.001), lambda f: f.add_many(uints)),
    }
    rows = {}
    for name, (make, call) in calls.items():
        ms = _best_ms(lambda: call(make()))
        f = make()
        rows[name] = (ms, acquisitions(f, lambda: call(f)))
    shared = {}
    for name, keys, work in (("add", singles, lambda f, part: [f.add(u) for u in part]),
                             ("add_many", urls, lambda f, part: f.add_many(part))):
        halves = keys[:len(keys) // 2], keys[len(keys) // 2:]

        def two_threads(filters: int) -> None:  # one shared filter, or one filter each
            targets = [BloomFilter.from_capacity(*w1) for _ in range(filters)]
            _in_threads([lambda i=i: work(targets[i % filters], halves[i]) for i in (0, 1)])

        shared[name] = _best_ms(lambda: two_threads(1)) / _best_ms(lambda: two_threads(2))
    return {"lock_ns": lock_ns(), "rows": rows, "threads": shared}


def table(directory: Path) -> list[str]:
    """The lock's cost, as markdown."""
    t = measure(directory)
    lines = ["### What the lock costs (`benchmarks/locking.py`)", "",
             f"One uncontended `with lock:` takes {t['lock_ns']:.0f} ns here (a loop of "
             f"{_LOOPS:,}, minus the empty loop).  The lock's share of a call is its "
             "acquisitions (counted) times that, over the call's time; best of 5.", "",
             "| call | ms | lock acquisitions | lock's share |", "|---|---:|---:|---:|"]
    for name, (ms, count) in t["rows"].items():
        share = count * t["lock_ns"] / (ms * 1e6)
        lines.append(f"| {name} | {ms:.1f} | {count:,} | {share:.3%} |")
    lines += ["", "Two threads, each with half the keys, into one shared W1 filter against each "
              f"into a W1 filter of its own (the same work): `add` {t['threads']['add']:.2f}x, "
              f"`add_many` {t['threads']['add_many']:.2f}x the time.  The difference is what "
              "sharing the filter, and so waiting for its lock, costs.", ""]
    return lines


def main(argv: list[str]) -> None:
    print("\n".join(table(Path(argv[0]))))


if __name__ == "__main__":
    main(sys.argv[1:])
