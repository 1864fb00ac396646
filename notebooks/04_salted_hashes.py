# ---
# jupyter:
#   bloomedu:
#     summary: 'Many hash functions out of one by salting the input: the article''s
#       42 and 174 reproduced, and their independence measured.'
#   jupytext:
#     cell_metadata_filter: -slideshow
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
# # 04 · Salted hashes: many hash functions out of one
#
# Lesson `03_bit_vector.ipynb` ended with a bit vector whose false-positive rate only falls if
# the vector grows. Step 4 of the article *"Filtro di Bloom: un elemento appartiene
# all'insieme?"* prepares the cure: instead of one hash function, several, each setting its own
# bit. It gets them from a single MurmurHash2 by gluing a different **salt** to the end of the
# input before hashing, and keeps n bits of the result (the article's n is the hash width,
# `hash_bits` here; n stays the number of items).
#
# This lesson reproduces the article's two printed numbers, builds the same family with
# MurmurHash3 seeds instead of salts, and then checks the claim the whole Bloom filter rests
# on: two differently salted functions behave like **independent** random functions.

# %%
# %matplotlib inline
from functools import partial

import matplotlib.pyplot as plt
import numpy as np

from bloomedu import murmur3_32, murmurhash2, n_bit_hash_function
from bloomedu.teaching.exercises import check
from bloomedu.teaching.plots import FIGSIZE

# %% [markdown]
# ## The article's 42 and 174

# %%
first = n_bit_hash_function(8, "nejakaSul")
second = n_bit_hash_function(8, "nejakaJinaSul")
print(f"first('123')  = {first('123')}")
print(f"second('123') = {second('123')}")

# %% [markdown]
# Where they come from: the salt is appended to the text, the 32-bit hash is taken, and the
# remainder modulo 2**8 keeps its lowest 8 bits.

# %%
for salt in ["nejakaSul", "nejakaJinaSul"]:
    full_hash = murmurhash2("123" + salt)
    print(f"murmurhash2('123{salt}') = {full_hash:10d} = {full_hash:032b}b -> % 256 = {full_hash % 256}")

# %% [markdown]
# The whole construction is one line. Built by hand, it agrees with the library's
# `n_bit_hash_function` on every key we try:

# %%
def salted_by_hand(hash_bits, salt):
    return lambda text: murmurhash2(text + salt) % 2**hash_bits


sample = ["123", "456", "789", "città", ""] + [str(i) for i in range(1000)]
for hash_bits, salt in [(8, "nejakaSul"), (8, "nejakaJinaSul"), (12, "0"), (32, "7")]:
    by_hand, library = salted_by_hand(hash_bits, salt), n_bit_hash_function(hash_bits, salt)
    assert [by_hand(key) for key in sample] == [library(key) for key in sample]
print(f"hand-built and library functions agree on {len(sample)} keys x 4 (hash_bits, salt) pairs")

# %% [markdown]
# The article's Bloom filter (lesson 05) needs k functions, so it uses the salts "0", "1", ...,
# "k-1". Five of them, on the article's three message IDs:

# %%
functions = [n_bit_hash_function(8, str(i)) for i in range(5)]
print("salt   '123'  '456'  '789'")
for i, function in enumerate(functions):
    print(f"{i!s:>4}  " + "  ".join(f"{function(key):5d}" for key in ["123", "456", "789"]))

# %% [markdown]
# ## The same idea with seeds
#
# Salting changes the input; a **seed** changes the hash function's starting state instead,
# with no string to build. MurmurHash3 takes a 32-bit seed (`mmh3.hash(text, seed)`, here
# `bloomedu.murmur3_32`), so seed i gives function i. `n_bit_hash_function` accepts any
# hash, so an empty salt and a seeded hash make the seeded family:

# %%
seeded = [n_bit_hash_function(8, "", partial(murmur3_32, seed=i)) for i in range(5)]
print("seed   '123'  '456'  '789'")
for i, function in enumerate(seeded):
    print(f"{i:4d}  " + "  ".join(f"{function(key):5d}" for key in ["123", "456", "789"]))
