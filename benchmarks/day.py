"""``make bench-day``: article 1's whole day of clicks, deduplicated through one filter,
on each kernel path, against a C loop measured in the same run.

    python -m benchmarks.day [--filter blocked|plain] [--messages 864000000]
                             [--uuid-fraction 0.002] [--kernels numpy,native]
                             [--out benchmarks/results/day.md]

864,000,000 click messages (10,000 a second for 24 hours, 2% of clicks doubled;
:func:`bloomedu.workloads.day.day_chunks`, seeded, a million at a time) go through a filter
sized for the day at p = 0.001, exactly as a loop of ``in`` then ``add`` would (earlier keys of
a batch count), by :func:`bloomedu.workloads.day.deduplicate`: making the stream, hashing and
inserting overlap, each on a thread of its own.  For each kernel path (numpy, and native where
numba is installed; ``bloomedu.kernels.backend.use``): wall time and ns a key, each stage's
thread CPU time against the wall time (their sum above the wall time is the overlap), minor page
faults in the timed part, peak memory against the filter, duplicates caught, and genuine clicks
dropped against the number the theory predicts.

The C split-block loop (``benchmarks/c/split_block.c``: bloomedu's hash and in-then-add, one
32-byte block a key, prefetch) is compiled with the machine's cc and run on as many keys into a
filter of as many blocks before, between and after the paths; each path's ratio is against the
mean of the two loop runs around it.  The day of the article's 36-character UUID strings is
measured on its first ``--uuid-fraction`` (at least 0.2 %) and extrapolated.  The load average
is printed before and after; first-call compile time and the cached start of the native kernels
come from fresh processes (an empty numba cache, then the same cache).  Each path runs in a
process of its own, so that its peak memory is its own.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from bloomedu import BloomFilter
from bloomedu.core.theory import false_positive_rate
from bloomedu.kernels import backend
from bloomedu.kernels.stages import StageClock
from bloomedu.kernels.threads import WORKERS
from bloomedu.variants.blocked import BlockedBloomFilter, split_block_false_positive_rate
from bloomedu.workloads.day import DAY_MESSAGES, day_chunks, deduplicate, uuid_ids

from . import c_reference

ROOT = Path(__file__).resolve().parent.parent
P = 0.001
DOUBLE_CLICK_RATE = 0.02
SEED = 20_240_611
WARM_CHUNKS = 20  # page faults are reported for the first chunks and for the rest
TARGET_IDS, TARGET_UUIDS, TARGET_MEMORY = 1.5, 3.0, 1.2  # x the C loop's ns a key; x the filter


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def new_filter(kind: str, capacity: int):
    """The filter, its memory touched once (the kernel maps fresh pages on first write,
    slowly on this kind of virtual machine: seconds for 1.7 GiB), so the timed part
    measures the dedup, not the page faults."""
    f = BlockedBloomFilter.from_capacity(capacity, P) if kind == "blocked" \
        else BloomFilter.from_capacity(capacity, P)
    storage = f.words if kind == "blocked" else f.bits.data
    storage.view(np.uint8)[::4096] = 0
    return f


def rate_after(f, n: float) -> float:
    """The filter's expected false-positive rate after n distinct keys."""
    if isinstance(f, BlockedBloomFilter):
        return split_block_false_positive_rate(num_blocks=f.num_blocks, n=n)
    return false_positive_rate(num_bits=f.num_bits, num_hashes=f.num_hashes, n=n)


def expected_false_positives(f, genuine: int, points: int = 4001) -> float:
    """Sum over the n-th genuine click (n = 0 .. genuine-1) of the rate after n keys,
    by Simpson's rule on ``points`` points (the rate is smooth in n)."""
    if genuine < 2:
        return 0.0
    xs = np.linspace(0, genuine - 1, points)
    ys = np.array([rate_after(f, x) for x in xs])
    h = xs[1] - xs[0]
    return float(h / 3 * (ys[0] + ys[-1] + 4 * ys[1:-1:2].sum() + 2 * ys[2:-1:2].sum())) \
        + float(ys[0] + ys[-1]) / 2  # the sum's end terms, beyond the integral



