# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
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
# # 06 · The false-positive rate: measured against theory
#
# Lesson `05_bloom_filter.ipynb` built the filter of *"Filtro di Bloom: un elemento appartiene
# all'insieme?"* and checked a few measured rates against the classic formula
# p ≈ (1 − e^(−kn/m))^k. The article ends with a list of properties, among them: to lower the
# chance of a wrong answer, use more hash functions or larger ones (more bits). This lesson
# puts numbers on that sentence. We measure the rate on hundreds of filters and compare it with
# two formulas:
#
# * the **classic** approximation (1 − e^(−kn/m))^k;
# * the **exact** rate, assuming that all kn bit positions are independent and uniform. Bose et
#   al. (*"On the false-positive rate of Bloom filters"*, IPL 2008) showed that the classic
#   value is not exact. Christensen, Roginsky and Jimeno (IPL 2010) proved that it is a lower
#   bound.
#
# Symbols: m bits, k hash functions, n inserted items, p false-positive rate. Every measured
# rate comes from keys that were **never inserted**. The library draws random 64-bit keys,
# inserts even ones and queries odd ones.

# %%
# %matplotlib inline
import itertools
import time

import matplotlib.pyplot as plt
import numpy as np

from bloomedu import BloomFilter
from bloomedu.experiments import (format_table, measure_false_positive_rate,
                                  simulate_false_positive_rate, sweep)
from bloomedu.plots import decorate, draw_rate_sweep, new_axes
from bloomedu.theory import (LN2, bits_per_item, exact_false_positive_rate, false_positive_rate,
                             lower_bound_bits_per_item, measured_rate_std, num_bits_for,
                             optimal_num_hashes)

SEED = 6
QUERIES = 20_000

# %% [markdown]
# ## One measurement
#
# `measure_false_positive_rate(m, k, n, queries, seed)` builds a fresh filter, inserts n keys,
# queries 20,000 keys that were never inserted, and returns the share answered "maybe".

# %%
m, k, n = 2**16, 4, 8192
p_measured = measure_false_positive_rate(m, k, n, QUERIES, seed=SEED)
print(f"m={m} k={k} n={n}: measured {p_measured:.5f}, classic {false_positive_rate(m, n, k):.5f}, "
      f"exact {exact_false_positive_rate(m, n, k):.5f}")

# %% [markdown]
# ## Where the classic formula comes from, and why it is not exact
#
# After n keys, kn positions have been drawn. Let X be the number of bits that are set. A new
# key is a false positive when its k positions all land on set bits, which happens with
# probability (X/m)^k. The classic formula replaces X by its mean, m(1 − (1 − 1/m)^(kn)) ≈
# m(1 − e^(−kn/m)). But X is random, and the mean of (X/m)^k is larger than (mean of X/m)^k
# (Jensen's inequality). That is why the classic value is only a lower bound.
#
# On a toy filter we can count every case. Take m = 16 bits, n = 2 keys and k = 2. That gives
# 16^4 = 65,536 equally likely ways to place the 4 positions:

# %%
tiny_m, tiny_n, tiny_k = 16, 2, 2
placements = np.array(list(itertools.product(range(tiny_m), repeat=tiny_k * tiny_n)))
bits_set = np.array([len(set(row)) for row in placements])
by_hand = float(np.mean((bits_set / tiny_m) ** tiny_k))
print(f"by enumeration  {by_hand:.6f}")
print(f"library exact   {exact_false_positive_rate(tiny_m, tiny_n, tiny_k):.6f}")
print(f"classic         {false_positive_rate(tiny_m, tiny_n, tiny_k):.6f}")
assert abs(by_hand - exact_false_positive_rate(tiny_m, tiny_n, tiny_k)) < 1e-12

# %% [markdown]
# The library computes the same number without enumeration. It uses two small Markov chains
# whose entries are never negative, so m = 10^5 with kn = 10^6 takes milliseconds. The
# textbook sum with Stirling numbers subtracts huge terms from each other instead. (Time on
# this machine:)

# %%
# NBVAL_IGNORE_OUTPUT
start = time.perf_counter()
big_exact = exact_false_positive_rate(100_000, 100_000, 10)
print(f"exact rate, m=1e5, n=1e5, k=10: {big_exact:.10f} in {time.perf_counter() - start:.4f} s")

