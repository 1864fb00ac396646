# ---
# jupyter:
#   bloomedu:
#     summary: Deduplicators that forget, delete and grow (rotating generations, age-partitioned,
#       stable, counting and scalable filters) measured on a day of clicks.
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
# # 15 · Forgetting old clicks: time windows, deletion and growth
#
# This lesson builds on lesson `01_seen_ids.ipynb` (the dict of processed IDs), lesson
# `05_bloom_filter.ipynb` (a Bloom filter cannot remove a key) and lesson
# `09_one_million_urls.ipynb` (sizing a filter from n and p). Article 1, *"Filtro di Bloom: un
# elemento appartiene all'insieme?"*, says of its dict of IDs: "we can add some expiry: always
# remove the messages older than an hour". A plain Bloom filter can do none of that: it cannot
# forget, delete or grow. This lesson measures the structures that can, on the article's stream
# of 10,000 messages a second.
#
# Symbols: m bits (or cells), k hash functions, n items, p false-positive rate; W is the window
# a deduplicator must remember.

# %%
# %matplotlib inline
import math

import matplotlib.pyplot as plt
import numpy as np

from bloomedu import (AgePartitionedBloomFilter, BloomFilter, CountingBloomFilter,
                      RotatingBloomFilter, ScalableBloomFilter, StableBloomFilter)
from bloomedu.core.theory import exact_false_positive_rate, num_bits_for
from bloomedu.steps.expiry import BYTES_PER_ENTRY, ExpiringIds, deduplicate_windowed
from bloomedu.teaching.exercises import check
from bloomedu.teaching.plots import FIGSIZE, decorate
from bloomedu.variants import theory as vt
from bloomedu.workloads.clicks import DOUBLE, FIRST, REPEAT, score_windowed, windowed_click_stream

SEED = 10

# %% [markdown]
# ## Why forget at all: a click that comes back
#
# The article's message says "user XYZ clicked ad 123". A double click sends it twice within a
# second or two: drop the copy. The same user clicking the same ad again hours later is a new,
# legitimate click: count it. So the deduplicator's key is the click (user and ad), and it must
# forget a key after some window W. Any W between 2 seconds (the latest double click) and 2 hours
# (the earliest repeat) is right for this stream; we take the article's hour.
#
# `windowed_click_stream` makes a day of such messages with the right answer for each:
# **first** (a key never seen), **double** (the same key again 0.05 to 2 s later: drop it) and
# **repeat** (a key last seen 2 to 6 hours before: keep it). A Python deduplicator cannot process
# 864 million messages in a lesson, so time is compressed: each message stands for 10,000 real
# ones, and an hour holds 3,600 of them. Every structure below is sized for the window in
# messages, so its rates are those of the full-size one (a rate depends on m/n, not on n).

# %%
day = windowed_click_stream(24, rate=10_000, time_scale=10_000, seed=SEED)
W = int(day.per_hour)  # one hour, in messages of this stream
kinds = {name: int((day.kinds == kind).sum()) for name, kind in
         [("first", FIRST), ("double", DOUBLE), ("repeat", REPEAT)]}
print(f"messages in the day {len(day):>8,d}   one hour = W = {W:,d} messages")
for name, count in kinds.items():
    print(f"  {name:<7} {count:>8,d}")

# %% [markdown]
# ## Four ways to forget, sized before we measure
#
# * **An exact dict with expiry** (`ExpiringIds`): the article's own suggestion. It holds every
#   key of the last hour: W entries of 36 bytes of ID and 8 of time, at the article's accounting.
# * **Rotating generations** (`RotatingBloomFilter`): G Bloom filters; keys go into the newest,
#   a query asks all G, and when the newest holds `capacity` keys the oldest is emptied. A key
#   survives at least G − 1 full generations, so capacity = W/(G − 1) keeps an hour. A query
#   errs if any of the G generations errs, so each gets p_gen = 1 − (1 − p)^(1/G) ≈ p/G.
# * **An age-partitioned filter** (`AgePartitionedBloomFilter`, Shtul, Baquero and Almeida
#   2020): k + l slices; each insert sets one bit in each of the k newest, every g inserts (a
#   generation) the oldest slice is cleared. A key is found while among the last l·g inserts,
#   so g = W/l. Each slice has m = ⌈kg/ln 2⌉ bits, and the rate is the chance of k consecutive
#   set bits.
# * **A stable filter** (`StableBloomFilter`, Deng and Rafiei 2006): m cells of d bits; each
#   insert decrements P random cells and sets its K cells to Max = 2^d − 1. No hard window: a
#   key fades. Deng and Rafiei's stable point gives P for a target rate; we give it the rotating
#   filter's memory.
#
# For the age-partitioned filter the paper's formula picks (k, l): the fewest bits per key of
# the window, k(k + l)/(l ln 2), among pairs whose rate is at most p = 0.1%:

# %%
P_TARGET = 0.001
pairs = [(k, l) for k in range(4, 21) for l in range(1, 121)
         if vt.apbf_false_positive_rate(k, l) <= P_TARGET]
best_k, best_l = min(pairs, key=lambda kl: kl[0] * (kl[0] + kl[1]) / (kl[1] * math.log(2)))
print(f"best (k, l) = ({best_k}, {best_l}): paper's rate {vt.apbf_false_positive_rate(best_k, best_l):.6f}, "
      f"{best_k * (best_k + best_l) / (best_l * math.log(2)):.1f} bits per key of the window")
GENERATIONS = 4


def make_schemes(window):
    """The four windowed deduplicators, each sized for ``window`` keys at p = 0.1%."""
    rotating = RotatingBloomFilter(capacity=window // (GENERATIONS - 1), fpp=P_TARGET,
                                   generations=GENERATIONS)
    cells = rotating.nbytes * 8 // 2  # 2-bit cells in the rotating filter's memory
    decrements = vt.stable_decrements_for(cells, 4, 3, P_TARGET)
    return {
        "exact dict, 1 h expiry": ExpiringIds(window=3600),
        "rotating, 4 generations": rotating,
        f"age-partitioned ({best_k}, {best_l})": AgePartitionedBloomFilter(best_k, best_l,
                                                                          window // best_l),
        "stable, d = 2": StableBloomFilter(cells, 4, 2, decrements, seed=SEED),
    }


# %% [markdown]
# **Predict:** scaled to the article's full hour (36,000,000 messages), which of the exact dict,
# the rotating and the age-partitioned filter uses the least memory (the stable filter is given
# the rotating one's memory), and how does each compare with the article's 31 GB for a day of IDs
# and with a plain filter sized for the whole day? Write down your guess, then run the cell.

# %%
HOUR = 10_000 * 3600
full_day = 10_000 * 86_400
rot_bits = GENERATIONS * num_bits_for(HOUR // (GENERATIONS - 1), vt.generation_fpp(P_TARGET, GENERATIONS))
apbf_bits = (best_k + best_l) * vt.apbf_slice_bits(best_k, HOUR // best_l)
sizing = [
    ("the article's day of IDs (36 bytes each)", 36 * full_day),
    ("plain Bloom filter for the day, p = 0.1%", num_bits_for(full_day, P_TARGET) / 8),
    ("exact dict, 1 h expiry (36 + 8 bytes a key)", HOUR * BYTES_PER_ENTRY),
    ("rotating, 4 generations of 20 min", rot_bits / 8),
    (f"age-partitioned ({best_k}, {best_l})", apbf_bits / 8),
    ("stable, d = 2, in the rotating filter's memory", rot_bits / 8),
]
title = "the article's one-hour window at p = 0.1%"
print(f"{title:<48} {'bytes':>16} {'GB':>8}")
for name, nbytes in sizing:
    print(f"{name:<48} {nbytes:>16,.0f} {nbytes / 1e9:8.3f}")

# %% [markdown]
# The rotating filter needs about 0.1 GB for the hour, the age-partitioned one a little more at
# this rate (it needs k = 15 rather than about 10, and carries k partly filled young slices: 26
# bits per key of the window against the rotating filter's 23; in exchange it forgets an l-th of
# the window, g inserts, at a time, where the rotating filter forgets a third), the exact dict
# 1.6 GB (and about three times that in Python, as lesson 01 measured), the plain filter for the
# day 1.55 GB, and the article's IDs 31 GB. The plain filter for the day also has a flaw the
# table does not show: it never forgets.
#
# ## A day of clicks through each scheme
#
# `deduplicate_windowed` drops a message exactly when the scheme, updated by every earlier
# message, reports it present, as a loop over one message at a time would. It gets there in
# batches of 512 messages through the bulk paths (`contains_many`, then `add_many` of the kept
# keys), redoing one by one only the few messages an earlier one of the same batch could change,
# and records the memory after each batch. We add
# a fifth, the plain filter sized for the whole day, to see what not forgetting costs.
#
# **Predict:** the plain filter for the day remembers every key. How many of the repeats (the
# legitimate clicks hours later) will it drop?

# %%
schemes = make_schemes(W)
schemes["plain filter for the day"] = BloomFilter.from_capacity(len(day), P_TARGET)
runs = {name: deduplicate_windowed(day, stage, batch=512) for name, stage in schemes.items()}
scores = {name: score_windowed(day, run.kept) for name, run in runs.items()}
print(f"{'scheme':<28} {'doubles caught':>15} {'firsts dropped':>15} {'repeats dropped':>16} "
      f"{'memory, bytes':>14}")
for name, s in scores.items():
    print(f"{name:<28} {s.doubles_dropped:>7,d} of {s.doubles:<5,d} {s.firsts_dropped:>15,d} "
          f"{s.repeats_dropped:>8,d} of {s.repeats:<5,d} {int(runs[name].nbytes[-1]):>14,d}")

# %% [markdown]
# Every scheme catches every double click. The plain filter drops every repeat: it cannot
# forget, so a user who comes back hours later is never counted again. The exact dict drops no
# genuine click at all, at over ten times the filters' memory. The three forgetting filters drop
# between sixty and ninety first clicks each (their false positives, near p = 0.1% of about
# 80,000) and at most a handful of repeats. The firsts they drop, as a rate beside p:

# %%
for name, s in scores.items():
    if name.startswith(("rotating", "age", "stable")):
        print(f"{name:<28} first clicks dropped {s.firsts_dropped / s.firsts:.5f} (p = {P_TARGET})")

# %% [markdown]
# The rotating filter sits below p because its newest generation is only partly full most of the
# time; the age-partitioned filter sits at the paper's rate, within the binomial spread of 85
# drops: with l = 74 half-full old slices, the paper's approximation for the 15 young ones (that
# they fill linearly, young slice i holding (i + 1)/k of a full slice's bits) hardly matters (with
# the exact fills its rate stays within about 1% of the paper's at every moment of a generation;
# at small l it does not, see `bloomedu/variants/age_partitioned.py`); the stable filter hovers at
# its stable point. Memory over the day, and the genuine clicks each dropped, side by side:

# %%
fig, (left, right) = plt.subplots(1, 2, figsize=FIGSIZE)
for name, run in runs.items():
    left.plot(run.times / 3600, run.nbytes / 1e3, label=name)
decorate(left, xlabel="simulated hour", ylabel="memory, kB", yscale="log",
         title="Memory over the day")
names = list(scores)
right.barh(names, [scores[n].firsts_dropped for n in names], label="first clicks dropped")
right.barh(names, [scores[n].repeats_dropped for n in names],
           left=[scores[n].firsts_dropped for n in names], label="repeats dropped")
decorate(right, xlabel="genuine clicks dropped", xscale="symlog", title="What each one loses")
plt.show()

# %%
print(f"{'hour':>4}  " + "  ".join(f"{n[:14]:>14}" for n in runs))
for hour in (1, 2, 6, 12, 24):
    row = [int(run.nbytes[np.searchsorted(run.times, hour * 3600) - 1]) for run in runs.values()]
    print(f"{hour:>4}  " + "  ".join(f"{b:>14,d}" for b in row))

# %% [markdown]
# The dict grows for an hour, then holds steady at about W keys (the hour-1 row is read at the
# last batch of 512 messages before the hour ends, up to 8 simulated minutes early, so it is
# still below); the filters never change size.
#
# ## The stable filter forgets gradually: false negatives against the gap
#
# A stable filter's key fades: each of its K cells reaches 0 after Max decrements with no
# setting in between. From Deng and Rafiei's model, a cell's decrements since its setting form
# a small Markov chain, so the chance that a duplicate arriving δ inserts later is missed is
# 1 − (1 − z_δ)^K, where z_δ is the chance that a cell set δ inserts ago is now 0
# (`stable_false_negative_rate`). Measured: keys inserted in blocks, each probed
# after a gap:

# %%
sbf_cells = schemes["stable, d = 2"].num_cells
sbf_p = schemes["stable, d = 2"].decrements
print(f"stable filter: m = {sbf_cells:,d} cells of 2 bits, K = 4, P = {sbf_p}, "
      f"stable rate {vt.stable_false_positive_rate(sbf_cells, 4, 3, sbf_p):.5f}")
probe = StableBloomFilter(sbf_cells, 4, 2, sbf_p, seed=SEED + 1)
probe.add_many(np.arange(10 * W, dtype=np.uint64) + np.uint64(2 ** 62))  # stable first
keys = np.arange(12 * W, dtype=np.uint64)
gaps = [W // 16, W // 4, W // 2, W, 2 * W]
block = 400
lost = dict.fromkeys(gaps, 0)
tried = dict.fromkeys(gaps, 0)
for start in range(0, keys.size - block, block):
    probe.add_many(keys[start:start + block])
    for gap in gaps:
        first = start + block - gap - block
        if first >= 0 and tried[gap] < 8_000:
            lost[gap] += int((~probe.contains_many(keys[first:first + block])).sum())
            tried[gap] += block
print(f"{'gap, inserts':>12} {'gap, minutes':>12} {'measured':>9} {'formula':>8}")
for gap in gaps:
    formula = np.mean([vt.stable_false_negative_rate(gap + j, sbf_cells, 4, 3, sbf_p)
                       for j in range(0, block, 8)])
    print(f"{gap:>12,d} {gap / W * 60:>12.1f} {lost[gap] / tried[gap]:>9.4f} {formula:>8.4f}")

# %% [markdown]
# The measured losses sit on the formula. Double clicks arrive a second or two later, a gap of one
# or two messages, far shorter than the first row's 225 inserts where 10% are already lost, and
# repeats hours later find their key long gone, which is why this filter caught every double and
# dropped only a few repeats. But sized like this it does not remember an hour: it loses more than
# half its keys (58%) within a quarter of an hour, so a duplicate arriving 20 minutes late would
# most likely pass. A stable filter promises "seen recently", not a window; remembering longer
# takes more cells or a smaller P (and P is what holds the false-positive rate down).
#
# ## Deleting keys: the counting filter and its pitfalls
#
# A counting Bloom filter (Fan et al. 2000) keeps a 4-bit counter per cell: `add` increments the
# key's k counters, `remove` decrements them. A counter can overflow; Fan et al. bound the chance
# that any counter ever needs more than 4 bits by m (e·n·k/(16 m))^16, which at the best k is
# m × 1.37·10^-15. Saturated counters stay at 15 (they never wrap). At the best k a million-cell
# filter saturates nothing; overloaded, the count of saturated cells follows the binomial tail:

# %%
print(f"{'m':>9} {'n':>7} {'k':>2} {'Fan bound':>10} {'P(count>=15)':>12} {'expected':>9} {'saturated':>9}")
for m, n, k in [(1_000_000, 100_000, 7), (100_000, 100_000, 8), (200_000, 120_000, 10)]:
    counting = CountingBloomFilter(m, k)
    counting.add_many(np.arange(n, dtype=np.uint64))
    tail = vt.counter_tail(m, n, k, 15)
    print(f"{m:>9,d} {n:>7,d} {k:>2d} {vt.counter_overflow_bound(m, n, k):>10.2e} "
          f"{tail:>12.3e} {m * tail:>9.1f} {counting.saturated():>9,d}")

# %% [markdown]
# Removing a key that was never added is refused whenever the filter can see it (one of its
# counters is 0), and the filter is left unchanged:

# %%
counting = CountingBloomFilter(64, 2)
inserted = [f"id-{i}" for i in range(24)]
counting.add_many(inserted)
try:
    counting.remove("never-added")
except ValueError as error:
    print(f"ValueError: {error}")

# %% [markdown]
# But a key never added that is a false positive looks exactly like an added one. Removing it
# takes counts that belong to other keys, and the keys that shared those counters can vanish
# (here two of them): false negatives, the one thing a Bloom filter promised never to give.

# %%
impostor = next(f"other-{i}" for i in range(10_000) if f"other-{i}" in counting)
counting.remove(impostor)
lost_keys = [key for key in inserted if key not in counting]
print(f"removed {impostor!r} (never added); inserted keys now reported absent: {lost_keys}")

# %% [markdown]
# ## Growing when traffic is unknown: the scalable filter
#
# A filter sized for n keys fails past n. Almeida et al. (2007) add sub-filters, each s times
# larger and with its error multiplied by r (0 < r < 1): p0, p0·r, p0·r², … The compound rate is
# below p0 + p0·r + … = p0/(1 − r), so p0 = p(1 − r) meets a target p however far it grows.
# RedisBloom takes r = 1/2 and s = 2 with p0 = p/2 (the same rule); pybloom-live takes r = 0.9,
# s = 4 and p0 = p·r, whose limit is 9p; pyprobables' expanding filter adds copies (r = s = 1), so
# its rate grows with their number.
#
# **Predict:** grown a thousandfold from 100 keys, will pybloom-live's choice stay under its
# target p = 1%? Measured against the formula 1 − Π(1 − p_i), p_i each sub-filter's exact rate:

# %%
queries = np.arange(2 ** 62, 2 ** 62 + 200_000, dtype=np.uint64)
print(f"{'choice':<34} {'n':>7} {'subs':>4} {'measured':>9} {'formula':>8} {'limit':>6}")
for label, make in [("ours: s = 2, r = 0.9, p0 = p(1-r)", lambda: ScalableBloomFilter(100, 0.01)),
                    ("pybloom-live: s = 4, p0 = 0.9 p", lambda: ScalableBloomFilter(
                        100, 0.01, growth=4, tightening=0.9, first_fpp=0.009))]:
    grown, done = make(), 0
    for n in (1_000, 10_000, 100_000):
        grown.add_many(np.arange(done, n, dtype=np.uint64))
        done = n
        formula = vt.compound_false_positive_rate(
            exact_false_positive_rate(t.num_bits, t.count, t.num_hashes) for t in grown.tables)
        print(f"{label:<34} {n:>7,d} {len(grown.tables):>4d} "
              f"{float(grown.contains_many(queries).mean()):>9.5f} {formula:>8.5f} {grown.bound:>6.3f}")

# %% [markdown]
# Ours stays under 1% at every size; pybloom-live's choice is already past 3% at a thousand
# times its start and heading for its limit of 9%: its first sub-filter alone spends 90% of the
# target. The measured rates follow the formula in both cases, within the spread that a small
# first sub-filter (about a thousand bits) gives from one filter to the next.

# %% [markdown]
# ## Exercises
#
# Three exercises on this lesson: compute, predict, then measure. Replace `None` with your
# answer and run the cell: `check` tells you whether it is right and, when it is not, which slip
# it looks like. Worked solutions are in `solutions/15_forgetting_old_clicks_solutions.ipynb`;
# try first.

# %% [markdown]
# **15.1 (compute).** How many bytes does a rotating filter of 4 generations need to remember at
# least the last 36,000,000 keys at a false-positive rate of 0.001 over all its generations?
#
# The sizing section above did this sum for the article's hour.

# %%
answer = None  # replace None with your answer
check.rotating_filter_bytes(answer, window=36_000_000, fpp=0.001, generations=4)

# %% [markdown]
# **15.2 (predict).** What fraction of its 1,000,000 cells will a stable filter with K = 4, Max
# = 3 and P = 60 hold at 0 once it is stable?
#
# A cell is 0 when its last Max events, decrements or settings, were all decrements.

# %%
answer = None  # replace None with your answer
check.stable_zero_fraction(answer, num_cells=1_000_000, num_hashes=4, max_value=3, decrements=60)

# %% [markdown]
# **15.3 (measure).** Fill AgePartitionedBloomFilter(6, 4, 1000) with 30 generations of keys and
# query 100,000 keys never inserted: what fraction does it report present?
#
# Use integer keys: `add_many(np.arange(30 * 1000, dtype=np.uint64))`, then query keys from a
# range that does not overlap.

# %%
answer = None  # replace None with your answer
check.measured_apbf_fpp(answer, num_hashes=6, extra_slices=4, generation_size=1000, trials=100_000)

# %% [markdown]
# ## What comes next
#
# Every structure here lives in one process. A real deduplicator runs as several consumers that
# must share one filter; lesson 17 puts the filter on a Redis server (RedisBloom, whose scalable
# filter follows the rule measured above).
#
# *Where this lesson's code lives:* `bloomedu/variants/` (`counting.py`, `scalable.py`,
# `rotating.py`, `age_partitioned.py`, `stable.py`, `theory.py`), `bloomedu/steps/expiry.py`,
# `bloomedu/workloads/clicks.py` (`windowed_click_stream`, `score_windowed`),
# `bloomedu/teaching/exercises/window_steps.py`; its tests: `tests/test_variants.py`,
# `tests/test_variants_rates.py`, `tests/test_expiry.py`, `tests/test_dedup.py`. The README's
# table maps every article step to its module, lesson and test.