assert seeded[2]("123") == murmur3_32("123", seed=2) % 256

# %% [markdown]
# ## Do differently salted functions behave independently?
#
# A Bloom filter's arithmetic assumes that knowing h_a(x) tells you nothing about h_b(x). Salts
# "0" and "1" change only the last byte of the input, and the click IDs in the article are
# short numbers, so this is worth measuring rather than trusting. The tool is the chi-square
# test; here it is in half a page.
#
# ### A primer: the chi-square test
#
# Throw N keys into C cells that should be equally likely. Each cell then expects E = N/C keys,
# and a real count O wanders around E by about √E (a count of many rare events spreads like
# that). The chi-square statistic adds up the squared misses, each in units of that spread:
#
# χ² = Σ (O − E)² / E.
#
# Each term is about 1 on average, so χ² comes out near C − 1, its **degrees of freedom** (one
# less than C, because the counts must add up to N: once C − 1 are known, the last is too). For
# many cells χ² is close to a normal curve with mean df and standard deviation √(2·df), so
# z = (χ² − df) / √(2·df) says how unusual a result is: an honest table gives |z| < 2 nineteen
# times in twenty. A dependence makes the counts lumpy, and χ² then lands far above df.
#
# A die rolled 6,000 times makes a small example: 6 cells, E = 1,000 each, df = 5, so an honest
# die gives χ² around 5 ± 3.2. A die that shows a six 20% of the time instead of 16.7%:

# %%
rng = np.random.default_rng(4)
for label, odds in [("fair die", [1 / 6] * 6), ("loaded die", [0.16] * 5 + [0.20])]:
    counts = np.bincount(rng.choice(6, size=6000, p=odds), minlength=6)
    chi2 = float(((counts - 1000) ** 2 / 1000).sum())
    print(f"{label:10}  counts {counts.tolist()}  chi-square {chi2:6.1f}  "
          f"z {(chi2 - 5) / 10 ** 0.5:+6.2f}")

# %% [markdown]
# The fair die lands within a standard deviation of 5; the loaded one, whose counts look only a
# little uneven by eye, is many standard deviations out.
#
# ### The test on salted hashes
#
# We hash the 65,536 IDs "0" … "65535" with several pairs of functions and ask three questions:
#
# 1. **Joint uniformity.** With 4-bit outputs there are 16 × 16 = 256 possible pairs
#    (h_a(x), h_b(x)); independent uniform functions fill each with 256 keys on average. This is
#    the chi-square test with C = 256 cells and 255 degrees of freedom: about 255 ± 23 if the
#    functions are independent.
# 2. **Agreement.** h_a(x) = h_b(x) should happen for 1 key in 16, the product of the two
#    marginal probabilities summed over the 16 values.
# 3. **Correlation** of the full 32-bit outputs: about 0 ± 1/√65536 = ±0.004.
#
# Each of the last two also gets a z-score: its distance from the expected value in standard
# deviations, as for χ².
#
# The last pair is a control that must fail: the "0" function paired with itself.
#
# **Predict:** for the control, h_a(x) = h_b(x) for every key, so only the 16 cells of the
# diagonal can fill. How many of the 256 cells stay empty, and where does its chi-square land:
# near 255, or far above it? And for an honest pair such as salts "0" and "1"?

# %%
families = {
    "salt '0'": lambda key: murmurhash2(key + "0"),
    "salt '1'": lambda key: murmurhash2(key + "1"),
    "salt 'nejakaSul'": lambda key: murmurhash2(key + "nejakaSul"),
    "salt 'nejakaJinaSul'": lambda key: murmurhash2(key + "nejakaJinaSul"),
    "seed 0": partial(murmur3_32, seed=0),
    "seed 1": partial(murmur3_32, seed=1),
}
pairs = [("salt '0'", "salt '1'"), ("salt 'nejakaSul'", "salt 'nejakaJinaSul'"),
         ("seed 0", "seed 1"), ("salt '0'", "salt '0'")]


