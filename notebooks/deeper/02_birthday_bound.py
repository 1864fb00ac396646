# ---
# jupyter:
#   bloomedu:
#     summary: The birthday bound derived in a few lines (the expected collisions, the
#       chance of one, the even-odds point), then checked on when the first collision
#       comes.
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
# # Going deeper 02 · The birthday bound, derived
#
# An optional notebook that deepens lesson 02 (*Keeping only a 32-bit hash of each ID*), which
# quoted the birthday bound and measured it on four million IDs. Here it is derived, in a few
# lines, and checked on the question the lesson left aside: when does the first collision come?

# %%
# %matplotlib inline
import math

import numpy as np

from bloomedu.i18n import phrase, say
from bloomedu.kernels.murmur import murmur3_128_uint64
from bloomedu.core.hashing import murmur3_32
from bloomedu.core.theory import collision_probability, expected_collisions
from bloomedu.teaching.classroom import find_collision
from bloomedu.teaching.plots import decorate, new_axes, show
from bloomedu.workloads.clicks import uuid4_bytes

SEED = 2

# %% [markdown]
# ## The expected number of collisions
#
# Hash n IDs into N equally likely values, independently. Take one value: each hash misses it
# with probability $1 - 1/N$, so all n miss it with probability $(1 - 1/N)^n$. Adding up over the
# N values, the expected number of values hit at least once, the distinct hashes, is
#
# $$E[\text{distinct}] = N \left(1 - \left(1 - \frac{1}{N}\right)^n\right).$$
#
# Every ID whose hash is not new is a collision, the case a hashed-ID deduplicator takes for a
# copy, so the expected number of collisions is
#
# $$E[C] = n - N \left(1 - \left(1 - \frac{1}{N}\right)^n\right) \approx \frac{n(n-1)}{2N} \approx \frac{n^2}{2N}.$$
#
# The approximation is the binomial expansion $(1 - 1/N)^n = 1 - n/N + \binom{n}{2}/N^2 - \dots$,
# good while $n \ll N$. It has a direct reading too: among n IDs there are $\binom{n}{2}$ pairs,
# and each pair shares a hash with probability $1/N$. The count is a sum of many rare, nearly
# independent events, so it spreads like a Poisson count: standard deviation about $\sqrt{E[C]}$.
#
# ## The chance of at least one
#
# No collision at all means that the second hash misses the first, the third misses both, and so
# on:
#
# $$P(\text{none}) = \prod_{i=1}^{n-1} \left(1 - \frac{i}{N}\right) \approx \exp\left(-\frac{n(n-1)}{2N}\right),$$
#
# since $\ln(1 - x) \approx -x$ for small x. It crosses one half where $n^2/(2N) = \ln 2$, at
# $n \approx \sqrt{2 N \ln 2} = 1.18 \sqrt{N}$: about 77,163 IDs for a 32-bit hash, and 4,823 for
# a 24-bit one. The three forms side by side, and the library's:

# %%
say("  b         n   exact E[C]    n^2/(2N)  P(any), product  1 - e^(-n^2/2N)")
for bits, n in [(16, 300), (24, 5_000), (32, 100_000), (32, 4_000_000)]:
    N = 2**bits
    exact = n - N * (1 - (1 - 1 / N) ** n)
    assert math.isclose(exact, expected_collisions(n, N), rel_tol=1e-6)
    print(f"{bits:3d} {n:9,d}  {exact:11.4f}  {n * n / (2 * N):10.4f}  "
          f"{collision_probability(n, N):15.4f}  {-math.expm1(-n * n / (2 * N)):15.4f}")
print()
for bits in (16, 24, 32):
    N = 2**bits
    low, high = 1, 4 * int(math.sqrt(N))  # bisection: the smallest n with P(any) >= 1/2
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if collision_probability(middle, N) >= 0.5 else (middle + 1, high)
    say("{bits}-bit hash: P(any) reaches 1/2 at n = {n:,}; sqrt(2 N ln 2) = {approx:,.1f}",
        bits=bits, n=low, approx=math.sqrt(2 * N * math.log(2)))

# %% [markdown]
# ## When the first collision comes
#
# `bloomedu.teaching.classroom.find_collision` walks through IDs, remembering which ID gave each
# hash value, and stops at the first value it has met before. Lesson 02's four million IDs came in
# chunks of 500,000 from seed 2; given the first chunk again, it names the two IDs that collide
# first:

