"""One sub-filter of RedisBloom's cuckoo filter, with the constants, hash and fingerprint it uses.

RedisBloom 2.8.2 (``src/cuckoo.h``, ``src/cuckoo.c``, ``src/cf.c``, read at the tag ``v2.8.2``)
keeps a cuckoo filter (Fan, Andersen, Kaminsky and Mitzenmacher 2014) as a list of
sub-filters, each an array of one-byte fingerprints, ``bucket_size`` to a bucket:

- an item's hash is MurmurHash64A of its bytes with seed 0 (:func:`item_hash`; the Bloom
  filter's seeds differ), its fingerprint ``hash % 255 + 1`` (1 to 255: 0 marks an empty
  slot), its two buckets the hash itself and ``hash ^ (fingerprint * 0x5bd1e995)``, each
  taken modulo the sub-filter's number of buckets (:func:`lookup`);
- a bucket starts at byte ``(index % num_buckets) * bucket_size``, computed by the module in
  32 bits (:meth:`SubCuckoo.start`): a sub-filter larger than 4 GiB wraps, here as there.

:class:`SubCuckoo` finds, counts, deletes and places fingerprints in one sub-filter, with
the module's order (first bucket, then second; slots from the first), kicks them along a
chain of evictions (``Filter_KOInsert``) and moves them into older sub-filters (one step of
the compaction).  The filter itself, with its growth and when it evicts and compacts, is
:class:`bloomedu.compat.redisbloom_cuckoo.RedisCuckooFilter`; tested in
``tests/test_cuckoo_redis_model.py`` and, against the running module,
``tests/test_cuckoo_redis.py``.
"""

from __future__ import annotations

import struct

import numpy as np

from ..core.checks import check_storage, whole_number
from .murmur64 import murmurhash64a, murmurhash64a_many, pack_items
from .redisbloom_subfilter import encode_item, encode_items

__all__ = ["ALT_MULTIPLIER", "HEADER", "MAX_BUCKET_SIZE", "MAX_EXPANSION", "MAX_FILTERS",
           "MAX_ITERATIONS", "SubCuckoo", "alt_index", "check_buckets", "item_hash", "item_hashes",
           "lookup", "next_power_of_two"]

ALT_MULTIPLIER = 0x5BD1E995  # the fingerprint's multiplier in the second bucket
MAX_BUCKET_SIZE = 255        # CF.RESERVE's limits (CF_MAX_BUCKET_SIZE, ...)
MAX_ITERATIONS = 65535
MAX_EXPANSION = 32768
MAX_FILTERS = 32             # CF_MAX_EXPANSIONS, the module's default: CF.ADD refuses at 32
MAX_NUM_BUCKETS = (1 << 56) - 1  # a sub-filter's bucket count is a 56-bit field
FILTER_BYTES, SUBFILTER_BYTES = 40, 16  # sizeof(CuckooFilter), sizeof(SubCF): in CF.INFO's "Size"
# CF.SCANDUMP's header (CFHeader, packed): items, buckets, deletes, filters (u64 each),
# then bucket size, max iterations, expansion (u16 each)
HEADER = struct.Struct("<QQQQHHH")
_MASK32, _MASK64 = (1 << 32) - 1, (1 << 64) - 1
_EVICTION_LIMIT = 1 << 32  # the module's evictions hold the bucket count in 32 bits


def next_power_of_two(n: int) -> int:
    """The module's ``getNextN2`` in 64-bit arithmetic: 0 stays 0 (n - 1 wraps around).

    >>> next_power_of_two(3), next_power_of_two(4), next_power_of_two(0), next_power_of_two(2**63 + 1)
    (4, 4, 0, 0)
    """
    n = (whole_number(n, "n", 0, _MASK64) - 1) & _MASK64
    for shift in (1, 2, 4, 8, 16, 32):
        n |= n >> shift
    return (n + 1) & _MASK64


def item_hash(item) -> int:
    """MurmurHash64A, seed 0, of the bytes redis-py sends for the item.

    >>> item_hash("123") == murmurhash64a(b"123", 0)
    True
    """
    return murmurhash64a(encode_item(item), 0)


def item_hashes(items) -> np.ndarray:
    """:func:`item_hash` of every item, as a uint64 array (hashed in numpy).

    >>> item_hashes(["123", 7]).tolist() == [item_hash("123"), item_hash(7)]
    True
    """
    return murmurhash64a_many(*pack_items(encode_items(items)), 0)


