# ---
# jupyter:
#   bloomedu:
#     summary: Why the classic formula is not exact, the exact rate of Bose et al. (2008)
#       derived as a chain over the bits set, and where the two part.
#   jupytext:
#     cell_metadata_filter: tags,-slideshow
#     formats: ipynb,py:percent
#     notebook_metadata_filter: bloomedu
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
# # Going deeper 07 · The exact rate: why the classic formula is not exact
#
# An optional notebook that deepens lesson 07 (*The false-positive rate*), whose section 1
# derived the classic formula $p \approx (1 - e^{-kn/m})^k$, and whose tables print an `exact`
# column beside it. Here is where that column comes from, and where the two part.

# %%
# %matplotlib inline
import itertools
import time

import numpy as np

from bloomedu.core.theory import exact_false_positive_rate, false_positive_rate
from bloomedu.i18n import say
from bloomedu.teaching.experiments import format_table
from bloomedu.teaching.plots import decorate, new_axes, show

# %% [markdown]
# ## Two approximations, and a lower bound
#
# Lesson 07's section 1 made two approximations: it replaced $(1 - 1/m)^{kn}$ by $e^{-kn/m}$,
# and, less visibly, it treated the share of bits set as a fixed number. The exact rate assumes
# only that the $kn$ positions are independent and uniform. Bose et al. (*"On the false-positive
# rate of Bloom filters"*, IPL 2008) showed that the classic value is not exact, and
# Christensen, Roginsky and Jimeno (IPL 2010) proved that it is a lower bound.
#
# After n keys, $kn$ positions have been drawn. Let X be the number of bits that are set. A new
# key is a false positive when its k positions all land on set bits, which happens with
# probability $(X/m)^k$. The classic formula replaces X by its mean,
# $m\left(1 - (1 - 1/m)^{kn}\right) \approx m\left(1 - e^{-kn/m}\right)$. But X is random, and
# for $k \ge 2$ the mean of $(X/m)^k$ is larger than the k-th power of the mean of $X/m$
# (Jensen's inequality, since $x^k$ curves upwards). So the exact rate is
#
# $$p_{\text{exact}} = \sum_{x=0}^{m} P(X = x) \left(\frac{x}{m}\right)^k \;\ge\; p_{\text{classic}}.$$
#
# On a toy filter we can count every case. Take m = 16 bits, n = 2 keys and k = 2. That gives
# $16^4 = 65{,}536$ equally likely ways to place the 4 positions:

# %%
tiny_m, tiny_n, tiny_k = 16, 2, 2
placements = np.array(list(itertools.product(range(tiny_m), repeat=tiny_k * tiny_n)))
bits_set = np.array([len(set(row)) for row in placements])
by_enumeration = float(np.mean((bits_set / tiny_m) ** tiny_k))
say("by enumeration  {rate:.6f}", rate=by_enumeration)
say("library exact   {rate:.6f}",
    rate=exact_false_positive_rate(num_bits=tiny_m, num_hashes=tiny_k, n=tiny_n))
say("classic         {rate:.6f}",
    rate=false_positive_rate(num_bits=tiny_m, num_hashes=tiny_k, n=tiny_n))
assert abs(by_enumeration
           - exact_false_positive_rate(num_bits=tiny_m, num_hashes=tiny_k, n=tiny_n)) < 1e-12

# %% [markdown]
# ## The distribution of X, one position at a time
#
# Enumeration stops at toy sizes, but $P(X = x)$ has a simple recurrence. Draw the $kn$
# positions one after another. When x bits are set, the next position lands on a clear bit with
# probability $(m - x)/m$, and X grows by one; otherwise it stays. So after each draw
#
# $$P_{t+1}(x) = P_t(x)\,\frac{x}{m} + P_t(x - 1)\,\frac{m - x + 1}{m},$$
#
# starting from $P_0(0) = 1$: a Markov chain on the number of set bits. Every term is a
# probability times a probability, never a difference, so rounding errors cannot grow. (The
# textbook closed form, a sum with Stirling numbers of the second kind, subtracts huge terms
# from each other instead.) By hand, for a filter of 1,024 bits holding 128 keys with k = 6:

# %%
def set_bits_distribution(m, draws):
    """P(X = x), x = 0..m, after ``draws`` uniform positions in m bits."""
    chances = np.zeros(m + 1)
    chances[0] = 1.0
    x = np.arange(m + 1)
    for _ in range(draws):
        moved = np.zeros(m + 1)
        moved[1:] = chances[:-1] * (m - x[:-1]) / m  # a clear bit is hit: one more set
        chances = chances * x / m + moved            # a set bit is hit: no change
    return chances


m, n, k = 1024, 128, 6
chances = set_bits_distribution(m, k * n)
by_chain = float(np.sum(chances * (np.arange(m + 1) / m) ** k))
say("P(X = x) sums to {total:.12f}; mean of X {mean:.2f} (m(1 - (1 - 1/m)^kn) = {expected:.2f})",
    total=chances.sum(), mean=np.sum(chances * np.arange(m + 1)),
    expected=m * (1 - (1 - 1 / m) ** (k * n)))
say("exact rate by the chain {rate:.8f}", rate=by_chain)
say("library exact           {rate:.8f}",
    rate=exact_false_positive_rate(num_bits=m, num_hashes=k, n=n))
say("classic                 {rate:.8f}", rate=false_positive_rate(num_bits=m, num_hashes=k, n=n))
assert abs(by_chain - exact_false_positive_rate(num_bits=m, num_hashes=k, n=n)) < 1e-12

# %% [markdown]
# The chain costs $kn$ steps over $m + 1$ states. The library computes the same number the
# other way round (`bloomedu.core.occupancy`): first the k query positions, a k-step chain for
# how many distinct bits R they hit, then the chance that the $kn$ inserted positions cover R
# given bits, with positive terms only. Its cost grows with k, not with m or n, so $m = 10^5$
# with $kn = 10^6$ takes milliseconds (the time depends on the machine):

# %% tags=["nbval-ignore-output"]
start = time.perf_counter()
big_exact = exact_false_positive_rate(num_bits=100_000, num_hashes=10, n=100_000)
say("exact rate, m=1e5, n=1e5, k=10: {rate:.10f} in {seconds:.4f} s",
    rate=big_exact, seconds=time.perf_counter() - start)

# %% [markdown]
# ## Where the classic formula is off
#
# The classic formula depends only on the load $kn/m$, so it cannot tell a small filter from a
# large one with the same number of bits per item. The exact rate can. Keep $m/n = 8$ bits per
# item and k = 6 (close to $8 \ln 2 = 5.5$), and let m grow:

# %%
sizes = [2**e for e in range(3, 21)]
ratio_rows = [{"m": size, "n": size // 8,
               "classic": false_positive_rate(num_bits=size, num_hashes=6, n=size // 8),
               "exact": exact_false_positive_rate(num_bits=size, num_hashes=6, n=size // 8)}
              for size in sizes]
for row in ratio_rows:
    row["exact/classic"] = row["exact"] / row["classic"]
print(format_table(ratio_rows, ["m", "n", "classic", "exact", "exact/classic"],
                   float_format=".6f"))

# %% [markdown]
# The ratio exact/classic goes to 1 like $1 + O(1/m)$: each doubling of m halves the gap. At
# m = 64 the exact rate is 10% above the classic one, and at a million bits the gap is a few
# parts in a million:

# %%
ax = new_axes()
ax.semilogx(sizes, [r["exact/classic"] for r in ratio_rows], "o-", label="exact / classic")
ax.axhline(1.0, color="k", linestyle="--", linewidth=0.8)
decorate(ax, xlabel="m, bits (m/n = 8, k = 6)", ylabel="exact / classic",
         title="The classic formula underestimates small filters")
show("The exact rate divided by the classic one against m from 8 to a million bits at 8 bits per "
     "item and k = 6: the ratio starts well above 1 for tiny filters and falls to 1, halving its "
     "gap with each doubling of m.")

# %% [markdown]
# So the classic formula is all a filter of real size needs, and lesson 07 uses either. Small
# filters, as in the lessons' pictures, need the exact rate, and `deeper/06_small_filters` uses it
# to show what bloomedu's mixed positions are for.
#
# Back to lesson 07 (*The false-positive rate*).
