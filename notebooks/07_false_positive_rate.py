# ---
# jupyter:
#   bloomedu:
#     summary: The rate and the best k derived in a few lines, then measured as k, m
#       and n change, and what a rate costs in bits against the smallest any structure
#       could use.
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
# # 07 · The false-positive rate: derived, then measured
#
# Lessons 05 (*The Bloom filter*) and 06 (*Inside the filter*) measured rates that kept landing
# on the formula $p \approx (1 - e^{-kn/m})^k$. This lesson derives it, finds the k that
# minimises it, and measures it with enough queries to see the bottom of the valley in k; it
# puts numbers on the first article's advice to use "more hash functions or larger ones".

# %% [markdown]
# ## Objectives
#
# - You will be able to derive the false-positive rate $(1 - e^{-kn/m})^k$ and the best number
#   of hash functions $k = (m/n) \ln 2$ in a few lines.
# - You will be able to read a measured rate with its 95% interval, and say when a difference
#   between two measured rates is real.
# - You will be able to predict how the rate changes with k and with m.
# - You will be able to state what a rate costs in bits per item, against the smallest any
#   structure could use.
#
# **Prerequisites:** lessons 05 (*The Bloom filter*) and 06 (*Inside the filter*).
#
# **Time:** about 55 minutes (teaching 40 min, exercises 15 min).

# %%
# %matplotlib inline
import math

import matplotlib.pyplot as plt
import numpy as np

from bloomedu import BloomFilter
from bloomedu.core.theory import (LN2, bits_per_item, exact_false_positive_rate,
                                  false_positive_rate, lower_bound_bits_per_item,
                                  measured_rate_std, optimal_num_hashes)
from bloomedu.i18n import phrase, say
from bloomedu.teaching.exercises import check
from bloomedu.teaching.experiments import (format_table, measure_false_positive_rate, sweep,
                                           wilson_interval)
from bloomedu.teaching.plots import FIGSIZE, decorate, draw_rate_sweep, new_axes, show
from bloomedu.teaching.predict import predict

SEED = 6
QUERIES = 20_000

# %% [markdown]
# ## 1. The rate and the best k, derived
#
# A filter holds n keys in m bits with k hash functions. More hash functions set more bits, and
# each lookup checks more of them: somewhere between k = 1 and a k that fills every bit lies the
# k with the lowest rate. Before deriving it, a question about the filter it gives.

# %%
guess_fill = predict("A filter has 10 bits per key and uses the k that gives it the lowest "
                     "false-positive rate. Once all its keys are in, what share of its bits is set?",
                     None)

# %% [markdown]
# **The share of bits still 0.** Adding n keys draws $kn$ positions, each uniform over the m
# bits. One draw misses a given bit with probability $1 - 1/m$, so all $kn$ draws miss it with
# probability $(1 - 1/m)^{kn}$. Since $(1 - 1/m)^m$ is close to $1/e$ for any m worth building,
#
# $$q = \left(1 - \frac{1}{m}\right)^{kn} \approx e^{-kn/m}.$$
#
# **The rate.** A key never inserted is a false positive when all k of its bits are set:
# $p = (1 - q)^k$, the classic formula. Take logarithms, $\ln p = k \ln(1 - q)$, and write k with
# q: $\ln q = -kn/m$ gives $k = -(m/n) \ln q$, so
#
# $$\ln p = -\frac{m}{n} \, \ln q \, \ln(1 - q).$$
#
# **The best k.** For a given $m/n$ (bits per key), p is smallest where $\ln q \cdot \ln(1 - q)$
# is largest. That product does not change when q and $1 - q$ swap places: it is symmetric about
# $q = 1/2$, and it has a single peak between 0 and 1, so the peak is at $q = 1/2$: **half the
# bits set**. Then $e^{-kn/m} = 1/2$ gives
#
# $$k = \frac{m}{n} \ln 2, \qquad p = 2^{-k} = e^{-(m/n)(\ln 2)^2}.$$
#
# A numerical check of the symmetry and of the peak:

# %%
say("    q  ln q · ln(1 − q)  k for m/n = 8  p = (1 − q)^k")
for q in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
    product = math.log(q) * math.log(1 - q)
    print(f"{q:5.1f}  {product:16.4f}  {-8 * math.log(q):13.2f}  {math.exp(-8 * product):13.5f}")

