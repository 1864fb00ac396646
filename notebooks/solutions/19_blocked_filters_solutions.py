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
# # Solutions · 19 · Blocked filters: one cache miss per key
#
# Worked solutions to the exercises at the end of lesson
# [19_blocked_filters.ipynb](../19_blocked_filters.ipynb). Try them there first. Each answer is
# derived in code, never typed in, and `check` confirms it.

# %%
import math

import numpy as np

from bloomedu import BloomFilter
from bloomedu.i18n import say
from bloomedu.teaching.exercises import check, show
from bloomedu.variants import BlockedBloomFilter
from bloomedu.variants.blocked import split_block_false_positive_rate

SEED = 12
show("19")

# %% [markdown]
# ## 19.1 (compute)
#
# m = 14,377,588 bits make $L = \lceil m / 512 \rceil$ cache lines. A position misses a given
# line with probability $1 - 1/L$, all k = 10 positions miss it with $(1 - 1/L)^k$, so the
# expected number of lines touched is $L\,(1 - (1 - 1/L)^k)$: just below k, since two positions
# rarely share a line.
# Counting the lines of real keys agrees.

# %%
m, k = 14_377_588, 10
lines = math.ceil(m / 512)
answer = lines * (1 - (1 - 1 / lines) ** k)
f = BloomFilter(m, k)
keys = np.random.default_rng(SEED).integers(0, 2 ** 63, 5000).tolist()
counted = np.mean([len({p // 512 for p in f.bit_indices(key)}) for key in keys])
say("L = {lines:,} lines: expected {expected:.4f} lines a key, counted {counted:.4f} "
    "over 5,000 keys", lines=lines, expected=answer, counted=counted)

# %%
check.cache_lines_touched(answer, num_bits=14_377_588, num_hashes=10)

# %% [markdown]
# ## 19.2 (predict)
#
# 20,000 keys in 1,000 blocks: $\lambda = 20$ keys a block on average, Poisson distributed. A
# block with j keys answers a query "maybe" with probability $(1 - (31/32)^j)^8$; the expected
# rate is the Poisson average of that,
#
# $$p = \sum_{j \ge 0} e^{-\lambda} \frac{\lambda^j}{j!} \left(1 - (31/32)^j\right)^8 .$$
#
# Plugging $\lambda = 20$ straight in, or using a plain filter's formula for the
# same m = 256,000 bits, gives less: both miss the uneven filling of the blocks.

# %%
n, blocks = 20_000, 1_000
mean = n / blocks
answer = sum(math.exp(j * math.log(mean) - mean - math.lgamma(j + 1)) * (1 - (31 / 32) ** j) ** 8
             for j in range(1, 200))
assert math.isclose(answer, split_block_false_positive_rate(num_blocks=blocks, n=n), rel_tol=1e-9)
say("Poisson average: {rate:.6f}", rate=answer)
say("a block of exactly 20 keys: {rate:.6f}", rate=(1 - (31 / 32) ** 20) ** 8)
say("a plain filter, k = 8, m = 256,000: {rate:.6f}",
    rate=(1 - math.exp(-8 * n / (256 * blocks))) ** 8)

# %%
check.split_block_fpp(answer, n=20_000, num_blocks=1000)

# %% [markdown]
# ## 19.3 (measure)
#
# Insert 20,000 seeded random keys, query 100,000 others drawn from a range the inserted ones
# cannot come from, and count the "maybe" answers.

# %%
rng = np.random.default_rng(SEED)
f = BlockedBloomFilter(256_000)
inserted = rng.integers(0, 2 ** 63, 20_000, dtype=np.uint64)
f.add_many(inserted)
assert f.contains_many(inserted).all()  # no false negatives
queries = rng.integers(2 ** 63, 2 ** 64 - 1, 100_000, dtype=np.uint64)
answer = float(f.contains_many(queries).mean())
say("measured {measured:.5f} against the Poisson average {average:.5f}", measured=answer,
    average=split_block_false_positive_rate(num_blocks=f.num_blocks, n=20_000))

# %%
check.measured_blocked_fpp(answer, num_bits=256_000, n=20_000, trials=100_000)
