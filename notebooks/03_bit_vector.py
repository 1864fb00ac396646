# ---
# jupyter:
#   bloomedu:
#     summary: "One hash and one bit per possible value: the article's degenerate Bloom\
#       \ filter and its false-positive rate $1 - (1 - 1/m)^n$."
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
# # 03 · The bit vector: one hash, one bit per hash value
#
# Lesson 02 (*Keeping only a 32-bit hash of each ID*) kept a hash of every click ID, in a set
# that still grows with every click. Step 3 of the first article swaps the set for a fixed array
# of bits, which the article calls a very degenerate Bloom filter.

# %% [markdown]
# ## Objectives
#
# - You will be able to build the article's bit vector by hand and check it against the
#   library's `BitVector`, bit for bit.
# - You will be able to derive the rate at which a key never added is reported seen, and
#   measure it honestly, on keys never inserted.
# - You will be able to compare what a bit vector and a set of hashes cost, and which mistakes
#   each makes at the same hash width.
#
# **Prerequisites:** lesson 02 (*Keeping only a 32-bit hash of each ID*).
#
# **Time:** about 60 minutes (teaching 40 min, exercises 20 min).

# %%
# %matplotlib inline
import numpy as np

from bloomedu import BitVector, HashedIds, click_stream, deduplicate, murmurhash2, score
from bloomedu.teaching.classroom import find_collision
from bloomedu.workloads.clicks import uuid4_strings
from bloomedu.teaching.exercises import check
from bloomedu.teaching.plots import decorate, draw_bits, new_axes, show
from bloomedu.teaching.predict import predict
from bloomedu.i18n import phrase, say
from bloomedu.core.theory import (bit_vector_false_positive_rate, collision_probability,
                                  expected_collisions)

SEED = 3

# %% [markdown]
# ## The article's index 47
#
# Truncate the hash to a few bits, use it as an index into an array of bits, and set that one
# bit. Symbols, as everywhere in bloomedu: **m** bits, **k** hash functions, **n** inserted items,
# **p** false-positive rate. The article names the hash width *n* and lesson 02 called it b; here
# it is `hash_bits`, so that n keeps meaning items: a `hash_bits`-bit hash needs
# $m = 2^{\text{hash bits}}$ bits.
#
# The article says: if the hash of `"123"` is 47, set bit 47. That is not a made-up number.
# `murmurhash2` is the npm package's `murmurhash.v2`, and with an 8-bit hash (m = 256) the
# remainder really is 47:

# %%
hash_bits = 8
full_hash = murmurhash2("123")
say("murmurhash2('123')         = {full_hash}", full_hash=full_hash)
say("murmurhash2('123') % 2**{hash_bits} = {index}", hash_bits=hash_bits,
    index=full_hash % 2**hash_bits)

# %% [markdown]
# ## Step 3 by hand, then the library
#
# The article builds its vector with `new Array(numberOfValues)`: a JavaScript array of 256
# slots, each holding `true` or nothing. That is a vector of flags, not of bits: an array slot
# costs several bytes. Here a Python list of $2^8$ booleans plays the same part (one 8-byte
# pointer per slot); a message is new when its slot is still `False`.

# %%
messages = [{"id": "123"}, {"id": "456"}, {"id": "123"}, {"id": "789"}]
bit_list = [False] * 2**hash_bits
kept_by_hand = []
for message in messages:
    index = murmurhash2(message["id"]) % 2**hash_bits
    if not bit_list[index]:
        bit_list[index] = True
        kept_by_hand.append(message)
print(kept_by_hand)

# %% [markdown]
# `bloomedu.BitVector` is the same idea, with real bits (one bit each, packed eight to a byte)
# and the `add` / `in` interface every dedup stage shares. It agrees with the hand-built list
# bit for bit:

# %%
vector = BitVector(hash_bits=hash_bits)
kept = deduplicate(messages, vector, key=lambda m: m["id"])
assert kept == kept_by_hand
assert vector.bits.to_bools().tolist() == bit_list
print(kept)
say("{vector!r}: bits set at {indices}", vector=vector,
    indices=np.flatnonzero(vector.bits.to_bools()).tolist())
say("the list's pointers: {list_bytes:,} bytes; the packed bits: {packed_bytes} bytes",
    list_bytes=8 * len(bit_list), packed_bytes=vector.nbytes)

# %% [markdown]
# ## Forty clicks in 256 bits, drawn
#
# A short seeded click stream goes through an 8-bit vector: 40 messages, of which 34 are
# genuine clicks and 6 are double-click copies. Each genuine ID lands on one of the 256 bits,
# as if at random; when two land on the same bit, the second is dropped as a "duplicate". This
# is lesson 02's birthday problem with N = 256 values.

# %%
clicks = click_stream(40, rate=10, double_click_rate=0.2, seed=SEED)
vector = BitVector(hash_bits=8)
kept = deduplicate(clicks, vector)
result = score(clicks, kept)
say("messages {messages}: genuine {genuine}, duplicates {duplicates}",
    messages=result.messages, genuine=result.genuine, duplicates=result.duplicates)
say("duplicates dropped {duplicates}, genuine clicks dropped {genuine}",
    duplicates=result.duplicates_dropped, genuine=result.genuine_dropped)
say("bits set {set_bits} of {m}", set_bits=vector.bits.count(), m=vector.num_bits)
genuine_ids = [click.id for click in clicks if not click.duplicate]
first_with = {}  # bit -> the first genuine ID that set it
collided = []
for key in genuine_ids:
    (bit,) = vector.bit_indices(key)
    if bit in first_with:
        collided.append(bit)
        say("bit {bit:3d}: {first} set it, {key} was dropped", bit=bit, first=first_with[bit],
            key=key)
    first_with.setdefault(bit, key)
assert len(collided) == result.genuine_dropped
say("theory: P(some shared bit) = {chance:.3f}, expected shared {expected:.2f}",
    chance=collision_probability(result.genuine, 256),
    expected=expected_collisions(result.genuine, 256))
bools = vector.bits.to_bools()
for start in range(0, vector.num_bits, 32):
    row = ["o" if start + i in collided else "#" if bit else "." for i, bit in enumerate(bools[start:start + 32])]
    print(f"{start:3d} {''.join(row)}")

# %% [markdown]
# The grid shows the 256 bits, 32 per row: dark cells are set, and the orange cells are the bits
# that two different genuine IDs share (the text grid above prints the same bits: `#` set, `o`
# shared). A bit's index is its row's label plus its column: bit 236 is in the row labelled 224,
# column 12.

# %%
draw_bits(vector.bits, highlight=collided, width=32, indices=True,
          title=phrase("BitVector(hash_bits=8) after {n} clicks; orange = bits {collided}, each "
                       "set by two genuine IDs", n=len(clicks),
                       collided=", ".join(map(str, collided))))
show("The 256 bits of the 8-bit vector after 40 clicks, 32 per row, rows labelled 0 to 224: "
     "32 dark set bits scattered over the grid, two of them orange, bit 135 (row 128, column "
     "7) and bit 236 (row 224, column 12), each set by two different genuine IDs.")

# %% [markdown]
# With 34 IDs on 256 bits a shared bit is likely (chance 0.90), and about two are expected;
# this stream has exactly two, bits 236 and 135, so 32 bits are set for 34 genuine clicks and 2
# genuine clicks were dropped. Each time two different IDs landed on the
# same bit, and the second looked like a double click. That is a **false positive**, the only
# kind of mistake a bit vector makes. The opposite mistake is impossible: once an ID's bit is
# set it stays set, so a real duplicate is always caught.