def _reset_peak() -> None:
    """Start the process's peak resident set (VmHWM) again from its present size (Linux)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def _minor_faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _warm_up(kind: str) -> float:
    """Seconds of the path's first calls on a tiny filter (compiling them on the native path,
    or loading them from numba's cache), kept out of the timed part."""
    start = time.perf_counter()
    f = new_filter(kind, 10_000)
    for _ in deduplicate(f, day_chunks(5_000, seed=1, chunk=2_048), piece=1_024):
        pass
    f.add_many_new(uuid_ids(np.arange(10, dtype=np.uint64)))
    return time.perf_counter() - start


def run_ids(f, messages: int) -> dict:
    """Deduplicate the day's 64-bit IDs through the overlapping stages; count what was dropped,
    and time it: wall, each stage's thread CPU, the process's CPU, minor page faults."""
    counts = dict(messages=0, duplicates=0, caught=0, genuine_dropped=0)
    clock = StageClock()
    gc.collect()
    faults, cpu = _minor_faults(), time.process_time()
    start, reported, chunks = time.perf_counter(), 0, 0
    for ids, is_copy, dropped in deduplicate(f, day_chunks(messages, double_click_rate=DOUBLE_CLICK_RATE,
                                                           seed=SEED), clock=clock):
        if (counts["messages"] + ids.size) * 10 // messages > reported:  # every tenth of the day
            reported = (counts["messages"] + ids.size) * 10 // messages
            print(f"      {reported * 10}% after {time.perf_counter() - start:.0f} s",
                  file=sys.stderr, flush=True)
        chunks += 1
        if chunks == WARM_CHUNKS:  # the heap has grown to what the stages hold at once
            counts["faults_warming"] = _minor_faults() - faults
        counts["messages"] += ids.size
        counts["duplicates"] += int(np.count_nonzero(is_copy))
        counts["caught"] += int(np.count_nonzero(dropped & is_copy))
        counts["genuine_dropped"] += int(np.count_nonzero(dropped & ~is_copy))
    counts["seconds"] = time.perf_counter() - start
    counts["process_cpu_s"] = time.process_time() - cpu
    counts["minor_faults"] = _minor_faults() - faults
    counts["chunks"] = chunks
    counts.setdefault("faults_warming", counts["minor_faults"])
    counts["stage_cpu_s"] = dict(clock.cpu_s)
    return counts


def run_uuids(kind: str, messages: int) -> dict:
    """The same stream with the article's UUID strings as IDs, on its first ``messages``,
    through ``add_many_new`` (fresh str objects, as a consumer of the stream receives them)."""
    f = new_filter(kind, DAY_MESSAGES)
    seconds = cpu_s = 0.0
    counts = dict(messages=0, duplicates=0, caught=0, genuine_dropped=0)
    for ids, is_copy in day_chunks(messages, double_click_rate=DOUBLE_CLICK_RATE, seed=SEED):
        keys = uuid_ids(ids)  # not timed: making the strings is the stream's work
        start, cpu = time.perf_counter(), time.process_time()
        dropped = ~f.add_many_new(keys)
        seconds += time.perf_counter() - start
        cpu_s += time.process_time() - cpu
        counts["messages"] += ids.size
        counts["duplicates"] += int(is_copy.sum())
        counts["caught"] += int(np.count_nonzero(dropped & is_copy))
        counts["genuine_dropped"] += int(np.count_nonzero(dropped & ~is_copy))
    counts["seconds"], counts["process_cpu_s"] = seconds, cpu_s
    counts["expected"] = expected_false_positives(f, counts["messages"] - counts["duplicates"])
    return counts


def run_path(path: str, kind: str, messages: int, uuid_messages: int) -> dict:
    """One kernel path: the day of IDs, then the UUID part, under ``backend.use(path)``."""
    with backend.use(path):
        result = dict(path=path, warm_up_s=_warm_up(kind))
        gc.collect()
        _reset_peak()
        base_kib = _status_kib("VmRSS")
        start = time.perf_counter()
        f = new_filter(kind, DAY_MESSAGES)
        result["making_s"] = time.perf_counter() - start
        result["filter_bytes"] = f.nbytes
        result["num_blocks"] = getattr(f, "num_blocks", None)
        print(f"[{path}] {messages:,} 64-bit click IDs through {f!r} "
              f"({f.nbytes / 2**30:.2f} GiB)", file=sys.stderr, flush=True)
        result["ids"] = run_ids(f, messages)
        result["peak_kib"], result["base_kib"] = _status_kib("VmHWM"), base_kib
        ids = result["ids"]
        ids["expected"] = expected_false_positives(f, ids["messages"] - ids["duplicates"])
        del f
        gc.collect()
        print(f"[{path}] {uuid_messages:,} UUID strings", file=sys.stderr, flush=True)
        result["uuids"] = run_uuids(kind, uuid_messages)
        gc.collect()
    return result


