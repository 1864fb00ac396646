# ---
# jupyter:
#   bloomedu:
#     summary: Filters that match Guava bit for bit and Bitcoin's BIP37 byte for byte,
#       and what a light wallet's false positives reveal.
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
# # 12 · Bloom filters in the wild: Guava bit for bit, Bitcoin byte for byte
#
# Lesson 09 sized a filter from n and p and stored one million URLs in under 2 MB. The article
# it follows, *"Bloom Filter: come memorizzare 1 Milione di stringhe in meno di 2MB?"*, does that
# with a real library, Google Guava for Java, and closes by pointing at a real system, Bitcoin's
# "light" wallets. This lesson meets both on their own terms:
#
# 1. **Guava.** `bloomedu.compat.guava.GuavaBloomFilter` makes the same filter as Guava 31.1's
#    `BloomFilter.create(Funnels.stringFunnel(UTF_8), n, p)`: same bits, same `writeTo` bytes.
#    We check it against bytes recorded from real Guava, then read Java's bytes back in Python.
# 2. **Bitcoin.** `bloomedu.compat.bip37.Bip37Filter` is Bitcoin Core's BIP37 filter, the one a
#    light wallet sends to a node. We build the message a wallet sends, and then measure the
#    thing that p really controls there: how much the wallet tells the node about itself.
#
# Symbols, as everywhere in bloomedu: **m** bits, **k** hash functions, **n** inserted items,
# **p** false-positive rate.

# %%
# %matplotlib inline
import inspect
import math
import time

import matplotlib.pyplot as plt
import mmh3
import numpy as np

from bloomedu import BloomFilter
from bloomedu.compat import Bip37Filter, GuavaBloomFilter
from bloomedu.compat.guava import guava_num_bits, guava_num_hashes, java_round
from bloomedu.teaching.exercises import check
from bloomedu.core.hashing import murmur3_32
from bloomedu.teaching.plots import decorate, draw_bit_groups, new_axes
from bloomedu.teaching.vectors import recorded
from bloomedu.core.theory import false_positive_rate
from bloomedu.workloads.urls import malicious_urls, safe_urls

SEED = 8
RECORDED = recorded("guava")  # bytes real Guava 31.1 wrote, shipped inside the package
CORE = recorded("bip37")      # Bitcoin Core's BIP37 unit-test vectors, likewise

# %% [markdown]
# ## Part 1 · Guava, bit for bit
#
# ### 1.1 Sizing, with Java's arithmetic
#
# Guava sizes a filter with the formulas of lesson 09, but in Java's arithmetic, and the
# details decide every bit:
#
# - m = `(long)(-n * ln p / (ln 2)^2)`: the cast **truncates** (lesson 09 rounded up);
# - k = `Math.round(m / n * ln 2)`, at least 1, where Java rounds halves up;
# - the bits are stored in `long` words of 64, so the array really holds
#   **bitSize** = 64 · ceil(m / 64) bits.
#
# Here is the smallest example worth looking at, n = 10 and p = 0.1, done by hand and then by
# the library:

# %%
n, p = 10, 0.1
m_by_hand = int(-n * math.log(p) / (math.log(2) * math.log(2)))   # int() truncates like (long)
k_by_hand = max(1, java_round(m_by_hand / n * math.log(2)))
bit_size_by_hand = 64 * math.ceil(m_by_hand / 64)
print(f"-n ln p / (ln 2)^2 = {-n * math.log(p) / math.log(2) ** 2:.4f}  ->  m = {m_by_hand}")
print(f"m / n * ln 2       = {m_by_hand / n * math.log(2):.4f}   ->  k = {k_by_hand}")
print(f"words of 64 bits   = {math.ceil(m_by_hand / 64)}        ->  bitSize = {bit_size_by_hand}")

guava = GuavaBloomFilter.create(n, p)
assert (guava_num_bits(n, p), guava_num_hashes(n, m_by_hand)) == (m_by_hand, k_by_hand)
assert (guava.bit_size, guava.num_hash_functions) == (bit_size_by_hand, k_by_hand)