# %% [markdown]
# `bloomedu.teaching.classroom.find_collision` finds such a pair in any stream: it walks through
# the genuine IDs and stops at the first one whose bit an earlier ID already took. It accepts the
# vector itself, whose `bit_indices` is the hash, and finds the first pair printed above:

# %%
collision = find_collision(vector, keys=genuine_ids)
print(collision)
assert collision.value == collided[0]
assert collision.second not in {click.id for click in kept}  # dropped as a "duplicate"

# %% [markdown]
# ## How often does a new key look old?
#
# To measure it honestly, the keys we insert and the keys we query are disjoint: every
# "present" answer to a query is a false positive. A 16-bit vector (m = 65,536 bits, 8 KiB)
# takes up to 60,000 random UUIDs; after each checkpoint 10,000 fresh UUIDs are queried.

# %%
guess_rate = predict("Once 60,000 IDs are in the 65,536 bits, what share of fresh IDs does the "
                     "vector wrongly claim?", None)

# %% [markdown]
# A key that was never inserted lands on a uniformly random bit, so it is reported present
# exactly when that bit is set. After n insertions each bit is still 0 with probability
# $(1 - 1/m)^n$, so
#
# $$p = 1 - \left(1 - \frac{1}{m}\right)^n = 1 - \left(1 - 2^{-\text{hash bits}}\right)^n$$
#
# (`bloomedu.core.theory.bit_vector_false_positive_rate`). The last column of the table is
# each measurement's z-score: its distance from the formula in standard deviations of a share
# of 10,000 queries (the primer `deeper/01_spread_and_sd` introduces both).

# %%
hash_bits = 16
m = 2**hash_bits
checkpoints = [500, 1_000, 2_000, 5_000, 10_000, 20_000, 40_000, 60_000]
num_queries = 10_000
rng = np.random.default_rng(SEED)
keys = uuid4_strings(checkpoints[-1] + num_queries, rng)
inserted, queries = keys[:checkpoints[-1]], keys[checkpoints[-1]:]
assert not set(inserted) & set(queries)

vector = BitVector(hash_bits)
rows = []
for start, n in zip([0] + checkpoints, checkpoints):
    for key in inserted[start:n]:
        vector.add(key)
    measured = sum(key in vector for key in queries) / num_queries
    rows.append((n, vector.bits.count() / m, measured, bit_vector_false_positive_rate(num_bits=m, n=n)))

say("m = {m} bits, {queries} queries per row", m=m, queries=num_queries)
say("       n  bits set  measured p  1-(1-1/m)^n  (meas-theory)/sd")
for n, filled, measured, theory in rows:
    sd = (theory * (1 - theory) / num_queries) ** 0.5
    print(f"{n:8d}  {filled:8.4f}  {measured:10.4f}  {theory:11.4f}  {(measured - theory) / sd:+16.2f}")
guess_rate.reveal(rows[-1][2])

# %%
ax = new_axes()
grid = np.linspace(0, checkpoints[-1], 200)
ax.plot(grid, [bit_vector_false_positive_rate(num_bits=m, n=n) for n in grid],
        label=r"$1 - (1 - 1/m)^n$")
ax.plot([r[0] for r in rows], [r[2] for r in rows], "o",
        label=phrase("measured, {queries} fresh keys", queries=num_queries))
decorate(ax, xlabel="n, items inserted", ylabel="false-positive rate p",
         title=phrase("Bit vector, m = 2**{hash_bits} bits: p grows with every insertion",
                      hash_bits=hash_bits))
show("False-positive rate against n from 0 to 60,000 IDs in 65,536 bits: the measured points "
     "lie on the curve 1 - (1 - 1/m)^n, which rises almost in a straight line at first and "
     "bends over, reaching only 0.60 at n = 60,000.")

