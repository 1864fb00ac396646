# ---
# jupyter:
#   bloomedu:
#     summary: 'Many hash functions out of one by salting the input: the article''s
#       42 and 174 reproduced, and their independence checked.'
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
# # 04 · Salted hashes: many hash functions out of one
#
# Lesson 03 (*The bit vector*) ended with a bit vector whose false-positive rate only falls if
# the vector grows. Step 4 of the first article prepares the cure: several hash functions, each
# setting its own bit, all made from one MurmurHash2.

# %% [markdown]
# ## Objectives
#
# - You will be able to build the article's salted `hash_bits`-bit hash functions by hand and reproduce
#   its printed 42 and 174.
# - You will be able to make the same family with MurmurHash3 seeds instead of salts.
# - You will be able to check, on 65,536 keys, whether two differently salted functions behave as
#   independent ones, and say what a dependent pair would look like.
# - You will be able to say whether appending a salt to a key keeps every key and salt apart.
#
# **Prerequisites:** lesson 03 (*The bit vector*).
#
# **Time:** about 45 minutes (teaching 25 min, exercises 20 min).

# %%
# %matplotlib inline
from collections import Counter
from functools import partial

import matplotlib.pyplot as plt
import numpy as np

from bloomedu import murmur3_32, murmurhash2, n_bit_hash_function
from bloomedu.teaching.exercises import check
from bloomedu.teaching.plots import FIGSIZE, decorate, show
from bloomedu.teaching.predict import predict
from bloomedu.i18n import phrase, say

# %% [markdown]
# ## The article's 42 and 174
#
# The article glues a different **salt** to the end of the input before hashing, and keeps
# `hash_bits` bits of the result (the article calls this width n; here n stays the number of
# items). Its two functions, salted "nejakaSul" and "nejakaJinaSul", on the ID "123":

# %%
first = n_bit_hash_function(8, "nejakaSul")
second = n_bit_hash_function(8, "nejakaJinaSul")
say("first('123')  = {value}", value=first("123"))
say("second('123') = {value}", value=second("123"))

# %% [markdown]
# Where they come from: the salt is appended to the text, the 32-bit hash is taken, and the
# remainder modulo $2^8$ keeps its lowest 8 bits.

# %%
for salt in ["nejakaSul", "nejakaJinaSul"]:
    full_hash = murmurhash2("123" + salt)
    say("murmurhash2('123{salt}') = {full_hash:10d} = {full_hash:032b}b -> % 256 = {index}",
        salt=salt, full_hash=full_hash, index=full_hash % 256)

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
say("hand-built and library functions agree on {n} keys x 4 (hash_bits, salt) pairs", n=len(sample))

# %% [markdown]
# The article's Bloom filter (lesson 05) needs k functions, so it uses the salts "0", "1", ...,
# "k-1". Five of them, on the article's three message IDs:

# %%
functions = [n_bit_hash_function(8, str(i)) for i in range(5)]
say("salt   '123'  '456'  '789'")
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
say("seed   '123'  '456'  '789'")
for i, function in enumerate(seeded):
    print(f"{i:4d}  " + "  ".join(f"{function(key):5d}" for key in ["123", "456", "789"]))
assert seeded[2]("123") == murmur3_32("123", seed=2) % 256

# %% [markdown]
# ## Do two salted functions agree more often than chance?
#
# A Bloom filter's arithmetic assumes that knowing $h_a(x)$ tells you nothing about $h_b(x)$.
# Salts "0" and "1" change only the last byte of the input, and the article's click IDs are
# short numbers, so this is worth measuring rather than trusting. A plain check: keep 4 bits of
# each function, 16 possible values, and count the keys on which the two functions give the same
# value. The keys are the 65,536 IDs "0" … "65535".

# %%
guess_agree = predict("On what share of the 65,536 IDs do the 4-bit values of salts '0' and '1' "
                      "agree?", None)

# %% [markdown]
# Independent functions would agree on one key in 16, $1/16 = 0.0625$, give or take one
# standard deviation of a share, $\sqrt{(1/16)(15/16)/q}$ for q keys (lesson 02 and
# `deeper/01_spread_and_sd` introduce the standard deviation and the z-score printed in the
# last column). Three pairs are measured; the fourth is a control that must fail, the "0"
# function paired with itself.

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
keys = [str(i) for i in range(65_536)]
low_bits = {name: np.array([f(key) % 16 for key in keys]) for name, f in families.items()}
sd = ((1 / 16) * (15 / 16) / len(keys)) ** 0.5
say("{n:,} keys; independent functions agree on 1/16 = {share:.4f} of them, sd {sd:.5f}",
    n=len(keys), share=1 / 16, sd=sd)
say("pair                                        agree  (agree - 1/16)/sd")
agreement = {}
for a, b in pairs:
    agreement[a, b] = float(np.mean(low_bits[a] == low_bits[b]))
    pair = phrase("{a} vs {b}", a=a, b=b)
    print(f"{pair:40s}  {agreement[a, b]:7.4f}  {(agreement[a, b] - 1 / 16) / sd:+17.2f}")
