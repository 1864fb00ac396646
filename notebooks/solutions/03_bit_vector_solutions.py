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
# # Solutions · 03 · The bit vector: one hash, one bit per hash value
#
# Worked solutions to the exercises at the end of lesson
# [03_bit_vector.ipynb](../03_bit_vector.ipynb). Try them there first. Each answer is derived in
# code, never typed in, and `check` confirms it.

# %%
import math

import numpy as np

from bloomedu import BitVector
from bloomedu.workloads.clicks import uuid4_strings
from bloomedu.teaching.exercises import check, show
from bloomedu.i18n import say
from bloomedu.core.theory import bit_vector_false_positive_rate

SEED = 3
show("03")

# %% [markdown]
# ## 03.1 (compute)
#
# A new ID is a false positive when its one bit is set. Each of the 100 earlier IDs missed that
# bit with probability $1 - 1/m$, so the bit is still 0 with probability $(1 - 1/m)^{100}$.

# %%
m, items = 2**8, 100
answer = 1 - (1 - 1 / m) ** items
assert math.isclose(answer, bit_vector_false_positive_rate(num_bits=m, n=items))
say("p = 1 - (1 - 1/{m})**{items} = {p:.4f}  (items/m = {ratio:.4f} overcounts)", m=m, items=items,
    p=answer, ratio=items / m)

# %%
check.bit_vector_fpp(answer, hash_bits=8, items=100)

# %% [markdown]
# ## 03.2 (predict)
#
# The rate only falls as the vector grows, so the smallest hash width that is good enough is
# found by trying widths in turn. Solving $1 - (1 - 1/m)^n \le p$ for m gives the same answer:
# $m \ge 1 / \left(1 - (1 - p)^{1/n}\right)$, about $n/p$ bits, and `hash_bits` is its base-2
# logarithm, rounded up.

# %%
items, fpp = 1000, 0.01
answer = next(b for b in range(1, 33) if bit_vector_false_positive_rate(num_bits=2**b, n=items) <= fpp)
fewest_bits = 1 / -math.expm1(math.log1p(-fpp) / items)
assert answer == math.ceil(math.log2(fewest_bits))
say("hash_bits        m        p")
for b in (answer - 1, answer):
    print(f"{b:9d}  {2**b:7d}  {bit_vector_false_positive_rate(num_bits=2**b, n=items):7.4f}")
say("fewest bits m = {m:,.0f}, so hash_bits = {hash_bits}", m=fewest_bits, hash_bits=answer)

# %%
check.bit_vector_hash_bits(answer, items=1000, fpp=0.01)

# %% [markdown]
# ## 03.3 (measure)
#
# The 40 IDs inserted and the 10,000 IDs queried come from one draw of 10,040 distinct UUIDs, so
# no query was inserted and every "seen" is a false positive.

# %%
items, trials = 40, 10_000
keys = uuid4_strings(items + trials, np.random.default_rng(SEED))
inserted, queries = keys[:items], keys[items:]
assert not set(inserted) & set(queries)
vector = BitVector(hash_bits=8)
for key in inserted:
    vector.add(key)
answer = sum(key in vector for key in queries) / trials
say("bits set {set_bits} of {m}; measured p = {p:.4f}, formula {formula:.4f}",
    set_bits=vector.bits.count(), m=vector.num_bits, p=answer,
    formula=bit_vector_false_positive_rate(num_bits=vector.num_bits, n=items))

# %%
check.measured_bit_vector_fpp(answer, hash_bits=8, items=40, trials=10_000)
