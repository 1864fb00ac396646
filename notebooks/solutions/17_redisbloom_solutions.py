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
# # Solutions · 17 · RedisBloom, bit for bit
#
# Worked solutions to the exercises at the end of lesson
# [17_redisbloom.ipynb](../17_redisbloom.ipynb). Try them there
# first. Each answer is derived in code, never typed in, and `check` confirms it. None of them
# needs a server: the Python model is RedisBloom's filter bit for bit.

# %%
import math

import numpy as np

from bloomedu.compat.redisbloom import RedisBloomFilter
from bloomedu.i18n import say
from bloomedu.teaching.exercises import check, show
from bloomedu.workloads.clicks import uuid4_strings

SEED = 110  # not the lesson's seed: fresh IDs
show("17")

# %% [markdown]
# ## 17.1 (compute)
#
# A scaling filter sizes its first sub-filter for half the error rate: bits per entry
# $\text{bpe} = -\ln(p/2) / (\ln 2)^2$ with the module's $(\ln 2)^2 = 0.480453013918201$, then
# $\lfloor n \cdot \text{bpe} \rfloor$ bits, rounded up to a whole number of 64-bit words.

# %%
error, capacity = 0.001, 1_000_000
bpe = -math.log(error / 2) / 0.480453013918201
answer = 64 * math.ceil(math.floor(capacity * bpe) / 64)
assert answer == RedisBloomFilter(error, capacity).links[0].bits
say("bpe = {bpe:.4f}; floor(n bpe) = {floor:,}; in 64-bit words: {bits:,} bits",
    bpe=bpe, floor=math.floor(capacity * bpe), bits=answer)

# %%
check.redisbloom_bits(answer, error=0.001, capacity=1_000_000)

# %% [markdown]
# ## 17.2 (predict)
#
# The sub-filters hold 1,000, 2,000, 4,000, 8,000, … items; count them until they hold 10,000.

# %%
capacity, expansion, n = 1000, 2, 10_000
held, answer = 0, 0
while held < n:
    held += capacity * expansion ** answer
    answer += 1
say("{filters} sub-filters hold {held:,} items", filters=answer, held=held)

# %%
check.redisbloom_filters(answer, capacity=1000, expansion=2, n=10_000)

# %% [markdown]
# ## 17.3 (measure)
#
# 110,000 distinct IDs: the first 10,000 go in, the other 100,000 are asked about, so every
# "yes" among them is a false positive.

# %%
ids = uuid4_strings(110_000, np.random.default_rng(SEED))
assert len(set(ids)) == len(ids)
chain = RedisBloomFilter(0.01, 1000)
chain.add_many(ids[:10_000])
answer = float(chain.exists_many(ids[10_000:]).mean())
say("{filters} sub-filters; measured rate {rate:.5f} (the chain promises less than 0.01)",
    filters=chain.info()["Number of filters"], rate=answer)

# %%
check.measured_chain_fpp(answer, capacity=1000, expansion=2, n=10_000, trials=100_000)
