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
# # Solutions · 20 · After Bloom: cuckoo, xor and binary fuse filters against the lower bound
#
# Worked solutions to the exercises at the end of lesson
# [20_after_bloom.ipynb](../20_after_bloom.ipynb). Try them there first. Each answer is derived
# in code, never typed in, and `check` confirms it.

# %%
import math

import numpy as np

from bloomedu import CuckooFilter, XorFilter
from bloomedu.i18n import say
from bloomedu.teaching.exercises import check, show
from bloomedu.variants.space import cuckoo_false_positive_rate, cuckoo_rate_bound

SEED = 20
show("20")

# %% [markdown]
# ## 20.1 (compute)
#
# A query compares its fingerprint with the 2b slots of its two buckets; when every slot is
# full, each matches with probability about $2^{-f}$, so $p \le 2b/2^f$. Asking
# $2b/2^f \le p$ gives $f \ge \log_2(2b/p) = \log_2(8000) = 12.97$: the fewest whole bits is 13.
# The lower bound's $\log_2(1/p)$ alone (10 bits) forgets the 2b slots a query compares.

# %%
p, b = 0.001, 4
exact = math.log2(2 * b / p)
answer = math.ceil(exact)
say("log2(2b/p) = {exact:.3f}, so f = {f}", exact=exact, f=answer)
for f in (answer - 1, answer):
    bound = cuckoo_rate_bound(f, b)
    if bound <= p:
        say("f = {f}: bound 2b/2^f = {bound:.6f} (under p)", f=f, bound=bound)
    else:
        say("f = {f}: bound 2b/2^f = {bound:.6f} (over p)", f=f, bound=bound)

# %% [markdown]
# A filter with 13-bit fingerprints, filled until its first insert fails, stays under p:

# %%
rng = np.random.default_rng(SEED)
full = CuckooFilter(50_000, fingerprint_bits=answer, bucket_size=b)
added = full.add_until_full(rng.integers(0, 2 ** 63, 60_000, dtype=np.uint64))
rate = float(full.contains_many(rng.integers(2 ** 63, 2 ** 64 - 1, 400_000, dtype=np.uint64)).mean())
say("{added:,} keys, load {load:.4f}: measured p = {rate:.6f}, formula {formula:.6f}, target {p}",
    added=added, load=full.load_factor, rate=rate,
    formula=cuckoo_false_positive_rate(answer, b, full.load_factor), p=p)

# %%
check.cuckoo_fingerprint_bits(answer, fpp=0.001, bucket_size=4)

# %% [markdown]
# ## 20.2 (predict)
#
# A key never added finds a fingerprint to delete exactly when it is a false positive: one of
# the 2ba occupied slots of its two buckets holds its fingerprint, with probability
# $1 - (1 - 1/(2^f - 1))^{2ba}$. Each such delete removes another key's fingerprint, and that key
# is then reported absent. So the keys lost are about 50,000 times the rate at load 0.9.

# %%
deletes, f, b, load = 50_000, 12, 4, 0.9
answer = deletes * cuckoo_false_positive_rate(f, b, load)
say("50,000 x {rate:.6f} = {lost:.1f} keys lost (the bound 2b/2^f would say {at_bound:.1f})",
    rate=cuckoo_false_positive_rate(f, b, load), lost=answer,
    at_bound=deletes * cuckoo_rate_bound(f, b))

# %% [markdown]
# Measured: a filter for 100,000 keys holding them at a load of 0.9, then 50,000 deletes of keys
# drawn from a range the added keys cannot come from.

# %%
cuckoo = CuckooFilter(100_000, f, b)
inserted = rng.integers(0, 2 ** 63, 100_000, dtype=np.uint64)
cuckoo.add_many(inserted)
removed = sum(cuckoo.delete(int(key)) for key in rng.integers(2 ** 63, 2 ** 64 - 1, deletes, dtype=np.uint64))
lost = int(np.count_nonzero(~cuckoo.contains_many(inserted)))
say("load {load:.4f}: {removed} deletes removed a fingerprint, {lost} added keys lost; "
    "expected {expected:.1f} +- {sd:.1f}", load=100_000 / cuckoo.num_slots, removed=removed,
    lost=lost, expected=answer, sd=math.sqrt(answer))

# %%
check.keys_lost_to_deletes(answer, deletes=50_000, fingerprint_bits=12, bucket_size=4, load=0.9)

# %% [markdown]
# ## 20.3 (measure)
#
# Build the filter from 100,000 seeded random keys, query 100,000 others from a range the added
# keys cannot come from, and count the "maybe" answers. Each absent key matches with probability
# $2^{-8}$ on its own, so the count is binomial: the measured rate should be within a few
# $\sqrt{p(1-p)/100{,}000} \approx 0.0002$ of 0.0039.

# %%
keys = rng.integers(0, 2 ** 63, 100_000, dtype=np.uint64)
xor = XorFilter(keys, 8)
assert xor.contains_many(keys).all()  # no false negatives
answer = float(xor.contains_many(rng.integers(2 ** 63, 2 ** 64 - 1, 100_000, dtype=np.uint64)).mean())
say("{bits_a_key:.3f} bits a key; measured {rate:.5f} against 2^-8 = {target:.5f}",
    bits_a_key=xor.bits_per_key, rate=answer, target=2 ** -8)

# %%
check.measured_xor_fpp(answer, n=100_000, trials=100_000, fingerprint_bits=8)
