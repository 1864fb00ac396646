"""Article 1's deduplicator, shared: consumer processes of one Redis Stream and one filter.

Article 1 reads "the channel of click messages" and drops the IDs it has seen.  Here
the channel is a Redis Stream (``{name}:in``) read by a consumer group; each consumer
process takes batches of messages and runs one Lua script per batch that, message
after message, asks the shared filter whether the click ID is new and adds it
(bloomedu's :class:`~bloomedu.services.redis_filter.RedisBackedFilter`, or a
RedisBloom ``BF.ADD`` with ``mode="bf"``), appends the new ones to ``{name}:out``
and acknowledges the message (``XACK``).

**A click ID is a key as BloomFilter takes it**: a str, bytes or an int, hashed as
``BloomFilter`` hashes it (an int by its 8-byte value), so ``Click(123)`` and
``Click("123")`` are two clicks, and after ``Click(123)`` has passed, ``123 in filter``
is True and ``"123" in filter`` False.  Each message carries the ID's kind beside it,
and :meth:`SharedDeduplicator.passed_ids` gives the IDs back as they were published.

**What is guaranteed, to whom.**

- *The producer*: a message is in the stream once ``XADD`` has answered, as durably as
  the server keeps writes (with ``persistence="aof"``, fsync on every write: for good).
- *The consumers*: every message is delivered at least once (what a consumer read but
  did not acknowledge stays pending, and another claims it with ``XAUTOCLAIM`` once it
  has been idle ``claim_idle_ms``).  Because the filter's answer, the output and the
  acknowledgement are one atomic script, a message processed twice (claimed while its
  first reader was only slow) is found by the filter and dropped the second time.
- *A reader of the output*: **exactly once** while the server loses no write it
  acknowledged (one server with AOF and fsync always, killed and restarted: tested):
  each distinct click ID appears once in ``{name}:out``, and none is missing.
  **At least once** when acknowledged writes are lost — a restart from an RDB snapshot
  older than the last writes, an ``appendfsync everysec`` host crash, a failover to a
  replica that had not received them: the work since is done again, and a reader that
  had already read those output entries reads them again, with new stream IDs.  No
  click is ever missing.  Each output entry carries its click ID (``id``, with ``kind``)
  and the input message's stream ID (``message``): a reader that must apply each click
  once applies it keyed by its click ID (:meth:`SharedDeduplicator.passed_once` does).
  ``tests/test_redis_dedup.py`` shows both: exactly once through an AOF restart, at
  least once through an RDB rollback, with a reader that tails the output throughout.

**A filter that lost bits stops the consumers; it never passes a duplicate.**  With
``mode="bits"`` :meth:`SharedDeduplicator.create` makes every part of the filter exist at
its full length, and each batch's script checks, before it writes anything, the description's
``uid`` and the length of every part the batch touches; with ``mode="bf"`` it checks that
``{name}:bf`` is a RedisBloom filter.  A part or a ``{name}:bf`` evicted, deleted or
truncated (another client's ``SET``) is refused: the consumer raises
:class:`~bloomedu.services.redis_filter.FilterLost` naming the lost key (as a process: exit
status 3, the message on stderr), and nothing of that batch is passed or acknowledged.  What
these checks cannot see: a part rewritten at its full length by another client, and a
``{name}:bf`` made again by another client's ``BF.ADD`` or ``BF.RESERVE``.  The other
consumers stop at their next batch that touches what was lost.  The operator then stops every
consumer and calls :meth:`SharedDeduplicator.restore`, which makes the filter again from the
output stream (the IDs that passed are exactly what the filter held); consumers started
again claim the refused batches, still pending, and pass each of their clicks once or drop
it: nothing lost, nothing twice (``tests/test_redis_dedup.py``).  That needs the whole
output: ``restore`` refuses one that lost entries it can see (deleted, trimmed, or gone after
messages passed), but not one evicted and appended to again, so run the deduplicator on a
server whose ``maxmemory-policy`` is ``noeviction``.

A consumer waits for a server that went away (a restart) and for one that is full
(``maxmemory`` with ``noeviction``: nothing of a refused batch was done), up to its
patience; a refused password stops it at once with a clear message.

Run a consumer as a process: ``python -m bloomedu.services.redis_dedup --url
redis://127.0.0.1:P --name clicks --consumer c1`` (or ``$BLOOMEDU_REDIS_URL``, so a
password in the URL stays off the command line).  Taught in
``notebooks/18_many_consumers.ipynb``; fault tests (kill -9 a consumer,
restart the server, roll it back, lose part of the filter) in ``tests/test_redis_dedup.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass

from ..core.hashing import key_to_bytes
from ..core.filter import BloomFilter
from ..core.theory import num_bits_for
from .redis_filter import STAMP_BYTES, FilterLost, RedisBackedFilter, positions_of, redis_offsets
from .redis_connect import RedisAuthError, auth_refused, connect

__all__ = ["SharedDeduplicator", "ConsumerStats", "DEDUP_SCRIPT", "URL_ENV", "main"]

GROUP = "dedup"
URL_ENV = "BLOOMEDU_REDIS_URL"  # the consumer's server, password included, off the command line
_KINDS = {str: "str", int: "int", bytes: "bytes"}

# KEYS: input stream, output stream, then the filter's description and parts (or the BF key).
# ARGV: group, mode ("bits" or "bf"), k, part_bits, the filter's uid, the last part's length in
# bytes, then per message its stream ID, the click ID's bytes (mode "bf": what BF.ADD hashes),
# the ID as published and its kind, and (mode "bits") the k Redis bit offsets of the click ID,
# counted over the parts.  Everything is checked before the first write: a refused batch
# changes nothing and acknowledges nothing.
DEDUP_SCRIPT = """
local group, mode = ARGV[1], ARGV[2]
local k, part_bits = tonumber(ARGV[3]), tonumber(ARGV[4])
local per = 4 + (mode == 'bits' and k or 0)
local count = (#ARGV - 6) / per
if mode == 'bf' then
  if redis.call('TYPE', KEYS[3])['ok'] ~= 'MBbloom--' then
    return redis.error_reply('FILTERLOST the RedisBloom filter ' .. KEYS[3] ..
      ' is gone (evicted or deleted) or holds another kind of key; nothing of this batch was done')
  end
else
  if redis.call('HGET', KEYS[3], 'uid') ~= ARGV[5] then
    return redis.error_reply('FILTERLOST the filter description ' .. KEYS[3] .. ' is gone or another')
  end
  local checked = {}
  for at = 1, count * per do
    if (at - 1) % per >= 4 then
      local part = math.floor(tonumber(ARGV[6 + at]) / part_bits)
      if not checked[part] then
        checked[part] = true
        local want = part_bits / 8
        if 4 + part == #KEYS then want = tonumber(ARGV[6]) end
        local have = redis.call('STRLEN', KEYS[4 + part])
        local stamp = 'bloomedu part ' .. part .. ' of ' .. ARGV[5]
        stamp = stamp .. string.rep('\0', STAMP_BYTES - #stamp)
        if have ~= want + STAMP_BYTES or
            redis.call('GETRANGE', KEYS[4 + part], want, want + STAMP_BYTES - 1) ~= stamp then
          return redis.error_reply('FILTERLOST part ' .. KEYS[4 + part] .. ' holds ' .. have ..
            ' of its ' .. want .. ' bytes and stamp: lost (evicted, deleted, truncated or ' ..
            'written over); nothing of this batch was done')
        end
      end
    end
  end
end
local answers, arg = {}, 7
for m = 1, count do
  local message, hashed, id, kind = ARGV[arg], ARGV[arg + 1], ARGV[arg + 2], ARGV[arg + 3]
  local new = 0
  if mode == 'bf' then
    new = redis.call('BF.ADD', KEYS[3], hashed)
  else
    for j = 1, k do
      local at = tonumber(ARGV[arg + 3 + j])
      local part = math.floor(at / part_bits)
      if redis.call('SETBIT', KEYS[4 + part], at - part * part_bits, 1) == 0 then new = 1 end
    end
  end
  if new == 1 then
    redis.call('XADD', KEYS[2], '*', 'id', id, 'kind', kind, 'message', message)
    if mode == 'bits' then redis.call('HINCRBY', KEYS[3], 'writes', 1) end
  end
  redis.call('XACK', KEYS[1], group, message)
  answers[m] = new
  arg = arg + per
end
return answers
""".replace("STAMP_BYTES", str(STAMP_BYTES))

def _check_output_whole(client, name: str) -> None:
    """Refuse (ValueError) an output stream ``{name}:out`` that no longer holds every entry
    appended to it (``entries-added``, Redis 7 on), or that is gone after messages passed."""
    import redis

    output = f"{{{name}}}:out"
    try:
        info = client.xinfo_stream(output)
    except redis.ResponseError:  # no such key
        groups = client.xinfo_groups(f"{{{name}}}:in")
        done = sum((g.get("entries-read") or 0) - g["pending"] for g in groups)
        if done > 0:
            raise ValueError(f"the output stream {output} is gone while {done} messages were "
                             "acknowledged: the filter cannot be made again from it (nothing "
                             "was changed)") from None
        return
    added = info.get("entries-added", info["length"])
    if added != info["length"]:
        raise ValueError(f"the output stream {output} holds {info['length']} of the {added} "
                         "entries appended to it (trimmed, deleted or evicted): the filter cannot "
                         "be made again from it (nothing was changed)")


def _mode(mode: str) -> str:
    if mode not in ("bits", "bf"):
        raise ValueError(f"mode must be 'bits' (bloomedu's filter) or 'bf' (RedisBloom), got {mode!r}")
    return mode


def _kind(click_id) -> str:
    """'str', 'int' or 'bytes': how a click ID is hashed (and given back)."""
    for kind, name in _KINDS.items():
        if isinstance(click_id, kind) and not isinstance(click_id, bool):
            return name
    key_to_bytes(click_id)  # a bytes-like or numpy integer: accepted as BloomFilter accepts it
    return "int" if not isinstance(click_id, (bytearray, memoryview)) else "bytes"


def _typed(text: bytes, kind: bytes | None):
    """A click ID as it was published, from its stream fields."""
    kind = (kind or b"str").decode()
    if kind == "int":
        return int(text)
    return text if kind == "bytes" else text.decode()


@dataclass
class ConsumerStats:
    """What one consumer did: messages processed (claimed ones included), passed, claimed,
    and how often it waited for its server (gone, or full)."""

    consumer: str
    processed: int = 0
    passed: int = 0
    claimed: int = 0
    reconnects: int = 0
    full_waits: int = 0


class SharedDeduplicator:
    """The keys of one shared deduplicator named ``name``, and the methods that use them.

    >>> from bloomedu.services.redis_server import RedisServer
    >>> from bloomedu import Click
    >>> article = [Click(id, user=0, ad=123, timestamp=0.0) for id in ["123", "456", "123", 789]]
    >>> with RedisServer() as server:
    ...     dedup = SharedDeduplicator.create(server.client(), "clicks", expected_items=1000, fpp=0.001)
    ...     dedup.publish(article, done=True)
    ...     stats = dedup.consume("only-one")
    ...     stats.processed, stats.passed, dedup.passed_ids(), 789 in dedup.filter, "789" in dedup.filter
    (4, 3, ['123', '456', 789], True, False)
    """

    def __init__(self, client, name: str, mode: str = "bits"):
        self.client, self.name, self.mode = client, name, _mode(mode)
        self.stream, self.output, self.done_key = (f"{{{name}}}:in", f"{{{name}}}:out",
                                                   f"{{{name}}}:done")
        if mode == "bits":
            self.filter = RedisBackedFilter.open(client, name)
            self.filter_keys = [self.filter.meta_key, *self.filter.keys]
        else:
            self.filter, self.filter_keys = None, [f"{{{name}}}:bf"]
        self._script = client.register_script(DEDUP_SCRIPT)

    @classmethod
    def create(cls, client, name: str, expected_items: int, fpp: float, mode: str = "bits",
               part_bits: int | None = None) -> "SharedDeduplicator":
        """The stream, its consumer group and a filter sized for n = ``expected_items`` at p = ``fpp``
        (``BloomFilter.from_capacity``'s sizing, or ``BF.RESERVE`` with ``mode="bf"``)."""
        if mode == "bf":
            client.execute_command("BF.RESERVE", f"{{{name}}}:bf", repr(float(fpp)), expected_items)
        elif mode == "bits":
            RedisBackedFilter.from_capacity(client, name, expected_items, fpp, part_bits)  # whole parts
        client.xgroup_create(f"{{{name}}}:in", GROUP, id="0", mkstream=True)
        return cls(client, name, mode)

    @classmethod
    def restore(cls, client, name: str, expected_items: int, fpp: float, mode: str = "bits",
                part_bits: int | None = None) -> "SharedDeduplicator":
        """Make the filter again from the output stream, after a consumer stopped with
        :class:`~bloomedu.services.redis_filter.FilterLost`; every consumer must be stopped.

        ``expected_items``, ``fpp``, ``mode`` and ``part_bits`` are those :meth:`create` was
        given.  What is left of the filter is deleted, an empty one is made (``BF.RESERVE``, or
        a ``RedisBackedFilter`` of the same shape, with new whole parts) and every click ID of
        ``{name}:out`` is added again, in the order it passed.  That is the filter as it was: a
        message whose ID was found changed nothing, so the filter holds exactly what the passed
        IDs put in it (RedisBloom's sub-filters grow at the same adds, too).  The refused
        batches are still pending: consumers started again claim them (``claim_idle_ms``), and
        each of their clicks passes once or is dropped, as if nothing had been lost.

        The output must hold every click ID that passed: an output some of whose entries were
        deleted or trimmed, or that is gone while the group has acknowledged messages, is
        refused (ValueError) and nothing is changed.  An output evicted and then appended to
        again cannot be told from a whole one: a server that evicts keys loses more than the
        filter.

        >>> from bloomedu.services.redis_server import RedisServer
        >>> from bloomedu import Click
        >>> clicks = [Click(id, user=0, ad=1, timestamp=0.0) for id in ["a", "b", "a"]]
        >>> with RedisServer() as server:
        ...     dedup = SharedDeduplicator.create(server.client(), "c", expected_items=100, fpp=0.01)
        ...     dedup.publish(clicks, done=True)
        ...     first = dedup.consume("c1").passed
        ...     evicted = dedup.client.delete(*dedup.filter.keys)  # the bits are evicted
        ...     dedup.publish(clicks, done=True)                  # and the clicks sent again
        ...     try:
        ...         dedup.consume("c1")
        ...     except FilterLost as lost:
        ...         print(lost)
        ...     dedup = SharedDeduplicator.restore(dedup.client, "c", expected_items=100, fpp=0.01)
        ...     first, dedup.consume("c1", claim_idle_ms=0).passed, dedup.passed_ids()
        deduplicator 'c': part {c}:bits:0 holds 0 of its 120 bytes and stamp: lost (evicted,
        deleted, truncated or written over); nothing of this batch was done
        (2, 0, ['a', 'b'])
        """
        _check_output_whole(client, name)
        if _mode(mode) == "bf":
            key = f"{{{name}}}:bf"
            client.delete(key)
            client.execute_command("BF.RESERVE", key, repr(float(fpp)), expected_items)
            restored = cls(client, name, mode)
            passed = restored.passed_ids()
            for start in range(0, len(passed), 1000):
                client.execute_command("BF.MADD", key, *map(key_to_bytes, passed[start:start + 1000]))
            return restored
        left = RedisBackedFilter(client, name, num_bits_for(n=expected_items, p=fpp), 1, part_bits,
                                 uid="")
        if client.exists(left.meta_key):
            was = RedisBackedFilter.open(client, name)
            if (was.num_bits, was.part_bits) != (left.num_bits, left.part_bits):
                raise ValueError(f"filter {name!r} has num_bits={was.num_bits}, part_bits="
                                 f"{was.part_bits}, not the {left.num_bits}, {left.part_bits} of "
                                 f"expected_items={expected_items}, fpp={fpp}: give the values "
                                 "create was given (nothing was changed)")
        left.delete()
        shape = RedisBackedFilter.from_capacity(client, name, expected_items, fpp, part_bits)
        restored = cls(client, name, mode)
        bloom = BloomFilter(shape.num_bits, shape.num_hashes)
        bloom.add_many(restored.passed_ids())
        RedisBackedFilter.from_filter(client, name, bloom, shape.part_bits)
        return restored

    # --- the producer ----------------------------------------------------------------------
    def publish(self, clicks, done: bool = False, chunk: int = 1000) -> None:
        """Append click messages to the stream (pipelined); ``done`` marks the end of the stream.

        Each message keeps its click ID's kind (str, bytes or int): every kind is refused
        or accepted, before anything is sent, as BloomFilter refuses or accepts it."""
        kinds = [_kind(click.id) for click in clicks]
        for start in range(0, len(clicks), chunk):
            pipe = self.client.pipeline(transaction=False)
            for click, kind in zip(clicks[start:start + chunk], kinds[start:start + chunk]):
                text = bytes(click.id) if kind == "bytes" else str(int(click.id)) \
                    if kind == "int" else click.id
                pipe.xadd(self.stream, {"id": text, "kind": kind, "user": click.user,
                                        "ad": click.ad})
            pipe.execute()
        if done:
            self.client.set(self.done_key, 1)

    # --- a consumer -------------------------------------------------------------------------
    def _process(self, messages) -> int:
        """Run the script on a batch of (stream ID, fields) messages; how many passed."""
        ids = [message_id for message_id, _ in messages]
        texts = [fields[b"id"] for _, fields in messages]
        kinds = [fields.get(b"kind", b"str") for _, fields in messages]
        keys = [_typed(text, kind) for text, kind in zip(texts, kinds)]
        if self.mode == "bits":
            offsets = redis_offsets(positions_of(self.filter, keys)).tolist()
            per_message = [[m, "", t, kd, *o] for m, t, kd, o in zip(ids, texts, kinds, offsets)]
            k, part_bits, uid = self.filter.num_hashes, self.filter.part_bits, self.filter.uid
            last = self.filter.part_sizes[-1]
        else:
            per_message = [[m, key_to_bytes(key), t, kd]
                           for m, key, t, kd in zip(ids, keys, texts, kinds)]
            k, part_bits, uid, last = 0, 1, "", 0
        args = [GROUP, self.mode, k, part_bits, uid, last] + [x for row in per_message for x in row]
        import redis

        try:
            answers = self._script(keys=[self.stream, self.output] + self.filter_keys, args=args)
        except redis.ResponseError as error:
            if str(error).startswith("FILTERLOST"):
                lost = str(error).removeprefix("FILTERLOST ")
                raise FilterLost(f"deduplicator {self.name!r}: {lost}") from None
            raise
        return int(sum(answers))

    def finished(self) -> bool:
        """True when the producer is done and every message of the stream was acknowledged."""
        if not self.client.exists(self.done_key):
            return False
        group = next(g for g in self.client.xinfo_groups(self.stream) if g["name"] in (GROUP, GROUP.encode()))
        last = self.client.xinfo_stream(self.stream)["last-generated-id"]
        return group["pending"] == 0 and group["last-delivered-id"] == last

    def consume(self, consumer: str, batch: int = 100, block_ms: int = 50,
                claim_idle_ms: int = 1000, hold_after: int | None = None,
                patience_s: float = 60.0) -> ConsumerStats:
        """Read, deduplicate and acknowledge until :meth:`finished`; first claim messages other
        consumers left idle for ``claim_idle_ms`` (they may have died).  ``hold_after``: stop
        processing after that many batches, holding the last one unacknowledged (fault tests).
        Waits up to ``patience_s`` for a server that went away (a restart) or is full; a
        refused password raises :class:`~bloomedu.services.redis_connect.RedisAuthError` at once."""
        import redis

        stats, batches, trouble_since = ConsumerStats(consumer), 0, None
        while True:
            try:
                _, claimed, *_ = self.client.xautoclaim(self.stream, GROUP, consumer,
                                                        claim_idle_ms, "0-0", count=batch)
                messages = claimed
                if not messages:
                    reply = self.client.xreadgroup(GROUP, consumer, {self.stream: ">"},
                                                   count=batch, block=block_ms)
                    messages = reply[0][1] if reply else []
                else:
                    stats.claimed += len(messages)
                if messages:
                    batches += 1
                    if hold_after is not None and batches > hold_after:
                        while True:  # read, never processed: pending until someone claims it
                            time.sleep(3600)
                    stats.passed += self._process(messages)
                    stats.processed += len(messages)
                elif self.finished():
                    return stats
                trouble_since = None
            except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError,
                    redis.exceptions.OutOfMemoryError) as error:
                if auth_refused(error):
                    raise RedisAuthError(f"consumer {consumer}: the server refused the password "
                                         f"({error})") from None
                trouble_since = trouble_since or time.monotonic()
                if time.monotonic() - trouble_since > patience_s:
                    raise
                if isinstance(error, redis.exceptions.OutOfMemoryError):
                    stats.full_waits += 1  # the script was refused whole: nothing was done
                    time.sleep(0.2)
                else:
                    stats.reconnects += 1
                    time.sleep(0.05)

    # --- what came out ----------------------------------------------------------------------
    def passed_ids(self, after: str = "-") -> list:
        """The click IDs that passed, in the order they passed (as published: str, bytes or
        int); ``after``: only those after that output stream ID (exclusive, ``"("`` form)."""
        return [_typed(fields[b"id"], fields.get(b"kind"))
                for _, fields in self.client.xrange(self.output, min=after)]

    def passed_once(self) -> list:
        """What a reader that applies each click keyed by its ID applies: the IDs that passed,
        each once, in the order they first passed (the same as :meth:`passed_ids` while the
        server loses no acknowledged write; see the module's guarantees)."""
        return list(dict.fromkeys(self.passed_ids()))

    def spawn(self, server, consumer: str, **options) -> subprocess.Popen:
        """Start a consumer as a separate process (``python -m bloomedu.services.redis_dedup``).

        ``server``: a loopback port, or a ``redis://`` URL (a password in it travels in the
        child's environment, never on its command line)."""
        url = server if isinstance(server, str) else f"redis://127.0.0.1:{int(server)}/0"
        command = [sys.executable, "-m", "bloomedu.services.redis_dedup", "--name", self.name,
                   "--mode", self.mode, "--consumer", consumer]
        for option, value in options.items():
            command += [f"--{option.replace('_', '-')}", str(value)]
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True, env={**os.environ, URL_ENV: url})


def main(argv: list[str] | None = None) -> int:
    """One consumer process: prints its :class:`ConsumerStats` as JSON when the stream is done."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--url", help=f"redis://[:password@]host:port/db (default: ${URL_ENV})")
    where.add_argument("--port", type=int, help="a server on 127.0.0.1 without a password")
    parser.add_argument("--name", required=True)
    parser.add_argument("--consumer", required=True)
    parser.add_argument("--mode", default="bits", choices=["bits", "bf"])
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--claim-idle-ms", type=int, default=1000)
    parser.add_argument("--hold-after", type=int, default=None)
    args = parser.parse_args(argv)
    url = args.url or (f"redis://127.0.0.1:{args.port}/0" if args.port else os.environ.get(URL_ENV))
    if not url:
        parser.error(f"name the server: --url, --port or ${URL_ENV}")
    try:
        client = connect(url)
        dedup = SharedDeduplicator(client, args.name, args.mode)
        stats = dedup.consume(args.consumer, batch=args.batch, claim_idle_ms=args.claim_idle_ms,
                              hold_after=args.hold_after)
    except RedisAuthError as refused:
        print(f"consumer {args.consumer}: {refused}", file=sys.stderr)
        return 2
    except FilterLost as lost:
        print(f"consumer {args.consumer} stopped: {lost}", file=sys.stderr)
        return 3
    print(json.dumps(asdict(stats)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
