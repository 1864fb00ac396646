# ---
# jupyter:
#   bloomedu:
#     summary: The article's use case on a real SQLite blacklist of a million URLs,
#       every answer the database's, and a latency knob that shows when the filter pays.
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
# # 10 · A blacklist cache in front of a database
#
# Lesson 09 (`09_one_million_urls.ipynb`) stored a million malicious URLs in a filter of under
# 2 MB and measured its false positives. The second article, *"Bloom Filter: come memorizzare 1
# Milione di stringhe in meno di 2MB?"*, builds that filter for a reason: the URLs live in a
# database (or on a slow file system) that we do not want to ask about every visited link. This
# lesson puts the filter in front of a real database and measures what it saves.

# %% [markdown]
# ## Objectives
#
# - You will be able to put a filter in front of a database so that its "no" is final and its
#   "maybe" asks the database, and check that every answer is the database's.
# - You will be able to predict, from p and the traffic, how many lookups still reach the
#   database, and count them.
# - You will be able to tell when the filter pays, by comparing round trips and local work as the
#   database moves farther away.
#
# **Prerequisites:** 08 · Sizing a filter, 09 · One million URLs in under 2 MB.
#
# **Time:** about 60 minutes (teaching 40 min, exercises 20 min).

# %%
# %matplotlib inline
import inspect
import tempfile
import time
from pathlib import Path

import matplotlib.pyplot as plt

from bloomedu import BloomFilter
from bloomedu.i18n import phrase, say
from bloomedu.services.blacklist import BlacklistCache
from bloomedu.teaching.exercises import check
from bloomedu.teaching.latency import DistantDatabase
from bloomedu.teaching.plots import decorate, new_axes, show
from bloomedu.teaching.predict import predict
from bloomedu.workloads.urls import malicious_urls, safe_urls, traffic_mix

SEED = 7
MIB = 2 ** 20

# %% [markdown]
# ## 1. The lookup rule
#
# A Bloom filter of the blacklisted URLs sits in front of the database:
#
# * the filter says **no** → the URL is certainly not blacklisted, and the database is not asked;
# * the filter says **maybe** → the database settles it (the article also allows treating every
#   maybe as "blacklisted", accepting 0.1% of false alarms).
#
# `bloomedu.services.blacklist` does this on a real database: an SQLite file (Python's own
# `sqlite3`) with one table `blacklist(url TEXT PRIMARY KEY)`. The whole rule:

# %%
print(inspect.getsource(BlacklistCache.is_blacklisted))

# %% [markdown]
# A false positive therefore costs one query, never a wrong answer. Building the cache: the
# million URLs go into the database in one transaction and into a filter sized by
# `BloomFilter.from_capacity(n, p)` (lesson 08's rule) for n = 1,000,000 and p = 0.001, the very
# filter of lesson 09, bit for bit.

# %%
n, p = 1_000_000, 0.001
malicious = malicious_urls(n, seed=SEED)
safe = safe_urls(n, seed=SEED)
folder = tempfile.TemporaryDirectory()
db_path = Path(folder.name) / "blacklist.sqlite"
started = time.perf_counter()
cache = BlacklistCache.create(db_path, malicious, fpp=p)
built = time.perf_counter() - started
lesson_09 = BloomFilter.from_capacity(n, p)
lesson_09.add_many(malicious)
assert cache.bloom == lesson_09
say("rows in the database: {rows:,}; the filter: {bloom!r}", rows=len(cache.database),
    bloom=cache.bloom)

# %% tags=["nbval-ignore-output"]
say("database + filter built in {seconds:.2f} s; SQLite file: {file_mib:.1f} MiB on disk, "
    "the filter {filter_mib:.2f} MiB in memory", seconds=built,
    file_mib=db_path.stat().st_size / MIB, filter_mib=cache.bloom.nbytes / MIB)

# %% [markdown]
# ## 2. A sample of traffic
#
# 100,000 visits, each to a blacklisted URL with probability 1% and otherwise to a safe page,
# drawn with a seed. First the database alone answers every visit; then the cache does.

