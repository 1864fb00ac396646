"""A throwaway PostgreSQL cluster for the bloom index: initdb in a temporary folder, a Unix socket only.

The lesson "Bloom filters inside the engines" and ``tests/test_postgres_server.py`` compare
:class:`~bloomedu.compat.postgres.BloomIndex` with the real ``bloom`` index of Debian's
PostgreSQL (packages ``postgresql`` and ``postgresql-contrib``; ``make postgres`` installs them
when missing and it may).  Nothing here touches a system service:

- the binaries come from ``$BLOOMEDU_POSTGRES_BIN``, else the newest
  ``/usr/lib/postgresql/*/bin`` (Debian), else ``initdb`` and ``postgres`` on the ``PATH``;
- ``initdb`` makes a new cluster in a new temporary folder (UTF-8, locale C, ``trust``
  authentication, no fsync: it is gone at the end), and ``postgres`` runs it listening on a
  Unix socket in that folder and on no TCP address (``listen_addresses=''``); the socket's
  folder has mode 0700, so only the server's user (and root) can connect;
- the server refuses to run as root: when this process is root, the cluster belongs to
  ``$BLOOMEDU_POSTGRES_USER``, else the system user ``nobody``, and initdb and the server run
  as that user (the temporary folder lets it in, and only it, to its own sub-folder);
- :meth:`PostgresServer.close` stops the server by its PID (SIGINT, PostgreSQL's "fast"
  shutdown) and deletes the folder.

SQL goes through the cluster's own ``psql`` (no Python driver needed), as text:
:meth:`PostgresServer.sql` returns the rows.  ``python -m bloomedu.services.postgres_server
--check`` starts a cluster, creates the ``bloom`` and ``pageinspect`` extensions and says what
it found, or exactly what is missing.

>>> isinstance(unavailable_reason(), (str, type(None)))
True
"""

from __future__ import annotations

import argparse
import csv
import glob
import io
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import weakref
from pathlib import Path

__all__ = ["PostgresServer", "PostgresUnavailable", "find_bin_dir", "required", "sql_literal",
           "unavailable_reason", "main", "REQUIRE_ENV", "BIN_ENV", "USER_ENV"]

REQUIRE_ENV = "BLOOMEDU_REQUIRE_ENGINES"  # set to 1 by `make test`: a missing engine fails the tests
BIN_ENV = "BLOOMEDU_POSTGRES_BIN"
USER_ENV = "BLOOMEDU_POSTGRES_USER"
SUPERUSER = "postgres"   # the cluster's superuser (initdb -U), whatever the OS user
DATABASE = "postgres"
EXTENSIONS = ("bloom", "pageinspect")
_PORT = 5432             # only names the socket file: the socket's folder is ours alone
_NULL = "\x1a"            # how psql prints NULL for sql()
_START_S = 60.0
_STOP_S = 30.0
HOW_TO_GET_IT = ("install Debian's PostgreSQL with its contrib modules: apt-get install "
                 "postgresql postgresql-contrib (`make postgres` does it as root), or set "
                 f"{BIN_ENV} to the folder holding initdb, postgres and psql")


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL could be found or started; the message says what is missing and how to get it.

    >>> str(PostgresUnavailable("no initdb")).startswith("no initdb")
    True
    """


def required() -> bool:
    """True when the environment demands the real engines (``make test`` sets BLOOMEDU_REQUIRE_ENGINES=1).

    >>> isinstance(required(), bool)
    True
    """
    return os.environ.get(REQUIRE_ENV, "") not in ("", "0")


def _version_key(path: str) -> tuple:
    """Sort key of ``/usr/lib/postgresql/15/bin``: its version as numbers (16 after 9.6)."""
    version = Path(path).parent.name
    return tuple(int(part) for part in re.findall(r"\d+", version))


def find_bin_dir() -> Path:
    """The folder of ``initdb``, ``postgres`` and ``psql``; PostgresUnavailable if there is none.

    >>> try:
    ...     folder = find_bin_dir()
    ... except PostgresUnavailable as missing:
    ...     folder = None
    >>> folder is None or (folder / "initdb").exists()
    True
    """
    needed = ("initdb", "postgres", "psql")
    if os.environ.get(BIN_ENV):
        folder = Path(os.environ[BIN_ENV])
        missing = [name for name in needed if not (folder / name).is_file()]
        if missing:
            raise PostgresUnavailable(f"{BIN_ENV}={folder} lacks {', '.join(missing)}")
        return folder
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_version_key, reverse=True):
        if all((Path(candidate) / name).is_file() for name in needed):
            return Path(candidate)
    found = [shutil.which(name) for name in needed]
    if all(found) and len({Path(path).parent for path in found}) == 1:
        return Path(found[0]).parent
    raise PostgresUnavailable(f"no PostgreSQL server (initdb, postgres, psql) was found: {HOW_TO_GET_IT}")


def _share_dir(bin_dir: Path) -> Path:
    """The folder of the cluster's extension control files (``pg_config --sharedir``)."""
    pg_config = bin_dir / "pg_config"
    if pg_config.is_file():
        result = subprocess.run([str(pg_config), "--sharedir"], capture_output=True, text=True)
        if result.returncode == 0 and result.stdout.strip():
            return Path(result.stdout.strip())
    return Path("/usr/share/postgresql") / bin_dir.parent.name