# %% [markdown]
# ## 240 filters, 20,000 queries each
#
# The grid: m in 2^14, 2^16, 2^18; k from 1 to 8; 10 values of n from m/64 to m/2. That is
# 240 filters and 4.8 million absent queries. For each (m, k), `sweep` inserts the keys once, in
# order of growing n, and queries at every n. It runs in well under a second:

# %%
def n_values(m):
    """Ten values of n from m/64 to m/2, evenly spaced on a log scale."""
    return sorted({int(round(x)) for x in np.geomspace(m / 64, m / 2, 10)})


# %%
# NBVAL_IGNORE_OUTPUT
start = time.perf_counter()
grid = [row for m in (2**14, 2**16, 2**18) for row in sweep(m, range(1, 9), n_values(m),
                                                                  QUERIES, seed=SEED)]
print(f"{len(grid)} filters, {sum(r.num_queries for r in grid):,d} queries "
      f"in {time.perf_counter() - start:.2f} s")

# %%
print(f"{len(grid)} filters")
print(format_table(grid[:5]))

# %% [markdown]
# How often is the exact rate inside a row's Wilson 95% interval? The interval only accounts
# for the luck of the queries. It ignores the luck of the filter: X, the number of bits set,
# varies from one filter to the next. `measured_rate_std` includes both parts, so we also
# count the rows more than 2 and 3 of those standard deviations from the exact rate:

# %%
z = np.array([(r.rate - r.exact) / measured_rate_std(r.num_bits, r.num_items, r.num_hashes,
                                                     r.num_queries) for r in grid])
inside = sum(r.low <= r.exact <= r.high for r in grid)
print(f"exact inside the Wilson 95% interval: {inside} of {len(grid)} ({inside / len(grid):.1%})")
print(f"|z| > 2: {int((abs(z) > 2).sum())} rows (a normal law expects {0.0455 * len(grid):.1f})")
print(f"|z| > 3: {int((abs(z) > 3).sum())} rows (a normal law expects {0.0027 * len(grid):.1f})")
for row, score in zip(grid, z):
    if abs(score) > 3:
        print(f"  m={row.num_bits} k={row.num_hashes} n={row.num_items}: {row.false_positives} "
              f"false positives where {row.exact * row.num_queries:.2f} were expected")

# %% [markdown]
# The rows beyond 3 standard deviations have tiny rates: one or two false positives where at
# most a few tenths were expected. Our filter computes its k positions from one hash by double
# hashing, h1 + i·h2 (Kirsch and Mitzenmacher, *"Less hashing, same performance"*, 2006). When
# h2 is a multiple of m, which happens for one key in m, all k positions are the same bit. For
# such a query, the k hash functions act like one. This adds about (X/m)/m to the rate. That
# is nothing at p = 1%, but it dominates when the exact rate is a few in a million. We come
# back to this at small m below.
#
# ## (a) More bits: p against m, for k = 4 and n = 1000

# %%
by_m = sweep(np.unique(np.geomspace(2_000, 40_000, 16).astype(int)).tolist(), 4, 1000,
             QUERIES, seed=SEED)
print(format_table(by_m, ["num_bits", "false_positives", "rate", "low", "high", "classic",
                          "exact"]))

# %%
draw_rate_sweep([r.num_bits for r in by_m], by_m, xlabel="m, bits (k = 4, n = 1000)",
                title="More bits, fewer false positives")
plt.show()

# %% [markdown]
# ## (b) More hash functions: p against k, for m/n = 10
#
# The article says more hash functions lower the error rate. That is true only up to
# k = (m/n)·ln 2. After that, each key sets more bits than it gains from the extra check, and
# p rises again:

# %%
m_b, n_b = 2**16, 2**16 // 10
by_k = sweep(m_b, range(1, 17), n_b, QUERIES, seed=SEED)
print(format_table(by_k, ["num_hashes", "false_positives", "rate", "low", "high", "classic",
                          "exact"]))
