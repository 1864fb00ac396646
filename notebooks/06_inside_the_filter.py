# ---
# jupyter:
#   bloomedu:
#     summary: 'Inside the filter: k positions from one hash (double hashing), article
#       2''s walkthrough borrowed ahead, and the site''s toy, one key at a time.'
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
# # 06 · Inside the filter: k positions from one hash
#
# Lesson 05 (*The Bloom filter*) built the article's filter from k salted hashes and checked its
# properties. This lesson opens the box: the filter every later lesson uses, which gets its k
# positions from a single hash; then the second article's walkthrough of three keys, bit by bit,
# which this lesson borrows ahead of part 2 (the course follows that article from lesson 08 on);
# and a toy that shows one key at a time.

# %% [markdown]
# ## Objectives
#
# - You will be able to compute a key's k positions in bloomedu's `BloomFilter(m, k)` by hand,
#   from one 128-bit hash, and say why each value is mixed before it is taken modulo m.
# - You will be able to follow an add and three lookups bit by bit, and name the keys a false
#   positive borrows its bits from.
# - You will be able to work out how often a key's k positions coincide, and check it by
#   measuring.
# - You will be able to use the toy to try keys, m and k one at a time.
#
# **Prerequisites:** lessons 04 (*Salted hashes*) and 05 (*The Bloom filter*).
#
# **Time:** about 55 minutes (teaching 40 min, exercises 15 min).

# %%
# %matplotlib inline
import inspect

import matplotlib.pyplot as plt

from bloomedu import BloomFilter
from bloomedu.core.filter import bit_position
from bloomedu.core.hashing import fmix64, hash128
from bloomedu.i18n import phrase, say
from bloomedu.teaching.classroom import bit_setters, find_false_positive
from bloomedu.teaching.exercises import check
from bloomedu.teaching.plots import GROUP_COLORS, draw_bit_groups, show
from bloomedu.teaching.predict import predict
from bloomedu.teaching.toy import toy, toy_view
from bloomedu.workloads.urls import malicious_urls, safe_urls

# %% [markdown]
# ## bloomedu's `BloomFilter`: any m, one hash per key
#
# The article's filter ties m to a power of two and pays for k separate hashes of a salted
# string. `bloomedu.BloomFilter(num_bits, num_hashes)` takes any m and hashes each key once,
# with the 128-bit MurmurHash3, whose two 64-bit halves are $h_1$ and $h_2$. Its k positions
# come by **double hashing** (Kirsch and Mitzenmacher, *"Less hashing, same performance"*,
# 2006): position i, for $i = 0, 1, \dots, k - 1$, is
#
# $$\text{position}_i = \operatorname{fmix64}\big((h_1 + i \cdot h_2) \bmod 2^{64}\big) \bmod m,$$
#
# where `fmix64` is MurmurHash3's 64-bit finaliser, a scramble that spreads every input bit over
# all 64. Without it, the positions of a key would be a walk of equal steps $h_2 \bmod m$
# around the m bits, and a key whose step is 0 or $m/2$ would pile its k positions onto one or
# two bits; small filters notice. (One more detail: for the rare key whose k values
# $h_1 + i \cdot h_2$ would not all differ, such as the empty key, the library makes $h_2$ odd,
# and the multiples of an odd step never repeat modulo $2^{64}$.) The
# same four messages as the article's, in a filter of 1,000 bits, and the positions by hand:

# %%
messages = [{"id": "123"}, {"id": "456"}, {"id": "123"}, {"id": "789"}]
general = BloomFilter(num_bits=1000, num_hashes=3)
for message in messages:
    if message["id"] not in general:
        general.add(message["id"])
        print(message)
h1, h2 = hash128("123")
by_hand = [fmix64((h1 + i * h2) % 2**64) % 1000 for i in range(3)]
assert by_hand == general.bit_indices("123")
say("'123': h1 = {h1}, h2 = {h2} -> bits {positions}", h1=h1, h2=h2, positions=by_hand)

# %%
print(inspect.getsource(bit_position))

# %% [markdown]
# Does one hash, stretched to k positions this way, behave like k independent salted hashes?
# Lesson 07 measures this filter's rates against the formula, a million queries for each k;
# `deeper/06_small_filters` puts it beside lesson 05's salted filter on lesson 05's own IDs (the
# same rates, within noise) and measures how badly the unmixed walk does on filters of 16 to
# 16,384 bits (read it after lesson 07). One hash per key also makes each extra position cheap: a
# multiply-add, an `fmix64`, a modulo and a bit, instead of a whole MurmurHash2 of a longer
# string.

