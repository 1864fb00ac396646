# ---
# jupyter:
#   bloomedu:
#     summary: 'A stable filter''s cell as a Markov chain: the stable point derived,
#       how fast an empty filter reaches it, and the false negatives the chain predicts.'
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
# # Going deeper 16 · The stable filter's Markov chain
#
# An optional notebook that deepens lesson 16 (*Deleting and growing*), which measured how fast
# a stable filter forgets a key against the formula $z_\delta$. Here is where that formula and the
# filter's stable point come from: one cell, followed insert after insert.
#
# The filter here has a round m = 100,000 cells, K = 4, Max = 3 and P = 60. Lesson 16's filter
# (lesson 15's memory) has m = 41,472 cells and the same K, Max and P: the stable point depends on
# m only through $1/K - 1/m$, so both have the same P and zero fractions equal to four decimals
# (printed below), but a cell's time between events, $m/(P + K)$ inserts, is 2.4 times longer
# here, so this filter reaches its stable point and forgets a key 2.4 times more slowly.

# %%
import math

import numpy as np

from bloomedu.i18n import say
from bloomedu.variants import StableBloomFilter
from bloomedu.variants import theory as vt

SEED = 16
m, K, MAX, P = 100_000, 4, 3, 60  # cells, cells set per insert, their value, decrements per insert

# %% [markdown]
# ## One cell, one insert at a time
#
# Deng and Rafiei's stable filter (2006) has m cells counting 0 to Max. Each insert first
# decrements P cells chosen at random (those already at 0 stay there), then sets the key's K
# cells to Max; a query asks whether the key's K cells are all non-zero. Follow one cell. What
# matters about it is how many decrements it received since it was last set, capped at Max
# (after Max of them it is 0). That number is a Markov chain on the states $0, 1, \dots, \text{Max}$:
# at each insert, $D \sim \text{Binomial}(P, 1/m)$ decrements land on the cell, moving it from
# state s to $\min(s + D, \text{Max})$, and then, with chance $\sigma = 1 - (1 - 1/m)^K$, the
# insert's key sets it, back to state 0. The cell is 0 exactly in state Max.
#
# ## The stable point, derived
#
# Deng and Rafiei count events instead of inserts. Per insert, a cell is set with chance about
# $K/m$ and decremented, without being set afterwards, with chance about $(P/m)(1 - K/m)$. Look
# back from now at the events that touched the cell: each is a decrement with chance
#
# $$q = \frac{(P/m)(1 - K/m)}{(P/m)(1 - K/m) + K/m} = \frac{1}{1 + \dfrac{1}{P\,(1/K - 1/m)}} .$$
#
# The cell is 0 when its last Max events were all decrements, so the fraction of zero cells, once
# the filter has run long, is $z = q^{\text{Max}}$, and a key never inserted finds its K cells all
# non-zero with chance
#
# $$p = (1 - z)^K = \left(1 - \left(\frac{1}{1 + 1/(P\,(1/K - 1/m))}\right)^{\text{Max}}\right)^K .$$
#
# The chain needs no such approximation: its stationary distribution, reached by running it long
# enough, gives the zero fraction directly.

# %%
keys = np.random.default_rng(SEED).integers(0, 2 ** 63, 200_000, dtype=np.uint64)
f = StableBloomFilter(m, K, 2, P, seed=SEED)
f.add_many(keys)
stable_shape = dict(num_cells=m, num_hashes=K, max_value=MAX, decrements=P)
deng = vt.stable_zero_fraction(**stable_shape)
chain = vt.stable_zero_fraction_after(**stable_shape, inserts=10 ** 7)
say("zero fraction: Deng and Rafiei {deng:.6f}, the chain's limit {chain:.6f}, "
    "measured after {inserts:,} inserts {measured:.6f}", deng=deng, chain=chain,
    inserts=keys.size, measured=f.zero_fraction())
say("false-positive rate: Deng and Rafiei {deng:.6f}, the chain's {chain:.6f}",
    deng=vt.stable_false_positive_rate(**stable_shape), chain=(1 - chain) ** K)
spread = math.sqrt(deng * (1 - deng) / m)
say("one filter's zero fraction varies by about sqrt(z(1 - z)/m) = {spread:.6f}", spread=spread)
lesson = vt.stable_zero_fraction(num_cells=41_472, num_hashes=K, max_value=MAX, decrements=P)
say("lesson 16's m = 41,472: Deng and Rafiei's zero fraction {lesson:.6f}; "
    "m / (P + K) = {lesson_scale:,.0f} inserts, against {scale:,.0f} here", lesson=lesson,
    lesson_scale=41_472 / (P + K), scale=m / (P + K))

# %% [markdown]
# The two formulas differ in the fifth decimal, far less than one filter's own spread, and the
# measured fraction is within that spread of both.
#
# ## How fast an empty filter gets there
#
# An empty filter has every cell at 0: every cell starts in state Max. The chain, started there,
# gives the expected zero fraction after t inserts (`stable_zero_fraction_after`), and how far it
# still is from the limit.

# %%
g = StableBloomFilter(m, K, 2, P, seed=SEED + 1)
done = 0
say(" inserts     chain  measured  chain - limit")
for t in (0, 2_500, 5_000, 10_000, 20_000, 40_000):
    g.add_many(keys[done:t])
    done = t
    expected = vt.stable_zero_fraction_after(**stable_shape, inserts=t)
    print(f"{t:8,d} {expected:9.5f} {g.zero_fraction():9.5f} {expected - chain:14.2e}")

# %% [markdown]
# The distance starts at 0.176, is half that after 2,500 inserts, 2% of it after 10,000 and
# $10^{-4}$ of it after 20,000. The scale is a cell's mean time between events, $m/(P + K)$,
# about 1,560 inserts here: a dozen of them and the empty start is forgotten. The measured
# fractions follow the chain, within one filter's spread.
#
# ## The same chain, started at a key's insert: false negatives
#
# Now follow one of a key's K cells from the moment the key set it: state 0. After δ further
# inserts the chain gives $z_\delta$, the chance that this cell is 0. The key is reported absent
# when any of its K cells is 0; taking them as independent,
#
# $$P(\text{false negative after } \delta) = 1 - (1 - z_\delta)^K ,$$
#
# lesson 16's `stable_false_negative_rate`, which its table measured at every gap for its
# m = 41,472 (the gaps below, for m = 100,000, lose keys more slowly). As δ grows,
# $z_\delta$ rises from 0 to the stable z, and a key inserted long ago is found with chance
# $(1 - z)^K$, the false-positive rate: no more often than a key never inserted.

# %%
for gap in (0, 100, 1_000, 5_000, 20_000):
    lost = vt.stable_false_negative_rate(**stable_shape, gap=gap)
    say("gap {gap:6,d}: P(false negative) = {lost:.4f}", gap=gap, lost=lost)
say("the stable point's 1 - (1 - z)^K = {rate:.4f}", rate=1 - (1 - chain) ** K)

# %% [markdown]
# Back to lesson 16 (*Deleting and growing*).
