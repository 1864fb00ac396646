"""W5: the filters after Bloom against their peers, on W2's keys (part of ``make bench``).

    python -m benchmarks.after_bloom [--rounds 3] [--out benchmarks/results/latest.md]
    python -m benchmarks.after_bloom one LIBRARY KEYS_DIRECTORY   # one run, one JSON line
    python -m benchmarks.after_bloom figures    # the sizes, rates and loads the issue asks for

The first form runs W5 alone and replaces its section of the results file (``make bench``
runs it with the rest and writes the whole file).

The same 1,000,000 uint64 keys (W2's, :mod:`benchmarks.workloads`) build each filter, and
W2's 1,000,000 absent keys query it:

- bloomedu's ``XorFilter`` and ``BinaryFuseFilter`` (3- and 4-wise), 8-bit fingerprints,
  against PyPI's ``pyfusefilter`` (Graf and Lemire's C code), its ``xor8`` and
  ``binary_fuse8`` called through its cffi module on the same uint64 keys (:class:`PyFuseFilter`);
- bloomedu's ``CuckooFilter`` (8-bit fingerprints, buckets of 4, sized for 1,000,000 keys)
  against RedisBloom's ``CF.RESERVE cf 1000000 BUCKETSIZE 4`` on a Redis of its own
  (items sent by ``CF.INSERT`` and queried by ``CF.MEXISTS``, 10,000 a command, pipelined):
  the server's times include the loopback round trips and redis-py.

Each run is a fresh process; :func:`schedule` rotates the libraries over the rounds and
:func:`tables` compares the best times, as ratios of keys/s in the same run.  Reported:
bits a key (the filter's bytes, by its own count, times 8 over n), the measured rate against
2**-8 (for a cuckoo filter at load a, 1 - (1 - 1/255)**(2 b a) for each of its sub-filters),
false negatives among all 1,000,000 keys.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from .run_one import _reset_peak, _status_kib, _timed
from .workloads import read_keys, write_keys

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- W5: benchmarks/after_bloom.py -->", "<!-- end of W5 -->"

CF_BATCH = 10_000


class BloomeduStatic:
    """bloomedu's static filters: built from the uint64 array, queried with ``contains_many``."""

    def __init__(self, name: str, kind: str, arity: int = 3):
        self.name, self.kind, self.arity = name, kind, arity
        self.peer = "pyfusefilter-" + ("xor8" if kind == "xor" else "fuse8")

    def prepare(self, keys):
        return keys

    def build(self, keys):
        from bloomedu import BinaryFuseFilter, XorFilter
        return XorFilter(keys, 8) if self.kind == "xor" else BinaryFuseFilter(keys, 8, self.arity)

    def count_found(self, f, keys) -> int:
        return int(np.count_nonzero(f.contains_many(keys)))

    def storage_bytes(self, f) -> int:
        return f.nbytes

    def close(self, f) -> None:
        pass


class Keys:
    """The keys as a uint64 array (for a C call) and as a list of ints (for a loop)."""

    def __init__(self, keys: np.ndarray):
        self.array, self.list = np.ascontiguousarray(keys, dtype=np.uint64), keys.tolist()

    def __len__(self) -> int:
        return len(self.list)


class PyFuseFilter:
    """pyfusefilter's C filters through its cffi module: built from the uint64 keys in one C
    call, queried by one C call a key.  (Its Python classes hash ``str(key)`` with xxhash,
    which xxhash 4 refuses; the C library takes 64-bit keys and mixes them itself.)"""

    def __init__(self, name: str, kind: str):
        self.name, self.kind, self.peer = name, kind, None  # kind: "xor8" or "binary_fuse8"

    def prepare(self, keys):
        return Keys(keys)

    def _call(self, what: str):
        from pyfusefilter._xorfilter import lib
        return getattr(lib, f"{self.kind}_{what}")

    def build(self, keys):
        from pyfusefilter._xorfilter import ffi
        f = ffi.new(f"{self.kind}_t *")
        if not self._call("allocate")(len(keys), f):
            raise MemoryError("pyfusefilter could not allocate its filter")
        populate = self._call("buffered_populate" if self.kind == "xor8" else "populate")
        if not populate(ffi.from_buffer("uint64_t[]", keys.array), len(keys), f):
            raise RuntimeError("pyfusefilter could not build its filter")
        return f

    def count_found(self, f, keys) -> int:
        contain = self._call("contain")
        return sum(contain(key, f) for key in keys.list)

    def storage_bytes(self, f) -> int:
        return self._call("size_in_bytes")(f)

    def close(self, f) -> None:
        self._call("free")(f)


