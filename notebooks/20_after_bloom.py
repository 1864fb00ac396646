# ---
# jupyter:
#   bloomedu:
#     summary: The lower bound on bits a key, derived; cuckoo, xor and binary fuse filters
#       measured against it and Bloom on a million keys; which filter for which workload.
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
# # 20 · After Bloom: cuckoo, xor and binary fuse filters against the lower bound
#
# Lesson 19 (`19_blocked_filters.ipynb`) spent bits to save cache misses. This lesson asks
# how few bits a key *any* filter can spend, and measures three structures that come closer to
# that floor than Bloom's.

# %% [markdown]
# ## Objectives
#
# - You will be able to derive the lower bound, $\log_2(1/p)$ bits a key, and measure how far
#   Bloom, blocked, cuckoo, xor and binary fuse filters are above it.
# - You will be able to compute a cuckoo filter's rate from its fingerprint and buckets, and say
#   what it does when full and when a key never added is deleted.
# - You will be able to explain how xor and binary fuse filters are built once from a key set.
# - You will be able to choose a filter for a workload.
#
# **Prerequisites:** lessons 07 (The false-positive rate: derived, then measured), 08 (Sizing a
# filter: m and k from n and p) and 19 (Blocked filters: one cache miss per key).
#
# **Time:** about 60 minutes (teaching 40, exercises 20).
#
# *Going deeper (optional):* `deeper/20_redisbloom_cuckoo.ipynb` matches RedisBloom's cuckoo
# filter (`CF.*`, lesson 17's server) answer for answer and byte for byte.

# %%
# %matplotlib inline
import math
import time

import numpy as np

from bloomedu import BinaryFuseFilter, BloomFilter, CuckooFilter, XorFilter
from bloomedu.i18n import phrase, say
from bloomedu.teaching.exercises import check
from bloomedu.teaching.plots import show
from bloomedu.teaching.predict import predict
from bloomedu.teaching.space_curves import cuckoo_beats_bloom_below, curves, draw_bits_per_key
from bloomedu.variants import BlockedBloomFilter
from bloomedu.variants.cuckoo import CuckooFilterFull
from bloomedu.variants.space import cuckoo_false_positive_rate, cuckoo_rate_bound, lower_bound_bits

SEED = 20

# %% [markdown]
# ## The fewest bits a key
#
# A filter of m bits holding n keys out of U possible keys is in one of $2^m$ states. A state
# answers "maybe" for its n keys and a fraction p of the others, at most $n + p(U - n)$ keys in
# all, and any n of those could be its keys: one state serves at most $\binom{n + p(U-n)}{n}$
# key sets. Each of the $\binom{U}{n}$ key sets needs a state, so
#
# $$2^m \binom{n + p(U-n)}{n} \ge \binom{U}{n} \quad\Longrightarrow\quad
# m \ge \log_2 \frac{\binom{U}{n}}{\binom{n + p(U-n)}{n}} \approx \log_2 \frac{U^n}{(pU)^n}
# = n \log_2 \frac{1}{p},$$
#
# for U far larger than n/p (each binomial is then near its top number to the power n, over n!).
# No filter spends fewer than $\log_2(1/p)$ bits a key (Carter, Floyd, Gill, Markowsky and
# Wegman, 1978). A Bloom filter spends $\log_2(1/p) / \ln 2 \approx 1.44 \log_2(1/p)$ (lesson 07),
# the blocked filter more (lesson 19). Both are measured here on a million random keys, queried
# with a million keys never added.

# %%
n = 1_000_000
rng = np.random.default_rng(SEED)
keys = rng.integers(0, 2 ** 63, n, dtype=np.uint64)              # the keys added
absent = rng.integers(2 ** 63, 2 ** 64 - 1, n, dtype=np.uint64)  # never added: another range
measured, filters, build_seconds = {}, {}, {}


def build(name, make):
    """Build a filter, timed (for the last section), and keep it under a label."""
    start = time.perf_counter()
    filters[name] = make()
    build_seconds[name] = time.perf_counter() - start
    return filters[name]


def filled(f):
    f.add_many(keys)
    return f