def missing_extensions(bin_dir: Path) -> list[str]:
    """The extensions of :data:`EXTENSIONS` whose control file the installation lacks."""
    extension_dir = _share_dir(bin_dir) / "extension"
    return [name for name in EXTENSIONS if not (extension_dir / f"{name}.control").is_file()]


def server_user() -> pwd.struct_passwd | None:
    """The unprivileged user the server runs as when we are root (None: run as ourselves)."""
    if os.geteuid() != 0:
        return None
    name = os.environ.get(USER_ENV) or "nobody"
    try:
        user = pwd.getpwnam(name)
    except KeyError:
        raise PostgresUnavailable(
            f"PostgreSQL refuses to run as root, and the user {name!r} to run it as does not "
            f"exist: create one (useradd --system {name}) or set {USER_ENV}") from None
    if user.pw_uid == 0:
        raise PostgresUnavailable(f"{USER_ENV}={name} is root: PostgreSQL refuses to run as root")
    return user


def unavailable_reason() -> str | None:
    """None when initdb, postgres, psql and the bloom and pageinspect extensions are here; else why not."""
    try:
        bin_dir = find_bin_dir()
        server_user()
    except PostgresUnavailable as missing:
        return str(missing)
    missing = missing_extensions(bin_dir)
    if missing:
        return (f"PostgreSQL in {bin_dir} lacks the extension(s) {', '.join(missing)}: "
                f"{HOW_TO_GET_IT}")
    return None


def sql_literal(value) -> str:
    """``value`` as an SQL literal: None is NULL, an int a number, a str a quoted string.

    >>> sql_literal("it's"), sql_literal(-5), sql_literal(None)
    ("'it''s'", '-5', 'NULL')
    """
    if value is None:
        return "NULL"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str):
        if "\0" in value:
            raise ValueError("value cannot hold the NUL character: PostgreSQL's text refuses it")
        return "'" + value.replace("'", "''") + "'"   # standard_conforming_strings is on
    raise TypeError(f"value must be None, an int or a str, not {type(value).__name__}")


