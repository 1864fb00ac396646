# ---
# jupyter:
#   bloomedu:
#     summary: 'Keep only a 32-bit hash of each ID: the memory it saves, and the genuine
#       clicks its collisions drop, against the birthday bound.'
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
# # 02 · Keeping only a 32-bit hash of each ID
#
# Lesson 01 (*Remembering every click ID*) deduplicated clicks exactly with a dict of every ID
# seen, at several times the 36 characters of each ID. Step 2 of the first article stores a
# 32-bit hash of each ID instead: this lesson measures what that saves, and what it costs.

# %% [markdown]
# ## Objectives
#
# - You will be able to deduplicate with a set of hashes, computed with the article's own
#   `murmurhash.v2` or with MurmurHash3.
# - You will be able to measure what a set of hashes costs in Python against packed 4-byte hashes.
# - You will be able to predict how many IDs share a hash with an earlier one, from the birthday
#   bound, and check it on four million IDs.
# - You will be able to say what a collision costs a deduplicator over a day.
#
# **Prerequisites:** lesson 01 (*Remembering every click ID*). From this lesson on, tables print
# a standard deviation (sd) beside measurements: if the term is new, read the short primer
# `deeper/01_spread_and_sd` (spread, sd, z-scores and intervals, about 15 minutes) before this
# lesson.
#
# **Time:** about 60 minutes (teaching 40 min, exercises 20 min).

# %%
# %matplotlib inline
import mmh3
import numpy as np

from bloomedu import HashedIds, click_stream, deduplicate, score
from bloomedu.teaching.classroom import find_collision
from bloomedu.teaching.predict import predict
from bloomedu.i18n import phrase, say
from bloomedu.workloads.clicks import uuid4_bytes, uuid4_strings
from bloomedu.steps.dedup import add_all
from bloomedu.teaching.exercises import check
from bloomedu.core.hashing import murmur3_32, murmurhash2, n_bit_hash_function
from bloomedu.teaching.memory import allocated_bytes
from bloomedu.teaching.plots import decorate, draw_bytes_per_item, new_axes, show
from bloomedu.core.theory import collision_probability, expected_collisions

SEED = 2

# %% [markdown]
# ## Which murmur?
#
# A hash is a fixed-size number computed from the text, so 4 bytes replace 36 characters. The
# trade is exactness: different IDs can have the same hash, and the stage cannot tell them
# apart. Symbols, as everywhere in bloomedu: **n** items (IDs) stored; a b-bit hash has
# $N = 2^b$ possible values.
#
# The article uses MurmurHash2 through the npm package `murmurhash` (`murmurhash.v2`).
# `bloomedu.murmurhash2` reproduces it bit for bit. `HashedIds` uses MurmurHash3 by default (the
# x86 32-bit variant, computed by the `mmh3` package), the later and more widely used version.
# Both map any text to 32 bits with a good spread, which is all this step needs. The two give
# different numbers for the same ID:

# %%
say("   id  murmurhash2   murmur3_32")
for key in ["123", "456", "789"]:
    print(f"{key:>5}  {murmurhash2(key):11d}  {murmur3_32(key):11d}")

# %% [markdown]
# ## Step 2 by hand
#
# This is lesson 01's loop with a set of hashes in place of the dict of IDs, with the article's
# own hash; `HashedIds(hash_function=...)` is the same stage inside the library, and keeps the
# same messages and the same hashes:

# %%
messages = [{"id": "123"}, {"id": "456"}, {"id": "123"}, {"id": "789"}]
seen_hashes = set()
kept_by_hand = []
for message in messages:
    hashed = murmurhash2(message["id"])
    if hashed not in seen_hashes:
        seen_hashes.add(hashed)
        kept_by_hand.append(message)
print(kept_by_hand)
print(sorted(seen_hashes))
stage = HashedIds(hash_function=murmurhash2)
assert deduplicate(messages, stage, key=lambda m: m["id"]) == kept_by_hand
assert stage.hashes == seen_hashes
say("{n} hashes kept", n=len(stage))