def measure(name, f, added, bits):
    """The rate on the absent keys, kept for the plot; no added key may be reported absent."""
    assert f.contains_many(added).all(), "a false negative"
    rate = float(f.contains_many(absent).mean())
    measured.setdefault(name, []).append((rate, bits))
    return rate


# name: what the plot knows the structure by; shown: the same in the reader's language
plain_filters = [("Bloom filter", phrase("Bloom filter"), BloomFilter, (4, 8, 12, 16)),
                 ("blocked filter", phrase("blocked filter"), BlockedBloomFilter, (4, 8, 12))]
width = max(len(shown) for _, shown, _, _ in plain_filters)  # the first column's
say("        filter  target p   k bits a key  measured p  log2(1/p)")
for name, shown, kind, exponents in plain_filters:
    for e in exponents:
        f = build(f"{shown}, p = 2^-{e}", lambda: filled(kind.from_capacity(n, 2.0 ** -e)))
        rate = measure(name, f, keys, f.num_bits / n)
        say("{filter:>{width}} {target:>9.6f} {k:>3} {bits_a_key:>10.3f} {rate:>11.6f} "
            "{bound:>10.3f}", filter=shown, width=width, target=2.0 ** -e, k=f.num_hashes,
            bits_a_key=f.num_bits / n, rate=rate, bound=lower_bound_bits(2.0 ** -e))
say("no false negative in either filter")

# %% [markdown]
# At $p = 2^{-8}$ the bound is 8 bits a key; the Bloom filter spends 11.54, the blocked filter
# 12.85. The structures below store instead a *fingerprint* of each key, f bits of its hash,
# which another key matches with probability about $2^{-f}$: the bound itself, plus what it costs
# to find the fingerprint again.

# %% [markdown]
# ## A fingerprint in one of two buckets: the cuckoo filter
#
# Fan, Andersen, Kaminsky and Mitzenmacher (2014) keep buckets of b slots. A key's hash gives
# its f-bit fingerprint (never 0: 0 marks an empty slot) and a bucket $i_1$; its second bucket
# $i_2$ comes from $i_1$ and the fingerprint alone, so a fingerprint can move to its other bucket
# without its key. An insert takes an empty slot in either bucket; a query compares the
# fingerprint with their 2b slots. At a load factor a (the fraction of slots in use), about 2ba
# hold a fingerprint, each equal to an absent key's with probability $1/(2^f - 1)$:
#
# $$p = 1 - \left(1 - \frac{1}{2^f - 1}\right)^{2ba} \approx \frac{2ba}{2^f} \le \frac{2b}{2^f},$$
#
# the last the paper's bound for a full table, at $f/a$ bits a key. `CuckooFilter` sizes its
# table for `capacity` keys at a load of 0.9 (b = 4).

# %%
cuckoo = build(phrase("cuckoo filter"),
               lambda: filled(CuckooFilter(n, fingerprint_bits=12, bucket_size=4)))
fingerprint, i1, i2 = cuckoo.buckets(int(keys[0]))
say("key {key}: fingerprint {fingerprint}, buckets {first:,} and {second:,} of {buckets:,}",
    key=keys[0], fingerprint=fingerprint, first=i1, second=i2, buckets=cuckoo.num_buckets)
load = cuckoo.load_factor
rate = measure("cuckoo filter", cuckoo, keys, cuckoo.num_bits / n)
formula = cuckoo_false_positive_rate(12, 4, load)
sigma = math.sqrt(formula * (1 - formula) / n)
say("load {load:.4f}: {packed:.3f} bits a key packed ({stored:.3f} in bloomedu's 16-bit words)",
    load=load, packed=cuckoo.num_bits / n, stored=8 * cuckoo.nbytes / n)
say("measured p = {rate:.6f}; formula at this load {formula:.6f} ({sigmas:+.1f} sigma); "
    "bound 2b/2^f = {bound:.6f}; no false negative",
    rate=rate, formula=formula, sigmas=(rate - formula) / sigma, bound=cuckoo_rate_bound(12, 4))

