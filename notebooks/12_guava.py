# ---
# jupyter:
#   bloomedu:
#     summary: The article's own library, Google Guava, matched bit for bit and byte
#       for byte, Java's arithmetic and padding bits included.
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
# # 12 · Guava, bit for bit
#
# Lessons 09–11 (`09_one_million_urls.ipynb` to `11_a_filter_is_not_a_set.ipynb`) used bloomedu's
# own filter. The second article, *"Bloom Filter: come memorizzare 1 Milione di stringhe in meno di
# 2MB?"*, builds its filter with a real library, Google Guava for Java. This lesson makes the same
# filter as Guava 31.1's `BloomFilter.create(Funnels.stringFunnel(UTF_8), n, p)`: the same bits,
# and the same bytes as its `writeTo`, checked against bytes recorded from real Guava.

# %% [markdown]
# ## Objectives
#
# - You will be able to size a filter with Java's arithmetic (a truncating cast, 64-bit words)
#   and say where it differs from `BloomFilter.from_capacity`.
# - You will be able to compute Guava's k positions of a string and the bytes `writeTo` writes,
#   and check them against bytes real Guava wrote.
# - You will be able to explain why Guava takes positions modulo its bitSize rather than m, and
#   what its padding bits change.
# - You will be able to read Java's bytes in Python and refuse a stream that is cut short or
#   padded.
#
# **Prerequisites:** 08 · Sizing a filter, 09 · One million URLs in under 2 MB.
#
# **Time:** about 55 minutes (teaching 35 min, exercises 20 min).

# %%
# %matplotlib inline
import inspect
import math
import time

import mmh3

from bloomedu import BloomFilter
from bloomedu.compat import GuavaBloomFilter
from bloomedu.compat.guava import guava_num_bits, guava_num_hashes, java_round
from bloomedu.core.theory import false_positive_rate
from bloomedu.i18n import phrase, say
from bloomedu.teaching.exercises import check
from bloomedu.teaching.plots import draw_bit_groups, show
from bloomedu.teaching.predict import predict
from bloomedu.teaching.vectors import recorded
from bloomedu.workloads.urls import malicious_urls, safe_urls

SEED = 8
RECORDED = recorded("guava")  # bytes real Guava 31.1 wrote, shipped inside the package

# %% [markdown]
# ## 1. Sizing, with Java's arithmetic
#
# Guava sizes a filter with the formulas of lesson 08, but in Java's arithmetic, and the details
# decide every bit:
#
# - $m = \left\lfloor -n \ln p / (\ln 2)^2 \right\rfloor$: Java's `(long)` cast **truncates**
#   (lesson 08 rounds up);
# - $k = \mathrm{round}\left(\frac{m}{n} \ln 2\right)$, at least 1, with Java rounding halves up;
# - the bits live in `long` words of 64, so the array really holds
#   **bitSize** $= 64 \lceil m / 64 \rceil$ bits.
#
# The smallest example worth looking at, n = 10 and p = 0.1, by hand and then by the library:

# %%
n, p = 10, 0.1
m_by_hand = int(-n * math.log(p) / (math.log(2) * math.log(2)))   # int() truncates like (long)
k_by_hand = max(1, java_round(m_by_hand / n * math.log(2)))
bit_size_by_hand = 64 * math.ceil(m_by_hand / 64)
say("-n ln p / (ln 2)^2 = {bits:.4f}  ->  m = {m}", bits=-n * math.log(p) / math.log(2) ** 2,
    m=m_by_hand)
say("m / n * ln 2       = {hashes:.4f}   ->  k = {k}", hashes=m_by_hand / n * math.log(2),
    k=k_by_hand)
say("words of 64 bits   = {words}        ->  bitSize = {bit_size}", words=math.ceil(m_by_hand / 64),
    bit_size=bit_size_by_hand)

guava = GuavaBloomFilter.create(n, p)
assert (guava_num_bits(n=n, p=p), guava_num_hashes(num_bits=m_by_hand, n=n)) == (m_by_hand, k_by_hand)
assert (guava.bit_size, guava.num_hash_functions) == (bit_size_by_hand, k_by_hand)

# %% [markdown]
# ## 2. Four strings in, and where their bits fall
#
# Each string is hashed once: its UTF-8 bytes go through MurmurHash3 x64 128, whose two 64-bit
# halves are $h_1$ and $h_2$. Position i of the k is $h_1 + i\,h_2$ modulo $2^{64}$, with the sign
# bit cleared (Java's `long` is signed, and `& Long.MAX_VALUE` makes it non-negative), modulo
# **bitSize**. The library's method is short enough to read:

# %%
print(inspect.getsource(GuavaBloomFilter.bit_indices))