def alt_index(fingerprint: int, index: int) -> int:
    """The other bucket's index, before the modulo: ``index ^ (fingerprint * 0x5bd1e995)``.

    >>> alt_index(1, 0) == ALT_MULTIPLIER, alt_index(1, alt_index(1, 5))
    (True, 5)
    """
    return _alt_index(whole_number(fingerprint, "fingerprint", 1, 255),
                      whole_number(index, "index", 0, _MASK64))


def _alt_index(fingerprint: int, index: int) -> int:
    """:func:`alt_index` of checked ints (the model's inner loops)."""
    return (index ^ (fingerprint * ALT_MULTIPLIER)) & _MASK64


def lookup(h: int) -> tuple[int, int, int]:
    """(fingerprint, first index, second index) of a hash, as ``getLookupParams`` makes them.

    >>> fp, h1, h2 = lookup(254); fp, h1, h2 == 254 ^ (255 * ALT_MULTIPLIER)
    (255, 254, True)
    """
    return lookup_hash(whole_number(h, "h", 0, _MASK64))


def lookup_hash(h: int) -> tuple[int, int, int]:
    """:func:`lookup` without the check: for a hash already known to be a 64-bit int, as
    every item's hash is (the filter's inner loops).

    >>> lookup_hash(254) == lookup(254)
    True
    """
    fingerprint = h % 255 + 1
    return fingerprint, h, _alt_index(fingerprint, h)


def check_buckets(buckets: int, bucket_size: int, what: str, loaded: bool = False) -> None:
    """Refuse a sub-filter the module cannot run (its 32-bit evictions divide by zero at
    2**32 buckets or more; 0 buckets, from a loaded expansion of 0) or this machine cannot hold.

    >>> check_buckets(1024, 2, "sub-filter 0")
    >>> check_buckets(0, 2, "chunks[0]'s sub-filter 1", loaded=True)
    Traceback (most recent call last):
    ValueError: chunks[0]'s sub-filter 1 has 0 buckets (an expansion of 0 with more than one sub-filter): the module would divide by zero
    """
    if loaded and buckets == 0:
        raise ValueError(f"{what} has 0 buckets (an expansion of 0 with more than one "
                         "sub-filter): the module would divide by zero")
    check_storage(buckets * bucket_size, what)
    if buckets >= _EVICTION_LIMIT:
        raise ValueError(f"{what} needs {buckets} buckets: RedisBloom's evictions hold the "
                         "bucket count in 32 bits and divide by zero from 2**32 on")