# %% [markdown]
# The rate follows the formula, below the bound. The plot below counts the packed 13.33 bits a
# key; bloomedu keeps 12-bit fingerprints in 16-bit words, 17.78 bits of real memory.

# %% [markdown]
# ## Filling it up
#
# When both buckets of a new key are full, the filter evicts a fingerprint into its other bucket,
# which may evict another, for at most 500 moves. The filter above holds its million keys at a
# load of 0.9; fresh keys now keep coming until one does not fit.

# %%
guess_load = predict("At what load factor (the fraction of slots in use) does the first insert "
                     "into this cuckoo filter fail?", None)

# %%
more = rng.integers(0, 2 ** 63, 100_000, dtype=np.uint64)
taken = cuckoo.add_until_full(more)
full_load = cuckoo.load_factor
say("{taken:,} more keys fit; the next did not, at load {load:.4f}", taken=taken, load=full_load)
before = cuckoo.to_bytes()
try:
    cuckoo.add(int(more[taken]))
except CuckooFilterFull as error:
    print(f"{type(error).__name__}: {error}")
assert cuckoo.to_bytes() == before  # every move undone: the filter is as it was, byte for byte
in_cuckoo = np.concatenate([keys, more[:taken]])
rate = measure("cuckoo filter", cuckoo, in_cuckoo, cuckoo.num_bits / in_cuckoo.size)
say("at that load: measured p = {rate:.6f}, formula {formula:.6f}, {packed:.3f} bits a key packed",
    rate=rate, formula=cuckoo_false_positive_rate(12, 4, full_load),
    packed=cuckoo.num_bits / in_cuckoo.size)
guess_load.reveal(round(full_load, 4))

# %% [markdown]
# Not 100%: about 96%, as Fan et al. measured (about 95% at b = 4; 50%, 84% and 98% at b = 1, 2
# and 8): a key may live in only 2b slots, and some group of buckets would need more keys than
# it has slots. Hence the usual b = 4, and `CuckooFilter`'s design load of 0.9. A full filter
# refuses the key, unchanged; a Bloom filter takes every key and only gets worse.

# %% [markdown]
# ## Deleting a key that was never added
#
# `delete(key)` removes one copy of the key's fingerprint from its two buckets, if it finds one.
# A careless caller deletes keys it never added.

# %%
guess_lost = predict("Delete 100,000 keys never added from this full filter: will any of the keys "
                     "that were added now be reported absent?", None, choices=("yes", "no"))

# %%
deleted = sum(cuckoo.delete(int(key)) for key in absent[:100_000])
lost = int(np.count_nonzero(~cuckoo.contains_many(in_cuckoo)))
expected = 100_000 * cuckoo_false_positive_rate(12, 4, full_load)
say("{deleted} of the 100,000 deletes found a fingerprint to remove; {lost} added keys are now "
    "reported absent ({expected:.1f} expected: 100,000 times the rate)",
    deleted=deleted, lost=lost, expected=expected)
guess_lost.reveal("yes" if lost else "no")

# %% [markdown]
# Yes: `delete` cannot tell which key put a fingerprint there. A key never added whose
# fingerprint matches one in its two buckets, a false positive, removes another key's
# fingerprint, and that key is now reported absent: a false negative, as with lesson 16's
# counting filter. So the loss is 100,000 times the rate: 172 lost against 187.3 expected, about
# one standard deviation ($\sqrt{187} \approx 14$) below. Delete only keys you added; a key
# added twice needs two deletes.

# %% [markdown]
# RedisBloom's `CF.*` commands keep a cuckoo filter of their own, with one-byte fingerprints and
# buckets of 2: `deeper/20_redisbloom_cuckoo.ipynb` matches it byte for byte, and its deletes of
# IDs never added.

