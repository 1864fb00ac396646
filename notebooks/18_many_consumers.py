# ---
# jupyter:
#   bloomedu:
#     summary: Consumers sharing one stream and one filter on Redis, one of them killed
#       mid-batch; the server's cost per key; the day's filter cut by Redis Cluster's
#       slots.
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
# # 18 · Many consumers: one stream, one server, one cluster
#
# Lesson 17 matched RedisBloom's filter bit for bit on a server of our own. Now the article's
# deduplicator runs as in production: consumer processes sharing one stream and one filter, a
# server loaded by several clients, and the day's filter cut into shards for a Redis Cluster.

# %% [markdown]
# ## Objectives
#
# - You will be able to run consumer processes on one Redis Stream, kill one mid-batch, and count
#   the clicks lost or passed twice; and to say what is promised to whom.
# - You will be able to predict throughput from round trips, and read what the server spends per
#   key for `BF.MADD` and for bloomedu's filter in plain Redis strings.
# - You will be able to lay a filter too large for one node over a cluster's shards and predict
#   how evenly the keys spread.
#
# **Prerequisites:** lessons 17 (RedisBloom, bit for bit), 08 (Sizing a filter: m and k from n
# and p) and 01 (Remembering every click ID).
#
# **Time:** about 60 minutes (teaching 40, exercises 20).
#
# *Going deeper (optional):* `deeper/18_cluster_failover.ipynb` runs this lesson's shards on a
# six-node Redis Cluster, then restarts a node and fails another over to its replica.

# %%
# %matplotlib inline
import json
import math
import signal
import time

import matplotlib.pyplot as plt
import numpy as np

from bloomedu import BloomFilter, click_stream
from bloomedu.compat.redisbloom import RedisBloomFilter, hash_pairs
from bloomedu.i18n import phrase, say
from bloomedu.services.redis_dedup import GROUP, SharedDeduplicator
from bloomedu.services.redis_filter import RedisBackedFilter
from bloomedu.services.redis_load import run_load
from bloomedu.services.redis_server import RedisServer
from bloomedu.services.redis_sharded import ShardedFilter, day_layout
from bloomedu.teaching.exercises import check
from bloomedu.teaching.plots import decorate, show
from bloomedu.teaching.predict import predict
from bloomedu.workloads.clicks import uuid4_strings

SEED = 18

# %% [markdown]
# A Redis server with the RedisBloom module starts here from the virtual environment, on a
# loopback port; the lesson stops it by its PID at the end.

# %%
server = RedisServer(module=True)
r = server.client()
say("a server, ping -> {pong}", pong=r.ping())

# %% [markdown]
# ## 1. Three consumers on one stream
#
# The article's channel becomes a Redis Stream (`{clicks}:in`) read by a consumer group; each
# consumer is a separate process. Per batch it runs one Lua script that, message after message,
# calls `BF.ADD` on the shared filter, appends the new IDs to `{clicks}:out` and acknowledges the
# message (`XACK`). The script runs alone on the server, so an ID is new for exactly one message
# whoever reads it, and a message is acknowledged only together with its answer. (A str ID is
# hashed as its UTF-8 bytes, an int as its 8-byte value, as `BloomFilter` does.)
#
# The filter is sized so that no ID of this stream can be a false positive: an ID missing from
# the output was lost, not mistaken for a repeat. The first consumer, `victim`, reads a batch of
# 200 messages and is killed (`kill -9`) before its script runs on them. Two other consumers then
# share the rest of the stream.

# %%
stream_clicks = click_stream(3000, rate=2000.0, seed=SEED)
stream_ids = list(dict.fromkeys(c.id for c in stream_clicks))
link = RedisBloomFilter(1e-7, 3000).links[0]
positions = link.positions_many(*hash_pairs([i.encode() for i in stream_ids]))
bits, counts = np.unique(positions, return_counts=True)
holders = dict(zip(bits.tolist(), counts.tolist()))
alone = [min(holders[x] for x in set(row)) for row in positions.tolist()]
say("{messages:,} messages, {distinct:,} distinct IDs; IDs that could be false positives: "
    "{suspects}", messages=len(stream_clicks), distinct=len(stream_ids),
    suspects=sum(a > 1 for a in alone))

