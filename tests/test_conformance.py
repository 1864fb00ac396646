"""Every class keeps every promise: one suite over every filter of the package, found, not listed.

The classes come from walking the package (``conformance_support.discover``): every module is
imported, and the suite takes every concrete subclass of :class:`bloomedu.core.contract.Filter`,
and every class in a module's ``__all__`` that looks like a filter (it answers ``in`` or
``contains_many`` and takes keys by ``add``/``add_many`` or in its constructor), so a class that
forgets the base is caught instead of skipped.  ``test_a_broken_class_added_to_the_package_is_
caught`` adds classes to the package, and every check they break fails.

What a new class must provide to be tested (bloomedu/core/contract.py says the same):

- ``Filter`` as a base, with ``add(key)`` and ``key in f`` (a static filter's ``add`` refuses
  with a TypeError naming the class); ``add_many``, ``contains_many``, ``copy``, pickling and
  ``==`` come from the base where the class does not write its own, and ``add_many_new``,
  ``to_bytes``/``from_bytes`` are checked where it has them;
- an entry in ``tests/filter_registry.py``: its example arguments (a small instance with room
  for about ``capacity`` keys at about 1%), and where the defaults do not hold, the key kinds it
  takes, ``built_from_keys``, how long it keeps a key if it forgets by design (``memory``),
  what ``add`` raises when the filter has no room left and how many inserts it takes for
  certain (``full``, ``room``), the services it needs (``{"redis"}``: tests give it a client of
  a server they start; a handle is neither pickled nor copied), and what ``from_bytes`` needs
  beside the bytes.  A class without an entry fails the suite.

What is checked, for every class: no false negative for every key kind it takes, in every form
(lists, ``S``/``U``/object arrays, integer arrays of every dtype and byte order, numpy scalars)
and through every path it has; bad keys refused and the filter unchanged; the same state from
four threads as from one; bytes and pickle round trips; truncated, padded, mutated and forged
bytes refused before allocating more than a small multiple of their size; bad numbers refused
naming the argument, numpy scalars, ``Fraction`` and ``Decimal`` taken as their value;
``add``'s and ``add_many_new``'s answers those of a loop of ``in`` then ``add``; a class that
forgets keeps each key as long as it says, one that fills takes its room and refuses the rest
changing nothing (tests/conformance_limits.py).

Classes that need a Redis server carry the ``redis`` marker (the full ``make test`` tier).
"""

from __future__ import annotations

import sys

import pytest

import filter_registry
from bloomedu.core.contract import Filter
from conformance_checks import (check_answers_are_a_loop_of_in_then_add, check_bad_keys_change_nothing,
                                check_forged_bytes, check_large_read, check_no_false_negative,
                                check_numbers, check_round_trips, check_static_bad_keys, check_threads,
                                check_wrapped_bytes, has_bytes)
from conformance_limits import check_memory_promise, check_room_and_refusals, fills, forgets
from conformance_support import class_id, declared, discover, filter_classes, key_kinds, static
from redis_support import plain_client, plain_server  # noqa: F401  (fixtures)

CLASSES = discover()


@pytest.fixture
def services(request):
    """The services of the class under test, by name: only those it needs are started."""
    cls = request.node.callspec.params["cls"]
    needs = declared(cls).needs if declared(cls) else ()
    return {"redis": request.getfixturevalue("plain_client")} if "redis" in needs else {}


