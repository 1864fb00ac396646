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
#       jupytext_version: 1.19.6
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
# - You will be able to size the day's blocked filter and deduplicate a batch exactly.
#
# **Prerequisites:** lessons 07 (The false-positive rate: derived, then measured), 08 (Sizing a
# filter: m and k from n and p) and 09 (One million URLs in under 2 MB).
#
# **Time:** about 75 minutes (teaching 50, exercises 25).

# %%
# %matplotlib inline
import math
import time

import matplotlib.pyplot as plt
import numpy as np

from bloomedu import BloomFilter
from bloomedu.core.theory import false_positive_rate, num_bits_for
from bloomedu.teaching.exercises import check
from bloomedu.teaching.predict import predict
from bloomedu.variants import BlockedBloomFilter
from bloomedu.variants.blocked import num_blocks_for, split_block_false_positive_rate
from bloomedu.workloads.day import day_chunks

SEED = 12
LINE_BITS = 512  # a cache line: 64 bytes

# %% [markdown]
# ## Where a key's bits land
#
# Memory moves between the processor and RAM in cache lines of 64 bytes, 512 bits. Reading one
# bit that is not in the cache costs a whole line from RAM, about 100 ns, where a bit already in
# the cache costs a nanosecond or two. So what matters is how many *different lines* a key's k
# positions fall in.
#
# Take lesson 09's filter for a million keys at p = 0.001. Its m bits are $L = \lceil m / 512
# \rceil$ lines. Each position is uniform over them, so a given line is missed by all k positions
# with probability $(1 - 1/L)^k$, and a key touches $L\,(1 - (1 - 1/L)^k)$ lines on average.

# %%
guess_lines = predict("In a filter of a million keys at p = 0.001 (k = 10), how many distinct "
                      "cache lines does one key's k positions touch on average?", None)

