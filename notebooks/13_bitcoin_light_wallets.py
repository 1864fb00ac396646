# ---
# jupyter:
#   bloomedu:
#     summary: Bitcoin's BIP37 filter as a light wallet sizes and sends it, what a node
#       checks, and what the wallet's false positives hide from the node, and for how long.
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
# closes by pointing at another real system: Bitcoin's "light" wallets. Here a filter crosses the
# network: the wallet sizes and fills it, a node checks and uses it. This lesson builds that
# filter byte for byte and then measures what the false-positive rate p really controls there:
# how much the wallet tells the network about itself.

# %% [markdown]
# ## Objectives
#
# - You will be able to say what a light wallet's BIP37 filter does (it selects transactions) and
#   what it does not (check that they are valid), and who sizes it: the wallet, not the node.
# - You will be able to size a filter as a wallet library does, in whole numbers within a node's
#   limits, and find the rate it really has.
# - You will be able to build a `filterload` message byte for byte, check it against Bitcoin
#   Core's own test vector, and say what a node checks in it.
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

from bloomedu.compat import Bip37Filter
from bloomedu.compat.bip37 import bitcoinj_sizing
from bloomedu.core.hashing import murmur3_32
from bloomedu.core.theory import false_positive_rate
from bloomedu.i18n import phrase, say
from bloomedu.teaching.exercises import check
from bloomedu.teaching.plots import decorate, new_axes, show
from bloomedu.teaching.predict import predict
from bloomedu.teaching.vectors import recorded

SEED = 8
CORE = recorded("bip37")  # Bitcoin Core's BIP37 unit-test vectors, shipped inside the package

# %% [markdown]
# ## 1. What the filter does, and who sizes it
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
# A false positive is an irrelevant transaction the wallet throws away; its confidence that a
# transaction is real comes from the Merkle proof and the block headers' proof-of-work, and even
# that is not full validation (it trusts the miners to have checked scripts and spent coins).
#
# **The wallet sizes the filter; the node only checks it.** A `filterload` carries the filter's
# bytes, its number of hash functions k, a 32-bit tweak and a flags byte: no n, no p. A node that
# serves filters (Bitcoin Core does only with `peerbloomfilters=1`, off by default since 0.19)
# checks two limits, at most 36,000 bytes and at most 50 hash functions (`IsWithinSizeConstraints`),
# disconnects a peer that exceeds them, and matches transactions against the bits as sent.
#
# ## 2. A wallet's sizing, and Bitcoin Core's constructor
#
# A wallet sizes with its own library. bitcoinj, the Java library behind early Android wallets,
# does it in its `BloomFilter` constructor (`core/src/main/java/org/bitcoinj/core/BloomFilter.java`):
#
# - bits $-n \ln p / (\ln 2)^2$, truncated, capped at $36{,}000 \times 8$, divided by 8 in whole
#   numbers, **at least 1 byte**; m is 8 times those bytes;
# - $k = \left\lfloor \frac{m}{n} \ln 2 \right\rfloor$, kept between **1** and 50.
#
# Bitcoin Core's source has a constructor too, `CBloomFilter(nElements, nFPRate, nTweak, nFlags)`,
# with the same bytes, but it divides m by n **in whole numbers** before multiplying by $\ln 2$,
# and keeps no lower bound: its unit tests build their filters with it, while the node itself
# only ever reads the filters peers send. `Bip37Filter(n, p)` is that constructor, and
# `Bip37Filter.sized(*bitcoinj_sizing(...))` the wallet's filter. For a wallet of n = 20 addresses:

# %%
wallet_size = 20
p_values = [0.0001, 0.001, 0.01, 0.05, 0.1, 0.2, 0.5]
say("      p bytes    m (m/n) ln 2 k wallet k Core rate of the wallet’s filter")
for p_ in p_values:
    nbytes, k_wallet = bitcoinj_sizing(n_elements=wallet_size, fp_rate=p_)
    core_ = Bip37Filter(wallet_size, p_)
    assert len(core_.data) == nbytes
    rate_ = false_positive_rate(num_bits=8 * nbytes, num_hashes=k_wallet, n=wallet_size)
    print(f"{p_:7.4f} {nbytes:5d} {8 * nbytes:4d} {8 * nbytes / wallet_size * math.log(2):10.2f} "
          f"{k_wallet:8d} {core_.n_hash_funcs:6d} {rate_:27.4f}")