_START_SCRIPT = """
import time
start = time.perf_counter()
import numpy as np
from bloomedu.kernels import backend
from bloomedu.variants import BlockedBloomFilter
from bloomedu import BloomFilter
with backend.use("native"):
    f, g = BlockedBloomFilter(1 << 16), BloomFilter(1 << 16, 7)
    for filt in (f, g):
        filt.add_many_new(np.arange(100, dtype=np.uint64)); filt.add_many(["a", "b"])
        filt.contains_many(np.arange(100, dtype=np.uint64)); filt.contains_many(["a", "c"])
print(time.perf_counter() - start)
"""


def native_start() -> dict | None:
    """Seconds from a fresh process's start to its first native calls done (both filters, int
    and str keys, insert and query): with an empty numba cache (compiling), then with that
    cache (loading).  None when the native kernels are not installed."""
    if not backend.native_available():
        return None
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        times = []
        for _ in range(2):
            done = subprocess.run([sys.executable, "-c", _START_SCRIPT], cwd=ROOT, env=env,
                                  capture_output=True, text=True, check=True)
            times.append(float(done.stdout.split()[-1]))
    return dict(compile_s=times[0], cached_s=times[1])


def path_in_own_process(path: str, args) -> dict:
    """:func:`run_path` in a fresh process, so that each path's peak memory and first calls
    are its own (the other path's heap, or numba, not counted in)."""
    command = [sys.executable, "-m", "benchmarks.day", "--one-path", path, "--filter", args.filter,
               "--messages", str(args.messages), "--uuid-fraction", str(args.uuid_fraction)]
    done = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def c_loop(executable: Path | None, num_blocks: int, messages: int) -> dict | None:
    if executable is None:
        return None
    print(f"[C] {messages:,} keys through the C split-block loop", file=sys.stderr, flush=True)
    return c_reference.time_reference(executable, num_blocks, messages, SEED)


def _loads(before: tuple, after: tuple) -> str:
    return (f"{' '.join(f'{x:.2f}' for x in before)} before, "
            f"{' '.join(f'{x:.2f}' for x in after)} after (1, 5 and 15 minutes)")


def _verdict(value: float | None, limit: float) -> str:
    if value is None:
        return "no ratio (no C compiler)"
    return f"{value:.2f}x: {'PASS' if value <= limit else 'MISS'}"


