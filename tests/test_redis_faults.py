"""Faults, each against a real server on a loopback port: a connection dropped in the middle of
a call, eight processes creating one filter, keys another program keeps, a server out of memory,
passwords, a planted module, parts evicted, deleted or cut short; and the keys' edges: keyed and scheme-1 filters, bytes-like
batches, a filter far larger than this machine's memory.

Each test would fail on a naive design: a Lua loop that re-sends a whole call, an HSETNX-then-HSET
creation, a shared folder for the module's copy, retries on a refused password.
"""

from __future__ import annotations

import multiprocessing
import os
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
import redis

from bloomedu import BloomFilter
from bloomedu.core.keyed import KeyedBloomFilter
from bloomedu.services import redis_calls, redis_install
from bloomedu.core.filter import positions
from bloomedu.core.hashing import hashed_batches
from bloomedu.services.redis_filter import (STAMP_BYTES, AnswersLost, FilterLost, NotReplicated,
                                            RedisBackedFilter, positions_of)
from bloomedu.services.redis_connect import RedisAuthError, connect
from bloomedu.services.redis_server import RedisServer
from redis_support import DroppingProxy, plain_client, plain_server, start  # noqa: F401


# --- a retry never answers "seen" for a key the same call made new --------------------------------
@pytest.mark.parametrize("mode", ["after_request", "before_request"])
def test_a_dropped_connection_never_turns_new_keys_into_seen_ones(plain_server, mode):
    plain_server.client().flushall()
    proxy = DroppingProxy(plain_server.port)
    try:
        client = redis.Redis(host="127.0.0.1", port=proxy.port)  # redis-py's own retries, as a user's
        shared = RedisBackedFilter.create(client, "retry", 200_000, 7)
        keys = [f"new-{i}" for i in range(10_000)]
        shared.add_many(["warm-up"])
        proxy.arm(mode, when=b"MULTI")  # the drop hits one of add_many's transactions
        if mode == "after_request":  # applied, reply lost: an error that says so, never "seen"
            with pytest.raises(AnswersLost, match="which of them were new was lost"):
                shared.add_many(keys)
            assert shared.contains_many(keys[:4096]).all()
        else:                        # never reached the server: sent again, answers exact
            assert shared.add_many(keys).all()
        assert proxy.dropped == 1
        assert shared.add_many(keys[:4096]).sum() == 0  # the chunk really is in, once
        client.close()
    finally:
        proxy.close()


# --- create is one atomic step --------------------------------------------------------------------
def _create_many(port, start_event, results):
    client = redis.Redis(host="127.0.0.1", port=port)
    start_event.wait()
    uids = []
    for _ in range(35):
        try:
            uids.append(RedisBackedFilter.create(client, "race", 4096, 3).uid)
        except Exception as error:  # collected: the parent shows every failure
            uids.append(f"{type(error).__name__}: {error}")
    results.put(uids)


def test_eight_processes_creating_one_name_all_get_the_same_filter(plain_server):
    plain_server.client().flushall()
    context = multiprocessing.get_context("spawn")
    start_event, results = context.Event(), context.Queue()
    workers = [context.Process(target=_create_many, args=(plain_server.port, start_event, results))
               for _ in range(8)]
    for worker in workers:
        worker.start()
    start_event.set()
    uids = [uid for _ in workers for uid in results.get(timeout=120)]
    for worker in workers:
        worker.join(60)
    assert len(uids) == 280 and len(set(uids)) == 1, sorted(set(uids))[:3]
    assert RedisBackedFilter.open(plain_server.client(), "race").uid == uids[0]


# --- keys another program keeps are refused and left unchanged ------------------------------------
def test_a_string_another_program_keeps_is_refused_and_unchanged(plain_client):
    theirs = bytes(range(256)) * 16
    plain_client.set("{clicks}:bits:0", theirs)
    with pytest.raises(ValueError, match=r"\{clicks\}:bits:0 holds a string that is not this"):
        RedisBackedFilter.create(plain_client, "clicks", 10_000, 4)
    assert plain_client.get("{clicks}:bits:0") == theirs
    assert not plain_client.exists("{clicks}:meta")