# %% [markdown]
# ## On the click stream
#
# Ten seconds of traffic at 10,000 messages a second, as in lesson 01 (with another seed), now
# deduplicated with 32-bit MurmurHash3 hashes. The last line is the theory's expected number of
# genuine clicks lost, which the section on collisions below explains:

# %%
RATE = 10_000
clicks = click_stream(10 * RATE, rate=RATE, double_click_rate=0.02, seed=SEED)
result = score(clicks, deduplicate(clicks, HashedIds()))
say("messages             {n:7d}", n=result.messages)
say("double clicks        {n:7d}", n=result.duplicates)
say("duplicates dropped   {n:7d}", n=result.duplicates_dropped)
say("genuine dropped      {n:7d}", n=result.genuine_dropped)
say("expected by theory   {mean:7.2f}", mean=expected_collisions(result.genuine, 2**32))
assert result.duplicates_missed == 0

# %% [markdown]
# A stage built on hashes still catches every duplicate. A copy of a message has the same ID, so
# it has the same hash. Mistakes can only go the other way: a genuine click whose ID shares a hash
# with an earlier one is dropped as if it were a copy.
#
# ## Memory saved, measured
#
# Lesson 01 measured what Python spends on a dict of IDs with their strings (`SeenIds`, 105.8
# to 123.5 bytes per ID on the Python that executed the lessons) and on a plain set's table
# alone. Here `allocated_bytes` measures, for the same n, the two ways of keeping hashes
# instead:
#
# * **HashedIds**: a Python `set` of hashes. The ID strings can be freed once hashed.
# * **uint32 array**: the same hashes packed in a numpy array, exactly 4 bytes each. That is what
#   a 32-bit hash promises (the article itself never counts it), but such an array cannot be
#   searched quickly while it grows.
#
# The byte counts depend on the Python version, so the tests do not compare this cell's output:

# %% tags=["nbval-ignore-output"]
sizes = [1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000]
rng = np.random.default_rng(SEED)
stored = {"HashedIds": [], phrase("uint32 array"): []}
for n in sizes:
    ids = uuid4_strings(n, rng)
    stored["HashedIds"].append(allocated_bytes(lambda: add_all(HashedIds(), ids))[1])
    stored[phrase("uint32 array")].append(
        allocated_bytes(lambda: np.fromiter(map(murmur3_32, ids), np.uint32, n))[1])
say("       n      HashedIds, B/ID   uint32 array, B/ID")
for row, n in enumerate(sizes):
    print(f"{n:8d}" + "".join(f"  {nbytes[row] / n:19.1f}" for nbytes in stored.values()))
ids_per_day = RATE * 24 * 60 * 60
say("scaled to the article's day of {ids:,} IDs, at n = {n:,}:", ids=ids_per_day, n=sizes[-1])
for label, nbytes in stored.items():
    say("  {label:12}  {gb:5.1f} GB", label=label, gb=nbytes[-1] / sizes[-1] * ids_per_day / 1e9)

# %%
draw_bytes_per_item(sizes, stored, 4, "4 bytes per 32-bit hash, packed",
                    title="Memory per ID: a set of hashes against packed hashes")
show("Bytes per ID against n on a log axis, 1,000 to 100,000: the set of hashes stays between "
     "about 65 and 140 bytes, jumping up and down as the set grows in steps, while the packed "
     "uint32 array lies flat on the dashed line of 4 bytes per hash.")

# %% [markdown]
# In Python a set of hashes costs tens of bytes per ID, not 4. Its table is lesson 01's set
# table (41.9 bytes per ID there at n = 100,000, 104.9 at n = 5,000 and 20,000), and each hash
# adds a Python `int` object of 32 bytes as allocated: 73.9 and 137.0 here. At n = 5,000 and
# 20,000, just after one of the set's jumps, the set of hashes costs more per ID than lesson
# 01's dict with its strings (105.8). The 4 bytes per ID that a 32-bit hash promises need a
# packed array of 32-bit numbers: 3.46 GB for the article's day, against the 31.1 GB of its
# 36-character IDs, a sum the article never makes. That is what the last column shows, and what
# the bit vector of the next lesson gives in a form that is quick to search.