# %% [markdown]
# ## Static filters: xor and binary fuse
#
# A fixed key set (the keys of a file written once) can have a filter built once. A xor filter
# (Graf and Lemire, 2020) is a table T of about 1.23 n f-bit slots in three blocks; each key
# hashes to a slot $h_j(x)$ in each block and to a fingerprint, and T is filled so that for every
# key x
#
# $$T[h_0(x)] \oplus T[h_1(x)] \oplus T[h_2(x)] = \mathrm{fp}(x).$$
#
# An absent key's slots XOR to a value unrelated to its fingerprint: $p = 2^{-f}$. T is filled
# by *peeling*: a slot only one key uses can be set last, to whatever that key needs. So take such
# keys off one by one, each freeing its other slots; when all are off (almost always, with 1.23 n
# slots; else a new hash seed is tried), set their slots in reverse order. A binary fuse filter
# (2022) puts a key's slots in three neighbouring segments, which peel with about 1.125 n slots.

# %%
for name, shown, kind in [("xor filter", phrase("xor filter"), XorFilter),
                          ("binary fuse filter", phrase("binary fuse filter"), BinaryFuseFilter)]:
    f = build(shown, lambda: kind(keys, fingerprint_bits=8))
    rate = measure(name, f, keys, f.bits_per_key)
    sigma = math.sqrt(2 ** -8 * (1 - 2 ** -8) / n)
    say("{filter:>18}: {slots:,} slots, {bits_a_key:.3f} bits a key = {ratio:.4f} x 8; "
        "measured p = {rate:.6f} against 2^-8 = {target:.6f} ({sigmas:+.1f} sigma); "
        "no false negative",
        filter=shown, slots=f.num_slots, bits_a_key=f.bits_per_key, ratio=f.bits_per_key / 8,
        rate=rate, target=2 ** -8, sigmas=(rate - 2 ** -8) / sigma)
say("binary fuse segments: {segments} of {length:,} slots",
    segments=f.segment_count + 2, length=f.segment_length)

# %% [markdown]
# As the formulas say: $1.23 \times 8 = 9.84$ bits a key (the 1,230,033 slots are $1.23\,n$
# plus 32 spare, rounded up to three equal blocks), and just above $1.125 \times 8 = 9$ (whole
# segments), both at $2^{-8}$. Neither takes a key once built.

# %% [markdown]
# ## Every structure on one plot
#
# Each structure's formula as a curve (`bloomedu.teaching.space_curves`), the points measured
# above on top; the cuckoo curve for b = 4 at a load of 0.9.

# %%
guess_cross = predict("Below which rate p does a cuckoo filter (b = 4, load 0.9) spend fewer bits "
                      "a key than a Bloom filter?", None)

# %%
crossing = cuckoo_beats_bloom_below(4, 0.9)
draw_bits_per_key(curves(bucket_size=4, load=0.9), measured)
show(phrase("Bits a key against the false-positive rate, rates falling to the right on a log "
            "scale: the lower bound log2(1/p) lowest, binary fuse and xor just above it, Bloom at "
            "1.44 times the bound, blocked above Bloom, and the cuckoo line crossing Bloom's near "
            "p = {crossing:.4f}.", crossing=crossing))
say("The cuckoo filter (b = 4) beats the Bloom filter below p = {at_load_90:.5f} at load 0.9, "
    "below p = {at_load_95:.5f} at load 0.95",
    at_load_90=crossing, at_load_95=cuckoo_beats_bloom_below(4, 0.95))
say("Near p = 2^-8 a cuckoo filter needs f = 11: {bits_a_key:.2f} bits a key at load 0.9, "
    "for p = {rate:.5f}", bits_a_key=11 / 0.9, rate=cuckoo_false_positive_rate(11, 4, 0.9))
guess_cross.reveal(round(crossing, 5), label="Computed")

# %% [markdown]
# Below about 0.13%: each halving of p costs the cuckoo filter $1/a \approx 1.1$ bits and the
# Bloom filter 1.44, but the cuckoo filter starts $\log_2(2ba)/a \approx 3.2$ bits behind; at
# 0.95 full it wins below 0.42%. (The paper saves a bit more by sorting each bucket, not done
# here.) The static filters beat Bloom at every rate; the blocked filter pays for its single
# cache miss in bits, more at low rates, where k = 8 is far from the best k.

# %% [markdown]
# ## When each wins
#
# This machine's times (they vary, so the tests do not check them; `make bench`, workload W5,
# compares these filters with other libraries):

