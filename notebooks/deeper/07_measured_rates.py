# ---
# jupyter:
#   bloomedu:
#     summary: How sure a measured rate is (the Wilson interval), and 240 filters against
#       the exact rate, with both kinds of luck counted.
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
# # Going deeper 07 · Measured rates: how sure, and how far from theory
#
# An optional notebook that deepens lesson 07 (*The false-positive rate*), sections 2 and 4:
# what the 95% interval printed beside every measured rate means, why it is Wilson's and not the
# textbook's, and what 240 filters say about it. The short answer to the last question: the
# interval holds the exact rate in 90% of the rows, not 95%, because it counts one kind of luck
# and a filter has two.

# %%
# %matplotlib inline
import math
import time

import matplotlib.pyplot as plt
import numpy as np

from bloomedu.core.theory import measured_rate_std
from bloomedu.i18n import phrase, say
from bloomedu.teaching.experiments import format_table, sweep, wilson_interval
from bloomedu.teaching.plots import decorate, draw_rate_sweep, new_axes, show

SEED = 6
QUERIES = 20_000

# %% [markdown]
# ## The Wilson interval
#
# A measured rate is a count: x false positives among q queries, the rate $x/q$. If each query
# is a false positive with probability p, independently, $x/q$ wanders around p by about
# $\sqrt{p(1-p)/q}$, its standard deviation. The textbook 95% interval,
#
# $$\frac{x}{q} \pm 1.96 \sqrt{\frac{(x/q)(1 - x/q)}{q}},$$
#
# fails exactly where Bloom filters live, at small counts: with no false positive it has zero
# width (as if $p = 0$ were certain), and with one or two it reaches below zero.
#
# Edwin Wilson's interval (*"Probable inference, the law of succession, and statistical
# inference"*, 1927) turns the question around: it keeps every p under which the observed $x/q$
# lies within 1.96 standard deviations $\sqrt{p(1-p)/q}$ of p, the spread of that p rather than
# of the measurement. Solving $(x/q - p)^2 = 1.96^2 \, p(1-p)/q$ for p gives its two ends. It
# never leaves $[0, 1]$ and is never empty: no false positive in 20,000 queries still allows p up
# to 0.00019. `bloomedu.teaching.experiments.wilson_interval` computes it. The two intervals side
# by side:

# %%
say("      x        q       x/q   textbook 95%             Wilson 95%")
for x, q in [(8_102, 1_000_000), (443, 20_000), (2, 20_000), (0, 20_000)]:
    rate = x / q
    half = 1.959964 * math.sqrt(rate * (1 - rate) / q)
    low, high = wilson_interval(x, q)
    print(f"{x:7,d}  {q:9,d}  {rate:.6f}  [{rate - half:+.6f}, {rate + half:.6f}]  "
          f"[{low:.6f}, {high:.6f}]")

# %% [markdown]
# With thousands of false positives the two agree; with a handful only Wilson's makes sense.

# %% [markdown]
# ## p against n: one filter filling up
#
# Lesson 07 swept k and m; here n. One filter of $m = 2^{16}$ bits and k = 4 is filled step by
# step and queried at each of ten values of n, from $m/64$ to $m/2$ keys:

# %%
n_grid = sorted({int(round(x)) for x in np.geomspace(2**16 / 64, 2**16 / 2, 10)})
by_n = sweep(num_bits=2**16, num_hashes=4, num_items=n_grid, num_queries=QUERIES, seed=SEED)
print(format_table(by_n, ["num_items", "false_positives", "rate", "low", "high", "classic",
                          "exact"]))
say("exact rate inside the 95% interval: {inside} of {rows} rows",
    inside=sum(r.low <= r.exact <= r.high for r in by_n), rows=len(by_n))

# %%
draw_rate_sweep([r.num_items for r in by_n], by_n, xlabel="n, items inserted (m = 2^16, k = 4)",
                title="The filter fills up")
plt.gca().set_xscale("log")
show("The false-positive rate against n, the keys inserted into 65,536 bits with k = 4, both on "
     "log scales: measured points on the exact curve, rising steeply while the filter is sparse "
     "and flattening above 0.1 as most bits are set.")

# %% [markdown]
# The rate grows like $n^k$ while the filter is sparse (here $n^4$: twice the keys, up to
# sixteen times the rate), and flattens as most bits are set. Nine of the ten intervals hold the
# exact rate; the last row's misses it (0.5590 lies above its `high`, 0.5577). These ten rows are
# ten of the 240 below, where such misses can be counted.
#
# ## 240 filters
#
# The grid: m in $2^{14}$, $2^{16}$, $2^{18}$; k from 1 to 8; 10 values of n from $m/64$ to
# $m/2$. That is 240 filters and 4.8 million absent queries. For each (m, k), `sweep` inserts the
# keys once, in order of growing n, and queries at every n (the ten rows above, $m = 2^{16}$ and
# k = 4, are ten of these). It runs in seconds on the bulk path (the time printed
# depends on the machine):

# %% tags=["nbval-ignore-output"]
def n_values(m):
    """Ten values of n from m/64 to m/2, evenly spaced on a log scale."""
    return sorted({int(round(x)) for x in np.geomspace(m / 64, m / 2, 10)})


start = time.perf_counter()
grid = [row for m in (2**14, 2**16, 2**18)
        for row in sweep(num_bits=m, num_hashes=range(1, 9), num_items=n_values(m),
                         num_queries=QUERIES, seed=SEED)]
say("{filters} filters, {queries:,d} queries in {seconds:.2f} s",
    filters=len(grid), queries=sum(r.num_queries for r in grid),
    seconds=time.perf_counter() - start)