dedup = SharedDeduplicator.create(server.client(), "clicks", expected_items=3000, fpp=1e-7, mode="bf")


def held_by(consumer):
    """How many messages ``consumer`` has read and not acknowledged."""
    rows = dedup.client.xpending(dedup.stream, GROUP)["consumers"]
    return sum(int(row["pending"]) for row in rows if row["name"] in (consumer, consumer.encode()))


dedup.publish(stream_clicks[:200])
victim = dedup.spawn(server.port, "victim", batch=200, hold_after=0)
while held_by("victim") < 200:
    time.sleep(0.02)
victim.send_signal(signal.SIGKILL)
victim.wait()
say("victim killed by signal {signal}, holding {held} unacknowledged messages",
    signal=-victim.returncode, held=held_by("victim"))

# %%
guess_fate = predict("The click IDs in the 200 messages the victim read: how many times does each "
                     "reach the output?", None, choices=("never", "once", "twice"))

# %%
survivors = [dedup.spawn(server.port, f"consumer-{i}", claim_idle_ms=500) for i in range(2)]
dedup.publish(stream_clicks[200:], done=True)
reports = [json.loads(s.communicate(timeout=120)[0]) for s in survivors]
passed = dedup.passed_ids()
lost = len(set(stream_ids) - set(passed))
times = sorted({passed.count(i) for i in {c.id for c in stream_clicks[:200]}})
say("passed: {passed:,}, distinct among them: {distinct:,}, lost: {lost}, "
    "messages still pending: {pending}", passed=len(passed), distinct=len(set(passed)),
    lost=lost, pending=dedup.client.xpending(dedup.stream, GROUP)["pending"])
say("the survivors processed {processed:,} messages, {claimed} of them claimed from the dead "
    "consumer; the victim's IDs reached the output {times} time(s) each",
    processed=sum(x["processed"] for x in reports), claimed=sum(x["claimed"] for x in reports),
    times=times)

# %%
guess_fate.reveal(["never", "once", "twice"][times[0]] if len(times) == 1 else "it varies")

# %% [markdown]
# Once each, and none of the stream's IDs lost. The dead consumer's batch stayed *pending*, owned
# by it, and each survivor first claims messages idle longer than 500 ms (`XAUTOCLAIM`): one of
# them took the batch (which one changes from run to run; the totals do not). Nothing of it had
# reached the filter, since the victim's script never ran. A message claimed while its first
# reader was only slow would be processed twice, and the filter would drop the second copy: the
# processing is idempotent.
#
# ### What is promised, and to whom
#
# * **The producer**: a click is in the stream once `XADD` has answered, as durably as the
#   server keeps its writes.
# * **The consumers**: every message is delivered *at least once*: what a consumer read and did
#   not acknowledge stays pending until another claims it.
# * **A reader of `{clicks}:out`**: *exactly once*, as long as the server loses no write it
#   acknowledged. If it does (a restart from an older snapshot, a host crash with `appendfsync
#   everysec`, a failover to a replica that had not received them), the work since is done again
#   and the reader may read some entries twice: *at least once*, never a missing click. Each entry
#   carries its click ID, so a reader applies each click keyed by its ID
#   (`SharedDeduplicator.passed_once`); `tests/test_redis_dedup.py` shows both cases.
#
# ## 2. Throughput: what a round trip costs, and what the server spends
#
# In-process, an insert is a few hundred nanoseconds of numpy work per key. A command to Redis
# costs a round trip, tens to hundreds of microseconds on loopback with Python's client, so one
# `BF.ADD` per key is bounded by about 1 / round trip. A pipeline sends many commands before
# reading the replies, and `BF.MADD` puts many keys in one command: the round trip is paid once
# per batch. So the arithmetic predicts the order: in-process, pipelined, one command per key.
# This machine's figures (they vary with the machine and its load; the tests do not check them):

