# ---
# jupyter:
#   bloomedu:
#     summary: Fan et al.'s bound on counter overflow derived in three inequalities,
#       then set against the exact binomial tail and the counters of real filters.
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
# # Going deeper 16 · Why four bits a counter: Fan's bound, derived
#
# An optional notebook that deepens lesson 16 (*Deleting and growing*), which quoted Fan, Cao,
# Almeida and Broder's bound (2000) on the chance that any counter of a counting filter needs
# more than 4 bits. Here it is derived, and set against the exact tail it bounds and against the
# counters of real filters.

# %%
import math

import numpy as np

from bloomedu.i18n import say
from bloomedu.variants import CountingBloomFilter
from bloomedu.variants import theory as vt

SEED = 16

# %% [markdown]
# ## The derivation
#
# A counting filter of m counters receives n keys, each incrementing k counters. As in lesson 07,
# take each of the $N = nk$ increments to land on a given counter with probability $1/m$,
# independently. A counter's count X is then $\text{Binomial}(nk, 1/m)$.
#
# **One counter.** $X \ge j$ means that some set of j increments all landed on this counter.
# There are $\binom{nk}{j}$ such sets, each landing there with probability $m^{-j}$, so by the
# union bound
#
# $$P(X \ge j) \le \binom{nk}{j} \frac{1}{m^j}.$$
#
# **Two estimates.** $\binom{N}{j} = \frac{N (N-1) \cdots (N-j+1)}{j!} \le \frac{N^j}{j!}$, and
# $j! \ge (j/e)^j$ (from $e^j = \sum_i j^i / i! \ge j^j / j!$). Together
#
# $$P(X \ge j) \le \frac{(nk)^j}{j!\, m^j} \le \left(\frac{e\, n k}{j\, m}\right)^j.$$
#
# **Every counter.** The filter overflows when any of the m counters reaches j; a union bound
# over them gives Fan et al.'s bound
#
# $$P\left(\max_i X_i \ge j\right) \le m \left(\frac{e\, n k}{j\, m}\right)^j.$$
#
# **At the best k.** Lesson 08's best $k = (m/n) \ln 2$ makes $nk/m = \ln 2$, whatever m and n:
#
# $$P\left(\max_i X_i \ge j\right) \le m \left(\frac{e \ln 2}{j}\right)^j .$$
#
# A 4-bit counter holds 0 to 15; it needs a fifth bit when a count reaches $j = 16$, and
# $(e \ln 2 / 16)^{16} \approx 1.37 \cdot 10^{-15}$. Even for $m = 10^{9}$ counters the chance
# is about $10^{-6}$: four bits suffice.

# %%
for j in (4, 8, 16):
    factor = (math.e * math.log(2) / j) ** j
    say("counters of {bits} bits overflow at j = {j:2d}: (e ln 2 / j)^j = {factor:.3g}",
        bits=int(math.log2(j)), j=j, factor=factor)

# %% [markdown]
# ## How loose the bound is
#
# Each step gave something away: the union bound over sets of increments, $N^j / j!$, Stirling's
# $(j/e)^j$, and the union over counters. The exact chance for one counter is the binomial tail
# (`counter_tail`); $m$ times it is the expected number of counters at j or more, itself an upper
# bound on the chance that there is one. Here, at lesson 09's filter for a million keys
# ($m = 14{,}377{,}588$, $k = 10$), for counters of 2, 3 and 4 bits:

# %%
m, n, k = 14_377_588, 1_000_000, 10
say("nk/m = {load:.4f} (ln 2 = {ln2:.4f})", load=n * k / m, ln2=math.log(2))
say("  j  m P(X >= j), exact  m C(nk, j) / m^j  Fan bound bound / exact")
for j in (4, 8, 16):
    exact = m * vt.counter_tail(num_cells=m, num_hashes=k, n=n, value=j)
    sets = m * math.exp(math.lgamma(n * k + 1) - math.lgamma(j + 1) - math.lgamma(n * k - j + 1)
                        - j * math.log(m))
    bound = m * (math.e * n * k / (j * m)) ** j
    print(f"{j:3d} {exact:19.3e} {sets:17.3e} {bound:10.3e} {bound / exact:13.1f}")

# %% [markdown]
# The bound is above the exact figure by a factor that grows with j (the last column), where
# both are far below any chance worth worrying about at j = 16. The union over sets of
# increments costs a factor of less than two (the third column against the second); nearly all
# the rest is $j! \ge (j/e)^j$, which gives away Stirling's $\sqrt{2 \pi j}$, about 10 at
# j = 16 (the fourth column against the third).
#
# ## Against real counters
#
# 8-bit counters never saturate at these loads, so a `CountingBloomFilter(m, k,
# counter_bits=8)` shows every count. A smaller filter at the same load, $nk/m \approx \ln 2$,
# and an overloaded one at 8 increments a counter, as in lesson 16: how many counters reach j,
# against $m \, P(X \ge j)$ and the bound.

# %%
for m, n, k in [(143_776, 10_000, 10), (100_000, 100_000, 8)]:
    f = CountingBloomFilter(m, k, counter_bits=8)
    f.add_many(np.random.default_rng(SEED).integers(0, 2 ** 63, n, dtype=np.uint64))
    histogram = f.counters.histogram()
    at_least = histogram[::-1].cumsum()[::-1]
    say("m = {m:,}, n = {n:,}, k = {k}: nk/m = {load:.2f}, largest count {largest}",
        m=m, n=n, k=k, load=n * k / m, largest=int(np.flatnonzero(histogram).max()))
    say("    j counters >= j  m P(X >= j)  Fan bound")
    for j in (4, 8, 16, 24):
        expected = m * vt.counter_tail(num_cells=m, num_hashes=k, n=n, value=j)
        print(f"  {j:3d} {int(at_least[j]):13,d} {expected:12.4g} "
              f"{min(1.0, m * (math.e * n * k / (j * m)) ** j):10.3g}")

# %% [markdown]
# At the best k's load the counts follow $m \, P(X \ge j)$ and the largest count is far from 16;
# the bound, read as a probability, is capped at 1 for j = 4 and 8 (m times a small factor is
# still above 1 on 143,776 counters) and tiny from j = 16 on. Overloaded,
# counts of 16 and more are common, the tail still predicts how many, and the bound is capped at
# 1 for every j shown: it says nothing there, which is why lesson 16's overloaded filter
# saturates its 4-bit counters. The bound is a statement about the best k; a filter filled
# past its capacity needs the tail, or wider counters.
#
# Back to lesson 16 (*Deleting and growing*).