# %% [markdown]
# The product reads the same from both ends (0.2 and 0.8 both give 0.3591), and it is largest at
# $q = 0.5$, where p is smallest (the last two columns take 8 bits per key as an example).

# %%
best_k = optimal_num_hashes(num_bits=10_000, n=1000)
say("m/n = 10: best k = 10 ln 2 = {k_star:.2f}, so k = {best_k}; p = 2^(-{k_star:.2f}) = {p:.5f}",
    k_star=10 * LN2, best_k=best_k, p=2 ** (-10 * LN2))
rate_at_best = false_positive_rate(num_bits=10_000, num_hashes=best_k, n=1000)
say("at the whole k = {best_k}: (1 - e^(-kn/m))^k = {rate:.5f}", best_k=best_k, rate=rate_at_best)
filled = BloomFilter(num_bits=10_000, num_hashes=best_k)
filled.add_many(np.random.default_rng(SEED).integers(0, 2**64, size=1000, dtype=np.uint64))
fill = filled.bits_set() / filled.num_bits
say("a real BloomFilter(10_000, {best_k}) after 1,000 random keys: {set_bits:,} bits set "
    "= {fill:.4f}", best_k=best_k, set_bits=filled.bits_set(), fill=fill)
guess_fill.reveal(fill, label="Measured")

# %% [markdown]
# Half the bits, as derived, and a real filter lands on it. A filter that looks half empty is
# not wasting space: it is at its best, and a fuller one (more keys or more hash functions) errs
# more. The best k is 6.93, so 7 hash functions, and the rate is $2^{-6.93} = 0.00819$, about 1 in
# 122 (the whole k = 7 gives the same to five decimals). Every extra bit per key multiplies the best
# rate by $e^{-(\ln 2)^2} = 0.62$. These are the formulas of `bloomedu.core.theory`
# (`optimal_num_hashes`, `false_positive_rate`); lesson 08 turns them around, to size a filter
# from n and p.

# %% [markdown]
# ## 2. One measurement, and how sure it is
#
# `measure_false_positive_rate(num_bits=m, num_hashes=k, num_items=n, num_queries=q, seed=seed)`
# builds a fresh filter, inserts n random
# 64-bit keys (even ones), queries keys that were never inserted (odd ones), and returns the
# share answered "maybe". A measured rate is a count, x false positives among q queries, and it
# wanders around the true p by about $\sqrt{p(1-p)/q}$. Every table below gives its 95%
# interval as `low` and `high`: the Wilson interval, which stays sensible even when x is 0 or 1
# (`wilson_interval`; `deeper/07_measured_rates` explains it). Beside it, `exact` is the rate
# without section 1's approximations (Bose et al. 2008, derived in `deeper/07_exact_rate`); above
# a few thousand bits it agrees with the classic formula to several digits.

# %%
m, k, n = 2**16, 4, 8192
p_measured = measure_false_positive_rate(num_bits=m, num_hashes=k, num_items=n, num_queries=QUERIES,
                                         seed=SEED)
low, high = wilson_interval(round(p_measured * QUERIES), QUERIES)
say("m={m} k={k} n={n}, {queries:,} queries: measured {measured:.5f}, 95% interval "
    "[{low:.5f}, {high:.5f}]; classic {classic:.5f}, exact {exact:.5f}",
    m=m, k=k, n=n, queries=QUERIES, measured=p_measured, low=low, high=high,
    classic=false_positive_rate(num_bits=m, num_hashes=k, n=n),
    exact=exact_false_positive_rate(num_bits=m, num_hashes=k, n=n))

# %% [markdown]
# The formula's 0.02397 lies inside this interval, near its top. A 95% interval misses the
# truth in about one measurement of twenty, from the luck of the queries alone; sections 3 and 4
# show how often it happens here.

# %% [markdown]
# ## 3. How the rate changes with k
#
# Lesson 05 saw the rate fall and rise again with k, but 5,000 queries could not say where the
# bottom was. Here $m = 2^{20}$ bits hold $n = m/10$ keys (10 bits per key, so the best k is
# 6.93), and each k from 1 to 12 gets its own filter and 1,000,000 queries of its own: 12
# million queries, a couple of seconds on the bulk path.

# %%
guess_valley = predict("The rate at k = 12 is how many times the rate at k = 7?", None)

