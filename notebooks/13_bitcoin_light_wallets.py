# ---
# jupyter:
#   bloomedu:
#     summary: Bitcoin's BIP37 filter byte for byte as Bitcoin Core builds it, and what
#       a light wallet's false positives hide from the node, and for how long.
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
# # 13 · Bitcoin light wallets, byte for byte
#
# Lesson 12 (`12_guava.ipynb`) matched Guava's filter bit for bit, Java's arithmetic included.
# The second article, *"Bloom Filter: come memorizzare 1 Milione di stringhe in meno di 2MB?"*,
# closes by pointing at another real system: Bitcoin's "light" wallets. This lesson builds their
# filter byte for byte as Bitcoin Core does, and then measures what the false-positive rate p
# really controls there: how much the wallet tells the network about itself.

# %% [markdown]
# ## Objectives
#
# - You will be able to say what a light wallet's BIP37 filter does (it selects transactions) and
#   what it does not (check that they are valid), against the article's claim.
# - You will be able to size a filter as Bitcoin Core does, in whole numbers and with caps, and
#   find the rate it really has.
# - You will be able to build a `filterload` message byte for byte and check it against Bitcoin
#   Core's own test vector.
# - You will be able to measure how many decoys a rate buys a wallet, and how quickly a node that
#   sees several filters strips them.
#
# **Prerequisites:** 08 · Sizing a filter, 12 · Guava, bit for bit.
#
# **Time:** about 60 minutes (teaching 40 min, exercises 20 min).

# %%
# %matplotlib inline
import math

import numpy as np
import matplotlib.pyplot as plt

from bloomedu.compat import Bip37Filter
from bloomedu.core.hashing import murmur3_32
from bloomedu.core.theory import false_positive_rate
from bloomedu.teaching.exercises import check
from bloomedu.teaching.plots import decorate, new_axes
from bloomedu.teaching.predict import predict
from bloomedu.teaching.vectors import recorded

SEED = 8
CORE = recorded("bip37")  # Bitcoin Core's BIP37 unit-test vectors, shipped inside the package

# %% [markdown]
# ## 1. What the filter does, and what it does not
#
# A full Bitcoin node downloads and checks every block. A light (SPV, simplified payment
# verification) wallet on a phone cannot, so under BIP37 ("Connection Bloom filtering", 2012) it
# puts its own data in a Bloom filter: the 20-byte public-key hashes behind its addresses, and later
# the outpoints (transaction outputs) it owns. It sends the filter to a node in a `filterload`
# message, and the node then relays only the transactions that match, each with a Merkle proof that
# it sits in a block.
#
# The article says light wallets use Bloom filters "to check that a transaction is valid". That is
# not what the filter does: it **selects** which transactions the node sends, and checks nothing.
# A false positive is an irrelevant transaction the wallet throws away; the wallet's confidence that
# a transaction is real comes from the Merkle proof and the proof-of-work of the block headers, and
# even that is not full validation (a light wallet does not check the scripts, or that the coins
# were unspent: it trusts the miners for that).
#
# ## 2. Bitcoin Core's sizing: whole numbers and caps
#
# Bitcoin Core computes the size in **bits**, $-n \ln p / (\ln 2)^2$, truncates it to an
# `unsigned int`, caps it at 36,000 bytes and divides by 8; then k is the bytes times 8 divided by
# n **in whole-number division**, times $\ln 2$, truncated and capped at 50. A wallet of n = 20
# addresses asks for a range of rates:

# %%
guess_k = predict("At p = 0.5, how many hash functions does Bitcoin Core give the filter of a "
                  "20-address wallet?", None)

# %%
wallet_size = 20
p_values = [0.0001, 0.001, 0.01, 0.05, 0.1, 0.2, 0.5]
print(f"{'p':>7} {'bytes':>5} {'m':>4} {'k':>2} {'textbook k':>10} {'p for this m, k':>15}")
for p_ in p_values:
    f = Bip37Filter(wallet_size, p_)
    textbook_k = f.num_bits / wallet_size * math.log(2)
    rate_ = (false_positive_rate(num_bits=f.num_bits, num_hashes=f.n_hash_funcs, n=wallet_size)
             if f.n_hash_funcs else 1.0)
    print(f"{p_:7.4f} {len(f.data):5d} {f.num_bits:4d} {f.n_hash_funcs:2d} {textbook_k:10.2f} {rate_:15.4f}")

# %%
guess_k.reveal(Bip37Filter(wallet_size, 0.5).n_hash_funcs, label="Bitcoin Core")

