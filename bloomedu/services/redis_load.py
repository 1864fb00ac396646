"""Load on a real server: keys per second and the server's CPU per key, for one client or several.

:meth:`RedisBackedFilter.add_many
<bloomedu.services.redis_filter.RedisBackedFilter.add_many>` against RedisBloom's
``BF.MADD`` at the same k, measured not in client time, which depends on the client, but
in what the server spends, since the server is what all consumers share.  :func:`run_load` starts
``clients`` processes, each with its own share of the keys and its own connection; they
start together (a barrier), and the parent measures the wall time until the last is done
and the server's CPU time over it (``INFO cpu``: ``used_cpu_user + used_cpu_sys``, the
server process's own ``getrusage``).

The paths: ``"BF.MADD"`` (1,000 keys a command, the commands pipelined), ``"add_many"``
(bloomedu's filter in plain Redis strings), and their lookups ``"BF.MEXISTS"`` and
``"contains_many"``.

Used by lesson 18 (its throughput plot) and ``make bench`` (``benchmarks/redis_bench.py``);
tested in ``tests/test_redis_filter.py``.
"""

from __future__ import annotations

import multiprocessing
import time
from dataclasses import dataclass

__all__ = ["LoadResult", "run_load", "server_cpu_s", "PATHS"]

PATHS = ("BF.MADD", "add_many", "BF.MEXISTS", "contains_many")
_BATCH = 1000


def server_cpu_s(client) -> float:
    """The server's CPU seconds so far (user + system), from ``INFO cpu``.

    >>> from bloomedu.services.redis_server import RedisServer
    >>> with RedisServer() as server:
    ...     server_cpu_s(server.client()) > 0
    True
    """
    info = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


@dataclass(frozen=True)
class LoadResult:
    """One measured run: ``keys`` keys through ``path`` by ``clients`` processes."""

    path: str
    clients: int
    keys: int
    seconds: float
    server_cpu_s: float

    @property
    def keys_per_s(self) -> float:
        return self.keys / self.seconds

    @property
    def server_us_per_key(self) -> float:
        return 1e6 * self.server_cpu_s / self.keys


def _client_work(url: str, path: str, name: str, keys: list, barrier, results) -> None:
    from .redis_filter import RedisBackedFilter
    from .redis_connect import connect

    client = connect(url)
    bits = RedisBackedFilter.open(client, name) if path in ("add_many", "contains_many") else None
    command = {"BF.MADD": "BF.MADD", "BF.MEXISTS": "BF.MEXISTS"}.get(path)
    barrier.wait()
    if bits is not None:
        answers = bits.add_many(keys) if path == "add_many" else bits.contains_many(keys)
        count = int(answers.sum())
    else:
        pipe = client.pipeline(transaction=False)
        for start in range(0, len(keys), _BATCH):
            pipe.execute_command(command, name, *keys[start:start + _BATCH])
        count = sum(int(bool(a)) for reply in pipe.execute() for a in reply)
    results.put(count)
    client.close()


def _context():
    """Processes forked from one server process that has imported this module: a client
    starts in milliseconds, where a spawned one imports numpy and bloomedu again (about a
    second on a loaded machine).  Spawn where fork servers do not exist (Windows)."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__, "bloomedu.services.redis_filter",
                                    "bloomedu.services.redis_connect"])
    return context


def run_load(url: str, client, path: str, name: str, keys: list, clients: int = 1) -> LoadResult:
    """Send ``keys`` through ``path`` on the filter ``name`` (a ``BF.RESERVE`` key, or a
    :class:`~bloomedu.services.redis_filter.RedisBackedFilter`), split among ``clients``
    processes started together; ``client``: a client of the same server, to read its CPU."""
    if path not in PATHS:
        raise ValueError(f"path must be one of {PATHS}, got {path!r}")
    context = _context()
    barrier, results = context.Barrier(clients + 1), context.Queue()
    shares = [keys[i::clients] for i in range(clients)]
    workers = [context.Process(target=_client_work, args=(url, path, name, share, barrier, results))
               for share in shares]
    for worker in workers:
        worker.start()
    try:
        barrier.wait(timeout=120)  # every client connected and ready
        cpu, started = server_cpu_s(client), time.perf_counter()
        for _ in workers:
            results.get(timeout=600)
        seconds, cpu = time.perf_counter() - started, server_cpu_s(client) - cpu
    finally:
        for worker in workers:
            worker.join(60)
    return LoadResult(path, clients, len(keys), seconds, cpu)
