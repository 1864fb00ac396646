# ---
# jupyter:
#   bloomedu:
#     summary: A short statistics primer for the lessons' measurements, read before
#       lesson 02's first standard deviation; the spread of a measured share, its standard
#       deviation, z-scores and intervals, each checked on 500 repeated measurements.
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
# # Going deeper 01 · Spread, standard deviation, z-scores and intervals
#
# A short primer to read before lesson 02 (*Keeping only a 32-bit hash of each ID*), whose
# tables first print a standard deviation. From there on every lesson measures something on
# random keys (collisions, a share of keys wrongly claimed) and sets it beside a formula. A
# measurement never lands exactly on the formula; this notebook says how far off is normal, with
# four tools: the **spread** of repeated measurements, their **standard deviation** (sd), the
# **z-score** of one measurement, and an **interval** around it.
#
# **Time:** about 15 minutes.

# %%
# %matplotlib inline
import math

import numpy as np

from bloomedu.i18n import phrase, say
from bloomedu.kernels.murmur import murmur3_128_uint64
from bloomedu.teaching.plots import decorate, new_axes, show
from bloomedu.teaching.predict import predict

SEED = 1

# %% [markdown]
# ## One measurement, repeated 500 times
#
# The measurement: hash q = 1,000 random keys with MurmurHash3 and count the share whose lowest
# 4 bits are all 0. A good hash makes that happen with probability $p = 1/16 = 0.0625$ for each
# key, independently, so the theory says 0.0625. We make the same measurement 500 times, each on
# 1,000 new keys:

# %%
q, runs, p = 1_000, 500, 1 / 16
rng = np.random.default_rng(SEED)
keys = rng.integers(0, 2**63, size=(runs, q), dtype=np.uint64)
h1, _ = murmur3_128_uint64(keys.ravel())
hits = ((h1 & np.uint64(15)) == 0).reshape(runs, q)
shares = hits.mean(axis=1)  # one measured share per run
say("theory p = {p:.4f}; the first five runs: {first_five}", p=p,
    first_five=", ".join(f"{s:.4f}" for s in shares[:5]))
say("mean of the {runs} runs {mean:.4f}; smallest {smallest:.4f}, largest {largest:.4f}",
    runs=runs, mean=shares.mean(), smallest=shares.min(), largest=shares.max())

# %% [markdown]
# No run can measure exactly 0.0625, which would be 62.5 hits in 1,000 keys: the runs scatter
# around the theory, from 0.0420 to 0.0820, and their mean sits very close to it. That scatter is the **spread**, and it is no fault of the
# hash: 1,000 keys are a sample, and another 1,000 give another share.
#
# ## The standard deviation
#
# The usual measure of spread is the **standard deviation**: the square root of the average
# squared distance from the mean,
#
# $$\text{sd} = \sqrt{\frac{1}{R}\sum_{r=1}^{R} (x_r - \bar{x})^2}.$$
#
# For a share it can also be worked out before measuring. One key is a yes (1) with probability
# p or a no (0), so its variance (the sd squared) is $p(1 - p)$. Variances of independent keys
# add up, so a count of hits among q keys has variance $q\,p(1 - p)$, and the share, the count
# divided by q, has
#
# $$\text{sd of a share} = \sqrt{\frac{p(1 - p)}{q}}, \qquad \text{sd of a count} = \sqrt{q\,p(1 - p)} \approx \sqrt{\text{expected count}} \text{ when } p \text{ is small}.$$
#
# The second form is the one lesson 02 uses: collisions are many rare events, so the sd of their
# count is about the square root of the count expected. Measured against worked out:

# %%
sd_theory = math.sqrt(p * (1 - p) / q)
counts = hits.sum(axis=1)
say("sd of the 500 shares, measured   {sd:8.5f}", sd=shares.std())
say("sqrt(p (1 - p) / q)              {sd:8.5f}", sd=sd_theory)
say("sd of the 500 counts, measured   {sd:8.2f}", sd=counts.std())
say("sqrt(q p (1 - p))                {sd:8.2f}", sd=math.sqrt(q * p * (1 - p)))
say("sqrt(expected count {expected:.1f})        {sd:8.2f}", expected=q * p, sd=math.sqrt(q * p))

