# ---
# jupyter:
#   bloomedu:
#     summary: The article's BloomFilter(numberOfHashFunctions, numberOfBits), each
#       property in its list shown by a cell that runs.
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
# # 05 · The Bloom filter: k salted hashes over one bit vector
#
# Lesson 03 (*The bit vector*) kept one bit per ID; lesson 04 (*Salted hashes*) made as many
# independent-looking hash functions as we like. This lesson combines them into the Bloom
# filter of step 5 of the article *"Filtro di Bloom: un elemento appartiene all'insieme?"*, and
# runs a cell for each property in the article's closing list.

# %% [markdown]
# ## Objectives
#
# - You will be able to build the article's `BloomFilter(3, 8)` from k salted hashes over one bit
#   vector, and check it against a copy written by hand.
# - You will be able to show by experiment that "absent" is always right and "present" may be
#   wrong, and say how full a filter is after n keys.
# - You will be able to predict how the false-positive rate moves with the number of hash
#   functions k and with the number of bits m.
# - You will be able to explain why a key cannot be removed by clearing its bits.
#
# **Prerequisites:** lessons 03 (*The bit vector*) and 04 (*Salted hashes*).
#
# **Time:** about 60 minutes (teaching 40 min, exercises 20 min).

# %%
# %matplotlib inline
import itertools
import time

import matplotlib.pyplot as plt
import numpy as np

from bloomedu import SaltedBloomFilter, click_stream, n_bit_hash_function
from bloomedu.i18n import phrase, say
from bloomedu.core.theory import LN2, false_positive_rate
from bloomedu.teaching.classroom import draw_key_bits, fill_curve, find_false_positive, plot_fill
from bloomedu.teaching.exercises import check
from bloomedu.teaching.plots import FIGSIZE, decorate, show
from bloomedu.teaching.predict import predict
from bloomedu.workloads.clicks import uuid4_strings

SEED = 5

# %% [markdown]
# ## The article's `BloomFilter(3, 8)`
#
# The article's class takes k, the number of hash functions, and the hash width: k salted
# functions (salts "0" … "k-1", lesson 04) share one vector of $m = 2^8 = 256$ bits. Adding a
# key sets its k bits; a key is reported present only if all k of its bits are set. The four
# messages of the article, one of them a double click:

# %%
messages = [{"id": "123"}, {"id": "456"}, {"id": "123"}, {"id": "789"}]
bloom = SaltedBloomFilter(num_hashes=3, hash_bits=8)
for message in messages:
    if message["id"] not in bloom:
        bloom.add(message["id"])
        print(message)
for key in ["123", "456", "789"]:
    say("{key}: bits {positions}", key=key, positions=bloom.bit_indices(key))
say("{filter!r}: {set_bits} of {m} bits set, {nbytes} bytes",
    filter=bloom, set_bits=bloom.bits.count(), m=bloom.num_bits, nbytes=bloom.nbytes)

# %% [markdown]
# The same class written out by hand, with a Python list standing in for the bits. It agrees
# with the library on every answer and every bit over a stream of 500 clicks:

# %%
class HandBloom:
    def __init__(self, num_hashes, hash_bits):
        self.bit_list = [False] * 2**hash_bits
        self.functions = [n_bit_hash_function(hash_bits, str(i)) for i in range(num_hashes)]

    def add(self, key):
        for function in self.functions:
            self.bit_list[function(key)] = True

    def __contains__(self, key):
        return all(self.bit_list[function(key)] for function in self.functions)


by_hand, library = HandBloom(3, 8), SaltedBloomFilter(3, 8)
answers = []
for click in click_stream(500, seed=SEED):
    answers.append((click.id in by_hand, click.id in library))
    by_hand.add(click.id)
    library.add(click.id)
assert all(a == b for a, b in answers)
assert library.bits.to_bools().tolist() == by_hand.bit_list
say("{answers} answers agree; {seen} clicks reported as seen before",
    answers=len(answers), seen=sum(a for a, _ in answers))

# %% [markdown]
# ## Property 1: "not present" is always right
#
# A key's bits are set when it is added and never cleared, so an inserted key always finds all
# of them set: no false negatives. Checked on all 5,000 IDs of two filters: a roomy one
# ($2^{14}$ bits) and, to make the point, one so overfull that every bit is set:

# %%
rng = np.random.default_rng(SEED)
inserted = uuid4_strings(5_000, rng)
for hash_bits in (14, 9):
    bloom = SaltedBloomFilter(3, hash_bits)
    for key in inserted:
        bloom.add(key)
    missing = sum(key not in bloom for key in inserted)
    say("SaltedBloomFilter(3, {hash_bits:2d}): {n} inserted, {missing} reported absent, "
        "bits set {fill:.4f}",
        hash_bits=hash_bits, n=len(inserted), missing=missing,
        fill=bloom.bits.count() / bloom.num_bits)

# %% [markdown]
# ## Property 2: "present" may be wrong
#
# A key never added can find its k bits already set by other keys. The article's small filter
# takes 30 click IDs; then `bloomedu.teaching.classroom.find_false_positive` draws fresh click
# IDs until one is wrongly reported present, and names the inserted keys that set each of its
# bits.

# %%
bloom = SaltedBloomFilter(3, 8)
ids = [click.id for click in click_stream(30, double_click_rate=0.0, seed=SEED)]
for key in ids:
    bloom.add(key)
say("after {n} IDs, {set_bits} of {m} bits are set",
    n=len(ids), set_bits=bloom.bits.count(), m=bloom.num_bits)

# %%
guess_tries = predict("How many fresh IDs will find_false_positive try before the filter claims "
                      "one?", None)

# %%
impostor = find_false_positive(bloom, ids, seed=SEED + 1)
print(impostor)
set_share = bloom.bits.count() / bloom.num_bits
say("chance for one fresh ID: ({set_bits}/256)^3 = {chance:.4f}, about 1 in {one_in:.0f}",
    set_bits=bloom.bits.count(), chance=set_share ** 3, one_in=1 / set_share ** 3)
guess_tries.reveal(impostor.tries, label="Tried")

# %% [markdown]
# Each fresh ID is claimed with probability $(79/256)^3$, about 1 in 34, so a few dozen tries
# is the right scale; this search was lucky and stopped at the 10th ID. The number of tries is
# random (any seed gives another), but its average is 34. The same, drawn: the filter's 256
# bits, 32 a row, set bits dark and the impostor's k bits in orange, each labelled with the
# inserted IDs that set it.

# %%
draw_key_bits(bloom, impostor.key, ids, width=32)
show("The article's 256-bit filter after 30 IDs, 32 bits a row: 79 set bits in dark "
     "scattered over the grid, and the impostor's three bits, 22, 86 and 148, in orange, each "
     "labelled with the inserted ID that had already set it.")

# %% [markdown]
# Every one of the impostor's bits was already taken, and that gets likelier as the filter
# fills. `fill_curve` inserts 200 fresh IDs into an empty `SaltedBloomFilter(3, 8)` and records
# the fraction of bits set as it goes. Each of the $kn$ settings misses a given bit with
# probability $1 - 1/m$, so the fraction set should follow $1 - e^{-kn/m}$; a key never inserted
# finds all k of its bits set with probability about that fraction to the power k (last column):

# %%
curve = fill_curve(SaltedBloomFilter(3, 8), uuid4_strings(200, np.random.default_rng(SEED)), points=8)
say("  n  bits set  1 - e^(-kn/m)  (bits set)^k")
for n_keys, measured, theory in zip(curve.n, curve.measured, curve.theory):
    print(f"{n_keys:3d}  {measured:8.4f}  {theory:13.4f}  {measured ** curve.num_hashes:12.4f}")
say("half the bits set, in theory, at n = (m/k) ln 2 = {n_half:.1f}",
    n_half=256 / curve.num_hashes * LN2)
plot_fill(curve, title="The article's BloomFilter(3, 8) filling up")
show("Share of the 256 bits set against n, from 0 to 200 IDs: the measured points follow the "
     "curve 1 - e^(-kn/m), rising steeply at first, passing one half near n = 59 and "
     "flattening towards 0.91 at n = 200.")