# %% [markdown]
# Whole bytes cost the wallet a little: at p = 0.1 its 88 bits and k = 3 give a rate of 0.12, not
# 0.1. Core's whole-number division shows where $\frac{m}{n}$ is not whole: $88 / 20$ is 4 for it
# (not 4.4), so k = 2 at p = 0.1; at p = 0.5, $24 / 20$ is 1 and $1 \cdot \ln 2 = 0.69$ truncates
# to **k = 0**, a filter with no hash function. bitcoinj's lower bound of 1 keeps its wallets from
# ever sending one. What would a node do with one?

# %%
guess_node = predict("A wallet sends Core's k = 0 filter (3 bytes, no hash function). What does a "
                     "node do with it?", None,
                     choices=("refuses it", "accepts it, relays nothing",
                              "accepts it, relays everything"))

# %%
rng = np.random.default_rng(SEED)
sent = Bip37Filter(wallet_size, 0.5, tweak=int(rng.integers(2 ** 32)))   # Core's k = 0
received = Bip37Filter.deserialize(sent.serialize())                      # what the node reads
strangers = [rng.bytes(20) for _ in range(1000)]
say("payload {payload}: within the limits: {within}", payload=sent.serialize().hex(),
    within=received.is_within_size_constraints())
say("of 1,000 random addresses, it matches {matched:,}",
    matched=int(received.contains_many(strangers).sum()))
too_big = Bip37Filter.sized(36_001, 1)
try:
    Bip37Filter.deserialize(too_big.serialize())
except ValueError as error:
    say("a filter of 36,001 bytes: ValueError: {error}", error=error)

# %%
relays_everything = (received.is_within_size_constraints()
                     and received.contains_many(strangers).all())
guess_node.reveal("accepts it, relays everything" if relays_everything
                  else "accepts it, relays nothing")

# %% [markdown]
# It is within both limits (3 bytes, 0 hash functions), so the node takes it, and a filter with no
# bit to test matches every transaction: total privacy, no filtering, the full stream of the
# network down the phone's connection. The node checks size, not sense.
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
small = Bip37Filter.sized(*bitcoinj_sizing(n_elements=len(addresses), fp_rate=0.01),
                          tweak=int(rng.integers(2 ** 32)), flags=1)
for address in addresses:
    small.insert(address)
payload = small.serialize()
say("filterload payload: {payload}  ({size} bytes)", payload=payload.hex(), size=len(payload))
say("  length {length} | filter {bits} | k {k_bytes} = {k} | tweak {tweak_bytes} = {tweak} "
    "| flags {flags:02x}", length=payload[0], bits=payload[1:4].hex(), k_bytes=payload[4:8].hex(),
    k=small.n_hash_funcs, tweak_bytes=payload[8:12].hex(), tweak=small.tweak, flags=payload[12])

# %% [markdown]
# By hand: seed i is $i \cdot \mathtt{0xFBA4C795} + \text{tweak}$ modulo $2^{32}$, and each position
# is MurmurHash3 (32-bit) of the address with that seed, modulo m. The node reading the payload
# rebuilds the same filter. Bitcoin Core's own unit-test vector (a copy of its values ships with
# the package, `recorded("bip37")`), built with its constructor, comes out byte for byte:

# %%
by_hand = [murmur3_32(addresses[0], (i * 0xFBA4C795 + small.tweak) % 2 ** 32) % small.num_bits
           for i in range(small.n_hash_funcs)]
say("positions of the first address: {positions}", positions=by_hand)
assert by_hand == small.bit_indices(addresses[0])
node_side = Bip37Filter.deserialize(payload)
assert node_side == small and all(node_side.contains(a) for a in addresses)

vector = CORE["serialized_filter_vectors"][0]
core = Bip37Filter(vector["nElements"], vector["fpRate"], vector["nTweak"], vector["nFlags"])
for item in vector["inserted_hex"]:
    core.insert(bytes.fromhex(item))