@pytest.fixture
def switch_often():
    """Hand the GIL between threads every microsecond, so a race shows on the first run."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


def params(cases):
    """pytest params of (cls, ...) cases, marked ``redis`` where the class needs a server."""
    out = []
    for case in cases:
        cls = case[0]
        marks = [pytest.mark.redis] if declared(cls) and "redis" in declared(cls).needs else []
        out.append(pytest.param(*case, marks=marks,
                                id="-".join([class_id(cls), *map(str, case[1:])])))
    return out


# --- discovery -------------------------------------------------------------------------------
def test_discovery_finds_the_filters_of_every_part():
    names = {cls.__name__ for cls in CLASSES}
    assert {"BloomFilter", "KeyedBloomFilter", "SaltedBloomFilter", "SeenIds", "CountingBloomFilter",
            "StableBloomFilter", "BlockedBloomFilter", "GuavaBloomFilter", "Bip37Filter",
            "RedisBloomFilter", "RedisBackedFilter", "ShardedFilter"} <= names
    assert "SubFilter" not in names and "SeenSet" not in names  # a chain's part, a Protocol


@pytest.mark.parametrize("cls", CLASSES, ids=class_id)
def test_every_class_that_looks_like_a_filter_joins_the_contract(cls):
    assert issubclass(cls, Filter), (
        f"{class_id(cls)} answers 'in' and takes keys but does not subclass "
        "bloomedu.core.contract.Filter")


@pytest.mark.parametrize("cls", CLASSES, ids=class_id)
def test_every_filter_class_has_a_registry_entry(cls):
    assert declared(cls) is not None, (
        f"{class_id(cls)} has no entry in tests/filter_registry.py: add one (its example "
        "arguments, key kinds, memory, room) so the conformance suite can build it")
    assert set(key_kinds(cls)) <= filter_registry.KINDS and key_kinds(cls)


def test_every_registry_entry_is_a_filter_class_of_the_package():
    assert set(filter_registry.REGISTRY) == filter_classes()


# --- no false negative ---------------------------------------------------------------------------
def kinds_and_paths(cls):
    methods = ["built"] if static(cls) else [p for p in ("add", "add_many", "add_many_new")
                                              if hasattr(cls, p)]
    return [(cls, kind, path) for kind in sorted(key_kinds(cls) - {"other"}) for path in methods]


@pytest.mark.parametrize("cls, kind, path", params(
    case for cls in CLASSES for case in kinds_and_paths(cls) if declared(cls)))
def test_no_key_of_any_kind_is_lost_on_any_path(cls, kind, path, services):
    check_no_false_negative(cls, kind, path, services)


@pytest.mark.parametrize("cls", params((cls,) for cls in CLASSES if declared(cls) and not static(cls)
                                       and "bytes" in key_kinds(cls)))
def test_bytearray_and_memoryview_keys_are_their_bytes_or_refused(cls, services):
    check_wrapped_bytes(cls, services)


@pytest.mark.parametrize("cls", params((cls,) for cls in CLASSES
                                       if declared(cls) and forgets(cls) and hasattr(cls, "add")))
def test_a_class_that_forgets_keeps_what_it_declares(cls, services):
    check_memory_promise(cls, services)


@pytest.mark.parametrize("cls", params((cls,) for cls in CLASSES
                                       if declared(cls) and fills(cls) and hasattr(cls, "add")))
def test_a_class_that_fills_takes_its_room_and_refuses_changing_nothing(cls, services):
    check_room_and_refusals(cls, services)


# --- bad keys ------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", params((cls,) for cls in CLASSES if declared(cls)))
def test_bad_keys_are_refused_and_change_nothing(cls, services):
    (check_static_bad_keys if static(cls) else check_bad_keys_change_nothing)(cls, services)


# --- what add and add_many_new answer -------------------------------------------------------------
@pytest.mark.parametrize("cls", params((cls,) for cls in CLASSES
                                       if declared(cls) and hasattr(cls, "add") and not static(cls)))
def test_add_and_add_many_new_answer_as_a_loop_of_in_then_add(cls, services):
    check_answers_are_a_loop_of_in_then_add(cls, services)


# --- threads -------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls, path", params(
    (cls, path) for cls in CLASSES if declared(cls) and not static(cls)
    for path in ("add", "add_many") if hasattr(cls, path)))
def test_four_threads_leave_the_state_one_thread_leaves(cls, path, services, switch_often):
    check_threads(cls, services, path)


# --- bytes and pickles ---------------------------------------------------------------------------
@pytest.mark.parametrize("cls", params((cls,) for cls in CLASSES if declared(cls)))
def test_bytes_pickles_and_copies_round_trip(cls, services):
    check_round_trips(cls, services)


@pytest.mark.parametrize("cls", params((cls,) for cls in CLASSES if declared(cls) and has_bytes(cls)))
def test_forged_bytes_are_refused_before_anything_large_is_allocated(cls, services):
    check_forged_bytes(cls, services)
    check_large_read(cls, services)


# --- numbers -------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", params((cls,) for cls in CLASSES if declared(cls)))
def test_bad_numbers_are_refused_naming_the_argument(cls, services):
    check_numbers(cls, services)


# --- a class added to the package is tested: a broken one fails, a correct static one passes --
PLANTED = '''"""Planted in bloomedu.variants by tests/test_conformance.py, for one test."""
import numpy as np

from bloomedu.core.hashing import key_list
from bloomedu.core.contract import Filter
from bloomedu.core.filter import BloomFilter
from bloomedu.core.hashing import hash128
from bloomedu.core.serial import Header
from bloomedu.variants.cuckoo import CuckooFilter, CuckooFilterFull

__all__ = ["LeakyFilter", "HashSet", "Unjoined", "SpillingCuckoo", "Unregistered"]

_HEADER = Header(b"HSET", 1, "Q")


class LeakyFilter(BloomFilter):
    """Three defects: loses the last key of a batch, builds what a header says before reading
    it, and takes any number int() takes."""

    def __init__(self, num_bits: int, num_hashes: int):
        super().__init__(int(num_bits), int(num_hashes))

    def add_many(self, keys):
        super().add_many(list(keys)[:-1])

    @classmethod
    def from_bytes(cls, data):
        cls(max(1, min(int.from_bytes(bytes(data[8:16]), "little"), 2 ** 33)), 1)
        return super().from_bytes(data)


class HashSet(Filter):
    """A correct static filter: the 128-bit hashes of the keys it was built from, sorted."""

    def __init__(self, keys):
        self.hashes = frozenset(hash128(key) for key in key_list(keys))

    def add(self, key):
        raise TypeError("HashSet is built once from its keys")

    def __contains__(self, key):
        return hash128(key) in self.hashes

    def contains_many(self, keys):
        return np.array([hash128(key) in self.hashes for key in key_list(keys)], dtype=bool)

    def __eq__(self, other):
        return type(other) is type(self) and self.hashes == other.hashes

    def to_bytes(self):
        ordered = sorted(self.hashes)
        return _HEADER.pack(len(ordered)) + b"".join(
            h1.to_bytes(8, "little") + h2.to_bytes(8, "little") for h1, h2 in ordered)

    @classmethod
    def from_bytes(cls, data):
        (count,), payload = _HEADER.read(data, "HashSet", lambda values: 16 * values[0])
        new = cls.__new__(cls)
        words = np.frombuffer(payload, dtype="<u8").reshape(-1, 2).tolist()
        new.hashes = frozenset(map(tuple, words))
        return new

    def __reduce__(self):
        return type(self).from_bytes, (self.to_bytes(),)


class SpillingCuckoo(CuckooFilter):
    """One defect: a refused add leaves a trace of its walk (a fingerprint it moved)."""

    def add(self, key):
        try:
            super().add(key)
        except CuckooFilterFull:
            self.table.flat[0] ^= 1
            raise


class Unregistered(BloomFilter):
    """A correct filter with no entry in the registry."""


class Unjoined:
    """Looks like a filter, never joined the contract."""

    def add(self, key):
        pass

    def __contains__(self, key):
        return False
'''


@pytest.fixture
def planted(tmp_path):
    """bloomedu.variants.planted, a module of the package for this test only, with registry
    entries for three of its classes, then removed."""
    import bloomedu.variants

    (tmp_path / "planted.py").write_text(PLANTED)
    bloomedu.variants.__path__.append(str(tmp_path))
    registered = dict(filter_registry.REGISTRY)
    try:
        yield filter_registry.REGISTRY
    finally:
        bloomedu.variants.__path__.remove(str(tmp_path))
        sys.modules.pop("bloomedu.variants.planted", None)
        filter_registry.REGISTRY.clear()
        filter_registry.REGISTRY.update(registered)


def test_a_broken_class_added_to_the_package_is_caught(planted):
    found = {cls.__name__: cls for cls in discover()}
    leaky, hash_set, unjoined = found["LeakyFilter"], found["HashSet"], found["Unjoined"]
    assert CLASSES != discover() and {leaky, hash_set, found["Unregistered"]} <= filter_classes()
    failures = (AssertionError, pytest.fail.Exception)
    with pytest.raises(failures, match="does not subclass"):
        test_every_class_that_looks_like_a_filter_joins_the_contract(unjoined)
    for cls in (leaky, found["Unregistered"]):
        with pytest.raises(failures, match="no entry in tests/filter_registry.py"):
            test_every_filter_class_has_a_registry_entry(cls)
    with pytest.raises(failures):
        test_every_registry_entry_is_a_filter_class_of_the_package()
    planted[leaky] = filter_registry.REGISTRY[filter_registry.BloomFilter]
    planted[found["SpillingCuckoo"]] = filter_registry.REGISTRY[filter_registry.CuckooFilter]
    planted[hash_set] = filter_registry.Entry(lambda capacity, keys=(), **services: {"keys": keys},
                                              built_from_keys=True)
    with pytest.raises(failures, match="keys lost"):
        check_no_false_negative(leaky, "str", "add_many", {})
    with pytest.raises(failures, match="bytes allocated reading"):
        check_forged_bytes(leaky, {})
    with pytest.raises(failures):
        check_numbers(leaky, {})
    with pytest.raises(failures, match="changed the filter"):
        check_room_and_refusals(found["SpillingCuckoo"], {})
    check_no_false_negative(leaky, "str", "add", {})  # what it does right still passes
    for kind in ("str", "bytes", "int"):  # the static filter keeps every promise
        check_no_false_negative(hash_set, kind, "built", {})
    for check in (check_static_bad_keys, check_round_trips, check_forged_bytes, check_numbers):
        check(hash_set, {})