# %% [markdown]
# Four strings go in, three positions each: twelve positions.

# %%
guess_padding = predict("How many of the 12 positions fall in bits 47 … 63, the 17 padding bits "
                        "that a filter of m = 47 bits would not have?", None)

# %%
guess_bits = predict("How many distinct bits do the 12 positions set?", None)

# %%
words = ["città", "naïve", "日本", "😀"]
say("string   UTF-8 bytes  put()  bit positions")
for word in words:
    positions = guava.bit_indices(word)
    print(f"{word:8} {len(word.encode()):11d}  {str(guava.put(word)):>5}  {positions}")
labels = {"città": "città", "naïve": "naïve", "日本": "nihon (kanji)", "😀": "emoji"}  # fonts lack kanji
groups = {labels[word]: guava.bit_indices(word) for word in words}
beyond = sorted({i for positions in groups.values() for i in positions if i >= m_by_hand})
owners = {}
for label, positions in groups.items():
    for i in set(positions):
        owners.setdefault(i, []).append(label)
shared = {i: names for i, names in sorted(owners.items()) if len(names) > 1}
say("positions at or beyond m = {m}: {beyond}; bits set: {set_bits} of {bit_size}", m=m_by_hand,
    beyond=beyond, set_bits=guava.bit_count(), bit_size=guava.bit_size)
say("bits shared by two strings: {shared}",
    shared="; ".join(f"{i} ({phrase(' and ').join(names)})" for i, names in shared.items()))

# %%
groups[phrase("shared by two strings")] = list(shared)
draw_bit_groups(guava.bits, groups, width=16,
                title=phrase("Guava, n = 10, p = 0.1: m = {m} but bitSize = {bit_size}",
                             m=m_by_hand, bit_size=guava.bit_size),
                outlined={phrase("beyond m = {m}", m=m_by_hand):  # the padding
                          range(m_by_hand, guava.bit_size)})
show("Guava's 64 bits for n = 10, p = 0.1 as four rows of 16: the bits of città, naïve, the kanji "
     "and the emoji in four colours, bits 0 and 6 set by both naïve and the kanji, and the 17 "
     "padding bits 47 to 63 outlined in red, two of them set (51 and 58).")

# %%
guess_padding.reveal(len(beyond), label="Counted")
guess_bits.reveal(guava.bit_count(), label="Counted")
say("on average, 12 positions x 17 / 64 = {expected:.1f} land in the padding",
    expected=12 * 17 / 64)

# %% [markdown]
# The padding bits are used like any other: on average $12 \times 17/64 \approx 3.2$ of the
# positions land there; here two do, 51 (città) and 58 (naïve), outlined in red. And naïve and the kanji share bits 0 and 6,
# so the 12 positions set only 10 bits (painted in the "shared" colour). Sharing is not what makes
# a false positive: a probe is one when each of its k bits was set by some string, shared bits or
# not (lesson 06's took one bit from each of three keys, none shared). Sharing changes the count:
# fewer bits set than positions, a lower fill than $kn/m$.
#
# Guava's `writeTo` stream is a six-byte header (strategy ordinal, k, number of words as a
# big-endian int) and then each 64-bit word, big-endian. `to_bytes()` gives exactly that, and the
# package ships the bytes real Guava wrote for the same four puts:

# %%
stream = guava.to_bytes()
java = RECORDED["filters"][0]   # the same four puts, recorded by running Guava 31.1
say("writeTo: {hex}  ({nbytes} bytes)", hex=stream.hex(), nbytes=len(stream))
say("  strategy ordinal {ordinal} (MURMUR128_MITZ_64), k = {k}, words = {words}, "
    "word 0 = 0x{word0}", ordinal=stream[0], k=stream[1], words=int.from_bytes(stream[2:6], "big"),
    word0=stream[6:14].hex())
say("Guava:   {hex}", hex=java["write_to_hex"])
assert stream.hex() == java["write_to_hex"]

# %% [markdown]
# Guava also estimates its own state from the bits: `expectedFpp()` is $(\text{bits set} /
# \text{bitSize})^k$ and `approximateElementCount()` inverts the expected fill (lesson 11's
# estimate). Both must agree with Java, and so must the answers to probes never inserted:

# %%
probes = [f"d-{i}" for i in range(100)]
reported = [probe for probe in probes if guava.might_contain(probe)]
say("expected_fpp():              {ours!r:22}  Guava: {guava!r}", ours=guava.expected_fpp(),
    guava=java["expected_fpp"])
say("approximate_element_count(): {ours!r:22}  Guava: {guava!r}",
    ours=guava.approximate_element_count(), guava=java["approximate_element_count"])
