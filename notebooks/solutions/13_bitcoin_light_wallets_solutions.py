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
from bloomedu.compat.bip37 import bitcoinj_sizing
from bloomedu.core.theory import exact_false_positive_rate, false_positive_rate
from bloomedu.i18n import say
from bloomedu.teaching.exercises import check, show

SEED = 130
show("13")

# %% [markdown]
# ## 13.1 (compute)
#
# bitcoinj's arithmetic, step by step: the size in bits, $-n \ln p / (\ln 2)^2$, truncated, then
# whole bytes (at least 1); then $k = \lfloor (m/n) \ln 2 \rfloor$, at least 1, with m the bits of
# those whole bytes. Bitcoin Core's own constructor divides $m // n$ in whole numbers first and
# would give 2.

# %%
n, p = 40, 0.1
wanted_bits = int(-n * math.log(p) / math.log(2) ** 2)
nbytes = min(wanted_bits, 36_000 * 8) // 8
m = 8 * nbytes
answer = max(1, min(int(m / n * math.log(2)), 50))
assert bitcoinj_sizing(n_elements=n, fp_rate=p) == (nbytes, answer)
say("{wanted_bits} bits asked -> {nbytes} bytes = {m} bits; {m} / {n} x ln 2 = {k_real:.3f} "
    "-> k = {k} (Bitcoin Core's constructor: {core_k})", wanted_bits=wanted_bits, nbytes=nbytes,
    m=m, n=n, k_real=m / n * math.log(2), k=answer, core_k=Bip37Filter(n, p).n_hash_funcs)

# %%
check.bip37_hashes(answer, n=40, p=0.1)

# %% [markdown]
# ## 13.2 (predict)
#
# The same arithmetic at n = 100,000 and p = 0.0001. The node's 36,000-byte limit leaves far fewer
# bits than the rate asked for needs, and $2.88 \ln 2 = 1.996$ truncates to a single hash function.

# %%
n, p = 100_000, 0.0001
wanted_bits = int(-n * math.log(p) / math.log(2) ** 2)
nbytes = min(wanted_bits, 36_000 * 8) // 8
m = 8 * nbytes
k = max(1, min(int(m / n * math.log(2)), 50))
answer = (1 - math.exp(-k * n / m)) ** k
assert bitcoinj_sizing(n_elements=n, fp_rate=p) == (nbytes, k)
assert math.isclose(answer, false_positive_rate(num_bits=m, num_hashes=k, n=n))
say("asked: {wanted_bits:,} bits; capped: {nbytes:,} bytes = {m:,} bits; "
    "{bits_per_element:.2f} bits per element -> k = {k}", wanted_bits=wanted_bits, nbytes=nbytes,
    m=m, bits_per_element=m / n, k=k)
say("rate: {rate:.4f}, about {times:,.0f} times the {p} asked for",
    rate=answer, times=answer / p, p=p)

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
wallet = Bip37Filter.sized(*bitcoinj_sizing(n_elements=n, fp_rate=0.0001),
                          tweak=int(rng.integers(2**32)))
for item in items[:n]:
    wallet.insert(item)
assert wallet.contains_many(items[:1000]).all()
answer = float(wallet.contains_many(items[n:]).mean())
say("measured rate {rate:.4f}; exact expectation {exact:.4f}; bits set {fill:.4f} of m",
    rate=answer,
    exact=exact_false_positive_rate(num_bits=wallet.num_bits, num_hashes=wallet.n_hash_funcs, n=n),
    fill=wallet.bit_count() / wallet.num_bits)

# %%
check.measured_bip37_fpp(answer, n=100_000, p=0.0001, trials=100_000)