# %%
first_chunk = (key.decode() for key in uuid4_bytes(500_000, np.random.default_rng(SEED)))
collision = find_collision(murmur3_32, keys=first_chunk)
print(collision)
assert murmur3_32(collision.first) == murmur3_32(collision.second) == collision.value
say("P(any collision) by {tries:,} IDs: {p:.3f}", tries=collision.tries,
    p=collision_probability(collision.tries, 2**32))

# %% [markdown]
# The first repeat came after the even-odds point of 77,164 IDs, where the chance of a collision
# had already reached 0.750. One stream is one draw: its first collision falls at a random
# position, and the theory describes the spread of many such draws. A 16-bit hash makes many
# draws cheap: 2,000 streams of random keys, hashed with MurmurHash3 (the low 16 bits of its
# first half), each until its first repeated value. If T is the number of IDs drawn up to and
# including the first repeat, $T > n$ exactly when the first n IDs hold no collision, so
#
# $$E[T] = \sum_{n \ge 0} P(T > n) = 1 + \sum_{n \ge 1} P(\text{none among } n) \approx \sqrt{\frac{\pi N}{2}}:$$

# %%
N16, STREAMS, LONGEST = 2**16, 2_000, 2_000
rng = np.random.default_rng(SEED)
keys = rng.integers(0, 2**63, size=(STREAMS, LONGEST), dtype=np.uint64)
h1, _ = murmur3_128_uint64(keys.ravel())
values = (h1 & np.uint64(N16 - 1)).reshape(STREAMS, LONGEST)
first_repeat = np.empty(STREAMS, dtype=int)
for stream, row in enumerate(values):
    _, first_index = np.unique(row, return_index=True)
    seen_before = np.ones(LONGEST, dtype=bool)
    seen_before[first_index] = False  # an ID is a repeat unless it is its value's first
    first_repeat[stream] = int(np.argmax(seen_before)) + 1  # IDs drawn up to the first repeat
assert all(len(set(row[:count - 1].tolist())) == count - 1 for row, count in zip(values[:50], first_repeat[:50]))
none_among = np.array([1 - collision_probability(n, N16) for n in range(1, LONGEST + 1)])
say("first repeat after {mean:.1f} IDs on average over {streams:,} streams "
    "(sd of that mean {sd:.1f})", mean=first_repeat.mean(), streams=STREAMS,
    sd=first_repeat.std() / math.sqrt(STREAMS))
say("theory: 1 + sum of P(none among n) = {exact:.1f}; sqrt(pi N / 2) = {approx:.1f}",
    exact=1 + none_among.sum(), approx=math.sqrt(math.pi * N16 / 2))
for n in (100, 200, 302, 400, 600, 1000):
    say("  first repeat within {n:4d} IDs: {share:.3f} of the streams, "
        "theory P(any among {n}) = {p:.3f}", n=n, share=np.mean(first_repeat <= n),
        p=collision_probability(n, N16))

# %%
ax = new_axes()
ns = np.arange(1, 1001)
ax.plot(ns, [collision_probability(n, N16) for n in ns], color="#1f4e79",
        label="theory: P(a collision among n)")
ax.plot(np.sort(first_repeat), np.arange(1, STREAMS + 1) / STREAMS, color="#f28e2b",
        drawstyle="steps-post",
        label=phrase("{streams:,} streams: share whose first repeat is within n", streams=STREAMS))
ax.axhline(0.5, color="0.6", linestyle=":", linewidth=1)
decorate(ax, xlabel="n, IDs", ylabel="share", xlim=(0, 1000),
         title="When the first collision of a 16-bit hash comes")
show("Share of 2,000 streams whose first repeat of a 16-bit hash comes within n IDs, n from 0 "
     "to 1,000: the measured staircase follows the theory curve of the chance of a collision "
     "among n, crossing one half near 300 IDs and nearing 1 by 1,000.")

# %% [markdown]
# The measured spread of first collisions follows $1 - \prod (1 - i/N)$ across its whole range:
# half the streams have their first repeat within about 300 IDs, $1.18 \sqrt{N}$, and almost all
# of them within 1,000, a tiny fraction of the 65,536 values. That is the birthday paradox, and
# why lesson 02's 32-bit hashes start dropping clicks at a hundred thousand IDs, not at four
# billion.
#
# Back to lesson 02 (*Keeping only a 32-bit hash of each ID*).