say("probes d-0 .. d-99 reported present: {reported}", reported=reported)
assert guava.expected_fpp() == java["expected_fpp"]
assert reported == [p_ for p_ in java["probes_reported_present"] if p_ in probes]

# %% [markdown]
# One probe of the hundred comes back "maybe present" without ever being inserted: a false
# positive, the same one Java reports.
#
# **Why bitSize and not m?** Guava's filter never keeps m. Its bit array knows only its words, and
# `writeTo` records the number of words, not m (the header above): a filter read back with
# `readFrom` can only know bitSize, so the positions must be taken modulo the size both sides can
# see. A filter that reduced modulo m would set other bits and write other bytes, and Java would
# answer differently about some strings. Built by hand with the same hashes, with the rate each
# size gives at n = 10:

# %%
modulo_m = GuavaBloomFilter(1, guava.num_hash_functions)
for word in words:
    h1, h2 = mmh3.hash64(word.encode("utf-8"), 0, signed=False)
    for i in range(guava.num_hash_functions):
        modulo_m.bits.set(((h1 + i * h2) % 2 ** 64 & (2 ** 63 - 1)) % m_by_hand)
say("modulo bitSize (Guava): {hex}", hex=guava.to_bytes().hex())
say("modulo m (not Guava):   {hex}", hex=modulo_m.to_bytes().hex())
say("classic rate at n = 10, k = 3: over m = {m} bits {rate_m:.3f}, over bitSize = {bit_size} bits "
    "{rate_bit_size:.3f}", m=m_by_hand,
    rate_m=false_positive_rate(num_bits=m_by_hand, num_hashes=3, n=10), bit_size=guava.bit_size,
    rate_bit_size=false_positive_rate(num_bits=guava.bit_size, num_hashes=3, n=10))

# %% [markdown]
# ## 3. Java's bytes in Python, Python's bytes in Java
#
# The package ships more filters recorded from Guava 31.1 (`recorded("guava")`; the tests read the
# same file in `tests/data/`): from n = 0 (which Guava treats as 1) to p = $10^{-10}$, strings with
# characters outside the Basic Multilingual Plane, and a filter filled far past its design. For each,
# Python puts the same strings and must write Java's bytes exactly, so Java's `readFrom` reads
# Python's filter; then Python reads Java's bytes and must find every inserted string.

# %%
def inserted_strings(vector):
    if "inserted" in vector:
        return vector["inserted"]
    return [vector["inserted_pattern"].format(i=i) for i in range(vector["inserted_count"])]


say("    n       p  strings  bytes same bytes  read back, all found")
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
# A stream cut short, padded with extra bytes, or naming a strategy Guava does not have is refused
# with a message that says which:

# %%
for label, bad in [(phrase("cut short"), stream[:-1]), (phrase("padded"), stream + b"\0"),
                   (phrase("strategy 7"), b"\x07" + stream[1:])]:
    try:
        GuavaBloomFilter.from_bytes(bad)
    except ValueError as error:
        say("{label:10}: ValueError: {error}", label=label, error=error)

# %% [markdown]
# ## 4. The article's million URLs, as Guava stores them
#
# The article's Java example is `create(1_000_000, 0.001)`, the filter of lesson 09 sized the Java
# way. Then a million malicious URLs from lesson 09's generator go in through the bulk path, and
# safe URLs, never inserted, measure the false-positive rate.

# %%
million = GuavaBloomFilter.create(1_000_000, 0.001)
lesson_09 = BloomFilter.from_capacity(1_000_000, 0.001)
say("Guava:     m = {m:,} (truncated), bitSize = {bit_size:,}, k = {k}",
    m=guava_num_bits(n=1_000_000, p=0.001), bit_size=million.bit_size,
    k=million.num_hash_functions)
say("lesson 09: m = {m:,} (rounded up), k = {k}", m=lesson_09.num_bits, k=lesson_09.num_hashes)
say("writeTo size: {nbytes:,} bytes (under 2,000,000: {under})", nbytes=len(million.to_bytes()),
    under=len(million.to_bytes()) < 2_000_000)

# %% [markdown]
# One bit fewer by truncation, then 13 more to fill the last 64-bit word: twelve more bits in all,
# and the same k. Now the million URLs go into both, and each is asked about the same 200,000 safe
# URLs; each should claim about 0.1% of them, some 200.

# %%
guess_both = predict("Of the 200,000 safe URLs, how many are claimed by both Guava's filter and "
                     "lesson 09's, which hold the same million URLs?", None)