# %% [markdown]
# ### 1.2 Four strings in, and the bytes Java writes
#
# Each string is hashed once: its UTF-8 bytes go through MurmurHash3 x64 128, whose two 64-bit
# halves are h1 and h2. Bit i of the k is `(h1 + i·h2) mod 2^64`, with the sign bit cleared (Java's
# `long` is signed, and `& Long.MAX_VALUE` makes it non-negative), modulo bitSize. The library's
# method is short enough to read:

# %%
print(inspect.getsource(GuavaBloomFilter.bit_indices))

# %%
words = ["città", "naïve", "日本", "😀"]
print(f"{'string':8} {'UTF-8 bytes':>11}  {'put()':>5}  bit positions")
for word in words:
    positions = guava.bit_indices(word)
    print(f"{word:8} {len(word.encode()):11d}  {str(guava.put(word)):>5}  {positions}")

# %% [markdown]
# Guava's `writeTo` stream is a six-byte header (strategy ordinal, k, number of words as a
# big-endian int) and then each 64-bit word, big-endian. `to_bytes()` gives exactly that:

# %%
stream = guava.to_bytes()
print(f"writeTo: {stream.hex()}  ({len(stream)} bytes)")
print(f"  strategy ordinal {stream[0]} (MURMUR128_MITZ_64), k = {stream[1]}, "
      f"words = {int.from_bytes(stream[2:6], 'big')}, word 0 = 0x{stream[6:14].hex()}")

java = RECORDED["filters"][0]   # the same four puts, recorded by running Guava 31.1
print(f"Guava:   {java['write_to_hex']}")
print(f"identical to the bytes real Guava wrote: {stream.hex() == java['write_to_hex']}")
assert stream.hex() == java["write_to_hex"]

# %% [markdown]
# Guava also estimates its own state from the bits: `expectedFpp()` is (bits set / bitSize)^k
# and `approximateElementCount()` inverts the expected fill. Both must agree with Java too, and
# so must the answers to probes never inserted:

# %%
probes = [f"d-{i}" for i in range(100)]
reported = [probe for probe in probes if guava.might_contain(probe)]
print(f"bits set: {guava.bit_count()} of {guava.bit_size}")
print(f"expected_fpp():              {guava.expected_fpp()!r:22}  Guava: {java['expected_fpp']!r}")
print(f"approximate_element_count(): {guava.approximate_element_count()!r:22}  "
      f"Guava: {java['approximate_element_count']!r}")
print(f"probes d-0 .. d-99 reported present: {reported}")
assert guava.expected_fpp() == java["expected_fpp"]
assert reported == [p_ for p_ in java["probes_reported_present"] if p_ in probes]

# %% [markdown]
# One probe out of a hundred comes back "maybe present" without ever being inserted: a false
# positive, the same one Java reports.
#
# ### 1.3 Why modulo bitSize and not m
#
# Lesson 09's filter takes positions modulo m. Guava takes them modulo bitSize, so with
# m = 47 the 17 padding bits 47 … 63 are used like any other.
#
# **Predict:** the four strings set 12 positions between them (table of section 1.2). How many of
# those fall at 47 or beyond, in bits a filter of m = 47 bits would not have? And why are only
# 10 bits set, not 12?

# %%
labels = {"città": "città", "naïve": "naïve", "日本": "nihon (kanji)", "😀": "emoji"}  # fonts lack kanji
groups = {labels[word]: guava.bit_indices(word) for word in words}
beyond = sorted({i for positions in groups.values() for i in positions if i >= m_by_hand})
owners = {}
for label, positions in groups.items():
    for i in set(positions):
        owners.setdefault(i, []).append(label)
shared = {i: names for i, names in sorted(owners.items()) if len(names) > 1}
print(f"m = {m_by_hand}, bitSize = {guava.bit_size}; positions at or beyond m: {beyond}")
print("bits shared by two strings: "
      + "; ".join(f"{i} ({' and '.join(names)})" for i, names in shared.items()))
groups["shared by two strings"] = list(shared)
ax = draw_bit_groups(guava.bits, groups, width=16,
                     title=f"Guava, n = 10, p = 0.1: m = {m_by_hand} but bitSize = {guava.bit_size}")