def joint_counts(a, b, hash_bits=4):
    """Table of how many keys fall on each pair of hash_bits-bit values (16 x 16 for 4 bits)."""
    size = 2**hash_bits
    cells = ((a % size) * size + b % size).astype(np.intp)  # numpy 1.x will not count uint64
    return np.bincount(cells, minlength=size * size).reshape(size, size)


def independence(keys):
    """For each pair: joint table, chi-square, agreement rate and correlation, with z-scores."""
    full = {name: np.array([f(key) for key in keys], dtype=np.uint64) for name, f in families.items()}
    num_keys, expected_cell = len(keys), len(keys) / 256
    results = {}
    for a, b in pairs:
        counts = joint_counts(full[a], full[b])
        chi2 = float(((counts - expected_cell) ** 2 / expected_cell).sum())
        agree = float(np.trace(counts)) / num_keys
        corr = float(np.corrcoef(full[a].astype(float), full[b].astype(float))[0, 1])
        results[a, b] = dict(counts=counts, chi2=chi2, chi2_z=(chi2 - 255) / 510**0.5, agree=agree,
                             agree_z=(agree - 1 / 16) / (15 / 256 / num_keys) ** 0.5,
                             corr=corr, corr_z=corr * num_keys**0.5)
    return results


keys = [str(i) for i in range(65_536)]
results = independence(keys)
print(f"{len(keys)} keys, expected {len(keys) / 256:.0f} per cell, chi-square df 255 (sd {510**0.5:.1f})")
print(f"{'pair':40s} {'chi-square':>10s} {'z':>9s} {'agree':>7s} {'z':>7s} {'corr':>8s} {'z':>7s}")
for (a, b), r in results.items():
    print(f"{a + ' vs ' + b:40s} {r['chi2']:10.1f} {r['chi2_z']:+9.2f} {r['agree']:7.4f} "
          f"{r['agree_z']:+7.2f} {r['corr']:+8.4f} {r['corr_z']:+7.2f}")
for pair in [("salt '0'", "salt '1'"), ("salt '0'", "salt '0'")]:
    counts = results[pair]["counts"]
    print(f"{pair[0]} vs {pair[1]}: min cell {int(counts.min())}, max cell {int(counts.max())}, "
          f"cells at 0: {int((counts == 0).sum())} of 256, diagonal total {int(np.trace(counts))}")

# %% [markdown]
# **Check your prediction:** the control leaves 240 of the 256 cells empty and piles all 65,536
# keys on the diagonal; its chi-square is 983,207, more than forty thousand standard deviations
# above 255, and it fails the other two questions by hundreds. The three real pairs land within
# a standard deviation of 255 (267.8, 237.8 and 277.0). The picture: each cell is one pair of
# 4-bit values, its colour the number of keys that land there.

# %%
fig, axes = plt.subplots(1, 2, figsize=FIGSIZE, layout="constrained")
for ax, pair in zip(axes, [("salt '0'", "salt '1'"), ("salt '0'", "salt '0'")]):
    image = ax.imshow(results[pair]["counts"], cmap="viridis", vmin=0, vmax=2 * len(keys) / 256)
    ax.set(title=f"{pair[0]} vs {pair[1]}", xlabel="h_b(x) mod 16", xticks=[0, 5, 10, 15], yticks=[0, 5, 10, 15])
axes[0].set_ylabel("h_a(x) mod 16")
fig.colorbar(image, ax=axes, shrink=0.8, label="keys per cell (max 2x expected)")
plt.show()

# %% [markdown]
# Measured this way, differently salted (or seeded) functions are as good as independent ones:
# the property the Bloom filter of lesson 05 rests on.

# %% [markdown]
# One caveat the measurement cannot see, because it lies in how the salts are glued on.
#
# **Predict:** a filter with 11 hash functions uses salts "0" to "10". Key "1" with salt "10",
# and key "11" with salt "0": do the two calls give different hashes, as two salted functions
# should?

