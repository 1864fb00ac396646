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
# # Solutions · 13 · Bitcoin light wallets, byte for byte
#
# Worked solutions to the exercises at the end of lesson
# [13_bitcoin_light_wallets.ipynb](../13_bitcoin_light_wallets.ipynb). Try them there first. Each
# answer is derived in code, never typed in, and `check` confirms it.

# %%
import math

import numpy as np

from bloomedu.compat import Bip37Filter
from bloomedu.core.theory import exact_false_positive_rate, false_positive_rate
from bloomedu.teaching.exercises import check, show

SEED = 130
show("13")

# %% [markdown]
# ## 13.1 (compute)
#
# Bitcoin Core's arithmetic, step by step: the size in bits, $-n \ln p / (\ln 2)^2$, truncated,
# then whole bytes; then $k = \lfloor \lfloor m/n \rfloor \ln 2 \rfloor$, with m the bits of those
# whole bytes. The textbook k, $(m/n) \ln 2$ with a real division, would round to 3.

# %%
n, p = 40, 0.1
wanted_bits = int(-n * math.log(p) / math.log(2) ** 2)
nbytes = min(wanted_bits, 36_000 * 8) // 8
m = 8 * nbytes
answer = int(m // n * math.log(2))
assert Bip37Filter(n, p).n_hash_funcs == answer
print(f"{wanted_bits} bits asked -> {nbytes} bytes = {m} bits; {m} // {n} = {m // n}; "
      f"{m // n} x ln 2 = {m // n * math.log(2):.3f} -> k = {answer} "
      f"(textbook: {m / n * math.log(2):.3f})")

# %%
check.bip37_hashes(answer, n=40, p=0.1)

# %% [markdown]
# ## 13.2 (predict)
#
# The same arithmetic at n = 100,000 and p = 0.0001. The cap leaves far fewer bits than the rate
# asked for needs, and the whole-number division leaves a single hash function.

# %%
n, p = 100_000, 0.0001
wanted_bits = int(-n * math.log(p) / math.log(2) ** 2)
nbytes = min(wanted_bits, 36_000 * 8) // 8
k = int(nbytes * 8 // n * math.log(2))
m = 8 * nbytes
answer = (1 - math.exp(-k * n / m)) ** k
core = Bip37Filter(n, p)
assert (core.num_bits, core.n_hash_funcs) == (m, k)
assert math.isclose(answer, false_positive_rate(num_bits=m, num_hashes=k, n=n))
print(f"asked: {wanted_bits:,} bits; capped: {nbytes:,} bytes = {m:,} bits; "
      f"{m // n} bits per element -> k = {k}")
print(f"rate: {answer:.4f}, about {answer / p:,.0f} times the {p} asked for")

# %% [markdown]
# The size on the way, then the rate:

# %%
check.bip37_bytes(nbytes, n=100_000, p=0.0001)

# %%
check.bip37_fpp(answer, n=100_000, p=0.0001)

# %% [markdown]
# ## 13.3 (measure)
#
# One draw of 200,000 random 20-byte items (all distinct): the first half goes into the filter,
# the second half measures it.

# %%
n, trials = 100_000, 100_000
rng = np.random.default_rng(SEED)
blob = rng.bytes(20 * (n + trials))
items = [blob[i:i + 20] for i in range(0, len(blob), 20)]
assert len(set(items)) == len(items)
wallet = Bip37Filter(n, 0.0001, tweak=int(rng.integers(2**32)))
for item in items[:n]:
    wallet.insert(item)
assert wallet.contains_many(items[:1000]).all()
answer = float(wallet.contains_many(items[n:]).mean())
print(f"measured rate {answer:.4f}; exact expectation "
      f"{exact_false_positive_rate(num_bits=wallet.num_bits, num_hashes=wallet.n_hash_funcs, n=n):.4f}; "
      f"bits set {wallet.bit_count() / wallet.num_bits:.4f} of m")

# %%
check.measured_bip37_fpp(answer, n=100_000, p=0.0001, trials=100_000)