class BloomeduCuckoo:
    name, peer = "bloomedu-cuckoo", "redisbloom-cf"

    def prepare(self, keys):
        return keys

    def build(self, keys):
        from bloomedu import CuckooFilter
        f = CuckooFilter(keys.size, 8, 4)
        f.add_many(keys)
        return f

    def count_found(self, f, keys) -> int:
        return int(np.count_nonzero(f.contains_many(keys)))

    def storage_bytes(self, f) -> int:
        return f.nbytes

    def load(self, f) -> float:
        return f.load_factor

    def close(self, f) -> None:
        pass


class RedisBloomCuckoo:
    """RedisBloom's CF on a server of its own (started before the timer)."""

    name, peer = "redisbloom-cf", None

    def prepare(self, keys):  # called for the inserted and the absent keys: one server for both
        if not hasattr(self, "server"):
            from bloomedu.services.redis_server import RedisServer
            self.server = RedisServer(module=True)
            self.client = self.server.client()
        return keys.tolist()

    def _batches(self, command, keys):
        pipe = self.client.pipeline(transaction=False)
        for start in range(0, len(keys), CF_BATCH):
            pipe.execute_command(*command, *keys[start:start + CF_BATCH])
        return pipe.execute()

    def build(self, keys):
        self.client.execute_command("CF.RESERVE", "cf", len(keys), "BUCKETSIZE", 4)
        self._batches(("CF.INSERT", "cf", "ITEMS"), keys)
        return "cf"

    def count_found(self, f, keys) -> int:
        return sum(sum(map(int, reply)) for reply in self._batches(("CF.MEXISTS", "cf"), keys))

    def info(self) -> dict:
        reply = self.client.execute_command("CF.INFO", "cf")
        pairs = reply.items() if isinstance(reply, dict) else zip(reply[::2], reply[1::2])
        return {name.decode() if isinstance(name, bytes) else name: value for name, value in pairs}

    def storage_bytes(self, f) -> int:
        return self.info()["Size"]

    def load(self, f) -> float:
        info = self.info()
        slots = info["Size"] - 40 - 16 * info["Number of filters"]
        return info["Number of items inserted"] / slots

    def filters(self, f) -> int:
        return self.info()["Number of filters"]

    def close(self, f) -> None:
        self.client.close()
        self.server.close()
        del self.client, self.server


LIBRARIES = {lib.name: lib for lib in (
    BloomeduStatic("bloomedu-xor", "xor"), PyFuseFilter("pyfusefilter-xor8", "xor8"),
    BloomeduStatic("bloomedu-fuse", "fuse"), PyFuseFilter("pyfusefilter-fuse8", "binary_fuse8"),
    BloomeduStatic("bloomedu-fuse4", "fuse", 4), BloomeduCuckoo(), RedisBloomCuckoo())}


def run(lib, directory: Path) -> dict:
    inserted, absent = (lib.prepare(keys) for keys in read_keys(directory, "W2"))
    baseline = _reset_peak()
    build_s, f = _timed(lambda: lib.build(inserted))
    query_s, false_positives = _timed(lambda: lib.count_found(f, absent))
    peak_kib = _status_kib("VmHWM") - baseline
    result = {"build_s": build_s, "query_s": query_s, "keys": len(inserted), "queried": len(absent),
              "false_positive_rate": false_positives / len(absent),
              "false_negatives": len(inserted) - lib.count_found(f, inserted),
              "storage_bytes": lib.storage_bytes(f), "peak_bytes": peak_kib * 1024}
    if hasattr(lib, "load"):  # a query looks at 2b slots in each sub-filter
        result["load"] = lib.load(f)
        result["filters"] = lib.filters(f) if hasattr(lib, "filters") else 1
    lib.close(f)
    return result


