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
# # Solutions · 11 · A filter is not a set
#
# Worked solutions to the exercises at the end of lesson
# [11_a_filter_is_not_a_set.ipynb](../11_a_filter_is_not_a_set.ipynb). Try them there first.
# Each answer is derived in code, never typed in, and `check` confirms it.

# %%
import math

import numpy as np

from bloomedu import BloomFilter
from bloomedu.core.keyed import KeyedBloomFilter
from bloomedu.core.theory import estimate_count, exact_false_positive_rate, false_positive_rate
from bloomedu.i18n import say
from bloomedu.teaching.exercises import check, show
from bloomedu.workloads.urls import malicious_urls, safe_urls

SEED = 110  # not the lesson's seed: fresh URLs
show("11")

# %% [markdown]
# ## 11.1 (compute)
#
# After n keys each bit is still 0 with probability about $e^{-kn/m}$, so the share of bits
# still 0, $1 - X/m$, estimates it. Solving $1 - X/m = e^{-kn/m}$ for n:
#
# $$n \approx -\frac{m}{k} \ln\left(1 - \frac{X}{m}\right).$$
#
# It is more than $X/k$, because keys share bits: $X/k$ would count every set bit as one key's own.

# %%
m, k, x = 958_506, 7, 300_000
answer = -m / k * math.log(1 - x / m)
assert math.isclose(answer, estimate_count(num_bits=m, num_hashes=k, bits_set=x))
say("n = -(m/k) ln(1 - X/m) = {n:,.0f} keys (X/k would say {naive:,.0f})", n=answer, naive=x / k)

# %% [markdown]
# The estimate on a real filter of that size, filled with 51,404 URLs:

# %%
bloom = BloomFilter(m, k)
bloom.add_many(malicious_urls(51_404, seed=SEED))
say("bits set: {set_bits:,}; estimated keys: {estimate:,.0f}", set_bits=bloom.bits_set(),
    estimate=bloom.approximate_count())

# %%
check.estimated_count(answer, num_bits=958_506, num_hashes=7, bits_set=300_000)

# %% [markdown]
# ## 11.2 (predict)
#
# A URL that is in A has all its k bits set in A. `A & B` keeps a bit only where B has it too, so
# the URL survives the AND exactly when its k bits are all set in B: when it is a false positive
# of B. That is B's rate with its 50,000 URLs, whatever A holds and whatever they share.

# %%
n, p, n_b = 100_000, 0.01, 50_000
sized = BloomFilter.from_capacity(n, p)
m, k = sized.num_bits, sized.num_hashes
answer = false_positive_rate(num_bits=m, num_hashes=k, n=n_b)
say("m = {m:,}, k = {k}: B's rate with {n_b:,} URLs = (1 - e^(-k n_b / m))^k = {rate:.6f} "
    "(exact {exact:.6f})", m=m, k=k, n_b=n_b, rate=answer,
    exact=exact_false_positive_rate(num_bits=m, num_hashes=k, n=n_b))

# %% [markdown]
# Measured: A holds 100,000 URLs, B 50,000 of which 10,000 are also in A.

# %%
urls = malicious_urls(140_000, seed=SEED)
list_a, list_b = urls[:100_000], urls[90_000:]
filter_a, filter_b = BloomFilter.from_capacity(n, p), BloomFilter.from_capacity(n, p)
filter_a.add_many(list_a)
filter_b.add_many(list_b)
only_a = urls[:90_000]
claimed = float((filter_a & filter_b).contains_many(only_a).mean())
say("A & B claims {share:.6f} of the {urls:,} URLs only in A", share=claimed, urls=len(only_a))

# %%
check.and_claim_rate(answer, n=100_000, p=0.01, n_b=50_000, shared=10_000)

# %% [markdown]
# ## 11.3 (measure)
#
# The attack of the lesson's section 4 at a smaller scale, then the same crafted URLs against a
# keyed filter built with a secret the attacker never saw.

# %%
n, p = 10_000, 0.01
listed = malicious_urls(n, seed=SEED)
public = BloomFilter.from_capacity(n, p)
public.add_many(listed)
candidates = [f"https://promo-{i}.deals.example/" for i in range(200_000)]
crafted = [url for url, hit in zip(candidates, public.contains_many(candidates)) if hit]
secret = np.random.default_rng(SEED).bytes(16)  # in real use: secrets.token_bytes(16)
keyed = KeyedBloomFilter.from_capacity(n, p, secret)
keyed.add_many(listed)
assert keyed.contains_many(listed).all()
answer = float(keyed.contains_many(crafted).mean())
say("{crafted:,} crafted URLs: the public filter claims all of them, the keyed filter "
    "{share:.4f} of them", crafted=len(crafted), share=answer)

# %%
check.measured_keyed_rate(answer, n=10_000, p=0.01, candidates=200_000)