# %% [markdown]
# The measured fill follows the curve; half the bits are set after a few dozen IDs, and by 200
# IDs about three new keys in four would be reported present (the last column): a filter this small is only good for a few
# dozen IDs.

# %% [markdown]
# ## Property 3: more hash functions, more time, and p?
#
# The article says more hash functions lower the chance of a wrong answer and make the filter
# slower. The second half is plain: each extra function is one more MurmurHash2 of a longer
# string per add and per query. The first half deserves a check: with m and n fixed, every extra
# function is one more bit a false positive must find set, but it also sets more bits.
#
# The experiment: $m = 2^{14}$ bits, $n = 2{,}000$ random IDs inserted ($m/n = 8.2$ bits per
# ID), 5,000 other IDs queried, for k = 1, 2, 4, 6, 8 and 12. Every "present" answer is a false
# positive, since the queried IDs were never inserted.

# %%
guess_more = predict("Will k = 12 give more or fewer false positives than k = 6?", None,
                     choices=("more", "fewer"))

# %%
from bloomedu.core.theory import optimal_num_hashes  # only here: its name would hint at the answer

hash_bits, n, num_queries = 14, 2_000, 5_000
m = 2**hash_bits
rng = np.random.default_rng(SEED)
keys = uuid4_strings(n + num_queries, rng)
inserted, queries = keys[:n], keys[n:]
assert not set(inserted) & set(queries)
ks = [1, 2, 4, 6, 8, 12]


def false_positive_share(stage):
    return sum(key in stage for key in queries) / num_queries


salted_rows, timings = [], []
for k in ks:
    bloom = SaltedBloomFilter(k, hash_bits)
    start = time.perf_counter()
    for key in inserted:
        bloom.add(key)
    add_time = time.perf_counter() - start
    start = time.perf_counter()
    assert all(key in bloom for key in inserted[:500])
    query_time = (time.perf_counter() - start) / 500
    salted_rows.append((k, false_positive_share(bloom),
                        false_positive_rate(num_bits=m, num_hashes=k, n=n)))
    timings.append((k, add_time / n, query_time))

say("m = {m}, n = {n}, {queries} queries; the formula is lowest at k = {best_k} "
    "(m/n ln 2 = {k_star:.2f})",
    m=m, n=n, queries=num_queries, best_k=optimal_num_hashes(num_bits=m, n=n), k_star=m / n * LN2)
say(" k  measured p  (1-e^(-kn/m))^k  one sd  (meas-theory)/sd")
for k, measured, theory in salted_rows:
    sd = (theory * (1 - theory) / num_queries) ** 0.5
    print(f"{k:2d}  {measured:10.4f}  {theory:15.4f}  {sd:6.4f}  {(measured - theory) / sd:+16.2f}")
say("lowest measured: k = {k}", k=min(salted_rows, key=lambda row: row[1])[0])
rate = dict((k, measured) for k, measured, _ in salted_rows)
guess_more.reveal("more" if rate[12] > rate[6] else "fewer")

# %%
fig, (left, right) = plt.subplots(1, 2, figsize=FIGSIZE)
k_grid = list(range(1, ks[-1] + 1))
left.plot(k_grid, [false_positive_rate(num_bits=m, num_hashes=k, n=n) for k in k_grid],
          label=r"$(1 - e^{-kn/m})^k$")
left.plot(ks, [r[1] for r in salted_rows], "o", label="measured")
decorate(left, xlabel="k, hash functions", ylabel="false-positive rate p", yscale="log",
         xticks=k_grid[::2], title=phrase("m = 2**{hash_bits}, n = {n}", hash_bits=hash_bits, n=n))
right.plot(ks, [t[1] * 1e6 for t in timings], "o-", label="add")
right.plot(ks, [t[2] * 1e6 for t in timings], "s-", label="query (inserted key)")
decorate(right, xlabel="k, hash functions", ylabel="µs per key", xticks=k_grid[::2],
         title="cost grows with k")
show("Left: false-positive rate on a log axis against k from 1 to 12; the measured points lie "
     "on the curve (1 - e^(-kn/m))^k, which falls steeply to a flat bottom around k = 4 to 8 "
     "and climbs again to 0.043 at k = 12. Right: microseconds per add and per query, rising "
     "with every extra hash.")

