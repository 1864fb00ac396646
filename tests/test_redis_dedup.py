"""The shared deduplicator, with real consumer processes and real faults.

Each test checks the exact outcome: every distinct click ID of the stream passes exactly once
and every message is acknowledged.  That is exact, not statistical, because each test first
checks that no click ID of its seeded stream can be a false positive (no ID's bits are all
bits of other IDs), whatever order the consumers take the messages in.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from bloomedu import BloomFilter, click_stream
from bloomedu.compat.redisbloom import RedisBloomFilter, hash_pairs
from bloomedu.services.redis_dedup import GROUP, SharedDeduplicator
from bloomedu.services.redis_filter import STAMP_BYTES, RedisBackedFilter, positions_of
from bloomedu.services.redis_server import RedisServer
from redis_support import covered_by_others, start

N, P = 3000, 1e-5


def stream(seed):
    clicks = click_stream(N, rate=2000.0, double_click_rate=0.05, seed=seed)
    distinct = list(dict.fromkeys(c.id for c in clicks))
    assert len(distinct) < len(clicks)  # there are double clicks to drop
    return clicks, distinct


def assert_no_false_positive_possible(mode, distinct):
    if mode == "bits":
        positions = positions_of(BloomFilter.from_capacity(N, P), distinct)
    else:  # BF.RESERVE {name}:bf P N: one sub-filter, big enough for every ID
        link = RedisBloomFilter(P, N).links[0]
        positions = link.positions_many(*hash_pairs([i.encode() for i in distinct]))
    assert not covered_by_others(positions).any()


def assert_exact(dedup, distinct):
    passed = dedup.passed_ids()
    assert len(passed) == len(set(passed))  # no duplicate passed twice
    assert set(passed) == set(distinct)      # and no click was lost
    assert dedup.finished()
    pending = dedup.client.xpending(dedup.stream, GROUP)
    assert pending["pending"] == 0


def wait(processes, timeout=120):
    outputs = []
    for process in processes:
        out, _ = process.communicate(timeout=timeout)
        assert process.returncode == 0, out
        outputs.append(json.loads(out.strip().splitlines()[-1]))
    return outputs


def wait_for(condition, timeout=60.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


# A consumer process that waits as long as it takes: it blocks on the stream (XREADGROUP BLOCK)
# until the test unblocks it, and never claims a message from a slow peer, so how many messages
# each one processes does not depend on how fast the machine is.
PATIENT_CONSUMER = """
import json, sys
from dataclasses import asdict
import redis
from bloomedu.services.redis_dedup import SharedDeduplicator
port, mode, name = int(sys.argv[1]), sys.argv[2], sys.argv[3]
client = redis.Redis(host="127.0.0.1", port=port, client_name=name)
stats = SharedDeduplicator(client, "clicks", mode).consume(
    name, batch=50, block_ms=600_000, claim_idle_ms=600_000)
print(json.dumps(asdict(stats)), flush=True)
"""


def blocked_readers(client) -> dict[str, int]:
    """The named connections blocked in XREADGROUP right now: name -> client id."""
    return {c["name"]: int(c["id"]) for c in client.client_list()
            if c.get("cmd") == "xreadgroup" and "b" in c.get("flags", "")}


@pytest.mark.parametrize("mode", ["bits", "bf"])
def test_three_consumer_processes_pass_each_click_once(mode):
    """Three consumers join the group and block on the empty stream before it is published;
    the first three messages are then published one at a time.  Redis gives a new message to
    the reader that has been blocked longest, so each of the three gets one: they share the
    stream whatever the machine's load."""
    clicks, distinct = stream(seed=11)
    assert_no_false_positive_possible(mode, distinct)
    with start(module=(mode == "bf")) as server:
        dedup = SharedDeduplicator.create(server.client(), "clicks", N, P, mode=mode)
        names = [f"c{i}" for i in range(3)]
        consumers = [subprocess.Popen([sys.executable, "-c", PATIENT_CONSUMER, str(server.port), mode,
                                       name], stdout=subprocess.PIPE, text=True, start_new_session=True)
                     for name in names]
        try:
            wait_for(lambda: sorted(blocked_readers(dedup.client)) == names, timeout=120)
            for first in clicks[:3]:
                dedup.publish([first])  # one round trip each: Redis serves a reader in between
            dedup.publish(clicks[3:], done=True)
            wait_for(dedup.finished, timeout=120)
            while any(c.poll() is None for c in consumers):  # wake the readers still blocked
                for reader in blocked_readers(dedup.client).values():
                    dedup.client.client_unblock(reader)
                time.sleep(0.02)
            stats = wait(consumers)
        finally:
            for consumer in consumers:
                if consumer.poll() is None:
                    consumer.kill()
                    consumer.wait(10)
        assert_exact(dedup, distinct)
        assert sum(s["processed"] for s in stats) == len(clicks) and sum(s["claimed"] for s in stats) == 0
        assert sum(s["passed"] for s in stats) == len(distinct)
        assert all(s["processed"] > 0 for s in stats), stats  # they really shared the stream
        if mode == "bits":  # the shared filter is exactly a BloomFilter of the distinct IDs
            bloom = BloomFilter.from_capacity(N, P)
            bloom.add_many(distinct)
            assert RedisBackedFilter.open(dedup.client, "clicks").to_filter() == bloom


