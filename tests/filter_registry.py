"""What tests/test_conformance.py needs to build and judge each filter class of the package.

One :class:`Entry` per class, in :data:`REGISTRY`: how to make a small instance (about
``capacity`` keys at about :data:`EXAMPLE_FPP`), the key kinds it takes, whether it is built
once from its keys, the services it needs, how long it keeps a key, and when it may be full.
The library's classes carry none of this: their public names are what a user needs.

The suite finds the classes by walking the package (every concrete subclass of
:class:`bloomedu.core.contract.Filter`), and a class with no entry here fails it
(``test_every_filter_class_has_a_registry_entry``), so a new class cannot escape the suite:
adding it to the package means adding its entry here.
"""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass, field
from typing import Callable

from bloomedu.compat.bip37 import Bip37Filter
from bloomedu.compat.guava import GuavaBloomFilter, guava_num_bits, guava_num_hashes
from bloomedu.compat.parquet import ParquetBloomFilter
from bloomedu.compat.redisbloom import RedisBloomFilter
from bloomedu.compat.redisbloom_cuckoo import RedisCuckooFilter
from bloomedu.compat.redisbloom_cuckoo_subfilter import MAX_FILTERS
from bloomedu.compat.redisbloom_subfilter import RedisBloomError
from bloomedu.compat.spark import SparkBloomFilter
from bloomedu.core.filter import BloomFilter
from bloomedu.core.keyed import KeyedBloomFilter
from bloomedu.core.theory import hashes_for, num_bits_for, size_for
from bloomedu.services.redis_filter import RedisBackedFilter
from bloomedu.services.redis_sharded import ShardedFilter
from bloomedu.steps.dedup import HashedIds, SeenIds
from bloomedu.steps.expiry import ExpiringIds
from bloomedu.steps.salted import BitVector, SaltedBloomFilter
from bloomedu.variants.age_partitioned import AgePartitionedBloomFilter
from bloomedu.variants.binary_fuse import BinaryFuseFilter
from bloomedu.variants.blocked import BLOCK_BITS, BlockedBloomFilter, num_blocks_for
from bloomedu.variants.counting import CountingBloomFilter
from bloomedu.variants.cuckoo import CuckooFilter, CuckooFilterFull
from bloomedu.variants.rotating import RotatingBloomFilter
from bloomedu.variants.scalable import ScalableBloomFilter
from bloomedu.variants.stable import StableBloomFilter
from bloomedu.variants.xor import XorFilter

EXAMPLE_FPP = 0.01  # the rate the examples are sized for: few false positives, small filters
KINDS = frozenset({"str", "bytes", "int", "other"})  # "other": any hashable object (a dict of IDs)
STR_BYTES_INT = frozenset({"str", "bytes", "int"})
SECRET = bytes(range(16))  # the keyed filter's example secret


@dataclass(frozen=True)
class Entry:
    """What the suite knows of one class.

    - ``arguments(capacity, keys, **services)``: the keyword arguments of a small instance with
      room for about ``capacity`` keys at about :data:`EXAMPLE_FPP` (a class that forgets may
      forget sooner: ``memory`` says when), built from ``keys`` if ``built_from_keys``, with
      each service of ``needs`` passed by name; ``cls(**arguments)`` makes it (a handle to a
      server's filter may make that filter here, under a fresh name, and return the arguments
      of a handle to it).
    - ``kinds``: the key kinds ``add`` takes, among :data:`KINDS` (without "other", any other
      kind is a ``TypeError``).
    - ``built_from_keys``: a static filter, built once from its keys (``keys`` among its
      arguments); its ``add`` refuses with a ``TypeError``.
    - ``needs``: the services ``arguments`` needs, by name (``{"redis"}``: a redis-py client
      as ``redis=``); a class that needs one is a handle to shared state, not pickled or copied.
    - ``memory(f)``: inserts after its own that a key is certainly still found through, counted
      in inserts of other keys with no explicit ``rotate``/``shift``/``remove`` in between
      (None: the class never forgets).
    - ``full``: the exceptions ``add`` (and ``add_many``, ``add_many_new``) raise when a key
      finds no room, for a filter that fills up; ``room(f)``: the inserts it takes for
      certain from empty, a key added again counting again.
    - ``read_arguments``: what ``from_bytes`` needs beside the bytes (a secret they do not hold).
    """

    arguments: Callable[..., dict]
    kinds: frozenset = STR_BYTES_INT
    built_from_keys: bool = False
    needs: frozenset = frozenset()
    memory: Callable | None = None
    full: tuple = ()
    room: Callable | None = None
    read_arguments: dict = field(default_factory=dict)

    def __post_init__(self):
        assert self.kinds and self.kinds <= KINDS, f"kinds {sorted(self.kinds)} not among {sorted(KINDS)}"
        assert isinstance(self.full, tuple) and all(
            isinstance(error, type) and issubclass(error, Exception) for error in self.full), \
            f"full must be a tuple of exception classes, not {self.full!r}"
        assert bool(self.full) == (self.room is not None), "a class that fills says its room"