# %% [markdown]
# (The right panel's microseconds depend on the machine; that each extra hash adds to them does
# not.) The formula is lowest at k = 6, and k = 12 is more than twice as bad (0.0427 against 0.0196):
# past the bottom, every extra hash sets more bits than its extra check rejects. The measured
# rates follow the formula, all within two standard deviations: they fall steeply from k = 1,
# flatten out around the bottom, and climb again towards k = 12. The lowest *measured* rate sits
# at k = 4, not 6, and that is noise, not a second opinion: near the bottom the formula's values
# for k = 4, 6 and 8 differ by at most 0.0032, less than two standard deviations of 5,000
# queries (0.0020 each). So the article's advice holds only up to a point; past it, more hash
# functions cost time *and* accuracy. Lesson 07 derives the formula and the best k in a few
# lines, and measures the bottom of this valley with 200 times as many queries.

# %% [markdown]
# ## Property 4: more bits, more space, fewer mistakes
#
# "Larger" hash functions (more output bits) mean a larger vector: each extra bit of hash
# doubles m and the memory. With k = 3 and the same n = 2,000 IDs and queries, for hash_bits
# from 10 to 17.

# %%
guess_doubling = predict("Going from hash_bits = 15 to 16 doubles m (and the memory). By what "
                         "factor does the false-positive rate fall?", None)

# %%
bits_rows = []
for hash_bits_here in range(10, 18):
    bloom = SaltedBloomFilter(3, hash_bits_here)
    for key in inserted:
        bloom.add(key)
    theory = false_positive_rate(num_bits=2**hash_bits_here, num_hashes=3, n=n)
    bits_rows.append((hash_bits_here, bloom.num_bits, bloom.nbytes, false_positive_share(bloom), theory))

say("hash_bits       m  nbytes  measured p  (1-e^(-kn/m))^k  theory: previous row / this")
for row, previous in zip(bits_rows, [None] + bits_rows):
    ratio = f"{previous[4] / row[4]:27.2f}" if previous else ""
    print(f"{row[0]:9d}  {row[1]:6d}  {row[2]:6d}  {row[3]:10.4f}  {row[4]:15.4f}  {ratio}")
(_, _, _, _, p15), (_, _, _, _, p16) = bits_rows[5], bits_rows[6]
guess_doubling.reveal(round(p15 / p16, 2), label="The formula's factor")

# %%
fig, ax = plt.subplots(figsize=FIGSIZE)
ax.plot([r[2] for r in bits_rows], [r[4] for r in bits_rows], label=r"$(1 - e^{-kn/m})^k$")
ax.plot([r[2] for r in bits_rows], [r[3] for r in bits_rows], "o",
        label=phrase("measured, {queries} queries", queries=num_queries))
decorate(ax, xscale="log", yscale="log", xlabel="nbytes = 2**hash_bits / 8",
         ylabel="false-positive rate p", title=phrase("k = 3, n = {n}: space buys accuracy", n=n))
show("False-positive rate against the filter's bytes, both on log axes, from 128 to 16,384 "
     "bytes: the measured points follow the curve down from nearly 1 to about 0.0001, and the "
     "curve steepens as the filter gets sparse, towards a fall of eight times per doubling.")

# %% [markdown]
# Each doubling of the memory divides p by a factor that approaches $2^k = 8$ as the vector gets
# sparse (last column: 7.00 from $2^{15}$ to $2^{16}$ bits, not the 2 that a doubling suggests).
# In a sparse filter the share of bits set is close to $kn/m$, so doubling m halves it, and p,
# that share to the power k, falls by $2^k$. (The measured rates agree with the formula, but 22
# and 3 false positives in 5,000 queries are too few to measure the factor itself.) Space is
# the cheap way to buy accuracy, up to the point where a hash of 32 bits caps m at $2^{32}$.

# %% [markdown]
# ## Property 5: nothing can be removed
#
# Why not clear a key's bits to remove it? Because other keys share those bits. In the article's
# filter with the 30 IDs of property 2, we look for a pair: clearing the bits of one inserted ID
# makes another inserted ID vanish, a false negative that property 1 promised could not happen.