# %% [markdown]
# 0.60 (0.6043 measured, 0.5997 from the formula), not the 0.92 that 60,000 / 65,536 suggests:
# 60,000 IDs set only 60% of the 65,536 bits, because so many land on a bit already set, and a fresh key is wrongly claimed exactly when its
# one bit is set.
#
# Every measured rate sits within a few standard deviations of the formula (the largest z is
# +2.00, at n = 40,000: the primer shows that the largest of eight rows passes 2 about one time
# in three), and it
# tracks the fraction of bits set: a fresh key simply samples one random bit. While n is small
# compared to m the rate is close to $n/m$; by $n \approx m$ it is near $1 - 1/e$. The filter never
# says "full": it just drops more and more genuine clicks.

# %% [markdown]
# ## Storage: fixed m/8 bytes
#
# The bit vector costs $2^{\text{hash bits}}/8$ bytes whatever n is (`nbytes`). Lesson 02's set of
# hashes grows with n, at tens of bytes per ID in Python (lesson 02 measured it); even packed, a
# 32-bit hash takes 4 bytes. Below, the 16-bit vector against that packed ideal:

# %%
sizes = [1_000, 10_000, 60_000]
say("BitVector(16).nbytes = {nbytes} bytes for any n", nbytes=BitVector(16).nbytes)
say("       n  packed 32-bit hashes (4 B each)  bit vector")
for n in sizes:
    print(f"{n:8d}  {4 * n:31d}  {BitVector(16).nbytes:10d}")

# %% [markdown]
# ## A set of hashes against the vector
#
# The vector is the densest store of hashes. Does that density cost it accuracy? Both stages
# run on one 10,000-click stream with a 16-bit hash: a set of 16-bit hashes (`HashedIds` with
# `murmurhash2(key) % 2**16`) and `BitVector(16)`.

# %%
guess_same = predict("Which drops more genuine clicks of the 10,000: the set of 16-bit hashes or "
                     "the 16-bit vector?", None,
                     choices=("the set", "the vector", "the same"))

# %%
stream = click_stream(10_000, seed=SEED)
bits_stage = BitVector(16)
kept_set = deduplicate(stream, HashedIds(lambda key: murmurhash2(key) % 2**16))
kept_bits = deduplicate(stream, bits_stage)
result = score(stream, kept_bits)
say("set of hashes keeps {by_set} of {messages}, the vector {by_vector}; same messages: {same}",
    by_set=len(kept_set), messages=result.messages, by_vector=len(kept_bits),
    same=kept_set == kept_bits)
say("genuine clicks dropped {dropped} = {share:.1%} of {genuine}", dropped=result.genuine_dropped,
    share=result.genuine_dropped / result.genuine, genuine=result.genuine)
say("bits set at the end: {set_bits:,} (one per message kept) = {fill:.1%} of {m:,}",
    set_bits=bits_stage.bits.count(), fill=bits_stage.bits.count() / bits_stage.num_bits,
    m=bits_stage.num_bits)
assert kept_set == kept_bits
guess_same.reveal("the same" if kept_set == kept_bits else
                  "the set" if len(kept_set) < len(kept_bits) else "the vector")

# %% [markdown]
# The same messages, the same 702 genuine clicks lost. A set of b-bit hashes and a $2^b$-bit
# vector know exactly the same thing, which hash values were seen, so they make the same
# mistakes; the vector only stores that knowledge more densely.
#
# ## The article's day of clicks
#
# The article's scenario keeps one day of clicks at 10,000 a second: 864,000,000 IDs. To keep
# the full 32-bit murmurhash as an index the vector needs $2^{32}$ bits. The numbers (computed,
# not allocated):