say("ours:         {payload}", payload=core.serialize().hex())
say("Bitcoin Core: {payload}", payload=vector["expected_serialized_hex"])
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
# active on the network. For each p the wallet sizes its filter as bitcoinj does; we count the
# other addresses it matches. The node, remember, is never told p.

# %%
guess_estimate = predict("At p = 0.01, the node estimates from the payload alone (m, k and the bits "
                         "set) how many of the 100,000 other addresses match. By how many percent "
                         "is its estimate off?", None)

# %%
rng = np.random.default_rng(SEED)
wallet = pubkey_hashes(wallet_size, rng)
others = pubkey_hashes(100_000, rng)

rows = []
for p_ in p_values:
    f = Bip37Filter.sized(*bitcoinj_sizing(n_elements=wallet_size, fp_rate=p_),
                          tweak=int(rng.integers(2 ** 32)))
    for address in wallet:
        f.insert(address)
    assert f.contains_many(wallet).all()
    decoys = int(f.contains_many(others).sum())
    theory = false_positive_rate(num_bits=f.num_bits, num_hashes=f.n_hash_funcs, n=wallet_size)
    from_payload = (f.bit_count() / f.num_bits) ** f.n_hash_funcs   # all the node needs
    rows.append((p_, f.n_hash_funcs, decoys, theory * len(others), from_payload * len(others),
                 wallet_size / (wallet_size + decoys)))

say("      p  k  decoys  expected from payload  matches that are the wallet’s")
for p_, k_, decoys, expected, estimated, share in rows:
    print(f"{p_:7.4f} {k_:2d} {decoys:7d} {expected:9.1f} {estimated:12.1f} {share:30.2%}")

# %%
p01 = rows[2]
guess_estimate.reveal(round(100 * abs(p01[4] - p01[2]) / p01[2], 1), label="Off by (%)")

# %% [markdown]
# Under 1%: at p = 0.01 the payload predicts 972 decoys and 963 match, so the wallet's 20 are
# only 2.03% of what the node sees. *from payload* is $(\text{bits set} / m)^k$ of the filter
# actually sent, which the node computes as well as we can; *expected*, the classic formula for
# the wallet's m and k (184 bits, k = 6), is an average over all filters of that size (1,209). A
# filter of a few hundred bits fills a little more or less than average, and its decoys follow its
# own fill: the node knows how much cover the wallet bought, whatever p it asked for.

# %%
ax = new_axes()
p_axis = np.array([r[0] for r in rows])
ax.plot(p_axis, [r[2] for r in rows], "o", color="black", label="decoys measured")
ax.plot(p_axis, [r[4] for r in rows], "x", color="#e15759", label="from the payload, (bits set / m)^k")
ax.plot(p_axis, [r[3] for r in rows], label="expected for the wallet's m and k")
ax.plot(p_axis, p_axis * len(others), linestyle="--", label="p × 100,000 (as asked)")
ax.axhline(wallet_size, color="grey", linestyle=":", label="the wallet's own 20")
decorate(ax, xscale="log", yscale="log", xlabel="p asked for",
         ylabel="other addresses matched", title="A 20-address wallet among 100,000 others")
show("Log-log plot of other addresses matched against the p the wallet asked for: the measured "
     "decoys rise from 13 at p = 0.0001 to 58,508 at p = 0.5, sit on the crosses estimated from "
     "the payload, and stay near the dashed line p × 100,000, far above the wallet's own 20 from "
     "p = 0.001 on.")

# %% [markdown]
# At p = 0.0001 the node sees 33 matching addresses and 61% of them are the wallet's: it holds
# nearly the wallet's whole address list. At p = 0.01 the 20 real ones hide among about a thousand
# decoys, at p = 0.1 among 15,100, paid for in bandwidth. A single small filter strays from the
# average by a fifth at p = 0.01 and p = 0.05, and the average lies above the dashed line at every
# p: whole bytes and a truncated k leave the filter a little worse than asked.
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
        f = Bip37Filter.sized(*bitcoinj_sizing(n_elements=wallet_size, fp_rate=p_),
                              tweak=int(rng.integers(2 ** 32)))
        for address in wallet:
            f.insert(address)
        candidates &= f.contains_many(others + wallet)
        left[p_].append(int(candidates[: len(others)].sum()))
        assert candidates[len(others):].all()   # the wallet's addresses always survive

