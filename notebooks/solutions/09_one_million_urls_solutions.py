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
# # Solutions · 09 · One million URLs in under 2 MB
#
# Worked solutions to the exercises at the end of lesson
# [09_one_million_urls.ipynb](../09_one_million_urls.ipynb). Try them there first. Each answer
# is derived in code, never typed in, and `check` confirms it.

# %%
import math

from bloomedu import BloomFilter
from bloomedu.teaching.exercises import check, show
from bloomedu.core.theory import (exact_false_positive_rate, false_positive_rate,
                                  optimal_num_hashes)
from bloomedu.workloads.urls import malicious_urls, safe_urls

SEED = 70  # not the lesson's seed: fresh URLs
show("09")

# %% [markdown]
# ## 09.1 (compute)
#
# Lesson 08's sizing read the other way: the budget fixes the bits, $m = 8 \times 1{,}048{,}576
# = 8{,}388{,}608$, so $m/n = 8.39$ bits per URL. At the best k, $k = (m/n) \ln 2$, lesson 07's
# rate is $p = e^{-(m/n)(\ln 2)^2}$. A filter has a whole k; the better whole number next to
# $(m/n) \ln 2$ gives the same rate to three digits.

# %%
n, budget = 1_000_000, 1_048_576
bits = 8 * budget
answer = math.exp(-(bits / n) * math.log(2) ** 2)
whole_k = optimal_num_hashes(num_bits=bits, n=n)
print(f"m = {bits:,} bits, m/n = {bits / n:.3f}, best k = {bits / n * math.log(2):.2f} -> {whole_k}")
print(f"p = e^(-(m/n)(ln 2)^2) = {answer:.5f}, about 1 in {1 / answer:.0f}; at the whole k = {whole_k}: "
      f"{false_positive_rate(num_bits=bits, num_hashes=whole_k, n=n):.5f}")
print(f"lesson 08's 1,797,200 bytes reach 0.001: {answer / 0.001:.0f} times fewer errors for "
      f"{1_797_200 / budget:.2f} times the bytes")

# %%
check.rate_in_budget(answer, n=1_000_000, nbytes=1_048_576)

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
