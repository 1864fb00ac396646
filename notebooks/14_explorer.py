# ---
# jupyter:
#   bloomedu:
#     summary: 'An interactive panel: move m, k and n and watch the measured false-positive
#       rate follow the classic and exact formulas.'
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
# # 14 · The explorer: move m, k and n, and watch the rate follow
#
# Lesson 05 (`05_bloom_filter.ipynb`) ended with a toy that follows one key at a time; lesson 07
# (`07_false_positive_rate.ipynb`) measured real filters against the formulas on a fixed grid,
# and lesson 09 (`09_one_million_urls.ipynb`) sized a filter from n and p. The second article, *"Bloom Filter: come memorizzare 1 Milione di stringhe
# in meno di 2MB?"*, only says that formulas for the error probability exist; this lesson hands
# you the controls. A panel of sliders sets **m** (bits), **k** (hash functions) and **n**
# (inserted keys) and a key type; every change builds a real `BloomFilter`, asks it about keys
# that were never inserted, and draws the measured false-positive rate **p** against the classic
# formula (1 − e^(−kn/m))^k and the exact one (Bose et al. 2008), with the fill ratio and the
# optimal k beside it.
#
# The panel is thin: all its numbers come from `bloomedu.teaching.explorer.explore`, a plain function.
# So the lesson first prints those numbers for one setting (they are the same on every machine),
# then shows the live panel.

# %%
# %matplotlib inline
import math

import matplotlib.pyplot as plt

from bloomedu.teaching.exercises import check
from bloomedu.teaching.explorer import explore, explorer, make_keys
from bloomedu.core.theory import exact_false_positive_rate, false_positive_rate, optimal_num_hashes

SEED = 9

# %% [markdown]
# ## The keys
#
# Two key types: random 64-bit integers (like numeric database IDs, hashed as 8 bytes) and URL
# strings (like the second article's blacklist; the first article's click IDs are strings too). Inserted keys and query keys
# are drawn so that they can never coincide, so every "maybe" a query gets is a false positive.

# %%
print(make_keys("uint64", 2, seed=SEED, inserted=True))
print(make_keys("url", 2, seed=SEED, inserted=True))
print(make_keys("url", 2, seed=SEED, inserted=False))

# %% [markdown]
# ## One setting, printed
#
# m = 10,000 bits and n = 1,000 keys, so m/n = 10 bits per key, with k = 4 hash functions.
# `explore` builds one filter for each k from 1 to 12 with the same 1,000 keys, and queries each
# with the same 20,000 absent keys.
#
# **Predict:** at 10 bits per key, at which k will the curve bottom out, and how many times
# higher is the rate at the current k = 4 than at the bottom? (Lesson 07 derived the first.)

# %%
result = explore(num_bits=10_000, num_hashes=4, n=1000, key_type="uint64", over="k", seed=SEED)
print(result.summary())
print()
print(result.curve_table())

# %% [markdown]
# The same numbers as a plot: the two formulas as lines, the measurements as points with bars
# of two standard deviations (`bloomedu.core.theory.measured_rate_std`: the noise of 20,000 queries
# plus the spread between filters), and the current setting as a star.

# %%
result.plot()
plt.show()

# %% [markdown]
# **Check your prediction:** the star sits at k = 4, but the curve bottoms out near
# k = (m/n) ln 2 = 6.93, at k = 7, where the exact rate is 0.00820 against 0.01182 at k = 4:
# 1.44 times lower (printed below). At m/n = 10 the two formulas agree to three significant
# digits. The last line below says how far each measured
# point is from the exact rate, in standard deviations. The points are not independent
# samples, though: all twelve filters hold the same 1,000 keys and answer the same queries.

# %%
print(f"(m/n) ln 2 = {10_000 / 1000 * math.log(2):.2f}  ->  optimal k = {optimal_num_hashes(10_000, 1000)}")
print(f"k = 4: p = {result.curve_exact[3]:.5f};  k = 7: p = {result.curve_exact[6]:.5f}; "
      f"ratio {result.curve_exact[3] / result.curve_exact[6]:.2f}")
z = [(got - exact) / sd for got, exact, sd in
     zip(result.curve_measured, result.curve_exact, result.curve_errors())]
print("measured - exact, in standard deviations:", " ".join(f"{v:+.1f}" for v in z))

# %% [markdown]
# ## Over n, with URL strings
#
# Now keep k = 4 and let the filter fill: one filter, keys added step by step up to 2n, now with
# URL strings. The URLs are hashed as UTF-8 strings, the integers as 8 bytes.
#
# **Predict:** at n = 1,000, will the URL keys give a higher rate than the integer keys above
# (0.01325), a lower one, or the same within the noise?