# %%
m_b, n_b = 2**20, 2**20 // 10
by_k = sweep(num_bits=m_b, num_hashes=range(1, 13), num_items=n_b, num_queries=1_000_000, seed=SEED)
print(format_table(by_k, ["num_hashes", "false_positives", "rate", "low", "high", "exact"],
                   float_format=".5f"))
best_measured = min(by_k, key=lambda r: r.rate)
best_exact = min(by_k, key=lambda r: r.exact)
say("(m/n) ln 2 = {k_star:.2f}; lowest exact rate at k = {exact_k}; "
    "lowest measured rate at k = {measured_k}",
    k_star=m_b / n_b * LN2, exact_k=best_exact.num_hashes, measured_k=best_measured.num_hashes)
for k_here in (4, 6, 8, 12):
    row = by_k[k_here - 1]
    say("k = {k:2d}: {exact_ratio:.3f} x the rate at k = 7 (exact), "
        "{measured_ratio:.3f} x (measured)",
        k=k_here, exact_ratio=row.exact / best_exact.exact,
        measured_ratio=row.rate / best_measured.rate)
guess_valley.reveal(round(by_k[11].rate / by_k[6].rate, 3))

# %%
fig, (whole, bottom) = plt.subplots(1, 2, figsize=FIGSIZE)
draw_rate_sweep([r.num_hashes for r in by_k], by_k, ax=whole, xlabel="k",
                optimum=m_b / n_b * LN2, title="m = 2^20 bits, n = m/10 keys")
near = [r for r in by_k if 5 <= r.num_hashes <= 9]
ks_near = [r.num_hashes for r in near]
bottom.plot(ks_near, [r.exact for r in near], "-", color="#1f4e79", label="exact")
bottom.errorbar(ks_near, [r.rate for r in near],
                yerr=[[r.rate - r.low for r in near], [r.high - r.rate for r in near]],
                fmt="o", color="black", capsize=3, label="measured, 95% interval")
bottom.plot([best_measured.num_hashes], [best_measured.rate], "*", color="#f28e2b",
            markersize=16, label=phrase("lowest measured, k = {k}", k=best_measured.num_hashes))
decorate(bottom, xlabel="k", ylabel="false-positive rate p", xticks=ks_near,
         title="The bottom, on a linear scale", legend=dict(loc="upper center", fontsize=7))
decorate(whole, xticks=range(1, 13), legend=dict(fontsize=7))
show("Left: the false-positive rate against k from 1 to 12 on a log scale, measured points on the "
     "exact curve, falling to a valley at k = 7 and rising again. Right: k = 5 to 9 on a linear "
     "scale, k = 7 lowest and its neighbours 6 and 8 about 3% higher, with 95% intervals.")

# %% [markdown]
# The rate at k = 12 is about 1.66 times the bottom's (1.655 exact, 1.665 measured), and at k = 4
# about 1.44 times (1.442 and 1.456):
# past k = 7, every extra hash sets more bits than its extra check rejects. The measured valley bottoms out at
# k = 7, where the formula does, and on the linear scale the neighbours stand above it: k = 6
# and k = 8 are 3% higher in theory and 3% higher measured, about two standard deviations, so
# their intervals overlap k = 7's only at the edges. Lesson 05's 5,000 queries had a standard
# deviation of 10% of the rate; 1,000,000 have one of 1%. Near the optimum the curve is flat:
# k = 6 or 8 instead of 7 costs 3%. `optimal_num_hashes` picks whichever whole number next to
# $(m/n) \ln 2$ gives the lower rate.

# %% [markdown]
# ## 4. More bits
#
# ### p against m, for k = 4 and n = 1,000
#
# With k = 4 the rate is $(1 - e^{-4n/m})^4$. When m is large, $1 - e^{-4n/m}$ is close to
# $4n/m$, so the rate then falls like $1/m^4$.

# %%
guess_double = predict("By what factor does the rate fall when m doubles from 10,000 to 20,000 "
                       "bits (k = 4, n = 1,000)?", None)

# %%
by_m = sweep(num_bits=np.unique(np.geomspace(2_000, 40_000, 16).astype(int)).tolist(),
             num_hashes=4, num_items=1000, num_queries=QUERIES, seed=SEED)
print(format_table(by_m, ["num_bits", "false_positives", "rate", "low", "high", "classic",
                          "exact"]))
falls = {bits: exact_false_positive_rate(num_bits=bits, num_hashes=4, n=1000)
               / exact_false_positive_rate(num_bits=2 * bits, num_hashes=4, n=1000)
         for bits in (10_000, 20_000, 40_000)}