# --- the example arguments -------------------------------------------------------------------
def bloom(capacity, keys=(), **services):
    """m and k for ``capacity`` keys at 1%."""
    num_bits, num_hashes = size_for(n=capacity, p=EXAMPLE_FPP)
    return {"num_bits": num_bits, "num_hashes": num_hashes}


def keyed(capacity, keys=(), **services):
    """BloomFilter's m and k, and a fixed 16-byte secret."""
    return {**bloom(capacity), "secret": SECRET}


def salted(capacity, keys=(), **services):
    """The smallest 2**n bits that hold ``capacity`` keys at 1%, and the best k for them."""
    hash_bits = min(32, max(1, (num_bits_for(n=capacity, p=EXAMPLE_FPP) - 1).bit_length()))
    return {"num_hashes": hashes_for(num_bits=2 ** hash_bits, n=capacity), "hash_bits": hash_bits}


def bit_vector(capacity, keys=(), **services):
    """One hash over the fewest 2**n bits that keep ``capacity`` keys' rate under 1%."""
    return {"hash_bits": min(32, max(1, (int(capacity / EXAMPLE_FPP) - 1).bit_length()))}


def nothing(capacity, keys=(), **services):
    """Nothing to choose: a dict or a set of 32-bit hashes holds any number of keys."""
    return {}


def expiring(capacity, keys=(), **services):
    """An hour of simulated time, which no insert moves: every key is kept."""
    return {"window": 3600.0}


