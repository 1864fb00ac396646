"""Commands for a filter in Redis, written as the server reads them, with numpy.

A Redis command travels as RESP: ``*N`` (the number of arguments), then each argument as
``$LENGTH`` and its bytes.  :class:`~bloomedu.services.redis_filter.RedisBackedFilter`
sends tens of thousands of bit offsets a call; encoding each with redis-py costs the
client microseconds an argument, so :func:`bitfield` writes a whole ``BITFIELD``
command at once from a numpy array of offsets (each offset's decimal digits computed in
numpy), and :func:`command` writes the few other commands.

:func:`exchange` sends such bytes on a connection of a redis-py client's pool (:func:`held`)
and reads exactly the replies expected.  Nothing here re-sends: what a retry may do after a dropped
connection is for the caller to decide (a write sent twice would answer "seen" for keys
that were new).

Used by ``bloomedu/services/redis_filter.py``; tested in ``tests/test_redis_filter.py``.
"""

from __future__ import annotations

import threading
import weakref
from contextlib import contextmanager

import numpy as np

__all__ = ["command", "bitfield", "exchange", "held", "connection_of", "timed_pool"]

_DIGITS = 20                                                   # 2**64 - 1 has 20 digits
_POWERS = np.array([10 ** i for i in range(_DIGITS)], dtype=np.uint64)


def _bulk(arg) -> bytes:
    data = arg if isinstance(arg, bytes) else bytes(arg) if isinstance(arg, (bytearray, memoryview)) \
        else str(arg).encode()
    return b"$%d\r\n%s\r\n" % (len(data), data)


def command(*args) -> bytes:
    """One command in RESP (arguments: bytes, str or int).

    >>> command("GET", "k")
    b'*2\\r\\n$3\\r\\nGET\\r\\n$1\\r\\nk\\r\\n'
    """
    return b"*%d\r\n" % len(args) + b"".join(_bulk(arg) for arg in args)


def _decimal_bulks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each value as a RESP bulk string ``$L\\r\\n<digits>\\r\\n``: a (n, 28) uint8 matrix and
    the mask of the bytes each row keeps (its digits are right-aligned in 20 columns)."""
    values = values.astype(np.uint64)
    count = values.size
    ndigits = 1 + (values[:, None] >= _POWERS[1:]).sum(axis=1)              # 1..20
    digits = (values[:, None] // _POWERS[::-1]) % np.uint64(10) + np.uint64(48)
    rows = np.empty((count, 28), dtype=np.uint8)
    rows[:, 0] = ord("$")
    rows[:, 1] = np.where(ndigits >= 10, ord("0") + ndigits // 10, 0)   # the length's tens
    rows[:, 2] = ord("0") + ndigits % 10
    rows[:, 3:5] = (13, 10)
    rows[:, 5:25] = digits.astype(np.uint8)
    rows[:, 25:27] = (13, 10)
    keep = np.ones((count, 28), dtype=bool)
    keep[:, 1] = ndigits >= 10
    keep[:, 5:25] = np.arange(_DIGITS)[None, :] >= (_DIGITS - ndigits)[:, None]
    keep[:, 27] = False
    return rows, keep


def bitfield(key: str, offsets: np.ndarray, *, write: bool) -> bytes:
    """``BITFIELD key SET u1 o 1 ...`` (``write``) or ``BITFIELD_RO key GET u1 o ...``, one
    operation per offset, in order.

    >>> bitfield("f", np.array([7, 12]), write=False) == command("BITFIELD_RO", "f", "GET", "u1", 7,
    ...                                                          "GET", "u1", 12)
    True
    >>> bitfield("f", np.array([2**32 - 1]), write=True) == command("BITFIELD", "f", "SET", "u1",
    ...                                                             2**32 - 1, 1)
    True
    """
    offsets = np.asarray(offsets).ravel()
    name, before, after = (b"BITFIELD", b"$3\r\nSET\r\n$2\r\nu1\r\n", b"$1\r\n1\r\n") if write \
        else (b"BITFIELD_RO", b"$3\r\nGET\r\n$2\r\nu1\r\n", b"")
    rows, keep = _decimal_bulks(offsets)
    pre = np.frombuffer(before, dtype=np.uint8)
    post = np.frombuffer(after, dtype=np.uint8)
    width = pre.size + rows.shape[1] + post.size
    table = np.empty((offsets.size, width), dtype=np.uint8)
    mask = np.ones((offsets.size, width), dtype=bool)
    table[:, :pre.size] = pre
    table[:, pre.size:pre.size + rows.shape[1]] = rows
    mask[:, pre.size:pre.size + rows.shape[1]] = keep
    table[:, width - post.size:] = post
    per_op = 4 if write else 3
    head = b"*%d\r\n" % (2 + per_op * offsets.size) + _bulk(name) + _bulk(key)
    return head + table[mask].tobytes()


def connection_of(pool):
    """A connection from a redis-py pool (redis-py 5 names a command; 6 and later need not)."""
    try:
        return pool.get_connection()
    except TypeError:  # redis-py 5: get_connection(command_name, *keys, **options)
        return pool.get_connection("PING")


_TIMED_POOLS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_TIMED_POOLS_LOCK = threading.Lock()


def timed_pool(client, timeout_s: float):
    """A pool of connections to ``client``'s server made with the client's own settings but
    ``socket_timeout=timeout_s`` (and, unless the client sets one, that connect timeout):
    one per client pool and timeout, kept while the client's pool lives.

    >>> import redis
    >>> client = redis.Redis(port=1, socket_timeout=60)
    >>> pool = timed_pool(client, 2.5)
    >>> pool.connection_kwargs["socket_timeout"], pool is timed_pool(client, 2.5)
    (2.5, True)
    """
    pool = client.connection_pool
    with _TIMED_POOLS_LOCK:
        pools = _TIMED_POOLS.setdefault(pool, {})
        if timeout_s not in pools:
            options = {**pool.connection_kwargs, "socket_timeout": timeout_s}
            pools[timeout_s] = type(pool)(connection_class=pool.connection_class, **options)
        return pools[timeout_s]


@contextmanager
def held(client, timeout_s: float | None = None):
    """One connection to ``client``'s server for a few exchanges (a ``WATCH`` and its
    ``MULTI`` must share one), given back after; closed if anything went wrong on it.

    ``timeout_s``: the longest a read may wait, whatever the client was made with (a node
    paused by ``SIGSTOP`` keeps its connections open and never answers; a client without a
    socket timeout would wait for it forever).  The connection then comes from
    :func:`timed_pool`, whose sockets are made with that timeout: redis-py sets a socket's
    timeout only as it connects."""
    pool = client.connection_pool if timeout_s is None else timed_pool(client, timeout_s)
    connection = connection_of(pool)
    try:
        yield connection
    except BaseException:
        connection.disconnect()
        raise
    finally:
        pool.release(connection)


def exchange(connection, payload: list[bytes], replies: int) -> list:
    """Send ``payload`` on ``connection`` and read ``replies`` replies.

    An error reply is returned in its place (a ``redis.ResponseError``), never raised, so
    every reply is read and the connection stays in step.  A dropped connection raises
    redis-py's ``ConnectionError`` or ``TimeoutError``.
    """
    import redis

    connection.send_packed_command(payload, check_health=False)
    answers = []
    for _ in range(replies):
        try:
            answers.append(connection.read_response())
        except redis.ResponseError as error:
            answers.append(error)
    return answers
