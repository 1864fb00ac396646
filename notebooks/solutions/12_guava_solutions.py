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
# # Solutions · 12 · Guava, bit for bit
#
# Worked solutions to the exercises at the end of lesson
# [12_guava.ipynb](../12_guava.ipynb). Try them there
# first. Each answer is derived in code, never typed in, and `check` confirms it.

# %%
import math

from bloomedu.compat import GuavaBloomFilter
from bloomedu.core.theory import exact_false_positive_rate
from bloomedu.i18n import say
from bloomedu.teaching.exercises import check, show
from bloomedu.workloads.urls import malicious_urls, safe_urls

SEED = 120  # not the lesson's seed: fresh URLs
show("12")

# %% [markdown]
# ## 12.1 (compute)
#
# Guava's m is $-n \ln p / (\ln 2)^2$ cast to a `long`, which truncates; its bits live in 64-bit
# words, so the array holds m rounded up to a multiple of 64.

# %%
n, p = 1_000_000, 0.01
m = int(-n * math.log(p) / (math.log(2) * math.log(2)))
answer = 64 * math.ceil(m / 64)
assert answer == GuavaBloomFilter.create(n, p).bit_size
say("m = {m:,} bits, in {words:,} words of 64: bitSize = {bit_size:,} ({nbytes:,} bytes)", m=m,
    words=answer // 64, bit_size=answer, nbytes=answer // 8)

# %%
check.guava_bit_size(answer, n=1_000_000, p=0.01)

# %% [markdown]
# ## 12.2 (predict)
#
# create(10, 0.1) has m = 47, k = 3 and bitSize = 64 (the lesson's section 1). Eight strings set
# $3 \times 8 = 24$ positions, each uniform over all 64 bits, padding included. A given bit escapes
# all of them with probability $(1 - 1/64)^{24}$, so the expected number of bits set is
# $64\,(1 - (1 - 1/64)^{24})$: fewer than 24, because two positions may fall on one bit.

# %%
guava = GuavaBloomFilter.create(10, 0.1)
size, k, strings = guava.bit_size, guava.num_hash_functions, 8
answer = size * (1 - (1 - 1 / size) ** (k * strings))
say("bitSize = {bit_size}, k = {k}: {positions} positions, {expected:.2f} bits expected set",
    bit_size=size, k=k, positions=k * strings, expected=answer)

# %% [markdown]
# One real draw of eight strings lands near it (a single filter strays by a bit or two):

# %%
guava.put_many([f"string-{i}" for i in range(strings)])
say("bits set by string-0 .. string-7: {set_bits}", set_bits=guava.bit_count())

# %%
check.guava_bits_set(answer, n=10, p=0.1, strings=8)

# %% [markdown]
# ## 12.3 (measure)
#
# Malicious URLs go in with `put_many`; safe URLs, which never equal a malicious one, are asked
# with `might_contain_many`, so every "maybe" among them is a false positive.

# %%
n, trials = 100_000, 100_000
million_style = GuavaBloomFilter.create(n, 0.01)
say("bitSize = {bit_size:,}, k = {k}", bit_size=million_style.bit_size,
    k=million_style.num_hash_functions)
inserted = malicious_urls(n, seed=SEED)
million_style.put_many(inserted)
assert million_style.might_contain_many(inserted).all()
answer = float(million_style.might_contain_many(safe_urls(trials, seed=SEED)).mean())
exact = exact_false_positive_rate(num_bits=million_style.bit_size,
                                  num_hashes=million_style.num_hash_functions, n=n)
say("measured rate {rate:.5f}; exact rate for this bitSize and k: {exact:.5f}", rate=answer,
    exact=exact)

# %%
check.measured_fpp(answer, num_bits=958_528, num_hashes=7, n=100_000, trials=100_000)
