# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: -slideshow
#     formats: ipynb,py:percent
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
# # Solutions · 02 · Keeping only a 32-bit hash of each ID
#
# Worked solutions to the exercises at the end of lesson
# [02_hashed_ids.ipynb](../02_hashed_ids.ipynb). Try them there first. Each answer is derived in
# code, never typed in, and `check` confirms it.

# %%
import math

from bloomedu import HashedIds, click_stream, deduplicate
from bloomedu.teaching.exercises import check, show
from bloomedu.i18n import say
from bloomedu.core.hashing import murmur3_32, n_bit_hash_function
from bloomedu.core.theory import collision_probability, expected_collisions

SEED = 2
show("02")

# %% [markdown]
# ## 02.1 (compute)
#
# With $N = 2^{32}$ values, a given value is still untaken after n IDs with probability
# $(1 - 1/N)^n$, so $N(1 - (1 - 1/N)^n)$ distinct values are taken and the other IDs collided:
# $n - N(1 - (1 - 1/N)^n)$. `log1p` and `expm1` keep the tiny $1/N$ from being lost in rounding.
# The birthday approximation $n^2/(2N)$ is within 1% here.

# %%
n, N = 36_000_000, 2**32
answer = n - N * -math.expm1(n * math.log1p(-1 / N))
assert math.isclose(answer, expected_collisions(n, N), rel_tol=1e-9)
say("expected collisions {expected:,.0f}  (n²/2N = {birthday:,.0f}), "
    "{share:.2%} of the hour's clicks", expected=answer, birthday=n * n / (2 * N), share=answer / n)

# %%
check.expected_collisions(answer, n=36_000_000, hash_bits=32)

# %% [markdown]
# ## 02.2 (predict)
#
# The chance of at least one collision grows with n; bisection finds the smallest n at which it
# reaches 1/2. The rule of thumb $\sqrt{2N \ln 2} \approx 1.18 \sqrt{N}$, derived in
# `deeper/02_birthday_bound`, lands next to it.

# %%
N = 2**24
low, high = 1, N
while low < high:
    middle = (low + high) // 2
    low, high = (low, middle) if collision_probability(middle, N) >= 0.5 else (middle + 1, high)
answer = low
say("P(any collision) first reaches 1/2 at n = {n:,}; sqrt(2N ln 2) = {rule:,.1f}, "
    "sqrt(N) = {root:,.0f}", n=answer, rule=math.sqrt(2 * N * math.log(2)), root=math.sqrt(N))

# %%
check.birthday_half(answer, hash_bits=24)

# %% [markdown]
# ## 02.3 (measure)
#
# About 2% of the messages are copies, so 103,000 messages hold more than 100,000 genuine
# clicks; the first 100,000 of them go through a stage that keeps 22-bit hashes. Every message
# is genuine, so every one dropped is a genuine click lost.

# %%
stream = click_stream(103_000, double_click_rate=0.02, seed=SEED)
genuine = [click for click in stream if not click.duplicate][:100_000]
assert len(genuine) == 100_000
stage = HashedIds(hash_function=n_bit_hash_function(22, "", murmur3_32))
answer = len(genuine) - len(deduplicate(genuine, stage))
mean = expected_collisions(len(genuine), 2**22)
say("genuine clicks dropped {dropped}; expected {mean:.1f} ± {sd:.1f} (1 sd)", dropped=answer,
    mean=mean, sd=math.sqrt(mean))

# %%
check.genuine_dropped(answer, genuine=100_000, hash_bits=22)
