# ---
# jupyter:
#   bloomedu:
#     summary: 'Spark''s BloomFilter and PostgreSQL''s bloom index, bit for bit: version
#       1''s 2³¹-bit cap, a runtime filter in a join, a row''s signature on the index page.'
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
# # 21 · Bloom filters inside the engines: Spark and PostgreSQL
#
# Lesson 18 spread article 1's day (*"Filtro di Bloom: un elemento appartiene all'insieme?"*:
# 864,000,000 click IDs) over a Redis cluster. A data engineer with a day that outgrows one
# machine reaches for Spark, and many developers first meet a Bloom filter inside a database
# without knowing it. This lesson opens both engines, running on this machine, and reads their
# filters with bloomedu, bit for bit.

# %% [markdown]
# ## Objectives
#
# - You will be able to build a filter with Spark over a column and read its bytes with bloomedu.
# - You will be able to compute what Spark's version-1 filter gives at the article's scale, and
#   say how version 2 fixes it.
# - You will be able to find the Bloom filter Spark puts into a join's plan by itself.
# - You will be able to compute a row's signature in a PostgreSQL bloom index and read in
#   `EXPLAIN ANALYZE` when the planner uses the index and how many rows it rechecks.
#
# **Prerequisites:** lessons 08 (Sizing a filter: m and k from n and p), 12 (Guava, bit for bit)
# and 18 (Many consumers: one stream, one server, one cluster).
#
# **Time:** about 60 minutes (teaching 40, exercises 20).
#
# The engines run here, started by the lesson and stopped at the end of section 4: Spark in local
# mode (`pyspark` and Java) and a throwaway PostgreSQL cluster on a Unix socket (Debian's
# PostgreSQL with its contrib modules). The first cell says what is missing, if anything, and how
# to get it; the exercises need neither engine.

# %%
# %matplotlib inline
import re

import matplotlib.pyplot as plt
import numpy as np

from bloomedu.compat.postgres import BloomIndex
from bloomedu.compat.postgres_hash import hashint4, hashtext
from bloomedu.compat.postgres_pages import read_tuples
from bloomedu.compat.postgres_random import BloomRandom, c_mod
from bloomedu.compat.spark import (SparkBloomFilter, dataframe_sizing, reachable_bits,
                                   spark_bit_indices_many, spark_num_bits, spark_num_hashes)
from bloomedu.compat.spark_murmur import spark_hash_bytes_many
from bloomedu.core import theory
from bloomedu.i18n import say
from bloomedu.services import postgres_server, spark_session
from bloomedu.teaching.engines import quiet_spark, require_engines, without_ids
from bloomedu.teaching.exercises import check
from bloomedu.teaching.plots import FIGSIZE, decorate, show
from bloomedu.teaching.predict import predict
from bloomedu.workloads.day import day_chunks, uuid_ids

SEED = 21
print(require_engines())  # or what is missing, and how to get it

# %% [markdown]
# ## 1. A filter over a column, built by Spark, read by bloomedu
#
# `DataFrame.stat.bloomFilter(column, n, p)` builds Spark's filter (`org.apache.spark.util.sketch.
# BloomFilter`) in one pass: each partition fills a filter of its own and Spark ORs them. It sizes
# as lesson 08, with a floor and whole 64-bit words:
#
# $$m = \left\lfloor \frac{-n \ln p}{(\ln 2)^2} \right\rfloor \text{ rounded up to 64-bit words},
# \qquad k = \max\!\left(1, \operatorname{round}\frac{m_0}{n} \ln 2\right),$$
#
# with $m_0$ the floor before the rounding. Each item is hashed with Spark's own copy of
# MurmurHash3 (x86, 32 bits): $h_1 = H(x, 0)$, $h_2 = H(x, h_1)$. Python reaches the JVM method
# through `df._jdf`, since pyspark wraps no `bloomFilter`. The column: the day's first 200,000
# messages (`day_chunks`), as the article's UUID strings, double clicks included, across two
# partitions.

# %%
local = quiet_spark(cores=2)  # local[2]; the JVM's messages go to a log file, not here
spark = local.session
ids, is_copy = next(day_chunks(200_000, seed=SEED))
uuids = uuid_ids(ids)
clicks = spark.createDataFrame([(u, int(i % 1000)) for u, i in zip(uuids, ids)],
                               "id string, campaign int").repartition(2)
