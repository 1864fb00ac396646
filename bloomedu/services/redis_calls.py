"""One chunk of a Redis-backed filter on the wire: its transaction, its checks and its retries.

:class:`~bloomedu.services.redis_filter.RedisBackedFilter` sends each chunk of ``add_many``
as one ``MULTI``/``EXEC`` transaction: the filter's ``uid`` read from its description, the
chunk's commands (:class:`~bloomedu.services.redis_bits.ChunkPlan`), a bit of the call's
marker set, and ``WAIT`` for the replicas asked.  What each failure means, and what is done:

- the description's ``uid`` is missing or another: :class:`FilterLost` (the node lost its
  data, or the filter was deleted or made again), never answers from what is left;
- its write count (raised by 1 in every transaction) is behind what the handle knew when it
  sent the call: :class:`FilterLost` (the node came back from an older snapshot);
- a part touched has no stamp after its bits: :class:`FilterLost` (evicted, deleted, cut
  short or written over);
- the connection dropped: reconnect and look at the marker under ``WATCH``; not set, the
  chunk was never applied and is sent again (the ``WATCH`` makes a late first copy abort
  the second); set, :class:`AnswersLost`;
- ``MOVED``, ``ASK``, ``TRYAGAIN``, ``CLUSTERDOWN``, ``LOADING`` (nothing was done): ask the
  cluster again who holds the slot, and send again;
- a command refused as the transaction was queued (``OOM`` at ``maxmemory``): nothing of
  the chunk was applied, and the error says so;
- fewer replicas than asked acknowledged: :class:`NotReplicated`;
- any other error the server answers (``NOPERM`` for a user whose ACL lacks a command,
  ...): raised as redis-py names it (``NoPermissionError``), its message saying what of the
  call was applied (nothing, for a command refused as the transaction was queued or for a
  lookup; the chunk, for a ``WAIT`` refused after it);
- no answer for ``retry_s`` seconds: a ``ConnectionError`` saying the filter cannot tell.

A lookup is the same without the transaction and the marker: read-only commands, so a full
server serves it.  With ``replicas=R`` it ends with a write that changes nothing and that a
full server still takes (``PEXPIRE`` and ``PERSIST`` of the description, in one
transaction) and ``WAIT R``: a primary deposed by a failover (stopped, then resumed still
believing it serves the slot) has no replica left to acknowledge it, so its answer, which may
lack keys acknowledged by the new primary, is never used: the lookup asks the cluster again
who holds the slot and reads there, or raises :class:`NotReplicated` if R replicas still do
not acknowledge.  What a confirmed lookup guarantees: at the moment of the ``WAIT``, R replicas
followed the node that answered, so that node had not been replaced by a failover that needed
one of them; a primary with more replicas than R could keep R that have not yet learned of a
failover, so ask R as large as each primary's replicas where reads must be exact.  Used by ``bloomedu/services/redis_filter.py``; tested in
``tests/test_redis_faults.py`` and ``tests/test_redis_cluster.py``.
"""

from __future__ import annotations

import math
import time

import numpy as np

from .redis_bits import ChunkPlan
from .redis_connect import auth_refused
from .redis_wire import command, exchange, held

__all__ = ["FilterLost", "AnswersLost", "NotReplicated", "write_chunk", "read_chunk", "check",
           "check_whole", "check_writes", "server_refused", "stamp_reads", "retrying", "node_of",
           "refresh", "marker_ms", "MARKER_MS", "confirm", "confirm_reads", "check_confirmed",
           "CONFIRM_TRIES"]

MARKER_MS = 600_000          # a call's marker lives this long past its last possible retry


def marker_ms(f) -> int:
    """How long a call's marker lives: a retry looks at it at most ``retry_s`` seconds (and one
    read's wait) after the chunk was sent, so it lives ``MARKER_MS`` past that, whatever
    ``retry_s`` is.

    >>> from types import SimpleNamespace
    >>> marker_ms(SimpleNamespace(retry_s=15.0, io_timeout_s=10.0))
    625000
    """
    return MARKER_MS + math.ceil(1000 * (f.retry_s + f.io_timeout_s))