# %% tags=["nbval-ignore-output"]
bench = [f"bench-{i}" for i in range(30_000)]
timings = {}
started = time.perf_counter()
BloomFilter.from_capacity(30_000, 0.001).add_many(bench)
seconds = time.perf_counter() - started
timings[phrase("bloomedu BloomFilter, add_many, in-process")] = (seconds, len(bench))
r.execute_command("BF.RESERVE", "one-by-one", "0.001", 30_000)
started = time.perf_counter()
for key in bench[:1000]:
    r.execute_command("BF.ADD", "one-by-one", key)
seconds = time.perf_counter() - started
timings[phrase("BF.ADD, one command per key")] = (seconds, 1000)
r.execute_command("BF.RESERVE", "pipelined", "0.001", 30_000)
started = time.perf_counter()
pipe = r.pipeline(transaction=False)
for start in range(0, len(bench), 1000):
    pipe.execute_command("BF.MADD", "pipelined", *bench[start:start + 1000])
pipe.execute()
seconds = time.perf_counter() - started
timings[phrase("BF.MADD, 1,000 keys a command, pipelined")] = (seconds, len(bench))
say("path                                                 keys      keys/s")
for path, (seconds, keys) in timings.items():
    print(f"{path:48}  {keys:7,d}  {keys / seconds:10,.0f}")

# %% [markdown]
# Many consumers share one server, so what counts is the server's CPU per key. `BF.MADD` hashes
# each key and tests its k bits in compiled code. A server without the module has no such
# command: `RedisBackedFilter` computes each key's k positions in the client (those of
# `BloomFilter`) and sends each chunk of 4,096 keys as one `MULTI`/`EXEC` of cheap commands: per
# 128 KiB part of the filter, either `BITFIELD` (one operation per bit) or, when the part
# receives many bits, `GETRANGE` of its old bytes and one `BITOP OR` of the chunk's bits.
# `run_load` starts the clients as separate processes, each with its share of 40,000 keys, and
# reads the server's own CPU time (`INFO cpu`) before and after: k = 10 on both sides, one
# client and four.

# %%
load_keys = uuid4_strings(40_000, np.random.default_rng(SEED + 3))
loads = []
for clients in (1, 4):
    r.execute_command("BF.RESERVE", f"load-{clients}", "0.001", len(load_keys), "NONSCALING")
    ours = RedisBackedFilter.from_capacity(r, f"load-bits-{clients}", len(load_keys), 0.001)
    assert ours.num_hashes == 10 == RedisBloomFilter(0.001, 1, nonscaling=True).links[0].hashes
    loads.append(run_load(server.url, r, "BF.MADD", f"load-{clients}", load_keys, clients))
    loads.append(run_load(server.url, r, "add_many", ours.name, load_keys, clients))
    assert ours.contains_many(load_keys).all()
say("{runs} runs of {keys:,} keys; every key added is found", runs=len(loads), keys=len(load_keys))

# %% tags=["nbval-ignore-output"]
say("path        clients     keys/s  server CPU µs/key")
for load in loads:
    print(f"{load.path:10}  {load.clients:7d}  {load.keys_per_s:9,.0f}  {load.server_us_per_key:17.3f}")
fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.2))
for path, style in (("BF.MADD", "o-"), ("add_many", "s--")):
    mine = [x for x in loads if x.path == path]
    left.plot([x.clients for x in mine], [x.keys_per_s for x in mine], style, label=path)
    right.plot([x.clients for x in mine], [x.server_us_per_key for x in mine], style, label=path)
decorate(left, xlabel="clients (processes)", ylabel="keys per second", xticks=[1, 4],
         title="throughput against consumers")
decorate(right, xlabel="clients (processes)", ylabel="server CPU µs per key", xticks=[1, 4],
         ylim=(0, None), title="what the server spends", legend=False)
show("Two panels against 1 and 4 client processes, for BF.MADD and for bloomedu's add_many: "
     "keys per second on the left, the server's CPU microseconds per key on the right.")

