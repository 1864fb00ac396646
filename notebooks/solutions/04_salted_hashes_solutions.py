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
# # Solutions · 04 · Salted hashes: many hash functions out of one
#
# Worked solutions to the exercises at the end of lesson
# [04_salted_hashes.ipynb](../04_salted_hashes.ipynb). Try them there first. Each answer is
# derived in code, never typed in, and `check` confirms it.

# %%
import numpy as np

from bloomedu import SaltedBloomFilter, murmurhash2, n_bit_hash_function
from bloomedu.workloads.clicks import uuid4_strings
from bloomedu.teaching.exercises import check, show
from bloomedu.i18n import say

SEED = 4
show("04")

# %% [markdown]
# ## 04.1 (compute)
#
# Append the salt to the text, take MurmurHash2 (the npm package's `murmurhash.v2`) of the
# whole string, and keep the remainder modulo $2^{10}$: the lowest 10 bits.

# %%
text, salt, hash_bits = "789", "nejakaJinaSul", 10
full_hash = murmurhash2(text + salt)
answer = full_hash % 2**hash_bits
assert answer == n_bit_hash_function(hash_bits, salt)(text)
say("murmurhash2({text!r}) = {full_hash} = {full_hash:032b}b", text=text + salt,
    full_hash=full_hash)
say("lowest {hash_bits} bits: {low_bits}b = {answer}", hash_bits=hash_bits,
    low_bits=format(full_hash % 2**hash_bits, f"0{hash_bits}b"), answer=answer)

# %%
check.salted_hash(answer, text='789', salt='nejakaJinaSul', hash_bits=10)

# %% [markdown]
# ## 04.2 (predict)
#
# With independent functions, the $kn = 150$ settings are 150 uniform throws at m = 256 bits. A
# given bit escapes one throw with probability $1 - 1/m$ and all of them with probability
# $(1 - 1/m)^{150}$, so the expected number of bits set is $m(1 - (1 - 1/m)^{kn})$: fewer than
# 150, because some throws land on a bit already set.

# %%
m, k, n = 256, 3, 50
answer = m * (1 - (1 - 1 / m) ** (k * n))
say("expected bits set {expected:.2f} of {m} ({settings} settings, {on_set:.1f} of them on a bit "
    "already set)", expected=answer, m=m, settings=k * n, on_set=k * n - answer)

# %%
check.expected_bits_set(answer, num_bits=256, num_hashes=3, n=50)

# %% [markdown]
# ## 04.3 (measure)
#
# The three functions salted "0", "1" and "2" set their bits; a set of positions counts each bit
# once. These are exactly the bits of the article's `BloomFilter(3, 8)`, which lesson 05 builds:
# the library's `SaltedBloomFilter` sets the same ones.

# %%
ids = uuid4_strings(50, np.random.default_rng(SEED))
functions = [n_bit_hash_function(8, str(i)) for i in range(3)]
positions = {function(key) for key in ids for function in functions}
answer = len(positions)
bloom = SaltedBloomFilter(num_hashes=3, hash_bits=8)
for key in ids:
    bloom.add(key)
assert bloom.bits.count() == answer
say("distinct bits set by {ids} IDs x {functions} functions: {distinct} of 256", ids=len(ids),
    functions=len(functions), distinct=answer)

# %%
check.measured_bits_set(answer, num_bits=256, num_hashes=3, n=50)
