# ---
# jupyter:
#   bloomedu:
#     summary: 'Deduplicators that forget: a dict with expiry, rotating generations,
#       an age-partitioned and a stable filter, sized for an hour, run through a day.'
#   jupytext:
#     cell_metadata_filter: tags,-slideshow
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
# # 15 · Forgetting old clicks: time windows
#
# Lesson 14 closed part 2; part 3 goes beyond the articles, to where a real deduplicator goes
# next. Article 1, *"Filtro di Bloom: un elemento appartiene all'insieme?"*, says of its dict of
# IDs (lesson 01): "we can add some expiry: always remove the messages older than an hour". A
# Bloom filter cannot remove anything; this lesson measures the structures that forget.

# %% [markdown]
# ## Objectives
#
# - You will be able to say why a click deduplicator must forget, and choose its window W from
#   the gaps between double clicks and repeats.
# - You will be able to size a rotating, an age-partitioned and a stable filter for a window at a
#   target rate p, and compare their memory with an exact dict's.
# - You will be able to run a day of clicks through each scheme and read what each one drops.
# - You will be able to explain what a filter that never forgets does to legitimate repeats.
#
# **Prerequisites:** lessons 01 (Remembering every click ID), 07 (The false-positive rate) and
# 08 (Sizing a filter: m and k from n and p).
#
# **Time:** about 75 minutes (teaching 50, exercises 25).

# %%
# %matplotlib inline
import math

import matplotlib.pyplot as plt
import numpy as np

from bloomedu import (AgePartitionedBloomFilter, BloomFilter, RotatingBloomFilter,
                      StableBloomFilter)
from bloomedu.core.theory import num_bits_for, size_for
from bloomedu.steps.expiry import BYTES_PER_ENTRY, ExpiringIds, deduplicate_windowed
from bloomedu.teaching.exercises import check
from bloomedu.teaching.plots import FIGSIZE, decorate
from bloomedu.teaching.predict import predict
from bloomedu.variants import theory as vt
from bloomedu.workloads.clicks import DOUBLE, FIRST, REPEAT, score_windowed, windowed_click_stream

SEED = 10

# %% [markdown]
# ## Why forget at all: a click that comes back
#
# The article's message says "user XYZ clicked ad 123". A double click sends it twice within a
# second or two: drop the copy. The same user clicking the same ad hours later is a new,
# legitimate click: count it. So the key is the click (user and ad), and the deduplicator must
# forget a key after some window W. Any W between 2 seconds (the latest double click) and 2 hours
# (the earliest repeat) is right for this stream; we take the article's hour.
#
# `windowed_click_stream` makes a day of such messages with the right answer for each:
# **first** (a key never seen), **double** (the same key again 0.05 to 2 s later: drop it) and
# **repeat** (a key last seen 2 to 6 hours before: keep it). A Python deduplicator cannot process
# 864 million messages in a lesson, so time is compressed: each message stands for 10,000 real
# ones, and an hour holds 3,600 of them. Every structure is sized for the window in messages, so
# its rates are those of the full-size one (a rate depends on m/n, not on n).

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
#   survives at least G − 1 full generations, so capacity $= W/(G-1)$ keeps an hour. A query
#   errs if any generation errs, so each gets $p_\text{gen} = 1 - (1-p)^{1/G} \approx p/G$.
# * **An age-partitioned filter** (`AgePartitionedBloomFilter`, Shtul, Baquero and Almeida
#   2020): k + l slices; each insert sets one bit in each of the k newest, and every g inserts
#   (a generation) the oldest slice is cleared and becomes the newest. A key is found while it is
#   among the last $l \cdot g$ inserts, so $g = W/l$. Each slice has $\lceil kg/\ln 2 \rceil$
#   bits, and a query asks for k consecutive slices with its bit set.
# * **A stable filter** (`StableBloomFilter`, Deng and Rafiei 2006): m cells of d bits; each
#   insert decrements P random cells and sets its K cells to Max $= 2^d - 1$. There is no hard
#   window: a key fades. Deng and Rafiei's stable point gives P for a target rate; we give it the
#   rotating filter's memory.
#
# The age-partitioned filter has a choice to make: the paper's formula for its rate picks the
# pair (k, l) with the fewest bits per key of the window, $k(k+l)/(l \ln 2)$, among those whose
# rate is at most p = 0.1%. The rotating filter takes lesson 08's sizing for each generation.

# %%
P_TARGET = 0.001
GENERATIONS = 4
pairs = [(k, l) for k in range(4, 21) for l in range(1, 121)
         if vt.apbf_false_positive_rate(k, l) <= P_TARGET]