java_filter = clicks._jdf.stat().bloomFilter("id", 200_000, 0.01)
spark_bytes = spark_session.filter_bytes(local.jvm, java_filter)  # writeTo, into bytes
say("{messages:,} messages, {copies:,} of them copies; Spark wrote {size:,} bytes, header {header}",
    messages=len(uuids), copies=int(is_copy.sum()), size=len(spark_bytes),
    header=spark_bytes[:16].hex(" ", 4))

# %% [markdown]
# The header is four big-endian 32-bit fields: the format's version (2, Spark ≥ 4.1), k, a seed
# and the number of 64-bit words. bloomedu's `SparkBloomFilter` is the same filter in Python.
# **Predict:** Spark filled two filters, one per partition, and merged them.

# %%
guess_bits = predict("bloomedu puts the same 200,000 strings into SparkBloomFilter(200_000, "
                     "0.01), one at a time, in one filter. How many of its bits differ from the "
                     "bits Spark wrote?", None)

# %%
ours = SparkBloomFilter(200_000, 0.01)
ours.put_many(uuids)
theirs = SparkBloomFilter.from_bytes(spark_bytes)
ours_bits = np.unpackbits(np.frombuffer(ours.to_bytes()[16:], dtype=np.uint8))
theirs_bits = np.unpackbits(np.frombuffer(spark_bytes[16:], dtype=np.uint8))
say("m = {m:,} bits, k = {k}; bits set: Spark {spark_set:,}, bloomedu {bloomedu_set:,}",
    m=theirs.bit_size, k=theirs.num_hash_functions, spark_set=int(theirs_bits.sum()),
    bloomedu_set=int(ours_bits.sum()))
guess_bits.reveal(int((ours_bits != theirs_bits).sum()), label="Bits that differ")
assert ours.to_bytes() == spark_bytes

# %% [markdown]
# None: OR is order-free, so the partitions do not matter, and the bytes are equal. Each side also
# reads the other's: Spark's `BloomFilter.readFrom` takes bloomedu's bytes and answers as bloomedu
# does, on 2,000 of the day's IDs and 2,000 it never saw.

# %%
fresh = uuid_ids(next(day_chunks(2000, seed=SEED + 1))[0])
probes = uuids[:2000] + fresh
from_python = spark_session.read_in_jvm(local.jvm, ours.to_bytes())  # readFrom
spark_says = [bool(from_python.mightContainString(u)) for u in probes]
say("Spark's answers equal bloomedu's: {equal}; yes to all 2,000 of the day's IDs: {all_yes}, "
    "to {fresh_yes} of the 2,000 fresh ones",
    equal=spark_says == ours.might_contain_many(probes).tolist(), all_yes=all(spark_says[:2000]),
    fresh_yes=sum(spark_says[2000:]))

# %% [markdown]
# ## 2. Version 1 and the 2³¹-bit ceiling
#
# Spark until 4.0 wrote version 1, which computes the i-th position in 32-bit integers:
# $c = h_1 + i\,h_2$ wrapped to an `int`, $c \to \lnot c$ if negative, bit $c \bmod m$. A
# non-negative `int` is below $2^{31}$, so bits from $2^{31}$ on are never set and never read: the
# filter behaves as one of $2^{31}$ bits, whatever m it was sized with. Lesson 08 sizes the day at
# p = 1% with about $9.6\,n$ bits.
#
# **Predict:** sized for the day, 864,000,000 IDs at 1%, and filled with them.

# %%
guess_v1 = predict("What false-positive rate does Spark's version-1 filter sized for 864,000,000 "
                   "IDs at p = 0.01 give once it holds them all?", None)