# %% [markdown]
# ## Collisions of a 32-bit hash as n grows
#
# A 32-bit hash has $N = 2^{32}$ values, over four billion. Ten seconds of clicks, about 98,000
# genuine ones, lost one of them (the first table). Four million IDs are forty times as many.

# %%
guess_collisions = predict("How many of 4,000,000 random IDs land on a 32-bit hash value "
                           "already taken?", None)

# %% [markdown]
# The birthday problem gives the answer: after n hashes, the expected number of them that land
# on a value already taken is
#
# $$n - N\left(1 - \left(1 - \frac{1}{N}\right)^n\right) \approx \frac{n^2}{2N},$$
#
# the birthday bound (`bloomedu.core.theory.expected_collisions`; `collision_probability` is
# the chance of at least one). *Going deeper:* `deeper/02_birthday_bound` derives both in a few
# lines, and measures when the first collision comes.
#
# To check it we hash four million random UUID v4 strings with MurmurHash3, as `HashedIds`
# does. For speed this calls `mmh3` directly on the 36-byte IDs; a spot check shows it gives the
# same values as `murmur3_32`. Then, for growing n, we count n minus the number of distinct
# hashes among the first n. Beside each count the table prints its standard deviation (sd),
# how far a count typically lands from the theory by chance (`deeper/01_spread_and_sd` shows
# where it comes from).

