# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: -slideshow
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
# # Solutions · 16 · Deleting and growing: stable, counting and scalable filters
#
# Worked solutions to the exercises at the end of lesson
# [16_deleting_and_growing.ipynb](../16_deleting_and_growing.ipynb). Try them there first.
# Each answer is derived in code, never typed in, and `check` confirms it.

# %%
import math

import numpy as np

from bloomedu import CountingBloomFilter, ScalableBloomFilter
from bloomedu.core.theory import exact_false_positive_rate
from bloomedu.i18n import say
from bloomedu.teaching.exercises import check, show
from bloomedu.variants import theory as vt

show("16")

# %% [markdown]
# ## 16.1 (compute)
#
# Sub-filter i errs with $p_0 r^i$. A key never added is a false positive if any sub-filter
# errs, and the chance of that is at most the sum of their rates, a geometric series:
# $p_0 + p_0 r + p_0 r^2 + \dots = p_0 / (1 - r)$. The product $1 - \prod_i (1 - p_0 r^i)$, the
# rate itself in the limit, is a little below it.

# %%
p0, r = 0.02, 0.8
answer = p0 / (1 - r)
limit = vt.compound_false_positive_rate(p0 * r ** i for i in range(500))
say("bound p0 / (1 - r) = {bound:.4f}; the product's limit {limit:.4f}", bound=answer, limit=limit)

# %%
check.scalable_bound(answer, first_fpp=0.02, tightening=0.8)

# %% [markdown]
# ## 16.2 (predict)
#
# Each of the $kn$ increments lands on a given counter with chance $1/m$, so a counter's count
# X is Binomial(kn, 1/m), with mean $kn/m = 7$. A 4-bit counter stays at 15 once it gets there,
# so the saturated counters are those with $X \ge 15$, and we expect $m\,P(X \ge 15)$ of them.
# The binomial sum, by hand, beside its Poisson approximation:

# %%
m, k, n = 100_000, 7, 100_000
trials, q = k * n, 1 / m
below = sum(math.comb(trials, j) * q ** j * (1 - q) ** (trials - j) for j in range(15))
answer = m * (1 - below)
poisson = m * (1 - sum(math.exp(-k * n / m) * (k * n / m) ** j / math.factorial(j)
                       for j in range(15)))
counting = CountingBloomFilter(m, k)
counting.add_many(np.arange(n, dtype=np.uint64))
say("expected saturated: binomial {binomial:.1f}, Poisson {poisson:.1f}; "
    "one filter measures {measured:,d}", binomial=answer, poisson=poisson,
    measured=counting.saturated())

# %%
check.saturated_counters(answer, num_cells=100_000, num_hashes=7, n=100_000)

# %% [markdown]
# ## 16.3 (measure)
#
# Integer keys 0 … 49,999 go in; the queries come from a range never added, so every "present"
# is a false positive. The formula beside it is the compound rate of the sub-filters' exact
# rates at their loads.

# %%
f = ScalableBloomFilter(1000, 0.001)
f.add_many(np.arange(50_000, dtype=np.uint64))
fresh = np.arange(2 ** 40, 2 ** 40 + 100_000, dtype=np.uint64)
answer = float(f.contains_many(fresh).mean())
formula = vt.compound_false_positive_rate(
    exact_false_positive_rate(num_bits=t.num_bits, num_hashes=t.num_hashes, n=t.count) for t in f.tables)
say("{tables} sub-filters holding {counts}; measured {rate:.5f}, formula {formula:.5f}, "
    "bound {bound}", tables=len(f.tables), counts=[t.count for t in f.tables], rate=answer,
    formula=formula, bound=f.bound)

# %%
check.measured_scalable_fpp(answer, initial_capacity=1000, fpp=0.001, n=50_000, trials=100_000)