# %% [markdown]
# None at all. At p = 0.5 the filter has 24 bits; $24 / 20$ is 1 in whole numbers,
# and $1 \cdot \ln 2 = 0.69$ truncates to **k = 0**: a filter with no hash function, which matches
# every transaction. The whole-number division shows at p = 0.1 too: $88 / 20$ gives 4 (not 4.4),
# and $4 \ln 2 = 2.77$ truncates to k = 2, so that filter errs more often than asked. Our filter
# reproduces these quirks on purpose, since a node computes exactly this.
#
# ## 3. The `filterload` message of a small wallet
#
# A wallet with three addresses, p = 0.01, a random 32-bit tweak (it changes the seeds, so two
# wallets with the same addresses send different filters) and flags = 1 (`BLOOM_UPDATE_ALL`: the
# node adds matching outputs to the filter as it goes).

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
# By hand: seed i is $i \cdot \mathtt{0xFBA4C795} + \text{tweak}$ modulo $2^{32}$, and each position
# is MurmurHash3 (32-bit) of the address with that seed, modulo m. The node reading the payload
# rebuilds the same filter, and Bitcoin Core's own unit-test vector (a copy of its values ships
# with the package, `recorded("bip37")`) comes out byte for byte:

# %%
by_hand = [murmur3_32(addresses[0], (i * 0xFBA4C795 + small.tweak) % 2 ** 32) % small.num_bits
           for i in range(small.n_hash_funcs)]
print(f"positions of the first address: {by_hand}")
assert by_hand == small.bit_indices(addresses[0])
node_side = Bip37Filter.deserialize(payload)
assert node_side == small and all(node_side.contains(a) for a in addresses)

vector = CORE["serialized_filter_vectors"][0]
core = Bip37Filter(vector["nElements"], vector["fpRate"], vector["nTweak"], vector["nFlags"])
for item in vector["inserted_hex"]:
    core.insert(bytes.fromhex(item))
print(f"ours:         {core.serialize().hex()}")
print(f"Bitcoin Core: {vector['expected_serialized_hex']}")
assert core.serialize().hex() == vector["expected_serialized_hex"]

# %% [markdown]
# ## 4. The false-positive rate is the wallet's privacy
#
# The node sees every transaction that matches. With a tiny p, only the wallet's own transactions
# match, and the node learns exactly which addresses are the wallet's. With a larger p,
# transactions of other people match too: **decoys**, which cost the wallet bandwidth but hide its
# real addresses among them.
#
# A measurement on synthetic data: a wallet of 20 addresses, and 100,000 addresses of other people
# active on the network. For each p the wallet builds its filter; we count the other addresses it
# matches.

# %%
guess_decoys = predict("At p = 0.01, how many of the 100,000 other addresses match the wallet's "
                       "filter?", None)

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
    theory = (false_positive_rate(num_bits=f.num_bits, num_hashes=f.n_hash_funcs, n=wallet_size)
              if f.n_hash_funcs else 1.0)
    this_filter = (f.bit_count() / f.num_bits) ** f.n_hash_funcs
    rows.append((p_, f.n_hash_funcs, decoys, theory * len(others), this_filter * len(others),
                 wallet_size / (wallet_size + decoys)))

print(f"{'p':>7} {'k':>2} {'decoys':>7} {'expected':>9} {'this filter':>11} {'matches that are the wallet’s':>30}")
for p_, k_, decoys, expected, expected_here, share in rows:
    print(f"{p_:7.4f} {k_:2d} {decoys:7d} {expected:9.1f} {expected_here:11.1f} {share:30.2%}")

# %%
guess_decoys.reveal(rows[2][2])

# %% [markdown]
# $p \times 100{,}000 = 1{,}000$ is the right scale: 963 decoys, so the wallet's 20
# are only 2.03% of what the node sees. Two computed values sit beside each count. *expected* is
# the classic formula for Bitcoin Core's m and k (its m is 184 bits here, and k = 6): an average
# over all filters of that size, 1,209 at p = 0.01. *this filter* is $(\text{bits set} / m)^k$ for
# the filter actually built. A filter of a few hundred bits fills up a little more or a little less
# than average, and its decoys follow its own fill: 963 against 972.

# %%
ax = new_axes()
p_axis = np.array([r[0] for r in rows])
ax.plot(p_axis, [r[2] for r in rows], "o", color="black", label="decoys measured")
ax.plot(p_axis, [r[4] for r in rows], "x", color="#e15759", label="this filter's (bits set / m)^k")
ax.plot(p_axis, [r[3] for r in rows], label="expected for Core's m and k")
ax.plot(p_axis, p_axis * len(others), linestyle="--", label="p × 100,000 (as asked)")
ax.axhline(wallet_size, color="grey", linestyle=":", label="the wallet's own 20")
decorate(ax, xscale="log", yscale="log", xlabel="p asked for",
         ylabel="other addresses matched", title="A 20-address wallet among 100,000 others")
plt.show()

# %% [markdown]
# At p = 0.0001 the node sees 30 matching addresses and two in three are the wallet's: it holds
# nearly the wallet's whole address list. At p = 0.01 the 20 real ones hide among about a thousand
# decoys, and at p = 0.1 among more than ten thousand, which the wallet pays for in bandwidth. The
# measured decoys follow each filter's own fill (the crosses); the formula for Core's m and k is
# their average over filters, from which a single small filter strays, by a fifth at p = 0.01 and
# p = 0.05. That average lies above the dashed line at every p, because Core truncates m to whole
# bytes and k downwards, most among the filters that hash at all at p = 0.1 (k = 2 instead of 3);
# at p = 0.5 the filter has no hash function and matches everything: total privacy, and no
# filtering.
#
# ## 5. How long the decoys last
#
# Decoys are random, the wallet's addresses are not. A wallet that sends a second filter (after a
# reconnection, or to another node run by the same observer) draws a fresh tweak, so it gets fresh
# decoys but the same 20 real addresses. The node can keep only what every filter it saw matches.