# %% tags=["nbval-ignore-output"]
started = time.perf_counter()
malicious, safe = malicious_urls(1_000_000, seed=SEED), safe_urls(200_000, seed=SEED)
million.put_many(malicious)
lesson_09.add_many(malicious)
claimed_guava = million.might_contain_many(safe)
claimed_09 = lesson_09.contains_many(safe)
rate = float(claimed_guava.mean())
say("generate 1,200,000 URLs, fill two filters, ask 200,000 twice: {seconds:.1f} s",
    seconds=time.perf_counter() - started)

# %%
sd = math.sqrt(0.001 * 0.999 / len(safe))
say("false-positive rate on 200,000 safe URLs: {rate:.5f} ({sds:+.2f} standard deviations from "
    "p = 0.001)", rate=rate, sds=(rate - 0.001) / sd)
say("expected_fpp() from the bits set:        {expected:.5f}", expected=million.expected_fpp())
say("approximate_element_count():             {count:,}", count=million.approximate_element_count())
say("malicious URLs reported absent (first 100,000 checked): {missed}",
    missed=int((~million.might_contain_many(malicious[:100_000])).sum()))
say("safe URLs claimed: by Guava {guava}, by lesson 09's filter {lesson_09}, by both {both}",
    guava=int(claimed_guava.sum()), lesson_09=int(claimed_09.sum()),
    both=int((claimed_guava & claimed_09).sum()))
guess_both.reveal(int((claimed_guava & claimed_09).sum()), label="Counted")

# %% [markdown]
# The same promise as lesson 09, within one standard deviation of p, now in the exact format a
# Java service would load with `BloomFilter.readFrom`. But not the same false positives: only one
# safe URL fools both, where two independent filters would share about $200 \times 0.001 = 0.2$.
# Which URLs are unlucky depends on where a scheme puts their bits (Guava's positions and bitSize,
# lesson 09's), not on the list: the rate is the promise, not the URLs.

# %% [markdown]
# ## Recap
#
# - Guava truncates m, rounds k half up, and stores whole 64-bit words: `create(n, p)` holds
#   bitSize $= 64 \lceil m/64 \rceil$ bits, twelve more than `from_capacity` for the article's
#   million URLs.
# - Positions are $h_1 + i\,h_2$ of MurmurHash3 x64 128, sign bit cleared, modulo bitSize: the
#   padding bits are used (they halve the rate of the n = 10 filter, 0.052 against 0.105 over
#   m = 47 bits), because the bytes carry bitSize and never m; reducing modulo m would give other
#   bits and other bytes.
# - Two filters of the same URLs at the same rate err on different URLs (1 shared of about 200).
# - `GuavaBloomFilter` writes and reads `writeTo` bytes exactly as Guava 31.1 does, on every
#   recorded filter, and refuses a stream cut short, padded, or of an unknown strategy.

# %% [markdown]
# ## Exercises
#
# Three exercises on this lesson: compute, predict, then measure. Replace `None` with your
# answer and run the cell: `check` tells you whether it is right and, when it is not, which slip
# it looks like. Worked solutions are in `solutions/12_guava_solutions.ipynb`; try first.

# %% [markdown]
# **12.1 (compute).** How many bits does Guava allocate (its bitSize) for 1,000,000 expected
# insertions at fpp = 0.01?
#
# Section 1 sizes a filter as Guava does, by hand.

# %%
answer = None  # replace None with your answer
check.guava_bit_size(answer, n=1_000_000, p=0.01)

# %% [markdown]
# **12.2 (predict).** Guava's create(10, 0.1) holds 8 different strings. How many of its bits do
# you expect to be set?
#
# Section 2: over how many bits do the positions run, and how many positions are there?

# %%
answer = None  # replace None with your answer
check.guava_bits_set(answer, n=10, p=0.1, strings=8)

# %% [markdown]
# **12.3 (measure).** Put 100,000 malicious URLs into GuavaBloomFilter.create(100_000, 0.01)
# (bitSize = 958,528, k = 7) and measure its rate on 100,000 safe URLs.
#
# `put_many` and `might_contain_many`, with `malicious_urls` and `safe_urls` and a seed of your own.

# %%
answer = None  # replace None with your answer
check.measured_fpp(answer, num_bits=958_528, num_hashes=7, n=100_000, trials=100_000)

# %% [markdown]
# ## What comes next
#
# `13_bitcoin_light_wallets.ipynb`, lesson 13 · Bitcoin light wallets, byte for byte: the system
# the article ends on, where a filter is sent over the network and its false positives are the
# wallet's privacy.
#
# *Where this lesson's code lives:* `bloomedu/compat/guava.py`, `bloomedu/compat/java.py` (Java's
# rounding and UTF-8), the recordings in `bloomedu/teaching/vectors.py`; its tests:
# `tests/test_guava.py`, `tests/test_vectors.py`. The README's table maps every article step to its
# module, lesson and test.