def test_a_description_of_another_program_is_refused(plain_client):
    plain_client.hset("{other}:meta", mapping={"owner": "someone else"})
    plain_client.lpush("{listy}:meta", "x")
    for name in ("other", "listy"):
        with pytest.raises(ValueError, match="is not (a|this)"):
            RedisBackedFilter.create(plain_client, name, 10_000, 4)
        with pytest.raises(ValueError):
            RedisBackedFilter.open(plain_client, name)
    assert plain_client.hgetall("{other}:meta") == {b"owner": b"someone else"}


def test_a_filter_deleted_or_made_again_under_its_name_is_an_error_not_absent(plain_client):
    first = RedisBackedFilter.create(plain_client, "again", 10_000, 4)
    first.add_many(["a", "b"])
    first.delete()
    with pytest.raises(FilterLost, match="is gone"):
        first.contains_many(["a"])
    RedisBackedFilter.create(plain_client, "again", 10_000, 4)
    with pytest.raises(FilterLost, match="another filter's"):
        "a" in first  # noqa: B015
    with pytest.raises(FilterLost):
        first.add("c")


# --- reads work at maxmemory under noeviction -----------------------------------------------------
def test_reads_work_when_the_server_is_full_and_writes_change_nothing():
    server = start(extra_args=("--maxmemory", "8mb", "--maxmemory-policy", "noeviction"))
    try:
        client = server.client()
        shared = RedisBackedFilter.create(client, "full", 400_000, 5)  # 4 parts, read both ways
        keys = [f"k{i}" for i in range(3000)]
        shared.add_many(keys)
        with pytest.raises(redis.exceptions.OutOfMemoryError):  # small keys: really full
            for i in range(100_000):
                client.set(f"filler-{i}", b"x" * 1000)
        before = shared.to_bytes()
        assert shared.contains_many(keys).all() and "k1" in shared
        probes = [f"absent-{i}" for i in range(2000)]
        bloom = BloomFilter.from_bytes(before)
        assert shared.contains_many(probes).tolist() == bloom.contains_many(probes).tolist()
        with pytest.raises(redis.exceptions.OutOfMemoryError, match="no key of this chunk"):
            shared.add_many(probes)
        assert shared.to_bytes() == before
        client.close()
    finally:
        server.close()


# --- passwords and URLs, and a fast clear failure on a wrong one ----------------------------------
def test_a_password_protected_server_and_a_wrong_password():
    server = start(password="s3cret-pw")
    try:
        assert "s3cret-pw" not in " ".join(server.command())  # not on the command line (ps)
        client = connect(server.url)
        RedisBackedFilter.create(client, "locked", 1000, 3).add("x")
        assert RedisBackedFilter.open(server.client(), "locked").add("x") is False
        for wrong in (dict(port=server.port, password="nope"), dict(port=server.port)):
            with pytest.raises(RedisAuthError, match=f"127.0.0.1:{server.port}.*password"):
                connect(**wrong)
        no_password = redis.Redis(host="127.0.0.1", port=server.port)
        with pytest.raises(redis.AuthenticationError):
            RedisBackedFilter.create(no_password, "locked", 1000, 3)
        client.close()
    finally:
        server.close()


def test_a_server_that_wants_another_password_fails_at_once_not_after_twenty_seconds(tmp_path):
    """A server whose own password the helper does not know (set behind its back) used to be
    retried as 'not up yet' until 'did not start'; now it is a RedisAuthError."""
    with pytest.raises(RedisAuthError, match="refused this server's own password"):
        RedisServer(extra_args=("--requirepass", "not-ours"), directory=tmp_path)


