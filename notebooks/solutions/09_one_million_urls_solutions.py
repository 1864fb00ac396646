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
from bloomedu.i18n import say
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
say("m = {m:,} bits, m/n = {bits_per_url:.3f}, best k = {best_k:.2f} -> {whole_k}",
    m=bits, bits_per_url=bits / n, best_k=bits / n * math.log(2), whole_k=whole_k)
say("p = e^(-(m/n)(ln 2)^2) = {p:.5f}, about 1 in {one_in:.0f}; at the whole k = {whole_k}: "
    "{p_whole_k:.5f}", p=answer, one_in=1 / answer, whole_k=whole_k,
    p_whole_k=false_positive_rate(num_bits=bits, num_hashes=whole_k, n=n))
say("lesson 08's 1,797,200 bytes reach 0.001: {fewer:.0f} times fewer errors for "
    "{more:.2f} times the bytes", fewer=answer / 0.001, more=1_797_200 / budget)

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
say("p x {urls:,} = {flagged:,.0f} URLs flagged on every lookup (a coin per lookup would give "
    "{coin:.2f})", urls=urls, flagged=answer, coin=p ** lookups * urls)

# %% [markdown]
# A real filter says the same: a million malicious URLs in, 250,000 safe URLs looked up twice.

# %%
bloom = BloomFilter.from_capacity(1_000_000, p)
bloom.add_many(malicious_urls(1_000_000, seed=SEED))
asked = safe_urls(urls, seed=SEED)
first, second = bloom.contains_many(asked), bloom.contains_many(asked)
say("flagged on the first lookup: {first}, on the second: {second}, on both: {both}",
    first=int(first.sum()), second=int(second.sum()), both=int((first & second).sum()))
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
exact = exact_false_positive_rate(num_bits=bloom.num_bits, num_hashes=bloom.num_hashes, n=n)
say("false positives: {false_positives:,.0f} of {trials:,} = {rate:.5f}; exact rate {exact:.5f}",
    false_positives=answer * trials, trials=trials, rate=answer, exact=exact)
say("malicious URLs reported absent: {missed}", missed=int((~bloom.contains_many(inserted)).sum()))

# %%
check.measured_fpp(answer, num_bits=14_377_588, num_hashes=10, n=1_000_000, trials=1_000_000)