def schedule(rounds: int) -> list[str]:
    """Library names: every round, all of them, rotated (A B C, B C A, ...)."""
    names = list(LIBRARIES)
    return [name for r in range(rounds) for name in names[r % len(names):] + names[:r % len(names)]]


def best_of(runs: list[dict]) -> dict:
    best = dict(runs[0], runs=len(runs))
    for key in ("build_s", "query_s"):
        best[key] = min(r[key] for r in runs)
    best["false_negatives"] = max(r["false_negatives"] for r in runs)
    return best


def _rate(keys: int, seconds: float) -> str:
    return f"{keys / seconds / 1e6:,.2f} M"


def tables(results: dict[str, dict]) -> list[str]:
    """The W5 tables: every library's figures, then bloomedu's ratios against its peer."""
    lines = ["### W5: after Bloom, 1,000,000 uint64 keys (W2's) built, 1,000,000 absent queried", "",
             "| library | runs | build keys/s | query keys/s | bits a key | false-positive rate "
             "| expected rate | false negatives | peak memory MiB |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in results.items():
        if "load" in r:  # 2b slots a sub-filter at load a, each a match with probability 1/255
            expected = -math.expm1(2 * 4 * r["load"] * r.get("filters", 1) * math.log1p(-1 / 255))
        else:
            expected = 2.0 ** -8
        sigma = math.sqrt(expected * (1 - expected) / r["queried"])
        lines.append(
            f"| {name} | {r['runs']} | {_rate(r['keys'], r['build_s'])} | "
            f"{_rate(r['queried'], r['query_s'])} | {8 * r['storage_bytes'] / r['keys']:.3f} | "
            f"{r['false_positive_rate']:.5f} | {expected:.5f} "
            f"({(r['false_positive_rate'] - expected) / sigma:+.1f} sigma)"
            f" | {r['false_negatives']} of {r['keys']:,} | {r['peak_bytes'] / 2 ** 20:.1f} |")
    lines += ["", "| bloomedu against | build keys/s ratio | query keys/s ratio "
              "| bits a key, ours / theirs |",
              "|---|---:|---:|---:|"]
    for name, r in results.items():
        peer = getattr(LIBRARIES[name], "peer", None)
        if peer and peer in results:
            theirs = results[peer]
            lines.append(f"| {name} vs {peer} | {theirs['build_s'] / r['build_s']:.2f}x | "
                         f"{theirs['query_s'] / r['query_s']:.2f}x | "
                         f"{r['storage_bytes'] / theirs['storage_bytes']:.3f} |")
    return lines + [""]


def run_all(rounds: int, directory: str, progress=None) -> dict[str, dict]:
    """Every library of W5, each run in a fresh process, best of the rounds."""
    runs: dict[str, list[dict]] = {}
    pairs = schedule(rounds)
    for i, name in enumerate(pairs, 1):
        if progress:
            progress(f"[W5 {i}/{len(pairs)}] {name}")
        command = [sys.executable, "-m", "benchmarks.after_bloom", "one", name, directory]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
        if done.returncode:
            raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr}")
        runs.setdefault(name, []).append(json.loads(done.stdout.splitlines()[-1]))
    return {name: best_of(runs[name]) for name in LIBRARIES if name in runs}


def section(results: dict[str, dict], rounds: int, when: str) -> list[str]:
    """W5's part of the results file, between its markers."""
    from importlib.metadata import version
    return [BEGIN, *tables(results),
            f"W5 measured {when} ({rounds} rounds, libraries rotated, best build and best query "
            f"time of each); pyfusefilter {version('pyfusefilter')}, RedisBloom 2.8.2 in "
            "redis-server. Ratios are bloomedu's keys/s over the peer's.", END]


def replace_section(text: str, lines: list[str]) -> str:
    """``text`` with its W5 section replaced by ``lines`` (added at the end if it has none).

    >>> replace_section(f"a\\n{BEGIN}\\nold\\n{END}\\nb", [BEGIN, "new", END]).split("\\n")[1:4]
    ['<!-- W5: benchmarks/after_bloom.py -->', 'new', '<!-- end of W5 -->']
    """
    new = "\n".join(lines)
    if BEGIN in text and END in text:
        return text[:text.index(BEGIN)] + new + text[text.index(END) + len(END):]
    return text.rstrip("\n") + "\n\n" + new + "\n"


