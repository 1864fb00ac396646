# ---
# jupyter:
#   bloomedu:
#     summary: 'Size a filter from n and p: m and k derived once, the bloomedu size
#       command, a million keys on the bulk path, and the first article''s day of clicks
#       answered.'
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
# # 08 · Sizing a filter: m and k from n and p
#
# Lesson 07 (*The false-positive rate*) derived the rate of a filter of m bits and k hash
# functions holding n keys. A service asks the question the other way round, as Guava's
# `BloomFilter.create` does in the second article: "I will store about n items and accept a rate
# p: how many bits, how many hash functions?" This lesson answers it once, for every later
# lesson, and then answers the question lesson 01 left open: a whole day of clicks. (That
# article's walkthrough of three keys in 32 bits came early, in lesson 06.)

# %% [markdown]
# ## Objectives
#
# - You will be able to derive the bits $m = -n \ln p / (\ln 2)^2$ and the hash functions
#   $k = \log_2(1/p)$ a filter needs for n items at rate p, and size one with
#   `BloomFilter.from_capacity` or `bloomedu size`.
# - You will be able to say what each factor of ten on p costs in bits and in hash functions.
# - You will be able to measure a sized filter's rate on a million keys, and judge what a
#   measurement's distance from the target says about the filter.
# - You will be able to work out how many of a day's clicks a filter sized for the day drops,
#   and compare the designs of lessons 02 to 05 on the first article's day.
#
# **Prerequisites:** lessons 01 (*Remembering every click ID*) and 07 (*The false-positive
# rate*).
#
# **Time:** about 60 minutes (teaching 40 min, exercises 20 min).

# %%
# %matplotlib inline
import math

import matplotlib.pyplot as plt
import numpy as np

from bloomedu import BloomFilter, deduplicate
from bloomedu.cli import main as bloomedu_command
from bloomedu.core.theory import (false_positive_rate, measured_rate_std, num_bits_for,
                                  optimal_num_hashes)
from bloomedu.i18n import phrase, say
from bloomedu.teaching.clickday import IDS_PER_DAY, dropped_messages, expected_drops
from bloomedu.teaching.exercises import check
from bloomedu.teaching.experiments import double_hash_positions
from bloomedu.teaching.plots import FIGSIZE, decorate, show
from bloomedu.teaching.predict import predict
from bloomedu.workloads.clicks import uuid4_strings

SEED = 5  # fixed, so every run draws the same keys
MIB = 2**20

# %% [markdown]
# ## From two wishes to m and k
#
# Lesson 07 found that for a given number of bits per key $m/n$ the rate is lowest at
# $k = (m/n) \ln 2$, with half the bits set, and that the rate there is
# $p = 2^{-k} = e^{-(m/n)(\ln 2)^2}$. Solve that last equation for m, and the first for k:
#
# $$m = -\frac{n \ln p}{(\ln 2)^2}, \qquad k = \frac{m}{n} \ln 2 = \log_2 \frac{1}{p}.$$
#
# The bits grow with n and with $\log(1/p)$, and do not depend on how long the items are. A
# filter has whole bits and whole hash functions, so m is rounded up, and k becomes whichever
# whole number next to $(m/n) \ln 2$ gives the lower rate; that is all
# `BloomFilter.from_capacity(n, p)` does. The second article's example asks for n = 1,000,000
# URLs at p = 0.001.

# %%
n, p = 1_000_000, 0.001
m = math.ceil(-n * math.log(p) / math.log(2) ** 2)
k = round(m / n * math.log(2))
say("n = {n:,} items, p = {p}", n=n, p=p)
say("m = {m:,} bits = {bits_per_item:.3f} bits per item", m=m, bits_per_item=m / n)
say("k = (m/n) ln 2 = {k_star:.3f} -> {k} hash functions", k_star=m / n * math.log(2), k=k)
bloom = BloomFilter.from_capacity(n, p)
assert (m, k) == (num_bits_for(n=n, p=p), optimal_num_hashes(num_bits=m, n=n))
assert (m, k) == (bloom.num_bits, bloom.num_hashes)
say("{filter!r}: {nbytes:,} bytes of bits = {mib:.3f} MiB = {mb:.3f} MB",
    filter=bloom, nbytes=bloom.nbytes, mib=bloom.nbytes / MIB, mb=bloom.nbytes / 1e6)

