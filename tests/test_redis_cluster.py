"""The sharded filter on a real 3-node Redis Cluster (loopback ports), driven by redis-py's
cluster client: each shard's keys on one node, each shard a BloomFilter byte for byte."""

from __future__ import annotations

import math

import numpy as np

from bloomedu import BloomFilter
from bloomedu.services.redis_filter import RedisBackedFilter
from bloomedu.services.redis_sharded import ShardedFilter, day_layout, key_slot, slot_ranges
from bloomedu.workloads.clicks import uuid4_strings
from redis_support import cluster  # noqa: F401  (fixture)


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


def test_the_days_layout_fits_one_string_per_node():
    layout = day_layout(864_000_000, 0.001, nodes=3)
    assert layout.shards == 3 and layout.keys_per_node == 1
    assert layout.bits_per_shard == BloomFilter.from_capacity(288_000_000, 0.001).num_bits
    assert layout.bits_per_shard * 3 > 12.4e9 and layout.bytes_per_shard * 8 <= 2 ** 32
    assert day_layout(864_000_000, 0.0001, nodes=3).shards == 6  # 4 Gbit more per node: two strings
