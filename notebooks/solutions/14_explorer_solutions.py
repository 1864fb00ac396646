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
# # Solutions · 14 · The explorer: move m, k and n, and watch the rate follow
#
# Worked solutions to the exercises at the end of lesson
# [14_explorer.ipynb](../14_explorer.ipynb). Try them there first. Each answer is derived in
# code, never typed in, and `check` confirms it.

# %%
import math

from bloomedu import BloomFilter
from bloomedu.i18n import say
from bloomedu.teaching.exercises import check, show
from bloomedu.teaching.explorer import explore, make_keys
from bloomedu.core.theory import (bit_vector_false_positive_rate, exact_false_positive_rate,
                             false_positive_rate, optimal_num_hashes)

SEED = 9
show("14")

# %% [markdown]
# ## 14.1 (compute)
#
# n keys with k hashes each set a bit kn times in all. One setting misses a given bit with
# probability $1 - 1/m$, so the bit is still 0 after all of them with probability
# $(1 - 1/m)^{kn} \approx e^{-kn/m}$. The fill ratio is the fraction of bits set: 1 minus that.

# %%
m, k, n = 20_000, 3, 2500
answer = 1 - math.exp(-k * n / m)
exact = bit_vector_false_positive_rate(num_bits=m, n=k * n)  # 1 - (1 - 1/m)^(kn), without the e^x shortcut
say("kn/m = {load:.4f}; fill 1 - e^(-kn/m) = {fill:.5f}; 1 - (1 - 1/m)^(kn) = {exact:.5f}",
    load=k * n / m, fill=answer, exact=exact)

# %% [markdown]
# The explorer measures the fill of a real filter beside that expectation:

# %%
e = explore(num_bits=m, num_hashes=k, n=n, num_queries=1000, seed=SEED)
say("measured fill {fill:.4f}, expected {expected:.4f}", fill=e.fill_ratio,
    expected=e.expected_fill_ratio)

# %%
check.fill_ratio(answer, num_bits=20_000, num_hashes=3, n=2500)

# %% [markdown]
# ## 14.2 (predict)
#
# At $m/n = 8$ bits per key the classic rate $(1 - e^{-kn/m})^k$ is smallest near
# $k = \frac{m}{n} \ln 2 \approx 5.5$, which is not a whole number: compare the whole k on either
# side. The two are close, so the explorer's measured points cannot tell them apart; the formulas
# can.

# %%
m, n = 8000, 1000
best_real = m / n * math.log(2)
say("(m/n) ln 2 = {best_real:.3f}", best_real=best_real)
say(" k   classic     exact")
for k in range(4, 8):
    print(f"{k:>2} {false_positive_rate(num_bits=m, num_hashes=k, n=n):>9.6f} "
          f"{exact_false_positive_rate(num_bits=m, num_hashes=k, n=n):>9.6f}")
answer = min((math.floor(best_real), math.ceil(best_real)),
             key=lambda k: false_positive_rate(num_bits=m, num_hashes=k, n=n))
assert answer == optimal_num_hashes(num_bits=m, n=n)
say("the curve bottoms out at k = {k}", k=answer)

# %%
check.optimal_k(answer, num_bits=8000, n=1000)

# %% [markdown]
# ## 14.3 (measure)
#
# `explore` builds the filter, inserts n seeded URLs and asks it about 20,000 URLs that were
# never inserted (their paths start with `/out/` instead of `/in/`). Its `measured` field is the
# answer. The same experiment by hand, with the explorer's keys, gives the same count.

# %%
num_bits, num_hashes, n, trials = 8000, 3, 1000, 20_000
e = explore(num_bits=num_bits, num_hashes=num_hashes, n=n, key_type="url", num_queries=trials,
            seed=SEED)
answer = e.measured

bloom = BloomFilter(num_bits, num_hashes)
urls = make_keys("url", n, seed=SEED, inserted=True)
bloom.add_many(urls)
assert bloom.contains_many(urls).all()  # no false negatives
by_hand = int(bloom.contains_many(make_keys("url", trials, seed=SEED, inserted=False)).sum())
assert by_hand == e.false_positives
say("{false_positives} of {trials} absent URLs answered 'maybe': measured {rate:.5f}; "
    "exact {exact:.5f} (one standard deviation {sd:.5f})", false_positives=e.false_positives,
    trials=trials, rate=answer, exact=e.exact, sd=e.standard_error)

# %%
check.measured_fpp(answer, num_bits=8000, num_hashes=3, n=1000, trials=20_000)