def _stop(folder: Path, processes: list) -> None:
    """Stop the server process (if any) by its PID, SIGINT being PostgreSQL's fast shutdown,
    then delete the folder: :meth:`PostgresServer.close`, and what runs at exit without it."""
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(_STOP_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(_STOP_S)
    shutil.rmtree(folder, ignore_errors=True)


class PostgresServer:
    """A PostgreSQL cluster of our own, on a Unix socket in a temporary folder, stopped by its PID.

    ``extensions`` are created in the database once it is up.  Use it as a context manager,
    or call :meth:`close`.  :meth:`sql` runs statements and returns the rows of the last one,
    each a tuple of str (None for NULL).

    >>> with PostgresServer() as server:
    ...     server.sql("SELECT hashint4(42), hashtext('')")
    [('1509752520', '-1477818771')]
    """

    def __init__(self, extensions: tuple[str, ...] = EXTENSIONS):
        if isinstance(extensions, str) or not all(
                isinstance(name, str) and re.fullmatch(r"[a-z_][a-z0-9_]*", name) for name in extensions):
            raise ValueError(f"extensions must be a tuple of extension names (lower-case letters, "
                             f"digits and _), such as {EXTENSIONS}, got {extensions!r}")
        reason = unavailable_reason()
        if reason:
            raise PostgresUnavailable(reason)
        self.bin_dir = find_bin_dir()
        self.user = server_user()
        self.process: subprocess.Popen | None = None
        self.folder = Path(tempfile.mkdtemp(prefix="bloomedu-postgres-"))
        self._processes: list[subprocess.Popen] = []   # the server, once started
        self._cleanup = weakref.finalize(self, _stop, self.folder, self._processes)
        try:
            self._start(tuple(extensions))
        except BaseException:  # no one else can stop this process or delete its folder
            self.close()
            raise

    # --- the process ----------------------------------------------------------------
    @property
    def data_dir(self) -> Path:
        """The cluster's data folder (``initdb -D``)."""
        return self.folder / "cluster" / "data"

    @property
    def socket_dir(self) -> Path:
        """The folder of the server's Unix socket: psql's ``-h``."""
        return self.folder / "cluster" / "socket"

    def _as_server_user(self) -> dict:
        """``subprocess`` options that run a command as the server's user (nothing if it is us)."""
        if self.user is None:
            return {}
        return {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": [],
                "env": {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C",
                        "HOME": str(self.folder / "cluster")}}

    def _start(self, extensions: tuple[str, ...]) -> None:
        own = self.folder / "cluster"  # the only folder the server's user may write
        own.mkdir(mode=0o700)
        self.socket_dir.mkdir(mode=0o700)
        if self.user is not None:
            os.chmod(self.folder, 0o711)  # let the server's user through to its own folder
            for path in (own, self.socket_dir):
                os.chown(path, self.user.pw_uid, self.user.pw_gid)
        initdb = [str(self.bin_dir / "initdb"), "-D", str(self.data_dir), "-U", SUPERUSER,
                  "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions"]
        result = subprocess.run(initdb, capture_output=True, text=True, cwd=own,
                                **self._as_server_user())
        if result.returncode != 0:
            hint = "" if self.user is None else (
                f" (it ran as {self.user.pw_name!r}, who must be able to enter every folder above "
                f"{own}: point TMPDIR at a folder it can reach)")
            raise PostgresUnavailable(f"initdb failed{hint}: {' '.join(initdb)}\n"
                                      f"{(result.stdout + result.stderr)[-2000:]}")
        command = [str(self.bin_dir / "postgres"), "-D", str(self.data_dir),
                   "-c", "listen_addresses=", "-c", f"port={_PORT}",
                   "-c", f"unix_socket_directories={self.socket_dir}",
                   "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
                   "-c", "shared_buffers=16MB", "-c", "max_connections=10",
                   "-c", "autovacuum=off", "-c", "logging_collector=off"]
        log = open(own / "server.log", "ab")
        with log:
            self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log,
                                            stderr=log, cwd=own, start_new_session=True,
                                            **self._as_server_user())
        self._processes.append(self.process)
        self._wait_until_up()
        for name in extensions:
            self.sql(f'CREATE EXTENSION IF NOT EXISTS "{name}"')

    def _wait_until_up(self) -> None:
        deadline = time.monotonic() + _START_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise PostgresUnavailable(f"postgres exited with status {self.process.returncode}; "
                                          f"its log ends:\n{self.log_tail()}")
            probe = subprocess.run(self._psql() + ["-c", "SELECT 1"], capture_output=True)
            if probe.returncode == 0:
                return
            time.sleep(0.05)
        raise PostgresUnavailable(f"postgres did not answer within {_START_S:.0f} s; "
                                  f"its log ends:\n{self.log_tail()}")

    def log_tail(self, lines: int = 15) -> str:
        """The last lines of the server's log."""
        path = self.folder / "cluster" / "server.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    @property
    def pid(self) -> int | None:
        """The server's process ID, while it runs."""
        return self.process.pid if self.process is not None and self.process.poll() is None \
            else None

    def close(self) -> None:
        """Stop the server by its PID (SIGINT: fast shutdown) and delete the temporary folder.

        Python does it by itself at exit (a notebook's kernel shut down, a test run that
        ends) for a server nobody closed."""
        self._cleanup()

    def __enter__(self) -> "PostgresServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- SQL ----------------------------------------------------------------------------
    def _psql(self) -> list[str]:
        return [str(self.bin_dir / "psql"), "-X", "-q", "-h", str(self.socket_dir),
                "-p", str(_PORT), "-U", SUPERUSER, "-d", DATABASE, "-v", "ON_ERROR_STOP=1"]

    def sql(self, statements: str) -> list[tuple[str | None, ...]]:
        """Run ``statements`` (one or more, ``;``-separated) and return the last one's rows.

        Each row is a tuple of the values as psql prints them (str), None for NULL.  psql leaves
        out a few characters it will not print (the noncharacters U+4FFFE and U+10FFFF, for
        one) though the server holds them: to read a text exactly, select its bytes, as
        ``encode(convert_to(column, 'UTF8'), 'hex')``.  An error raises RuntimeError with the
        server's message.
        """
        if not isinstance(statements, str):
            raise TypeError(f"statements must be a str, not {type(statements).__name__}")
        # CSV without a header (quoted wherever a value needs it, line breaks included), NULL
        # printed as a control character that no value here holds, so '' and NULL differ
        command = self._psql() + ["--csv", "-t", "-P", f"null={_NULL}", "-f", "-"]
        env = dict(os.environ, PGCLIENTENCODING="UTF8")
        result = subprocess.run(command, input=statements.encode("utf-8"), capture_output=True,
                                env=env)
        if result.returncode != 0:
            raise RuntimeError(f"psql failed: {result.stderr.decode('utf-8', 'replace').strip()}")
        records = csv.reader(io.StringIO(result.stdout.decode("utf-8"), newline=""))
        # a blank line is a row of one empty text: psql writes '' unquoted
        return [tuple(None if field == _NULL else field for field in record or [""])
                for record in records]

    def raw_pages(self, relation: str) -> list[bytes]:
        """Every block of ``relation`` as its 8192 bytes, from pageinspect's ``get_raw_page``."""
        name = sql_literal(relation)
        rows = self.sql(f"SELECT encode(get_raw_page({name}, block), 'hex') FROM "
                        f"generate_series(0, pg_relation_size({name}) / 8192 - 1) AS block "
                        "ORDER BY block")
        return [bytes.fromhex(row[0]) for row in rows]

    def version(self) -> str:
        """The server's ``server_version`` (``15.10 (Debian 15.10-0+deb12u1)``)."""
        return self.sql("SHOW server_version")[0][0]

    def __repr__(self) -> str:
        return f"PostgresServer(bin_dir={str(self.bin_dir)!r}, pid={self.pid})"


def main(argv: list[str] | None = None) -> int:
    """``--check``: start a cluster with bloom and pageinspect and say what was found, or what is missing."""
    parser = argparse.ArgumentParser(description="Check that a PostgreSQL with bloom and pageinspect starts.")
    parser.add_argument("--check", action="store_true", required=True)
    parser.parse_args(argv)
    what = "PostgreSQL for the engines lesson and tests/test_postgres_server.py"
    try:
        started = time.monotonic()
        with PostgresServer() as server:
            version = server.version()
            rows = server.sql("SELECT extname || ' ' || extversion FROM pg_extension "
                              "WHERE extname IN ('bloom', 'pageinspect') ORDER BY 1")
            user = server.user.pw_name if server.user else pwd.getpwuid(os.geteuid()).pw_name
            seconds = time.monotonic() - started
    except PostgresUnavailable as missing:
        print(f"{what}: {missing}", file=sys.stderr)
        return 1
    print(f"{what}: {server.bin_dir} (PostgreSQL {version}), run as {user!r} on a Unix socket "
          f"only, with {', '.join(row[0] for row in rows)}: initdb and start took {seconds:.1f} s, "
          "now stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