# %%
say("{filters} filters, the first five:", filters=len(grid))
print(format_table(grid[:5]))
inside = sum(r.low <= r.exact <= r.high for r in grid)
say("exact rate inside the Wilson 95% interval: {inside} of {rows} ({share:.1%})",
    inside=inside, rows=len(grid), share=inside / len(grid))
at_most = sum(math.comb(len(grid), i) * 0.95**i * 0.05 ** (len(grid) - i) for i in range(inside + 1))
say("chance that {rows} honest 95% intervals hold the truth {inside} times or fewer: "
    "{chance:.5f}, about 1 in {one_in:,.0f}",
    rows=len(grid), inside=inside, chance=at_most, one_in=1 / at_most)

# %% [markdown]
# A 95% interval should hold the truth in 95% of the rows, 228 of 240; here it holds it in 216.
# The shortfall is not chance (240 honest intervals do that badly about once in 900 grids, the
# line above), and it is not the filter: it is the interval, which counts only one of two
# kinds of luck.
#
# ## Two kinds of luck, and z-scores
#
# A **z-score** is a distance in standard deviations: $z = (\text{measured} - \text{expected})
# / \text{sd}$. For a quantity with a normal spread, $|z| > 2$ happens in 4.6% of measurements
# and $|z| > 3$ in 0.27%: among 240 rows, about 11 and 0.6. The sd must count two kinds of luck.
# The **queries'**: the binomial spread $\sqrt{p(1-p)/q}$ that the Wilson interval is built on.
# And the **filter's**: X, the number of bits its n keys set, varies from one filter to the
# next, and a filter with more bits set than average errs more often on every query.
# `measured_rate_std` includes both. Below, the same rows measured in both units:

# %%
queries_sd = np.array([math.sqrt(r.exact * (1 - r.exact) / r.num_queries) for r in grid])
both_sd = np.array([measured_rate_std(num_bits=r.num_bits, num_hashes=r.num_hashes, n=r.num_items,
                                      num_queries=r.num_queries) for r in grid])
error = np.array([r.rate - r.exact for r in grid])
with np.errstate(divide="ignore", invalid="ignore"):
    z_queries = np.where(queries_sd > 0, error / queries_sd, 0.0)
z = error / both_sd
for luck, scores in [(phrase("the queries' luck only"), z_queries),
                     (phrase("both kinds of luck"), z)]:
    say("{luck:23}: |z| <= 1.96 in {within} of {rows} rows, sd of z {sd:.2f}, "
        "|z| > 2 in {over_2}, |z| > 3 in {over_3}",
        luck=luck, within=int((abs(scores) <= 1.96).sum()), rows=len(grid), sd=scores.std(),
        over_2=int((abs(scores) > 2).sum()), over_3=int((abs(scores) > 3).sum()))
say("the filter's luck makes the sd up to {largest:.2f} times larger (median {median:.3f})",
    largest=(both_sd / np.where(queries_sd > 0, queries_sd, np.inf)).max(),
    median=np.median(both_sd[queries_sd > 0] / queries_sd[queries_sd > 0]))

# %% [markdown]
# Counted in the queries' luck alone, the errors spread with a standard deviation of 1.14
# instead of 1, and only 216 rows have $|z| \le 1.96$: the Wilson interval's 216. Counted in
# both kinds, they spread with 0.98, and 228 rows of 240, exactly 95%, fall within 1.96. For half
# the rows the two sds differ by under 1% (the median ratio is 1.007), so the difference comes from a few rows where the
# filter's luck dominates (a few bits per key, k large enough that one more set bit matters):
# there the sd is up to three times the queries' alone. The z-scores, against the normal curve:

# %%
ax = new_axes()
ax.hist(z, bins=np.arange(-4, 4.25, 0.5), density=True, color="#9ecae1", edgecolor="white",
        label="240 filters: (measured - exact) / sd, both kinds of luck")
grid_z = np.linspace(-4, 4, 200)
ax.plot(grid_z, np.exp(-grid_z**2 / 2) / math.sqrt(2 * math.pi), color="#1f4e79",
        label="normal curve")
decorate(ax, xlabel="z", ylabel="density", title="How far 240 measured rates land from theory")
show("A histogram of the 240 filters' z-scores, counting both kinds of luck, from -4 to 4: it "
     "follows the normal curve drawn over it, centred on 0 with most scores between -2 and 2.")

# %% [markdown]
# ## Counts near zero
#
# The z-score measures distance on a normal scale, and a count that should be near zero is not
# normal. For a row far out we ask instead how likely its count is when false positives are rare
# events (a Poisson count with the expected mean):

# %%
def poisson_tail(count, mean):
    """P(at least ``count`` events) for a Poisson count with this mean."""
    return 1 - sum(math.exp(-mean) * mean**i / math.factorial(i) for i in range(count))


for row, score in zip(grid, z):
    if abs(score) > 3:
        expected = row.exact * row.num_queries
        say("m={m} k={k} n={n}: {fp} false positive(s) where {expected:.2f} were expected "
            "(z = {z:+.1f}); chance of at least {fp}: {chance:.3f}",
            m=row.num_bits, k=row.num_hashes, n=row.num_items, fp=row.false_positives,
            expected=expected, z=score, chance=poisson_tail(row.false_positives, expected))
tiny = [r for r in grid if r.exact * r.num_queries < 1]
say("rows expecting fewer than one false positive: {rows}, "
    "{inside} of them inside their Wilson interval",
    rows=len(tiny), inside=sum(r.low <= r.exact <= r.high for r in tiny))

# %% [markdown]
# When only a few hundredths of a false positive are expected, a single one is already several
# "standard deviations" away, yet seeing it is not rare: the chance printed beside the row is its
# Poisson probability, and 36 rows of the grid expect less than one. Apart from that, the tails
# are what chance gives.
#
# Back to lesson 07 (*The false-positive rate*), section 4.
