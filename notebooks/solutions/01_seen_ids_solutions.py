# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,-slideshow
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
# # Solutions · 01 · Remembering every click ID
#
# Worked solutions to the exercises at the end of lesson
# [01_seen_ids.ipynb](../01_seen_ids.ipynb). Try them there first. Each answer is derived in
# code, never typed in, and `check` confirms it.

# %%
import numpy as np

from bloomedu import SeenIds, deduplicate
from bloomedu.workloads.clicks import uuid4_strings
from bloomedu.steps.dedup import add_all
from bloomedu.i18n import say
from bloomedu.teaching.exercises import check, show
from bloomedu.teaching.memory import allocated_bytes

SEED = 1
show("01")

# %% [markdown]
# ## 01.1 (compute)
#
# IDs a second, times seconds, times one byte per character. Without the four dashes a UUID
# keeps its 32 hex digits, so the day costs 32/36 of the article's figure.

# %%
rate, seconds, id_chars = 10_000, 86_400, 32
ids_per_day = rate * seconds
answer = ids_per_day * id_chars
say("{ids:,} IDs x {id_chars} bytes = {total:,} bytes = {gb:.2f} GB", ids=ids_per_day,
    id_chars=id_chars, total=answer, gb=answer / 1e9)

# %%
check.id_storage_bytes(answer, rate=10_000, seconds=86_400, id_chars=32)

# %% [markdown]
# ## 01.2 (predict)
#
# A double-click copy carries an ID the dict already holds, and adding it again changes
# nothing, so the dict ends with one entry per genuine click: the messages minus the copies.
# A stream built to match confirms it.

# %%
messages, duplicates = 1000, 20
answer = messages - duplicates
ids = uuid4_strings(answer, np.random.default_rng(SEED))
stream = ids + ids[:duplicates]  # 980 genuine IDs, then 20 copies
seen = SeenIds()
deduplicate(stream, seen, key=lambda message_id: message_id)
assert len(stream) == messages and len(seen) == answer
say("{messages} messages -> {ids} IDs in the dict", messages=len(stream), ids=len(seen))

# %%
check.seen_ids_after(answer, messages=1000, duplicates=20)

# %% [markdown]
# ## 01.3 (measure)
#
# The IDs are made inside the measured function, so that `allocated_bytes` counts their
# strings as well as the dict. The bytes depend on the Python version, so the printed figure is
# not compared by the tests; the checker accepts any plausible measurement.

# %% tags=["nbval-ignore-output"]
n = 100_000
rng = np.random.default_rng(SEED)
stage, total = allocated_bytes(
    lambda: add_all(SeenIds(), (key.replace("-", "") for key in uuid4_strings(n, rng))))
assert len(stage) == n and all(len(key) == 32 for key in stage.processed)
answer = total / n
say("{total:,} bytes for {n:,} IDs: {per_id:.1f} bytes per ID, {times:.1f} x the characters",
    total=total, n=n, per_id=answer, times=answer / 32)

# %%
check.bytes_per_id(answer, id_chars=32)