class SubCuckoo:
    """One sub-filter: ``num_buckets`` buckets of ``bucket_size`` one-byte fingerprints.

    >>> sub = SubCuckoo(4, 2)
    >>> sub.place(7, 1, 2), sub.find(7, 1, 2), sub.count(7, 1, 2), sub.delete(7, 1, 2)
    (True, True, 1, True)
    >>> bytes(sub.data)
    b'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00'
    """

    __slots__ = ("num_buckets", "bucket_size", "data")

    def __init__(self, num_buckets: int, bucket_size: int, what: str = "the sub-filter"):
        check_storage(num_buckets * bucket_size, what)  # before a byte is allocated
        self.num_buckets, self.bucket_size = num_buckets, bucket_size
        self.data = bytearray(num_buckets * bucket_size)

    @property
    def nbytes(self) -> int:
        return len(self.data)

    def start(self, index: int) -> int:
        """The first byte of the bucket of ``index``, in the module's 32-bit arithmetic.

        >>> SubCuckoo(4, 2).start(7)
        6
        """
        return ((index % self.num_buckets) * self.bucket_size) & _MASK32

    def _buckets(self, h1: int, h2: int) -> tuple[int, int]:
        return self.start(h1), self.start(h2)

    def find(self, fingerprint: int, h1: int, h2: int) -> bool:
        """True if either bucket holds the fingerprint (``Filter_Find``)."""
        b, data = self.bucket_size, self.data
        one, two = self._buckets(h1, h2)
        return data.find(fingerprint, one, one + b) >= 0 or data.find(fingerprint, two, two + b) >= 0

    def count(self, fingerprint: int, h1: int, h2: int) -> int:
        """The copies of the fingerprint in both buckets (one bucket twice if they are one)."""
        b, data = self.bucket_size, self.data
        one, two = self._buckets(h1, h2)
        return data.count(fingerprint, one, one + b) + data.count(fingerprint, two, two + b)

    def delete(self, fingerprint: int, h1: int, h2: int) -> bool:
        """Clear the first copy of the fingerprint, first bucket first (``Filter_Delete``)."""
        for bucket in self._buckets(h1, h2):
            slot = self.data.find(fingerprint, bucket, bucket + self.bucket_size)
            if slot >= 0:
                self.data[slot] = 0
                return True
        return False

    def place(self, fingerprint: int, h1: int, h2: int) -> bool:
        """Write the fingerprint into the first empty slot of either bucket, if there is one."""
        for bucket in self._buckets(h1, h2):
            slot = self.data.find(0, bucket, bucket + self.bucket_size)
            if slot >= 0:
                self.data[slot] = fingerprint
                return True
        return False

    def kick(self, fingerprint: int, h1: int, max_iterations: int) -> bool:
        """``Filter_KOInsert``: from the first bucket, swap the fingerprint with slot 0, 1, 2, ...
        of each bucket in turn and carry the evicted one to its other bucket, until a bucket
        has an empty slot; after ``max_iterations`` swaps, undo them, last first (False).

        The module computes bucket indices here in 32 bits.

        >>> sub = SubCuckoo(1, 1); sub.place(7, 0, 0), sub.kick(9, 0, 3), bytes(sub.data)
        (True, False, b'\\x07')
        """
        num_buckets, b, data = self.num_buckets & _MASK32, self.bucket_size, self.data
        victim, index = 0, h1 % num_buckets
        for _ in range(max_iterations):
            at = ((index * b) & _MASK32) + victim
            data[at], fingerprint = fingerprint, data[at]
            index = _alt_index(fingerprint, index) % num_buckets
            start = (index * b) & _MASK32
            empty = data.find(0, start, start + b)
            if empty >= 0:
                data[empty] = fingerprint
                return True
            victim = (victim + 1) % b
        for _ in range(max_iterations):  # roll back, last swap first
            victim = (victim + b - 1) % b
            index = _alt_index(fingerprint, index) % num_buckets
            at = ((index * b) & _MASK32) + victim
            data[at], fingerprint = fingerprint, data[at]
        return False

    def move_into(self, older: list["SubCuckoo"]) -> bool:
        """The compaction of one sub-filter: each fingerprint, slot by slot, into the first of
        the ``older`` sub-filters where one of its buckets has room; True if all moved.

        >>> new, old = SubCuckoo(2, 1), SubCuckoo(2, 1); new.place(7, 0, 1)
        True
        >>> new.move_into([old]), bytes(new.data), old.find(7, 0, alt_index(7, 0))
        (True, b'\\x00\\x00', True)
        """
        b, moved_all = self.bucket_size, True
        for at in np.flatnonzero(np.frombuffer(self.data, dtype=np.uint8)).tolist():
            fingerprint, bucket = self.data[at], at // b  # the fingerprint's own bucket here
            h2 = _alt_index(fingerprint, bucket)
            if any(target.place(fingerprint, bucket, h2) for target in older):
                self.data[at] = 0
            else:
                moved_all = False
        return moved_all

    def found_many(self, fingerprints: np.ndarray, h1: np.ndarray, h2: np.ndarray) -> np.ndarray:
        """:meth:`find` for arrays of lookups (uint64 arrays), vectorised.

        >>> sub = SubCuckoo(4, 2); sub.place(7, 1, 2)
        True
        >>> sub.found_many(np.array([7, 7], np.uint64), np.array([1, 0], np.uint64),
        ...                np.array([2, 0], np.uint64)).tolist()
        [True, False]
        """
        table = np.frombuffer(self.data, dtype=np.uint8)
        nb, b = np.uint64(self.num_buckets), np.uint64(self.bucket_size)
        found = np.zeros(fingerprints.size, dtype=bool)
        with np.errstate(over="ignore"):
            for index in (h1, h2):
                start = ((index % nb) * b) & np.uint64(_MASK32)
                for slot in range(self.bucket_size):
                    found |= table[(start + np.uint64(slot)).astype(np.int64)] == fingerprints
        return found
