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
# # Solutions · 07 · The false-positive rate: derived, then measured
#
# Worked solutions to the exercises at the end of lesson
# [07_false_positive_rate.ipynb](../07_false_positive_rate.ipynb). Try them there first. Each
# answer is derived in code, never typed in, and `check` confirms it.

# %%
import math

import numpy as np

from bloomedu import BloomFilter
from bloomedu.teaching.exercises import check, show
from bloomedu.i18n import say
from bloomedu.teaching.experiments import measure_false_positive_rate
from bloomedu.core.theory import exact_false_positive_rate, false_positive_rate, optimal_num_hashes

SEED = 6
show("07")

# %% [markdown]
# ## 07.1 (compute)
#
# For a fixed number of bits per key $m/n$, the classic rate $(1 - e^{-kn/m})^k$ is smallest at
# $k = (m/n) \ln 2$. That is rarely a whole number, so compare the whole numbers on either side.

# %%
m, n = 12_000, 1000
best_real = m / n * math.log(2)
neighbours = [math.floor(best_real), math.ceil(best_real)]
for k in neighbours:
    say("k = {k}: classic rate {rate:.6f}",
        k=k, rate=false_positive_rate(num_bits=m, num_hashes=k, n=n))
answer = min(neighbours, key=lambda k: false_positive_rate(num_bits=m, num_hashes=k, n=n))
assert answer == optimal_num_hashes(num_bits=m, n=n)
say("(m/n) ln 2 = {k_star:.3f} -> k = {k}", k_star=best_real, k=answer)

# %%
check.optimal_k(answer, num_bits=12_000, n=1000)

# %% [markdown]
# ## 07.2 (predict)
#
# After n keys a bit is still 0 with probability about $e^{-kn/m}$. A key never inserted is a
# false positive when all k of its bits are set. At m = 12,000 bits the exact rate is within a
# fraction of a percent of the classic one, so either answer passes.

# %%
m, n, k = 12_000, 1000, 8
fill = 1 - math.exp(-k * n / m)
answer = fill**k
say("bits set: {fill:.4f}; classic rate {classic:.6f}; exact rate {exact:.6f}",
    fill=fill, classic=answer, exact=exact_false_positive_rate(num_bits=m, num_hashes=k, n=n))

# %%
check.fpp(answer, num_bits=12_000, num_hashes=8, n=1000)

# %% [markdown]
# ## 07.3 (measure)
#
# Draw random 64-bit keys; insert 1,000 even ones and query 100,000 odd ones, so that no query
# was ever inserted and every "maybe" is a false positive. `measure_false_positive_rate` runs
# the same experiment in one call (with keys of its own, so its figure differs a little).

# %%
num_bits, num_hashes, n, trials = 10_000, 7, 1000, 100_000
rng = np.random.default_rng(SEED)
keys = rng.integers(2**63, size=n + trials, dtype=np.uint64) * np.uint64(2)
inserted, queries = keys[:n], keys[n:] + np.uint64(1)
bloom = BloomFilter(num_bits, num_hashes)
bloom.add_many(inserted)
assert bloom.contains_many(inserted).all()  # no false negatives
answer = int(np.count_nonzero(bloom.contains_many(queries))) / trials
one_call = measure_false_positive_rate(num_bits=num_bits, num_hashes=num_hashes, num_items=n,
                                       num_queries=trials, seed=SEED)
say("measured by hand {by_hand:.5f}; measure_false_positive_rate {one_call:.5f}; exact {exact:.5f}",
    by_hand=answer, one_call=one_call,
    exact=exact_false_positive_rate(num_bits=num_bits, num_hashes=num_hashes, n=n))

# %%
check.measured_fpp(answer, num_bits=10_000, num_hashes=7, n=1000, trials=100_000)
