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
#       jupytext_version: 1.19.7
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 15 · Forgetting old clicks: time windows
#
# Part 3 goes beyond the articles. Article 1, *"Filtro di Bloom: un elemento appartiene
# all'insieme?"*, says of its dict of IDs (lesson 01): "we can add some expiry: always remove the
# messages older than an hour". A Bloom filter cannot remove anything; this lesson measures
# structures that forget.

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
# **Time:** about 60 minutes (teaching 40, exercises 20).

# %%
# %matplotlib inline
import math

import matplotlib.pyplot as plt
import numpy as np

from bloomedu import (AgePartitionedBloomFilter, BloomFilter, RotatingBloomFilter,
                      StableBloomFilter)
from bloomedu.core.theory import num_bits_for, size_for
from bloomedu.i18n import phrase, say
from bloomedu.steps.expiry import BYTES_PER_ENTRY, ExpiringIds, deduplicate_windowed
from bloomedu.teaching.exercises import check
from bloomedu.teaching.plots import FIGSIZE, decorate, show
from bloomedu.teaching.predict import predict
from bloomedu.variants import theory as vt
from bloomedu.workloads.clicks import DOUBLE, FIRST, REPEAT, score_windowed, windowed_click_stream

SEED = 10

# %% [markdown]
# ## Why forget at all: a click that comes back
#
# A double click sends "user XYZ clicked ad 123" twice within a second or two: drop the copy.
# The same click hours later is a new, legitimate one: count it. So the deduplicator must forget
# a key after some window W; any W between 2 seconds (the latest double click) and 2 hours (the
# earliest repeat) is right for this stream, and we take the article's hour.
#
# `windowed_click_stream` makes a day of such messages with the right answer for each:
# **first** (a key never seen), **double** (the same key again 0.05 to 2 s later: drop it) and
# **repeat** (a key last seen 2 to 6 hours before: keep it). To run in a lesson, each message
# stands for 10,000 real ones, and an hour holds 3,600 of them. Every structure is sized for the
# window in messages, so its rates are those of the full-size one (a rate depends on m/n).

# %%
day = windowed_click_stream(24, rate=10_000, time_scale=10_000, seed=SEED)
W = int(day.per_hour)  # one hour, in messages of this stream
kinds = {name: int((day.kinds == kind).sum()) for name, kind in
         [("first", FIRST), ("double", DOUBLE), ("repeat", REPEAT)]}
say("messages in the day {messages:>8,d}   one hour = W = {W:,d} messages", messages=len(day), W=W)
for name, count in kinds.items():
    print(f"  {name:<7} {count:>8,d}")

# %% [markdown]
# ## Four ways to forget
#
# * **An exact dict with expiry** (`ExpiringIds`), the article's suggestion: every key of the
#   last hour, 36 bytes of ID and 8 of time each.
# * **Rotating generations** (`RotatingBloomFilter`): G Bloom filters; keys go into the newest,
#   a query asks all G, and when the newest holds `capacity` keys the oldest is emptied. A key
#   survives at least G − 1 full generations, so capacity $= W/(G-1)$ keeps an hour. A query
#   errs if any generation errs, so each gets $p_\text{gen} = 1 - (1-p)^{1/G} \approx p/G$.
# * **An age-partitioned filter** (`AgePartitionedBloomFilter`), below.
# * **A stable filter** (`StableBloomFilter`), below.
#
# ### The age-partitioned filter and its formula
#
# Shtul, Baquero and Almeida's filter ("Age-Partitioned Bloom Filters", 2020) keeps k + l
# slices of equal size, newest first. An insert sets one bit of the key in each of the k newest
# slices; every g inserts (a generation) the oldest slice is cleared and becomes the newest. A
# key inserted recently has its bits in k *consecutive* slices, so a query answers "present" when
# it finds k consecutive slices with the key's bit set. A key stays findable while its k slices
# survive, for at least $l \cdot g$ inserts: $g = W/l$. A slice receives one bit per key for k
# generations, kg bits in all, so it has $\lceil kg/\ln 2 \rceil$ bits and ends half set.
#
# A key never inserted meets one uniform bit in each slice, set with the slice's fill $r_i$. The
# paper takes the fills just before a shift as growing linearly, $r_i = (i+1)/2k$ for the k young
# slices ($i < k$) and $1/2$ for the l old ones, and writes the rate as $P(0, 0)$, where
# $P(a, i)$ is the chance of completing a run when a run of a set bits ends at slice i:
#
# $$P(a, i) = \begin{cases} 1 & a = k \\ 0 & i > l + a \\
#   r_i \, P(a+1, i+1) + (1 - r_i) \, P(0, i+1) & \text{otherwise.} \end{cases}$$
#
# The middle line stops a run that no longer fits in the slices left. As it stands, it agrees
# with the library's `apbf_false_positive_rate`:

# %%
def paper_rate(k, l):
    """Shtul, Baquero and Almeida's P(0, 0), as the recurrence above."""
    fill = [(i + 1) / (2 * k) if i < k else 0.5 for i in range(k + l)]

    def P(a, i):
        if a == k:
            return 1.0
        if i > l + a:
            return 0.0
        return fill[i] * P(a + 1, i + 1) + (1 - fill[i]) * P(0, i + 1)
    return P(0, 0)


for k, l in [(4, 3), (10, 7)]:
    assert math.isclose(paper_rate(k, l), vt.apbf_false_positive_rate(k, l))
    say("k = {k:2d}, l = {l}: paper's rate {rate:.6f}", k=k, l=l, rate=paper_rate(k, l))

# %% [markdown]
# These are the paper's table values. How good its linear fills are, moment by moment: *Going
# deeper* in `deeper/15_age_partitioned_rate.ipynb`.
#
# ### The stable filter and its stable point
#
# Deng and Rafiei's stable filter (2006) has m cells of d bits, counting 0 to Max $= 2^d - 1$.
# Each insert decrements P random cells, then sets its K cells to Max; a query asks that all K be
# non-zero. A key fades, with no hard window. Per insert a cell is set with chance about
# $K/m$, and decremented without being set with chance about $(P/m)(1 - K/m)$. Looking back from
# now at the events that touched a cell, each was a decrement with chance
#
# $$q = \frac{(P/m)(1 - K/m)}{(P/m)(1 - K/m) + K/m} = \frac{1}{1 + 1/\big(P\,(1/K - 1/m)\big)} .$$
#
# A cell is 0 when its last Max events were all decrements, so once the filter has run long (its
# *stable point*) a fraction $z = q^\text{Max}$ of its cells is 0, and a key never inserted finds
# its K cells non-zero with chance $p = (1 - z)^K$. Solving for P gives the decrements for a
# target p (`stable_decrements_for`). How fast it is reached: `deeper/16_stable_filter_chain`.
#
# ## Sized before we measure
#
# The age-partitioned filter has a choice to make: the pair (k, l) with the fewest bits per key
# of the window, $k(k+l)/(l \ln 2)$, among those whose paper's rate is at most p = 0.1%. The
# rotating filter takes lesson 08's sizing for each generation; the stable filter, with d = 2 and
# K = 4, gets the rotating filter's memory and the P of its stable point.

# %%
P_TARGET = 0.001
GENERATIONS = 4
pairs = [(k, l) for k in range(4, 21) for l in range(1, 121)
         if vt.apbf_false_positive_rate(k, l) <= P_TARGET]
best_k, best_l = min(pairs, key=lambda kl: kl[0] * (kl[0] + kl[1]) / (kl[1] * math.log(2)))
gen_fpp = vt.generation_fpp(P_TARGET, GENERATIONS)
say("age-partitioned: best (k, l) = ({k}, {l}), paper's rate {rate:.6f}",
    k=best_k, l=best_l, rate=vt.apbf_false_positive_rate(best_k, best_l))