# %%
day = 10_000 * 24 * 3600
m_day = 2**32
vector_bytes = m_day // 8
p_end = bit_vector_false_positive_rate(num_bits=m_day, n=day)
p_mean = 1 - m_day / day * p_end  # p averaged over the day: mean of 1 - (1 - 1/m)^i, i < n
say("IDs in a day                      {ids:>15,d}", ids=day)
say("2**32-bit vector, bytes           {nbytes:>15,d}", nbytes=vector_bytes)
say("n where the vector beats 4 B/hash {n:>15,d}", n=m_day // 32)
say("p at the end of the day           {p:>15.4f}", p=p_end)
say("p averaged over the day's clicks  {p:>15.4f}", p=p_mean)

# %% [markdown]
# Half a gigabyte instead of lesson 01's 31.1 GB of IDs, and smaller than lesson 02's 3.46 GB
# of packed 32-bit hashes once more than $2^{32}/32$ IDs are kept. But the mistakes are lesson
# 02's too: a fresh ID at the end of the day is claimed with probability 0.1822, lesson 02's
# chance that the day's last click is lost, and the average over the day, 9.42%, is lesson 02's
# share of the day's clicks lost, 81 million of them: the same knowledge, the same mistakes.
#
# The 10,000-click stream above lost 7.1% of its genuine clicks, less than the article's day:
# what decides the loss is how full the vector gets. Every message kept sets one new bit, so
# 9,184 kept messages leave the 65,536 bits 14.0% full, where the article's day leaves $2^{32}$
# bits 18% full. A smaller hash with fewer clicks can lose less; at the same n/m it loses the
# same.

# %% [markdown]
# ## Recap
#
# - The bit vector keeps one bit per possible hash value: $2^{\text{hash bits}}/8$ bytes, fixed,
#   whatever n is.
# - It never misses a duplicate; a key never added is wrongly reported seen with probability
#   $1 - (1 - 1/m)^n$, the share of bits set, close to $n/m$ while the vector is sparse.
# - At the same hash width a set of hashes and a bit vector know the same thing and make the
#   same mistakes: the vector only stores it more densely.
# - With one hash the only way to lower the rate is more bits.

# %% [markdown]
# ## Exercises
#
# Three exercises on this lesson: compute, predict, then measure. Replace `None` with your
# answer and run the cell: `check` tells you whether it is right and, when it is not, which slip
# it looks like. Worked solutions are in `solutions/03_bit_vector_solutions.ipynb`; try first.

# %% [markdown]
# **03.1 (compute).** What is the false-positive rate of a vector of $2^8$ bits after 100 IDs?
#
# The section on how often a new key looks old has the formula.

# %%
answer = None  # replace None with your answer
check.bit_vector_fpp(answer, hash_bits=8, items=100)

# %% [markdown]
# **03.2 (predict).** How many hash bits (hash_bits) must the vector use so that 1,000 IDs give
# a false-positive rate of at most 0.01?
#
# Try hash_bits = 10, 11, ... with `bit_vector_false_positive_rate`, or solve the formula for m
# and take its base-2 logarithm, rounded up.

# %%
answer = None  # replace None with your answer
check.bit_vector_hash_bits(answer, items=1000, fpp=0.01)

# %% [markdown]
# **03.3 (measure).** Insert 40 random IDs into BitVector(hash_bits=8) and test 10,000 new IDs:
# what fraction does it claim to have seen?
#
# As in that section, the keys inserted and the keys queried must be different:
# `uuid4_strings(items + trials, rng)` gives both.

# %%
answer = None  # replace None with your answer
check.measured_bit_vector_fpp(answer, hash_bits=8, items=40, trials=10_000)

# %% [markdown]
# ## What comes next
#
# With one hash function, the only way to lower p is to add bits: $p \approx n/m$ while the
# vector is sparse. The article's next step makes **several** `hash_bits`-bit hash functions out of one by
# salting the input, and sets one bit per function. Lesson 04 (*Salted hashes*) builds that
# family, reproduces the article's printed 42 and 174, and checks that differently salted hashes
# behave as independent ones.
#
# *Where this lesson's code lives:* `bloomedu/steps/salted.py` (`BitVector`), `bloomedu/core/bits.py`,
# `bloomedu/core/theory.py`; its tests: `tests/test_salted.py`, `tests/test_bits.py`. The README's table
# maps every article step to its module, lesson and test.