# %% [markdown]
# ## The second article's walkthrough: three URLs, three hashes, 32 bits
#
# This section borrows a page of the second article, *"Bloom Filter: come memorizzare 1 Milione
# di stringhe in meno di 2MB?"*, before part 2 of the course starts following it (lesson 08 sizes
# its filter, lesson 09 builds it): the article opens the box the same way, and this is where the
# course opens it. The only thing a Bloom filter stores is an array of m bits. Adding an item
# computes k hash functions, each giving a position from 0 to $m - 1$, and sets those bits to 1.
# Looking an item up computes the same k positions: if any of them is 0, the item was certainly
# never added; if all are 1, it was added, or other items happen to have set exactly those
# bits. The article draws this with three hash functions on a small array (its pictures are not
# in the text we have, so we draw our own): here $m = 32$ and $k = 3$, and three malicious URLs
# A, B, C go in one after the other.

# %%
WALK_SEED = 46  # picked so that the three items set nine different bits: no bit is shared
small = BloomFilter(num_bits=32, num_hashes=3)
items = dict(zip("ABC", malicious_urls(3, seed=WALK_SEED)))
snapshots = []
say("item     positions  url")
for name, url in items.items():
    small.add(url)
    snapshots.append((name, small.bit_indices(url), small.bits.copy()))
    print(f"{name:4}  {str(small.bit_indices(url)):>12}  {url}")
say("bits set after three items: {set_bits} of {m}", set_bits=small.bits_set(), m=small.num_bits)

# %%
fig, axes = plt.subplots(3, 1, figsize=(7.0, 4.2))
for ax, color, (name, positions, bits) in zip(axes, GROUP_COLORS, snapshots):
    draw_bit_groups(bits, {phrase("{item} sets", item=name): positions}, ax=ax, colors=[color],
                    title=phrase("after adding {item}: bits {positions}", item=name,
                                 positions=positions))
show("Three rows of 32 bit cells, one after each add: A sets bits 15, 17 and 26, B adds 14, 28 "
     "and 30, C adds 13, 19 and 31, so nine different bits are set and 23 are still 0.")

# %% [markdown]
# ### Three lookups
#
# Item A, which is in; a safe URL that is not; and a safe URL that is not in but that the filter
# claims, found by trying safe URLs until all three of one's bits happen to be set.

# %%
guess_lenders = predict("The first safe URL that fools this filter: how many of the items A, B and "
                        "C set its three bits?", None, choices=("one", "two", "three"))

# %%
candidates = safe_urls(5000, seed=WALK_SEED)
absent = next(url for url in candidates if url not in small)
tried, fooled = next((i + 1, url) for i, url in enumerate(candidates) if url in small)
queries = {phrase("present (A)"): items["A"], phrase("absent"): absent,
           phrase("false positive"): fooled}
name_of = {url: name for name, url in items.items()}
say("query               positions       bits  in filter  really added  set by")
for label, url in queries.items():
    positions = small.bit_indices(url)
    values = [int(small.bits[i]) for i in positions]
    assert (url in small) == all(values)  # the lookup rule, by hand, agrees with the library
    owners = ["".join(name for name, pos, _ in snapshots if i in pos) or "-" for i in positions]
    print(f"{label:15}  {str(positions):>12}  {str(values):>9}  {str(url in small):9}  "
          f"{str(url in items.values()):12}  {' '.join(owners)}")
    by_library = ["".join(name_of[key] for key in b.setters) or "-"
                  for b in bit_setters(small, url, items.values())]
    assert owners == by_library  # the "set by" column agrees with bloomedu.teaching.classroom
found = find_false_positive(small, list(items.values()), keys=candidates)
assert (found.key, found.tries) == (fooled, tried)  # the hand-made search agrees too
say("found after {tries} tries; chance for one safe URL: (9/32)^3 = {chance:.4f}, "
    "about 1 in {one_in:.0f}", tries=tried, chance=(9 / 32) ** 3, one_in=(32 / 9) ** 3)
lenders = {name for name, positions, _ in snapshots if set(positions) & set(small.bit_indices(fooled))}
guess_lenders.reveal(("one", "two", "three")[len(lenders) - 1])

