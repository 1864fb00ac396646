"""The sharded filter on a real 3-node Redis Cluster (loopback ports), driven by redis-py's
cluster client: each shard's keys on one node, each shard a BloomFilter byte for byte; and
the cluster under faults: a node killed and restarted (with and without its append-only
file), a primary failed over to its replica, a node that does not answer."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
import redis

from bloomedu import BloomFilter
from bloomedu.services.redis_cluster import RedisCluster
from bloomedu.services.redis_filter import FilterLost, NotReplicated, RedisBackedFilter
from bloomedu.services.redis_sharded import ShardedFilter, day_layout, key_slot, slot_ranges
from bloomedu.workloads.clicks import uuid4_strings
from redis_support import cluster, plain_client, plain_server, start  # noqa: F401  (fixtures)


def test_slots_and_ranges_are_the_clusters(cluster):
    client = cluster.client()
    assert slot_ranges(3) == cluster.slot_ranges
    for key in ["123", "città", "{user}:x", "a{}b", "clicks-shard0-0"]:
        assert key_slot(key.encode()) == client.cluster_keyslot(key)
    client.close()


def test_a_sharded_filter_puts_one_shard_on_each_node(cluster):
    client = cluster.client()
    n, p = 12_000, 0.001
    sharded = ShardedFilter.create(client, "clicks", n, p, shards=3)
    rng = np.random.default_rng(8)
    ids, fresh = uuid4_strings(n, rng), uuid4_strings(10_000, rng)
    assert sharded.add_many(ids).sum() >= n - 5  # a few false positives among new IDs at most
    assert sharded.contains_many(ids).all()
    which = sharded.shard_of(ids)
    for j, shard in enumerate(sharded.shards):
        node = cluster.servers[j].client()
        assert all(node.exists(key) for key in shard.keys + [shard.meta_key])  # on node j
        assert cluster.node_of_slot(key_slot(shard.meta_key.encode())) == j
        # the IDs of shard j are those node j would own as keys, and the shard is their BloomFilter
        mine = [ids[i] for i in np.flatnonzero(which == j)]
        assert all(cluster.node_of_slot(key_slot(i.encode())) == j for i in mine[:500])
        bloom = BloomFilter.from_capacity(math.ceil(n / 3), p)
        bloom.add_many(mine)
        assert shard.to_filter() == bloom
        assert abs(len(mine) - n / 3) < 4 * math.sqrt(n * 2 / 9)
        node.close()
    rate = sharded.contains_many(fresh).mean()
    assert rate < p + 4 * math.sqrt(p / len(fresh))
    client.close()


def test_a_shard_split_over_parts_stays_on_its_node(cluster):
    client = cluster.client()
    shard = RedisBackedFilter.create(client, "split", 10_000, 4, part_bits=64 * 40)
    assert shard.num_parts == 4
    shard.add_many([str(i) for i in range(500)])
    owner = cluster.node_of_slot(key_slot(shard.meta_key.encode()))
    node = cluster.servers[owner].client()
    assert all(node.exists(key) for key in shard.keys)
    bloom = BloomFilter(10_000, 4)
    bloom.add_many([str(i) for i in range(500)])
    assert shard.to_filter() == bloom
    node.close()
    client.close()


# --- the keys a sharded filter takes: BloomFilter's, checked as every filter checks them ------
# (one server holds every shard as well as a cluster does: these need no cluster)
def test_a_batch_is_checked_as_every_filter_checks_it_and_a_refused_one_changes_nothing(plain_client):
    sharded = ShardedFilter.create(plain_client, "checked", expected_items=3000, fpp=0.01)
    for batch, error, words in [("abc", TypeError, "iterable of keys"),
                                (bytearray(b"ab"), TypeError, "iterable of keys"),
                                (np.array([b"ab", b"c"]), ValueError, "ends in NUL"),
                                (np.array(["ab", "c"]), ValueError, "ends in NUL"),
                                (np.array([1.5, 2.5]), TypeError, "float64"),
                                (["ok", 1.5], TypeError, "float")]:
        for call in (sharded.add_many, sharded.contains_many):
            with pytest.raises(error, match=words):
                call(batch)
    assert all(shard.to_filter().bits_set() == 0 for shard in sharded.shards)


def test_bytes_like_keys_go_to_the_shard_of_their_bytes(plain_client):
    """A memoryview's str() holds its address: routed by it, a key would land on a shard
    chosen by chance, and be looked for on another."""
    sharded = ShardedFilter.create(plain_client, "wrapped", expected_items=3000, fpp=0.01)
    keys = [f"wrapped-{i}".encode() for i in range(64)]
    sharded.add_many([bytearray(key) for key in keys[:32]] + [memoryview(key) for key in keys[32:]])
    assert sharded.contains_many(keys).all()
    assert sharded.shard_of([memoryview(key) for key in keys]).tolist() == sharded.shard_of(keys).tolist()


def test_add_and_in_are_the_batch_paths_for_one_key(plain_client):
    sharded = ShardedFilter.create(plain_client, "one-key", expected_items=3000, fpp=0.01)
    assert sharded.add("123") is True and sharded.add("123") is False
    assert ("123" in sharded, 123 in sharded, b"123" in sharded) == (True, False, True)
    assert sharded.add(np.int64(5)) is True and 5 in sharded and sharded.contains_many([5, 6]).tolist() == [True, False]
    with pytest.raises(TypeError, match="key must be str, bytes or int"):
        sharded.add(1.5)


def test_the_days_layout_fits_one_string_per_node():
    layout = day_layout(n=864_000_000, p=0.001, nodes=3)
    assert layout.shards == 3 and layout.bit_strings_per_node == 1  # one string of bits,
    assert layout.keys_per_node == 2  # and its description: the two keys each node shows
    assert day_layout(n=864_000_000, p=0.0001, nodes=3).keys_per_node == 4  # two shards a node
    assert layout.bits_per_shard == BloomFilter.from_capacity(288_000_000, 0.001).num_bits
    assert layout.bits_per_shard * 3 > 12.4e9 and layout.bytes_per_shard * 8 <= 2 ** 32
    assert day_layout(n=864_000_000, p=0.0001, nodes=3).shards == 6  # 4 Gbit more per node: two strings


def _day(client, **options):
    sharded = ShardedFilter.create(client, "day", 9000, 0.001, **options)
    ids = uuid4_strings(9000, np.random.default_rng(19))
    assert sharded.add_many(ids).sum() >= 8990
    return sharded, ids


def test_a_node_restarted_without_persistence_is_an_error_never_a_false_negative():
    """A node that comes back empty must not make its shard answer 'absent' for keys it held."""
    with start(RedisCluster, nodes=3) as cluster:
        client = cluster.client()
        sharded, ids = _day(client, retry_s=20)
        victim = cluster.primaries[1]
        victim.kill()
        victim.start()  # empty: no AOF, no replica (it keeps its nodes.conf, so it rejoins)
        cluster.wait_until_ok()
        with pytest.raises(FilterLost, match="is gone"):
            sharded.contains_many(ids)
        with pytest.raises(FilterLost):
            sharded.add_many(ids[:10])
        client.close()


def test_a_node_restarted_from_its_aof_loses_nothing():
    with start(RedisCluster, nodes=3, persistence="aof") as cluster:
        client = cluster.client()
        sharded, ids = _day(client, retry_s=20)
        before = [shard.to_filter() for shard in sharded.shards]
        victim = cluster.primaries[1]
        victim.kill()
        victim.start()
        cluster.wait_until_ok()
        assert sharded.contains_many(ids).all()
        assert [shard.to_filter() for shard in sharded.shards] == before
        client.close()


def test_a_node_that_does_not_answer_is_an_error_never_absent():
    with start(RedisCluster, nodes=3) as cluster:
        client = cluster.client()
        sharded, ids = _day(client, retry_s=1.0)
        shard = sharded.shards[2]
        cluster.primaries[2].pause()  # SIGSTOP: holds its port, answers nothing
        try:
            with pytest.raises(redis.ConnectionError, match="cannot say whether a key is in it"):
                shard.contains_many(ids[:100])
        finally:
            cluster.primaries[2].resume()
        cluster.wait_until_ok()  # the others may have marked it failed meanwhile
        assert sharded.contains_many(ids).all()
        client.close()


def test_a_failover_to_the_replica_loses_nothing_the_filter_acknowledged():
    """One replica per primary; the filter waits for it (WAIT 1) before add_many returns, so
    when a primary is killed and its replica promoted, every key added is still found.  The
    promoted node has no replica until the old one is back: a write there says so
    (NotReplicated) instead of pretending it would survive a second failure."""
    with start(RedisCluster, nodes=3, replicas=1, persistence="aof") as cluster:
        client = cluster.client()
        sharded, ids = _day(client, replicas=1, retry_s=30)
        slot = key_slot(sharded.shards[0].meta_key.encode())
        victim, promoted = cluster.fail(slot)
        assert promoted in cluster.replicas_of(0) and victim.pid is None
        with pytest.raises(NotReplicated, match="0 of 1 replicas"):
            sharded.shards[0].add_many(["after the failover"])
        with pytest.raises(NotReplicated, match="read was not confirmed: 0 of 1 replicas"):
            sharded.contains_many(ids)  # reads, too, need the replica they were promised
        victim.start()  # back from its AOF, now a replica of the promoted node
        cluster.wait_until_ok()
        cluster.wait_for_replicas()
        assert sharded.contains_many(ids).all()
        more = uuid4_strings(3000, np.random.default_rng(20))
        local = [shard.to_filter() for shard in sharded.shards]  # what the answers must be
        which, expected = sharded.shard_of(more), np.zeros(len(more), dtype=bool)
        for j, bloom in enumerate(local):
            mine = np.flatnonzero(which == j)
            expected[mine] = bloom.add_many_new([more[i] for i in mine])
        assert sharded.add_many(more).tolist() == expected.tolist()
        assert sharded.contains_many(ids + more).all()
        assert "after the failover" in sharded.shards[0]  # on the primary, as NotReplicated said
        client.close()


def test_a_filter_opened_elsewhere_waits_for_as_many_replicas_as_its_creator():
    """replicas=1 is kept in the filter's description: a handle another process opens
    (RedisBackedFilter.open, ShardedFilter.open) waits for the replica too, so with the
    replica stopped its write says NotReplicated instead of being acknowledged unreplicated."""
    primary = start()
    replica = start(extra_args=("--replicaof", "127.0.0.1", str(primary.port)))
    try:
        client = primary.client()
        deadline = time.monotonic() + 20
        client.set("linked", 1)
        while client.execute_command("WAIT", 1, 100) < 1:  # the replica holds what we wrote
            assert time.monotonic() < deadline, "the replica never linked"
        made = RedisBackedFilter.create(client, "waits", 100_000, 5, replicas=1,
                                        replica_timeout_ms=300)
        ShardedFilter.create(client, "waits-sharded", 3000, 0.01, replicas=1, replica_timeout_ms=300)
        made.add_many(["while the replica runs"])
        opened = RedisBackedFilter.open(primary.client(), "waits")
        sharded = ShardedFilter.open(primary.client(), "waits-sharded")
        assert (opened.replicas, opened.replica_timeout_ms) == (1, 300)
        assert all(shard.replicas == 1 for shard in sharded.shards)
        assert RedisBackedFilter.open(client, "waits", replicas=0).replicas == 1  # never fewer
        assert "while the replica runs" in opened and opened.to_filter() == made.to_filter()
        replica.pause()
        try:
            for handle in (opened, sharded):
                with pytest.raises(NotReplicated, match="0 of 1 replicas"):
                    handle.add_many([f"unreplicated-{i}" for i in range(50)])
                with pytest.raises(NotReplicated, match="read was not confirmed"):
                    handle.contains_many(["while the replica runs"])
            with pytest.raises(NotReplicated, match="read was not confirmed"):
                opened.to_filter()
        finally:
            replica.resume()
        client.close()
    finally:
        replica.close()
        primary.close()


def test_a_deposed_primary_never_answers_absent_for_keys_acknowledged_after_the_failover():
    """Two replicas a primary, filters that wait for one.  A reader in another process holds a
    connection to shard 0's primary; the primary is stopped (SIGSTOP) and a replica takes its
    slot; the reader's lookup, sent on its old map, waits in the stopped node's socket while
    the writer adds keys, acknowledged by the new primary and its other replica; the stopped
    node resumes, still believing itself primary, and answers.  Its bits lack those keys, but
    no write made after its answer reaches a replica of it, so the lookup is not confirmed:
    the reader asks the cluster again and answers from the new primary, finding every key
    (or raises NotReplicated; never "absent")."""
    import threading

    with start(RedisCluster, nodes=3, replicas=2) as cluster:
        writer = cluster.client()
        sharded = ShardedFilter.create(writer, "deposed", 6000, 0.001, replicas=1, retry_s=30)
        reader_client = cluster.client()
        reader = ShardedFilter.open(reader_client, "deposed")
        shard_ids = [key for key in uuid4_strings(20_000, np.random.default_rng(21))
                     if sharded.shard_of([key])[0] == 0][:2000]
        assert not reader.contains_many(shard_ids).any()  # the reader's map points at the node
        slot = key_slot(sharded.shards[0].meta_key.encode())
        victim, promoted = cluster.fail(slot, pause=True)
        answers, errors = [], []
        try:
            deadline = time.monotonic() + 30
            while cluster._online_replicas(promoted) < 1:  # the other replica follows it
                assert time.monotonic() < deadline, "the new primary never got a replica"
                time.sleep(0.05)

            def read_late():
                try:
                    answers.append(reader.shards[0].contains_many(shard_ids))
                except Exception as error:  # noqa: BLE001 -- asserted below
                    errors.append(error)

            late = threading.Thread(target=read_late)
            late.start()  # its lookup waits in the stopped node's socket
            time.sleep(0.3)
            fresh = cluster.client()  # a process started after the failover: its map is right
            assert ShardedFilter.open(fresh, "deposed").shards[0].add_many(shard_ids).all()
            assert late.is_alive(), f"the late lookup did not wait for the stopped node: {errors} {[a.sum() for a in answers]}"
        finally:
            victim.resume()
        late.join(60)
        assert not late.is_alive()
        assert not errors or isinstance(errors[0], NotReplicated), errors
        if answers:
            absent = int((~answers[0]).sum())
            assert absent == 0, f"{absent} of {len(shard_ids)} acknowledged keys answered absent"
        assert reader.contains_many(shard_ids).all()
        for client in (writer, fresh, reader_client):
            client.close()
