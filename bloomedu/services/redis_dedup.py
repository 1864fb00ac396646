"""Article 1's deduplicator, shared: consumer processes of one Redis Stream and one filter.

Article 1 reads "the channel of click messages" and drops the IDs it has seen.  Here
the channel is a Redis Stream (``{name}:in``) read by a consumer group; each consumer
process takes batches of messages and runs one Lua script per batch that, message
after message, asks the shared filter whether the click ID is new and adds it
(bloomedu's :class:`~bloomedu.services.redis_filter.RedisBackedFilter`, or a
RedisBloom ``BF.ADD`` with ``mode="bf"``), appends the new ones to ``{name}:out``
and acknowledges the message (``XACK``).  Because the filter's answer, the output
and the acknowledgement are one atomic script:

- no duplicate passes twice: a click ID is new for exactly one message, whichever
  consumer reads it;
- a consumer killed mid-stream loses nothing: what it read but did not process is
  still pending in the group, and the other consumers claim it with ``XAUTOCLAIM``
  once it has been idle ``claim_idle_ms``; a message processed twice (claimed while
  its first reader was only slow) is found by the filter and dropped the second time;
- a Redis restart keeps the filter when the server persists (AOF, fsync on every
  write, or RDB); consumers wait for the server and go on.

Run a consumer as a process: ``python -m bloomedu.services.redis_dedup --port P
--name clicks --consumer c1``.  Taught in ``notebooks/11_one_filter_many_consumers.ipynb``;
fault tests (kill -9 a consumer, restart the server) in ``tests/test_redis_dedup.py``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import asdict, dataclass


from .redis_filter import RedisBackedFilter, positions_of, redis_offsets

__all__ = ["SharedDeduplicator", "ConsumerStats", "DEDUP_SCRIPT", "main"]

GROUP = "dedup"

# KEYS: input stream, output stream, then the filter's keys (its parts, or the BF key).
# ARGV: group, mode ("bits" or "bf"), k, part_bits, then per message its stream ID, its
# click ID and (mode "bits") the k Redis bit offsets of the click ID, counted over the parts.
DEDUP_SCRIPT = """
local group, mode = ARGV[1], ARGV[2]
local k, part_bits = tonumber(ARGV[3]), tonumber(ARGV[4])
local per = 2 + (mode == 'bits' and k or 0)
local answers, arg = {}, 5
for m = 1, (#ARGV - 4) / per do
  local message, click = ARGV[arg], ARGV[arg + 1]
  local new = 0
  if mode == 'bf' then
    new = redis.call('BF.ADD', KEYS[3], click)
  else
    for j = 1, k do
      local at = tonumber(ARGV[arg + 1 + j])
      local part = math.floor(at / part_bits)
      if redis.call('SETBIT', KEYS[3 + part], at - part * part_bits, 1) == 0 then new = 1 end
    end
  end
  if new == 1 then redis.call('XADD', KEYS[2], '*', 'id', click, 'message', message) end
  redis.call('XACK', KEYS[1], group, message)
  answers[m] = new
  arg = arg + per
end
return answers
"""


@dataclass
class ConsumerStats:
    """What one consumer did: messages processed (claimed ones included), passed, claimed."""

    consumer: str
    processed: int = 0
    passed: int = 0
    claimed: int = 0
    reconnects: int = 0


class SharedDeduplicator:
    """The keys of one shared deduplicator named ``name``, and the methods that use them.

    >>> from bloomedu.services.redis_server import RedisServer
    >>> from bloomedu import Click
    >>> article = [Click(id, user=0, ad=123, timestamp=0.0) for id in ["123", "456", "123", "789"]]
    >>> with RedisServer() as server:
    ...     dedup = SharedDeduplicator.create(server.client(), "clicks", expected_items=1000, fpp=0.001)
    ...     dedup.publish(article, done=True)
    ...     stats = dedup.consume("only-one")
    ...     stats.processed, stats.passed, dedup.passed_ids()
    (4, 3, ['123', '456', '789'])
    """

    def __init__(self, client, name: str, mode: str = "bits"):
        if mode not in ("bits", "bf"):
            raise ValueError(f"mode must be 'bits' (bloomedu's filter) or 'bf' (RedisBloom), got {mode!r}")
        self.client, self.name, self.mode = client, name, mode
        self.stream, self.output, self.done_key = (f"{{{name}}}:in", f"{{{name}}}:out",
                                                   f"{{{name}}}:done")
        if mode == "bits":
            self.filter = RedisBackedFilter.open(client, name)
            self.filter_keys = self.filter.keys
        else:
            self.filter, self.filter_keys = None, [f"{{{name}}}:bf"]
        self._script = client.register_script(DEDUP_SCRIPT)

    @classmethod
    def create(cls, client, name: str, expected_items: int, fpp: float, mode: str = "bits",
               part_bits: int = 2 ** 32) -> "SharedDeduplicator":
        """The stream, its consumer group and a filter sized for n = ``expected_items`` at p = ``fpp``
        (``BloomFilter.from_capacity``'s sizing, or ``BF.RESERVE`` with ``mode="bf"``)."""
        if mode == "bf":
            client.execute_command("BF.RESERVE", f"{{{name}}}:bf", repr(float(fpp)), expected_items)
        elif mode == "bits":
            RedisBackedFilter.from_capacity(client, name, expected_items, fpp, part_bits)
        client.xgroup_create(f"{{{name}}}:in", GROUP, id="0", mkstream=True)
        return cls(client, name, mode)

    # --- the producer ----------------------------------------------------------------------
    def publish(self, clicks, done: bool = False, chunk: int = 1000) -> None:
        """Append click messages to the stream (pipelined); ``done`` marks the end of the stream."""
        for start in range(0, len(clicks), chunk):
            pipe = self.client.pipeline(transaction=False)
            for click in clicks[start:start + chunk]:
                pipe.xadd(self.stream, {"id": click.id, "user": click.user, "ad": click.ad})
            pipe.execute()
        if done:
            self.client.set(self.done_key, 1)

    # --- a consumer -------------------------------------------------------------------------
    def _process(self, messages) -> int:
        """Run the script on a batch of (stream ID, fields) messages; how many passed."""
        ids = [message_id for message_id, _ in messages]
        clicks = [fields[b"id"] for _, fields in messages]
        if self.mode == "bits":
            offsets = redis_offsets(positions_of(self.filter.shape, clicks)).tolist()
            per_message = [[m, c, *o] for m, c, o in zip(ids, clicks, offsets)]
            k, part_bits = self.filter.num_hashes, self.filter.part_bits
        else:
            per_message, k, part_bits = [[m, c] for m, c in zip(ids, clicks)], 0, 1
        args = [GROUP, self.mode, k, part_bits] + [x for row in per_message for x in row]
        answers = self._script(keys=[self.stream, self.output] + self.filter_keys, args=args)
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
        Waits up to ``patience_s`` for a server that went away (a restart)."""
        import redis

        stats, batches, lost_since = ConsumerStats(consumer), 0, None
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
                lost_since = None
            except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError):
                lost_since = lost_since or time.monotonic()
                if time.monotonic() - lost_since > patience_s:
                    raise
                stats.reconnects += 1
                time.sleep(0.05)

    # --- what came out ----------------------------------------------------------------------
    def passed_ids(self) -> list[str]:
        """The click IDs that passed, in the order they passed."""
        return [fields[b"id"].decode() for _, fields in self.client.xrange(self.output)]

    def spawn(self, port: int, consumer: str, **options) -> subprocess.Popen:
        """Start a consumer as a separate process (``python -m bloomedu.services.redis_dedup``)."""
        command = [sys.executable, "-m", "bloomedu.services.redis_dedup", "--port", str(port),
                   "--name", self.name, "--mode", self.mode, "--consumer", consumer]
        for option, value in options.items():
            command += [f"--{option.replace('_', '-')}", str(value)]
        return subprocess.Popen(command, stdout=subprocess.PIPE, text=True, start_new_session=True)


def main(argv: list[str] | None = None) -> int:
    """One consumer process: prints its :class:`ConsumerStats` as JSON when the stream is done."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--consumer", required=True)
    parser.add_argument("--mode", default="bits", choices=["bits", "bf"])
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--claim-idle-ms", type=int, default=1000)
    parser.add_argument("--hold-after", type=int, default=None)
    args = parser.parse_args(argv)
    import redis

    client = redis.Redis(host="127.0.0.1", port=args.port)
    dedup = SharedDeduplicator(client, args.name, args.mode)
    stats = dedup.consume(args.consumer, batch=args.batch, claim_idle_ms=args.claim_idle_ms,
                          hold_after=args.hold_after)
    print(json.dumps(asdict(stats)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