for i in range(m_by_hand, guava.bit_size):  # outline the padding beyond m
    row, column = divmod(i, 16)
    ax.add_patch(plt.Rectangle((column - 0.5, row - 0.5), 1, 1, fill=False, edgecolor="#e15759",
                               linewidth=2))
ax.plot([], [], "s", markerfacecolor="none", markeredgecolor="#e15759", markeredgewidth=2,
        label=f"beyond m = {m_by_hand}")
ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False,
          handles=ax.get_legend().legend_handles + ax.get_lines()[-1:])
plt.show()

# %% [markdown]
# **Check your prediction:** two positions, 51 (città) and 58 (naïve), fall in the padding,
# outlined in red. And two bits are set twice: naïve and the kanji share bits 0 and 6, so the 12
# positions set only 10 bits (the figure paints them in the "shared" colour). A shared bit is
# the raw material of every false positive: a key whose bits were all set by others.

# %% [markdown]
# A filter that reduced modulo m instead would set other bits and write other bytes, and Java
# would answer differently about every string. Built by hand with the same hashes:

# %%
modulo_m = GuavaBloomFilter(1, guava.num_hash_functions)
for word in words:
    h1, h2 = mmh3.hash64(word.encode("utf-8"), 0, signed=False)
    for i in range(guava.num_hash_functions):
        modulo_m.bits.set(((h1 + i * h2) % 2 ** 64 & (2 ** 63 - 1)) % m_by_hand)
print(f"modulo bitSize (Guava): {guava.to_bytes().hex()}")
print(f"modulo m (not Guava):   {modulo_m.to_bytes().hex()}")

# %% [markdown]
# ### 1.4 Java's bytes in Python, Python's bytes in Java
#
# The package ships more filters recorded from Guava 31.1 (`recorded("guava")`; the tests read
# the same file in `tests/data/`): from n = 0 (which Guava treats as 1) to p = 10⁻¹⁰, strings
# with characters outside the Basic
# Multilingual Plane, and a filter filled far past its design. For each one, Python puts the same
# strings and must write Java's bytes exactly; so Java's `readFrom` reads Python's filter. Then
# Python reads Java's bytes and must find every inserted string.

# %%
def inserted_strings(vector):
    if "inserted" in vector:
        return vector["inserted"]
    return [vector["inserted_pattern"].format(i=i) for i in range(vector["inserted_count"])]


print(f"{'n':>5} {'p':>7} {'strings':>8} {'bytes':>6} {'same bytes':>10} {'read back, all found':>21}")
for vector in RECORDED["filters"]:
    strings = inserted_strings(vector)
    ours = GuavaBloomFilter.create(vector["expected_insertions"], vector["fpp"])
    ours.put_many(strings)
    same = ours.to_bytes().hex() == vector["write_to_hex"]
    from_java = GuavaBloomFilter.from_bytes(bytes.fromhex(vector["write_to_hex"]))
    found = bool(from_java.might_contain_many(strings).all())
    assert same and found and from_java == ours
    print(f"{vector['expected_insertions']:5d} {vector['fpp']:7.0e} {len(strings):8d} "
          f"{len(ours.to_bytes()):6d} {str(same):>10} {str(found):>21}")

# %% [markdown]
# A stream cut short, padded with extra bytes, or naming a strategy Guava does not have is
# refused with a message that says which:

# %%
for label, bad in [("cut short", stream[:-1]), ("padded", stream + b"\0"),
                   ("strategy 7", b"\x07" + stream[1:])]:
    try:
        GuavaBloomFilter.from_bytes(bad)
    except ValueError as error:
        print(f"{label:10}: ValueError: {error}")

# %% [markdown]
# ### 1.5 The article's million URLs, as Guava would store them
#
# The article's Java example is `create(1_000_000, 0.001)`. With Guava's sizing the filter
# has this many bits, hash functions and serialized bytes; then a million malicious URLs from
# lesson 09's generator go in through the bulk path, and safe URLs, never inserted, measure the
# false-positive rate.

