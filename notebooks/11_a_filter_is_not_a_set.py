# ---
# jupyter:
#   bloomedu:
#     summary: What a filter does (merge, save, estimate) and cannot do that a set does
#       (list, count, intersect); crafted false positives a secret key stops.
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
# # 11 · A filter is not a set
#
# Lesson 10 (`10_blacklist_cache.ipynb`) put a filter of a million malicious URLs in front of a
# database. The second article, *"Bloom Filter: come memorizzare 1 Milione di stringhe in meno di
# 2MB?"*, calls such a filter "an implementation of a Set". This lesson tests that sentence on
# what a service does with its filter besides asking it: merging the filters of two shards,
# intersecting two lists, saving, counting, and facing someone who knows how it hashes.

# %% [markdown]
# ## Objectives
#
# - You will be able to combine the filters of two shards with `|` and say what the result is, save
#   a filter as bytes, and estimate from its bits how many keys it holds and how often it errs.
# - You will be able to say what `A & B` holds, and predict how often it claims a key that only
#   one of them held.
# - You will be able to name what a set does that a filter cannot.
# - You will be able to explain how someone who knows the hash crafts false positives, and what
#   a keyed filter changes for them.
#
# **Prerequisites:** 09 · One million URLs in under 2 MB, 10 · A blacklist cache in front of a
# database.
#
# **Time:** about 60 minutes (teaching 40 min, exercises 20 min).

# %%
from bloomedu import BloomFilter
from bloomedu.core.keyed import KeyedBloomFilter
from bloomedu.i18n import phrase, say
from bloomedu.teaching.exercises import check
from bloomedu.teaching.plots import decorate, new_axes, show
from bloomedu.teaching.predict import predict
from bloomedu.workloads.urls import malicious_urls, safe_urls

SEED = 7
n, p = 1_000_000, 0.001
malicious = malicious_urls(n, seed=SEED)
safe = safe_urls(n, seed=SEED)
bloom = BloomFilter.from_capacity(n, p)  # lesson 09's filter, the same bits
bloom.add_many(malicious)
say("{bloom!r} holding {n:,} malicious URLs; {safe:,} safe URLs never inserted", bloom=bloom, n=n,
    safe=len(safe))

# %% [markdown]
# ## 1. Merging the filters of two shards
#
# A blacklist too large for one machine is split into shards, and each shard builds its own
# filter. Two filters with the same m, k and hashing combine with a bitwise OR, `|`: a bit of the
# result is set when it is set in either. Here each shard holds half of the million URLs.

# %%
guess_merge = predict("Shards A and B each have about 4.22 million of their 14,377,588 bits set. "
                      "How many bits does A | B have set?", None)

# %%
half = n // 2
shard_a = BloomFilter.from_capacity(n, p)
shard_a.add_many(malicious[:half])
shard_b = BloomFilter.from_capacity(n, p)
shard_b.add_many(malicious[half:])
merged = shard_a | shard_b
say("bits set: shard A {a:,}, shard B {b:,}, A | B {union:,}, the filter of all {all:,}",
    a=shard_a.bits_set(), b=shard_b.bits_set(), union=merged.bits_set(), all=bloom.bits_set())
say("A | B equals the filter of all {n:,} URLs: {equal}", n=n, equal=merged == bloom)

# %%
guess_merge.reveal(merged.bits_set())

# %% [markdown]
# 7,205,004, not the 8.4 million of the two counts added: about 1.2 million bits were set in both
# shards, by different URLs. And A | B is, bit for bit, the filter of all the URLs: a bit of that
# filter is set when some URL set it, and that URL is in one shard or the other, so the bit is set
# in A or in B. Adding keys only ever sets bits, so the order and the split do not matter: `|` of
# filters is the filter of the union.
#
# ## 2. What A & B holds
#
# The library also offers `&`, a bitwise AND: is it the filter of the URLs two filters
# share? Take two overlapping lists: A holds the first 600,000 malicious URLs, B
# the last 600,000, so they share the 200,000 in the middle. A third filter holds only the 200,000
# shared URLs. All three have the same m and k (`&` needs that): sized for 600,000 URLs at
# p = 0.01.

# %%
guess_and = predict("Of the 400,000 URLs only in A, how many does A & B claim?", None)