def figures(count: int = 1_000_000, seed: int = 20_240_611) -> list[str]:
    """On ``count`` random keys: bits a key and rate of each static filter against 2**-f (in
    sigma); a cuckoo filter's rate at its load against 1 - (1 - 1/(2**f - 1))**(2ba) and the
    bound 2b/2**f; the load at the first failed insert for b = 1, 2, 4, 8.  Not timed."""
    from bloomedu import BinaryFuseFilter, CuckooFilter, XorFilter
    from bloomedu.variants.space import cuckoo_false_positive_rate, cuckoo_rate_bound

    from .workloads import uint64_keys
    keys = uint64_keys(2 * count, seed)
    inserted, absent = keys[:count], keys[count:]
    lines = [f"Static filters on {count:,} random uint64 keys ({count:,} absent keys queried):", "",
             "| filter | f | bits a key | / f | rate | 2^-f | sigma | false negatives |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, make in [("XorFilter", lambda bits: XorFilter(inserted, bits)),
                       ("BinaryFuseFilter 3-wise", lambda bits: BinaryFuseFilter(inserted, bits)),
                       ("BinaryFuseFilter 4-wise", lambda bits: BinaryFuseFilter(inserted, bits, 4))]:
        for bits in (8, 16):
            f = make(bits)
            rate, p = float(np.mean(f.contains_many(absent))), 2.0 ** -bits
            sigma = (rate - p) / math.sqrt(p * (1 - p) / count)
            lines.append(f"| {name} | {bits} | {f.bits_per_key:.4f} | {f.bits_per_key / bits:.4f} | "
                         f"{rate:.6f} | {p:.6f} | {sigma:+.2f} | "
                         f"{count - int(f.contains_many(inserted).sum())} |")
    lines += ["", f"Cuckoo filters sized for {count:,} keys, filled with them:", "",
              "| f | b | load | rate | 1-(1-1/(2^f-1))^(2ba) | sigma | 2b/2^f | false negatives |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for bits, bucket_size in [(8, 2), (8, 4), (12, 4), (16, 4), (12, 8)]:
        f = CuckooFilter(count, bits, bucket_size)
        f.add_many(inserted)
        rate = float(np.mean(f.contains_many(absent)))
        expected = cuckoo_false_positive_rate(bits, bucket_size, f.load_factor)
        sigma = (rate - expected) / math.sqrt(expected * (1 - expected) / count)
        lines.append(f"| {bits} | {bucket_size} | {f.load_factor:.4f} | {rate:.6f} | {expected:.6f} | "
                     f"{sigma:+.2f} | {cuckoo_rate_bound(bits, bucket_size):.6f} | "
                     f"{count - int(f.contains_many(inserted).sum())} |")
    lines += ["", "Load at the first failed insert, f = 12, a table sized for "
              f"{count:,} keys (the paper: about 50%, 84%, 95%, 98%):", "",
              "| b | slots | keys added | load |", "|---:|---:|---:|---:|"]
    for bucket_size in (1, 2, 4, 8):
        f = CuckooFilter(count, 12, bucket_size)
        added = f.add_until_full(uint64_keys(f.num_slots + 1, seed + bucket_size))
        lines.append(f"| {bucket_size} | {f.num_slots:,} | {added:,} | {f.load_factor:.4f} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["figures"]:
        print("\n".join(figures()))
        return 0
    if argv[:1] == ["one"]:
        _, name, directory = argv
        print(json.dumps({"library": name, **run(LIBRARIES[name], Path(directory))}))
        return 0
    parser = argparse.ArgumentParser(prog="python -m benchmarks.after_bloom",
                                     description="W5 alone: replace its section of the results")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "latest.md")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as directory:
        write_keys(Path(directory))
        results = run_all(args.rounds, directory, lambda line: print(line, file=sys.stderr, flush=True))
    lines = section(results, args.rounds, f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC with "
                    f"`python -m benchmarks.after_bloom --rounds {args.rounds}`")
    print("\n".join(lines))
    old = args.out.read_text() if args.out.exists() else ""
    args.out.write_text(replace_section(old, lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
