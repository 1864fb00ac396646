# ---
# jupyter:
#   bloomedu:
#     summary: RedisBloom's cuckoo filter (CF.*) modelled in Python and matched against
#       a real server answer for answer, CF.INFO and CF.SCANDUMP byte for byte, deletes
#       of IDs never added.
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
# # Going deeper 20 · RedisBloom's cuckoo filter, bit for bit
#
# An optional notebook that deepens lesson 20 (*After Bloom*), which measured bloomedu's
# `CuckooFilter` (12-bit fingerprints, buckets of 4) and what deleting keys never added does to
# it. RedisBloom, the module of lesson 17, has a cuckoo filter of its own; here it is matched in
# Python, answer for answer and byte for byte, against a server started from the virtual
# environment.

# %%
import numpy as np

from bloomedu.compat.redisbloom import RedisCuckooFilter, info_reply
from bloomedu.i18n import say
from bloomedu.services.redis_server import RedisServer
from bloomedu.teaching.predict import predict
from bloomedu.workloads.clicks import uuid4_strings

SEED = 20  # lesson 20's seed

# %% [markdown]
# ## The module's filter beside its model
#
# RedisBloom's `CF.*` commands (lesson 17) keep a cuckoo filter with one-byte fingerprints,
# buckets of 2 by default and a new sub-filter when full; `RedisCuckooFilter` models version
# 2.8.2. The cell starts a server as lesson 17 does, sends 3,000 `CF.ADD` and 600 `CF.DEL` (300
# of IDs never added), does the same in Python, and compares the answers, `CF.INFO` and
# `CF.SCANDUMP`.

# %%
guess_found = predict("Of the 300 CF.DEL of IDs never added, how many find a fingerprint to "
                      "remove?", None)

# %%
ids = uuid4_strings(3_300, np.random.default_rng(SEED))
added, gone = ids[:3_000], ids[:300] + ids[3_000:]  # 300 deletes of IDs added, 300 of IDs never added
model = RedisCuckooFilter(1_000)  # CF.RESERVE clicks 1000: buckets of 2, 20 evictions, expansion 1
with RedisServer(module=True) as server:
    r = server.client()
    r.execute_command(*model.reserve_args("clicks"))
    pipe = r.pipeline(transaction=False)
    for item in added:
        pipe.execute_command("CF.ADD", "clicks", item)
    for item in gone:
        pipe.execute_command("CF.DEL", "clicks", item)
    server_deletes = [bool(reply) for reply in pipe.execute()[len(added):]]
    server_dump, cursor = [], 0
    while True:  # CF.SCANDUMP answers (cursor, bytes) pairs until the cursor is 0
        cursor, data = r.execute_command("CF.SCANDUMP", "clicks", cursor)
        if cursor == 0:
            break
        server_dump.append((cursor, data))
    server_info = info_reply(r.execute_command("CF.INFO", "clicks"))
for item in added:
    model.add(item)
model_deletes = [model.delete(item) for item in gone]
assert model_deletes == server_deletes and model.info() == server_info and model.scandump() == server_dump
say("CF.INFO, server and model: {info}", info=server_info)
say("CF.DEL found a fingerprint for {found_added} of the 300 IDs added and {found_never_added} of "
    "the 300 never added, on both",
    found_added=sum(server_deletes[:300]), found_never_added=sum(server_deletes[300:]))
say("CF.SCANDUMP: {chunks} chunks, {size:,} bytes, equal",
    chunks=len(server_dump), size=sum(len(d) for _, d in server_dump))
guess_found.reveal(sum(server_deletes[300:]))
fresh = uuid4_strings(20_000, np.random.default_rng(SEED + 1))
say("rate on 20,000 fresh IDs: {rate:.4f}; at most 2b/255 = {bound:.4f} in each of its "
    "{sub_filters} sub-filters",
    rate=model.exists_many(fresh).mean(), bound=4 / 255,
    sub_filters=server_info["Number of filters"])

# %% [markdown]
# Every answer and byte agree, through evictions, growth and the compaction after deletes
# (`Number of items deleted` counts only the deletes since the last compaction, which the module
# runs once they pass a tenth of the items: 41 of the 314 that found a fingerprint). One byte caps
# each sub-filter's rate at $2b/255$; a query asks all four sub-filters, so the chain's rate may
# reach about $4 \times 0.0157 = 0.063$, and 0.0398 is measured. A delete of an ID never added
# hits another's fingerprint far more often than in lesson 20's `CuckooFilter` with 12-bit
# fingerprints (14 of 300 here, against 172 of 100,000 there), which takes f as a parameter.

# %% [markdown]
# Back to lesson 20: [20_after_bloom.ipynb](../20_after_bloom.ipynb).