# %%
bloom = SaltedBloomFilter(3, 8)
for key in ids:
    bloom.add(key)
original = bloom.bits.copy()


def remove_by_clearing(key):
    for index in bloom.bit_indices(key):
        bloom.bits.clear(index)


removed, victim = next((a, b) for a, b in itertools.permutations(ids, 2)
                       if set(bloom.bit_indices(a)) & set(bloom.bit_indices(b)))
shared = sorted(set(bloom.bit_indices(removed)) & set(bloom.bit_indices(victim)))
say("removed {key}: bits {positions}", key=removed, positions=bloom.bit_indices(removed))
say("victim  {key}: bits {positions}  shared {shared}",
    key=victim, positions=bloom.bit_indices(victim), shared=shared)
say("before clearing: victim in filter = {victim_in}", victim_in=victim in bloom)
remove_by_clearing(removed)
say("after clearing:  victim in filter = {victim_in}, removed in filter = {removed_in}",
    victim_in=victim in bloom, removed_in=removed in bloom)
lost = [key for key in ids if key not in bloom]
say("inserted IDs now reported absent: {lost} of {n}", lost=len(lost), n=len(ids))
bloom.bits = original

# %% [markdown]
# Two of the 30 now read as absent: the removed ID, as intended, and the victim, which was never
# removed. A bit records only that *some* key set it, not which or how many. Counting Bloom filters
# replace each bit by a small counter to allow removal, at several times the memory (lesson 16).

# %% [markdown]
# ## Recap
#
# - The article's filter is k salted hashes over one vector of $m = 2^{\text{hash bits}}$ bits:
#   add sets a key's k bits, a query asks whether all k are set.
# - "Absent" is always right: bits only go from 0 to 1. "Present" may be wrong, when other keys
#   set all of a new key's bits.
# - After n keys about $1 - e^{-kn/m}$ of the bits are set, and a key never added is claimed
#   with probability about $(1 - e^{-kn/m})^k$.
# - More bits always lower that rate; more hash functions lower it only up to a point, then
#   raise it, and every one costs time.
# - Clearing a key's bits erases other keys: a plain Bloom filter cannot delete.

# %% [markdown]
# ## Exercises
#
# Three exercises on this lesson: compute, predict, then measure. Replace `None` with your
# answer and run the cell: `check` tells you whether it is right and, when it is not, which slip
# it looks like. Worked solutions are in `solutions/05_bloom_filter_solutions.ipynb`; try first.

# %% [markdown]
# **05.1 (compute).** How many bytes of bits does the article's BloomFilter(3, 20) hold?
#
# Mind what the article's second argument counts; property 4's table lists `nbytes` for smaller
# filters.

# %%
answer = None  # replace None with your answer
check.article_filter_bytes(answer, num_hashes=3, hash_bits=20)

# %% [markdown]
# **05.2 (predict).** What false-positive rate do you expect from the article's BloomFilter(3,
# 8) after 20 IDs?
#
# Every measurement in this lesson followed one formula.

# %%
answer = None  # replace None with your answer
check.article_filter_fpp(answer, num_hashes=3, hash_bits=8, n=20)

# %% [markdown]
# **05.3 (measure).** Add 20 random IDs to SaltedBloomFilter(3, 8) and test 100,000 new IDs:
# what fraction does it claim to contain?
#
# As in property 3: draw 20 + 100,000 distinct IDs with `uuid4_strings`, insert the first 20 and
# query the rest, so that every "present" is a false positive.

# %%
answer = None  # replace None with your answer
check.measured_fpp(answer, num_bits=256, num_hashes=3, n=20, trials=100_000)

# %% [markdown]
# ## What comes next
#
# Lesson 06 (*Inside the filter*) opens the box: bloomedu's general `BloomFilter`, which takes
# any m and gets its k positions from one hash, the second article's walkthrough of three keys in
# 32 bits, and a toy that shows one key at a time.
#
# *Where this lesson's code lives:* `bloomedu/steps/salted.py` (`SaltedBloomFilter`),
# `bloomedu/teaching/classroom.py`; its tests: `tests/test_salted.py`, `tests/test_classroom.py`.
# The README's table maps every article step to its module, lesson and test.