# --- the module copy goes into a private folder, never a shared one -------------------------------
def test_a_module_copy_is_made_in_a_private_folder_and_a_planted_file_is_never_used(
        tmp_path, monkeypatch):
    module = tmp_path / "lib" / "redisbloom.so"
    module.parent.mkdir()
    module.write_bytes(b"\x7fELF the real module")
    module.chmod(0o644)
    shared_tmp = tmp_path / "tmp"
    shared_tmp.mkdir()
    planted = shared_tmp / f"bloomedu-{os.getuid()}-bin" / "redisbloom.so"  # the old fixed path
    planted.parent.mkdir()
    planted.write_bytes(b"\x7fELF a planted one!!")  # the same size, as the old check compared
    planted.chmod(0o755)
    monkeypatch.setattr(tempfile, "tempdir", str(shared_tmp))
    monkeypatch.setattr(redis_install, "_PRIVATE_FOLDER", [])
    monkeypatch.setattr(redis_install, "_PRIVATE_COPIES", {})
    monkeypatch.setattr(Path, "chmod", lambda self, mode: (_ for _ in ()).throw(PermissionError()))
    usable = redis_install._executable(module)
    assert usable.read_bytes() == b"\x7fELF the real module" and os.access(usable, os.X_OK)
    folder = usable.parent
    assert folder != planted.parent and folder.name.startswith("bloomedu-bin-")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and folder.stat().st_uid == os.getuid()
    assert redis_install._executable(module) == usable  # made once per process, then reused
    os.chmod(folder, 0o777)  # someone opened it up: it is no longer used
    with pytest.raises(redis_install.RedisUnavailable, match="no longer a private folder"):
        redis_install._PRIVATE_COPIES.clear()
        redis_install._executable(module)


# --- one rule for keys, the same bits as BloomFilter ----------------------------------------------
def test_an_int_and_its_string_are_two_keys_as_in_bloomfilter(plain_client):
    shared = RedisBackedFilter.create(plain_client, "kinds", 100_000, 7)
    bloom = BloomFilter(100_000, 7)
    for f in (shared, bloom):
        f.add(123)
    assert (123 in shared, "123" in shared, b"123" in shared) == (True, False, False)
    assert ("123" in bloom) is False
    shared.add_many([np.uint16(7), "7", b"7", 2 ** 64 - 1])
    bloom.add_many([np.uint16(7), "7", b"7", -1])  # -1 and 2**64 - 1: one key, as in numpy
    assert shared.to_filter() == bloom


def test_a_bytes_like_batch_is_refused_and_one_bytes_like_key_is_its_bytes(plain_client):
    shared = RedisBackedFilter.create(plain_client, "bytes-like", 10_000, 4)
    for batch in (bytearray(b"ab"), memoryview(b"ab"), b"ab", "ab", 97):
        with pytest.raises(TypeError, match="keys must be an iterable of keys"):
            shared.add_many(batch)
    assert shared.to_filter().bits_set() == 0  # nothing was added: not the ints 97 and 98
    assert shared.add(bytearray(b"ab")) and b"ab" in shared and 97 not in shared


def test_keyed_and_scheme_1_filters_are_refused_by_from_filter(plain_client):
    keyed = KeyedBloomFilter(4096, 3, secret=b"0123456789abcdef")
    keyed.add("x")
    old = BloomFilter(4096, 3)
    old.HASHING = 1  # what from_bytes gives for bytes written by scheme 1
    for bloom in (keyed, old):
        with pytest.raises(TypeError, match="bloom must be a BloomFilter of hashing scheme 2"):
            RedisBackedFilter.from_filter(plain_client, "moved", bloom)
    assert not plain_client.exists("{moved}:meta")


def test_a_filter_far_larger_than_memory_needs_no_local_copy_for_its_positions():
    """2^40 bits is 128 GiB: positions come from bloomedu.core.filter.positions, never from a
    local BloomFilter of that size (a server holds such a filter whole, from create on)."""
    huge = RedisBackedFilter(None, "huge", 2 ** 40, 7, uid="u")
    assert huge.num_parts == 257  # parts of 2^32 - 512 bits, each followed by its stamp
    found = positions_of(huge, ["a", "b", 3])
    assert found.shape == (3, 7) and found.max() < 2 ** 40
    assert found.tolist() == [positions(*next(hashed_batches([key], 7, 1)), num_bits=2 ** 40,
                                        num_hashes=7).T[0].tolist() for key in ["a", "b", 3]]


