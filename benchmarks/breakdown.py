"""Where a bloomedu bulk call spends its time, step by step (warm, in one process).

    python -m benchmarks.breakdown KEYS_DIRECTORY

Times, best of 5: hashing the keys alone (``hashed_batches``), hashing and
computing every position (``_chunk_positions``), the whole ``add_many``
(what remains is setting the bits), and the whole ``contains_many``.
``KEYS_DIRECTORY``: where ``benchmarks.workloads.write_keys`` wrote the keys.
"""

from __future__ import annotations

import gc
import sys
import time
from pathlib import Path

from bloomedu import BloomFilter
from bloomedu.core.filter import bit_positions
from bloomedu.core.hashing import hashed_batches

from .workloads import WORKLOADS, read_keys


def _best_ms(call, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        gc.disable()
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
        gc.enable()
    return min(times) * 1e3


def breakdown(workload: str, directory: Path) -> dict:
    capacity, p, _ = WORKLOADS[workload]
    inserted, absent = read_keys(directory, workload)
    f = BloomFilter.from_capacity(capacity, p)
    k, m = f.num_hashes, f.num_bits
    hashing = _best_ms(lambda: [None for _ in hashed_batches(inserted, k)])
    positions = _best_ms(lambda: [[bit_positions(h1, h2, i, m) for i in range(k)]
                                  for h1, h2 in hashed_batches(inserted, k)])
    insert = _best_ms(lambda: BloomFilter.from_capacity(capacity, p).add_many(inserted))
    f.add_many(inserted)
    query = _best_ms(lambda: f.contains_many(absent))
    return {"hashing": hashing, "positions": positions - hashing,
            "setting bits": insert - positions, "insert": insert, "query": query}


def table(directory: Path) -> list[str]:
    """The breakdown of W1 and W2 as a markdown table."""
    lines = ["### Where bloomedu's time goes, step by step", "",
             "One warm process, best of 5 of each step: hashing alone, computing the positions "
             "(after hashing), setting the bits (the rest of `add_many`).", "",
             "| workload | hashing ms | positions ms | setting bits ms | add_many ms "
             "| contains_many ms |", "|---|---:|---:|---:|---:|---:|"]
    for workload in WORKLOADS:
        t = breakdown(workload, directory)
        lines.append(f"| {workload} | {t['hashing']:.1f} | {t['positions']:.1f} | "
                     f"{t['setting bits']:.1f} | {t['insert']:.1f} | {t['query']:.1f} |")
    return lines + [""]


def main(argv: list[str]) -> None:
    print("\n".join(table(Path(argv[0]))))


if __name__ == "__main__":
    main(sys.argv[1:])