# %%
million = GuavaBloomFilter.create(1_000_000, 0.001)
lesson_07 = BloomFilter.from_capacity(1_000_000, 0.001)
print(f"Guava:     m = {guava_num_bits(1_000_000, 0.001):,} (truncated), bitSize = {million.bit_size:,}, "
      f"k = {million.num_hash_functions}")
print(f"lesson 09: m = {lesson_07.num_bits:,} (rounded up), k = {lesson_07.num_hashes}")
print(f"writeTo size: {len(million.to_bytes()):,} bytes (under 2,000,000: "
      f"{len(million.to_bytes()) < 2_000_000})")

# %% tags=["nbval-ignore-output"]
started = time.perf_counter()
malicious, safe = malicious_urls(1_000_000, seed=SEED), safe_urls(200_000, seed=SEED)
million.put_many(malicious)
rate = float(million.might_contain_many(safe).mean())
print(f"generate 1,200,000 URLs, put 1,000,000, ask 200,000: {time.perf_counter() - started:.1f} s")

# %%
sd = math.sqrt(0.001 * 0.999 / len(safe))
print(f"false-positive rate on 200,000 safe URLs:   {rate:.5f} "
      f"({(rate - 0.001) / sd:+.2f} standard deviations from p = 0.001)")
print(f"expected_fpp() from the bits set:          {million.expected_fpp():.5f}")
print(f"approximate_element_count():               {million.approximate_element_count():,}")
print(f"malicious URLs reported absent (first 100,000 checked): "
      f"{int((~million.might_contain_many(malicious[:100_000])).sum())}")

# %% [markdown]
# The same promise as lesson 09, now in the exact format a Java service would load with
# `BloomFilter.readFrom`.
#
# ## Part 2 · Bitcoin light wallets, byte for byte
#
# ### 2.1 What the filter does, and what it does not
#
# A full Bitcoin node downloads and checks every block. A light (SPV) wallet on a phone
# cannot, so under BIP37 ("Connection Bloom filtering", 2012) it puts its own data in a Bloom
# filter: the 20-byte public-key hashes behind its addresses, and later the outpoints it owns.
# It sends the filter to a node in a `filterload` message, and the node then relays only the
# transactions that match, each with a Merkle proof that it sits in a block.
#
# The article says light wallets use Bloom filters "to check that a transaction is valid".
# That is not what the filter does: it **selects** which transactions the node sends, it
# checks nothing. A false positive is an irrelevant transaction the wallet throws away; the
# wallet's confidence that a transaction is real comes from the Merkle proof and the
# proof-of-work of the block headers, and even that is not full validation (a light wallet
# does not check the scripts or that the coins were unspent; it trusts the miners for that).
#
# ### 2.2 Bitcoin Core's sizing: integer arithmetic and caps
#
# Bitcoin Core computes the size in **bits**, truncates it to an `unsigned int`, caps it at
# 36,000 bytes, and divides by 8; then k = bytes·8 / n **in integer division**, times ln 2,
# truncated and capped at 50. For a wallet of n = 20 addresses:

# %%
wallet_size = 20
p_values = [0.0001, 0.001, 0.01, 0.05, 0.1, 0.2, 0.5]
print(f"{'p':>7} {'bytes':>5} {'m':>4} {'k':>2} {'textbook k':>10} {'p for this m, k':>15}")
for p_ in p_values:
    f = Bip37Filter(wallet_size, p_)
    textbook_k = f.num_bits / wallet_size * math.log(2)
    rate_ = false_positive_rate(f.num_bits, wallet_size, f.n_hash_funcs) if f.n_hash_funcs else 1.0
    print(f"{p_:7.4f} {len(f.data):5d} {f.num_bits:4d} {f.n_hash_funcs:2d} {textbook_k:10.2f} {rate_:15.4f}")