# %%
plain = BloomFilter.from_capacity(1_000_000, 0.001)
lines = -(-plain.num_bits // LINE_BITS)
expected_lines = lines * -math.expm1(plain.num_hashes * math.log1p(-1 / lines))
keys = np.random.default_rng(SEED).integers(0, 2 ** 63, 10_000).tolist()
touched = [len({p // LINE_BITS for p in plain.bit_indices(key)}) for key in keys]
print(f"m = {plain.num_bits:,} bits = {lines:,} lines, k = {plain.num_hashes}")
print(f"lines touched per key: expected {expected_lines:.4f}, measured {np.mean(touched):.4f} "
      f"over {len(keys):,} keys")
print("positions of one key:", plain.bit_indices(keys[0]))

# %%
guess_lines.reveal(np.mean(touched))

# %% [markdown]
# About 10: with 28,082 lines, two positions of one key almost never share a line. One insert
# is ten cache misses, and so is a query for a key that is in the filter. (A query for an absent
# key stops at its first clear bit, so it usually pays one or two.)

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
print(f"{blocked.num_blocks:,} blocks of 256 bits = {blocked.num_bits:,} bits, k = {blocked.num_hashes}")
print(f"key {keys[0]}: block {block:,}")
for w, mask in enumerate(masks):
    print(f"  word {w}: {mask:032b}")
positions = blocked.bit_indices(keys[0])
print("positions:", positions, "-> lines", sorted({p // LINE_BITS for p in positions}))

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
# **Predict:** which of the three operations should gain from one miss per key, and which has
# little to gain?

# %% tags=["nbval-ignore-output"]
rng = np.random.default_rng(SEED)
inserted = rng.integers(0, 2 ** 63, 1_000_000, dtype=np.uint64)
absent = rng.integers(2 ** 63, 2 ** 64 - 1, 1_000_000, dtype=np.uint64)
print(f"{'filter':>20} {'insert ns/key':>14} {'query, present':>15} {'query, absent':>14}")
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
# plain filter stops after one or two bits, one or two misses, while the blocked filter computes all
# eight masks before it reads its block. Which of the two answers absent keys faster depends on the
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
print(f"{'bits/key':>8} {'plain k=8':>10} {'plain best k':>13} {'blocked':>9} {'measured':>9} {'z':>5} {'blocked/plain k=8':>18}")
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
ax.set_xlabel("bits per key (m/n)")
ax.set_ylabel("false-positive rate")
ax.set_title("One cache miss per key costs false positives")
ax.legend()
plt.show()

# %% [markdown]
# ## What the day costs in memory
#
# To keep p = 0.001, the blocked filter needs more bits than the plain one. Turned around as in
# lesson 08: the fewest blocks whose Poisson-averaged rate is at most p.

# %%
day = 864_000_000
plain_bits = num_bits_for(n=day, p=0.001)
blocked_bits = 256 * num_blocks_for(n=day, p=0.001)
print(f"plain filter:   {plain_bits / day:.2f} bits a key, {plain_bits / 8 / 2 ** 30:.2f} GiB for the day")
print(f"blocked filter: {blocked_bits / day:.2f} bits a key, {blocked_bits / 8 / 2 ** 30:.2f} GiB for the day "
      f"({blocked_bits / plain_bits - 1:.1%} more)")

# %% [markdown]
# 17.5% more memory, for ten times fewer cache misses per insert. `make bench-day` runs the whole
# day, 864,000,000 click IDs with their double clicks, through this 1.70 GiB filter and prints the
# time, the peak memory and the false positives against the Poisson prediction summed over the day.

# %% [markdown]
# ## Deduplicating a batch exactly
#
# The day's dedup asks, for every click, "seen before?" and then remembers it. In bulk,
# `add_many_new` does both for a whole array at once and answers exactly as the loop
# `key not in f`, then `f.add(key)`, would: a key counts as new if one of its bits was still clear
# when its turn came, earlier keys of the same batch included. A double click inside one batch is
# therefore caught. Here is a short stream checked against the loop:

# %%
ids, is_copy = next(day_chunks(20_000, double_click_rate=0.02, seed=SEED))
bulk, loop = BlockedBloomFilter.from_capacity(20_000, 0.001), BlockedBloomFilter.from_capacity(20_000, 0.001)
new = bulk.add_many_new(ids)
one_by_one = []
for key in ids.tolist():
    one_by_one.append(key not in loop)
    loop.add(key)
assert new.tolist() == one_by_one and bulk == loop
genuine = int((~is_copy).sum())
predicted = sum(split_block_false_positive_rate(num_blocks=bulk.num_blocks, n=k) for k in range(genuine))
print(f"{ids.size:,} messages, {int(is_copy.sum())} second copies of double clicks")
print(f"dropped: {int((~new & is_copy).sum())} copies, {int((~new & ~is_copy).sum())} genuine clicks "
      f"(predicted {predicted:.1f}: the rate after j keys, summed over the genuine clicks)")

# %% [markdown]
# Every copy is dropped: its original's bits are all set. The few genuine clicks dropped are false
# positives, and their number is near the prediction: the rate grows from 0 to p = 0.001 as the
# filter fills, so the sum over a filling is a fraction of 0.001 times the number of clicks.

# %% [markdown]
# ## Where real systems use it
#
# - **Parquet**: the file format's Bloom filters (`BloomFilter.md` in the parquet-format
#   specification) are exactly this split-block layout, one filter per column chunk, so a reader can
#   skip row groups that cannot hold a value. The hash is XXH64 of the value's plain encoding.
#   `tests/test_parquet.py` checks that bloomedu, with Parquet's hash, builds the very bytes
#   pyarrow writes.
# - **Impala**: the split-block design comes from Impala's runtime filters (its
#   `block-bloom-filter`, which fixes 8 bits per key so that one AVX2 instruction tests a block);
#   Kudu took over that code, and Arrow's Parquet reader and writer implement the same layout.
# - **RocksDB**: since `format_version=5` its SST files use a "fast local" Bloom filter that puts
#   all of a key's probes in one 64-byte cache line (`FastLocalBloomImpl` in `util/bloom_impl.h`).
# - **ClickHouse** reads Parquet's split-block filters to skip row groups when querying Parquet
#   files (the setting `input_format_parquet_bloom_filter_push_down`).

# %% [markdown]
# ## Recap
#
# - On a filter far larger than the cache, a key's k positions fall in k different lines: k
#   misses per insert and per query of a present key.
# - A split-block filter puts a key's eight bits in one 256-bit block: one miss per key.
# - Its keys fill blocks unevenly (Poisson), so its rate is a Poisson average, above the plain
#   filter's at the same m; keeping p = 0.001 for the day costs 17.5% more memory.
# - `add_many_new` deduplicates a batch exactly as the loop `in` then `add` would.

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
# the next lesson, **20 · After Bloom: cuckoo, xor and binary fuse filters**, the last of part 3
# and of the course, measures the filters that come closer to it. To see the whole day run,
# type `make bench-day` in a terminal: it takes a few minutes and about 2 GiB.
#
# *Where this lesson's code lives:* `bloomedu/variants/blocked.py` (the filter and its rate
# formula), `bloomedu/variants/blocked_kernels.py` (its numpy kernels), `bloomedu/workloads/day.py` (the
# day's stream), `bloomedu/kernels/bloom.py` (the plain filter's bulk
# path on large filters); its tests: `tests/test_blocked.py`, `tests/test_large.py`,
# `tests/test_day.py`. The README's table maps every article step to its module, lesson and test.