for bits, factor in falls.items():
    say("m = {m:,} -> {doubled:,}: the exact rate falls {factor:.1f} times",
        m=bits, doubled=2 * bits, factor=factor)
outside = [r for r in by_m if not r.low <= r.exact <= r.high]
say("exact rate inside the 95% interval: {inside} of {rows} rows",
    inside=len(by_m) - len(outside), rows=len(by_m))
for r in outside:
    queries_sd = math.sqrt(r.exact * (1 - r.exact) / QUERIES)
    both_sd = measured_rate_std(num_bits=r.num_bits, num_hashes=4, n=1000, num_queries=QUERIES)
    say("  m = {m:,}: {queries_sds:+.1f} sd of the queries' luck, "
        "{both_sds:+.1f} sd with the filter's own luck too",
        m=r.num_bits, queries_sds=(r.rate - r.exact) / queries_sd,
        both_sds=(r.rate - r.exact) / both_sd)
guess_double.reveal(round(falls[10_000], 1), label="Exact")

# %%
draw_rate_sweep([r.num_bits for r in by_m], by_m, xlabel="m, bits (k = 4, n = 1000)",
                title="More bits, fewer false positives")
show("The false-positive rate on a log scale against m from 2,000 to 40,000 bits, for k = 4 and "
     "n = 1,000: measured points follow the exact curve down from 0.55 to below 0.001, falling "
     "faster as m grows.")

# %% [markdown]
# Not $2^4 = 16$ at first, but closer to it as m grows: doubling from 10,000 bits divides the
# rate by 10.9, from 40,000 by 14.5. While the filter is crowded an extra bit is worth less,
# because $1 - e^{-4n/m}$ is then well below $4n/m$. The measured rates follow the exact line:
# 15 of the 16 intervals hold it. The miss, at m = 2,981, is 3.5 standard deviations off if only
# the queries were lucky, the only luck an interval counts. Each filter has luck of its own too,
# in how many bits its 1,000 keys happened to set; counting both kinds, that row is 1.1 standard
# deviations off, which is ordinary.
#
# **How often should an interval miss?** Across many filters, an interval that counts only the
# queries' luck holds the exact rate less often than its 95%: `deeper/07_measured_rates` counts
# 216 of 240 (90%), shows that the shortfall is the filters' own luck and not chance, and also
# sweeps n. Here, with the 28 rows of sections 3 and 4 (too few to tell 90% from 95%):

# %%
rows_so_far = by_k + by_m
inside_so_far = sum(r.low <= r.exact <= r.high for r in rows_so_far)
say("exact rate inside the 95% interval: {inside} of {rows} rows ({share:.0%})",
    inside=inside_so_far, rows=len(rows_so_far), share=inside_so_far / len(rows_so_far))

# %% [markdown]
# ## 5. The space story
#
# How many bits per item does a rate p cost? At the best k, section 1 gave
# $\ln p = -(m/n)(\ln 2)^2$, so a Bloom filter needs
#
# $$\frac{m}{n} = \frac{\log_2(1/p)}{\ln 2} \approx 1.44 \log_2(1/p)$$
#
# bits per item. No structure that answers "maybe in the set" with rate p can use fewer than
# $\log_2(1/p)$ bits per item (Carter et al., *"Exact and approximate membership testers"*,
# 1978), so a Bloom filter uses about 44% more space than the minimum. Below, each p is also
# measured on a filter that `BloomFilter.from_capacity` sizes for n = 20,000 items (lesson 08
# shows how it rounds m and k).

# %%
space_rows = []
for p in (1e-1, 1e-2, 1e-3, 1e-4, 1e-5):
    sized = BloomFilter.from_capacity(20_000, p)
    measured = measure_false_positive_rate(num_bits=sized.num_bits, num_hashes=sized.num_hashes,
                                           num_items=20_000, num_queries=200_000, seed=SEED)
    space_rows.append({"p": p, "k": sized.num_hashes, "bits/item": sized.num_bits / 20_000,
                       "1.44 log2(1/p)": bits_per_item(p),
                       "log2(1/p)": lower_bound_bits_per_item(p), "measured p": measured})
print(format_table(space_rows, ["p", "k", "bits/item", "1.44 log2(1/p)", "log2(1/p)",
                                "measured p"], float_format=".4g"))