# %%
guess_left = predict("The node sees two filters of the wallet at p = 0.05, each with a fresh "
                     "tweak. How many of the 100,000 other addresses match both?", None)

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
guess_left.reveal(left[0.05][1])

# %%
ax = new_axes()
for p_ in observed:
    ax.plot(range(1, 5), np.maximum(left[p_], 0.5), "o-", label=f"p = {p_}")
decorate(ax, yscale="log", xlabel="filters seen by the node", xticks=[1, 2, 3, 4],
         ylabel="decoys left (0 drawn at 0.5)", title="Each filter the node sees strips decoys")
plt.show()

# %% [markdown]
# About $100{,}000 \times 0.05 \times 0.05 = 250$ would survive two independent filters; the node
# is left with 173 after two (the second filter kept 173 of the first one's 5,740, 3.0%), 7 after
# three and none after four. Each new filter keeps only its own
# false-positive share of the decoys still left (a few percent at p = 0.05, about one in seven at
# p = 0.1, where Core's k = 2 errs more than asked). At p = 0.01 the decoys are gone by the third
# filter; at p = 0.1, 44 of 100,000 are still left after four, and at one in seven per filter two
# or three more would strip those too. A larger p only buys the wallet a few more filters' time:
# the node ends up knowing its addresses exactly. Gervais, Capkun, Karame and Gruber measured this
# on real wallets (*"On the Privacy Provisions of Bloom Filters in Lightweight Bitcoin Clients"*,
# ACSAC 2014), one reason Bitcoin Core stopped serving BIP37 filters by default (version 0.19,
# 2019); newer light clients use BIP157/158 "compact block filters", where the node publishes one
# filter per block and the wallet does the matching itself, telling the node nothing.

# %% [markdown]
# ## Recap
#
# - A BIP37 filter selects which transactions a node relays to a light wallet; it validates
#   nothing, whatever the article says.
# - Bitcoin Core sizes it in whole numbers: m truncated and capped at 36,000 bytes, k from a
#   whole-number division, truncated (k = 0 for 20 addresses at p = 0.5), and `Bip37Filter`
#   matches its bytes and its test vector exactly.
# - The false-positive rate is the wallet's cover: about $p \times 100{,}000$ decoys among 100,000
#   other addresses, each small filter following its own fill.
# - Filters with fresh tweaks strip the decoys multiplicatively: after a few, the node knows the
#   wallet's addresses.

# %% [markdown]
# ## Exercises
#
# Three exercises on this lesson: compute, predict, then measure. Replace `None` with your
# answer and run the cell: `check` tells you whether it is right and, when it is not, which slip
# it looks like. Worked solutions are in `solutions/13_bitcoin_light_wallets_solutions.ipynb`; try
# first.

# %% [markdown]
# **13.1 (compute).** How many hash functions does Bitcoin Core give a BIP37 filter for 40
# elements at rate 0.1?
#
# Section 2: the size in whole bytes first, then a whole-number division, then $\ln 2$, truncated.

# %%
answer = None  # replace None with your answer
check.bip37_hashes(answer, n=40, p=0.1)

# %% [markdown]
# **13.2 (predict).** A light wallet asks Bitcoin Core for a BIP37 filter for 100,000 elements
# at rate 0.0001. What false-positive rate does the filter it gets really have?
#
# Follow section 2: the size in bits, truncated and capped at 36,000 bytes; then k from a
# whole-number division, times $\ln 2$, truncated; then the classic formula for that m and k.
# `check.bip37_bytes(answer, n=100_000, p=0.0001)` checks the size on the way.

# %%
answer = None  # replace None with your answer
check.bip37_fpp(answer, n=100_000, p=0.0001)

# %% [markdown]
# **13.3 (measure).** Build that filter (Bip37Filter(100_000, 0.0001)), insert 100,000 random
# 20-byte items and measure the fraction of 100,000 other random 20-byte items it matches.
#
# `insert` each item, then ask `contains_many` about the others; `rng.bytes(20)` draws one item,
# as `pubkey_hashes` does in section 3.

# %%
answer = None  # replace None with your answer
check.measured_bip37_fpp(answer, n=100_000, p=0.0001, trials=100_000)

# %% [markdown]
# ## What comes next
#
# `14_explorer.ipynb`, lesson 14 · The explorer: a panel where you move m, k and n yourself and
# watch the measured false-positive rate follow the formulas, the last lesson of part 2.
#
# *Where this lesson's code lives:* `bloomedu/compat/bip37.py`, the recordings in
# `bloomedu/teaching/vectors.py`; its tests: `tests/test_bip37.py`, `tests/test_vectors.py`. The
# README's table maps every article step to its module, lesson and test.
