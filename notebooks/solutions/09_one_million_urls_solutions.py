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
# # Solutions · 09 · One million URLs in under 2 MB
#
# Worked solutions to the exercises at the end of lesson
# [09_one_million_urls.ipynb](../09_one_million_urls.ipynb). Try them there first. Each answer
# is derived in code, never typed in, and `check` confirms it.

# %%
import math

from bloomedu import BloomFilter
from bloomedu.teaching.exercises import check, show
from bloomedu.core.theory import exact_false_positive_rate, num_bits_for
from bloomedu.workloads.urls import malicious_urls, safe_urls

SEED = 70  # not the lesson's seed: fresh URLs
show("09")

# %% [markdown]
# ## 09.1 (compute)
#
# Lesson 08's rule: $m = \lceil -n \ln p / (\ln 2)^2 \rceil$ bits, then 8 bits to a byte. The
# natural logarithm matters: $\log_{10}$ or $\log_2$ give other sizes.

# %%
n, p = 1_000_000, 0.001
bits = math.ceil(-n * math.log(p) / math.log(2) ** 2)
answer = math.ceil(bits / 8)
assert bits == num_bits_for(n=n, p=p)
print(f"m = {bits:,} bits -> {answer:,} bytes = {answer / 2**20:.3f} MiB")
print(f"bloomedu's BloomFilter stores whole 64-bit words: "
      f"{BloomFilter.from_capacity(n, p).nbytes:,} bytes")

# %%
check.filter_bytes(answer, n=1_000_000, p=0.001)

# %% [markdown]
# ## 09.2 (predict)
#
# A safe URL is flagged when all k of its bits happen to be set, and its bits are fixed by its
# hash: the filter answers it the same way on every lookup. So the URLs flagged on the first
# lookup are exactly the ones flagged on the second: a share p of them, not $p^2$ (which would hold
# if each lookup tossed a fresh coin).

# %%
urls, lookups, p = 250_000, 2, 0.001
answer = p * urls
print(f"p x {urls:,} = {answer:,.0f} URLs flagged on every lookup (a coin per lookup would give "
      f"{p ** lookups * urls:.2f})")

# %% [markdown]
# A real filter says the same: a million malicious URLs in, 250,000 safe URLs looked up twice.

# %%
bloom = BloomFilter.from_capacity(1_000_000, p)
bloom.add_many(malicious_urls(1_000_000, seed=SEED))
asked = safe_urls(urls, seed=SEED)
first, second = bloom.contains_many(asked), bloom.contains_many(asked)
print(f"flagged on the first lookup: {int(first.sum())}, on the second: {int(second.sum())}, "
      f"on both: {int((first & second).sum())}")
assert (first == second).all()

# %%
check.flagged_every_time(answer, urls=250_000, lookups=2, p=0.001)

# %% [markdown]
# ## 09.3 (measure)
#
# Malicious URLs go in; safe URLs, which never equal a malicious one, are queried, so every
# "maybe" among them is a false positive. The bulk methods hash each URL once.

# %%
n = trials = 1_000_000
bloom = BloomFilter.from_capacity(n, 0.001)
print(f"m = {bloom.num_bits:,}, k = {bloom.num_hashes}")
inserted = malicious_urls(n, seed=SEED)
bloom.add_many(inserted)
queries = safe_urls(trials, seed=SEED)
answer = int(bloom.contains_many(queries).sum()) / trials
print(f"false positives: {answer * trials:,.0f} of {trials:,} = {answer:.5f}; exact rate "
      f"{exact_false_positive_rate(num_bits=bloom.num_bits, num_hashes=bloom.num_hashes, n=n):.5f}")
print(f"malicious URLs reported absent: {int((~bloom.contains_many(inserted)).sum())}")

# %%
check.measured_fpp(answer, num_bits=14_377_588, num_hashes=10, n=1_000_000, trials=1_000_000)
