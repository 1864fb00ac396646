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
# # Solutions · 18 · Many consumers: one stream, one server, one cluster
#
# Worked solutions to the exercises at the end of lesson
# [18_many_consumers.ipynb](../18_many_consumers.ipynb). Try them there first. Each answer is
# derived in code, never typed in, and `check` confirms it. None of them needs a server.

# %%
import math

import numpy as np

from bloomedu.i18n import say
from bloomedu.services.redis_sharded import day_layout, key_slot
from bloomedu.teaching.exercises import check, show
from bloomedu.workloads.clicks import uuid4_strings

SEED = 118  # not the lesson's seed: fresh IDs
show("18")

# %% [markdown]
# ## 18.1 (compute)
#
# The whole day needs $m = -n \ln p / (\ln 2)^2$ bits (lesson 08). One Redis string holds at
# most $2^{32}$ bits, so at least $\lceil m / 2^{32} \rceil$ shards; every node holds as many
# shards as the others, so round that up to a multiple of the nodes. (Each shard is sized for
# $\lceil n / \text{shards} \rceil$ IDs, a few bits more than a share of $m$: the loop checks
# the rounded shard, as `day_layout` does.)

# %%
n, p, nodes = 864_000_000, 0.0001, 3
m = -n * math.log(p) / math.log(2) ** 2
fewest = math.ceil(m / 2 ** 32)
answer = nodes * math.ceil(fewest / nodes)
per_shard = math.ceil(-math.ceil(n / answer) * math.log(p) / math.log(2) ** 2)
assert per_shard <= 2 ** 32 and answer == day_layout(n=n, p=p, nodes=nodes).shards
say("m = {m:,.0f} bits = {strings:.2f} strings of 2^32 bits: at least {fewest}, "
    "so {shards} shards of about {per_shard:,} bits",
    m=m, strings=m / 2**32, fewest=fewest, shards=answer, per_shard=per_shard)

# %%
check.shards_for_day(answer, n=864_000_000, p=0.0001, nodes=3)

# %% [markdown]
# ## 18.2 (predict)
#
# A command of B keys costs one round trip plus the server's time for its B keys, and the client
# waits for each reply before sending the next. With a round trip of $t_\text{rt}$ and
# $t_\text{key}$ of server time a key,
#
# $$\text{keys per second} = \frac{B}{t_\text{rt} + B\,t_\text{key}}.$$

# %%
round_trip, per_key, batch = 80e-6, 1e-6, 1000
answer = batch / (round_trip + batch * per_key)
say("{batch:,} keys every {us:,.0f} µs: {rate:,.0f} keys/s "
    "(one key a round trip would give {one_by_one:,.0f})",
    batch=batch, us=(round_trip + batch * per_key) * 1e6, rate=answer,
    one_by_one=1 / (round_trip + per_key))

# %%
check.batched_keys_per_s(answer, round_trip_us=80.0, server_us_per_key=1.0, batch=1000)

# %% [markdown]
# ## 18.3 (measure)
#
# An ID's slot is CRC16 of its bytes mod 16,384; shard 0 owns slots 0..5460, 5,461 of the
# 16,384, so about a third of the IDs should land there.

# %%
ids = uuid4_strings(9000, np.random.default_rng(SEED))
slots = np.array([key_slot(i.encode()) for i in ids])
answer = float(np.mean((slots >= 0) & (slots <= 5460)))
expected = 5461 / 16384
say("measured share {share:.4f}; expected {expected:.4f} ± {sd:.4f}",
    share=answer, expected=expected, sd=math.sqrt(expected * (1 - expected) / 9000))

# %%
check.measured_shard_share(answer, n=9000, first_slot=0, last_slot=5460)