# %% [markdown]
# Read the right panel first: this design aims at a server CPU per key at most three times
# `BF.MADD`'s at the same k, and `make bench` checks it (`benchmarks/results/redis.md`), also on
# a filter so large that each part gets only a few bits of a chunk and `BITFIELD` pays per bit.
# The left panel is the clients' side: where four client processes and the server share two
# cores, more clients need not mean more keys per second.
#
# ## 3. Past one machine: the article's day cut into shards
#
# Article 1's day is 864,000,000 IDs. At p = 0.001 one filter needs 12.4 Gbit: more than one
# Redis string holds ($2^{32}$ bits = 512 MiB), and a lot for one node. `ShardedFilter` cuts it
# the way Redis Cluster cuts keys: an ID's slot is CRC16(ID) mod 16,384, the slots are split into
# equal ranges, and each range has its own BloomFilter, sized for its share of the IDs at the
# same p and named with a hash tag that puts it on the node owning that range.

# %%
layout = day_layout(n=864_000_000, p=0.001, nodes=3)
whole = BloomFilter.from_capacity(864_000_000, 0.001)
say("one filter for the day: m = {m:,} bits = {gib:.2f} GiB, k = {k}",
    m=whole.num_bits, gib=whole.nbytes / 2**30, k=whole.num_hashes)
say("sharded over {nodes} nodes: {shards} shards of {bits:,} bits (each under 2^32 = {limit:,}), "
    "k = {k}", nodes=layout.nodes, shards=layout.shards, bits=layout.bits_per_shard,
    limit=2**32, k=layout.num_hashes)
say("per node: {keys} keys ({strings} string of bits and its shard's description), "
    "{size:,} bytes = {mib:.1f} MiB", keys=layout.keys_per_node,
    strings=layout.bit_strings_per_node, size=layout.bytes_per_node,
    mib=layout.bytes_per_node / 2**20)

# %% [markdown]
# Reserving the day for real would take 1.45 GiB of memory for a demonstration, so the lesson
# runs the same code on a filter scaled to 1/100,000 of the day: 8,640 IDs at p = 0.001 in three
# shards, each sized for 2,880 IDs. On a cluster each node would hold one shard; the lesson's one
# server can hold all three, each under its own hash tag.

# %%
guess_fullest = predict("How many of the 8,640 IDs will the fullest of the three shards get?", None)

# %%
scaled = ShardedFilter.create(r, "day", expected_items=8640, fpp=0.001)
rng = np.random.default_rng(SEED)
day_ids, never = uuid4_strings(8640, rng), uuid4_strings(20_000, rng)
scaled.add_many(day_ids)
which = scaled.shard_of(day_ids)
say("shard  first slot  IDs in it  shard == BloomFilter of them")
per_shard = []
for j, shard in enumerate(scaled.shards):
    mine = [day_ids[i] for i in np.flatnonzero(which == j)]
    alone = BloomFilter(shard.num_bits, shard.num_hashes)
    alone.add_many(mine)
    per_shard.append(len(mine))
    print(f"{j:5d}  {int(scaled.starts[j]):10,d}  {len(mine):9,d}  {shard.to_filter() == alone}")
say("every ID found: {all_found}; false positives among 20,000 never added: {rate:.5f} "
    "(p = 0.001)", all_found=bool(scaled.contains_many(day_ids).all()),
    rate=scaled.contains_many(never).mean())
fig, ax = plt.subplots(figsize=(5, 2.8))
ax.bar(range(len(per_shard)), per_shard, color="tab:blue")
ax.axhline(8640 / 3, color="black", linestyle=":", label="8,640 / 3")
decorate(ax, xlabel="shard (one per primary node)", ylabel="IDs", xticks=range(len(per_shard)),
         title="keys per shard", legend=dict(loc="lower right"))
show(phrase("Bar chart of the IDs in each of the three shards, {first:,}, {second:,} and "
            "{third:,}: all three bars end close to the dotted line at 8,640 / 3 = 2,880.",
            first=per_shard[0], second=per_shard[1], third=per_shard[2]))

# %%
guess_fullest.reveal(max(per_shard))
spread = math.sqrt(8640 * (1 / 3) * (2 / 3))
say("IDs per shard: {counts}, expected {expected:,.0f} ± {spread:.1f}; furthest off: "
    "{furthest:.2f} standard deviations", counts=per_shard, expected=8640 / 3, spread=spread,
    furthest=max(abs(c - 8640 / 3) for c in per_shard) / spread)
