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
# # Solutions · 21 · Bloom filters inside the engines: Spark and PostgreSQL
#
# Worked solutions to the exercises at the end of lesson
# [21_inside_the_engines.ipynb](../21_inside_the_engines.ipynb). Try them there first. Each answer
# is derived in code, never typed in, and `check` confirms it. None of them needs Spark or
# PostgreSQL: bloomedu's models are their filters bit for bit.

# %%
import math

import numpy as np

from bloomedu.compat.spark import SparkBloomFilter
from bloomedu.i18n import say
from bloomedu.teaching.exercises import check, show
from bloomedu.workloads.clicks import uuid4_strings

SEED = 121  # not the lesson's seed: fresh IDs
show("21")

# %% [markdown]
# ## 21.1 (compute)
#
# Spark floors $-n \ln p / (\ln 2)^2$, keeps whole 64-bit words, and `writeTo` puts four
# big-endian 32-bit fields before them in version 2: the version, k, the seed and the number of
# words.

# %%
n, p = 1_000_000, 0.02
bits = math.floor(-n * math.log(p) / math.log(2) ** 2)
words = math.ceil(bits / 64)
answer = 4 * 4 + 8 * words
assert answer == len(SparkBloomFilter(n, p).to_bytes())
say("floor(-n ln p / (ln 2)^2) = {bits:,} bits -> {words:,} words; 16 + 8 x {words:,} = {size:,} bytes",
    bits=bits, words=words, size=answer)

# %%
check.spark_filter_bytes(answer, n=1_000_000, p=0.02, version=2)

# %% [markdown]
# ## 21.2 (predict)
#
# Each of the 4 columns sets 2 of the row's 80 bits, so a given bit is set with probability
# $1 - (1 - 1/80)^8$. A value no row holds asks for its 2 bits; a row passes if both are set by
# chance, and every row that passes is rechecked and removed.

# %%
rows, length, set_bits, asked = 1_000_000, 80, 4 * 2, 1 * 2
one_bit = 1 - (1 - 1 / length) ** set_bits
answer = rows * one_bit ** asked
say("a bit is set with probability {one_bit:.4f}; {rows:,} x {one_bit:.4f}^{asked} = {rechecked:,.0f} rows",
    one_bit=one_bit, rows=rows, asked=asked, rechecked=answer)

# %%
check.bloom_index_rechecks(answer, rows=1_000_000, length=80, columns=4, bits=2, query_columns=1)

# %% [markdown]
# ## 21.3 (measure)
#
# 200,000 distinct IDs: the first 100,000 go in, the other 100,000 are asked about, so every
# "yes" among them is a false positive.

# %%
ids = uuid4_strings(200_000, np.random.default_rng(SEED))
assert len(set(ids)) == len(ids)
spark_filter = SparkBloomFilter(100_000, 0.03)
spark_filter.put_many(ids[:100_000])
answer = float(spark_filter.might_contain_many(ids[100_000:]).mean())
say("m = {m:,} bits, k = {k}; measured rate {rate:.5f}",
    m=spark_filter.bit_size, k=spark_filter.num_hash_functions, rate=answer)

# %%
check.measured_spark_fpp(answer, n=100_000, p=0.03, trials=100_000)