say("filters seen {columns}",
    columns=" ".join(f"{phrase('decoys left, p = {p}', p=p_):>22}" for p_ in observed))
for seen in range(4):
    print(f"{seen + 1:12d} " + " ".join(f"{left[p_][seen]:22d}" for p_ in observed))

# %%
guess_left.reveal(left[0.05][1])

# %%
ax = new_axes()
for p_ in observed:
    ax.plot(range(1, 5), np.maximum(left[p_], 0.5), "o-", label=phrase("p = {p}", p=p_))
decorate(ax, yscale="log", xlabel="filters seen by the node", xticks=[1, 2, 3, 4],
         ylabel="decoys left (0 drawn at 0.5)", title="Each filter the node sees strips decoys")
show("Decoys left, on a log scale, after the node has seen 1 to 4 filters of the same wallet: "
     "each line falls steeply, p = 0.01 to zero by the third filter, p = 0.05 to zero by the "
     "fourth, and p = 0.1 from 11,581 to 23.")

# %% [markdown]
# About $100{,}000 \times 0.05 \times 0.05 = 250$ would survive two independent filters; the node
# is left with 173 after two (the second filter kept 173 of the first one's 5,740, 3.0%), 7 after
# three and none after four: each filter keeps only its own false-positive share of the decoys
# left (about one in seven at p = 0.1, where 23 remain after four). A larger p only buys the
# wallet a few more filters' time: the node ends up knowing its addresses exactly. Gervais,
# Capkun, Karame and Gruber
# measured this on real wallets (*"On the Privacy Provisions of Bloom Filters in Lightweight
# Bitcoin Clients"*, ACSAC 2014), one reason Bitcoin Core stopped serving BIP37 filters by default
# (version 0.19, 2019); newer light clients use BIP157/158 "compact block filters", where the
# node publishes one filter per block and the wallet does the matching itself, telling the node
# nothing.

# %% [markdown]
# ## Recap
#
# - A BIP37 filter selects which transactions a node relays to a light wallet; it validates
#   nothing, whatever the article says.
# - The wallet sizes the filter and sends bytes, k, tweak and flags; the node checks only 36,000
#   bytes and 50 hash functions, and matches. bitcoinj sizes in whole bytes and truncates k, at
#   least 1; Core's own constructor can give k = 0, a filter that matches everything, and a node
#   would accept it.
# - The false-positive rate is the wallet's cover: about $p \times 100{,}000$ decoys among 100,000
#   other addresses, a number the node reads off the payload's fill.
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
# **13.1 (compute).** A light wallet built on bitcoinj sizes its BIP37 filter for 40 elements at
# rate 0.1. How many hash functions does its filterload carry?
#
# Section 2: the size in whole bytes first, then $\frac{m}{n} \ln 2$, truncated, at least 1.

# %%
answer = None  # replace None with your answer
check.bip37_hashes(answer, n=40, p=0.1)

# %% [markdown]
# **13.2 (predict).** A bitcoinj wallet sizes its BIP37 filter for 100,000 elements at rate
# 0.0001, within the 36,000 bytes a node accepts. What false-positive rate does the filter it
# sends really have?
#
# Follow section 2: the size in bits, truncated and capped at 36,000 bytes; then k, truncated;
# then the classic formula for that m and k. `check.bip37_bytes(answer, n=100_000, p=0.0001)`
# checks the size on the way.

# %%
answer = None  # replace None with your answer
check.bip37_fpp(answer, n=100_000, p=0.0001)

# %% [markdown]
# **13.3 (measure).** Build that filter (Bip37Filter.sized(*bitcoinj_sizing(n_elements=100_000,
# fp_rate=0.0001))), insert 100,000 random 20-byte items and measure the fraction of 100,000
# other random 20-byte items it matches.
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
# *Where this lesson's code lives:* `bloomedu/compat/bip37.py` (`Bip37Filter`, `bitcoinj_sizing`),
# the recordings in `bloomedu/teaching/vectors.py`; its tests: `tests/test_bip37.py`,
# `tests/test_vectors.py`. The README's table maps every article step to its module, lesson and
# test.