# %% [markdown]
# The sd shrinks with the square root of q: four times as many keys halve it. That is why the
# lessons that need a precise rate query hundreds of thousands of keys.
#
# ## The z-score: how many sd away?
#
# One measurement's distance from the theory, in standard deviations, is its **z-score**:
#
# $$z = \frac{\text{measured} - \text{theory}}{\text{sd}}.$$
#
# It puts every measurement on one scale, whatever q or p: lessons 03 to 05 print a column of
# them. Before counting, a guess:

# %%
guess_within = predict("What share of the 500 runs lies within 2 sd of the theory, |z| <= 2?", None)

# %%
z = (shares - p) / sd_theory
for limit in (1, 2, 3):
    say("|z| <= {limit}: {share:.3f} of the runs", limit=limit, share=np.mean(np.abs(z) <= limit))
say("largest |z| of the {runs} runs: {largest:.2f}", runs=runs, largest=np.abs(z).max())
guess_within.reveal(round(float(np.mean(np.abs(z) <= 2)), 3))

# %%
ax = new_axes()
ax.hist(z, bins=np.arange(-4, 4.01, 0.5), color="#1f4e79", alpha=0.8,
        label=phrase("{runs} runs", runs=runs))
grid = np.linspace(-4, 4, 200)
ax.plot(grid, runs * 0.5 * np.exp(-grid**2 / 2) / math.sqrt(2 * math.pi), color="#f28e2b",
        label="bell curve (normal), scaled to 500 runs")
for limit in (-2, 2):
    ax.axvline(limit, color="0.5", linestyle=":", linewidth=1)
decorate(ax, xlabel="z = (measured share - 1/16) / sd", ylabel="runs",
         title="500 measured shares, in standard deviations from the theory")
show("Histogram of the z-scores of 500 measured shares, from about -3 to +3: a bell shape "
     "centred on 0 that follows the normal curve drawn over it, with nearly all runs between "
     "the dotted lines at -2 and +2.")

# %% [markdown]
# The z-scores follow the bell-shaped **normal curve**, and so does almost any count of many
# small independent events. From that curve come three numbers worth remembering: about 68% of
# measurements fall within 1 sd, 95% within 2 and 99.7% within 3 (our 500 runs: 71.8%, 96.0%
# and all of them). So a z of ±1 is ordinary, one beyond ±2 comes about once in 20
# measurements, and one beyond ±3 about 3 times in 1,000: a hint that the theory, or the
# experiment, is wrong.
#
# Two cautions the lessons meet. A table of several rows has a largest |z| bigger than one row
# alone: with eight independent rows, the chance that at least one passes 2 is
# $1 - 0.954^8 \approx 0.31$, about one time in three. And a z-score only says whether a
# difference could be chance, not whether it matters: lesson 04's seeds differ from independent
# functions by 2.7 sd, a real but tiny dependence.
#
# ## An interval
#
# Turned around, the same rule gives an **interval**: measured ± 2 sd contains the theory in
# about 95% of measurements. It is the honest way to write a measured rate: not "0.0490" but
# "0.0490 ± 0.0153", a range built so that 95 of 100 such ranges contain the truth. Of our 500
# runs:

# %%
low, high = shares - 2 * sd_theory, shares + 2 * sd_theory
contains = (low <= p) & (p <= high)
say("first run: {share:.4f} ± {half_width:.4f} = [{low:.4f}, {high:.4f}]",
    share=shares[0], half_width=2 * sd_theory, low=low[0], high=high[0])
say("intervals that contain p = 1/16: {contained} of {runs} ({share:.1%})",
    contained=contains.sum(), runs=runs, share=contains.mean())

# %% [markdown]
# Here the sd came from the theory's p. A measurement with no theory to lean on uses its own
# measured share in the formula, which is loose when the count is small; `deeper/07_measured_rates`
# builds the better Wilson interval for that case and checks 240 of them.
#
# Back to lesson 02 (*Keeping only a 32-bit hash of each ID*), whose collision table prints the
# sd of a count, $\sqrt{\text{expected}}$, beside each measurement.
