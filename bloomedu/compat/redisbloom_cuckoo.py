"""RedisBloom's cuckoo filter (Redis's ``CF.*`` commands), byte for byte, in Python.

Fan, Andersen, Kaminsky and Mitzenmacher ("Cuckoo filter: practically better than Bloom",
CoNEXT 2014) store a short fingerprint of each item in one of two buckets, and make room by
moving ("kicking") fingerprints to their other bucket.  RedisBloom's ``CF.RESERVE``,
``CF.ADD``, ``CF.ADDNX``, ``CF.EXISTS``, ``CF.DEL``, ``CF.COUNT``, ``CF.INFO``,
``CF.SCANDUMP`` and ``CF.LOADCHUNK`` keep one in Redis.  :class:`RedisCuckooFilter` does
exactly what RedisBloom 2.8.2 does (read from ``src/cuckoo.c``, ``src/cf.c`` and the CF
commands of ``src/rebloom.c`` at the tag ``v2.8.2``, checked against the running module), so
its answers and its dump are the server's, byte for byte:

- sizing: ``num_buckets`` is ``capacity // bucket_size`` rounded up to a power of two, and
  ``expansion`` is rounded up to a power of two too (0 stays 0: the filter never grows);
- hashing: see :mod:`bloomedu.compat.redisbloom_cuckoo_subfilter` (one MurmurHash64A with seed 0,
  a fingerprint of 1 to 255, two buckets);
- ``CF.ADD``: the first empty slot of the item's two buckets, newest sub-filter first; else
  up to ``max_iterations`` evictions in the newest sub-filter, starting from the first
  bucket and evicting slot 0, 1, 2, ... in turn; if that fails, the evictions are undone in
  reverse, and a new sub-filter of ``expansion ** i`` times the first one's buckets takes
  the item (with ``expansion`` 0: "Filter is full").  Duplicates are stored again;
- ``CF.DEL``: one copy, newest sub-filter first; once the deletes since the last
  compaction exceed a tenth of the items (and there are several sub-filters), the module
  moves the newest sub-filters' fingerprints into older ones where they fit, frees the
  newest while it empties, and stops at the first it cannot empty;
- ``CF.ADD`` refuses every item once 32 sub-filters exist ("Maximum expansions reached",
  the module's default ``CF_MAX_EXPANSIONS``);
- ``CF.SCANDUMP``: a 38-byte header (items, buckets, deletes, sub-filters, bucket size,
  max iterations, expansion), then each sub-filter's bytes in pieces of at most 16 MiB; a
  filter with no items dumps nothing (:mod:`bloomedu.compat.redisbloom_cuckoo_dump`).

Items are what redis-py sends: ``str`` as UTF-8, bytes as they are, an int as its decimal
digits.  Where the module would crash the server (a sub-filter of 2**32 buckets or more,
whose evictions divide by zero in 32 bits; a loaded header with 0 buckets in a sub-filter)
or run it out of memory (a capacity or a forged header asking for more than this machine
holds), the model refuses with a ``ValueError`` before it allocates anything.

Tested against the running module in ``tests/test_cuckoo_redis.py`` and, without a server,
on recorded dumps in ``tests/test_cuckoo_redis_model.py``.
"""

from __future__ import annotations

import numpy as np

from ..core.hashing import key_list
from ..core.checks import whole_number
from ..core.contract import Filter, filter_repr, locked
from . import redisbloom_cuckoo_dump
from .redisbloom_cuckoo_subfilter import (FILTER_BYTES, MAX_BUCKET_SIZE, MAX_EXPANSION, MAX_FILTERS,
                                      MAX_ITERATIONS, SUBFILTER_BYTES, SubCuckoo, check_buckets,
                                      lookup_hash, item_hash, item_hashes, next_power_of_two)
from .redisbloom_subfilter import RedisBloomError

__all__ = ["RedisCuckooFilter", "RedisBloomError"]

_MASK64 = (1 << 64) - 1
_MAX_CAPACITY = (1 << 63) - 1  # CF.RESERVE reads the capacity as a long long


