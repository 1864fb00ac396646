# ---
# jupyter:
#   bloomedu:
#     summary: Lesson 18's sharded filter on a six-node Redis Cluster with append-only
#       files, a node restarted and another failed over to its replica, and what the
#       filter promises.
#   jupytext:
#     cell_metadata_filter: tags,-slideshow
#     formats: ipynb,py:percent
#     notebook_metadata_filter: bloomedu
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.7
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Going deeper 18 · The day's shards on a cluster that loses nodes
#
# An optional notebook that deepens lesson 18 (*Many consumers: one stream, one server, one
# cluster*), which cut a filter scaled to 1/100,000 of the day (8,640 IDs at p = 0.001) into three
# shards by Redis Cluster's slots and kept them on one server. Here the same code runs on a real
# cluster: three primaries, each with a replica, every node writing an append-only file with an
# fsync per write. Then one node is restarted and another fails over to its replica. Starting the
# six nodes and letting them agree takes a few seconds, the failover a few more.

# %%
import numpy as np

from bloomedu import BloomFilter
from bloomedu.i18n import say
from bloomedu.services.redis_cluster import RedisCluster
from bloomedu.services.redis_filter import NotReplicated
from bloomedu.services.redis_sharded import ShardedFilter, key_slot
from bloomedu.teaching.predict import predict
from bloomedu.workloads.clicks import uuid4_strings

SEED = 18  # lesson 18's seed: the same IDs, the same shards

# %% [markdown]
# ## The shards on three nodes
#
# With `replicas=1` every write waits until the replica has received it (`WAIT 1`) before the
# filter acknowledges it. The cluster's node timeout is 2 s: a primary silent for that long is
# replaced by its replica.

# %%
cluster = RedisCluster(3, replicas=1, persistence="aof", node_timeout_ms=2000)
cluster_client = cluster.client()
scaled = ShardedFilter.create(cluster_client, "day", expected_items=8640, fpp=0.001,
                              replicas=1, retry_s=30)
rng = np.random.default_rng(SEED)
day_ids, never = uuid4_strings(8640, rng), uuid4_strings(20_000, rng)
scaled.add_many(day_ids)
which = scaled.shard_of(day_ids)
say("{nodes} nodes; node          slots  keys on it  IDs in its shard  "
    "shard == BloomFilter of them", nodes=len(cluster.servers))
for j, (shard, (low, high)) in enumerate(zip(scaled.shards, cluster.slot_ranges)):
    node = cluster.primaries[j].client()
    mine = [day_ids[i] for i in np.flatnonzero(which == j)]
    alone = BloomFilter(shard.num_bits, shard.num_hashes)
    alone.add_many(mine)
    print(f"{'':8}{j:4d}  {low:5d}..{high:5d}  {node.dbsize():10d}  {len(mine):16,d}  "
          f"{shard.to_filter() == alone}")
    node.close()
say("every ID found: {all_found}; false positives among 20,000 never added: {rate:.5f} "
    "(p = 0.001)", all_found=bool(scaled.contains_many(day_ids).all()),
    rate=scaled.contains_many(never).mean())

# %% [markdown]
# The same counts as on lesson 18's one server: a key's slot, not the machine, decides its
# shard. Each node holds two keys: its shard's bits and the shard's description (m, k, part
# size and a random `uid`), both under the shard's hash tag.
#
# ## A node killed and restarted at once
#
# Node 1 is killed with `SIGKILL`, the way a crash ends a process, and started again at once.

# %%
restarted = cluster.primaries[1]
before_restart = scaled.shards[1].to_bytes()
restarted.kill()
restarted.start()  # back from its append-only file
cluster.wait_until_ok()
found = int(scaled.contains_many(day_ids).sum())
say("after a restart: {found:,} IDs found; shard 1 unchanged: {unchanged}", found=found,
    unchanged=scaled.shards[1].to_filter() == BloomFilter.from_bytes(before_restart))

