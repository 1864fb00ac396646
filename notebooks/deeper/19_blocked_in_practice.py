# ---
# jupyter:
#   bloomedu:
#     summary: The blocked filter in practice, deduplicating a batch exactly as a loop
#       of in then add would, and the systems (Parquet, Impala, RocksDB, ClickHouse)
#       that use its layout.
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
# # Going deeper 19 · The blocked filter in practice
#
# An optional notebook that deepens lesson 19 (*Blocked filters: one cache miss per key*), which
# built the split-block filter, derived its Poisson-averaged rate and sized it for the day. Here
# it deduplicates a batch of the day's clicks, and the last section names the systems that
# store their filters in this very layout.

# %%
from bloomedu.i18n import say
from bloomedu.teaching.predict import predict
from bloomedu.variants import BlockedBloomFilter
from bloomedu.variants.blocked import split_block_false_positive_rate
from bloomedu.workloads.day import day_chunks

SEED = 12  # lesson 19's seed

# %% [markdown]
# ## Deduplicating a batch exactly
#
# The day's dedup asks, for every click, "seen before?" and then remembers it. In bulk,
# `add_many_new` does both for a whole array at once and answers exactly as the loop
# `key not in f`, then `f.add(key)`, would: a key counts as new if one of its bits was still clear
# when its turn came, earlier keys of the same batch included. A double click inside one batch is
# therefore caught. Here is a short stream of 20,000 messages with double clicks (a rate of
# 0.02), through a filter sized for 20,000 keys at p = 0.001, checked against the loop.

# %%
guess_dropped = predict("How many genuine clicks (not second copies) will the filter drop as "
                        "seen before?", None)

# %%
ids, is_copy = next(day_chunks(20_000, double_click_rate=0.02, seed=SEED))
bulk, loop = BlockedBloomFilter.from_capacity(20_000, 0.001), BlockedBloomFilter.from_capacity(20_000, 0.001)
new = bulk.add_many_new(ids)
one_by_one = []
for key in ids.tolist():
    one_by_one.append(key not in loop)
    loop.add(key)
assert new.tolist() == one_by_one and bulk == loop
genuine = int((~is_copy).sum())
predicted = sum(split_block_false_positive_rate(num_blocks=bulk.num_blocks, n=k) for k in range(genuine))
say("{messages:,} messages, {copies} second copies of double clicks",
    messages=ids.size, copies=int(is_copy.sum()))
say("dropped: {copies} copies, {genuine} genuine clicks (predicted {predicted:.1f}: the rate after "
    "j keys, summed over the genuine clicks)", copies=int((~new & is_copy).sum()),
    genuine=int((~new & ~is_copy).sum()), predicted=predicted)

# %%
guess_dropped.reveal(int((~new & ~is_copy).sum()))

# %% [markdown]
# Every copy is dropped: its original's bits are all set. The few genuine clicks dropped are false
# positives, and their number is near the prediction: the rate grows from 0 to p = 0.001 as the
# filter fills, so the sum over a filling is a fraction of 0.001 times the number of clicks.

# %% [markdown]
# ## Where real systems use it
#
# - **Parquet**: the file format's Bloom filters (`BloomFilter.md` in the parquet-format
#   specification) are exactly this split-block layout, one filter per column chunk, so a reader can
#   skip row groups that cannot hold a value. The hash is XXH64 of the value's plain encoding.
#   `tests/test_parquet.py` checks that bloomedu, with Parquet's hash, builds the very bytes
#   pyarrow writes.
# - **Impala**: the split-block design comes from Impala's runtime filters (its
#   `block-bloom-filter`, which fixes 8 bits per key so that one AVX2 instruction tests a block);
#   Kudu took over that code, and Arrow's Parquet reader and writer implement the same layout.
# - **RocksDB**: since `format_version=5` its SST files use a "fast local" Bloom filter that puts
#   all of a key's probes in one 64-byte cache line (`FastLocalBloomImpl` in `util/bloom_impl.h`).
# - **ClickHouse** reads Parquet's split-block filters to skip row groups when querying Parquet
#   files (the setting `input_format_parquet_bloom_filter_push_down`).

# %% [markdown]
# Back to lesson 19's exercises: [19_blocked_filters.ipynb](../19_blocked_filters.ipynb). To see
# the whole day run, type `make bench-day` in a terminal: it takes a few minutes and about 2 GiB.
