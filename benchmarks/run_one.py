"""One run in a fresh process; prints one JSON line.

    python -m benchmarks.run_one W1|W2|W3|W4|W4-day LIBRARY KEYS_DIRECTORY

Peak memory is the process's peak resident set (``VmHWM``) above its size
once the keys are loaded, the peak being reset through
``/proc/self/clear_refs`` just before the filter is built (Linux).  It counts
every allocation, numpy's and Rust's alike, which tracemalloc would not.
"""

from __future__ import annotations

import gc
import json
import sys
import time
from pathlib import Path

import numpy as np

from .libraries import ALL_LIBRARIES
from .workloads import (LARGE_WORKLOADS, SEED, SWEEP_QUERIES, WORKLOADS, read_keys,
                        read_large_keys, sweep_grid, uint64_keys)

FALSE_NEGATIVE_SAMPLE = 100_000  # for the one-round library (and W4): checking all is slow


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def _reset_peak() -> int:
    """Reset the peak resident set to the current one; return the current one in KiB."""
    gc.collect()
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:  # not allowed here: the peak then includes loading the keys
        pass
    return _status_kib("VmRSS")


def _timed(call) -> tuple[float, object]:
    gc.disable()
    try:
        start = time.perf_counter()
        result = call()
        return time.perf_counter() - start, result
    finally:
        gc.enable()


def _warm_up(lib, like) -> None:
    """bloomedu's first calls, out of the timed part (the native kernels load or compile), on
    ten keys of the same kind as ``like`` made for it: the timed str objects stay untouched."""
    if hasattr(lib, "warm_up"):
        if isinstance(like, np.ndarray):
            lib.warm_up(np.arange(10, dtype=like.dtype))
        else:
            lib.warm_up([f"https://warm.up/{i}" for i in range(10)])


def run_workload(workload: str, lib, directory: Path) -> dict:
    capacity, p, _ = WORKLOADS[workload]
    inserted, absent = (lib.prepare(keys) for keys in read_keys(directory, workload))
    _warm_up(lib, absent)
    baseline = _reset_peak()
    f = lib.new(capacity, p)
    insert_s, _ = _timed(lambda: lib.insert(f, inserted))
    query_s, false_positives = _timed(lambda: lib.count_found(f, absent))
    peak_kib = _status_kib("VmHWM") - baseline
    checked = inserted if lib.rounds_factor else inserted[:FALSE_NEGATIVE_SAMPLE]
    return {
        "insert_s": insert_s, "query_s": query_s,
        "inserted": len(inserted), "queried": len(absent),
        "false_positive_rate": false_positives / len(absent),
        "false_negatives": len(checked) - lib.count_found(f, checked),
        "checked": len(checked),
        "storage_bytes": lib.storage_bytes(f), "peak_bytes": peak_kib * 1024,
    }


def run_large(workload: str, lib, directory: Path) -> dict:
    """W4: uint64 keys then UUID strings into one filter far larger than the cache, then
    absent uint64 keys queried; the insert time is both parts', each also reported."""
    capacity, p, _ = LARGE_WORKLOADS[workload]
    ints, strings, absent = (lib.prepare(keys) for keys in read_large_keys(directory))
    _warm_up(lib, ints)
    _warm_up(lib, strings)
    baseline = _reset_peak()
    f = lib.new(capacity, p)
    int_s, _ = _timed(lambda: lib.insert(f, ints))
    str_s, _ = _timed(lambda: lib.insert(f, strings))
    query_s, false_positives = _timed(lambda: lib.count_found(f, absent))
    peak_kib = _status_kib("VmHWM") - baseline
    checked = ints[:FALSE_NEGATIVE_SAMPLE], strings[:FALSE_NEGATIVE_SAMPLE]
    return {
        "insert_s": int_s + str_s, "insert_int_s": int_s, "insert_str_s": str_s,
        "query_s": query_s, "inserted": len(ints) + len(strings), "inserted_ints": len(ints),
        "inserted_strings": len(strings), "queried": len(absent),
        "false_positive_rate": false_positives / len(absent),
        "false_negatives": sum(len(keys) - lib.count_found(f, keys) for keys in checked),
        "checked": sum(map(len, checked)),
        "storage_bytes": lib.storage_bytes(f), "peak_bytes": peak_kib * 1024,
    }


def run_sweep(lib) -> dict:
    grid = sweep_grid()
    max_n = max(n for _, _, n in grid)
    pool = uint64_keys(max_n + SWEEP_QUERIES, SEED + 1)
    keys, queries = lib.prepare(pool[:max_n]), lib.prepare(pool[max_n:])

    def sweep():
        hits = []
        for m, k, n in grid:
            f = lib.sweep_filter(m, k)
            lib.insert(f, keys[:n])
            hits.append(lib.count_found(f, queries))
        return hits

    _warm_up(lib, queries)
    baseline = _reset_peak()
    sweep_s, hits = _timed(sweep)
    peak_kib = _status_kib("VmHWM") - baseline
    false_negatives = 0
    for m, k, n in grid:  # not timed: every inserted key must be found
        f = lib.sweep_filter(m, k)
        lib.insert(f, keys[:n])
        false_negatives += n - lib.count_found(f, keys[:n])
    return {
        "sweep_s": sweep_s, "filters": len(grid), "queries": len(grid) * SWEEP_QUERIES,
        "false_positive_rate": sum(hits) / (len(grid) * SWEEP_QUERIES),
        "false_negatives": false_negatives, "checked": sum(n for _, _, n in grid),
        "storage_bytes": None, "peak_bytes": peak_kib * 1024,
    }


def main(argv: list[str]) -> None:
    from bloomedu.kernels import backend

    workload, name, directory = argv
    lib = ALL_LIBRARIES[name]
    with backend.use(getattr(lib, "kernels", "numpy")) as kernels:
        if workload == "W3":
            result = run_sweep(lib)
        elif workload in LARGE_WORKLOADS:
            result = run_large(workload, lib, Path(directory))
        else:
            result = run_workload(workload, lib, Path(directory))
    print(json.dumps({"workload": workload, "library": name, "kernels": kernels, **result}))


if __name__ == "__main__":
    main(sys.argv[1:])