# %%
N_MAX, CHUNK = 4_000_000, 500_000
rng = np.random.default_rng(SEED)
chunks = []
for _ in range(N_MAX // CHUNK):  # in chunks, so the ID strings never fill the memory
    keys = uuid4_bytes(CHUNK, rng).tolist()
    chunks.append(np.fromiter((mmh3.hash(key, 0, False) for key in keys), np.uint32, CHUNK))
    assert int(chunks[-1][0]) == murmur3_32(keys[0].decode())  # the spot check
hashes = np.concatenate(chunks)
say("{n:,} IDs hashed; the last: {key} -> {hash}", n=hashes.size, key=keys[-1].decode(),
    hash=hashes[-1])

# %%
def collisions_in_prefix(values, n):
    """n minus the number of distinct values among the first n."""
    ordered = np.sort(values[:n])
    return int(np.count_nonzero(ordered[1:] == ordered[:-1]))


N32 = 2**32
prefixes = [10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000, 2_000_000, 4_000_000]
measured = [collisions_in_prefix(hashes, n) for n in prefixes]
expected = [expected_collisions(n, N32) for n in prefixes]
say("        n  measured   expected      sd      n²/2N  P(any)")
for n, got, mean in zip(prefixes, measured, expected):
    print(f"{n:9d}  {got:8d}  {mean:9.2f}  {np.sqrt(mean):6.2f}  {n * n / (2 * N32):9.2f}  "
          f"{collision_probability(n, N32):6.3f}")
assert all(abs(got - mean) <= 3 * np.sqrt(mean) + 1 for got, mean in zip(measured, expected))
guess_collisions.reveal(measured[-1])

# %% [markdown]
# $n^2/(2N)$ gives 1.16 at n = 100,000 and 1,862.65 at n = 4,000,000 (the `n²/2N` column); the
# four million hashed IDs gave 0 and 1,867. Forty times as many IDs give about 1,600 times as many collisions
# ($40^2 = 1{,}600$): the count grows with the square of n, because every new ID can collide
# with every ID before it.
#
# The sd column is the square root of the expected count: collisions are many rare, nearly
# independent events, so their count is close to Poisson. Every measured count lies within a
# few sd of the theory, the farthest (n = 200,000) 1.2 sd below it (the `assert` above checks
# three, plus one for the smallest counts).

# %%
ax = new_axes()
low_band = [max(mean - 2 * np.sqrt(mean), 1e-3) for mean in expected]
high_band = [mean + 2 * np.sqrt(mean) for mean in expected]
ax.fill_between(prefixes, low_band, high_band, color="0.85", label="theory ± 2 sd")
ax.loglog(prefixes, expected, "k--", label="theory: expected_collisions(n, 2**32)")
seen = [(n, c) for n, c in zip(prefixes, measured) if c > 0]
ax.loglog(*zip(*seen), "o", label="measured")
ax.plot([n for n, c in zip(prefixes, measured) if c == 0], [1e-2] * measured.count(0), "x",
        color="C0", label="measured 0 (drawn at 0.01)")
decorate(ax, xlabel="n, IDs hashed", ylabel="IDs whose hash was already taken",
         title="Collisions of 32-bit MurmurHash3 on random UUIDs")
show("Collisions against n, both on log axes, from 10,000 to 4,000,000 IDs: the measured counts "
     "lie inside the grey band of theory plus or minus 2 sd around a dashed line that rises "
     "with the square of n, from about 0.01 to about 1,860; the four smallest n measured 0, drawn as crosses at 0.01.")

# %% [markdown]
# ## What a collision costs: a genuine click lost
#
# In the dedup stage, a collision means a genuine click is taken for a double click and dropped.
# On ten seconds of traffic a 32-bit hash loses about one click, too few to study. A shorter hash
# makes the losses visible: `n_bit_hash_function(b, "", murmur3_32)` keeps the remainder of the
# hash modulo $2^b$, which is the article's own way of getting a b-bit hash. With b = 16,
# `bloomedu.teaching.classroom.find_collision`, which walks through fresh click IDs and stops at
# the first hash it has met before, finds two IDs that such a stage confuses within a few hundred
# (any seed gives another pair, live in front of a class), and the stage drops the second as a
# copy:

# %%
hash_16 = n_bit_hash_function(16, "", murmur3_32)
collision = find_collision(hash_16, seed=SEED)
print(collision)
pair = [{"id": collision.first}, {"id": collision.second}]
kept = deduplicate(pair, HashedIds(hash_function=hash_16), key=lambda m: m["id"])
say("messages kept by a 16-bit HashedIds: {kept} of 2; the second, genuine click is lost",
    kept=len(kept))

# %% [markdown]
# Each width now runs on this lesson's stream. The theory expects
# `expected_collisions(genuine clicks, 2**b)` of them to be lost.

# %%
say("b bits  genuine    lost   expected   lost %  dups missed")
for hash_bits in [16, 20, 24, 32]:
    stage = HashedIds(hash_function=n_bit_hash_function(hash_bits, "", murmur3_32))
    r = score(clicks, deduplicate(clicks, stage))
    mean = expected_collisions(r.genuine, 2**hash_bits)
    print(f"{hash_bits:6d}  {r.genuine:7d}  {r.genuine_dropped:6d}  {mean:9.2f}  "
          f"{100 * r.genuine_dropped / r.genuine:7.3f}  {r.duplicates_missed:11d}")

# %% [markdown]
# Every width catches every duplicate (the last column is 0). What the hash width buys is fewer
# lost genuine clicks, and each lost click is a click the advertiser does not pay for.
#
# The table above lost 1 of the
# 98,169 genuine clicks in ten seconds of stream; a whole day holds 8,640 times as many IDs, all
# kept in one set of 32-bit hashes.

# %%
guess_day = predict("What is the chance that the day's last genuine click, the 864,000,000th, "
                    "is dropped as a copy?", None)

# %%
lost_per_day = expected_collisions(ids_per_day, N32)
say("genuine clicks in a day           {ids:>13,d}", ids=ids_per_day)
say("expected lost to 32-bit collisions {lost:>12,.0f}", lost=lost_per_day)
say("share of the day's clicks          {percent:>11.2f} %",
    percent=100 * lost_per_day / ids_per_day)
say("chance the last click of the day is lost {chance:.3f}",
    chance=1 - (1 - 1 / N32) ** (ids_per_day - 1))
guess_day.reveal(round(1 - (1 - 1 / N32) ** (ids_per_day - 1), 3), label="Computed")

# %% [markdown]
# 0.182: by evening nearly one new click in five finds its hash already taken. Every ID of the
# day stays in the set, and a new click is lost exactly when its hash hits one of the values
# already taken, so its chance is the share of the $2^{32}$ values taken so far. Over the day
# that adds up to 81 million lost clicks, 9.42% of them: at the article's volume the 32-bit
# hash is no longer safe. Multiplying the ten seconds' 1 lost click by 8,640 would give only
# about 8,600: the losses grow with the square of n, not in proportion to it. Four bytes per ID
# bought a memory saving at the price of exactness, and at this volume that price is high. The
# article keeps the idea of remembering hashes, but stores them as single bits, and then uses
# several hash functions.

# %% [markdown]
# ## Recap
#
# - A set of 32-bit hashes catches every duplicate (a copy has the same hash) but drops a
#   genuine click whenever its hash was already taken.
# - In Python a set of hashes still costs tens of bytes per ID, at some n more than the dict
#   of IDs; only packed storage reaches 4 bytes per ID.
# - Among n hashes of N values about $n^2/(2N)$ land on a taken value (the birthday bound): 1,867
#   measured among 4,000,000 IDs, against 1,862 expected.
# - The losses grow with the square of n: 81 million genuine clicks over the article's day.

# %% [markdown]
# ## Exercises
#
# Three exercises on this lesson: compute, predict, then measure. Replace `None` with your
# answer and run the cell: `check` tells you whether it is right and, when it is not, which slip
# it looks like. Worked solutions are in `solutions/02_hashed_ids_solutions.ipynb`; try first.

# %% [markdown]
# **02.1 (compute).** One hour of clicks brings 36,000,000 IDs. How many of them are expected to
# hit a 32-bit hash value already taken?
#
# The section on collisions of a 32-bit hash gives the formula, and its exact form in
# `bloomedu.core.theory`.

# %%
answer = None  # replace None with your answer
check.expected_collisions(answer, n=36_000_000, hash_bits=32)

# %% [markdown]
# **02.2 (predict).** After how many IDs is a collision of a 24-bit hash more likely than not?
#
# `collision_probability(n, 2**24)` is the chance; find where it crosses one half, or use the
# formula that `deeper/02_birthday_bound` derives.

# %%
answer = None  # replace None with your answer
check.birthday_half(answer, hash_bits=24)

# %% [markdown]
# **02.3 (measure).** Deduplicate 100,000 genuine clicks (the first 100,000 messages of a click
# stream that are not double clicks) with a HashedIds that keeps 22-bit MurmurHash3 hashes: how
# many genuine clicks were dropped?
#
# Draw the stream with `click_stream` (a few thousand messages more than you need, since some
# are copies), keep the first 100,000 messages with `duplicate=False`, and run them through
# `deduplicate` with `HashedIds(hash_function=n_bit_hash_function(22, "", murmur3_32))`. Every
# message is genuine, so each one dropped is a genuine click lost.

# %%
answer = None  # replace None with your answer
check.genuine_dropped(answer, genuine=100_000, hash_bits=22)

# %% [markdown]
# ## What comes next
#
# Lesson 03 (*The bit vector*) replaces the growing set of hashes with a fixed array of $2^b$
# bits, one bit per possible hash value. The memory no longer depends on n, and its mistakes
# follow the same theory measured here.
#
# *Where this lesson's code lives:* `bloomedu/steps/dedup.py` (`HashedIds`), `bloomedu/core/hashing.py`,
# `bloomedu/core/theory.py`, `bloomedu/teaching/classroom.py`; its tests: `tests/test_dedup.py`,
# `tests/test_hashing.py`, `tests/test_theory.py`. The README's table maps every article step to
# its module, lesson and test.