# %%
guess_queries = predict("Of the 100,000 visits, how many will the cache send on to the database?",
                        None)

# %%
visits, truly_malicious = traffic_mix(100_000, malicious, safe, malicious_share=0.01, seed=SEED)
database = cache.database
timings = {}
one_by_one_alone = phrase("database alone, one query per URL")
one_by_one_fronted = phrase("filter + database, one URL at a time")
started = time.perf_counter()
by_database = [database.contains(url) for url in visits]
timings[one_by_one_alone] = time.perf_counter() - started
database_only_queries = database.queries
started = time.perf_counter()
by_cache = [cache.is_blacklisted(url) for url in visits]
timings[one_by_one_fronted] = time.perf_counter() - started

assert by_cache == by_database == truly_malicious.tolist()
stats = cache.stats
safe_visits = len(visits) - truly_malicious.sum()
say("visits:                              {count:7,d}", count=stats.lookups)
say("  answered by the filter alone (no): {count:7,d}", count=stats.filter_rejections)
say("  sent to the database (maybe):      {count:7,d}", count=stats.database_queries)
say("    confirmed blacklisted:           {count:7,d}", count=stats.blacklisted)
say("    false positives confirmed away:  {count:7,d}  (p x the {safe_visits:,} safe visits: "
    "{expected:.0f})", count=stats.false_positives, safe_visits=safe_visits,
    expected=safe_visits * p)
say("database queries: {without:,} without the filter, {with_filter:,} with it: {saved:,} saved "
    "= {share:.2%}", without=database_only_queries, with_filter=stats.database_queries,
    saved=stats.queries_saved, share=stats.saved_share)
say("answers identical to the database's: {identical}", identical=by_cache == by_database)

# %%
guess_queries.reveal(stats.database_queries)

# %% [markdown]
# Every blacklisted visit passes the filter (no false negatives), so all 998 of them reach the
# database; of the 99,002 safe visits about p of them do too, 99 expected and 105 measured. The
# other 98,897 visits are settled by the filter alone: 98.90% of the queries saved, and every
# answer is the database's.
#
# The same traffic in bulk: the filter checks all the URLs at once (`contains_many`) and the maybes
# go to the database in **one** SQL query (a temporary table joined to the primary key). The
# database alone can do the same: all 100,000 URLs in one query.

# %%
guess_bulk = predict("In bulk, how many round trips to the database does the filter in front "
                     "save for the 100,000 visits?", None)

# %%
cache.reset_stats()
statements_before = database.statements
started = time.perf_counter()
bulk_by_database = database.contains_many(visits)
timings[phrase("database alone, one query for all")] = time.perf_counter() - started
alone_statements = database.statements - statements_before
started = time.perf_counter()
bulk_by_cache = cache.is_blacklisted_many(visits)
timings[phrase("filter + database, in bulk")] = time.perf_counter() - started
assert bulk_by_cache.tolist() == bulk_by_database.tolist() == by_database
say("database alone, in bulk: {urls:,} URLs in {statements} SQL statement", urls=len(visits),
    statements=alone_statements)
say("filter + database, in bulk: {urls:,} URLs in {statements} SQL statement; answers identical: "
    "True", urls=cache.stats.database_queries, statements=cache.stats.sql_statements)
guess_bulk.reveal(alone_statements - cache.stats.sql_statements, label="Round trips saved")

# %% [markdown]
# None. Batched, both strategies make one round trip, and the filter saves only the database's
# work on the URLs it rules out (1,103 URLs looked up instead of 100,000). Its saving in round
# trips belongs to services that must answer each visit as it comes, one URL at a time: the case
# section 3 measures.

# %% tags=["nbval-ignore-output"]
say("how                                     total (s)  µs per visit")
for how, seconds in timings.items():
    print(f"{how:38}  {seconds:9.3f}  {seconds / len(visits) * 1e6:12.2f}")