class RedisCuckooFilter(Filter):
    """RedisBloom's cuckoo filter: what ``CF.RESERVE key capacity`` makes.

    >>> f = RedisCuckooFilter(8)
    >>> f.add("123"); f.add_nx("123"), f.exists("123"), "456" in f, f.count("123")
    (False, True, False, 1)
    >>> f.delete("123"), f.delete("123"), f.exists("123")
    (True, False, False)
    >>> f.info()["Number of buckets"], f.info()["Size"]
    (4, 64)

    Threads may share it: every method holds its lock (deletes and evictions move
    fingerprints, so reads hold it too).  Pickles at every protocol, through its dump.
    """

    __slots__ = ("bucket_size", "max_iterations", "expansion", "num_buckets", "num_items",
                 "num_deletes", "filters")

    def __init__(self, capacity: int, bucket_size: int = 2, max_iterations: int = 20,
                 expansion: int = 1):
        capacity = whole_number(capacity, "capacity", 1, _MAX_CAPACITY)
        bucket_size = whole_number(bucket_size, "bucket_size", 1, MAX_BUCKET_SIZE)
        max_iterations = whole_number(max_iterations, "max_iterations", 1, MAX_ITERATIONS)
        expansion = whole_number(expansion, "expansion", 0, MAX_EXPANSION)
        if capacity < 2 * bucket_size:
            raise ValueError(f"capacity must be at least 2 * bucket_size = {2 * bucket_size}, got "
                             f"{capacity} (CF.RESERVE: Capacity must be at least (BucketSize * 2))")
        self.bucket_size, self.max_iterations = bucket_size, max_iterations
        self.expansion = next_power_of_two(expansion) & 0xFFFF  # kept in 16 bits: 0 stays 0
        self.num_buckets = next_power_of_two(capacity // bucket_size) or 1
        self.num_items = self.num_deletes = 0
        self.filters: list[SubCuckoo] = []
        self._grow(f"capacity={capacity} (bucket_size={bucket_size})")

    # --- sub-filters ---------------------------------------------------------------------
    def _next_buckets(self) -> int:
        """The next sub-filter's buckets: ``num_buckets * expansion ** len(filters)``."""
        return self.num_buckets * self.expansion ** len(self.filters)

    def _grow(self, what: str) -> None:
        buckets = self._next_buckets()
        check_buckets(buckets, self.bucket_size, what)
        self.filters.append(SubCuckoo(buckets, self.bucket_size, what))

    def reserve_args(self, key: str) -> list:
        """The CF.RESERVE command that makes this filter on a server (before any item).

        >>> RedisCuckooFilter(1000, 4, expansion=2).reserve_args("clicks")
        ['CF.RESERVE', 'clicks', 1024, 'BUCKETSIZE', 4, 'MAXITERATIONS', 20, 'EXPANSION', 2]
        """
        return ["CF.RESERVE", key, self.num_buckets * self.bucket_size,
                "BUCKETSIZE", self.bucket_size, "MAXITERATIONS", self.max_iterations,
                "EXPANSION", self.expansion]

    # --- adding -----------------------------------------------------------------------------
    @locked
    def add(self, item) -> None:
        """``CF.ADD``: store the item's fingerprint (again, if it is there).

        The server answers 1 to every item it stores, new or not, so this answer says nothing
        and ``add`` returns None, as every filter's ``add`` that cannot tell whether a key was
        new does (``add_nx`` tells: ``CF.ADDNX``).

        Raises :class:`RedisBloomError` where the server answers an error: "Filter is full"
        (the evictions failed and ``expansion`` is 0; the filter is unchanged) or "Maximum
        expansions reached" (32 sub-filters).  A growth this machine cannot hold (or the
        module could not run) raises ``ValueError`` instead of the server's abort, the filter
        unchanged.

        >>> f = RedisCuckooFilter(4, 2, expansion=0)   # "a"'s two buckets are one here
        >>> f.add("a"); f.add("a"); f.info()["Number of items inserted"]
        2
        >>> f.add("a")
        Traceback (most recent call last):
        bloomedu.compat.redisbloom_subfilter.RedisBloomError: Filter is full
        """
        self._refuse_if_too_many()
        self._insert(*lookup_hash(item_hash(item)))

    @locked
    def add_many(self, items) -> None:
        """``CF.ADD`` of each item in turn, under one hold of the lock: where evictions land
        depends on the order, so two threads' batches must not interleave.  Every item is
        hashed first, so a bad one raises before any is stored; a refusal (as :meth:`add`'s)
        leaves the items before it stored.

        >>> f = RedisCuckooFilter(8); f.add_many(["x", b"y", 3]); f.exists_many(["x", "z"]).tolist()
        [True, False]
        """
        lookups = [lookup_hash(item_hash(item)) for item in key_list(items)]
        for lookup in lookups:
            self._refuse_if_too_many()
            self._insert(*lookup)

    @locked
    def add_nx(self, item) -> bool:
        """``CF.ADDNX``: False if the filter may hold the item already, else ``CF.ADD`` and True.

        >>> f = RedisCuckooFilter(8); f.add_nx(7), f.add_nx(7), f.add_nx("7")
        (True, False, False)
        """
        self._refuse_if_too_many()
        fingerprint, h1, h2 = lookup_hash(item_hash(item))
        if any(sub.find(fingerprint, h1, h2) for sub in self.filters):
            return False
        self._insert(fingerprint, h1, h2)
        return True

    def _refuse_if_too_many(self) -> None:
        if len(self.filters) >= MAX_FILTERS:
            raise RedisBloomError("Maximum expansions reached")

    def _insert(self, fingerprint: int, h1: int, h2: int) -> None:
        """``CuckooFilter_InsertFP``: a free slot, newest sub-filter first, else evictions,
        else a new sub-filter."""
        while True:
            for sub in reversed(self.filters):
                if sub.place(fingerprint, h1, h2):
                    self.num_items = (self.num_items + 1) & _MASK64
                    return
            if self.filters[-1].kick(fingerprint, h1, self.max_iterations):
                self.num_items = (self.num_items + 1) & _MASK64
                return
            if self.expansion == 0:
                raise RedisBloomError("Filter is full")
            self._grow(f"sub-filter {len(self.filters)} ({self._next_buckets()} buckets)")

    # --- reading -----------------------------------------------------------------------------
    @locked
    def exists(self, item) -> bool:
        """``CF.EXISTS``: True if a sub-filter holds the item's fingerprint in one of its buckets.

        >>> f = RedisCuckooFilter(8); f.add(b"x")
        >>> f.exists(b"x"), f.exists("x"), f.exists("y")
        (True, True, False)
        """
        fingerprint, h1, h2 = lookup_hash(item_hash(item))
        return any(sub.find(fingerprint, h1, h2) for sub in self.filters)

    __contains__ = exists

    @locked
    def exists_many(self, items) -> np.ndarray:
        """``CF.MEXISTS``, vectorised: a bool array, one answer per item.

        >>> f = RedisCuckooFilter(8); f.add("x")
        >>> f.exists_many(["x", "y", "x"]).tolist()
        [True, False, True]
        """
        h = item_hashes(items)
        fingerprints = h % np.uint64(255) + np.uint64(1)
        with np.errstate(over="ignore"):
            h2 = h ^ (fingerprints * np.uint64(0x5BD1E995))
        found = np.zeros(h.size, dtype=bool)
        for sub in self.filters:
            found |= sub.found_many(fingerprints, h, h2)
        return found

    contains_many = exists_many  # every filter's bulk name

    @locked
    def count(self, item) -> int:
        """``CF.COUNT``: the copies of the item's fingerprint in its buckets, over every sub-filter.

        >>> f = RedisCuckooFilter(8); f.add("x"); f.add("x"); f.count("x"), f.count("y")
        (2, 0)
        """
        fingerprint, h1, h2 = lookup_hash(item_hash(item))
        return sum(sub.count(fingerprint, h1, h2) for sub in self.filters)

    # --- deleting and compacting -----------------------------------------------------------
    @locked
    def delete(self, item) -> bool:
        """``CF.DEL``: remove one copy of the item's fingerprint, newest sub-filter first.

        An item never added whose fingerprint another item put in one of its buckets is
        "deleted" too, and that other item is then missing (a false negative), as on the server.

        >>> f = RedisCuckooFilter(8); f.add("x")
        >>> f.delete("x"), f.delete("never added")
        (True, False)
        """
        fingerprint, h1, h2 = lookup_hash(item_hash(item))
        for sub in reversed(self.filters):
            if sub.delete(fingerprint, h1, h2):
                self.num_items = (self.num_items - 1) & _MASK64
                self.num_deletes = (self.num_deletes + 1) & _MASK64
                if len(self.filters) > 1 and float(self.num_deletes) > float(self.num_items) * 0.10:
                    self._compact(keep_going=False)
                return True
        return False

    @locked
    def compact(self) -> None:
        """``CF.COMPACT``: move fingerprints into older sub-filters, free the newest ones that
        empty, and go on past one that cannot be emptied."""
        self._compact(keep_going=True)

    def _compact(self, keep_going: bool) -> None:
        """``CuckooFilter_Compact``: newest sub-filter first, down to the second."""
        for index in range(len(self.filters) - 1, 0, -1):
            if not self._compact_one(index) and not keep_going:
                break
        self.num_deletes = 0

    def _compact_one(self, index: int) -> bool:
        """Move sub-filter ``index``'s fingerprints into older ones (:meth:`SubCuckoo.move_into`);
        True if all moved, and then the sub-filter, if it is the newest, is freed."""
        moved_all = self.filters[index].move_into(self.filters[:index])
        if moved_all and index == len(self.filters) - 1:
            self.filters.pop()
        return moved_all

    # --- what it holds ----------------------------------------------------------------------
    @locked
    def info(self) -> dict:
        """``CF.INFO``'s fields by their names, in the module's order.

        >>> RedisCuckooFilter(1000, 4, 50, 3).info()
        {'Size': 1080, 'Number of buckets': 256, 'Number of filters': 1, 'Number of items inserted': 0, 'Number of items deleted': 0, 'Bucket size': 4, 'Expansion rate': 4, 'Max iterations': 50}
        """
        slots = sum(sub.num_buckets for sub in self.filters) * self.bucket_size
        return {"Size": FILTER_BYTES + SUBFILTER_BYTES * len(self.filters) + slots,
                "Number of buckets": self.num_buckets,
                "Number of filters": len(self.filters),
                "Number of items inserted": self.num_items,
                "Number of items deleted": self.num_deletes,
                "Bucket size": self.bucket_size,
                "Expansion rate": self.expansion,
                "Max iterations": self.max_iterations}

    @property
    def nbytes(self) -> int:
        """Bytes of fingerprints over every sub-filter."""
        return sum(sub.nbytes for sub in self.filters)

    # --- dumps --------------------------------------------------------------------------------
    def _chunks(self) -> list[tuple[int, bytes]]:
        """The header and every piece ``CF_GetEncodedChunk`` returns, each after its iterator."""
        return redisbloom_cuckoo_dump.chunks(self)

    @locked
    def scandump(self) -> list[tuple[int, bytes]]:
        """``CF.SCANDUMP``'s (iterator, data) pairs in order, without the final (0, None);
        nothing at all for a filter with no items, as the module answers.

        >>> f = RedisCuckooFilter(4, 2); f.scandump()
        []
        >>> f.add("x"); [(iterator, len(data)) for iterator, data in f.scandump()]
        [(1, 38), (5, 4)]
        """
        return self._chunks() if self.num_items else []

    @classmethod
    def loadchunks(cls, chunks) -> "RedisCuckooFilter":
        """The filter ``CF.LOADCHUNK`` rebuilds from (iterator, data) pairs, the header first.

        Refused with a ``ValueError`` where the module answers an error, and before anything
        is allocated where the header asks for more bytes than the chunks carry
        (:mod:`bloomedu.compat.redisbloom_cuckoo_dump`).

        >>> f = RedisCuckooFilter(8); f.add("x")
        >>> RedisCuckooFilter.loadchunks(f.scandump()).exists("x")
        True
        """
        return redisbloom_cuckoo_dump.load(cls, chunks)

    @locked
    def to_bytes(self) -> bytes:
        """The dump as one string: ``CF.SCANDUMP``'s header, then every sub-filter's bytes in
        order (what the data of all its pairs joined make), the header even when empty.

        >>> f = RedisCuckooFilter(8); f.add("x")
        >>> RedisCuckooFilter.from_bytes(f.to_bytes()) == f, len(f.to_bytes())
        (True, 46)
        """
        return redisbloom_cuckoo_dump.joined(self)

    @classmethod
    def from_bytes(cls, data) -> "RedisCuckooFilter":
        """Read what :meth:`to_bytes` wrote: the header checked as ``CF.LOADCHUNK`` checks it,
        and the length it implies before anything is allocated.

        >>> RedisCuckooFilter.from_bytes(RedisCuckooFilter(8).to_bytes() + b"x")
        Traceback (most recent call last):
        ValueError: data is padded: 47 bytes, a filter of 1 sub-filter(s) of 4 buckets of 2 takes 46 (the rest is trailing bytes)
        """
        return redisbloom_cuckoo_dump.read(cls, data)

    # --- copies, equality, pickling -----------------------------------------------------------
    def __reduce__(self):
        """Pickle through the dump (with its header even when empty), at every protocol.

        >>> import pickle; f = RedisCuckooFilter(8); f.add("x")
        >>> pickle.loads(pickle.dumps(f)) == f
        True
        """
        with self._lock:
            return type(self).loadchunks, (self._chunks(),)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RedisCuckooFilter):
            return NotImplemented
        return self.to_bytes() == other.to_bytes()  # each read under its own lock

    __hash__ = None  # mutable

    def _locked_chunks(self) -> list[tuple[int, bytes]]:
        with self._lock:
            return self._chunks()

    def copy(self) -> "RedisCuckooFilter":
        """An independent filter with the same state."""
        return type(self).loadchunks(self._locked_chunks())

    def __repr__(self) -> str:
        """Its parameters, the sub-filters, the fill (slots in use over all of them) and the
        items in it, counted as the module counts them (``added=``: inserted minus deleted).

        >>> f = RedisCuckooFilter(100); f.add_many(range(60)); f
        RedisCuckooFilter(num_buckets=64, bucket_size=2, max_iterations=20, expansion=1, filters=1, fill=0.47, added=60)
        """
        subs = list(self.filters)
        slots = sum(len(sub.data) for sub in subs)
        used = slots - sum(sub.data.count(0) for sub in subs)
        return filter_repr(self, f"num_buckets={self.num_buckets}, bucket_size={self.bucket_size}, "
                                 f"max_iterations={self.max_iterations}, expansion={self.expansion}, "
                                 f"filters={len(subs)}",
                           fill=used / slots if slots else 0.0, added=self.num_items)