# %%
list_a, list_b, shared = malicious[:600_000], malicious[400_000:], malicious[400_000:600_000]
filter_a, filter_b, filter_shared = (BloomFilter.from_capacity(600_000, 0.01) for _ in range(3))
filter_a.add_many(list_a)
filter_b.add_many(list_b)
filter_shared.add_many(shared)
both = filter_a & filter_b
only_a = malicious[:400_000]  # in A, not in B
claimed_only_a = int(both.contains_many(only_a).sum())
say("A & B equals the filter of the shared URLs: {equal}", equal=both == filter_shared)
say("bits set: A & B {both:,}, filter of the shared URLs {shared:,} ({more:,} more in A & B)",
    both=both.bits_set(), shared=filter_shared.bits_set(),
    more=both.bits_set() - filter_shared.bits_set())
say("shared URLs found by A & B: {found:,} of {shared:,}",
    found=int(both.contains_many(shared).sum()), shared=len(shared))
say("claimed                            by A & B  by the shared URLs filter")
for label, urls in [(phrase("URLs only in A (400,000)"), only_a),
                    (phrase("safe URLs (400,000)"), safe[:400_000])]:
    print(f"{label:28} {int(both.contains_many(urls).sum()):14,d} "
          f"{int(filter_shared.contains_many(urls).sum()):26,d}")
say("B's own false-positive rate, from its bits: {rate:.5f}",
    rate=filter_b.current_false_positive_rate())

# %%
guess_and.reveal(claimed_only_a)

# %% [markdown]
# 4,111, about 1%, where the filter of the shared URLs claims 10. A bit set in both A and B may
# have been set by two *different* URLs, one only in A and one only in B, so the AND keeps
# 669,756 bits that no shared URL set. A URL only in A has all its k bits set in A; the AND keeps
# them whenever B's bits at those places happen to be set too, which is exactly how often B gives
# a false positive, about 1%. Every shared URL is still found (no false negative), but `&` is only
# an over-estimate of the intersection, and it errs most on the URLs that were in one list but not
# the other. Strangers pass it more often too, 185 safe URLs against the shared filter's 9: with
# its 669,756 extra bits set, the AND errs on them at its own $(\text{bits set}/m)^k$, higher than
# the shared filter's.
#
# Does the AND err at B's rate whatever B holds? Keep A, and give B the 200,000 shared URLs plus
# from 0 to 400,000 URLs that A does not hold:

# %%
say("URLs only in B  A & B on URLs only in A  B’s rate, fill^k  A & B = shared filter")
sweep = []
for extra in (0, 100_000, 200_000, 300_000, 400_000):
    filter_b_ = BloomFilter.from_capacity(600_000, 0.01)
    filter_b_.add_many(malicious[400_000:600_000 + extra])
    both_ = filter_a & filter_b_
    sweep.append((extra, float(both_.contains_many(only_a).mean()),
                  filter_b_.current_false_positive_rate()))
    print(f"{extra:14,d} {sweep[-1][1]:24.5f} {sweep[-1][2]:17.5f} {str(both_ == filter_shared):>22}")
shared_rate = float(filter_shared.contains_many(only_a).mean())
say("the filter of the shared URLs claims {rate:.5f} of the URLs only in A", rate=shared_rate)

ax = new_axes()
ax.plot([e for e, _, _ in sweep], [r for _, r, _ in sweep], "o", color="black",
        label="A & B, measured on URLs only in A")
ax.plot([e for e, _, _ in sweep], [b for _, _, b in sweep], label="B's own rate, (bits set / m)^k")
ax.axhline(shared_rate, color="grey", linestyle="--", label="filter of the shared URLs")
decorate(ax, yscale="log", xlabel="URLs in B that A does not hold",
         ylabel="share of URLs only in A claimed", title="A & B errs at B's rate")
show("On a log scale, the share of URLs only in A that A & B claims, against the number of URLs "
     "in B that A does not hold: from 0.00003 with none, where A & B equals the filter of the "
     "shared URLs, it climbs to 0.01 at 400,000, each point on the line of B's own rate.")

# %% [markdown]
# With no URL of its own, B is the filter of the shared URLs, and A & B equals it to the bit. Every
# URL B holds beyond A sets bits the AND keeps, and the AND's error on A's URLs climbs with B's own
# false-positive rate, point for point: the more the two lists differ, the less `&` is worth.
#
# ## 3. What the bits say, and what they cannot
#
# Saved as bytes, a filter is its bits behind a small header (a format tag, m, k and the hashing
# scheme), so a reader can refuse a file that is not what it expects. And the bits alone estimate
# how many keys went in and how often the filter errs now (the expected fill, turned around),
# with no list of keys kept anywhere:

# %%
data = bloom.to_bytes()
say("to_bytes: {nbytes:,} bytes = {header} header bytes + the bits; read back equal: {equal}",
    nbytes=len(data), header=len(data) - bloom.nbytes, equal=BloomFilter.from_bytes(data) == bloom)
say("URLs inside, estimated from the bits set: {estimate:,.0f} (inserted {n:,})",
    estimate=bloom.approximate_count(), n=n)
say("rate predicted from the bits set, fill^k: {rate:.5f}",
    rate=bloom.current_false_positive_rate())

# %% [markdown]
# A set can list its members, hand one back, and count them exactly. A filter keeps only bits:

# %%
for what, attempt in [(phrase("list its URLs"), lambda: list(bloom)),
                      (phrase("count them"), lambda: len(bloom))]:
    try:
        attempt()
    except TypeError as error:
        say("{what}: TypeError: {error}", what=what, error=error)
estimate = bloom.approximate_count()
say("estimate the count from the bits: {estimate:,.0f}, off by {off:+,.0f}", estimate=estimate,
    off=estimate - n)
say("find its members by testing candidates: of {safe:,} safe URLs, {passed} pass",
    safe=len(safe), passed=int(bloom.contains_many(safe).sum()))

# %% [markdown]
# The count is an estimate, close but not exact (and a URL added twice counts once). The only way
# to get members back is to guess candidates and test them, and then the 940 safe URLs come back
# with the real members, indistinguishable. What the filter stores is a summary of a set, good for
# one question only: "certainly not", or "maybe". Mistakes get a clear error, and the filter is
# left as it was:

# %%
for attempt in (lambda: BloomFilter.from_bytes(data[:-1]),
                lambda: bloom | BloomFilter(1024, bloom.num_hashes),
                lambda: bloom.add_many(["https://ok.example/", 3.5])):
    try:
        attempt()
    except (ValueError, TypeError) as error:
        print(f"{type(error).__name__}: {error}")
say("bits set afterwards: {set_bits:,} (unchanged)", set_bits=bloom.bits_set())

# %% [markdown]
# ## 4. Someone who knows the hash
#
# The filter's errors are rare only for URLs nobody chose. bloomedu's `BloomFilter`, like Guava's,
# hashes with a public function (MurmurHash3, seed 0), and many blacklists are public feeds. An
# attacker who knows the list can rebuild the filter bit for bit, search offline for URLs of their
# own that it wrongly claims, and then visit only those, so that every visit costs the service a
# database query (lesson 10). The attack, on a public filter of 100,000 listed URLs:

# %%
listed = malicious[:100_000]
public = BloomFilter.from_capacity(len(listed), p)
public.add_many(listed)
attackers_copy = BloomFilter.from_capacity(len(listed), p)  # built from the public list alone
attackers_copy.add_many(listed)
candidates = [f"https://promo-{i}.deals.example/" for i in range(1_000_000)]
crafted = [url for url, hit in zip(candidates, attackers_copy.contains_many(candidates)) if hit]
say("the attacker's copy equals the service's filter: {equal}", equal=attackers_copy == public)
say("candidates tried offline: {tried:,}; crafted false positives kept: {kept:,}",
    tried=len(candidates), kept=len(crafted))
say("crafted URLs the service's filter sends to the database: {sent:,} of {crafted:,}",
    sent=int(public.contains_many(crafted).sum()), crafted=len(crafted))

# %% [markdown]
# Every one of them, every time (lesson 09: a false positive is one on every lookup). The defence
# tested here is a **keyed filter**: the service mixes a secret into the hash, and the attacker's
# copy is built without it.

# %%
guess_keyed = predict("Of the crafted URLs, how many does a keyed filter of the same 100,000 URLs "
                      "send to the database?", None)

# %%
SECRET = bytes.fromhex("8f2a61c0d94e3b7a15c6e0f9a2d4b873")  # in real use: secrets.token_bytes(16),
#                                                            kept private, new at each rebuild
keyed = KeyedBloomFilter.from_capacity(len(listed), p, SECRET)
keyed.add_many(listed)
assert keyed.contains_many(listed).all()  # it still holds every listed URL
keyed_claims = int(keyed.contains_many(crafted).sum())
say("crafted URLs the keyed filter sends to the database: {sent:,} of {crafted:,} "
    "(p x {crafted:,} = {expected:.1f} expected)", sent=keyed_claims, crafted=len(crafted),
    expected=p * len(crafted))
