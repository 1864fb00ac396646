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
# # Solutions · 15 · Forgetting old clicks: time windows
#
# Worked solutions to the exercises at the end of lesson
# [15_forgetting_old_clicks.ipynb](../15_forgetting_old_clicks.ipynb). Try them there first.
# Each answer is derived in code, never typed in, and `check` confirms it.

# %%
import math

import numpy as np

from bloomedu import AgePartitionedBloomFilter, RotatingBloomFilter
from bloomedu.i18n import say
from bloomedu.teaching.exercises import check, show
from bloomedu.variants import theory as vt

show("15")

# %% [markdown]
# ## 15.1 (compute)
#
# The oldest of the g generations may be dropped at any moment, so the other $g - 1$ must hold
# the whole window W: each generation holds $n = W/(g - 1)$ keys. A query asks all g, so each
# generation may err with $p_\text{gen} = 1 - (1 - p)^{1/g}$. Each needs
# $m = -n \ln p_\text{gen} / (\ln 2)^2$ bits (lesson 08).

# %%
window, p, g = 36_000_000, 0.001, 8
n = window / (g - 1)
p_gen = 1 - (1 - p) ** (1 / g)
bits = g * math.ceil(-math.ceil(n) * math.log(p_gen) / math.log(2) ** 2)
answer = bits / 8
library = RotatingBloomFilter(capacity=math.ceil(n), fpp=p, generations=g)
say("n = {n:,.0f} keys a generation, p_gen = {p_gen:.6e}, m = {m:,d} bits each",
    n=n, p_gen=p_gen, m=bits // g)
say("{nbytes:,.0f} bytes = {megabytes:.1f} MB (the library's generation: m = {library_m:,d})",
    nbytes=answer, megabytes=answer / 1e6, library_m=library.num_bits)

# %%
check.rotating_filter_bytes(answer, window=36_000_000, fpp=0.001, generations=8)

# %% [markdown]
# ## 15.2 (predict)
#
# Per insert a cell is set with chance $K/m$ and decremented without being set with chance
# $(P/m)(1 - K/m)$; the chance that an event touching the cell is a decrement rather than a
# setting is
#
# $$q = \frac{(P/m)(1 - K/m)}{(P/m)(1 - K/m) + K/m} = \frac{1}{1 + 1/(P\,(1/K - 1/m))}.$$
#
# A cell is 0 when its last Max events were all decrements: $q^{\text{Max}}$.

# %%
m, k, top, decrements = 1_000_000, 4, 3, 60
q = 1 / (1 + 1 / (decrements * (1 / k - 1 / m)))
answer = q ** top
assert math.isclose(answer, vt.stable_zero_fraction(num_cells=m, num_hashes=k, max_value=top, decrements=decrements))
say("q = {q:.5f}, zero fraction q^{top} = {z:.5f}, stable false-positive rate "
    "(1 - z)^K = {rate:.6f}", q=q, top=top, z=answer, rate=(1 - answer) ** k)

# %%
check.stable_zero_fraction(answer, num_cells=1_000_000, num_hashes=4, max_value=3, decrements=60)

# %% [markdown]
# ## 15.3 (measure)
#
# Thirty generations put the filter far past its start, and the 30,000th insert leaves the
# current generation full: the moment just before a shift, when the rate is highest. Queries
# come from a range never inserted, so every "present" is a false positive.

# %%
f = AgePartitionedBloomFilter(6, 4, 1000)
f.add_many(np.arange(30 * 1000, dtype=np.uint64))
fresh = np.arange(2 ** 40, 2 ** 40 + 100_000, dtype=np.uint64)
answer = float(f.contains_many(fresh).mean())
say("keys in the current generation {count}; measured {rate:.5f}; exact fills {exact:.5f}; "
    "the paper's linear fills {paper:.5f}", count=f.count, rate=answer,
    exact=vt.apbf_expected_false_positive_rate(6, 4, 1000), paper=vt.apbf_false_positive_rate(6, 4))

# %%
check.measured_apbf_fpp(answer, num_hashes=6, extra_slices=4, generation_size=1000, trials=100_000)
