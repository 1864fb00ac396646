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
# # Solutions · 08 · Sizing a filter: m and k from n and p
#
# Worked solutions to the exercises at the end of lesson
# [08_sizing_a_filter.ipynb](../08_sizing_a_filter.ipynb). Try them there first. Each answer is
# derived in code, never typed in, and `check` confirms it.

# %%
import math

import numpy as np

from bloomedu import BloomFilter
from bloomedu.core.theory import num_bits_for, optimal_num_hashes
from bloomedu.teaching.exercises import check, show
from bloomedu.i18n import say

SEED = 8
show("08")

# %% [markdown]
# ## 08.1 (compute)
#
# $m = -n \ln p / (\ln 2)^2$, rounded up to a whole bit: the natural logarithm, and the square of
# $\ln 2$ in the denominator.

# %%
n, p = 50_000, 0.02
exact = -n * math.log(p) / math.log(2) ** 2
answer = math.ceil(exact)
say("-n ln p / (ln 2)^2 = {exact:,.2f} -> m = {m:,} bits = {bits_per_item:.2f} bits per item, "
    "k = {k}",
    exact=exact, m=answer, bits_per_item=answer / n, k=optimal_num_hashes(num_bits=answer, n=n))
assert answer == num_bits_for(n=n, p=p) == BloomFilter.from_capacity(n, p).num_bits

# %%
check.sized_num_bits(answer, n=50_000, p=0.02)

# %% [markdown]
# ## 08.2 (predict)
#
# Click number i (counted from 0) meets a filter that holds i keys, so it is dropped with
# probability $(1 - e^{-ki/m})^k$. The share dropped is the mean of that over the n clicks, with
# m and k as `from_capacity` sizes them. numpy adds up the million terms at once; the lesson's
# `expected_drops` has the same sum in closed form.

# %%
n, p = 1_000_000, 0.01
m = num_bits_for(n=n, p=p)
k = optimal_num_hashes(num_bits=m, n=n)
i = np.arange(n, dtype=float)
answer = float(np.mean((1 - np.exp(-k * i / m)) ** k))
say("m = {m:,}, k = {k}: mean rate over the clicks {mean_rate:.3e} = {share_of_p:.3f} of p; "
    "rate at the last click {last_rate:.3e}",
    m=m, k=k, mean_rate=answer, share_of_p=answer / p,
    last_rate=(1 - math.exp(-k * (n - 1) / m)) ** k)

# %%
check.day_share_dropped(answer, n=1_000_000, p=0.01)

# %% [markdown]
# ## 08.3 (measure)
#
# 1,200,000 distinct random 64-bit keys: the first 200,000 go in through `add_many`, the other
# million are queried with `contains_many`, so every "maybe" is a false positive.

# %%
n, p, trials = 200_000, 0.005, 1_000_000
keys = np.random.default_rng(SEED).integers(0, 2**64, size=n + trials, dtype=np.uint64)
assert np.unique(keys).size == keys.size  # distinct: no query was inserted
bloom = BloomFilter.from_capacity(n, p)
bloom.add_many(keys[:n])
answer = float(bloom.contains_many(keys[n:]).mean())
say("{filter!r}: measured rate {measured:.5f} on {trials:,} keys never inserted (asked for {p})",
    filter=bloom, measured=answer, trials=trials, p=p)

# %%
check.measured_sized_fpp(answer, n=200_000, p=0.005, trials=1_000_000)