# %%
print(f"key '1' + salt '10' -> {n_bit_hash_function(32, '10')('1')}")
print(f"key '11' + salt '0' -> {n_bit_hash_function(32, '0')('11')}")

# %% [markdown]
# **Check your prediction:** the same hash, 2896012438, because both calls hash the same text
# "110". Appending a salt only separates the functions while no key and salt can run into each
# other. In the article's filter this stays harmless (the two calls belong to different
# positions of different keys), and a seed avoids the question entirely.

# %% [markdown]
# ## Going deeper: two z-scores near −3
#
# The first table also shows two numbers of the real pairs near −3 standard deviations (the
# correlation of salts "0" and "1", the agreement of seeds 0 and 1). That is unusual but not
# alarming among nine: a z beyond ±2.7 happens by chance about once in 140 numbers, and nine
# numbers give that chance 9 times over. A real dependence would come back on other keys, as the
# control's does on any keys at all. The next 65,536 IDs, "65536" … "131071":

# %%
fresh = independence([str(i) for i in range(65_536, 131_072)])
print(f"{'pair':40s} {'chi2 z':>7s} {'agree z':>8s} {'corr z':>7s}")
for (a, b), r in list(fresh.items())[:3]:
    print(f"{a + ' vs ' + b:40s} {r['chi2_z']:+7.2f} {r['agree_z']:+8.2f} {r['corr_z']:+7.2f}")

# %% [markdown]
# On fresh keys the two near-misses shrink back towards 0 and none of the nine numbers comes near
# 3 standard deviations (the largest is about 2, as one in nine often is): chance, not a flaw of
# the salting.

# %% [markdown]
# ## Exercises
#
# Three exercises on this lesson: compute, predict, then measure. Replace `None` with your
# answer and run the cell: `check` tells you whether it is right and, when it is not, which slip
# it looks like. Worked solutions are in `solutions/04_salted_hashes_solutions.ipynb`; try
# first.

# %% [markdown]
# **04.1 (compute).** What does the article's construction give for '789' with a 10-bit hash
# function salted with 'nejakaJinaSul'?
#
# `salted_by_hand` above is the construction; `n_bit_hash_function` is the library's.

# %%
answer = None  # replace None with your answer
check.salted_hash(answer, text='789', salt='nejakaJinaSul', hash_bits=10)

# %% [markdown]
# **04.2 (predict).** 3 hash functions of 8 bits, salted "0", "1" and "2", each set one bit of
# the same 256 bits for every key. If they behave as independent, how many bits do you expect to
# be set after 50 keys?
#
# If the functions are independent, the 3 × 50 bit settings behave like 150 darts thrown at 256
# bits, some landing on a bit that is already set.

# %%
answer = None  # replace None with your answer
check.expected_bits_set(answer, num_bits=256, num_hashes=3, n=50)

# %% [markdown]
# **04.3 (measure).** Set those bits for 50 random IDs (3 functions salted "0" to "2", 8 bits,
# one vector of 256 bits) and count the distinct bits set.
#
# `n_bit_hash_function(8, str(i))` for i = 0, 1, 2 are the three functions, and a Python set of
# positions counts each bit once. Draw the IDs with `uuid4_strings(50, rng)`.

# %%
answer = None  # replace None with your answer
check.measured_bits_set(answer, num_bits=256, num_hashes=3, n=50)

# %% [markdown]
# ## What comes next
#
# We now have as many independent-looking n-bit hash functions as we like. Lesson
# `05_bloom_filter.ipynb` puts k of them over one vector of 2**n bits: the article's
# `BloomFilter(3, 8)`, each property in the article's list shown by an executed cell, and
# bloomedu's general `BloomFilter`, which gets its k positions from one 128-bit hash.
#
# *Where this lesson's code lives:* `bloomedu/core/hashing.py` (`murmurhash2`, `n_bit_hash_function`);
# its tests: `tests/test_hashing.py`. The README's table maps every article step to its module,
# lesson and test.