guess_agree.reveal(round(agreement["salt '0'", "salt '1'"], 4))

# %% [markdown]
# The salted pairs agree within about a standard deviation of 1/16. The seeded pair is 2.7
# standard deviations below, a distance chance gives about once in 150 measurements (`deeper/04_chi_square` computes
# these odds: 1 in 144 beyond 2.7): uncommon
# enough that `deeper/04_chi_square` follows it on millions of keys, and finds that on short IDs
# like these, seeds 0 and 1 really do agree about 1% less often than independent functions, a
# dependence far too small for a Bloom filter to notice. The control agrees on every key, about
# a thousand standard deviations out.
#
# The same, drawn: each cell is one pair of 4-bit values, its colour the number of keys that
# land there. Independent functions fill all 256 cells evenly, about 256 keys each; the control fills
# only the diagonal.

# %%
fig, axes = plt.subplots(1, 2, figsize=FIGSIZE, layout="constrained")
for ax, (a, b) in zip(axes, [("salt '0'", "salt '1'"), ("salt '0'", "salt '0'")]):
    counts = np.bincount(low_bits[a] * 16 + low_bits[b], minlength=256).reshape(16, 16)
    image = ax.imshow(counts, cmap="viridis", vmin=0, vmax=2 * len(keys) / 256)
    decorate(ax, title=phrase("{a} vs {b}", a=a, b=b), xlabel="h_b(x) mod 16",
             xticks=[0, 5, 10, 15], yticks=[0, 5, 10, 15])
decorate(axes[0], ylabel="h_a(x) mod 16")
colorbar = fig.colorbar(image, ax=axes, shrink=0.8)
decorate(colorbar.ax, ylabel="keys per cell (max 2x expected)")
show("Two 16 by 16 heat maps of 4-bit value pairs over 65,536 IDs: for salt '0' against salt "
     "'1' all 256 cells have about the same colour, near 256 keys each; for salt '0' against "
     "itself only the diagonal is lit and every other cell is empty.")

# %% [markdown]
# Measured this way, differently salted (or seeded) functions are as good as independent ones
# for a Bloom filter: the property the filter of lesson 05 rests on. *Going deeper:* `deeper/04_chi_square`
# turns the picture into a test (the chi-square statistic of the 256 cells), adds the correlation
# of the full 32-bit outputs, and follows two numbers that land near three standard deviations
# until they are explained.

# %% [markdown]
# ## Eleven salts
#
# One more question, which no count of agreements can answer. A filter with 11 hash functions
# uses salts "0" to "10": for every ID it hashes 11 texts, the ID with each salt appended. For
# the 1,000 IDs "0" to "999" that makes 11,000 (ID, salt) pairs.

# %%
guess_clash = predict("Of those 11,000 (ID, salt) pairs, how many hash exactly the same text as "
                      "some other pair?", None)

# %%
texts = Counter(key + salt for key in map(str, range(1_000)) for salt in map(str, range(11)))
shared = sum(count for count in texts.values() if count > 1)
say("pairs {pairs:,}, different texts {texts:,}, pairs sharing their text {shared}",
    pairs=sum(texts.values()), texts=len(texts), shared=shared)
clash = [n_bit_hash_function(32, "10")("1"), n_bit_hash_function(32, "0")("11")]
say("key '1' + salt '10' -> {hash}", hash=clash[0])
say("key '11' + salt '0' -> {hash}", hash=clash[1])
guess_clash.reveal(shared, label="Counted")

# %% [markdown]
# 198 pairs, two for each of 99 texts: every ID from "1" to "99" with salt "10" spells the same
# text as ten times that ID plus one with salt "0" ("1" + "10" and "11" + "0" are both "110",
# and both hash to 2896012438). Appending a salt only separates the functions while no key and
# salt can run into each other. In the article's filter this stays harmless (the two calls
# belong to different positions of different keys), and a seed avoids the question entirely.

# %% [markdown]
# ## Recap
#
# - The article's hash function i is `murmurhash2(key + salt_i) % 2**hash_bits`: the salt makes a
#   new function out of the same hash. A MurmurHash3 seed does the same without building a string.
# - Independent functions of b bits agree on one key in $2^b$; salted and seeded pairs come
#   within three standard deviations of that on 65,536 keys, and a function paired with itself
#   misses by about a thousand.
# - Appending salts lets a key and a salt run into each other ("1" + "10" = "11" + "0"); seeds
#   cannot.

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
# We now have as many independent-looking hash functions as we like. Lesson 05 (*The Bloom
# filter*) puts k of them over one vector of m bits, $m = 2^8$ for 8-bit hashes: the article's `BloomFilter(3, 8)`, each
# property in the article's list shown by a cell that runs.
#
# *Where this lesson's code lives:* `bloomedu/core/hashing.py` (`murmurhash2`, `n_bit_hash_function`);
# its tests: `tests/test_hashing.py`. The README's table maps every article step to its module,
# lesson and test.