class FilterLost(RuntimeError):
    """The filter's description is gone or changed: its node lost its data, or another
    process deleted the filter or made a new one under its name.  Its answers would be
    false negatives, so there are none."""


class AnswersLost(RuntimeError):
    """The connection dropped after the server applied a chunk of ``add_many``: its keys are
    in the filter, but which of them were new went with the lost reply."""


class NotReplicated(RuntimeError):
    """A write reached the primary (it is in the filter there) but not the replicas asked
    for in time: a failover now could lose it."""


def node_of(f):
    """The plain client of the node holding filter ``f`` (``f.client`` itself unless a
    cluster's: then the node of ``f.meta_key``'s slot)."""
    if not hasattr(f.client, "get_node_from_key"):
        return f.client
    return f.client.get_redis_connection(f.client.get_node_from_key(f.meta_key))


def refresh(f) -> None:
    """After a dropped connection or a MOVED reply: ask ``f``'s cluster again who holds what."""
    manager = getattr(f.client, "nodes_manager", None)
    if manager is not None:
        try:
            manager.initialize()
        except Exception:  # every node may be down for now: the next try asks again
            pass


def _redirected(reply) -> bool:
    """True for a reply that asks for the command again, elsewhere or later (MOVED, ASK,
    TRYAGAIN, CLUSTERDOWN, LOADING): nothing was done."""
    import redis.exceptions as errors

    kinds = tuple(getattr(errors, name) for name in ("MovedError", "AskError", "TryAgainError",
                                                     "ClusterDownError", "BusyLoadingError")
                  if hasattr(errors, name))
    return isinstance(reply, kinds) or isinstance(reply, Exception) and str(reply).startswith(
        ("MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN", "LOADING"))


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def server_refused(f, error: Exception, applied: str) -> Exception:
    """The server's own error (``NOPERM``, ``OOM``, ...) named as it is, with the filter's name
    and what of the call was applied."""
    return type(error)(f"filter {f.name!r}: the server refused a command: {error} ({applied})")


def check(f, uid, replies, applied: str = "a lookup: nothing was changed") -> None:
    """Raise for an error reply (the server's own, ``NOPERM`` as ``NOPERM``; a part of another
    type as ValueError) or a description that is gone or another filter's (:class:`FilterLost`)."""
    for reply in [uid, *replies]:
        if isinstance(reply, Exception) and not str(reply).startswith("WRONGTYPE"):
            raise server_refused(f, reply, applied) from reply
    if uid is None or isinstance(uid, Exception) or _text(uid) != f.uid:
        state = "gone" if uid is None else "another filter's"
        raise FilterLost(f"filter {f.name!r}: its description {f.meta_key} is {state}; "
                         "the node that holds it lost its data, or the filter was deleted "
                         "or made again")
    for reply in replies:
        if isinstance(reply, Exception):
            raise ValueError(f"filter {f.name!r}: a part is not a string of this filter's "
                             f"({reply})") from reply


def check_writes(f, count, floor: int, wrote: bool) -> None:
    """Raise :class:`FilterLost` if the description's write count (``count``, after this
    call's own increment if it ``wrote``) is behind ``floor``, the count ``f`` knew when the
    call was sent: the node lost writes it had acknowledged (restarted from an older snapshot,
    or failed over to a replica that lacked them).  Else ``f`` remembers the count."""
    count = int(count or 0)
    if count < floor + wrote:
        raise FilterLost(f"filter {f.name!r}: its description counts {count - wrote} writes, "
                         f"but {floor} were acknowledged before: the node restarted from an "
                         "older snapshot or failed over to a replica without them, and the "
                         "keys of the lost writes would be answered absent")
    f.note_writes(count)