def guava(capacity, keys=(), **services):
    m = guava_num_bits(n=capacity, p=EXAMPLE_FPP)
    return {"num_words": -(-m // 64), "num_hash_functions": guava_num_hashes(num_bits=m, n=capacity)}


def spark(capacity, keys=(), **services):
    """``BloomFilter.create(capacity, 0.01)`` in version 2 (Spark 4.1 on): str, bytes and longs."""
    return {"expected_items": capacity, "fpp": EXAMPLE_FPP, "version": 2}


def bip37(capacity, keys=(), **services):
    return {"n_elements": capacity, "fp_rate": EXAMPLE_FPP, "tweak": 7, "flags": 1}


def redisbloom(capacity, keys=(), **services):
    """``BF.RESERVE ... NONSCALING``: one sub-filter for ``capacity`` keys, full after them, so
    the suite sees it fill and refuse.  (A growing chain fills only after about a thousand
    sub-filters, too slow here: ``tests/test_redisbloom_model.py`` fills one.)"""
    return {"error_rate": EXAMPLE_FPP, "capacity": capacity, "nonscaling": True}


def redis_cuckoo(capacity, keys=(), **services):
    """``CF.RESERVE key capacity//2`` with the module's defaults (bucket size 2, 20 iterations,
    expansion 1): ``capacity`` items open a second sub-filter (growth is part of what is
    checked); 2b/255 = 1.6% at most per sub-filter."""
    return {"capacity": max(4, capacity // 2), "bucket_size": 2, "max_iterations": 20,
            "expansion": 1}


def blocked(capacity, keys=(), **services):
    return {"num_bits": num_blocks_for(n=capacity, p=EXAMPLE_FPP) * BLOCK_BITS}


def counting(capacity, keys=(), **services):
    num_cells, num_hashes = size_for(n=capacity, p=EXAMPLE_FPP)
    return {"num_cells": num_cells, "num_hashes": num_hashes}


def cuckoo(capacity, keys=(), **services):
    """Room for ``capacity`` keys at b = 4, with the fewest fingerprint bits f that bring the
    rate's bound 2b / 2**f below 1%."""
    bucket_size = 4
    bits = math.ceil(math.log2(2 * bucket_size / EXAMPLE_FPP))
    return {"capacity": capacity, "fingerprint_bits": bits, "bucket_size": bucket_size}


def rotating(capacity, keys=(), **services):
    """Three generations of ``capacity // 4`` keys at 1%: a key is kept for at least the next
    ``capacity // 2`` inserts, so a run of ``capacity`` inserts rotates."""
    return {"capacity": max(1, capacity // 4), "fpp": 0.01, "generations": 3}


def age_partitioned(capacity, keys=(), **services):
    """k = 4 and l = 4 slices, generations of ``capacity // 8`` keys: a window of
    ``capacity // 2`` inserts, so a run of ``capacity`` inserts shifts."""
    return {"num_hashes": 4, "extra_slices": 4, "generation_size": max(1, capacity // 8)}


def scalable(capacity, keys=(), **services):
    return {"initial_capacity": max(1, capacity // 8), "fpp": 0.01}


def stable(capacity, keys=(), **services):
    """BloomFilter's m and k for ``capacity`` keys at 1%, 8-bit cells and one decrement an
    insert: a key is kept for the next 254 inserts."""
    num_cells, num_hashes = size_for(n=capacity, p=EXAMPLE_FPP)
    return {"num_cells": num_cells, "num_hashes": num_hashes, "bits_per_cell": 8,
            "decrements": 1, "seed": 3}


def xor(capacity, keys=(), **services):
    """The filter of ``keys`` with 8-bit fingerprints (p = 2**-8, below 1%); its size follows
    from the keys, so ``capacity`` is not used."""
    return {"keys": keys, "fingerprint_bits": 8}


def binary_fuse(capacity, keys=(), **services):
    return {**xor(capacity, keys), "arity": 3}


def redis_backed(capacity, keys=(), *, redis=None):
    """A new filter made on ``redis`` for ``capacity`` keys at 1%, under a fresh name, and the
    arguments of a handle to it (its name and ``uid``)."""
    made = RedisBackedFilter.create(redis, f"example-{secrets.token_hex(8)}", **bloom(capacity))
    return {"client": redis, "name": made.name, "num_bits": made.num_bits,
            "num_hashes": made.num_hashes, "uid": made.uid}


def sharded(capacity, keys=(), *, redis=None):
    """A new sharded filter made on ``redis`` for ``capacity`` keys at 1% (three shards, under
    a fresh name), and the arguments of a handle to it: its shards."""
    name = f"example-{secrets.token_hex(8)}"
    return {"shards": ShardedFilter.create(redis, name, capacity, EXAMPLE_FPP).shards}


# --- how long a forgetting class keeps a key, and how much a filling one takes -----------------
def rotating_memory(f) -> int:
    """(g - 1) * capacity: the last key of a generation is dropped with it g - 1 generations
    later."""
    return (f.generations - 1) * f.capacity


def cuckoo_room(f) -> int:
    """b: a key is stored again each time it is added, and a key whose two buckets are one
    bucket has only b slots, so b copies of it fill them (keys of random hashes fit up to
    about the design load, ``capacity`` keys)."""
    return f.bucket_size


def redis_cuckoo_room(f) -> int:
    """b with ``expansion`` 0 (an item whose two buckets are one bucket fills them with b
    copies), else b in each of the 31 sub-filters it may grow into before ``CF.ADD`` answers
    "Maximum expansions reached", and one more in the 32nd."""
    return f.bucket_size if f.expansion == 0 else f.bucket_size * (MAX_FILTERS - 1) + 1


REDIS = frozenset({"redis"})

REGISTRY: dict[type, Entry] = {
    BloomFilter: Entry(bloom),
    KeyedBloomFilter: Entry(keyed, read_arguments={"secret": SECRET}),
    SeenIds: Entry(nothing, kinds=KINDS),
    HashedIds: Entry(nothing, kinds=frozenset({"str", "bytes"})),  # what murmur3_32 hashes
    ExpiringIds: Entry(expiring, kinds=KINDS),
    SaltedBloomFilter: Entry(salted, kinds=frozenset({"str"})),  # the article hashes text IDs
    BitVector: Entry(bit_vector, kinds=frozenset({"str"})),
    GuavaBloomFilter: Entry(guava, kinds=frozenset({"str"})),  # Funnels.stringFunnel(UTF_8)
    Bip37Filter: Entry(bip37, kinds=frozenset({"bytes"})),
    SparkBloomFilter: Entry(spark),  # putString, putBinary, putLong  # public-key hashes, txids, outpoints
    RedisBloomFilter: Entry(redisbloom, full=(RedisBloomError,), room=lambda f: f.max_inserts),
    RedisCuckooFilter: Entry(redis_cuckoo, full=(RedisBloomError,), room=redis_cuckoo_room),
    ParquetBloomFilter: Entry(blocked),
    BlockedBloomFilter: Entry(blocked),
    CountingBloomFilter: Entry(counting),
    CuckooFilter: Entry(cuckoo, full=(CuckooFilterFull,), room=cuckoo_room),
    RotatingBloomFilter: Entry(rotating, memory=rotating_memory),
    AgePartitionedBloomFilter: Entry(age_partitioned, memory=lambda f: f.window),
    ScalableBloomFilter: Entry(scalable),
    StableBloomFilter: Entry(stable, memory=lambda f: (f.max_value - 1) // f.decrements),
    XorFilter: Entry(xor, built_from_keys=True),
    BinaryFuseFilter: Entry(binary_fuse, built_from_keys=True),
    RedisBackedFilter: Entry(redis_backed, needs=REDIS),
    ShardedFilter: Entry(sharded, needs=REDIS),
}

def entry(cls: type) -> Entry | None:
    """The class's entry, or None."""
    return REGISTRY.get(cls)


def memory(f) -> int | None:
    """Inserts after its own that ``f`` certainly keeps a key through (None: for ever)."""
    found = entry(type(f))
    return found.memory(f) if found is not None and found.memory is not None else None