say("ordinary safe URLs, keyed filter: {rate:.5f}",
    rate=float(keyed.contains_many(safe[:200_000]).mean()))

# %%
guess_keyed.reveal(keyed_claims)

# %% [markdown]
# To the keyed filter the crafted URLs are just URLs: 2 of the 1,049 pass, where its ordinary rate
# of 0.1% expects about one, and ordinary safe URLs pass at about that rate too (0.114%).
#
# `bloomedu.core.keyed.KeyedBloomFilter` replaces each key by a 64-bit tag, BLAKE2b keyed with the
# secret, before the usual positions are taken; without the secret, where a URL's bits fall cannot
# be computed. A secret *seed* for MurmurHash would not be enough: MurmurHash2 and 3 have
# collisions that hold for every seed (Aumasson, Bernstein and Boßlet, *"Hash-flooding DoS
# reloaded"*, 2012), so an attacker could still craft URLs whose hash equals a listed one's. The
# price of the keyed hash is one more hash of every key (a keyed BLAKE2b, before the usual
# MurmurHash3), and a secret that must stay secret.

# %% [markdown]
# ## Recap
#
# - `|` of two filters with the same m, k and hashing is, to the bit, the filter of the union:
#   shards merge exactly.
# - `&` is not the filter of the intersection: it keeps bits that different keys set, and claims
#   a key of one list only at the other filter's false-positive rate (4,111 of 400,000 here).
# - A filter's bits estimate its count and its current rate, but cannot list, return or count its
#   keys: it answers "certainly not" or "maybe", nothing more.
# - With a public hash, anyone who knows the keys can craft false positives; a keyed filter,
#   hashing with a secret, makes them ordinary URLs again.

# %% [markdown]
# ## Exercises
#
# Three exercises on this lesson: compute, predict, then measure. Replace `None` with your
# answer and run the cell: `check` tells you whether it is right and, when it is not, which slip
# it looks like. Worked solutions are in `solutions/11_a_filter_is_not_a_set_solutions.ipynb`; try
# first.

# %% [markdown]
# **11.1 (compute).** A filter of m = 958,506 bits and k = 7 hash functions has 300,000 bits
# set. About how many keys went into it?
#
# Section 3's estimate: a bit is still 0 with probability about $e^{-kn/m}$; solve for n.

# %%
answer = None  # replace None with your answer
check.estimated_count(answer, num_bits=958_506, num_hashes=7, bits_set=300_000)

# %% [markdown]
# **11.2 (predict).** A and B are both BloomFilter.from_capacity(100_000, 0.01); A holds 100,000
# URLs and B 50,000, 10,000 of them also in A. At what rate does A & B claim a URL that is in A
# but not in B?
#
# Section 2: which filter's bits decide whether such a URL survives the AND?

# %%
answer = None  # replace None with your answer
check.and_claim_rate(answer, n=100_000, p=0.01, n_b=50_000, shared=10_000)

# %% [markdown]
# **11.3 (measure).** Craft the false positives of a public BloomFilter.from_capacity(10_000,
# 0.01) of 10,000 malicious URLs from 200,000 candidate URLs, then measure the share of them that
# KeyedBloomFilter.from_capacity(10_000, 0.01, secret) of the same URLs claims.
#
# Section 4 does the same at a larger scale; draw your own secret with `secrets.token_bytes(16)`.

# %%
answer = None  # replace None with your answer
check.measured_keyed_rate(answer, n=10_000, p=0.01, candidates=200_000)

# %% [markdown]
# ## What comes next
#
# `12_guava.ipynb`, lesson 12 · Guava, bit for bit: the article's own library, the filter Java
# builds, matched bit for bit and byte for byte.
#
# *Where this lesson's code lives:* `bloomedu/core/filter_sets.py` (`|`, `&`),
# `bloomedu/core/filter_bytes.py`, `bloomedu/core/keyed.py` (`KeyedBloomFilter`),
# `bloomedu/core/theory.py` (`estimate_count`); its tests: `tests/test_serialization.py`,
# `tests/test_keyed.py`, `tests/test_filter.py`. The README's table maps every article step to its
# module, lesson and test.
