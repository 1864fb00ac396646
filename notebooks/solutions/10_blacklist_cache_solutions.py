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
# # Solutions · 10 · A blacklist cache in front of a database
#
# Worked solutions to the exercises at the end of lesson
# [10_blacklist_cache.ipynb](../10_blacklist_cache.ipynb). Try them there first. Each answer is
# derived in code, never typed in, and `check` confirms it.

# %%
import tempfile
from pathlib import Path

from bloomedu import BloomFilter
from bloomedu.i18n import say
from bloomedu.core.theory import exact_false_positive_rate
from bloomedu.services.blacklist import BlacklistCache
from bloomedu.teaching.exercises import check, show
from bloomedu.workloads.urls import malicious_urls, safe_urls

SEED = 100  # not the lesson's seed: fresh URLs
show("10")

# %% [markdown]
# ## 10.1 (compute)
#
# A visit waits for the database only when the filter says "maybe": every blacklisted visit (the
# filter never misses one) and a share p of the safe visits. Each of those round trips waits the
# latency, 2 ms = 0.002 s.

# %%
visits, blacklisted, p, latency_ms = 100_000, 1000, 0.001, 2
round_trips = blacklisted + p * (visits - blacklisted)
answer = round_trips * latency_ms / 1000
say("{blacklisted:,} + {p} x {safe:,} = {round_trips:,.0f} round trips x {latency_ms} ms = "
    "{seconds:.3f} s (the database alone: {alone_seconds:.0f} s)", blacklisted=blacklisted, p=p,
    safe=visits - blacklisted, round_trips=round_trips, latency_ms=latency_ms, seconds=answer,
    alone_seconds=visits * latency_ms / 1000)

# %%
check.waiting_seconds(answer, visits=100_000, blacklisted=1000, p=0.001, latency_ms=2)

# %% [markdown]
# ## 10.2 (predict)
#
# The filter never says "no" to a blacklisted URL, so all of those reach the database. A safe
# URL reaches it only when the filter says "maybe" by mistake: a fraction p of them. (The rate
# is p = 0.001, one in a thousand; the second article's "0.001%" would be a hundred times
# smaller.)

# %%
safe, blacklisted, p = 1_000_000, 5000, 0.001
answer = blacklisted + p * safe
say("{blacklisted:,} blacklisted + {p} x {safe:,} safe = {lookups:,.0f} database lookups "
    "({share:.2%} of all lookups)", blacklisted=blacklisted, p=p, safe=safe, lookups=answer,
    share=answer / (safe + blacklisted))

# %%
check.database_lookups(answer, safe=1_000_000, blacklisted=5000, p=0.001)

# %% [markdown]
# ## 10.3 (measure)
#
# A real cache on a real SQLite file in a temporary folder. Every looked-up URL is safe, so every
# database query is a false positive of the filter: the share is the filter's rate, measured.

# %%
n, p, trials = 100_000, 0.01, 100_000
with tempfile.TemporaryDirectory() as folder:
    with BlacklistCache.create(Path(folder) / "blacklist.sqlite", malicious_urls(n, seed=SEED),
                               fpp=p) as cache:
        found = cache.is_blacklisted_many(safe_urls(trials, seed=SEED))
        stats = cache.stats
        bloom = cache.bloom
assert not found.any()  # every answer is the database's: none of them is blacklisted
answer = stats.database_queries / stats.lookups
assert (bloom.num_bits, bloom.num_hashes) == (BloomFilter.from_capacity(n, p).num_bits,
                                              BloomFilter.from_capacity(n, p).num_hashes)
say("{queries:,} of {lookups:,} lookups reached the database: {share:.5f}; exact rate for "
    "m = {m:,}, k = {k}: {exact:.5f}", queries=stats.database_queries, lookups=stats.lookups,
    share=answer, m=bloom.num_bits, k=bloom.num_hashes,
    exact=exact_false_positive_rate(num_bits=bloom.num_bits, num_hashes=bloom.num_hashes, n=n))

# %%
check.database_share(answer, n=100_000, p=0.01, trials=100_000)
