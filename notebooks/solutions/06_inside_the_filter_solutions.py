# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: -slideshow
#     formats: ipynb,py:percent
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
# # Solutions · 06 · Inside the filter: k positions from one hash
#
# Worked solutions to the exercises at the end of lesson
# [06_inside_the_filter.ipynb](../06_inside_the_filter.ipynb). Try them there first. Each answer
# is derived in code, never typed in, and `check` confirms it.

# %%
import math

import numpy as np

from bloomedu import BloomFilter
from bloomedu.core.hashing import fmix64, hash128
from bloomedu.teaching.exercises import check, show
from bloomedu.i18n import say

SEED = 6
show("06")

# %% [markdown]
# ## 06.1 (compute)
#
# MurmurHash3 x64 128 of the key gives $h_1$ and $h_2$; position i is
# $\operatorname{fmix64}((h_1 + i h_2) \bmod 2^{64}) \bmod m$, with i counted from 0. Python's
# integers never overflow, so the $\bmod 2^{64}$ has to be written out.

# %%
key, m, k, i = "789", 1000, 3, 2
h1, h2 = hash128(key)
value = (h1 + i * h2) % 2**64
answer = fmix64(value) % m
print(f"h1 = {h1}, h2 = {h2}")
say("(h1 + {i}*h2) mod 2^64 = {value}; fmix64 of it mod {m} = {position}",
    i=i, value=value, m=m, position=answer)
assert answer == BloomFilter(m, k).bit_indices(key)[i]  # the library agrees
say("all {k} positions: {positions}", k=k, positions=BloomFilter(m, k).bit_indices(key))

# %%
check.double_hash_position(answer, key='789', num_bits=1000, num_hashes=3, i=2)

# %% [markdown]
# ## 06.2 (predict)
#
# Draw the 4 positions one after another. The second misses the first with probability
# $1 - 1/m$, the third misses both with probability $1 - 2/m$, the fourth misses all three with
# probability $1 - 3/m$. All four are distinct with the product of those chances, and the share
# asked for is the rest.

# %%
m, k = 64, 4
all_distinct = math.prod(1 - j / m for j in range(k))
answer = predicted = 1 - all_distinct
say("P(all {k} distinct) = (63/64)(62/64)(61/64) = {all_distinct:.5f}; the rest: {rest:.5f}",
    k=k, all_distinct=all_distinct, rest=answer)
say("(adding up the 6 pairs' chances, 6/64 = {pairs:.5f}, counts some keys twice)", pairs=6 / 64)

# %%
check.coinciding_positions(answer, num_bits=64, num_hashes=4)

# %% [markdown]
# ## 06.3 (measure)
#
# 100,000 random 64-bit keys; for each, its positions in `BloomFilter(64, 4)`, sorted, and
# whether two neighbours are equal.

# %%
trials = 100_000
keys = np.random.default_rng(SEED).integers(0, 2**63, size=trials, dtype=np.uint64)
bloom = BloomFilter(64, 4)
positions = np.sort(np.array([bloom.bit_indices(int(key)) for key in keys]), axis=1)
coinciding = (np.diff(positions, axis=1) == 0).any(axis=1)
answer = float(coinciding.mean())
sd = math.sqrt(predicted * (1 - predicted) / trials)
say("{coinciding:,} of {trials:,} keys have fewer than 4 distinct positions: {share:.5f} "
    "(06.2 predicts {predicted:.5f}, give or take {sd:.5f})",
    coinciding=int(coinciding.sum()), trials=trials, share=answer, predicted=predicted, sd=sd)

# %%
check.measured_coinciding_positions(answer, num_bits=64, num_hashes=4, trials=100_000)
