# ---
# jupyter:
#   bloomedu:
#     summary: 'A whole day of clicks at memory speed: a blocked filter puts a key''s
#       bits in one cache line, one miss per key, for a measured rise in the false-positive
#       rate.'
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
# # 19 · Blocked filters: one cache miss per key
#
# Lesson 18 spread the day's filter over a cluster; this lesson keeps it on one machine and asks
# what each key costs there. Article 1's day, 864,000,000 IDs at p = 0.001, takes 1.45 GiB, far
# larger than any cache: every one of a key's k bits is a trip to memory.

# %% [markdown]
# ## Objectives
#
# - You will be able to compute how many cache lines a key's k positions touch in a large filter.
# - You will be able to read the split-block layout (Putze, Sanders and Singler 2007; Impala,
#   Parquet): one block per key, one bit in each of its eight words.
# - You will be able to compute the blocked filter's rate as a Poisson average over its blocks,
#   and compare it with the plain filter's at the same m.
# - You will be able to size the day's blocked filter for a target rate.
#
# **Prerequisites:** lessons 07 (The false-positive rate: derived, then measured), 08 (Sizing a
# filter: m and k from n and p) and 09 (One million URLs in under 2 MB).
#
# **Time:** about 60 minutes (teaching 40, exercises 20).
#
# *Going deeper (optional):* `deeper/19_blocked_in_practice.ipynb` deduplicates a batch with the
# blocked filter exactly as a loop would, and names the systems that use its layout.

# %%
# %matplotlib inline
import math
import time

import matplotlib.pyplot as plt
import numpy as np

from bloomedu import BloomFilter
from bloomedu.core.theory import false_positive_rate, num_bits_for
from bloomedu.i18n import say
from bloomedu.teaching.exercises import check
from bloomedu.teaching.plots import decorate, show
from bloomedu.teaching.predict import predict
from bloomedu.variants import BlockedBloomFilter
from bloomedu.variants.blocked import num_blocks_for, split_block_false_positive_rate

SEED = 12
LINE_BITS = 512  # a cache line: 64 bytes

# %% [markdown]
# ## Where a key's bits land
#
# Memory moves between the processor and RAM in cache lines of 64 bytes, 512 bits. Reading one
# bit that is not in the cache costs a whole line from RAM, about 100 ns, where a bit already in
# the cache costs a nanosecond or two. So what matters is how many *different lines* a key's k
# positions fall in. Take lesson 09's filter for a million keys at p = 0.001, 1.7 MiB of bits.

# %%
guess_lines = predict("In a filter of a million keys at p = 0.001 (k = 10), how many distinct "
                      "cache lines does one key's k positions touch on average?", None)