# %% tags=["nbval-ignore-output"]
width = 1 + max(map(len, filters))  # the first column's
say("                    filter  build s  query ns/key")
for label, f in filters.items():
    start = time.perf_counter()
    f.contains_many(absent)
    say("{filter:>{width}} {build_s:>8.2f} {query_ns:>13.0f}", filter=label, width=width,
        build_s=build_seconds[label], query_ns=(time.perf_counter() - start) / n * 1e9)

# %% [markdown]
# | | add later | delete | bits a key at $p \approx 2^{-8}$ | memory a query reads |
# | --- | --- | --- | --- | --- |
# | Bloom | yes, never refused | no | 11.54 | up to k cache lines |
# | blocked | yes, never refused | no | 12.85 | one cache line |
# | cuckoo | until about 96% full | only keys added | 12.22 (f = 11) | two buckets: two lines |
# | xor | no: rebuild | no | 9.84 | three lines far apart |
# | binary fuse | no: rebuild | no | 9.04 | three lines in neighbouring segments |
#
# Keys that only arrive, and speed: the blocked filter. Keys that come and go: the cuckoo
# filter, below its failure load, deleting only keys added. A fixed key set: the binary fuse
# filter, rebuilt when the set changes. The Bloom filter stays the simplest: it never refuses a
# key, two merge with OR (lesson 11), and it degrades gracefully when overfilled.

# %% [markdown]
# ## Recap
#
# - No filter spends fewer than $\log_2(1/p)$ bits a key; a Bloom filter spends 1.44 times that.
# - A cuckoo filter keeps an f-bit fingerprint in one of two buckets of b slots:
#   $p \approx 2ba/2^f$ at $f/a$ bits a key. Near 96% full (b = 4) an insert fails, changing
#   nothing; deleting a key never added loses another.
# - Xor and binary fuse filters, built once by peeling: $p = 2^{-f}$ at 1.23 f and 1.125 f bits.

# %% [markdown]
# ## Exercises
#
# Replace `None` with your answer and run the cell: `check` says whether it is right, or which
# slip it looks like. Worked solutions: `solutions/20_after_bloom_solutions.ipynb`.

# %% [markdown]
# **20.1 (compute).** What is the fewest whole number of fingerprint bits f that keeps a cuckoo
# filter with buckets of b = 4 under p = 0.001 even when every slot is full (the bound $2b/2^f$)?

# %%
answer = None  # replace None with your answer
check.cuckoo_fingerprint_bits(answer, fpp=0.001, bucket_size=4)

# %% [markdown]
# **20.2 (predict).** A CuckooFilter with 12-bit fingerprints and buckets of 4 holds its keys at a
# load of 0.9. You delete 50,000 keys that were never added. How many of the keys that were added
# do you expect to lose?

# %%
answer = None  # replace None with your answer
check.keys_lost_to_deletes(answer, deletes=50_000, fingerprint_bits=12, bucket_size=4, load=0.9)

# %% [markdown]
# **20.3 (measure).** Build XorFilter(keys, 8) from 100,000 random keys and measure its
# false-positive rate on 100,000 keys never added.

# %%
answer = None  # replace None with your answer
check.measured_xor_fpp(answer, n=100_000, trials=100_000, fingerprint_bits=8)

# %% [markdown]
# ## What comes next
#
# Lesson 21 (Bloom filters inside the engines) opens two engines that hold Bloom filters: Spark
# and PostgreSQL. Further on: *ribbon filters* (Dillinger and Walzer, 2021),
# static filters that RocksDB's `NewRibbonFilterPolicy` documentation says save about 30% of a
# Bloom filter's memory.
#
# *Where this lesson's code lives:* `bloomedu/variants/cuckoo.py`, `bloomedu/variants/xor.py`,
# `bloomedu/variants/binary_fuse.py`, `bloomedu/variants/peeling.py`, `bloomedu/variants/space.py`,
# `bloomedu/teaching/space_curves.py` (and, for the deeper notebook,
# `bloomedu/compat/redisbloom_cuckoo.py`); the README's table names their tests.