@pytest.mark.parametrize("mode", ["bits", "bf"])
def test_a_consumer_killed_mid_stream_loses_nothing(mode):
    """The victim processes three batches, reads a fourth and is killed with SIGKILL before it
    acknowledges it; the survivors claim its pending messages (XAUTOCLAIM) and finish.

    Every count is exact, however slow each process is: the victim's held batch is aged an hour
    (XCLAIM ... IDLE, as if it had died an hour ago), and the survivors claim only what has been
    idle ten minutes, so they claim that batch, each message of it once, and never a message one
    of them has read and not yet acknowledged."""
    clicks, distinct = stream(seed=16)
    assert_no_false_positive_possible(mode, distinct)
    batch, held_after = 200, 3
    done = batch * held_after  # processed by the victim: its first three batches
    passed_by_victim = len(dict.fromkeys(c.id for c in clicks[:done]))
    with start(module=(mode == "bf")) as server:
        dedup = SharedDeduplicator.create(server.client(), "clicks", N, P, mode=mode)
        dedup.publish(clicks, done=True)
        victim = dedup.spawn(server.port, "victim", batch=batch, hold_after=held_after)

        def held():  # the stream IDs the victim has read and not acknowledged
            rows = dedup.client.xpending_range(dedup.stream, GROUP, "-", "+", 10 * batch,
                                               consumername="victim")
            return [row["message_id"] for row in rows]

        # Three batches processed (exactly their passes are out) and the fourth read but held:
        # the output grows only while the victim processes, and after its third batch it has
        # nothing pending until it reads the fourth.
        wait_for(lambda: dedup.client.xlen(dedup.output) == passed_by_victim and len(held()) == batch)
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)
        assert victim.returncode == -signal.SIGKILL
        assert dedup.client.xlen(dedup.output) == passed_by_victim
        an_hour, ten_minutes = 3_600_000, 600_000
        aged = dedup.client.xclaim(dedup.stream, GROUP, "victim", 0, held(), idle=an_hour,
                                   justid=True)
        assert len(aged) == batch
        survivors = [dedup.spawn(server.port, f"s{i}", batch=100, claim_idle_ms=ten_minutes)
                     for i in range(2)]
        stats = wait(survivors)
        assert sum(s["claimed"] for s in stats) == batch  # the held batch, each message once
        # Each message the victim did not process is processed once: read or claimed.
        assert sum(s["processed"] for s in stats) == len(clicks) - done
        assert sum(s["passed"] for s in stats) == len(distinct) - passed_by_victim
        assert_exact(dedup, distinct)