# --- bits that disappear under the description: an error, never "absent" -------------------------
def _filled(client, name="lossy", keys=5000):
    shared = RedisBackedFilter.create(client, name, 2 ** 20, 5, part_bits=2 ** 16)  # 16 parts
    added = [f"ack-{i}" for i in range(keys)]
    assert shared.add_many(added).sum() > keys - 5
    return shared, added


def _every_call_says_lost(shared, added, description_may_go=False):
    """Every call raises FilterLost for the lost parts (or, with ``description_may_go``, for a
    description lost with them: either way no key is called absent)."""
    lost = "evicted .* deleted or written by another program"
    with pytest.raises(FilterLost, match=lost + ("|its description .* is gone" if description_may_go else "")):
        shared.contains_many(added)
    with pytest.raises(FilterLost):
        shared.add_many(added[:100])
    with pytest.raises(FilterLost):
        shared.to_filter()


@pytest.mark.parametrize("harm", ["deleted", "cut short", "written over whole"])
def test_a_part_deleted_cut_short_or_written_over_is_an_error_never_absent(plain_client, harm):
    shared, added = _filled(plain_client)
    part = shared.keys[5]
    bits = plain_client.get(part)
    if harm == "deleted":
        plain_client.delete(part)
    elif harm == "cut short":
        plain_client.set(part, bits[:len(bits) // 3])
    else:  # the same length, its bits kept: only the stamp tells it is not this filter's
        plain_client.set(part, bits[:-STAMP_BYTES] + b"someone else's".ljust(STAMP_BYTES))
    _every_call_says_lost(shared, added)


def _evict_parts(client, cache, shared) -> bool:
    """Another program's cache traffic until a part is evicted; True if the description stayed.

    The server's LRU clock counts seconds: the parts are left idle until it has ticked, and the
    description is touched before every ten cache entries, so the parts are the oldest keys
    (eviction samples a few keys: now and then it takes the description all the same)."""
    deadline = time.monotonic() + 10
    while client.object("idletime", shared.keys[0]) < 1:  # not a touch: OBJECT IDLETIME
        assert time.monotonic() < deadline
    for batch in range(2000):  # at most 40 MB of cache entries; it stops once a part is gone
        with cache.pipeline(transaction=False) as pipe:
            pipe.hget(shared.meta_key, "uid")  # the description stays in use
            for i in range(10):
                pipe.set(f"cache-{batch}-{i}", b"v" * 2000)
            pipe.execute()
        if client.exists(*shared.keys) < shared.num_parts:
            return bool(client.exists(shared.meta_key))
    raise AssertionError("no part was evicted")


def test_parts_evicted_by_another_programs_traffic_are_an_error_never_absent():
    """Under allkeys-lru a cache's traffic evicts parts; the description stays because every
    call touches it.  The stamps tell: FilterLost, never an acknowledged key called absent."""
    for attempt in range(4):  # a run whose description was evicted too is another scenario
        server = start(extra_args=("--maxmemory", "6mb", "--maxmemory-policy", "allkeys-lru"))
        try:
            client, cache = server.client(), server.client()
            shared, added = _filled(client)
            if _evict_parts(client, cache, shared):
                # the parts' replies count in used memory, so the first call may evict the
                # description too (seen once in a fresh make test): FilterLost all the same
                _every_call_says_lost(shared, added, description_may_go=True)
                return
            with pytest.raises(FilterLost, match="is gone"):
                shared.contains_many(added)
        finally:
            server.close()
    raise AssertionError("the description was evicted with the parts in every run")


# --- a node restarted from an older snapshot: an error for every handle that saw more -------------
def test_a_restart_from_an_older_snapshot_is_an_error_never_absent():
    """Keys added after the last SAVE are gone after kill -9 and a restart from the snapshot;
    the description (its uid unchanged) came back with them.  Its write count is behind what
    the handles saw: FilterLost, for the writer and for a reader in another process alike."""
    server = start(persistence="rdb")
    try:
        client = server.client()
        shared = RedisBackedFilter.create(client, "snapshot", 2 ** 18, 5, part_bits=2 ** 15)
        before = [f"saved-{i}" for i in range(1000)]
        shared.add_many(before)
        client.save()
        after = [f"unsaved-{i}" for i in range(5000)]
        assert shared.add_many(after).sum() > 4990
        reader = RedisBackedFilter.open(server.client(), "snapshot")
        assert reader.contains_many(after).all()
        server.kill()
        server.start()
        for handle in (shared, reader):
            with pytest.raises(FilterLost, match="older snapshot"):
                handle.contains_many(after)
        with pytest.raises(FilterLost, match="older snapshot"):
            shared.add_many(["one more"])
        with pytest.raises(FilterLost, match="older snapshot"):
            shared.to_filter()
        fresh = RedisBackedFilter.open(server.client(), "snapshot")  # knows nothing newer
        assert fresh.contains_many(before).all()
        client.close()
    finally:
        server.close()


# --- replacing and deleting a filter: one step as far as readers can tell -------------------------
def _sixty_four_parts(client, name):
    shared = RedisBackedFilter.create(client, name, 64 * 4096, 5, part_bits=4096)
    old = [f"old-{i}" for i in range(3000)]
    shared.add_many(old)
    replacement = BloomFilter(64 * 4096, 5)
    new = [f"new-{i}" for i in range(3000)]
    replacement.add_many(new)
    return shared, old, replacement, new


def test_replacing_a_filters_bits_is_one_step_for_readers(plain_client, monkeypatch):
    """from_filter of 64 parts: a reader in the middle of it finds every key of the old bits,
    and after it every key of the new ones."""
    shared, old, replacement, new = _sixty_four_parts(plain_client, "swap")
    reader = RedisBackedFilter.open(redis.Redis(connection_pool=plain_client.connection_pool), "swap")
    seen, write = [], plain_client.setrange

    def setrange_then_read(*args):
        result = write(*args)
        seen.append(reader.contains_many(old).mean())
        return result

    monkeypatch.setattr(plain_client, "setrange", setrange_then_read)
    RedisBackedFilter.from_filter(plain_client, "swap", replacement, part_bits=4096)
    assert len(seen) >= 64 and set(seen) == {1.0}  # the old bits, whole, until the switch
    assert reader.contains_many(new).all() and shared.to_filter() == replacement


def test_a_replacement_that_dies_half_way_changes_nothing(plain_client, monkeypatch):
    shared, old, replacement, new = _sixty_four_parts(plain_client, "half")
    calls, write = [], plain_client.setrange

    def dies_half_way(*args):
        calls.append(args)
        if len(calls) == 40:
            raise redis.ConnectionError("the writer died")
        return write(*args)

    monkeypatch.setattr(plain_client, "setrange", dies_half_way)
    with pytest.raises(redis.ConnectionError, match="the writer died"):
        RedisBackedFilter.from_filter(plain_client, "half", replacement, part_bits=4096)
    monkeypatch.undo()
    assert shared.contains_many(old).all()                  # the old filter, whole
    assert plain_client.keys("{half}:next:*") == []         # nothing left aside
    assert RedisBackedFilter.from_filter(plain_client, "half", replacement,
                                         part_bits=4096).contains_many(new).all()


def test_a_filter_deleted_under_a_reader_is_never_absent(plain_client, monkeypatch):
    """delete() removes the description and every part in one command: a reader after it
    finds the filter gone (FilterLost), and no reader finds a part gone under a live
    description, which would answer absent."""
    shared, old, _, _ = _sixty_four_parts(plain_client, "dropped")
    answers, remove = [], plain_client.delete

    def delete_then_read(*keys):
        result = remove(*keys)
        try:
            answers.append(shared.contains_many(old).mean())
        except FilterLost:
            answers.append("lost")
        return result

    monkeypatch.setattr(plain_client, "delete", delete_then_read)
    shared.delete()
    assert answers == ["lost"] and plain_client.dbsize() == 0


# --- the server's refusals named as they are, with what was applied --------------------------------
def test_a_user_without_a_command_gets_the_servers_refusal_not_a_lost_filter(plain_client):
    made = RedisBackedFilter.create(plain_client, "acl", 100_000, 5, replicas=1, replica_timeout_ms=50)
    with pytest.raises(NotReplicated):  # no replica here: the creator's writes say so
        made.add_many(["by the creator"])
    port = plain_client.connection_pool.connection_kwargs["port"]
    for user, without in (("no-hget", "-hget"), ("no-wait", "-wait")):
        plain_client.execute_command("ACL", "SETUSER", user, "on", ">pw", "~*", "&*", "+@all", without)
    try:
        no_hget = RedisBackedFilter.open(redis.Redis(port=port, username="no-hget", password="pw"), "acl")
        with pytest.raises(redis.exceptions.NoPermissionError, match="hget.*nothing was changed"):
            no_hget.contains_many(["by the creator"])
        with pytest.raises(redis.exceptions.NoPermissionError, match="hget.*no key of this chunk"):
            no_hget.add_many(["by no-hget"])
        no_wait = RedisBackedFilter.open(redis.Redis(port=port, username="no-wait", password="pw"), "acl")
        with pytest.raises(redis.exceptions.NoPermissionError,
                           match="wait.*chunk of 1 keys was added on the primary"):
            no_wait.add_many(["by no-wait"])
        with pytest.raises(redis.exceptions.NoPermissionError, match="wait.*nothing was changed"):
            no_wait.contains_many(["by no-wait"])  # a read confirmed by WAIT needs WAIT too
        made.replicas = 0  # no replica here to confirm a read: look at what was applied
        assert made.contains_many(["by the creator", "by no-wait", "by no-hget"]).tolist() == \
            [True, True, False]
    finally:
        plain_client.execute_command("ACL", "DELUSER", "no-hget", "no-wait")


def test_a_retry_later_than_ten_minutes_still_finds_its_calls_marker(plain_server, monkeypatch):
    """A call's marker must outlive every retry of it, however long retry_s is.  Ten minutes
    are played as 100 ms (a marker that short, retry_s of 3 s): the retry, held back until the
    marker would be gone, still finds the chunk applied and says its answers were lost."""
    plain_server.client().flushall()
    monkeypatch.setattr(redis_calls, "MARKER_MS", 100)
    proxy = DroppingProxy(plain_server.port)
    watcher = plain_server.client()

    def retry_once_the_marker_could_be_gone(f):
        marker = watcher.keys("{late}:call:*")
        deadline = time.monotonic() + 10
        while marker and 0 < watcher.pttl(marker[0]) <= 1000 * f.retry_s:  # expires in time
            assert time.monotonic() < deadline

    monkeypatch.setattr(redis_calls, "refresh", retry_once_the_marker_could_be_gone)
    try:
        client = redis.Redis(host="127.0.0.1", port=proxy.port)
        shared = RedisBackedFilter.create(client, "late", 200_000, 7, retry_s=3)
        keys = [f"late-{i}" for i in range(3000)]
        proxy.arm("after_request", when=b"MULTI")
        with pytest.raises(AnswersLost, match="which of them were new was lost"):
            shared.add_many(keys)
        assert proxy.dropped == 1 and shared.contains_many(keys).all()
        for bad in (float("inf"), float("nan"), -1, "3", 10 ** 6):
            with pytest.raises(ValueError, match="retry_s must be a number of seconds"):
                RedisBackedFilter.open(client, "late", retry_s=bad)
        client.close()
    finally:
        proxy.close()
        watcher.close()