# %% [markdown]
# The integer division shows: at p = 0.1, 88 bits / 20 = 4 (not 4.4), and 4 · ln 2 = 2.77
# truncates to k = 2, so the filter errs more often than asked. At p = 0.5, 24 / 20 = 1 and
# 0.69 truncates to **k = 0**: a filter with no hash functions, which matches every
# transaction. Our filter reproduces these quirks on purpose, since a node computes exactly
# this.
#
# ### 2.3 The `filterload` message of a small wallet
#
# A wallet with three addresses, p = 0.01, a random 32-bit tweak (it changes the seeds, so two
# wallets with the same addresses send different filters) and flags = 1 (`BLOOM_UPDATE_ALL`:
# the node adds matching outputs to the filter as it goes).

# %%
def pubkey_hashes(count, rng):
    """Synthetic 20-byte public-key hashes (real ones look just as random)."""
    blob = rng.bytes(20 * count)
    return [blob[i:i + 20] for i in range(0, len(blob), 20)]


rng = np.random.default_rng(SEED)
addresses = pubkey_hashes(3, rng)
small = Bip37Filter(len(addresses), 0.01, tweak=int(rng.integers(2 ** 32)), flags=1)
for address in addresses:
    small.insert(address)
payload = small.serialize()
print(f"filterload payload: {payload.hex()}  ({len(payload)} bytes)")
print(f"  length {payload[0]} | filter {payload[1:4].hex()} | k {payload[4:8].hex()} "
      f"= {small.n_hash_funcs} | tweak {payload[8:12].hex()} = {small.tweak} | flags {payload[12]:02x}")

# %% [markdown]
# By hand: seed i is `i · 0xFBA4C795 + tweak` modulo 2³², and each position is
# MurmurHash3 (32-bit) of the address with that seed, modulo m. The node reading the payload
# rebuilds the same filter:

# %%
by_hand = [murmur3_32(addresses[0], (i * 0xFBA4C795 + small.tweak) % 2 ** 32) % small.num_bits
           for i in range(small.n_hash_funcs)]
print(f"positions of the first address: {by_hand}")
assert by_hand == small.bit_indices(addresses[0])
node_side = Bip37Filter.deserialize(payload)
assert node_side == small and all(node_side.contains(a) for a in addresses)

# %% [markdown]
# And Bitcoin Core's own unit-test vector (a copy of its values ships with the package,
# `recorded("bip37")`):

# %%
vector = CORE["serialized_filter_vectors"][0]
core = Bip37Filter(vector["nElements"], vector["fpRate"], vector["nTweak"], vector["nFlags"])
for item in vector["inserted_hex"]:
    core.insert(bytes.fromhex(item))
print(f"ours:         {core.serialize().hex()}")
print(f"Bitcoin Core: {vector['expected_serialized_hex']}")
assert core.serialize().hex() == vector["expected_serialized_hex"]

# %% [markdown]
# ### 2.4 The false-positive rate is the wallet's privacy
#
# The node sees every transaction that matches. With a tiny p, only the wallet's own
# transactions match, and the node learns exactly which addresses are the wallet's. With a
# larger p, transactions of other people match too: **decoys**, which cost the wallet bandwidth
# but hide its real addresses among them.
#
# A measurement on synthetic data: a wallet of 20 addresses, and 100,000 addresses of other
# people active on the network. For each p the wallet builds its filter; we count the other
# addresses it matches.
#
# **Predict:** at p = 0.01, how many of the 100,000 other addresses match the wallet's filter?
# What share of all the matches the node sees are then the wallet's own 20?

# %%
rng = np.random.default_rng(SEED)
wallet = pubkey_hashes(wallet_size, rng)
others = pubkey_hashes(100_000, rng)

rows = []
for p_ in p_values:
    f = Bip37Filter(wallet_size, p_, tweak=int(rng.integers(2 ** 32)))
    for address in wallet:
        f.insert(address)
    assert f.contains_many(wallet).all()
    decoys = int(f.contains_many(others).sum())
    theory = false_positive_rate(f.num_bits, wallet_size, f.n_hash_funcs) if f.n_hash_funcs else 1.0
    this_filter = (f.bit_count() / f.num_bits) ** f.n_hash_funcs
    rows.append((p_, f.n_hash_funcs, decoys, theory * len(others), this_filter * len(others),
                 wallet_size / (wallet_size + decoys)))