# %%
fig, axes = plt.subplots(3, 1, figsize=(7.0, 4.2))
for ax, (label, url) in zip(axes, queries.items()):
    positions = small.bit_indices(url)
    groups = {"query, bit set": [i for i in positions if small.bits[i]],
              "query, bit clear": [i for i in positions if not small.bits[i]]}
    title = (phrase("{query}: maybe in", query=label) if url in small
             else phrase("{query}: certainly not in", query=label))
    draw_bit_groups(small.bits, groups, ax=ax, colors=["#59a14f", "#e15759"], title=title)
show("Three rows of 32 bit cells with the query's three bits marked: A finds all three set; the "
     "absent URL finds bits 21 and 23 clear, so it was never added; the false positive finds "
     "bits 13, 14 and 17 all set, one by each of C, B and A.")

# %% [markdown]
# The false positive borrows one bit from each of A, B and C (the last column): it resembles no
# single inserted item, no two items share a bit here, and the filter, which keeps only bits,
# cannot tell it from a real member. Its search took 62 tries where a safe URL is claimed with
# probability $(9/32)^3$, about 1 in 45: ordinary luck, as in lesson 05. With 32 bits for three
# items the rate is high; lesson 08 sizes a filter for a rate a service can live with.
#
# ### When a key's positions coincide
#
# A key's three positions are three values taken modulo 32. Nothing forces them apart.

# %%
guess_share = predict("In 32 bits with k = 3, what share of keys have fewer than 3 distinct "
                      "positions?", None)

# %%
coinciding = sum(len(set(small.bit_indices(url))) < small.num_hashes for url in candidates)
chance = 1 - (1 - 1 / small.num_bits) * (1 - 2 / small.num_bits)
say("safe URLs with coinciding positions: {coinciding} of {urls} = {share:.4f}",
    coinciding=coinciding, urls=len(candidates), share=coinciding / len(candidates))
say("by chance: 1 - (1 - 1/32)(1 - 2/32) = {chance:.4f}", chance=chance)
say("in the first section's 1,000 bits: 1 - (1 - 1/1000)(1 - 2/1000) = {chance:.4f}",
    chance=1 - (1 - 1 / 1000) * (1 - 2 / 1000))
guess_share.reveal(coinciding / len(candidates))

# %% [markdown]
# About one key in eleven, three times the 1 in 32 a first guess often gives: it is the birthday
# problem of lesson 02 again, with three positions instead of two people. Each position is its
# own scrambled value modulo m, so the second misses the first with probability $1 - 1/m$ and
# the third misses both with probability $1 - 2/m$; a key sets fewer than k bits with probability
# $1 - \prod_{j < k} (1 - j/m)$ (exercise 06.2). Such a key is an easier false positive, and the
# formulas already count it. In 1,000 bits it is one key in 330, and it fades as m grows.

# %% [markdown]
# ## A toy for one key
#
# The toy below shows one key at a time, as the interactive pages *Bloom Filters by Example* and
# Jason Davies' Bloom filter demo do: this lesson's `BloomFilter(m, k)` with m = 32 and k = 3,
# small enough to draw every bit. Type a key and its 3 bits light up; "add it" sets them; each set
# bit shows the numbers of the added keys behind it. It is the very filter of the course site's
# toy page, which runs in any browser without a kernel: the same key, m and k light the same bits
# there. `bloomedu.teaching.toy.toy_view` computes everything the toy shows; first its words for
# five added fruits and one key never added:

# %%
fruits = ["apple", "banana", "cherry", "date", "elderberry"]
print(toy_view(fruits, "fig").text())

# %%
guess_claimed = predict("Twelve of the 32 bits are set. How many of 'grape', 'kiwi', 'lemon', "
                        "'lime', 'mango', 'melon', 'peach' and 'plum' will the filter claim?", None)

# %%
claimed = 0
verdict_words = {"absent": phrase("absent"), "false positive": phrase("false positive")}
for name in ["grape", "kiwi", "lemon", "lime", "mango", "melon", "peach", "plum"]:
    view = toy_view(fruits, name)
    claimed += view.verdict == "false positive"
    print(f"{name:6} {str(view.positions):13} {verdict_words[view.verdict]}")
say("chance for one key never added: (12/32)^3 = {chance:.3f}", chance=(12 / 32) ** 3)
view = toy_view(fruits, "melon")
print(view.text())
guess_claimed.reveal(claimed, label="Claimed")