def stamp_reads(f, parts: list[int]) -> list[bytes]:
    """A ``GETRANGE`` of each part's stamp: the bytes after its bits in its string."""
    size = f.part_sizes
    return [command("GETRANGE", f.keys[j], size[j], size[j] + len(f.stamps[j]) - 1) for j in parts]


def check_whole(f, parts: list[int], stamps: list) -> None:
    """Raise :class:`FilterLost` unless each of ``parts`` read back its stamp, whole and in
    place: a part evicted, deleted, cut short or written over by another program has lost
    bits, and answers from it would be false negatives."""
    for j, stamp in zip(parts, stamps):
        if stamp != f.stamps[j]:
            state = "gone or cut short" if not stamp or len(stamp) < len(f.stamps[j]) else \
                "not this filter's"
            raise FilterLost(f"filter {f.name!r}: its part {f.keys[j]} is {state} (the stamp "
                             "after its bits does not read back): it was evicted "
                             "(maxmemory-policy), deleted or written by another program, and "
                             "its bits are lost")


def retrying(f, attempt_once):
    """Call ``attempt_once(attempt)`` until it returns, through dropped connections and
    cluster redirections, for up to ``retry_s`` seconds; then a clear ConnectionError."""
    import redis

    started, attempt = time.monotonic(), 0
    while True:
        try:
            return attempt_once(attempt)
        except (redis.ConnectionError, redis.TimeoutError, _Redirected) as error:
            if auth_refused(error):
                raise
            if time.monotonic() - started > f.retry_s:
                raise redis.ConnectionError(
                    f"filter {f.name!r}: no answer from the node holding it for "
                    f"{f.retry_s:.0f} s ({error}); it cannot say whether a key is in "
                    "it, so it says nothing") from error
            attempt += 1
            refresh(f)
            time.sleep(min(0.5, 0.02 * 2 ** attempt))

def write_chunk(f, plan: ChunkPlan, marker: str, index: int) -> np.ndarray:
    stamps = stamp_reads(f, plan.parts)
    body = [command("MULTI"), command("HGET", f.meta_key, "uid"),
            command("HINCRBY", f.meta_key, "writes", 1), *plan.commands, *stamps,
            command("SETBIT", marker, index, 1), command("PEXPIRE", marker, marker_ms(f)),
            command("EXEC")]
    if f.replicas:
        body.append(command("WAIT", f.replicas, f.replica_timeout_ms))
    queued = len(body) - 2 - bool(f.replicas)

    def attempt_once(attempt: int):
        floor = f.writes_seen
        with held(node_of(f), f.io_timeout_s) as connection:
            if attempt:  # was it applied before the connection dropped?
                _, applied = exchange(connection, [command("WATCH", marker),
                                                   command("GETBIT", marker, index)], 2)
                if applied == 1:
                    exchange(connection, [command("UNWATCH")], 1)
                    raise AnswersLost(f"filter {f.name!r}: the connection dropped after "
                                      f"the server added a chunk of {plan.keys} keys; which "
                                      "of them were new was lost with its reply")
            replies = exchange(connection, body, len(body))
        done = replies[1 + queued]
        if done is None:  # WATCH fired: the first send was applied after all
            raise _Redirected("the marker changed under WATCH")
        if isinstance(done, Exception):  # EXECABORT: nothing of this chunk was applied
            refused = next((r for r in replies[1:1 + queued] if isinstance(r, Exception)), done)
            if _redirected(refused) or _redirected(replies[0]):
                raise _Redirected(str(refused))
            raise type(refused)(f"filter {f.name!r}: {refused} (no key of this chunk was "
                                "added)")
        check(f, done[0], done[1:], f"the chunk's transaction ran: its other commands, "
                                    f"for {plan.keys} keys, were applied")
        check_writes(f, done[1], floor, wrote=True)
        check_whole(f, plan.parts, done[2 + len(plan.commands):2 + len(plan.commands) + len(stamps)])
        if f.replicas and isinstance(replies[-1], Exception):
            raise server_refused(f, replies[-1], f"the chunk of {plan.keys} keys was added on the "
                          "primary; whether replicas hold it is unknown") from replies[-1]
        if f.replicas and replies[-1] < f.replicas:
            raise NotReplicated(f"filter {f.name!r}: {replies[-1]} of {f.replicas} "
                                f"replicas acknowledged in {f.replica_timeout_ms} ms")
        return plan.answers(done[2:2 + len(plan.commands)])

    return retrying(f, attempt_once)