print(f"{'p':>7} {'k':>2} {'decoys':>7} {'expected':>9} {'this filter':>11} {'matches that are the wallet’s':>30}")
for p_, k_, decoys, expected, expected_here, share in rows:
    print(f"{p_:7.4f} {k_:2d} {decoys:7d} {expected:9.1f} {expected_here:11.1f} {share:30.2%}")

# %% [markdown]
# **Check your prediction:** p × 100,000 = 1,000 is the right scale: 963 decoys, so the wallet's
# 20 are only 2.03% of what the node sees. Two predictions sit beside each count. *expected* is
# the classic formula for Bitcoin Core's m and k (its m is 184 bits here, and k = 6): an average
# over all filters of that size, 1,209 at p = 0.01. *this filter* is (bits set / m)^k for the
# filter actually built. A filter of a few hundred bits fills up a little more or a little less
# than average, and its decoys follow its own fill: 963 against 972.

# %%
ax = new_axes()
p_axis = np.array([r[0] for r in rows])
ax.plot(p_axis, [r[2] for r in rows], "o", color="black", label="decoys measured")
ax.plot(p_axis, [r[3] for r in rows], label="expected for Core's m and k")
ax.plot(p_axis, p_axis * len(others), linestyle="--", label="p × 100,000 (as asked)")
ax.axhline(wallet_size, color="grey", linestyle=":", label="the wallet's own 20")
decorate(ax, xscale="log", yscale="log", xlabel="p asked for",
         ylabel="other addresses matched", title="A 20-address wallet among 100,000 others")
plt.show()

# %% [markdown]
# At p = 0.0001 the node sees 30 matching addresses and two in three are the wallet's: it
# holds nearly the wallet's whole address list. At p = 0.01 the 20 real ones hide among about a
# thousand decoys, and at p = 0.1 among more than ten thousand, which the wallet pays for in
# bandwidth. The counts follow the formula for the m and k that Bitcoin Core actually picks; it
# lies above the dashed line at every p, because Core truncates m to whole bytes and k downwards,
# most at p = 0.1 (k = 2 instead of 3). At p = 0.5 the filter has no hash function at all
# and matches everything: total privacy, and no filtering.
#
# ### 2.5 Why hiding among decoys is not enough
#
# Decoys are random, the wallet's addresses are not. A wallet that sends a second filter (after
# a reconnection, or to another node run by the same observer) draws a fresh tweak, so it gets
# fresh decoys but the same 20 real addresses. Intersect what the filters match, and the
# decoys melt away. Gervais, Capkun, Karame and Gruber measured this on real wallets in *"On the
# Privacy Provisions of Bloom Filters in Lightweight Bitcoin Clients"* (ACSAC 2014).
#
# **Predict:** the node sees four filters of the same wallet, each with a fresh tweak. At
# p = 0.05, how many of the 100,000 other addresses match both of the first two filters? A decoy
# must be a false positive of each.

# %%
rng = np.random.default_rng(SEED + 1)
observed = [0.01, 0.05, 0.1]
left = {p_: [] for p_ in observed}
for p_ in observed:
    candidates = np.ones(len(others) + wallet_size, dtype=bool)
    for _ in range(4):
        f = Bip37Filter(wallet_size, p_, tweak=int(rng.integers(2 ** 32)))
        for address in wallet:
            f.insert(address)
        candidates &= f.contains_many(others + wallet)
        left[p_].append(int(candidates[: len(others)].sum()))
        assert candidates[len(others):].all()   # the wallet's addresses always survive

print(f"{'filters seen':>12} " + " ".join(f"{f'decoys left, p = {p_}':>22}" for p_ in observed))
for seen in range(4):
    print(f"{seen + 1:12d} " + " ".join(f"{left[p_][seen]:22d}" for p_ in observed))

# %%
ax = new_axes()
for p_ in observed:
    ax.plot(range(1, 5), np.maximum(left[p_], 0.5), "o-", label=f"p = {p_}")
decorate(ax, yscale="log", xlabel="filters seen by the node", xticks=[1, 2, 3, 4],
         ylabel="decoys left (0 drawn at 0.5)", title="Intersecting filters strips the decoys")
plt.show()