# %%
by_n = explore(num_bits=10_000, num_hashes=4, n=1000, key_type="url", over="n", seed=SEED)
print(by_n.curve_table())
print()
print(f"at n = 1000: uint64 keys {result.measured:.5f}, URL keys {by_n.measured:.5f}, "
      f"exact {by_n.exact:.5f}, standard deviation {by_n.standard_error:.5f}")

# %% [markdown]
# **Check your prediction:** the same within the noise. A good hash makes both kinds of key look
# uniformly random to the filter, so both rates land within two standard deviations of the exact
# 0.01182: URL keys 0.01215 (0.4 standard deviations above it), integer keys 0.01325 (about 1.8
# above). The filter does not care what the keys are.

# %%
by_n.plot()
plt.show()

# %% [markdown]
# ## Where the classic formula is off
#
# (1 − e^(−kn/m))^k treats the bits as independent; they are not, and the classic value is a
# lower bound on the exact rate (Christensen, Roginsky and Jimeno 2010). The table keeps
# m/n = 10 and k = 4 and shrinks the filter: the gap grows as m gets small.

# %%
print(f"{'m':>6} {'n':>5} {'m/n':>5} {'k':>2} {'classic':>9} {'exact':>9} {'exact/classic':>13}")
for m in (60, 250, 1000, 10_000):
    n = m // 10
    classic, exact = false_positive_rate(m, n, 4), exact_false_positive_rate(m, n, 4)
    print(f"{m:>6} {n:>5} {m / n:>5.1f} {4:>2} {classic:>9.5f} {exact:>9.5f} {exact / classic:>13.4f}")

# %% [markdown]
# ## The live panel
#
# Move a slider and release it: the panel redraws from `explore`. Things to try:
#
# - Hold m and n and slide k past the optimum: the rate falls, then climbs again, because every
#   extra hash sets more bits.
# - Switch the curve to n and raise n until the fill ratio reaches 0.5: there the optimal k
#   *is* the current k. Below that n a larger k would be better, above it a smaller one.
# - Switch the keys between integers and URLs: the rate does not care what the keys are.
# - Shrink m to a few hundred bits and compare the classic and exact lines.
#
# The panel's output is a live widget, different on every run, so it is not compared when the
# tests run this notebook; the numbers above are.

# %% tags=["nbval-ignore-output"]
explorer(num_bits=10_000, num_hashes=4, n=1000, key_type="uint64", over="k", seed=SEED)

# %% [markdown]
# ## Exercises
#
# Three exercises on this lesson: compute, predict, then measure. Replace `None` with your
# answer and run the cell: `check` tells you whether it is right and, when it is not, which slip
# it looks like. Worked solutions are in `solutions/14_explorer_solutions.ipynb`; try first.

# %% [markdown]
# **14.1 (compute).** What fraction of its m = 20,000 bits does a filter with k = 3 hash
# functions have set after n = 2,500 keys?
#
# This is the "expected" fill ratio the panel prints beside the measured one.

# %%
answer = None  # replace None with your answer
check.fill_ratio(answer, m=20_000, k=3, n=2500)

# %% [markdown]
# **14.2 (predict).** Set the explorer to m = 8,000 bits and n = 1,000 keys with the curve over
# k: at which whole k does the curve of the formulas bottom out?
#
# Predict first, then move the sliders to see whether the panel agrees.

# %%
answer = None  # replace None with your answer
check.optimal_k(answer, m=8000, n=1000)

# %% [markdown]
# **14.3 (measure).** With URL keys, measure the false-positive rate of BloomFilter(8_000, 3)
# holding 1,000 URLs on 20,000 URLs never inserted.
#
# `explore` does it in one call (its `measured` field, with `key_type="url"`); or build the
# filter by hand with `make_keys`, `add_many` and `contains_many`.

# %%
answer = None  # replace None with your answer
check.measured_fpp(answer, num_bits=8000, num_hashes=3, n=1000, trials=20_000)

# %% [markdown]
# ## What comes next
#
# This lesson ends the path through the two articles. The formulas the panel draws are derived,
# and measured over a whole grid of filters, in `07_false_positive_rate.ipynb`, and
# `09_one_million_urls.ipynb` turns them around to size a filter from n and p. To read every lesson without Python, `make html` writes
# them as a website in `build/html/`; to start again from the first step, open
# `01_seen_ids.ipynb`.
#
# *Where this lesson's code lives:* `bloomedu/teaching/explorer.py`; its tests: `tests/test_explorer.py`,
# `tests/test_browser.py`. The README's table maps every article step to its module, lesson and
# test.

