"""One adapter per library, each using that library's fastest API for the job.

An adapter turns the workload's keys into the form the library takes best
(not timed), builds a filter, inserts, counts positives among queried keys,
and reports its bytes of bit storage.  ``sweep_filter`` is present only for
libraries that can be given m and k directly (needed by W3).

bloomedu runs twice, once on each kernel path (``kernels``: ``bloomedu.kernels.backend.use``
in the run's process): ``bloomedu`` and ``bloomedu-blocked`` on numpy's kernels,
``bloomedu-native`` and ``bloomedu-blocked-native`` on the compiled ones (numba, where
installed: :func:`available`).  ``warm_up`` makes the first calls on a small filter before
the timed part (the native kernels load from numba's cache, or compile, then); ``make bench``
reports the compile and cached-start times apart.

str keys are what a student's are: each run is a fresh process that reads them from a file,
so every str object is new and no library finds a hash cached in it (rbloom uses Python's own
str hash, which the object keeps after its first use).
"""

from __future__ import annotations

import numpy as np


class Bloomedu:
    name = "bloomedu"
    rounds_factor = 1
    kernels = "numpy"

    def __init__(self, kernels: str | None = None, name: str | None = None):
        self.kernels = kernels or self.kernels
        self.name = name or self.name

    def warm_up(self, keys):
        """First calls on a small filter of the same kind, with keys of the same kind."""
        f = self.new(1000, 0.01)
        sample = keys[:10]
        self.insert(f, sample)
        self.count_found(f, sample)
        if hasattr(f, "add_many_new"):
            f.add_many_new(sample)

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


NATIVE = ("bloomedu-native", "bloomedu-blocked-native")  # run only where numba is installed
LIBRARIES = {lib.name: lib for lib in (Bloomedu(), Bloomedu("native", "bloomedu-native"),
                                       Rbloom(), FastbloomRs(), PybloomLive())}
# W4 (a filter far larger than the cache) and W4-day (the day's filter): who runs each
LARGE_LIBRARIES = {
    "W4": ["bloomedu", "bloomedu-native", "bloomedu-blocked", "bloomedu-blocked-native",
           "rbloom", "fastbloom-rs"],
    "W4-day": ["bloomedu", "bloomedu-native", "bloomedu-blocked", "bloomedu-blocked-native",
               "rbloom"],
}
ALL_LIBRARIES = {**LIBRARIES, "bloomedu-blocked": BloomeduBlocked(),
                 "bloomedu-blocked-native": BloomeduBlocked("native", "bloomedu-blocked-native")}


def available(names, native: bool | None = None) -> list[str]:
    """``names`` without the native runs when the native kernels are not installed here.

    >>> available(["bloomedu", "bloomedu-native", "rbloom"], native=False)
    ['bloomedu', 'rbloom']
    """
    if native is None:
        from bloomedu.kernels import backend
        native = backend.native_available()
    return [name for name in names if native or name not in NATIVE]


def version(name: str) -> str | None:
    """The installed version of distribution ``name``; None when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version as dist_version
    try:
        return dist_version(name)
    except PackageNotFoundError:
        return None