# %% [markdown]
# These timings are your machine's (the query counts above are everyone's). This SQLite file sits
# on the local disk, in the operating system's cache, so a query costs no network round trip at
# all: compare, on your machine, a visit through the filter with a visit to the database alone,
# one URL at a time and in bulk. Whatever the table shows, the article's premise, a *slow*
# database, is so far only argued: this one is not slow.
#
# ## 3. A latency knob: the database behind a network
#
# A database server answers after a network round trip: a fraction of a millisecond to about a
# millisecond inside one data centre, tens of milliseconds across regions.
# `bloomedu.teaching.latency.DistantDatabase` is the same SQLite file with a knob, `latency`:
# every SELECT first waits that long. The wait is real (it spins on the clock, since `time.sleep`
# overshoots waits this short). A real run at 1 ms, on the first 1,000 visits, with the lookup rule
# of `is_blacklisted` written out: the filter first, the database only for a maybe.

# %%
sample = visits[:1000]
far = DistantDatabase(db_path, latency=0.001)
started = time.perf_counter()
alone = [far.contains(url) for url in sample]
seconds_alone = time.perf_counter() - started
trips_alone = far.statements
started = time.perf_counter()
fronted = [url in cache.bloom and far.contains(url) for url in sample]
seconds_fronted = time.perf_counter() - started
trips_fronted = far.statements - trips_alone
assert alone == fronted == truly_malicious[:1000].tolist()
say("round trips for 1,000 visits: {alone:,} without the filter, {fronted} with it",
    alone=trips_alone, fronted=trips_fronted)

# %% tags=["nbval-ignore-output"]
say("database alone:        {seconds:6.3f} s ({trips} x 1 ms of waiting)", seconds=seconds_alone,
    trips=trips_alone)
say("filter, then database: {seconds:6.3f} s ({trips} x 1 ms of waiting)",
    seconds=seconds_fronted, trips=trips_fronted)

# %% [markdown]
# The database alone takes at least a second, 1,000 round trips of 1 ms; with the filter in front
# only the 10 maybes among these visits wait, 10 ms in all; the rest of its time is local work,
# 1,000 lookups in the filter and 10 in SQLite. On a busy machine both take longer than their
# waiting: a waiting process is not always running when its wait ends.
#
# Now the knob turned over the whole sample of 100,000 visits. The waiting is the round trips times
# the latency, and the round trips are counted, not timed (100,000 real waits of 10 ms would take
# 17 minutes).

# %%
alone, fronted = phrase("database alone"), phrase("filter + database")
trips = {alone: len(visits), fronted: stats.database_queries}
latencies = [0.0, 1e-5, 1e-4, 1e-3, 1e-2]
say("  latency   waiting, database alone   waiting, filter + database")
for latency in latencies:
    say("{ms:6.2f} ms  {alone:22.2f} s  {fronted:25.2f} s", ms=latency * 1e3,
        alone=trips[alone] * latency, fronted=trips[fronted] * latency)
say("round trips without the filter / with it: {ratio:.1f}", ratio=trips[alone] / trips[fronted])

# %% [markdown]
# 1,103 round trips of 1 ms: 1.1 s of waiting, against 100 s for the database alone. Waiting is
# only part of the time, though: each visit also costs local work, the filter's lookup and
# SQLite's own. Adding the local work measured in section 2 (at zero latency) to the waiting gives
# what each strategy would take on this machine:

# %% tags=["nbval-ignore-output"]
local = {alone: timings[one_by_one_alone], fronted: timings[one_by_one_fronted]}
say("  latency  database alone  filter + database   saving")
totals = {how: [] for how in local}
for latency in latencies:
    for how in local:
        totals[how].append(local[how] + trips[how] * latency)
    say("{ms:6.2f} ms  {alone:12.2f} s  {fronted:15.2f} s  {saving:6.1f}x", ms=latency * 1e3,
        alone=totals[alone][-1], fronted=totals[fronted][-1],
        saving=totals[alone][-1] / totals[fronted][-1])
ax = new_axes()
for how, marker in zip(totals, "os"):
    ax.loglog([latency * 1e3 for latency in latencies[1:]], totals[how][1:], marker + "-", label=how)
