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
# # Solutions · 05 · The Bloom filter: k salted hashes over one bit vector
#
# Worked solutions to the exercises at the end of lesson
# [05_bloom_filter.ipynb](../05_bloom_filter.ipynb). Try them there first. Each answer is
# derived in code, never typed in, and `check` confirms it.

# %%
import math

import numpy as np

from bloomedu import SaltedBloomFilter
from bloomedu.workloads.clicks import uuid4_strings
from bloomedu.teaching.exercises import check, show
from bloomedu.i18n import say
from bloomedu.core.theory import exact_false_positive_rate, false_positive_rate

SEED = 5
show("05")

# %% [markdown]
# ## 05.1 (compute)
#
# The article's second argument is the hash width: the vector has $2^{20}$ bits, whatever k is
# (the k functions share it), at 8 bits a byte.

# %%
num_hashes, hash_bits = 3, 20
answer = 2**hash_bits // 8
say("2**{hash_bits} = {m:,} bits = {nbytes:,} bytes = {kib:.0f} KiB",
    hash_bits=hash_bits, m=2**hash_bits, nbytes=answer, kib=answer / 2**10)

# %%
check.article_filter_bytes(answer, num_hashes=3, hash_bits=20)

# %% [markdown]
# ## 05.2 (predict)
#
# After n keys each of the m bits is still 0 with probability $(1 - 1/m)^{kn} \approx e^{-kn/m}$.
# A key never inserted is reported present when all k of its bits are set:
# $(1 - e^{-kn/m})^k$, with $m = 2^8 = 256$.

# %%
m, k, n = 2**8, 3, 20
fill = 1 - math.exp(-k * n / m)
answer = fill**k
assert math.isclose(answer, false_positive_rate(num_bits=m, num_hashes=k, n=n))
say("fraction of bits set {fill:.4f}, to the power {k}: p = {p:.5f} (about 1 in {one_in:.0f})",
    fill=fill, k=k, p=answer, one_in=1 / answer)

# %%
check.article_filter_fpp(answer, num_hashes=3, hash_bits=8, n=20)

# %% [markdown]
# ## 05.3 (measure)
#
# 20 IDs inserted, 100,000 other IDs queried: every "present" is a false positive. With so few
# keys the rate depends a lot on how many bits this one filter happened to set, so the printout
# also gives $(\text{bits set}/m)^k$ for this filter; the checker allows for that spread.

# %%
n, trials = 20, 100_000
keys = uuid4_strings(n + trials, np.random.default_rng(SEED))
inserted, queries = keys[:n], keys[n:]
assert len(set(keys)) == len(keys)
bloom = SaltedBloomFilter(num_hashes=3, hash_bits=8)
for key in inserted:
    bloom.add(key)
answer = sum(key in bloom for key in queries) / trials
say("bits set {set_bits} of {m}; measured p = {measured:.5f}; (bits set/m)^k = {fill_rate:.5f}; "
    "exact expectation {exact:.5f}",
    set_bits=bloom.bits.count(), m=bloom.num_bits, measured=answer,
    fill_rate=(bloom.bits.count() / bloom.num_bits) ** 3,
    exact=exact_false_positive_rate(num_bits=bloom.num_bits, num_hashes=3, n=n))

# %%
check.measured_fpp(answer, num_bits=256, num_hashes=3, n=20, trials=100_000)