for client in (dedup.client, r):
    client.close()
server.close()
say("server stopped: {stopped}", stopped=server.pid is None)

# %% [markdown]
# How many IDs a shard gets is a binomial count, n = 8,640 with probability about 1/3 (shard 0
# owns slots 0 to 5,460, 5,461 of the 16,384): expected 2,880 ± 43.8, and every shard falls
# within one standard deviation of it. Each shard is an ordinary BloomFilter of the IDs in its
# slots, byte for byte; one sized for 2,880 IDs that receives more runs a little above p, one
# that receives fewer a little below.
#
# On a cluster each shard lives on its own node, and nodes fail. A node that keeps nothing on
# disk comes back empty, and every ID of its shard would answer "absent", the one answer a Bloom
# filter must never give for a key it holds. `deeper/18_cluster_failover.ipynb` runs this very
# code on three primaries with replicas, restarts one node, fails another over to its replica,
# and shows what the filter promises while that happens.

# %% [markdown]
# ## Recap
#
# - A message is acknowledged only with its answer and a dead consumer's batch is claimed by
#   another: the output holds each distinct click once (at least once if the server loses
#   acknowledged writes; keyed by click ID, still once).
# - One round trip per key caps a client at about 1 / round trip; batches pay it once each. What
#   consumers share is the server's CPU per key.
# - A filter too large for one node is cut by CRC16 slots into shards, each an ordinary
#   BloomFilter; a shard's count is binomial (here all three within one standard deviation of
#   2,880).
# - What a node's restart or failover does to the shards: `deeper/18_cluster_failover.ipynb`.

# %% [markdown]
# ## Exercises
#
# Three exercises on this lesson: compute, predict, then measure. Replace `None` with your
# answer and run the cell: `check` tells you whether it is right and, when it is not, which slip
# it looks like. Worked solutions are in `solutions/18_many_consumers_solutions.ipynb`; try
# first. None of them needs a server.

# %% [markdown]
# **18.1 (compute).** How many shards does day_layout(n=864_000_000, p=0.0001, nodes=3) make: the
# fewest, a multiple of the nodes, whose filters each fit one Redis string of $2^{32}$ bits?

# %%
answer = None  # replace None with your answer
check.shards_for_day(answer, n=864_000_000, p=0.0001, nodes=3)

# %% [markdown]
# **18.2 (predict).** One client sends BF.MADD commands of 1,000 keys, one at a time, each
# waiting for its reply. A round trip costs 80 µs and the server spends 1 µs per key. How many
# keys per second does it reach?

# %%
answer = None  # replace None with your answer
check.batched_keys_per_s(answer, round_trip_us=80.0, server_us_per_key=1.0, batch=1000)

# %% [markdown]
# **18.3 (measure).** Draw 9,000 IDs with uuid4_strings and measure the fraction whose Redis
# Cluster slot (key_slot of the ID's UTF-8 bytes) is in 0..5460, shard 0's range.
#
# `key_slot` is in `bloomedu.services.redis_sharded`; it takes bytes: `key_slot(i.encode())`.

# %%
answer = None  # replace None with your answer
check.measured_shard_share(answer, n=9000, first_slot=0, last_slot=5460)

# %% [markdown]
# ## What comes next
#
# The filter now grows past one machine. What it still costs is a cache miss per hash function
# on a filter of gigabytes: lesson 19 (Blocked filters: one cache miss per key).
#
# *Where this lesson's code lives:* `bloomedu/services/` (`redis_dedup.py` the consumers,
# `redis_filter.py` and its parts bloomedu's filter in Redis strings, `redis_load.py` the load,
# `redis_sharded.py` the shards, `redis_cluster.py` the deeper notebook's cluster),
# `bloomedu/teaching/exercises/redis_steps.py`;
# its tests: `tests/test_redis_dedup.py`, `tests/test_redis_filter.py`, `tests/test_redis_faults.py`,
# `tests/test_redis_cluster.py`. The README's table maps every article step to its module, lesson
# and test.