# %% [markdown]
# 1,797,200 bytes (the bits are stored in whole 64-bit words): 1.714 MiB, 1.797 MB,
# under 2 MB in either unit, as the second article's title promises. This is the course's one
# sizing of the million-URL filter: lessons 09 and 10 build it from real URLs and refer back here
# for its m = 14,377,588 and k = 10.
#
# ## What each factor of ten costs
#
# The article notes that the less we want to be wrong, the more space we pay. How much more:

# %%
say("ln 10 / (ln 2)^2 = {bits:.3f} bits per item per factor of 10",
    bits=math.log(10) / math.log(2) ** 2)
say("       p  bits/item    k  MiB for 1M items  x the p = 0.001 filter")
for target in [0.1, 0.01, 0.001, 0.0001, 0.00001]:
    bits = num_bits_for(n=n, p=target)
    print(f"{target:8.5f}  {bits / n:9.3f}  {optimal_num_hashes(num_bits=bits, n=n):3d}  {bits / 8 / MIB:16.3f}"
          f"  {bits / m:22.2f}")

# %% [markdown]
# Every factor of 10 on p costs the same $\ln 10 / (\ln 2)^2 = 4.79$ bits per item and three or
# four more hash functions ($\log_2 10 = 3.3$): the size grows with the number of digits of
# $1/p$, not with $1/p$ itself. The second article writes "0.001%" for its 1-in-1000 rate; that
# would be one in 100,000, the last row, a filter 1.67 times larger.
#
# ## `bloomedu size`
#
# The same sizing from the command line, for a service that is not written in Python:
# `bloomedu size --items 1000000 --fpp 0.001`. Run from the lesson through its `main`:

# %%
status = bloomedu_command(["size", "--items", "1000000", "--fpp", "0.001"])

# %% [markdown]
# Beside m and k it prints the memory (the bytes the filter stores: m bits in whole 64-bit
# words, what `f.nbytes` says), the rate the rounded m and k really give, and lesson 07's lower bound. With `--bits` instead of `--fpp` it rates a filter
# that already exists: the first article's `BloomFilter(3, 32)`, at its largest ($2^{32}$ bits),
# holding the day's 864,000,000 click IDs:

# %%
status = bloomedu_command(["size", "--items", "864000000", "--bits", str(2**32), "--hashes", "3"])

# %% [markdown]
# A rate of 9.3% by midnight: the section after next shows what that costs over the day.
#
# ## A million keys on the bulk path
#
# `add_many` and `contains_many` hash a whole batch of keys in numpy, so real sizes are cheap. A
# million random 64-bit keys go into a filter that `from_capacity` sizes for p = 1%, and a
# million other keys are queried.

# %%
rng = np.random.default_rng(SEED)
big_keys = rng.integers(0, 2**64, size=2_000_000, dtype=np.uint64)
ordered = np.sort(big_keys)
assert (ordered[1:] != ordered[:-1]).all()  # all distinct, so no query key was inserted
big_inserted, big_queries = big_keys[:1_000_000], big_keys[1_000_000:]
big = BloomFilter.from_capacity(expected_items=1_000_000, fpp=0.01)
big.add_many(big_inserted)
missing = int((~big.contains_many(big_inserted)).sum())
claimed = int(big.contains_many(big_queries).sum())
big_theory = false_positive_rate(num_bits=big.num_bits, num_hashes=big.num_hashes, n=1_000_000)
big_sd = measured_rate_std(num_bits=big.num_bits, num_hashes=big.num_hashes, n=1_000_000,
                           num_queries=1_000_000)
say("{filter!r}: {nbytes:,d} bytes, {missing} false negatives",
    filter=big, nbytes=big.nbytes, missing=missing)
z = (claimed / 1e6 - big_theory) / big_sd
say("measured p {measured:.5f}, (1-e^(-kn/m))^k {theory:.5f}, (meas-theory)/sd {z:+.2f}; "
    "a |z| that large comes once in {once_in:,.0f} measurements",
    measured=claimed / 1e6, theory=big_theory, z=z, once_in=1 / math.erfc(abs(z) / math.sqrt(2)))

# %% [markdown]
# 2.83 standard deviations is far out: about once in 200 measurements. Is the filter unlucky
# (more bits set than usual), or the queries? Its own fill, $(\text{bits set}/m)^k$, answers the
# first; another million fresh keys answer the second:

# %%
others = np.random.default_rng(SEED + 1).integers(0, 2**64, size=1_000_000, dtype=np.uint64)
assert not np.isin(others, big_inserted).any()
other_p = float(big.contains_many(others).mean())
say("this filter's (bits set / m)^k: {rate:.5f}", rate=big.current_false_positive_rate())
say("another million fresh keys: {measured:.5f}, (meas-theory)/sd {z:+.2f}",
    measured=other_p, z=(other_p - big_theory) / big_sd)

# %% [markdown]
# The filter's fill gives its rate exactly as the formula expects; a measurement is one draw
# of the queries' luck, and a fresh million lands elsewhere. Neither is a reason to doubt the
# filter: lesson 07 showed what a few standard deviations mean.
#
# ### When n outgrows the plan
#
# A filter is sized for an n, and a blacklist or a stream rarely stops there. The same filter,
# sized for a million keys at 1%, now receives a second million.

# %%
guess_double = predict("This filter was sized for 1,000,000 keys at p = 1%. Twice as many keys, "
                       "2,000,000, go into it: what false-positive rate does it reach?", None)

# %%
more = np.random.default_rng(SEED + 2).integers(0, 2**64, size=1_000_000, dtype=np.uint64)
assert not np.isin(more, others).any()
big.add_many(more)
doubled_p = float(big.contains_many(others).mean())  # others: fresh, never inserted
doubled_theory = false_positive_rate(num_bits=big.num_bits, num_hashes=big.num_hashes, n=2_000_000)
say("bits set: {fill:.3f} of m, against about half at n = 1,000,000",
    fill=big.bits_set() / big.num_bits)
say("n = 2,000,000: measured p {measured:.4f}, (1-e^(-kn/m))^k {theory:.4f}: "
    "{times:.1f} times the planned rate",
    measured=doubled_p, theory=doubled_theory, times=doubled_p / big_theory)
guess_double.reveal(doubled_p, label="Measured")

# %% [markdown]
# Twice the keys, about sixteen times the rate: with three quarters of its bits set instead of
# half, each of a key's k = 7 probes lands on a 1 more often, and the rate grows like the fill to
# the power k. A filter is sized for the largest n it will hold; lessons 15 and 16 build filters
# that forget or grow.
#
# ## Lesson 01's question, answered: a day of clicks
#
# Lesson 01 asked how to remember a day of clicks, 864,000,000 IDs, to drop the double clicks. A
# dict of the IDs was exact but needed about 100 GB; a set of 32-bit hashes (lesson 02) dropped
# 81 million genuine clicks over the day. Here is the finished filter on that day, two ways:
#
# - **the first article's own design**, k salted hashes over $2^{\text{hash bits}}$ bits. Its
#   hash is the 32-bit MurmurHash2, so m is at most $2^{32}$ bits, 512 MiB. With that m and
#   n = 864,000,000 the best k is $(m/n) \ln 2 = 3.45$, so k = 3, the article's own choice;
# - **a filter sized for the day** at p = 0.1%, by the formulas above.
#
# A dedup stage drops a genuine click when the filter, holding every ID before it, wrongly
# claims it. ID number i meets a filter of i IDs, so it is dropped with probability
# $(1 - e^{-ki/m})^k$, zero in the morning and highest at midnight. The day's losses are that
# rate summed over the day, which has a closed form (`bloomedu.teaching.clickday.expected_drops`).

# %%
guess_day = predict("How many genuine clicks does the filter sized for the day at p = 0.1% drop "
                    "over the day's 864,000,000?", None)

# %%
sized_bits = num_bits_for(n=IDS_PER_DAY, p=0.001)  # computed, not allocated: 1.55 GB
article, sized = phrase("article: 3 hashes, 2**32 bits"), phrase("sized for the day at 0.1%")
designs = {article: (2**32, 3),
           sized: (sized_bits, optimal_num_hashes(num_bits=sized_bits, n=IDS_PER_DAY))}
say("design                                  m bits   k     memory p at midnight "
    "genuine clicks dropped   share")
for name, (bits, k) in designs.items():
    lost = expected_drops(num_bits=bits, num_hashes=k, n=IDS_PER_DAY)
    say("{design:30} {m:15,d} {k:3d} {gib:6.2f} GiB {p:13.5f} {lost:22,.0f} {share:7.3%}",
        design=name, m=bits, k=k, gib=bits / 8 / 2**30,
        p=false_positive_rate(num_bits=bits, num_hashes=k, n=IDS_PER_DAY),
        lost=lost, share=lost / IDS_PER_DAY)
