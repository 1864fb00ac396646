"""Clients of a Redis server named by a URL or a port and password, and a refused password said at once.

A password never appears on a command line (``ps`` shows those to every user):
:class:`~bloomedu.services.redis_server.RedisServer` writes it into its private
configuration file, and clients get it from ``RedisServer.client``, ``RedisServer.url`` or
:func:`connect`.  A wrong or missing password fails at once with :class:`RedisAuthError`,
naming the server that refused it, instead of being retried like a dropped connection
(retried, a refused password would keep the server helper waiting 22 s to say "did not
start", a filter 4.6 s, a consumer 70 s).

Used by the consumers (:mod:`bloomedu.services.redis_dedup`), the load runner and
the Redis lessons (17, 18 and 20); tested in ``tests/test_redis_faults.py`` and ``tests/test_redis_server.py``.
"""

from __future__ import annotations

from urllib.parse import quote, urlsplit

from .redis_install import redis_py

__all__ = ["RedisAuthError", "connect", "auth_refused"]


class RedisAuthError(PermissionError):
    """A server refused the password (or asked for one that was not given).

    >>> isinstance(RedisAuthError("refused"), PermissionError)
    True
    """


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

    >>> from bloomedu.services.redis_server import RedisServer
    >>> with RedisServer(password="s3cret") as server:
    ...     connect(server.url).ping()
    ...     connect(port=server.port, password="wrong")
    Traceback (most recent call last):
    ...
    bloomedu.services.redis_connect.RedisAuthError: redis://127.0.0.1:...: the server refused the password ...
    """
    redis = redis_py()
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
    redis = redis_py()
    return isinstance(error, redis.AuthenticationError) or (
        isinstance(error, redis.ResponseError) and str(error).startswith(("NOAUTH", "WRONGPASS")))