# %% [markdown]
# $(12/32)^3$ is about 5%, so about 0.4 of eight names is expected, and one is ordinary luck.
# "melon" is the one: its bits 12, 10 and 8 were set by "date", "elderberry" and "banana", one
# each, and the filter, which keeps only bits, cannot tell it from a key that was added. ("lime"
# has two equal positions, 22 and 22: a key of the previous section's one in eleven.)

# %%
view.draw()
show("The toy's 32 bits in two rows of 16: twelve are set by the five fruits, and melon's bits "
     "8, 10 and 12 are all set, by banana, elderberry and date, so the filter claims melon.")

# %% [markdown]
# The live toy (it needs a running kernel; the committed notebook shows it only once run; the
# site's toy page needs none): type in the box, press "add it", change m and k, and watch the
# bits. It opens on "lime", whose positions 22 and 22 coincide: three positions, two bits lit.
# Things to try:
#
# - Type "melon", then add "fig" (bits 25, 21 and 23) and type "melon" again: is it still
#   claimed? Adding keys only ever sets bits.
# - Add keys until about half the bits are set, and count how many new names come back claimed.
# - Raise m to 128 bits: the same keys are placed again. Is "melon" still claimed? Then try
#   k = 1 and k = 8 with many keys added.
# - Add a key, then type it again: the filter never says "no" to a key it holds.

# %% tags=["nbval-ignore-output"]
toy(fruits, "lime")

# %% [markdown]
# ## Recap
#
# - bloomedu's `BloomFilter(m, k)` hashes a key once; position i is
#   $\operatorname{fmix64}((h_1 + i h_2) \bmod 2^{64}) \bmod m$; the toy, here and on the site,
#   draws exactly this filter.
# - A lookup checks the same k bits an add sets: one 0 means "certainly never added"; all 1 means
#   "added, or its bits were borrowed", and a false positive can borrow from several keys.
# - A key's positions coincide by chance, with probability $1 - \prod_{j<k}(1 - j/m)$: one key
#   in eleven in 32 bits, one in 330 in 1,000.

# %% [markdown]
# ## Exercises
#
# Three exercises on this lesson: compute, predict, then measure. Replace `None` with your
# answer and run the cell: `check` tells you whether it is right and, when it is not, which slip
# it looks like. Worked solutions are in `solutions/06_inside_the_filter_solutions.ipynb`; try
# first.

# %% [markdown]
# **06.1 (compute).** Which bit is position i = 2 (counted from 0) of the key '789' in
# BloomFilter(1_000, 3)? Compute it by hand with hash128 and fmix64.
#
# The first section does it for '123'. To see your answer drawn, type '789' in the site's toy
# page with m = 1000 and k = 3: its third bit is position 2.

# %%
answer = None  # replace None with your answer
check.double_hash_position(answer, key='789', num_bits=1000, num_hashes=3, i=2)

# %% [markdown]
# **06.2 (predict).** If a key's 4 positions in 64 bits were independent uniform draws, what
# share of keys would have fewer than 4 distinct positions?
#
# Position j misses the j positions before it with probability $1 - j/m$.

# %%
answer = None  # replace None with your answer
check.coinciding_positions(answer, num_bits=64, num_hashes=4)

# %% [markdown]
# **06.3 (measure).** Measure that share on 100,000 random keys in BloomFilter(64, 4): the keys
# whose positions are not all distinct.
#
# `bit_indices(key)` gives a key's positions; random 64-bit integers make good keys.

# %%
answer = None  # replace None with your answer
check.measured_coinciding_positions(answer, num_bits=64, num_hashes=4, trials=100_000)

# %% [markdown]
# ## What comes next
#
# Every rate so far landed on the formula $(1 - e^{-kn/m})^k$. Lesson 07 (*The false-positive
# rate*) derives it, finds the k that minimises it, and measures the bottom of the valley.
#
# *Where this lesson's code lives:* `bloomedu/core/filter.py` (`BloomFilter`),
# `bloomedu/core/hashing.py` (the hashes) and `bloomedu/kernels/` (the bulk path),
# `bloomedu/workloads/urls.py`, `bloomedu/teaching/classroom.py`, `bloomedu/teaching/toy.py` (the
# toy) and `docs/_static/bloomedu-toy.js` (the site's); its tests: `tests/test_filter.py`,
# `tests/test_hashing.py`, `tests/test_classroom.py`, `tests/test_toy.py`,
# `tests/test_toy_page.py`. The README's table maps every article step to its module, lesson and test.