CONFIRM_TRIES = 3             # lookups a deposed primary may answer before NotReplicated


def confirm_reads(f) -> list[bytes]:
    """What ends a lookup of a filter with ``replicas=R``: a write that changes nothing (the
    description given a TTL and at once none, in one transaction, commands a full server still
    takes), then ``WAIT R``: the node that answered is confirmed as the one R replicas follow."""
    return [command("MULTI"), command("PEXPIRE", f.meta_key, 10 ** 15),
            command("PERSIST", f.meta_key), command("EXEC"),
            command("WAIT", f.replicas, f.replica_timeout_ms)]


def check_confirmed(f, replies: list, attempt: int) -> None:
    """Raise unless the replies of :func:`confirm_reads` say R replicas acknowledged: a redirect
    (or, for the first tries, too few replicas: a deposed primary) asks the cluster again."""
    acknowledged = replies[-1]
    for reply in replies[-len(confirm_reads(f)):]:
        if isinstance(reply, Exception):
            if _redirected(reply) or str(reply).startswith("UNBLOCKED"):
                raise _Redirected(str(reply))  # the node learnt it was deposed
            raise server_refused(f, reply, "a lookup: nothing was changed") from reply
    if acknowledged < f.replicas:
        if attempt + 1 < CONFIRM_TRIES:
            raise _Redirected(f"{acknowledged} of {f.replicas} replicas confirmed the lookup")
        raise NotReplicated(f"filter {f.name!r}: a read was not confirmed: {acknowledged} of "
                            f"{f.replicas} replicas acknowledged a write made after it in "
                            f"{f.replica_timeout_ms} ms (try {attempt + 1}); the node that "
                            "answered may have been deposed by a failover (its answers could "
                            "lack keys acknowledged since), or its replicas are down or behind")


def confirm(f, node) -> None:
    """:func:`confirm_reads` on its own, after a read of whole parts (``to_filter``): raise
    :class:`NotReplicated` unless R replicas acknowledge, whatever the reason."""
    body = confirm_reads(f)
    with held(node, f.io_timeout_s) as connection:
        replies = exchange(connection, body, len(body))
    try:
        check_confirmed(f, replies, CONFIRM_TRIES - 1)
    except _Redirected as moved:
        raise NotReplicated(f"filter {f.name!r}: a read was not confirmed: the node that "
                            f"answered no longer serves the filter ({moved})") from None


def read_chunk(f, plan: ChunkPlan) -> np.ndarray:
    # the stamps are read after the bits: a part lost before its bits were read fails them
    body = [command("HGET", f.meta_key, "uid"), command("HGET", f.meta_key, "writes"),
            *plan.commands, *stamp_reads(f, plan.parts)]
    looked_up = len(body)
    if f.replicas:
        body += confirm_reads(f)

    def attempt_once(attempt: int):
        floor = f.writes_seen
        with held(node_of(f), f.io_timeout_s) as connection:
            replies = exchange(connection, body, len(body))
        moved = [r for r in replies[:looked_up] if _redirected(r)]
        if moved:
            raise _Redirected(str(moved[0]))
        check(f, replies[0], replies[1:looked_up])  # the server's refusals, named first
        if f.replicas:
            check_confirmed(f, replies, attempt)
        replies = replies[:looked_up]
        check_writes(f, replies[1], floor, wrote=False)
        check_whole(f, plan.parts, replies[2 + len(plan.commands):])
        return plan.answers(replies[2:])

    return retrying(f, attempt_once)


class _Redirected(Exception):
    """A reply that asks for the same command again elsewhere or later (MOVED, a WATCH fired)."""