# %%
ps = np.geomspace(0.5, 1e-6, 40)
ax = new_axes()
ax.semilogx(ps, [bits_per_item(p) for p in ps], label=r"Bloom filter, best k: $1.44 \log_2(1/p)$")
ax.semilogx(ps, [lower_bound_bits_per_item(p) for p in ps], "--",
            label=r"lower bound: $\log_2(1/p)$")
ax.semilogx([r["measured p"] for r in space_rows], [r["bits/item"] for r in space_rows], "o",
            color="black", label="from_capacity, measured p")
ax.invert_xaxis()
decorate(ax, xlabel="false-positive rate p", ylabel="bits per item",
         title="Each factor of 10 in p costs 4.8 bits per item")
show("Bits per item against the false-positive rate p, from 0.5 down to one in a million on a "
     "log scale: the Bloom filter's straight line runs 1.44 times the lower bound's, and the "
     "five measured filters sit on it.")

# %% [markdown]
# Each factor of 10 in p costs the same $\ln 10 / (\ln 2)^2 = 4.8$ bits per item, and the
# measured rates sit on their targets (the 7e-05 and 1e-05 rows are counts of 14 and 2 false
# positives in 200,000 queries). Lesson 20 (*After Bloom*) meets structures that come closer to the bound.

# %% [markdown]
# ## Recap
#
# - A bit is still 0 with probability $q \approx e^{-kn/m}$; the rate is $(1 - q)^k$, lowest at
#   $q = 1/2$: $k = (m/n) \ln 2$ and $p = 2^{-k}$.
# - A measured rate is a count: read it with its interval, and compare rates only when their
#   difference is several standard deviations.
# - More bits always help. More hash functions help only up to $k = (m/n) \ln 2$; measured with
#   a million queries per k, the valley bottoms out where the formula says.
# - A Bloom filter costs $1.44 \log_2(1/p)$ bits per item, 44% above the lower bound.
#
# *Going deeper* (optional): `deeper/07_measured_rates` (the Wilson interval, p against n as a
# filter fills, and 240 filters against theory with both kinds of luck), `deeper/07_exact_rate` (why the classic formula is not
# exact, and the exact rate), `deeper/06_small_filters` (why bloomedu mixes its positions).

# %% [markdown]
# ## Exercises
#
# Three exercises on this lesson: compute, predict, then measure. Replace `None` with your
# answer and run the cell: `check` tells you whether it is right and, when it is not, which slip
# it looks like. Worked solutions are in `solutions/07_false_positive_rate_solutions.ipynb`;
# try first.

# %% [markdown]
# **07.1 (compute).** What is the best whole number of hash functions k for m = 12,000 bits
# and n = 1,000 keys?
#
# Section 1 derived the best k and section 3 measured it; here compute it.

# %%
answer = None  # replace None with your answer
check.optimal_k(answer, num_bits=12_000, n=1000)

# %% [markdown]
# **07.2 (predict).** What false-positive rate do you expect with m = 12,000, n = 1,000 and
# k = 8?
#
# Either formula of this lesson is accepted: at 12,000 bits they agree closely.

# %%
answer = None  # replace None with your answer
check.fpp(answer, num_bits=12_000, num_hashes=8, n=1000)

# %% [markdown]
# **07.3 (measure).** Fill BloomFilter(10_000, 7) with 1,000 random keys and measure its
# false-positive rate on 100,000 new keys.
#
# One function of `bloomedu.teaching.experiments` does the whole experiment; or build it by hand with
# `add_many` and `contains_many`, querying only keys you never inserted.

# %%
answer = None  # replace None with your answer
check.measured_fpp(answer, num_bits=10_000, num_hashes=7, n=1000, trials=100_000)

# %% [markdown]
# ## What comes next
#
# Lesson 08 (*Sizing a filter*) turns this lesson's formulas around: from the number of items n
# and the rate p a service accepts, the bits m and the hash functions k, for the second
# article's million URLs and for the first article's day of clicks.
#
# *Where this lesson's code lives:* `bloomedu/core/theory.py`, `bloomedu/core/occupancy.py` (the
# exact rate), `bloomedu/teaching/experiments.py`, the bulk path of `bloomedu/core/filter.py`; its
# tests: `tests/test_theory.py`, `tests/test_experiments.py`, `tests/test_bulk.py`. The README's
# table maps every article step to its module, lesson and test.