best_k, best_l = min(pairs, key=lambda kl: kl[0] * (kl[0] + kl[1]) / (kl[1] * math.log(2)))
gen_fpp = vt.generation_fpp(P_TARGET, GENERATIONS)
print(f"age-partitioned: best (k, l) = ({best_k}, {best_l}), paper's rate "
      f"{vt.apbf_false_positive_rate(best_k, best_l):.6f}")
print(f"rotating: each of {GENERATIONS} generations at p_gen = {gen_fpp:.3e}, "
      f"k = {size_for(n=W // (GENERATIONS - 1), p=gen_fpp)[1]}")


def make_schemes(window):
    """The four windowed deduplicators, each sized for ``window`` keys at p = 0.1%."""
    rotating = RotatingBloomFilter(capacity=window // (GENERATIONS - 1), fpp=P_TARGET,
                                   generations=GENERATIONS)
    cells = rotating.nbytes * 8 // 2  # 2-bit cells in the rotating filter's memory
    decrements = vt.stable_decrements_for(num_cells=cells, num_hashes=4, max_value=3, fpp=P_TARGET)
    return {
        "exact dict, 1 h expiry": ExpiringIds(window=3600),
        "rotating, 4 generations": rotating,
        f"age-partitioned ({best_k}, {best_l})": AgePartitionedBloomFilter(best_k, best_l,
                                                                          window // best_l),
        "stable, d = 2": StableBloomFilter(cells, 4, 2, decrements, seed=SEED),
    }


# %% [markdown]
# Scaled up to the article's real hour, 36,000,000 messages, each scheme has a size you can
# compute before running anything: the dict at 44 bytes a key, the rotating filter as
# $G \cdot m$ bits for $W/(G-1)$ keys at $p_\text{gen}$, the age-partitioned filter as
# $k + l$ slices.

# %%
guess_memory = predict("For the article's hour, how many times less memory than the exact dict "
                       "does the rotating filter of 4 generations need?", None)

# %%
HOUR = 10_000 * 3600
full_day = 10_000 * 86_400
rot_m, rot_k = size_for(n=HOUR // (GENERATIONS - 1), p=gen_fpp)
sizing = [  # (scheme, bytes, k)
    ("the article's day of IDs (36 bytes each)", 36 * full_day, None),
    ("plain Bloom filter for the day, p = 0.1%", num_bits_for(n=full_day, p=P_TARGET) / 8,
     size_for(n=full_day, p=P_TARGET)[1]),
    ("exact dict, 1 h expiry (36 + 8 bytes a key)", HOUR * BYTES_PER_ENTRY, None),
    ("rotating, 4 generations of 20 min", GENERATIONS * rot_m / 8, rot_k),
    (f"age-partitioned ({best_k}, {best_l})",
     (best_k + best_l) * vt.apbf_slice_bits(best_k, HOUR // best_l) / 8, best_k),
]
title = "the article's one-hour window at p = 0.1%"
print(f"{title:<46} {'bytes':>15} {'GB':>7} {'bits/key of W':>13} {'k':>3}")
for name, nbytes, k in sizing:  # bits per key of the window, for the schemes that forget
    per_key = f"{8 * nbytes / HOUR:.1f}" if "day" not in name else ""
    print(f"{name:<46} {nbytes:>15,.0f} {nbytes / 1e9:7.3f} {per_key:>13} {k or '':>3}")
memory_ratio = sizing[2][1] / sizing[3][1]

# %%
guess_memory.reveal(round(memory_ratio, 1), label="Computed")

# %% [markdown]
# The rotating filter needs about 0.1 GB for the hour: 23 bits a key of the window, since four
# generations of a third of the hour each hold $4/3$ of it, each at a quarter of p. The
# age-partitioned filter needs a little more at this rate: it takes k = 15 where a rotating
# generation takes 12, and carries k partly filled young slices (26 bits a key); in exchange it
# forgets an l-th of the window at a time, where the rotating filter forgets a third. The exact
# dict needs 1.6 GB (more in Python, where lesson 01 measured about three times the article's
# 36 bytes an ID), the plain filter for the day 1.55 GB, and the article's IDs 31 GB. The stable filter is given the
# rotating filter's memory, so it is not in the table. Why the age-partitioned filter's rate is
# a run of k set slices, and how good the paper's formula is: *Going deeper* in
# `deeper/15_age_partitioned_rate.ipynb`.
#
# ## A day of clicks through each scheme
#
# `deduplicate_windowed` drops a message exactly when the scheme, updated by every earlier
# message, reports it present, as a loop over one message at a time would. It gets there in
# batches of 512 messages through the bulk paths (`contains_many`, then `add_many` of the kept
# keys), redoing one by one only the few messages an earlier one of the same batch could change,
# and records the memory after each batch. We add a fifth, the plain filter sized for the whole
# day, to compare with a filter that does not forget.

# %%
guess_repeats = predict("Of the day's 3,210 legitimate repeats, how many will the plain filter "
                        "sized for the whole day drop?", None)

# %%
guess_rotating = predict("The filters were sized for p = 0.001. What fraction of its first clicks "
                         "will the rotating filter drop?", None)

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

# %%
guess_repeats.reveal(scores["plain filter for the day"].repeats_dropped)

# %% [markdown]
# The plain filter drops every repeat: a repeat's key is one it holds, so it answers "seen", and
# a user who comes back hours later is never counted again. Every scheme catches every double
# click. The exact dict drops no genuine click at all, at over ten times the filters' memory. The
# three forgetting filters drop between sixty and ninety first clicks each, and at most a
# handful of repeats (once a key is forgotten, its repeat is a new key to them, dropped only by a
# false positive). Those drops, as a rate beside p:

# %%
for name, s in scores.items():
    if name.startswith(("rotating", "age", "stable")):
        print(f"{name:<28} first clicks dropped {s.firsts_dropped / s.firsts:.5f} (p = {P_TARGET})")
rotating_rate = scores["rotating, 4 generations"].firsts_dropped / scores["rotating, 4 generations"].firsts

# %%
guess_rotating.reveal(round(rotating_rate, 5))

# %% [markdown]
# Below p: the rotating filter's sizing holds only for its fullest moment, when the newest
# generation holds all its `capacity` keys. Most of the time it is only partly full, so it errs
# less. The age-partitioned filter sits at the paper's rate, within the binomial spread of 85
# drops; the stable filter, whose P was chosen for a stable rate of at most p, sits just under it. Memory over the day, and the genuine clicks
# each dropped, side by side:

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
print(f"{'hour':>4}  " + "  ".join(f"{n[:14]:>14}" for n in runs))
for hour in (1, 2, 6, 12, 24):
    row = [int(run.nbytes[np.searchsorted(run.times, hour * 3600) - 1]) for run in runs.values()]
    print(f"{hour:>4}  " + "  ".join(f"{b:>14,d}" for b in row))

# %% [markdown]
# The dict grows for an hour, then holds steady at about W keys (the hour-1 row is read after
# the last whole batch of 512 messages, up to 512 messages, about 8.5 simulated minutes, before
# the hour ends, so it is still below); the filters never change size.
#
# The stable filter caught every double and dropped few repeats, but it has no window: a key
# fades as other keys' inserts decrement its cells. How fast, and what that means for a copy that
# arrives twenty minutes late, is where lesson 16 starts.

# %% [markdown]
# ## Recap
#
# - A click deduplicator must forget: a double click comes seconds later, a legitimate repeat
#   hours later, and any window between the two separates them.
# - A filter that never forgets drops every repeat; an exact dict with expiry drops nothing but
#   costs over ten times the filters' memory.
# - Rotating generations: capacity $W/(G-1)$ each, rate $p_\text{gen} \approx p/G$ each; an
#   age-partitioned filter: $g = W/l$, slices of $\lceil kg/\ln 2 \rceil$ bits; a stable filter:
#   no window, a stable point.
# - Each scheme's rate is a promise about its fullest moment or its average: measured, they drop
#   first clicks near p (0.00077 to 0.00104 of them here, for p = 0.001).

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
# The sizing table above did this sum for the article's hour.

# %%
answer = None  # replace None with your answer
check.rotating_filter_bytes(answer, window=36_000_000, fpp=0.001, generations=4)

# %% [markdown]
# **15.2 (predict).** What fraction of its 1,000,000 cells will a stable filter with K = 4, Max
# = 3 and P = 60 hold at 0 once it is stable?
#
# Per insert a cell is set with chance K/m and decremented (and not set) with chance about P/m.
# It is 0 when its last Max events, decrements or settings, were all decrements.

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
# Lesson 16 (Deleting and growing: stable, counting and scalable filters) measures how fast a
# stable filter forgets, then answers the article's other "cannot": a counting filter that
# deletes, and a scalable filter that grows when traffic is not known in advance.
#
# *Where this lesson's code lives:* `bloomedu/variants/` (`rotating.py`, `age_partitioned.py`,
# `stable.py`, `theory.py`), `bloomedu/steps/expiry.py`, `bloomedu/workloads/clicks.py`
# (`windowed_click_stream`, `score_windowed`), `bloomedu/teaching/exercises/window_steps.py`; its
# tests: `tests/test_variants.py`, `tests/test_variants_rates.py`, `tests/test_expiry.py`. The
# README's table maps every article step to its module, lesson and test.