# %%
n, p = 864_000_000, 0.01
k = spark_num_hashes(num_bits=spark_num_bits(n=n, p=p), n=n)
m = 64 * -(-spark_num_bits(n=n, p=p) // 64)  # whole 64-bit words
v1_bits = reachable_bits(m, version=1)
say("m = {m:,} bits ({gib:.2f} GiB), k = {k}; version 1 reaches {reached:,} of them ({share:.1%})",
    m=m, gib=m / 8 / 2**30, k=k, reached=v1_bits, share=v1_bits / m)
keys = [u.encode() for u in uuids]  # the section's 200,000 IDs, hashed as putString does
h1 = spark_hash_bytes_many(keys, 0)
h2 = spark_hash_bytes_many(keys, h1)
for version in (1, 2):
    positions = spark_bit_indices_many(h1, h2, k, m, version)
    say("version {version}: of their {positions:,} positions, the largest is {largest:,}, "
        "and {beyond:.1%} lie at 2^31 or beyond", version=version, positions=positions.size,
        largest=int(positions.max()), beyond=(positions >= 2**31).mean())
v1_rate = theory.false_positive_rate(num_bits=v1_bits, num_hashes=k, n=n)
v2_rate = theory.false_positive_rate(num_bits=m, num_hashes=k, n=n)
say("once the day is in: version 2 (all m bits) {rate:.4f}", rate=v2_rate)
guess_v1.reveal(round(v1_rate, 4), label="Computed, version 1 (2^31 bits)")
capped = SparkBloomFilter.from_bytes(
    spark_session.dataframe_bloom_filter(clicks, "id", 864_000_000, 0.01))
say('stat.bloomFilter("id", 864_000_000, 0.01): m = {m:,} bits, k = {k}; '
    "dataframe_sizing: (n, m) = {sizing}", m=capped.bit_size, k=capped.num_hash_functions,
    sizing=dataframe_sizing(864_000_000, 0.01))

# %% [markdown]
# A filter that promises 1% answers "maybe" to about two IDs in three, and nothing warns: the
# bytes are well formed, only a quarter of the bits can ever be set. Spark's own pull request
# (SPARK-47547) measured 76% at n = 10⁹. How the two versions part as n grows, for filters sized
# at 1%:

# %%
sizes = np.geomspace(1e7, 2e9, 60).astype(np.int64)


def rate(n, version, p=0.01):
    """The classic rate of Spark's filter for n at p, holding n items, over the bits it reaches."""
    bits = spark_num_bits(n=int(n), p=p)
    reached = reachable_bits(64 * -(-bits // 64), version=version)
    return theory.false_positive_rate(num_bits=reached, num_hashes=spark_num_hashes(num_bits=bits, n=int(n)),
                                      n=int(n))


fig, ax = plt.subplots(figsize=FIGSIZE)
ax.plot(sizes, [rate(s, 1) for s in sizes], color="tab:red", label="version 1: $2^{31}$ bits reached")
ax.plot(sizes, [rate(s, 2) for s in sizes], color="tab:blue", label="version 2: every bit reached")
ax.axvline(n, color="black", linestyle="--", label="the article's day")
decorate(ax, xscale="log", yscale="log", xlabel="IDs n, each filter sized for its n at p = 0.01",
         ylabel="false-positive rate", title="Spark's filter, full, sized at 1%")
show("Two curves of the false-positive rate against n for Spark filters sized at 1%: version 2 "
     "stays at 0.01 everywhere; version 1 leaves it once n passes about 224 million, where m "
     "reaches 2^31 bits, and climbs to about 0.65 at the article's 864 million IDs.")
say("            n  version 1  version 2")
for size in (100_000_000, 224_000_000, 300_000_000, 864_000_000, 1_000_000_000, 2_000_000_000):
    print(f"{size:>13,} {rate(size, 1):>10.4f} {rate(size, 2):>10.4f}")

# %% [markdown]
# Version 2 (Spark 4.1, the default since) computes in 64 bits: $c = h_1 \cdot (2^{31} - 1)$,
# then $c \mathrel{+}= h_2$ before each position, bit $(c < 0\ ?\ \lnot c : c) \bmod m$. Every
# bit is reachable, and the header gains the seed field we read above. `SparkBloomFilter(n, p,
# version=1)` writes and reads the old format, for filters an older Spark left behind.
#
# One more ceiling stays in both versions, the last line under the prediction: `stat.bloomFilter`
# goes through the aggregate `bloom_filter_agg`, which caps n at 4,000,000 and m at $2^{26}$ bits
# by default. Asked for the day, it builds 8 MiB with k = 12, which answers "maybe" to nearly
# every ID once the day is in; a day-sized filter comes from `BloomFilter.create`, or from raising
# `spark.sql.optimizer.runtime.bloomFilter.maxNumBits`.

# %% [markdown]
# ## 3. A Bloom filter Spark puts into a join by itself
#
# Join the clicks with a small table of campaigns, keeping one country's. Before shuffling every
# click to the join, Spark's optimizer can build a *runtime filter*: a Bloom filter of the small
# side's keys (`bloom_filter_agg` over `xxhash64` of the key) that drops the clicks whose campaign
# it rules out (`might_contain`). It does so when `spark.sql.optimizer.runtime.bloomFilter.enabled` (true by
# default) and the large side is a big scan: the lesson lowers the 10 GB threshold to 1 KB.

# %%
folder = local.folder  # the session's own folder: local.stop() at the end removes it
countries = np.random.default_rng(SEED).choice(["IT", "DE", "FR", "ES", "NL"], 1000).tolist()
spark.createDataFrame(list(enumerate(countries)), "campaign int, country string") \
    .write.parquet(f"{folder}/campaigns")
clicks.write.parquet(f"{folder}/clicks")
spark.read.parquet(f"{folder}/clicks").createOrReplaceTempView("clicks")
spark.read.parquet(f"{folder}/campaigns").createOrReplaceTempView("campaigns")
spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")  # a shuffled join, not a broadcast
spark.conf.set("spark.sql.optimizer.runtime.bloomFilter.applicationSideScanSizeThreshold", "1KB")


def plan_lines(query):
    """The optimized plan's lines that hold a Bloom filter, expression IDs removed."""
    plan = spark.sql(query)._jdf.queryExecution().optimizedPlan().toString()
    return [without_ids(line) for line in plan.splitlines()
            if "bloom_filter_agg" in line or "might_contain" in line]


italy = ("SELECT count(*) FROM clicks c JOIN campaigns m ON c.campaign = m.campaign "
         "WHERE m.country = 'IT'")
print(*plan_lines(italy), sep="\n")
say("clicks on Italy's campaigns: {clicks:,}", clicks=spark.sql(italy).first()[0])

# %% [markdown]
# **Predict:** join every campaign instead, with no `WHERE` on the small side.

# %%
guess_join = predict("Without WHERE m.country = 'IT', does Spark still put a Bloom filter into "
                     "the plan?", None, choices=("yes", "no"))

# %%
every = "SELECT count(*) FROM clicks c JOIN campaigns m ON c.campaign = m.campaign"
lines = plan_lines(every)
if lines:
    print(*lines, sep="\n")
else:
    say("(no Bloom filter in the plan)")
guess_join.reveal("yes" if lines else "no")

# %% [markdown]
# A filter helps only if it rules clicks out: with every campaign on the small side, every
# click passes, and building the filter would be pure cost. Spark injects one only when the small
# side is filtered (a selective predicate) and small (under 10 MB), and the large side is large.

# %% [markdown]
# ## 4. PostgreSQL's bloom index: one small filter a row
#
# A B-tree index serves one column order; a query on any subset of eight columns would need many.
# PostgreSQL's `bloom` index keeps, for each row, a *signature*: a tiny Bloom filter of that
# row's values, `length` bits (80 by default) where each column sets `colN` bits (2). For a value
# of column a, it seeds a Park–Miller generator with a, draws once, seeds again with the
# value's hash XOR that draw, and takes each bit as the next draw mod `length`. A query
# computes the signature of its values; every row whose signature holds all of those bits is a
# candidate, fetched from the table and rechecked. The server below is a throwaway cluster in a
# temporary folder, with 100,000 clicks in four columns.
#
# The first row's signature, by hand: each column's two bits, from its value's hash
# (`hashint4` for the `int4`, `hashtext` for the texts), gathered into five 16-bit words, then
# compared with the first tuple of the index's first data page (`get_raw_page`, from
# `pageinspect`).

# %%
server = postgres_server.PostgresServer()
rng = np.random.default_rng(SEED)
names = {"country": ["IT", "DE", "FR", "ES", "NL", "BE", "AT", "CH", "PL", "CZ",
                     "SE", "NO", "DK", "FI", "PT", "IE", "GR", "HU", "RO", "BG"],
         "device": ["mobile", "desktop", "tablet"],
         "browser": ["chrome", "safari", "firefox", "edge", "samsung", "opera", "brave", "vivaldi"]}
rows = list(zip(rng.integers(0, 1000, 100_000).tolist(),
                *(rng.choice(values, 100_000).tolist() for values in names.values())))
server.sql("CREATE TABLE clicks (campaign int4, country text, device text, browser text);"
           "INSERT INTO clicks VALUES " + ",".join(f"({c}, '{a}', '{d}', '{b}')" for c, a, d, b in rows)
           + "; CREATE INDEX clicks_bloom ON clicks USING bloom (campaign, country, device, browser)"
           " WITH (length = 80, col1 = 2, col2 = 2, col3 = 2, col4 = 2);"
           "SET default_statistics_target = 400; ANALYZE clicks")  # statistics from every row
print(server.sql("SELECT count(*), pg_size_pretty(pg_relation_size('clicks')), "
                 "pg_size_pretty(pg_relation_size('clicks_bloom')) FROM clicks")[0])
index = BloomIndex(length=80, col_bits=(2, 2, 2, 2))
row, words = rows[0], [0] * 5
for column, value in enumerate(row):
    generator = BloomRandom()
    generator.srand(column)                                     # mySrand(attno)
    hashed = hashint4(value) if isinstance(value, int) else hashtext(value)
    generator.srand(hashed ^ (generator.rand() & 0xFFFFFFFF))   # the hash XOR one draw
    bits = [c_mod(generator.rand(), 80) for _ in range(2)]      # C's %, on the next draws
    for bit in bits:
        words[bit // 16] |= 1 << (bit % 16)
    say("column {column} = {value!r:>9}: hash {hashed:>10}, bits {bits}",
        column=column, value=value, hashed=hashed, bits=bits)
page = bytes.fromhex(server.sql("SELECT encode(get_raw_page('clicks_bloom', 1), 'hex')")[0][0])
(block, line), on_page = read_tuples(page, num_words=5)[0]
say("by hand {by_hand}; signature() {signature}; the page, row ({block}, {line}): {on_page}",
    by_hand=tuple(words), signature=index.signature(row), block=block, line=line, on_page=on_page)
assert tuple(words) == index.signature(row) == on_page

# %% [markdown]
# A row sets at most 8 of the 80 bits, so a given bit is set with probability
# $1 - (1 - 1/80)^8 \approx 0.096$. A query on two columns asks for 4 bits; a row that holds
# neither value passes the index with probability $0.096^4$, and is then read and thrown away.
# **Predict:** a query for a campaign and a country that no row has.

# %%
guess_recheck = predict("SELECT * FROM clicks WHERE campaign = 5000 AND country = 'XX' finds no "
                        "row. How many rows does the index hand to the recheck, which removes them?",
                        None)

# %%
def explain(where):
    """EXPLAIN ANALYZE's plan, without costs or timings."""
    return [line for (line,) in server.sql("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) "
                                            f"SELECT * FROM clicks WHERE {where}")]


plan = explain("campaign = 5000 AND country = 'XX'")
print(*plan, sep="\n")
removed = int(re.search(r"Rows Removed by Index Recheck: (\d+)", "\n".join(plan))[1])
ours = index.candidates(rows, {0: 5000, 1: "XX"})
say("expected {expected:.1f}; bloomedu's candidates: {count}, rows {rows}",
    expected=100_000 * (1 - (1 - 1 / 80) ** 8) ** 4, count=len(ours), rows=ours)
guess_recheck.reveal(removed, label="Rows Removed by Index Recheck")
assert len(ours) == removed

# %% [markdown]
# The index hands over as many rows as `BloomIndex.candidates` names, since it holds the same
# signatures (`tests/test_postgres_server.py` compares every one), and each costs a read of the
# table. That price decides whether the planner uses the index at all. **Predict:** a query on one
# column, for a value that a twentieth of the rows hold.

# %%
guess_plan = predict("For WHERE country = 'IT' alone, does the planner use the bloom index or "
                     "read the whole table?", None, choices=("bloom index", "whole table"))

# %%
for where in ("country = 'IT'", "campaign = 7"):
    say("WHERE {condition}:", condition=where)
    print(*(f"  {line}" for line in explain(where)), sep="\n")
guess_plan.reveal("bloom index" if "clicks_bloom" in "".join(explain("country = 'IT'")) else "whole table")
server.close()
local.stop()
say("PostgreSQL stopped: {postgres_stopped}; Spark stopped: {spark_stopped}",
    postgres_stopped=server.pid is None, spark_stopped=local.session is None)

# %% [markdown]
# About 5,000 rows hold Italy: fetching them through any index costs more than reading the table
# in order, so the planner scans it. A rarer value (a campaign, 0.1% of the rows) gets the
# index, but one column asks for only 2 bits, so many rows pass by chance: the recheck throws
# away several times the rows it keeps. A bloom index pays when a query names several columns.

# %% [markdown]
# ## Recap
#
# - Spark's `stat.bloomFilter` sizes as lesson 08 in whole 64-bit words and hashes with its own
#   Murmur3; `SparkBloomFilter` writes and reads the same bytes, so either side can build a
#   filter the other queries.
# - Version 1 computes positions in 32 bits and never reaches past $2^{31}$ bits: at the day's
#   864,000,000 IDs a filter sized for 1% gives about 65%. Version 2 computes in 64 bits.
# - Spark's optimizer puts a Bloom filter into a join by itself (`bloom_filter_agg`,
#   `might_contain`) when one side is small and filtered and the other is a large scan.
# - A PostgreSQL bloom index keeps one small signature per row; a query's bits pick candidates
#   that the table rechecks, and `EXPLAIN ANALYZE` counts the ones thrown away.

# %% [markdown]
# ## Exercises
#
# Three exercises, none needing an engine: compute, predict, then measure. Replace `None` with
# your answer and run the cell: `check` says whether it is right and, when it is not, which slip
# it looks like. Worked solutions are in `solutions/21_inside_the_engines_solutions.ipynb`.

# %% [markdown]
# **21.1 (compute).** How many bytes does Spark's writeTo write for a version-2
# BloomFilter.create(1_000_000, 0.02)?

# %%
answer = None  # replace None with your answer
check.spark_filter_bytes(answer, n=1_000_000, p=0.02, version=2)

# %% [markdown]
# **21.2 (predict).** A bloom index of length=80 with 2 bits for each of its 4 columns holds
# 1,000,000 rows. A query names 1 column(s), with a value no row holds: how many rows, on
# average, does the index hand to the recheck?

# %%
answer = None  # replace None with your answer
check.bloom_index_rechecks(answer, rows=1_000_000, length=80, columns=4, bits=2, query_columns=1)

# %% [markdown]
# **21.3 (measure).** Put 100,000 distinct IDs into SparkBloomFilter(100_000, 0.03) and measure
# the fraction of 100,000 other IDs it claims to hold.
#
# `uuid4_strings` draws distinct IDs; `put_many` and `might_contain_many` take them in bulk.

# %%
answer = None  # replace None with your answer
check.measured_spark_fpp(answer, n=100_000, p=0.03, trials=100_000)

# %% [markdown]
# ## What comes next
#
# This is the course's last lesson. Two more filters live in the same engines: Parquet files can
# carry split-block filters (lesson 19) that Spark's Parquet reader consults to skip row groups,
# and PostgreSQL's BRIN indexes have Bloom operator classes (`int4_bloom_ops`, `text_bloom_ops`,
# ...) that keep one filter per range of table pages instead of one signature per row.
#
# *Where this lesson's code lives:* `bloomedu/compat/spark.py` (Spark's filter and its Murmur3),
# `bloomedu/compat/postgres.py`, `bloomedu/compat/postgres_hash.py`,
# `bloomedu/compat/postgres_random.py` and `bloomedu/compat/postgres_pages.py` (the bloom index),
# `bloomedu/services/spark_session.py` and `bloomedu/services/postgres_server.py` (starting the
# engines), `bloomedu/teaching/exercises/engines_steps.py`; the README's table names their tests.
