# ---
# jupyter:
#   bloomedu:
#     summary: When RedisBloom's double-hashing positions of one key coincide, derived
#       from the factors 2 of the step and of m, and counted on 200,000 click IDs.
#   jupytext:
#     cell_metadata_filter: tags,-slideshow
#     formats: ipynb,py:percent
#     notebook_metadata_filter: bloomedu
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
# # Going deeper 17 · When RedisBloom's positions collapse
#
# An optional notebook that deepens lesson 17 (*RedisBloom, bit for bit*), which matched the
# module's filter in Python and noted that a few keys fall on fewer than k distinct bits. Here
# is when that happens, how often, and how few bits such a key can keep. No server is needed:
# the Python model is the module's filter bit for bit.

# %%
import math

import numpy as np

from bloomedu.compat.redisbloom import RedisBloomFilter, hash_pairs
from bloomedu.i18n import say
from bloomedu.workloads.clicks import uuid4_strings

SEED = 17

# %% [markdown]
# ## When two positions coincide
#
# Lesson 06 showed why bloomedu mixes its double-hashing positions: plain ones, $h_1 + i\,h_2$
# reduced modulo m, let some keys fall on very few bits. RedisBloom hashes the plain way: from a
# key's two 64-bit hashes a and b, position i is $(a + i\,b \bmod 2^{64}) \bmod m$, with a twist:
# its m is not a power of two but a multiple of 64, and the sum wraps past $2^{64}$ before the
# reduction.
#
# Positions i and $i + d$ coincide when the two sums differ by a multiple of m. They differ by
# $t = d\,b \bmod 2^{64}$ if no wrap falls between them, and by $t - 2^{64}$ if one does; so the
# positions coincide when $t \equiv 0 \pmod m$, or when $t \equiv 2^{64} \pmod m$ with a wrap
# between them.
#
# For a uniform b, t is a uniform multiple of $2^{v}$, where $v = v_2(d)$ is the number of
# factors 2 in d: multiplying by d loses its factors 2 modulo $2^{64}$ and nothing else. Since m
# has at least six factors 2 (enough for $d < 64$), a uniform multiple of $2^v$ hits a given
# residue class mod m that it can reach with probability $2^{v}/m$. So each case has
# probability $2^{v_2(d)}/m$.
#
# In the first case every pair at distance d with no wrap between them coincides, not just one:
# a key with $t \equiv 0$ at $d = 1$ keeps one distinct position more than it has wraps, anywhere
# from 1 to k. Summing over the gaps $d = 1, \dots, k - 1$, the share of keys with fewer than k
# distinct positions lies between
#
# $$\frac{1}{m} \sum_{d=1}^{k-1} 2^{v_2(d)} \quad \text{(the first case alone)} \qquad \text{and} \qquad \frac{2}{m} \sum_{d=1}^{k-1} 2^{v_2(d)} \quad \text{(both)} .$$
#
# Independent positions would give about $\binom{k}{2}/m$ keys with a repeat, nearly all of them
# with $k - 1$ distinct positions.

# %% [markdown]
# ## Counted on 200,000 click IDs
#
# The first sub-filter of `BF.RESERVE key 0.00001 20000` has k = 18. For each of 200,000 click
# IDs, count its distinct positions.

# %%
link = RedisBloomFilter(1e-5, 20_000).links[0]
m, k = link.bits, link.hashes
twos = [min(d & -d, m & -m) for d in range(1, k)]  # 2^v(d), capped by m's own factors 2
low, pairs = sum(twos) / m, math.comb(k, 2) / m
ids = uuid4_strings(200_000, np.random.default_rng(SEED))
ordered = np.sort(link.positions_many(*hash_pairs([i.encode() for i in ids])), axis=1)
distinct = 1 + (np.diff(ordered, axis=1) != 0).sum(axis=1)
short = distinct < k
say("m = {m:,} bits ({words:,} words of 64), k = {k}; 2^64 mod m = {wrap:,}",
    m=m, words=m // 64, k=k, wrap=2**64 % m)
say("keys with fewer than k distinct positions: {short} of {keys:,} = {share:.2e}; "
    "derived between {low:.2e} and {high:.2e}",
    short=int(short.sum()), keys=len(ids), share=short.mean(), low=low, high=2 * low)
say("independent positions would give about {pairs:.2e}, with k - 1 = {fewer} positions",
    pairs=pairs, fewer=k - 1)
counts = np.bincount(distinct, minlength=k + 1)
say("distinct positions: keys  {counts}",
    counts=", ".join(f"{d}: {int(counts[d])}" for d in range(1, k) if counts[d]))
say("fewest distinct positions among these keys: {fewest} of {k}", fewest=int(distinct.min()), k=k)

# %% [markdown]
# The measured share falls inside the derived range, and below the share independent positions
# would give: the module's positions repeat *less* often than random ones, but when they repeat,
# many go at once. In principle a key can keep a single position (no wrap at all); the fewest
# among these keys is printed on the last line. Such a key is a false positive as soon as its few
# bits are set, with probability about $f^{j}$ instead of $f^{k}$ for a fraction f of bits set
# and j distinct positions. These keys are about one in ten thousand, so the rate holds on
# average; lesson 06's mixing removes them.
#
# Back to lesson 17 (*RedisBloom, bit for bit*).