lost_02 = expected_drops(num_bits=2**32, num_hashes=1, n=IDS_PER_DAY)  # one hash, 2**32 values: lesson 02's set
say("lesson 02: set of 32-bit hashes {gib:26.2f} GiB {p:13.5f} {lost:22,.0f} {share:7.3%}",
    gib=4 * IDS_PER_DAY / 2**30, p=false_positive_rate(num_bits=2**32, num_hashes=1, n=IDS_PER_DAY),
    lost=lost_02, share=lost_02 / IDS_PER_DAY)
sized_k = designs[sized][1]
guess_day.reveal(round(expected_drops(num_bits=sized_bits, num_hashes=sized_k, n=IDS_PER_DAY)),
                 label="Expected")

# %% [markdown]
# About 105,000 clicks, 0.012% of the day: the filter reaches the 0.1% it was sized for only at
# midnight, and averages an eighth of that over the day. It uses 1.45 GiB. The article's design
# at its largest drops 24 million (2.8%), under a third of the set of hashes' 81 million, in a
# sixth of its packed size (0.50 GiB against 3.22): five bits
# per ID and three hash functions do better than a 32-bit hash per ID. But by midnight it wrongly
# claims 9.3% of new IDs, because $2^{32}$ bits is all a 32-bit hash can address.
#
# Those are expectations. To see them happen, the day is scaled down 4,096 times: 210,938 random
# click IDs, the article's design on $2^{32}/4096 = 2^{20}$ bits, and the sized filter on 1/4,096
# of its bits. Every design keeps its bits per ID, so every rate, and the share of clicks lost, is
# the same as on the full day. (Both designs take their positions from bloomedu's `BloomFilter`,
# which errs at the salted filter's rates: `deeper/06_small_filters`. Double clicks are left out:
# a copy sets no new bit.) `dropped_messages` finds the IDs a dedup stage would drop, all at once;
# on the first 3,000 it agrees with `deduplicate`:

# %%
SCALE = 4096
day_ids = uuid4_strings(round(IDS_PER_DAY / SCALE), np.random.default_rng(SEED))
scaled = {name: (bits // SCALE, k) for name, (bits, k) in designs.items()}
drops = {}
for name, (bits, k) in scaled.items():
    drops[name] = dropped_messages(double_hash_positions(day_ids, num_bits=bits, num_hashes=k), bits)
    kept = deduplicate([{"id": key} for key in day_ids[:3000]], BloomFilter(bits, k),
                       key=lambda message: message["id"])
    assert [m["id"] for m in kept] == [key for key, gone in zip(day_ids[:3000], drops[name]) if not gone]
say("{ids:,} IDs, 1/{scale:,} of the day", ids=len(day_ids), scale=SCALE)
say("design                            m bits   k  dropped  expected     sd      x 4,096")
for name, (bits, k) in scaled.items():
    expected = expected_drops(num_bits=bits, num_hashes=k, n=len(day_ids))
    lost = int(drops[name].sum())
    print(f"{name:30} {bits:9,d} {k:3d} {lost:8,d} {expected:9.1f} {expected ** 0.5:6.1f} "
          f"{lost * SCALE:12,d}")

# %% [markdown]
# The rate as the day goes by, measured in 16 slices of the scaled day (the share of its genuine
# clicks each design dropped in that slice) against $(1 - e^{-ki/m})^k$:

# %%
slices = np.array_split(np.arange(len(day_ids)), 16)
say("hours        article  sized for the day")
for number, part in enumerate(slices):
    print(f"{24 * number / 16:4.1f}-{24 * (number + 1) / 16:4.1f}  "
          + "  ".join(f"{float(drops[name][part].mean()):{width}.5f}"
                      for name, width in zip(scaled, [9, 17])))
fig, ax = plt.subplots(figsize=FIGSIZE)
hours = np.linspace(0, 24, 200)
for (name, (bits, k)), color, short in zip(scaled.items(), ["#f28e2b", "#1f4e79"],
                                          [phrase("article"), phrase("sized for the day")]):
    ax.plot(hours, [false_positive_rate(num_bits=bits, num_hashes=k, n=len(day_ids) * h / 24)
                    for h in hours],
            color=color, label=phrase("{design}: $(1 - e^{{-ki/m}})^k$", design=short))
    measured = [float(drops[name][part].mean()) for part in slices]
    middles = [24 * (number + 0.5) / 16 for number in range(16)]
    ax.plot([h for h, r in zip(middles, measured) if r > 0], [r for r in measured if r > 0],
            "o", color=color, label=phrase("{design}: measured (slices with a loss)", design=short))
decorate(ax, xlabel="hour of the day", ylabel="share of genuine clicks dropped", yscale="log",
         ylim=(1e-6, 0.3), xticks=range(0, 25, 4),
         title="A day of clicks: the rate grows as the filter fills",
         legend=dict(loc="lower right", fontsize=8))
show("The share of genuine clicks dropped against the hour of the day, on a log scale: the "
     "article's design climbs from nothing to about 9% by midnight and the sized filter to about "
     "0.1%, and the measured slices sit on both curves.")

# %% [markdown]
# The scaled stream shows the same. The article's design dropped 5,721 IDs where 5,848.7 were
# expected, 1.7 standard deviations low (for a count of rare, independent events the sd is the
# square root of the expected count); the sized filter dropped 25 against 25.7. Times 4,096 both
# land near the full day's figures, and the measured rate climbs with the curves through the day
# (the sized filter drops nothing at all before 13:30).

# %% [markdown]
# ## Recap
#
# - For n items at rate p: $m = -n \ln p / (\ln 2)^2$ bits, about $1.44 \log_2(1/p)$ per item,
#   and $k = \log_2(1/p)$ rounded to the better whole number: `BloomFilter.from_capacity(n, p)`
#   and `bloomedu size --items n --fpp p`.
# - Each factor of 10 on p costs 4.79 bits per item and about 3.3 hash functions; the length of
#   the items does not matter.
# - A measured rate a few standard deviations from its target is one draw of the queries; the
#   filter's fill says whether the filter itself is off.
# - A filter sized for n reaches p only when the n-th item goes in: a day of clicks through it
#   loses an eighth of p, 105,000 of 864,000,000, in 1.45 GiB.

# %% [markdown]
# ## Exercises
#
# Three exercises on this lesson: compute, predict, then measure. Replace `None` with your
# answer and run the cell: `check` tells you whether it is right and, when it is not, which slip
# it looks like. Worked solutions are in `solutions/08_sizing_a_filter_solutions.ipynb`; try
# first.

# %% [markdown]
# **08.1 (compute).** How many bits m does a filter sized for n = 50,000 items at p = 0.02 need?
#
# The first section has the formula; round up to a whole bit.

# %%
answer = None  # replace None with your answer
check.sized_num_bits(answer, n=50_000, p=0.02)

# %% [markdown]
# **08.2 (predict).** A filter sized for n = 1,000,000 at p = 0.01 reaches that rate only when
# its n-th key goes in. Deduplicating n distinct clicks with it, what share of them does it drop?
#
# Click number i meets a filter of i keys; add up its chances, as the day's section does.

# %%
answer = None  # replace None with your answer
check.day_share_dropped(answer, n=1_000_000, p=0.01)

# %% [markdown]
# **08.3 (measure).** Fill BloomFilter.from_capacity(200_000, 0.005) with 200,000 random keys and
# measure its false-positive rate on 1,000,000 keys never inserted.
#
# As in the section on the bulk path: distinct random 64-bit keys, `add_many` and
# `contains_many`.

# %%
answer = None  # replace None with your answer
check.measured_sized_fpp(answer, n=200_000, p=0.005, trials=1_000_000)

# %% [markdown]
# ## What comes next
#
# Part 1 ends here: the first article's filter, built step by step, sized, and run on its day.
# Part 2 follows the second article, *"Bloom Filter: come memorizzare 1 Milione di stringhe in
# meno di 2MB?"*: lesson 09 (*One million URLs*) builds the filter sized above from a million
# real URLs, and the lessons after it put it in front of a database and meet Guava and Bitcoin.
#
# *Where this lesson's code lives:* `bloomedu/core/theory.py` (`num_bits_for`,
# `optimal_num_hashes`), `bloomedu/core/filter.py` (`from_capacity`, the bulk path),
# `bloomedu/cli.py` (`bloomedu size`), `bloomedu/teaching/clickday.py` (the day of clicks); its
# tests: `tests/test_theory.py`, `tests/test_filter.py`, `tests/test_cli.py`,
# `tests/test_bulk.py`, `tests/test_clickday.py`. The README's table maps every article step to
# its module, lesson and test.