best_measured = min(by_k, key=lambda r: r.rate).num_hashes
print(f"(m/n) ln 2 = {m_b / n_b * LN2:.2f}; optimal_num_hashes = {optimal_num_hashes(m_b, n_b)}; "
      f"lowest measured rate at k = {best_measured}")

# %%
draw_rate_sweep([r.num_hashes for r in by_k], by_k, xlabel=f"k (m = {m_b}, n = {n_b})",
                optimum=m_b / n_b * LN2, title="More hash functions help up to (m/n) ln 2")
plt.show()

# %% [markdown]
# Near the optimum the curve is flat. Using k = 5 to 9 instead of 7 costs little, and
# `optimal_num_hashes` picks whichever whole number is better.
#
# ## (c) More items: p against n, for m = 2^16 and k = 4
#
# These are ten rows of the 240-filter grid:

# %%
by_n = [r for r in grid if r.num_bits == 2**16 and r.num_hashes == 4]
print(format_table(by_n, ["num_items", "false_positives", "rate", "low", "high", "classic",
                          "exact"]))

# %%
draw_rate_sweep([r.num_items for r in by_n], by_n, xlabel="n, items inserted (m = 2^16, k = 4)",
                title="The filter fills up")
plt.gca().set_xscale("log")
plt.show()

# %% [markdown]
# ## Where the classic formula is off
#
# The classic formula depends only on the load kn/m, so it cannot tell a small filter from a
# large one with the same number of bits per item. The exact rate can. Keep m/n = 8 bits per
# item and k = 6 (close to 8·ln 2 = 5.5), and let m grow:

# %%
sizes = [2**e for e in range(3, 21)]
ratio_rows = [{"m": size, "n": size // 8, "classic": false_positive_rate(size, size // 8, 6),
               "exact": exact_false_positive_rate(size, size // 8, 6)} for size in sizes]
for row in ratio_rows:
    row["exact/classic"] = row["exact"] / row["classic"]
print(format_table(ratio_rows, ["m", "n", "classic", "exact", "exact/classic"],
                   float_format=".6f"))

# %% [markdown]
# The ratio exact/classic goes to 1 like 1 + O(1/m): each doubling of m halves the gap. At
# m = 64 the exact rate is 10% above the classic one, and at a million bits the gap is a few
# parts in a million:

# %%
ax = new_axes()
ax.semilogx(sizes, [r["exact/classic"] for r in ratio_rows], "o-", label="exact / classic")
ax.axhline(1.0, color="k", linestyle="--", linewidth=0.8)
decorate(ax, xlabel="m, bits (m/n = 8, k = 6)", ylabel="exact / classic",
         title="The classic formula underestimates small filters")
plt.show()

# %% [markdown]
# Do real draws agree with the exact formula at small m? `simulate_false_positive_rate` draws
# every position straight from the random generator. This is the exact formula's model, with
# no hashing. We average 400 small filters of 2,000 queries for each m. We also run our real
# `BloomFilter`, which uses double hashing, the same way:

# %%
small_rows = []
for size in (16, 32, 64, 128, 256):
    n_small, runs, queries = size // 8, 400, 2000
    model = np.mean([simulate_false_positive_rate(size, 6, n_small, queries, seed)
                     for seed in range(runs)])
    real = np.mean([measure_false_positive_rate(size, 6, n_small, queries, seed)
                    for seed in range(runs)])
    std = measured_rate_std(size, n_small, 6, queries) / np.sqrt(runs)
    small_rows.append({"m": size, "n": n_small, "classic": false_positive_rate(size, n_small, 6),
                       "exact": exact_false_positive_rate(size, n_small, 6), "std": std,
                       "model": model, "BloomFilter": real})
print(format_table(small_rows, ["m", "n", "classic", "exact", "std", "model", "BloomFilter"],
                   float_format=".5f"))

# %%
ax = new_axes()
xs = [r["m"] for r in small_rows]
ax.semilogx(xs, [r["exact"] for r in small_rows], "-", color="#1f4e79", label="exact")
ax.semilogx(xs, [r["classic"] for r in small_rows], "--", color="#e15759", label="classic")
ax.errorbar(xs, [r["model"] for r in small_rows], yerr=[2 * r["std"] for r in small_rows],
            fmt="o", color="black", capsize=3, label="simulated model ± 2 std")
ax.semilogx(xs, [r["BloomFilter"] for r in small_rows], "s", color="#f28e2b",
            label="BloomFilter (double hashing)")
decorate(ax, xlabel="m, bits (m/n = 8, k = 6)", ylabel="false-positive rate p",
         title="Small filters: the model follows the exact rate")
plt.show()

# %% [markdown]
# The simulated model lands on the exact curve. It stays above the classic curve, and the gap
# is larger than the error bars, so the correction is real. Our hashed filter is above both.
# At m = 16, one query in 16 has all 6 positions on one bit. Kirsch and Mitzenmacher prove
# that double hashing matches independent hashes only as m grows. A lesson at small m is
# where that shows. Library sizes (thousands of bits and up) are where it does not.
#
# ## The space story
#
# How many bits per item does a rate p cost? With the best k, a Bloom filter needs
# log2(1/p)/ln 2 ≈ 1.44·log2(1/p) bits per item. No structure that answers "maybe in the set"
# with rate p can use fewer than log2(1/p) bits per item (Carter et al., *"Exact and
# approximate membership testers"*, 1978). So a Bloom filter uses about 44% more space than
# the minimum. Below, each p is also measured on a filter sized by `from_capacity` for
# n = 20,000 items, the sizing that the Guava example of the second article uses:

# %%
space_rows = []
for p in (1e-1, 1e-2, 1e-3, 1e-4, 1e-5):
    sized = BloomFilter.from_capacity(20_000, p)
    measured = measure_false_positive_rate(sized.num_bits, sized.num_hashes, 20_000, 200_000,
                                           seed=SEED)
    space_rows.append({"p": p, "k": sized.num_hashes, "bits/item": sized.num_bits / 20_000,
                       "1.44 log2(1/p)": bits_per_item(p),
                       "log2(1/p)": lower_bound_bits_per_item(p), "measured p": measured})
print(format_table(space_rows, ["p", "k", "bits/item", "1.44 log2(1/p)", "log2(1/p)",
                                "measured p"], float_format=".4g"))

# %%
ps = np.geomspace(0.5, 1e-6, 40)
ax = new_axes()
ax.semilogx(ps, [bits_per_item(p) for p in ps], label="Bloom filter, best k: 1.44·log2(1/p)")
ax.semilogx(ps, [lower_bound_bits_per_item(p) for p in ps], "--",
            label="lower bound: log2(1/p)")
ax.semilogx([r["measured p"] for r in space_rows], [r["bits/item"] for r in space_rows], "o",
            color="black", label="from_capacity, measured p")
ax.invert_xaxis()
decorate(ax, xlabel="false-positive rate p", ylabel="bits per item",
         title="Each factor of 10 in p costs 4.8 bits per item")
plt.show()

# %% [markdown]
# The second article, *"Bloom Filter: come memorizzare 1 Milione di stringhe in meno di 2MB?"*,
# stores a million URLs at one error in 1000. (It writes 0.001%, but one in 1000 is 0.1%.) The
# sizes:

# %%
urls_bits = num_bits_for(1_000_000, 0.001)
print(f"Bloom filter: {urls_bits:,d} bits = {urls_bits / 8 / 2**20:.3f} MiB")
print(f"lower bound:  {lower_bound_bits_per_item(0.001) * 1e6 / 8 / 2**20:.3f} MiB")

# %% [markdown]
# ## What we learned
#
# * The measured rate follows the exact formula on 240 filters. A Wilson interval covers the
#   query luck; `measured_rate_std` also covers the filter luck.
# * More bits always help. More hash functions help only up to k = (m/n)·ln 2. The article's
#   rule of thumb needs that limit.
# * The classic formula is a lower bound. The exact rate is 10% or more above it for filters of
#   64 bits or fewer; from 8,192 bits up the two agree to 0.1%.
# * A Bloom filter costs 1.44·log2(1/p) bits per item. That is 44% above the information-theory
#   limit.
#
# ## What comes next
#
# Lesson `07_one_million_urls.ipynb` follows the second article: it sizes a filter for a
# million URLs at p = 0.001 and checks the "under 2 MB" claim.
