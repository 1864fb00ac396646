"""Real Redis servers for lessons 17, 18 and 20 and their tests: found, started on a free loopback port, stopped by PID.

Lessons 17, 18 and 20 put bloomedu's filters on a real Redis.  Nothing here uses a system
service: each :class:`RedisServer` is a server process of our own, bound to
127.0.0.1 on a free port, with its own private directory and no persistence
unless asked (``persistence="aof"`` or ``"rdb"``), optionally with the
RedisBloom module loaded (``module=True``), a password (``password=``) or in
cluster mode (:mod:`~bloomedu.services.redis_cluster` joins such nodes).  It is
stopped by its PID, never by name.

Where the server and the module come from: :mod:`~bloomedu.services.redis_install` (the
virtual environment, and a private folder for a copy); a password goes into the server's
private configuration file (a new file of mode 0600 each start, never written through a link
left at its name), never on its command line, and clients get it from
:meth:`RedisServer.client`, :attr:`RedisServer.url` or
:func:`~bloomedu.services.redis_connect.connect`.  The password is written so that the
server holds exactly the one given (any characters but NUL, CR and LF).  A server that is up
answers as our own process with our password: another server that took the port first is never
used, and one of ours that holds another password (set by ``extra_args``) raises
:class:`~bloomedu.services.redis_connect.RedisAuthError` at once.  A failed start leaves no
process and no temporary folder behind.
``python -m bloomedu.services.redis_server --check`` (``make redis``) starts one server with
the module and says what it found.

Used by ``notebooks/17_redisbloom.ipynb``, ``notebooks/18_many_consumers.ipynb``,
``notebooks/deeper/18_cluster_failover.ipynb``, ``notebooks/deeper/20_redisbloom_cuckoo.ipynb``
and every Redis test
(``tests/redis_support.py``); tested in ``tests/test_redis_server.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

from .redis_connect import RedisAuthError, auth_refused
from .redis_install import RedisUnavailable, redis_py, find_redisbloom, find_server, free_port

__all__ = ["RedisServer", "main"]

_START_S = 20.0
_STOP_S = 20.0


def _check_password(password) -> None:
    """Refuse a ``password`` that would not arrive whole everywhere it goes (None: no password).

    Valkey holds any bytes through :func:`_config_value`, NUL and line breaks included; NUL,
    CR and LF are refused because the tools a password passes through end a C string at NUL
    and a line at CR or LF (``redis-cli``'s prompt, a file of one setting a line), where it
    would silently become a shorter password.  A str that is not UTF-8 (a lone surrogate)
    has no bytes to send.
    """
    if password is None:
        return
    if not isinstance(password, str):
        raise TypeError(f"password must be a str or None, got {type(password).__name__}")
    if not password or any(c in password for c in "\0\r\n"):
        raise ValueError("password must be a non-empty str without NUL, CR or LF characters")
    try:
        password.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("password must be encodable as UTF-8 (no lone surrogates)") from None


def _config_value(text: str) -> str:
    """``text`` as one argument of a config file line that the server reads back byte for byte.

    The server splits a line as ``sdssplitargs`` does: between double quotes, ``\\xHH`` is the
    byte HH, and nothing else can end the argument early or be read as another escape.  So
    every UTF-8 byte of ``text`` is written that way: backslashes, quotes, spaces, ``#`` and
    non-ASCII come back as given, in every Redis and Valkey version.

    >>> _config_value('a\\\\"b')
    '"\\\\x61\\\\x5c\\\\x22\\\\x62"'
    """
    return '"' + "".join(f"\\x{byte:02x}" for byte in text.encode("utf-8")) + '"'


def _write_private(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` as a new file that only this user can read (mode 0600).

    The text goes into a file made with a new name beside ``path`` (``mkstemp``: created
    exclusively, never through a symlink, mode 0600), whose mode and owner are forced and then
    checked, and which is renamed over ``path`` at the end.  Whatever was at ``path`` (a
    readable file, a symlink to a file elsewhere) is replaced, never written through: a link's
    target is left untouched.  A folder whose file system cannot keep the file private (modes
    ignored, another owner) raises :class:`PermissionError` and leaves no file.

    >>> import pathlib, stat, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> (folder / "old").write_text("readable")
    8
    >>> secret = _write_private(folder / "old", "requirepass x\\n")
    >>> oct(stat.S_IMODE(secret.stat().st_mode)), secret.read_text()
    ('0o600', 'requirepass x\\n')
    >>> shutil.rmtree(folder)
    """
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            os.fchmod(out.fileno(), 0o600)
            made = os.fstat(out.fileno())
            if stat.S_IMODE(made.st_mode) != 0o600 or made.st_uid != os.geteuid():
                raise PermissionError(
                    f"directory={str(path.parent)!r} cannot keep the password file private: a new "
                    f"file there has mode {oct(stat.S_IMODE(made.st_mode))} and owner uid "
                    f"{made.st_uid} after chmod 0600 (pass a directory on a local file system)")
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    return path


class RedisServer:
    """A server process of our own on a free loopback port, stopped by its PID.

    ``module=True`` loads RedisBloom; ``persistence`` is None (nothing written),
    ``"aof"`` (append-only file, fsync on every write) or ``"rdb"`` (a snapshot
    on shutdown and on ``SAVE``); ``cluster=True`` starts a cluster node;
    ``password`` sets ``requirepass`` (and ``masterauth``, for a replica): any str but one
    with NUL, CR or LF, which raise ValueError; the server holds exactly that password.

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
        _check_password(password)
        self.binary = find_server()
        self.module_path = find_redisbloom() if module else None
        self.persistence, self.cluster, self.extra_args = persistence, cluster, tuple(extra_args)
        self.password, self.cluster_node_timeout_ms = password, int(cluster_node_timeout_ms)
        self._own_directory = directory is None
        self.directory = Path(tempfile.mkdtemp(prefix="bloomedu-redis-")) if directory is None \
            else Path(directory)
        self.port: int | None = None
        self.process: subprocess.Popen | None = None
        self.paused = False  # stopped by pause(): alive, holding its port, answering nothing
        try:
            self.start()
        except BaseException:  # no one else can stop this process or delete its folder
            self.close()
            raise

    # --- the process ------------------------------------------------------------------
    def _config_file(self) -> Path:
        """The settings that must not show on a command line (the password): ``private.conf``,
        a new file of ours with mode 0600 whatever was at that name (see :func:`_write_private`)."""
        lines = [f"requirepass {_config_value(self.password)}",
                 f"masterauth {_config_value(self.password)}"] if self.password else []
        return _write_private(self.directory / "private.conf", "\n".join(lines) + "\n")

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
            # validity factor 0: a replica always stands for election when its primary fails,
            # however long a loaded machine kept it from hearing from the primary
            args += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                     "--cluster-node-timeout", str(self.cluster_node_timeout_ms),
                     "--cluster-replica-validity-factor", "0",
                     # a replica is synced at once: a primary otherwise waits 5 s for others
                     # to join the same transfer, on every (re)start of a replica
                     "--repl-diskless-sync-delay", "0"]
        if self.module_path:
            args += ["--loadmodule", self.module_path]
        return args + list(self.extra_args)

    def start(self) -> "RedisServer":
        """Start the process (on a new free port the first time, the same port after).

        It is up when this process itself answers, with its password.  Another server that
        answers on the port first (a race for a free port) is never taken for it: the first
        start tries another port, a restart raises :class:`RedisUnavailable`.  A server of ours
        that refuses its own password (``extra_args`` set another) raises
        :class:`~bloomedu.services.redis_connect.RedisAuthError`.  A failed start leaves no
        process; the constructor also deletes the folder it made."""
        if self.process is not None and self.process.poll() is None:
            return self
        first = self.port is None
        for attempt in range(5):
            if first:  # a cluster node also listens on port + 10000 (the cluster bus)
                self.port = free_port(55535 if self.cluster else 65535)
            command = self.command()
            server_log = self.directory / "server.log"  # what this start logs comes after since
            since = server_log.stat().st_size if server_log.exists() else 0
            with open(self.directory / "stderr.log", "ab") as stderr:
                self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                                stdout=stderr, stderr=stderr,
                                                start_new_session=True)
            if self._wait_until_up(since):
                return self
            log = self.log_tail()
            if not first or "Address already in use" not in log:  # a port race: try another
                break
        raise RedisUnavailable(f"{self.binary} did not start on 127.0.0.1:{self.port}; "
                               f"its log ends:\n{self.log_tail()}")

    def _wait_until_up(self, since: int) -> bool:
        """True once our process answers; False (and no process) if it did not start."""
        redis = redis_py()
        deadline = time.monotonic() + _START_S
        client = self.client(socket_timeout=1.0)
        try:
            while time.monotonic() < deadline and self.process.poll() is None:
                refused = None
                try:
                    if client.ping() and client.info("server")["process_id"] == self.process.pid:
                        return True
                except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError,
                        redis.ResponseError) as error:
                    if not auth_refused(error):
                        time.sleep(0.02)
                        continue
                    refused = error
                # refused, or another process answered: who listens on the port?
                ours = self._listening(since, deadline)
                self.kill()
                if ours and refused is not None:
                    raise RedisAuthError(
                        f"127.0.0.1:{self.port} refused this server's own password: the server "
                        f"started here holds another one ({refused}); extra_args may set one"
                    ) from None
                return False  # another server has the port: ours exited, its log says why
            self.kill()
            return False
        finally:
            client.close()

    def _listening(self, since: int, deadline: float) -> bool:
        """Wait until our process logs that it accepts connections (True) or exits (False)."""
        log = self.directory / "server.log"
        while time.monotonic() < deadline and self.process.poll() is None:
            with contextlib.suppress(FileNotFoundError), open(log, "rb") as text:
                text.seek(since)
                if b"Ready to accept connections" in text.read():
                    return True
            time.sleep(0.02)
        return False

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
            self.paused = True

    def resume(self) -> None:
        """Let a paused process go on (SIGCONT)."""
        if self.pid is not None:
            self.process.send_signal(signal.SIGCONT)
        self.paused = False

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
        """``redis://[:password@]127.0.0.1:port/0``: what :func:`~bloomedu.services.redis_connect.connect` and the consumer CLI take."""
        auth = f":{quote(self.password, safe='')}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def client(self, **options):
        """A redis-py client of this server (``decode_responses`` off: bytes in, bytes out),
        with its password, which never re-sends a command by itself."""
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        options.setdefault("retry", Retry(NoBackoff(), 0))
        return redis_py().Redis(host="127.0.0.1", port=self.port, password=self.password,
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
        print(f"Redis for lessons 17, 18 and 20 and their tests: {missing}", file=sys.stderr)
        return 1
    version = info.get("valkey_version") or info.get("redis_version")
    print(f"Redis for lessons 17, 18 and 20 and their tests: {server.binary} ({version}) with "
          f"{server.module_path} answers BF.ADD with {added}, on a loopback port, now stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