decorate(ax, xlabel="latency of one round trip (ms)", ylabel="time for 100,000 visits (s)",
         title="The filter pays once the database is far away")
show("Time for 100,000 visits, one at a time, against the latency of one round trip, both on log "
     "scales: the database alone grows with the latency far sooner than the filter in front of it, "
     "and the gap between the two lines widens toward the ratio of round trips.")

# %% [markdown]
# At zero latency there is no waiting to save, only local work, and the filter's lookups are local
# work too. As the latency grows the waiting takes over, and the saving tends to the ratio of round
# trips, $100{,}000 / 1{,}103 \approx 90.7$ times, once the waiting dwarfs the local work per visit
# (the microseconds of section 2's table). How far away the database must be for that depends on
# the machine: a busy one does more local work per visit, so it needs a larger latency. That is the
# article's premise, measured: a filter in front of a database pays more the farther away the
# database is, up to the ratio of round trips.
#
# Closing the connections and deleting the database file:

# %%
far.close()
cache.close()
folder.cleanup()
say("database file still there: {exists}", exists=db_path.exists())

# %% [markdown]
# ## Recap
#
# - In front of a database, the filter's "no" is final and its "maybe" asks the database, so
#   every answer is the database's: a false positive costs a query, never a wrong answer.
# - The queries that remain are the blacklisted visits plus p of the safe ones: 1,103 of 100,000
#   here, 98.90% saved; in bulk, all the maybes go in one SQL statement.
# - The saving is in round trips: at 1 ms each, 100 s of waiting without the filter against 1.1 s
#   with it; the farther the database, the closer the saving comes to the ratio of round trips.

# %% [markdown]
# ## Exercises
#
# Three exercises on this lesson: compute, predict, then measure. Replace `None` with your
# answer and run the cell: `check` tells you whether it is right and, when it is not, which slip
# it looks like. Worked solutions are in `solutions/10_blacklist_cache_solutions.ipynb`; try
# first.

# %% [markdown]
# **10.1 (compute).** The database is 2 ms away. How many seconds do 100,000 visits, 1,000 of
# them to blacklisted URLs, spend waiting for it behind a filter of rate 0.001?
#
# Section 3 counts round trips, then multiplies by the latency.

# %%
answer = None  # replace None with your answer
check.waiting_seconds(answer, visits=100_000, blacklisted=1000, p=0.001, latency_ms=2)

# %% [markdown]
# **10.2 (predict).** 1,000,000 safe and 5,000 blacklisted URLs are looked up through a filter
# of rate 0.001: how many lookups reach the database?
#
# Section 1 lists which answers of the filter send a URL on to the database.

# %%
answer = None  # replace None with your answer
check.database_lookups(answer, safe=1_000_000, blacklisted=5000, p=0.001)

# %% [markdown]
# **10.3 (measure).** Build a BlacklistCache of 100,000 malicious URLs at fpp = 0.01 and look
# up 100,000 safe URLs: what share of them reaches the database?
#
# `BlacklistCache.create(path, urls, fpp=0.01)` with a path inside a
# `tempfile.TemporaryDirectory()`; after `is_blacklisted_many`, `cache.stats` counts the lookups
# and the database queries.

# %%
answer = None  # replace None with your answer
check.database_share(answer, n=100_000, p=0.01, trials=100_000)

# %% [markdown]
# ## What comes next
#
# `11_a_filter_is_not_a_set.ipynb`, lesson 11 · A filter is not a set: what a service does with
# its filter besides asking it (merging, saving, estimating its count), what it cannot do, and an
# attacker who knows the hash.
#
# *Where this lesson's code lives:* `bloomedu/services/blacklist.py`, `bloomedu/services/schema.py`,
# `bloomedu/teaching/latency.py`, `bloomedu/workloads/urls.py` (`traffic_mix`); its tests:
# `tests/test_blacklist.py`, `tests/test_latency.py`, `tests/test_urls.py`. The README's table maps
# every article step to its module, lesson and test.