# %%
plain = BloomFilter.from_capacity(1_000_000, 0.001)
lines = -(-plain.num_bits // LINE_BITS)
expected_lines = lines * -math.expm1(plain.num_hashes * math.log1p(-1 / lines))
keys = np.random.default_rng(SEED).integers(0, 2 ** 63, 10_000).tolist()
touched = [len({p // LINE_BITS for p in plain.bit_indices(key)}) for key in keys]
say("m = {m:,} bits = {lines:,} lines, k = {k}", m=plain.num_bits, lines=lines, k=plain.num_hashes)
say("lines touched per key: expected {expected:.4f}, measured {measured:.4f} over {keys:,} keys",
    expected=expected_lines, measured=np.mean(touched), keys=len(keys))
say("positions of one key: {positions}", positions=plain.bit_indices(keys[0]))

# %%
guess_lines.reveal(np.mean(touched))

# %% [markdown]
# Its m bits are $L = \lceil m / 512 \rceil$ lines. Each position is uniform over them, so a
# given line is missed by all k positions with probability $(1 - 1/L)^k$, and a key touches
# $L\,(1 - (1 - 1/L)^k)$ lines on average: about 10, since with 28,082 lines two positions of
# one key almost never share a line. One insert is ten cache misses, and so is a query for a key
# that is in the filter.

# %% [markdown]
# ## One block per key
#
# Putze, Sanders and Singler's fix: cut the m bits into blocks the size of a cache line or less,
# let the hash choose one block, and put all k bits inside it. One miss per key, whatever k is.
#
# `BlockedBloomFilter` is the *split-block* version that Apache Impala introduced and that the
# Parquet file format adopted: a block is 256 bits, eight 32-bit words, and a key sets exactly
# one bit in each word (k = 8). From the key's 64-bit hash h, the block is
# `((h >> 32) * num_blocks) >> 32`, and the bit in word w is the top 5 bits of
# `(h mod 2**32) * SALT[w] mod 2**32`, with eight odd constants from the Parquet specification.

# %%
blocked = BlockedBloomFilter.from_capacity(1_000_000, 0.001)
block, masks = blocked.block_and_masks(keys[0])
say("{blocks:,} blocks of 256 bits = {m:,} bits, k = {k}",
    blocks=blocked.num_blocks, m=blocked.num_bits, k=blocked.num_hashes)
say("key {key}: block {block:,}", key=keys[0], block=block)
for w, mask in enumerate(masks):
    say("  word {w}: {mask:032b}", w=w, mask=mask)
positions = blocked.bit_indices(keys[0])
say("positions: {positions} -> lines {lines}",
    positions=positions, lines=sorted({p // LINE_BITS for p in positions}))

# %% [markdown]
# Eight positions, one line. A block is half a line, and blocks start at multiples of 32 bytes
# from the start of the words, which the filter aligns to 64 bytes (numpy alone aligns to 16),
# so a block never straddles two lines.

# %% [markdown]
# ## What one miss per key buys
#
# Here are both filters, sized for 20,000,000 keys (tens of megabytes each, more than a
# processor's caches hold), timing 1,000,000 inserts, then queries for keys that are in the filter
# (every bit is read) and for keys that are not. The times depend on the machine and on what else
# it is doing, so they are not checked when the tests run this notebook; `make bench` (workload
# W4) and `make bench-day` measure them properly, against other libraries.
#
# First, what the plain filter reads for a key that was never added: `in` tests the key's k
# positions one by one and stops at the first clear bit. Lesson 09's filter, now holding its
# million keys, is asked about 10,000 keys it never saw.

# %%
guess_absent = predict("For a key never added, how many distinct cache lines does the full plain "
                       "filter (k = 10) read, on average, before it answers?", None)

# %%
plain.add_many(np.random.default_rng(SEED + 3).integers(0, 2 ** 63, 1_000_000, dtype=np.uint64))
strangers = np.random.default_rng(SEED + 4).integers(2 ** 63, 2 ** 64 - 1, 10_000, dtype=np.uint64)
read = []
for key in strangers.tolist():
    probes = plain.bit_indices(key)
    stop = next((i for i, p in enumerate(probes) if not plain.bits[p]), len(probes) - 1)
    read.append(len({p // LINE_BITS for p in probes[:stop + 1]}))
counts = np.bincount(read, minlength=4)
say("fill ratio {fill:.4f}; lines read per absent key: mean {mean:.4f}",
    fill=plain.fill_ratio, mean=np.mean(read))
say("lines read:  {counts}  more: {more:,}",
    counts="  ".join(f"{j}: {counts[j]:,}" for j in range(1, 6)), more=counts[6:].sum())

# %%
guess_absent.reveal(round(float(np.mean(read)), 2))

# %% [markdown]
# About two, not ten. A full filter has half its bits set (lesson 07's best k leaves it so), so
# each probe finds a clear bit with probability 1/2, and the number of probes until the first
# clear one has mean $1/(1 - 1/2) = 2$. So the blocked filter's one miss per key should pay off
# for inserts and for present keys, k misses against one, and much less for absent keys.

# %% tags=["nbval-ignore-output"]
rng = np.random.default_rng(SEED)
inserted = rng.integers(0, 2 ** 63, 1_000_000, dtype=np.uint64)
absent = rng.integers(2 ** 63, 2 ** 64 - 1, 1_000_000, dtype=np.uint64)
say("              filter  insert ns/key  query, present  query, absent")
for f in (BloomFilter.from_capacity(20_000_000, 0.001), BlockedBloomFilter.from_capacity(20_000_000, 0.001)):
    times = []
    for call, batch in ((f.add_many, inserted), (f.contains_many, inserted), (f.contains_many, absent)):
        start = time.perf_counter()
        call(batch)
        times.append((time.perf_counter() - start) / batch.size * 1e9)
    print(f"{type(f).__name__:>20} {times[0]:>14.0f} {times[1]:>15.0f} {times[2]:>14.0f}")

# %% [markdown]
# Inserts and queries for present keys read all k bits of the plain filter, k misses, against one
# for the blocked filter: that is where it gains. A query for an absent key has little to gain: the
# plain filter stops after about two lines, while the blocked filter computes all eight masks
# before it reads its block. Which of the two answers absent keys faster depends on the
# machine and its load (the last column, on the machine that ran this notebook). In numpy the misses
# are not the whole cost, since every step is a pass over an array; in compiled code, as in Impala
# or Parquet readers, the gap is wider.

# %% [markdown]
# ## The price: blocks fill unevenly
#
# A plain filter spreads all kn bits over all m bits. A blocked filter first throws each key into
# one of $B = m/256$ blocks: like balls into bins, the number of keys j in a block is about
# Poisson with mean $\lambda = n/B$, and some blocks get many more than λ. In a block with j keys,
# each of the eight words has j bits thrown at its 32 bits, so a given bit is set with
# probability $1 - (31/32)^j$, and a query (one bit per word) passes with probability
# $(1 - (31/32)^j)^8$. Averaged over the blocks (Putze et al., section 3):
#
# $$p = \sum_{j \ge 0} e^{-\lambda} \frac{\lambda^j}{j!} \left(1 - (31/32)^j\right)^8$$
#
# That function of j is convex where the rate is small, so by Jensen's inequality the average over
# uneven blocks is above the rate of a block holding exactly λ keys: overfull blocks cost more than
# underfull ones save.

# %%
guess_ratio = predict("At 16 bits per key, how many times a plain filter's rate (same m, k = 8) "
                      "is the blocked filter's?", None)

# %%
n = 50_000
queries = np.random.default_rng(SEED + 1).integers(2 ** 63, 2 ** 64 - 1, 400_000, dtype=np.uint64)
members = np.random.default_rng(SEED + 2).integers(0, 2 ** 63, n, dtype=np.uint64)
rows = []
say("bits/key  plain k=8  plain best k   blocked  measured     z  blocked/plain k=8")
for bits_per_key in (8, 10, 12, 14, 16, 18, 20, 24):
    f = BlockedBloomFilter(n * bits_per_key)
    f.add_many(members)
    measured = float(f.contains_many(queries).mean())
    formula = split_block_false_positive_rate(num_blocks=f.num_blocks, n=n)
    same_k = false_positive_rate(num_bits=f.num_bits, num_hashes=8, n=n)
    best_k = max(1, round(bits_per_key * math.log(2)))
    best = false_positive_rate(num_bits=f.num_bits, num_hashes=best_k, n=n)
    rows.append((bits_per_key, same_k, best, formula, measured))
    z = (measured - formula) / math.sqrt(formula * (1 - formula) / queries.size)
    print(f"{bits_per_key:>8} {same_k:>10.6f} {best:>13.6f} {formula:>9.6f} {measured:>9.6f} {z:>+5.1f} {formula / same_k:>18.2f}")

# %%
guess_ratio.reveal(round(rows[4][3] / rows[4][1], 2))

# %% [markdown]
# Above, and by more the more bits a key: about 1.3 times the plain rate at 8 bits per key, 2.3
# times at 16, 3.9 times at 24. The measured column follows the Poisson average: z is its distance
# in standard deviations of 400,000 queries, all within 2.5. (Most lean the same way because the
# eight filters hold the same keys and answer the same queries, and because one filter's blocks
# add a spread of their own, which z leaves out.)

# %%
per_key, plain_same, plain_best, formula, measured = map(np.array, zip(*rows))
fig, ax = plt.subplots(figsize=(7, 4))
ax.semilogy(per_key, plain_best, "s-", label="plain filter, best k")
ax.semilogy(per_key, plain_same, "o-", label="plain filter, k = 8")
ax.semilogy(per_key, formula, "-", color="C3", label="split-block, Poisson average")
ax.semilogy(per_key, measured, "x", color="C3", markersize=9, label="split-block, measured")
decorate(ax, xlabel="bits per key (m/n)", ylabel="false-positive rate",
         title="One cache miss per key costs false positives")
show("Log-scale false-positive rate against bits per key from 8 to 24: the split-block filter's "
     "curve and its measured crosses lie above both plain-filter curves, further above as bits per "
     "key grow.")

# %% [markdown]
# ## What the day costs in memory
#
# To keep p = 0.001, the blocked filter needs more bits than the plain one. Turned around as in
# lesson 08: the fewest blocks whose Poisson-averaged rate is at most p.

# %%
day = 864_000_000
plain_bits = num_bits_for(n=day, p=0.001)
blocked_bits = 256 * num_blocks_for(n=day, p=0.001)
say("plain filter:   {per_key:.2f} bits a key, {gib:.2f} GiB for the day",
    per_key=plain_bits / day, gib=plain_bits / 8 / 2 ** 30)
say("blocked filter: {per_key:.2f} bits a key, {gib:.2f} GiB for the day ({more:.1%} more)",
    per_key=blocked_bits / day, gib=blocked_bits / 8 / 2 ** 30, more=blocked_bits / plain_bits - 1)

# %% [markdown]
# 17.5% more memory, for ten times fewer cache misses per insert. Parquet files, Impala,
# RocksDB and ClickHouse use this layout; `deeper/19_blocked_in_practice.ipynb` shows where, and
# how `add_many_new` deduplicates a batch with it exactly as a loop of `in` then `add` would.

# %% [markdown]
# ## Recap
#
# - On a filter far larger than the cache, a key's k positions fall in k different lines: k
#   misses per insert and per query of a present key.
# - A split-block filter puts a key's eight bits in one 256-bit block: one miss per key.
# - Its keys fill blocks unevenly (Poisson), so its rate is a Poisson average, above the plain
#   filter's at the same m; keeping p = 0.001 for the day costs 17.5% more memory.
# - A query for an absent key stops at its first clear bit, about two lines in a full plain
#   filter: that is where one miss per key gains least.

# %% [markdown]
# ## Exercises
#
# Three exercises on this lesson: compute, predict, then measure. Replace `None` with your
# answer and run the cell: `check` tells you whether it is right and, when it is not, which slip it
# looks like. Worked solutions are in `solutions/19_blocked_filters_solutions.ipynb`; try first.

# %% [markdown]
# **19.1 (compute).** On average, how many distinct 64-byte cache lines do the k = 10 positions of
# one key touch in BloomFilter.from_capacity(1_000_000, 0.001), m = 14,377,588 bits?

# %%
answer = None  # replace None with your answer
check.cache_lines_touched(answer, num_bits=14_377_588, num_hashes=10)

# %% [markdown]
# **19.2 (predict).** What false-positive rate do you expect from a split-block filter of 1,000
# blocks (256 bits each) after n = 20,000 keys?

# %%
answer = None  # replace None with your answer
check.split_block_fpp(answer, n=20_000, num_blocks=1000)

# %% [markdown]
# **19.3 (measure).** Fill BlockedBloomFilter(256_000) with 20,000 random keys and measure its
# false-positive rate on 100,000 keys never inserted.

# %%
answer = None  # replace None with your answer
check.measured_blocked_fpp(answer, num_bits=256_000, n=20_000, trials=100_000)

# %% [markdown]
# ## What comes next
#
# A Bloom filter spends about 1.44 times the bits of the information lower bound (lesson 07);
# the next lesson, **20 · After Bloom: cuckoo, xor and binary fuse filters**, measures the filters
# that come closer to it, and lesson 21 ends the course inside Spark and PostgreSQL. To see the
# whole day run, type `make bench-day` in a terminal: it takes a few minutes and about 2 GiB.
#
# *Where this lesson's code lives:* `bloomedu/variants/blocked.py` (the filter and its rate
# formula), `bloomedu/variants/blocked_kernels.py` (its numpy kernels), `bloomedu/workloads/day.py` (the
# day's stream), `bloomedu/kernels/bloom.py` (the plain filter's bulk
# path on large filters); its tests: `tests/test_blocked.py`, `tests/test_large.py`,
# `tests/test_day.py`. The README's table maps every article step to its module, lesson and test.
