"""One adapter per library, each using that library's fastest API for the job.

An adapter turns the workload's keys into the form the library takes best
(not timed), builds a filter, inserts, counts positives among queried keys,
and reports its bytes of bit storage.  ``sweep_filter`` is present only for
libraries that can be given m and k directly (needed by W3).
"""

from __future__ import annotations

import numpy as np


class Bloomedu:
    name = "bloomedu"
    rounds_factor = 1

    def prepare(self, keys):  # numpy arrays and lists of str go in as they are
        return keys

    def new(self, capacity, p):
        from bloomedu import BloomFilter
        return BloomFilter.from_capacity(capacity, p)

    def sweep_filter(self, m, k):
        from bloomedu import BloomFilter
        return BloomFilter(m, k)

    def insert(self, f, keys):
        f.add_many(keys)

    def count_found(self, f, keys) -> int:
        return int(np.count_nonzero(f.contains_many(keys)))

    def storage_bytes(self, f) -> int:
        return f.nbytes


class BloomeduBlocked(Bloomedu):
    """bloomedu's split-block filter (``BlockedBloomFilter``): one cache miss per key, k = 8.

    Runs W4 only (its k is 8 by design, so lesson 07's sweep, which sets k, is not for it).
    """

    name = "bloomedu-blocked"

    def new(self, capacity, p):
        from bloomedu.variants import BlockedBloomFilter
        return BlockedBloomFilter.from_capacity(capacity, p)


class Rbloom:
    """rbloom: ``update`` with a list, then one ``in`` per query (it has no batch query)."""

    name = "rbloom"
    rounds_factor = 1

    def prepare(self, keys):
        return keys.tolist() if isinstance(keys, np.ndarray) else keys

    def new(self, capacity, p):
        import rbloom
        return rbloom.Bloom(capacity, p)

    def insert(self, f, keys):
        f.update(keys)

    def count_found(self, f, keys) -> int:
        return sum(map(f.__contains__, keys))

    def storage_bytes(self, f) -> int:
        return (f.size_in_bits + 7) // 8


class FastbloomRs:
    """fastbloom-rs: its batch methods (``add_str_batch``/``contains_int_batch`` ...).

    Its integers are signed 64-bit, so uint64 keys go in as the same 8 bytes
    read as int64.
    """

    name = "fastbloom-rs"
    rounds_factor = 1

    def prepare(self, keys):
        if isinstance(keys, np.ndarray):
            return keys.view(np.int64).tolist()
        return keys

    def new(self, capacity, p):
        from fastbloom_rs import FilterBuilder
        return FilterBuilder(capacity, p).build_bloom_filter()

    def sweep_filter(self, m, k):
        from fastbloom_rs import BloomFilter
        return BloomFilter.from_bytes(bytes(m // 8), k)  # m bits of zeros, k hashes

    def insert(self, f, keys):
        if keys and isinstance(keys[0], str):
            f.add_str_batch(keys)
        else:
            f.add_int_batch(keys)

    def count_found(self, f, keys) -> int:
        if keys and isinstance(keys[0], str):
            return sum(f.contains_str_batch(keys, check_type=False))
        return sum(f.contains_int_batch(keys, check_type=False))

    def storage_bytes(self, f) -> int:
        return len(f.get_bytes())


class PybloomLive:
    """pybloom-live: ``add`` in a loop (it has no batch insert); about 100x slower."""

    name = "pybloom-live"
    rounds_factor = 0  # one round only: a run takes half a minute

    def prepare(self, keys):
        return keys.tolist() if isinstance(keys, np.ndarray) else keys

    def new(self, capacity, p):
        import pybloom_live
        return pybloom_live.BloomFilter(capacity, p)

    def insert(self, f, keys):
        add = f.add
        for key in keys:
            add(key)

    def count_found(self, f, keys) -> int:
        return sum(map(f.__contains__, keys))

    def storage_bytes(self, f) -> int:
        return f.bitarray.buffer_info()[1]


LIBRARIES = {lib.name: lib for lib in (Bloomedu(), Rbloom(), FastbloomRs(), PybloomLive())}
# W4 (a filter far larger than the cache) and W4-day (the day's filter): who runs each
LARGE_LIBRARIES = {
    "W4": ["bloomedu", "bloomedu-blocked", "rbloom", "fastbloom-rs"],
    "W4-day": ["bloomedu", "bloomedu-blocked", "rbloom"],
}
ALL_LIBRARIES = {**LIBRARIES, "bloomedu-blocked": BloomeduBlocked()}


def version(name: str) -> str:
    from importlib.metadata import version as dist_version
    return dist_version(name)