def report(run: dict) -> str:
    """The markdown of a run: what was measured, how, and each target's PASS or MISS.

    ``run``: command, when, cores, workers, loads (before, after), filter_name, messages,
    uuid_messages, compiler (None: none found), c_runs (the loop's results, before, between
    and after the paths), paths (one :func:`run_path` result each), start (:func:`native_start`).
    """
    paths, c_runs = run["paths"], run["c_runs"]
    whole = run["messages"] == DAY_MESSAGES
    f_bytes = paths[0]["filter_bytes"]
    lines = [
        "## A day of clicks: `make bench-day`", "",
        f"- measured {run['when']} UTC with `{run['command']}`; {run['cores']} cores, "
        f"{run['workers']} worker thread(s); load average {_loads(*run['loads'])}",
        f"- stream: {run['messages']:,} messages ({'the whole day' if whole else 'part of the day'}"
        f", 10,000 a second), {DOUBLE_CLICK_RATE:.0%} of clicks doubled (copy 0.05 to 1 s later), "
        f"seed {SEED}; UUID strings on the first {run['uuid_messages']:,} "
        f"({run['uuid_messages'] / DAY_MESSAGES:.2%} of the day), extrapolated",
        f"- filter: `{run['filter_name']}.from_capacity({DAY_MESSAGES:,}, {P})`, {f_bytes:,} bytes "
        f"({f_bytes / 2**30:.2f} GiB), first touched before the timed part; "
        "`bloomedu.workloads.day.deduplicate`: stream, hash and insert on threads of their own "
        "(exactly `add_many_new`, a loop of `in` then `add`)",
    ]
    if run["compiler"] is None:
        lines.append("- C split-block loop: **no C compiler on this machine** (cc, gcc, clang): "
                     "no ratio to it is reported (Debian: `apt-get install gcc`, or `make cc`)")
    else:
        lines.append(f"- C split-block loop: `benchmarks/c/split_block.c`, `{run['compiler']} "
                     f"{' '.join(c_reference.FLAGS)}`, {run['messages']:,} keys into the same "
                     "number of blocks, run before, between and after the paths: "
                     + ", ".join(f"{c['ns_per_key']:.1f}" for c in c_runs) + " ns a key")
    start = run.get("start")
    if start:
        lines.append(f"- native kernels in a fresh process (import and first calls of both "
                     f"filters): {start['compile_s']:.1f} s compiling (empty numba cache), "
                     f"{start['cached_s']:.2f} s from the cache")
    elif not any(p["path"] == "native" for p in paths):
        lines.append(f"- native kernels: not installed here ({backend.unavailable_reason()})")
    lines += ["", "| measure | " + " | ".join(p["path"] for p in paths) + " |",
              "|---|" + "---:|" * len(paths)]

    def row(name, cell):
        lines.append(f"| {name} | " + " | ".join(cell(p) for p in paths) + " |")

    def c_mean(i):
        if not c_runs:
            return None
        return (c_runs[i]["ns_per_key"] + c_runs[i + 1]["ns_per_key"]) / 2

    ratios = []
    for i, p in enumerate(paths):
        ids, uuids = p["ids"], p["uuids"]
        ns, uuid_ns = ids["seconds"] * 1e9 / ids["messages"], uuids["seconds"] * 1e9 / uuids["messages"]
        c_ns = c_mean(i)
        ratios.append((ns / c_ns if c_ns else None, uuid_ns / c_ns if c_ns else None,
                       p["peak_kib"] * 1024 / f_bytes))
        p["_ns"], p["_uuid_ns"], p["_c_ns"] = ns, uuid_ns, c_ns
    row("64-bit IDs: wall time", lambda p: f"{p['ids']['seconds']:.1f} s ({p['_ns']:.1f} ns a key)")
    row("C loop around it (mean of the runs before and after)",
        lambda p: "-" if p["_c_ns"] is None else f"{p['_c_ns']:.1f} ns a key")
    row("thread CPU: stream / hash / insert", lambda p: " / ".join(
        f"{p['ids']['stage_cpu_s'].get(name, 0.0):.1f}" for name in ("stream", "hash", "insert")) + " s")
    row("stages' CPU / wall (above 1: they overlapped)", lambda p: f"{sum(p['ids']['stage_cpu_s'].values()) / p['ids']['seconds']:.2f}")
    row("process CPU / wall", lambda p: f"{p['ids']['process_cpu_s'] / p['ids']['seconds']:.2f}")
    row(f"minor page faults in the timed part: first {WARM_CHUNKS} chunks; the rest (a chunk)",
        lambda p: f"{p['ids']['faults_warming']:,}; "
        f"{p['ids']['minor_faults'] - p['ids']['faults_warming']:,} "
        f"({(p['ids']['minor_faults'] - p['ids']['faults_warming']) / max(1, p['ids']['chunks'] - WARM_CHUNKS):,.1f})")
    row("first calls (compile or cache load), outside the timed part", lambda p: f"{p['warm_up_s']:.2f} s")
    row("allocating and first touching the filter", lambda p: f"{p['making_s']:.1f} s")
    row("duplicates in the stream / caught", lambda p: f"{p['ids']['duplicates']:,} / {p['ids']['caught']:,}")
    row("genuine clicks dropped: measured, predicted", lambda p: (
        f"{p['ids']['genuine_dropped']:,}, {p['ids']['expected']:,.0f} ± "
        f"{math.sqrt(p['ids']['expected']):,.0f}"))
    row("peak memory (whole process)", lambda p: f"{p['peak_kib'] / 2**20:.2f} GiB = "
        f"{p['peak_kib'] * 1024 / f_bytes:.2f}x the filter (before the filter: "
        f"{p['base_kib'] / 2**10:.0f} MiB)")
    row("UUID strings: wall time", lambda p: (
        f"{p['uuids']['seconds']:.1f} s ({p['_uuid_ns']:.1f} ns a key); day: "
        f"{p['_uuid_ns'] * DAY_MESSAGES / 1e9:,.0f} s"))
    row("UUID strings: process CPU / wall", lambda p: f"{p['uuids']['process_cpu_s'] / p['uuids']['seconds']:.2f}")
    row("UUID strings: duplicates / caught / genuine dropped", lambda p: (
        f"{p['uuids']['duplicates']:,} / {p['uuids']['caught']:,} / {p['uuids']['genuine_dropped']:,}"))
    lines += ["", "| target | " + " | ".join(p["path"] for p in paths) + " |",
              "|---|" + "---|" * len(paths)]
    lines.append(f"| day of 64-bit IDs at most {TARGET_IDS}x the C loop's ns a key | "
                 + " | ".join(_verdict(r[0], TARGET_IDS) for r in ratios) + " |")
    lines.append(f"| day of UUID strings at most {TARGET_UUIDS}x the C loop's ns a key | "
                 + " | ".join(_verdict(r[1], TARGET_UUIDS) for r in ratios) + " |")
    lines.append(f"| peak memory under {TARGET_MEMORY}x the filter | "
                 + " | ".join(f"{r[2]:.2f}x: {'PASS' if r[2] < TARGET_MEMORY else 'MISS'}"
                              for r in ratios) + " |")
    lines += ["", "Thread CPU: `time.thread_time` of each stage's thread (the insert stage's "
              "calls on the main thread); their sum above the wall time means stages ran at the "
              "same time on the two cores.  Predicted false positives: the sum over the n-th "
              "genuine click of the filter's rate after n keys, by Simpson's rule; the spread is "
              "its square root.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.day",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--filter", choices=["blocked", "plain"], default="blocked")
    parser.add_argument("--messages", type=int, default=DAY_MESSAGES)
    parser.add_argument("--uuid-fraction", type=float, default=0.002)
    parser.add_argument("--kernels", default=None,
                        help="paths to run, comma-separated (default: numpy, and native if installed)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "day.md")
    parser.add_argument("--one-path", choices=["numpy", "native"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    uuid_messages = max(1, round(args.messages * args.uuid_fraction))
    if args.one_path:  # a path in a process of its own: its result as one JSON line
        print(json.dumps(run_path(args.one_path, args.filter, args.messages, uuid_messages)))
        return 0
    if not 0 < args.uuid_fraction <= 1:
        parser.error(f"--uuid-fraction must be in (0, 1], not {args.uuid_fraction}")
    paths = (args.kernels.split(",") if args.kernels else
             ["numpy"] + (["native"] if backend.native_available() else []))
    for path in paths:
        if path not in ("numpy", "native"):
            parser.error(f"--kernels takes numpy and native, not {path!r}")
    loads_before = os.getloadavg()
    start = native_start() if "native" in paths else None
    with tempfile.TemporaryDirectory() as folder:
        executable = c_reference.compile_reference(Path(folder))
        if executable is None:
            print("No C compiler (cc, gcc, clang) on this machine: no ratio to the C loop.",
                  file=sys.stderr, flush=True)
        num_blocks = BlockedBloomFilter.from_capacity(DAY_MESSAGES, P).num_blocks \
            if args.filter == "blocked" else None
        c_runs, results = [], []
        if num_blocks is None:  # a plain filter: the C loop is the blocked one, of its size
            num_blocks = -(-BloomFilter.from_capacity(DAY_MESSAGES, P).nbytes // 32)
        c_runs.append(c_loop(executable, num_blocks, args.messages))
        for path in paths:
            results.append(path_in_own_process(path, args))
            c_runs.append(c_loop(executable, num_blocks, args.messages))
    whole = args.messages == DAY_MESSAGES
    command = "make bench-day" if whole and args.filter == "blocked" and not args.kernels \
        and args.uuid_fraction == 0.002 else "python -m benchmarks.day " + " ".join(sys.argv[1:] if argv is None else argv)
    text = report(dict(
        command=command, when=f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M}",
        cores=os.cpu_count(), workers=WORKERS, loads=(loads_before, os.getloadavg()),
        filter_name="BlockedBloomFilter" if args.filter == "blocked" else "BloomFilter",
        messages=args.messages, uuid_messages=uuid_messages,
        compiler=c_reference.find_compiler() if executable else None,
        c_runs=[c for c in c_runs if c is not None], paths=results, start=start))
    print(text)
    if whole:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