# %% [markdown]
# All of them: the node read its append-only file back, every write in it, since each was
# flushed to disk before it was acknowledged. A node that keeps nothing on disk would come back
# empty, and every ID of its shard would answer "absent". The filter checks on every call that
# its description, with its `uid`, is still there, so such a node raises `FilterLost` instead
# of answering (`tests/test_redis_cluster.py` shows it).
#
# ## A primary lost: the failover
#
# Now node 0 is killed and stays down. After the node timeout its replica takes over shard 0
# and serves it alone.

# %%
guess_write = predict("With node 0 down and its replica promoted, what happens to a new key "
                      "added to shard 0?", None, choices=("stored", "refused", "lost later"))

# %%
victim, promoted = cluster.fail(key_slot(scaled.shards[0].meta_key.encode()))
say("node 0 killed; its replica serves shard 0 now: {promoted}",
    promoted=promoted in cluster.replicas_of(0))
try:
    scaled.shards[0].add_many(["a click after the failover"])
    outcome = "stored"
except NotReplicated as refused:
    outcome = "refused"
    say("a write to shard 0 now: NotReplicated: {reason}", reason=str(refused).split(": ", 1)[1])
try:
    scaled.shards[0].contains_many(day_ids[:10])
    say("a lookup in shard 0 now: answered")
except NotReplicated as refused:
    say("a lookup in shard 0 now: NotReplicated: {reason}...",
        reason=str(refused).split(": ", 2)[2][:62])

# %%
guess_write.reveal(outcome)

# %% [markdown]
# Refused, and said so: with no replica to confirm it, the filter raises `NotReplicated`
# instead of pretending the write is as safe as the others. A lookup is refused too. A filter
# made with `replicas=1` has every read confirmed as well: after the bits, it sends a write that
# changes nothing and `WAIT 1`. A primary deposed by a failover (stopped, say, and resumed
# still believing it serves the shard) has no replica left to acknowledge it, so its answers,
# which may lack keys the new primary acknowledged since, are never used; the filter asks the
# cluster again who serves the shard. The price is the one writes pay: while a shard has no
# replica, it answers nothing.
#
# That is all `WAIT` promises, and Redis's documentation says it does not make Redis strongly
# consistent: a write the replica never received was never acknowledged, and with several
# replicas the one promoted may not be one that answered.
#
# The old primary now comes back from its append-only file as the new primary's replica. Every
# ID added before the failover should still be there: the replica had received each one before
# the filter acknowledged it.

# %%
victim.start()  # back from its append-only file, as the new primary's replica
cluster.wait_until_ok()
cluster.wait_for_replicas()
late = uuid4_strings(1000, np.random.default_rng(SEED + 4))
scaled.add_many(late)
say("with the old primary back as a replica, every ID found: {all_found}",
    all_found=bool(scaled.contains_many(day_ids + late).all()))
cluster_client.close()
cluster.close()
say("cluster stopped: {stopped}", stopped=all(s.pid is None for s in cluster.servers))

# %% [markdown]
# ## What the filter promises
#
# - An append-only file written at every command makes a restart lose nothing.
# - Writes that wait for the replica make a failover to it keep every acknowledged key; while a
#   shard has no replica, a write is refused (`NotReplicated`), not silently weakened.
# - Reads are confirmed by the replica too, so a primary deposed by a failover never answers
#   from its older bits; while a shard has no replica, a lookup is refused as well.
# - A filter whose bits are missing, cut short or older than what it acknowledged raises
#   `FilterLost` instead of answering "absent"; a node it cannot reach makes it raise a
#   `ConnectionError` after `retry_s` seconds, never answer "absent"
#   (`tests/test_redis_cluster.py`, `tests/test_redis_faults.py`).
#
# Back to lesson 18's exercises: [18_many_consumers.ipynb](../18_many_consumers.ipynb).