# %% [markdown]
# **Check your prediction:** about 100,000 × 0.05 × 0.05 = 250; the node is left with 173 after
# two filters, 7 after three and none after four. Each new filter keeps only its own
# false-positive share of the decoys still left (a few percent at p = 0.05, about one in seven at
# p = 0.1, where Core's k = 2 errs more than asked). At p = 0.01 the decoys are gone by the third
# filter; at p = 0.1, 44 of 100,000 are still left after four, and at one in seven per filter two
# or three more would strip those too. A larger p only buys the wallet a few more filters'
# time: the node ends up knowing its addresses exactly. This is one reason
# Bitcoin Core stopped serving BIP37 filters by default (version 0.19, 2019); newer light
# clients use BIP157/158 "compact block filters", where the node publishes one filter per
# block and the wallet does the matching itself, telling the node nothing.
#
# ## What we measured

# %%
print(f"Guava: {len(RECORDED['filters'])} filters recorded from Guava 31.1, all rebuilt byte for byte "
      "and read back; "
      f"n = 10, p = 0.1 writes {stream.hex()}")
print(f"Guava, 1,000,000 URLs at p = 0.001: {len(million.to_bytes()):,} bytes, "
      f"false-positive rate {rate:.5f}")
print(f"BIP37: Bitcoin Core's vector reproduced: {core.serialize().hex()}")
print("BIP37, 20-address wallet among 100,000: decoys "
      + ", ".join(f"{r[2]:,} at p = {r[0]}" for r in rows[:4]))
print(f"after 4 filters at p = 0.1: {left[0.1][-1]} decoys left")

# %% [markdown]
# Our filters now agree with a Java library and a Bitcoin node to the last byte, and the
# false-positive rate turned out to be more than an error budget: in a light wallet it is the
# amount of cover, and a thin one.

# %% [markdown]
# ## Exercises
#
# Three exercises on this lesson: compute, predict, then measure. Replace `None` with your
# answer and run the cell: `check` tells you whether it is right and, when it is not, which slip
# it looks like. Worked solutions are in
# `solutions/12_guava_solutions.ipynb`; try first.

# %% [markdown]
# **12.1 (compute).** How many bits does Guava allocate (its bitSize) for 1,000,000 expected
# insertions at fpp = 0.01?
#
# Section 1.1 sizes a filter as Guava does, by hand.

# %%
answer = None  # replace None with your answer
check.guava_bit_size(answer, n=1_000_000, p=0.01)

# %% [markdown]
# **12.2 (predict).** A light wallet asks Bitcoin Core for a BIP37 filter for 100,000 elements
# at rate 0.0001. What false-positive rate does the filter it gets really have?
#
# Follow section 2.2: the size in bits, truncated and capped at 36,000 bytes; then k from a
# whole-number division, times ln 2, truncated; then the classic formula for that m and k.
# `check.bip37_bytes(answer, n=100_000, p=0.0001)` checks the size on the way.

# %%
answer = None  # replace None with your answer
check.bip37_fpp(answer, n=100_000, p=0.0001)

# %% [markdown]
# **12.3 (measure).** Build that filter (Bip37Filter(100_000, 0.0001)), insert 100,000 random
# 20-byte items and measure the fraction of 100,000 other random 20-byte items it matches.
#
# `insert` each item, then ask `contains_many` about the others; `rng.bytes(20)` draws one item,
# as `pubkey_hashes` does in section 2.3.

# %%
answer = None  # replace None with your answer
check.measured_bip37_fpp(answer, n=100_000, p=0.0001, trials=100_000)

# %% [markdown]
# ## What comes next
#
# Next, `14_explorer.ipynb`: an interactive panel where you move m, k and n yourself and watch
# the measured false-positive rate follow the formulas.
#
# *Where this lesson's code lives:* `bloomedu/compat/guava.py`, `bloomedu/compat/bip37.py`, and
# the recordings in `bloomedu/teaching/vectors.py`; its tests: `tests/test_guava.py`,
# `tests/test_bip37.py`, `tests/test_vectors.py`. The README's table maps every article step to
# its module, lesson and test.