def test_a_consumer_killed_at_any_moment_loses_nothing():
    """The doomed consumer is killed wherever it is in its work, a batch half-read or not; the
    rest of the stream is published only then, so it is still running when the kill comes,
    however fast it is."""
    clicks, distinct = stream(seed=13)
    assert_no_false_positive_possible("bits", distinct)
    later = 2 * len(clicks) // 3
    with start() as server:
        dedup = SharedDeduplicator.create(server.client(), "clicks", N, P)
        dedup.publish(clicks[:later])
        doomed = dedup.spawn(server.port, "doomed", batch=20)
        wait_for(lambda: dedup.client.xlen(dedup.output) > len(distinct) // 3)
        doomed.send_signal(signal.SIGKILL)
        doomed.wait(10)
        assert doomed.returncode == -signal.SIGKILL
        dedup.publish(clicks[later:], done=True)
        wait([dedup.spawn(server.port, "rescuer", claim_idle_ms=100)])
        assert_exact(dedup, distinct)


def test_the_server_killed_and_restarted_with_aof_keeps_the_filter():
    """kill -9 of the server while two consumers run; it comes back from its append-only file
    (fsync on every write), the consumers reconnect, and nothing is lost or passed twice.

    The last third of the stream is published only after the restart, so work is left to do
    after it however fast the consumers are."""
    clicks, distinct = stream(seed=14)
    assert_no_false_positive_possible("bits", distinct)
    later = 2 * len(clicks) // 3
    assert set(c.id for c in clicks[later:]) - set(c.id for c in clicks[:later])  # new IDs later
    with start(persistence="aof") as server:
        dedup = SharedDeduplicator.create(server.client(), "clicks", N, P)
        dedup.publish(clicks[:later])
        consumers = [dedup.spawn(server.port, f"c{i}", batch=20, claim_idle_ms=300) for i in range(2)]
        wait_for(lambda: dedup.client.xlen(dedup.output) > len(distinct) // 3)
        crashed = server.pid
        server.kill()
        restarted = SharedDeduplicator(server.start().client(), "clicks")
        assert server.pid != crashed
        assert len(restarted.passed_ids()) > len(distinct) // 3  # the AOF kept what had passed
        restarted.publish(clicks[later:], done=True)
        wait(consumers)
        assert_exact(dedup, distinct)
        bloom = BloomFilter.from_capacity(N, P)
        bloom.add_many(distinct)
        assert RedisBackedFilter.open(dedup.client, "clicks").to_filter() == bloom


@pytest.mark.parametrize("mode", ["bits", "bf"])
def test_a_restart_from_an_rdb_snapshot_keeps_the_filter(mode):
    clicks, distinct = stream(seed=15)
    assert_no_false_positive_possible(mode, distinct)
    half = len(clicks) // 2
    with start(persistence="rdb", module=(mode == "bf")) as server:
        dedup = SharedDeduplicator.create(server.client(), "clicks", N, P, mode=mode)
        dedup.publish(clicks[:half], done=True)  # "done" for now: consume returns at its end
        first = dedup.consume("c1")
        dedup.client.delete(dedup.done_key)
        before = dump(dedup)
        server.stop()  # SIGTERM: Redis writes its snapshot, then exits
        server.start()
        dedup = SharedDeduplicator(server.client(), "clicks", mode)
        assert dump(dedup) == before
        dedup.publish(clicks[half:], done=True)
        second = dedup.consume("c2")
        assert first.processed + second.processed == len(clicks)
        assert_exact(dedup, distinct)


def dump(dedup):
    if dedup.mode == "bits":
        return dedup.filter.to_bytes()
    pairs, iterator = [], 0
    while True:
        iterator, data = dedup.client.execute_command("BF.SCANDUMP", dedup.filter_keys[0], iterator)
        if not iterator:
            return pairs
        pairs.append((iterator, data))


def test_bad_mode_is_refused():
    with pytest.raises(ValueError, match="mode must be 'bits'"):
        SharedDeduplicator(None, "x", mode="hll")


def test_the_helper_starts_servers_that_really_persist(tmp_path):
    with RedisServer(persistence="aof", directory=tmp_path) as server:
        server.client().set("k", "v")
        server.kill()
        server.start()
        assert server.client().get("k") == b"v"
    assert tmp_path.exists()  # a directory we gave is ours to keep


def test_int_click_ids_are_ints_on_every_path():
    """Click(123) is stored as the int 123, not as "123": stored as text, 123 would not be in the filter."""
    from bloomedu.workloads.clicks import Click

    clicks = [Click(i, user=0, ad=1, timestamp=0.0) for i in (123, 456, 123)] + \
        [Click("123", user=0, ad=1, timestamp=0.0), Click(b"\x00\xff", user=0, ad=1, timestamp=0.0)]
    for mode in ("bits", "bf"):
        with start(module=(mode == "bf")) as server:
            dedup = SharedDeduplicator.create(server.client(), "kinds", 1000, 1e-6, mode=mode)
            dedup.publish(clicks, done=True)
            assert dedup.consume("c").passed == 4
            assert dedup.passed_ids() == [123, 456, "123", b"\x00\xff"]
            if mode == "bits":
                assert 123 in dedup.filter and "123" in dedup.filter and "456" not in dedup.filter
                bloom = BloomFilter.from_capacity(1000, 1e-6)
                bloom.add_many([123, 456, "123", b"\x00\xff"])
                assert dedup.filter.to_filter() == bloom
            else:  # RedisBloom hashes the bytes BloomFilter hashes: an int's 8 bytes
                client = dedup.client
                assert client.execute_command("BF.EXISTS", "{kinds}:bf", (456).to_bytes(8, "little"))
                assert not client.execute_command("BF.EXISTS", "{kinds}:bf", "456")


def test_a_consumer_with_a_wrong_password_stops_at_once_and_says_why():
    """A refused password stops the consumer at once with a message, instead of 70 s of retries."""
    with start(password="right-one") as server:
        dedup = SharedDeduplicator.create(server.client(), "clicks", 1000, 0.001)
        good = server.url
        wrong = good.replace("right-one", "wrong-one")
        process = dedup.spawn(wrong, "c1")
        out, err = process.communicate(timeout=60)
        assert process.returncode == 2 and "refused the password" in err and "wrong-one" not in err
        assert "right-one" not in " ".join(process.args)  # the URL went in the environment
        dedup.publish(click_stream(50, seed=3), done=True)
        stats = wait([dedup.spawn(good, "c2")])
        assert stats[0]["processed"] == 50


def test_an_rdb_rollback_delivers_at_least_once_and_keyed_by_id_exactly_once():
    """A restart from a snapshot older than the last writes does their work again.
    A reader tailing the output sees some click IDs twice (with new stream IDs), never misses
    one, and applying them keyed by click ID gives each distinct ID once."""
    clicks, distinct = stream(seed=17)
    assert_no_false_positive_possible("bits", distinct)
    half = len(clicks) // 2
    with start(persistence="rdb") as server:
        dedup = SharedDeduplicator.create(server.client(), "clicks", N, P)
        dedup.publish(clicks, done=False)
        seen, last = [], "-"

        def read_new():  # the reader: everything after the last entry it read
            nonlocal last
            entries = dedup.client.xrange(dedup.output, min=last)
            for entry_id, fields in entries:
                seen.append(fields[b"id"].decode())
            if entries:
                last = "(" + entries[-1][0].decode()

        messages = dedup.client.xreadgroup(GROUP, "c1", {dedup.stream: ">"}, count=half)[0][1]
        dedup._process(messages[:half // 2])
        dedup.client.save()                      # the snapshot: a quarter of the stream done
        dedup._process(messages[half // 2:])     # half done; the reader reads it all
        read_new()
        assert len(seen) == len(set(seen)) > 0
        server.kill()                            # the host dies: writes since the snapshot are lost
        server.start()
        dedup = SharedDeduplicator(server.client(), "clicks")
        dedup.client.set(dedup.done_key, 1)
        dedup.consume("c2", claim_idle_ms=0)     # the rolled-back work is claimed and done again
        read_new()
        assert set(seen) == set(distinct)                   # none missing
        assert len(seen) > len(distinct)                    # some twice: at least once
        assert sorted(dict.fromkeys(seen)) == sorted(distinct)
        assert dedup.passed_once() == dedup.passed_ids()    # the server's own output: once each
        assert sorted(dedup.passed_once()) == sorted(distinct)


def lose(dedup, fault) -> str:
    """Lose part of the filter as eviction, another client's DEL or its SET would; the key lost."""
    client = dedup.client
    if dedup.mode == "bf":
        client.delete(dedup.filter_keys[0])
        return dedup.filter_keys[0]
    part, size = dedup.filter.keys[1], dedup.filter.part_sizes[1]
    if fault == "deleted":
        client.delete(part)
    else:  # truncated: the first half of its bytes kept, the rest gone
        client.set(part, client.getrange(part, 0, size // 2 - 1))
    return part


@pytest.mark.parametrize("mode, fault", [("bits", "deleted"), ("bits", "truncated"), ("bf", "deleted")])
def test_a_lost_filter_stops_the_consumer_and_passes_no_duplicate(mode, fault):
    """Every click is sent again after part of the filter was lost: the consumer stops at its
    first batch, naming the lost key, with nothing of that batch passed or acknowledged.
    Restored from the output stream, the filter is the one that was lost, and a consumer
    started again drops every click sent again."""
    clicks, distinct = stream(seed=18)
    assert_no_false_positive_possible(mode, distinct)
    part_bits = 8192 if mode == "bits" else None  # several parts, so one of them is lost
    batch = 100
    with start(module=(mode == "bf")) as server:
        dedup = SharedDeduplicator.create(server.client(), "clicks", N, P, mode=mode,
                                          part_bits=part_bits)
        dedup.publish(clicks, done=True)
        assert dedup.consume("c1").passed == len(distinct)
        lost = lose(dedup, fault)
        dedup.publish(clicks, done=True)  # every click again: each one a duplicate
        stopped = dedup.spawn(server.port, "c2", batch=batch)
        _, err = stopped.communicate(timeout=60)
        assert dedup.client.xlen(dedup.output) == len(distinct)  # no duplicate passed
        assert stopped.returncode == 3 and f"{lost} " in err and "FilterLost" not in err, err
        pending = dedup.client.xpending(dedup.stream, GROUP)
        assert pending["pending"] == batch  # the refused batch: read, not acknowledged
        if mode == "bits":  # a restore of another size is refused before it deletes anything
            with pytest.raises(ValueError, match="give the values create was given"):
                SharedDeduplicator.restore(dedup.client, "clicks", 2 * N, P, part_bits=part_bits)
            assert dedup.client.strlen(dedup.filter.keys[0]) == dedup.filter.part_sizes[0] + STAMP_BYTES
        restored = SharedDeduplicator.restore(dedup.client, "clicks", N, P, mode=mode,
                                              part_bits=part_bits)
        if mode == "bits":
            bloom = BloomFilter.from_capacity(N, P)
            bloom.add_many(distinct)
            assert restored.filter.to_filter() == bloom
        stats = wait([restored.spawn(server.port, "c3", batch=batch, claim_idle_ms=0)])[0]
        assert (stats["processed"], stats["claimed"], stats["passed"]) == (len(clicks), batch, 0)
        assert_exact(restored, distinct)


@pytest.mark.parametrize("mode", ["bits", "bf"])
def test_a_restore_from_an_output_that_lost_entries_is_refused(mode):
    """The filter is made again only from an output that holds every ID that passed."""
    clicks = click_stream(200, seed=19)
    with start(module=(mode == "bf")) as server:
        dedup = SharedDeduplicator.create(server.client(), "clicks", 1000, 1e-4, mode=mode)
        dedup.publish(clicks, done=True)
        passed = dedup.consume("c1").passed
        first = dedup.client.xrange(dedup.output, count=1)[0][0]
        dedup.client.xdel(dedup.output, first)
        with pytest.raises(ValueError, match=f"holds {passed - 1} of the {passed} entries"):
            SharedDeduplicator.restore(dedup.client, "clicks", 1000, 1e-4, mode=mode)
        dedup.client.delete(dedup.output)
        with pytest.raises(ValueError, match="is gone while 200 messages were acknowledged"):
            SharedDeduplicator.restore(dedup.client, "clicks", 1000, 1e-4, mode=mode)
        assert dedup.client.exists(*dedup.filter_keys) == len(dedup.filter_keys)  # left as it was