say("rotating: each of {generations} generations at p_gen = {p_gen:.3e}, k = {k}",
    generations=GENERATIONS, p_gen=gen_fpp, k=size_for(n=W // (GENERATIONS - 1), p=gen_fpp)[1])


def make_schemes(window):
    """The four windowed deduplicators by name, each sized for ``window`` keys at p = 0.1%."""
    rotating = RotatingBloomFilter(capacity=window // (GENERATIONS - 1), fpp=P_TARGET,
                                   generations=GENERATIONS)
    cells = rotating.nbytes * 8 // 2  # 2-bit cells in the rotating filter's memory
    decrements = vt.stable_decrements_for(num_cells=cells, num_hashes=4, max_value=3, fpp=P_TARGET)
    return {
        phrase("exact dict, 1 h expiry"): ExpiringIds(window=3600),
        phrase("rotating, 4 generations"): rotating,
        phrase("age-partitioned ({k}, {l})", k=best_k, l=best_l):
            AgePartitionedBloomFilter(best_k, best_l, window // best_l),
        phrase("stable, d = 2"): StableBloomFilter(cells, 4, 2, decrements, seed=SEED),
    }


stable = make_schemes(W)[phrase("stable, d = 2")]
say("stable: m = {cells:,d} cells, P = {decrements}, stable point z = {z:.4f}",
    cells=stable.num_cells, decrements=stable.decrements,
    z=vt.stable_zero_fraction(num_cells=stable.num_cells, num_hashes=4, max_value=3,
                              decrements=stable.decrements))

# %% [markdown]
# Scaled up to the article's real hour, 36,000,000 messages: the dict at 44 bytes a key, the
# rotating filter $G \cdot m$ bits for $W/(G-1)$ keys at $p_\text{gen}$, the age-partitioned
# filter $k + l$ slices.

# %%
guess_memory = predict("Four generations forget a third of the hour at a time; sixteen would "
                       "forget a fifteenth, but each of the 16 must err with about p/16. For the "
                       "article's hour, will 16 generations need more memory than 4, or less?",
                       None, choices=("more", "less"))

# %%
HOUR = 10_000 * 3600
full_day = 10_000 * 86_400
rot_m, rot_k = size_for(n=HOUR // (GENERATIONS - 1), p=gen_fpp)
rot16_m, rot16_k = size_for(n=HOUR // 15, p=vt.generation_fpp(P_TARGET, 16))
sizing = [  # (scheme, bytes, k, whether it forgets)
    (phrase("the article's day of IDs (36 bytes each)"), 36 * full_day, None, False),
    (phrase("plain Bloom filter for the day, p = 0.1%"), num_bits_for(n=full_day, p=P_TARGET) / 8,
     size_for(n=full_day, p=P_TARGET)[1], False),
    (phrase("exact dict, 1 h expiry (36 + 8 bytes a key)"), HOUR * BYTES_PER_ENTRY, None, True),
    (phrase("rotating, 4 generations of 20 min"), GENERATIONS * rot_m / 8, rot_k, True),
    (phrase("rotating, 16 generations of 4 min"), 16 * rot16_m / 8, rot16_k, True),
    (phrase("age-partitioned ({k}, {l})", k=best_k, l=best_l),
     (best_k + best_l) * vt.apbf_slice_bits(best_k, HOUR // best_l) / 8, best_k, True),
]
say("the article's one-hour window at p = 0.1%                bytes      GB bits/key of W   k")
for name, nbytes, k, forgets in sizing:  # bits per key of the window, for the schemes that forget
    per_key = f"{8 * nbytes / HOUR:.1f}" if forgets else ""
    print(f"{name:<46} {nbytes:>15,.0f} {nbytes / 1e9:7.3f} {per_key:>13} {k or '':>3}")
memory_ratio = sizing[2][1] / sizing[3][1]
say("the exact dict needs {ratio:.1f} times the 4 generations' memory", ratio=memory_ratio)

# %%
guess_memory.reveal("less" if sizing[4][1] < sizing[3][1] else "more")

# %% [markdown]
# Less: the bits a key costs are $\frac{G}{G-1} \cdot \frac{\ln(G/p)}{(\ln 2)^2}$, and $G/(G-1)$
# falls from $4/3$ to $16/15$ faster than $\ln(G/p)$ grows. Four generations need about 0.1 GB,
# 23 bits a key of the window; sixteen 7% less. The age-partitioned filter needs a little more
# (k = 15 where a generation takes 12); the exact dict 15.3 times as much, more in Python.
#
# ## What each one remembers
#
# Each filter runs for three hours of keys, and each key is looked up again a given age after it
# went in (left); right, the age-partitioned filter's slices just before a shift, against the
# paper's linear fills.

# %%
def found_by_age(scheme, ages, block=48, hours=3):
    """Fraction of keys ``scheme`` still finds ``age`` inserts after adding them."""
    keys = np.arange(hours * W, dtype=np.uint64)
    found, tried = np.zeros(len(ages)), np.zeros(len(ages))
    for start in range(0, keys.size, block):
        scheme.add_many(keys[start:start + block])
        asked = start - ages >= W  # after the first hour, once the filter is running
        if asked.any():  # the block added `age` inserts ago, for every age, in one query
            groups = [keys[first:first + block] for first in start - ages[asked]]
            answers = scheme.contains_many(np.concatenate(groups))
            found[asked] += [part.sum() for part in np.split(answers, np.cumsum([len(g) for g in groups])[:-1])]
            tried[asked] += block
    return found / tried


ages = np.arange(0, 3 * W // 2 + 1, W // 40)
rotating_name, apbf_name = list(make_schemes(W))[1:3]
remembered = {name: found_by_age(make_schemes(W)[name], ages)
              for name in (rotating_name, apbf_name)}
apbf = AgePartitionedBloomFilter(best_k, best_l, W // best_l)
apbf.add_many(np.arange(30 * W, dtype=np.uint64))  # many generations, then just before a shift
apbf.add_many(np.arange(apbf.generation_size - apbf.count, dtype=np.uint64) + np.uint64(2 ** 40))
paper_fills = [(i + 1) / (2 * best_k) if i < best_k else 0.5 for i in range(apbf.num_slices)]

fig, (left, right) = plt.subplots(1, 2, figsize=FIGSIZE)
for name, share in remembered.items():
    left.plot(ages / W * 60, share, label=name)
decorate(left, xlabel="age of the key, minutes", ylabel="fraction still found",
         title="What each remembers")
right.bar(range(apbf.num_slices), apbf.fills(), width=1.0, color="tab:orange", label="measured")
right.plot(range(apbf.num_slices), paper_fills, color="black", label="paper: (i+1)/2k, then 1/2")
decorate(right, xlabel="slice, newest (0) to oldest", ylabel="fraction of bits set",
         title="Age-partitioned slices before a shift", legend=dict(loc="lower right"))
show("Left: the rotating filter finds every key up to 60 minutes old, then loses them "
     "steadily until 80 minutes; the age-partitioned filter finds every key up to 60 minutes "
     "and almost none after 63. Right: the age-partitioned filter's slices fill from "
     "about 0.05 in the newest to one half by the fifteenth, a little above the paper's straight "
     "line, and stay at one half after.")
shown, slices = slice(38, 56, 2), (0, 4, 9, 14, 30, 88)
say("age, min {minutes}", minutes=" ".join(f"{a / W * 60:>5.1f}" for a in ages[shown]))
say("rotating {found}", found=" ".join(f"{s:5.3f}" for s in remembered[rotating_name][shown]))
say("age-part {found}", found=" ".join(f"{s:5.3f}" for s in remembered[apbf_name][shown]))
say("   slice {slices}", slices=" ".join(f"{i:>5d}" for i in slices))
say("measured {fills}", fills=" ".join(f"{apbf.fills()[i]:5.3f}" for i in slices))
say("   paper {fills}", fills=" ".join(f"{paper_fills[i]:5.3f}" for i in slices))

# %% [markdown]
# The rotating filter keeps every key for the hour, then, depending on where in its generation
# the key fell, up to 20 minutes more: at 72 minutes half the keys are still found. The
# age-partitioned filter's window is sharp: half its keys are gone at 60 minutes, 4% are found at
# 63 (a key that lost its oldest slices can still complete a run with its neighbours' set
# bits). Its young
# slices sit a little above the paper's line (0.045 for 0.033 in the newest, 0.363 for 0.333 in
# the tenth), so just before a shift its rate is somewhat above the paper's figure.
#
# ## A day of clicks through each scheme
#
# `deduplicate_windowed` drops a message exactly when the scheme, updated by every earlier
# message, reports it present (in batches of 512 through the bulk paths, exactly as one at a
# time). A fifth, the plain filter sized for the whole day, does not forget: it drops every
# legitimate repeat, since a repeat's key is one it holds.

# %%
guess_plain = predict("The plain filter is sized for the day's 86,542 messages at p = 0.001. "
                      "Of the day's 81,653 first clicks, how many will it drop as false "
                      "positives?", None)

# %%
forgetters = (phrase("rotating"), phrase("age-partitioned"), phrase("stable"))
guess_fewest = predict("Which of the three forgetting filters will drop the fewest first clicks?",
                       None, choices=forgetters)

# %%
schemes = make_schemes(W)
plain = phrase("plain filter for the day")
schemes[plain] = BloomFilter.from_capacity(len(day), P_TARGET)
runs = {name: deduplicate_windowed(day, stage, batch=512) for name, stage in schemes.items()}
scores = {name: score_windowed(day, run.kept) for name, run in runs.items()}
say("scheme                        doubles caught  firsts dropped     rate  repeats dropped  "
    "memory, bytes")
for name, s in scores.items():
    say("{scheme:<28} {doubles_dropped:>7,d} of {doubles:<5,d} {firsts_dropped:>15,d} "
        "{firsts_rate:8.5f} {repeats_dropped:>8,d} of {repeats:<5,d} {memory:>14,d}",
        scheme=name, doubles_dropped=s.doubles_dropped, doubles=s.doubles,
        firsts_dropped=s.firsts_dropped, firsts_rate=s.firsts_dropped / s.firsts,
        repeats_dropped=s.repeats_dropped, repeats=s.repeats, memory=int(runs[name].nbytes[-1]))
forgetting = dict(zip(forgetters, (scores[name].firsts_dropped for name in list(scores)[1:4])))

# %%
guess_plain.reveal(scores[plain].firsts_dropped)
guess_fewest.reveal(min(forgetting, key=forgetting.get))

# %% [markdown]
# Five, not 82: the plain filter's p = 0.001 holds only at the day's end, when it is full;
# through the morning it is nearly empty and errs far less. The same holds, less strongly, for
# the rotating filter: its sizing is for the moment its newest generation is full, and most of
# the time it holds less, so it drops 0.00077 of its first clicks. The age-partitioned filter
# sits at the paper's rate (85 drops, about ±9 from chance); the stable filter, at its stable
# point after its first hours, just under p. Every scheme catches every double click; the exact
# dict drops no genuine click, at 13 to 15 times the filters' memory; the forgetting filters drop
# at most four repeats (a forgotten key's repeat is a new key, dropped only by a false positive),
# and the plain filter drops all 3,210.
#
# The stable filter has no window at all. How fast a key fades from it, and what that means for
# a copy that arrives twenty minutes late, is where lesson 16 starts.

# %% [markdown]
# ## Recap
#
# - A click deduplicator must forget: any window between a double click (seconds) and a
#   legitimate repeat (hours) separates them.
# - A filter that never forgets drops every repeat; an exact dict with expiry drops nothing but
#   costs over ten times the filters' memory.
# - Rotating generations: capacity $W/(G-1)$ each, rate $p_\text{gen} \approx p/G$ each, a
#   third of the window forgotten at a time. An age-partitioned filter: $g = W/l$, slices of
#   $\lceil kg/\ln 2 \rceil$ bits, rate the paper's run of k set slices $P(0, 0)$, an l-th
#   forgotten at a time. A stable filter: no window, a stable point $z = q^\text{Max}$,
#   $p = (1 - z)^K$.
# - A rate sized for p is a promise about a filter's fullest moment or its average: a filter
#   that is partly full most of the time errs far less.

# %% [markdown]
# ## Exercises
#
# Replace `None` with your answer and run the cell: `check` says whether it is right, or which
# slip it looks like. Worked solutions: `solutions/15_forgetting_old_clicks_solutions.ipynb`.

# %% [markdown]
# **15.1 (compute).** How many bytes does a rotating filter of 8 generations need to remember at
# least the last 36,000,000 keys at a false-positive rate of 0.001 over all its generations?
#
# The sizing table above did this sum for 4 and 16 generations.

# %%
answer = None  # replace None with your answer
check.rotating_filter_bytes(answer, window=36_000_000, fpp=0.001, generations=8)

# %% [markdown]
# **15.2 (predict).** What fraction of its 1,000,000 cells will a stable filter with K = 4,
# Max = 3 and P = 60 hold at 0 once it is stable?
#
# The stable point above gives it: first q, then z.

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
# stable filter forgets, then a counting filter that deletes and a scalable filter that grows.
#
# *Where this lesson's code lives:* `bloomedu/variants/` (`rotating.py`, `age_partitioned.py`,
# `stable.py`, `theory.py`), `bloomedu/steps/expiry.py`, `bloomedu/workloads/clicks.py`; tests:
# `tests/test_variants.py`, `tests/test_variants_rates.py`, `tests/test_expiry.py`.
