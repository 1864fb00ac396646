"""Every public class with state pickles at every protocol (0 to 5) with the same answers and bits.

Each instance below is built with some keys in it, pickled and unpickled at each protocol, and
asked the same questions as the original (keys inserted and keys not), bit for bit where it has
bits.  A hash function is pickled by reference: a module-level one travels, a lambda or a
nested function gets a clear ``PicklingError``.
"""

import dataclasses
import pickle

import numpy as np
import pytest

from bloomedu import (AgePartitionedBloomFilter, BitArray, BitVector, BloomFilter,
                      CountingBloomFilter, HashedIds, RotatingBloomFilter, SaltedBloomFilter,
                      ScalableBloomFilter, SeenIds, StableBloomFilter, click_stream, murmurhash2,
                      score)
from bloomedu.cli import size_report
from bloomedu.compat.bip37 import Bip37Filter
from bloomedu.compat.guava import MURMUR128_MITZ_32, GuavaBloomFilter
from bloomedu.compat.parquet import ParquetBloomFilter
from bloomedu.variants import BlockedBloomFilter
from bloomedu.core.keyed import KeyedBloomFilter
from bloomedu.steps.expiry import ExpiringIds
from bloomedu.services.blacklist import BlacklistCache, BlacklistDatabase, LookupStats, create_database
from bloomedu.teaching import classroom
from bloomedu.teaching.exercises import EXERCISES, Mistake
from bloomedu.teaching.experiments import sweep
from bloomedu.teaching.explorer import explore

KEYS = ["https://a.example/", "città", "", "123"]
ABSENT = [f"absent-{i}" for i in range(50)]
PROTOCOLS = range(pickle.HIGHEST_PROTOCOL + 1)


def reversed_murmur(text: str) -> int:
    """A custom hash function defined at module level: pickle can find it by name."""
    return murmurhash2(text[::-1])


def filled(stage, keys=KEYS):
    for key in keys:
        stage.add(key)
    return stage


def _bits(stage) -> bytes | None:
    if isinstance(stage, BlockedBloomFilter):
        return stage.words.tobytes()
    bits = stage if isinstance(stage, BitArray) else getattr(stage, "bits", None) or \
        getattr(stage, "_bits", None)
    return None if bits is None else bits.data.tobytes()


def _answers(stage, keys) -> list[bool]:
    if isinstance(stage, BitArray):
        return [stage[i] for i in range(len(stage))]
    if isinstance(stage, BlacklistCache):
        return [stage.is_blacklisted(key) for key in keys]
    if isinstance(stage, BlacklistDatabase):
        return [stage.contains(key) for key in keys]
    return [key in stage for key in keys]


@pytest.fixture(scope="module")
def blacklist(tmp_path_factory):
    path = tmp_path_factory.mktemp("pickle") / "bl.sqlite"
    create_database(path, KEYS[:2])
    return path


def stateful(blacklist):
    """(name, instance, keys to ask) for every public class with state."""
    bits = BitArray(70, word_bits=8)
    bits.set_many(np.array([0, 9, 69]))
    bip37 = Bip37Filter(10, 0.01, tweak=9, flags=1)
    for key in KEYS:
        bip37.insert(key.encode())
    return [
        ("BloomFilter", filled(BloomFilter(2000, 5)), KEYS + ABSENT),
        ("BloomFilter at k = 1024", filled(BloomFilter(50_000, 1024)), KEYS + ABSENT[:5]),
        ("SaltedBloomFilter", filled(SaltedBloomFilter(3, 10)), KEYS + ABSENT),
        ("SaltedBloomFilter, custom hash", filled(SaltedBloomFilter(4, 12, reversed_murmur)), KEYS + ABSENT),
        ("BitVector", filled(BitVector(8)), KEYS + ABSENT),
        ("BitVector, custom hash", filled(BitVector(9, reversed_murmur)), KEYS + ABSENT),
        ("BitArray", bits, []),
        ("BitArray of words", BitArray(130), []),
        ("GuavaBloomFilter", filled(GuavaBloomFilter.create(100, 0.01)), KEYS + ABSENT),
        ("GuavaBloomFilter, strategy 0", filled(GuavaBloomFilter(3, 4, MURMUR128_MITZ_32)), KEYS + ABSENT),
        ("Bip37Filter", bip37, [key.encode() for key in KEYS + ABSENT]),
        ("Bip37Filter, empty", Bip37Filter(1, 0.5), [b"anything"]),
        ("SeenIds", filled(SeenIds()), KEYS + ABSENT),
        ("HashedIds", filled(HashedIds()), KEYS + ABSENT),
        ("HashedIds, custom hash", filled(HashedIds(reversed_murmur)), KEYS + ABSENT),
        ("BlacklistDatabase", BlacklistDatabase(blacklist), KEYS + ABSENT[:3]),
        ("BlacklistCache", BlacklistCache(blacklist, fpp=0.01), KEYS + ABSENT[:3]),
        ("CountingBloomFilter", filled(CountingBloomFilter(500, 3)), KEYS + ABSENT),
        ("CountingBloomFilter, 8-bit", filled(CountingBloomFilter(500, 3, 8)), KEYS + ABSENT),
        ("ScalableBloomFilter", filled(ScalableBloomFilter(2, 0.01)), KEYS + ABSENT),  # 2 sub-filters
        ("RotatingBloomFilter", filled(RotatingBloomFilter(2, 0.01, 3)), KEYS + ABSENT),  # rotated
        ("AgePartitionedBloomFilter", filled(AgePartitionedBloomFilter(3, 2, 2)), KEYS + ABSENT),
        ("StableBloomFilter", filled(StableBloomFilter(600, 3, 3, 2, seed=5)), KEYS + ABSENT),
        ("ExpiringIds", filled(ExpiringIds(3600)), KEYS + ABSENT),
        ("KeyedBloomFilter", filled(KeyedBloomFilter(2000, 5, bytes(range(16)))), KEYS + ABSENT),
        ("BlockedBloomFilter", filled(BlockedBloomFilter(2048)), KEYS + ABSENT),
        ("ParquetBloomFilter", filled(ParquetBloomFilter(2048)), KEYS + ABSENT),
    ]


def test_every_public_class_with_state_is_listed(blacklist):
    instances = stateful(blacklist)
    names = {name.split()[0].rstrip(",") for name, _, _ in instances}
    for _, stage, _ in instances:
        if hasattr(stage, "close"):
            stage.close()
    assert names == {"BloomFilter", "SaltedBloomFilter", "BitVector", "BitArray", "GuavaBloomFilter",
                     "Bip37Filter", "SeenIds", "HashedIds", "BlacklistDatabase", "BlacklistCache",
                     "CountingBloomFilter", "ScalableBloomFilter", "RotatingBloomFilter",
                     "AgePartitionedBloomFilter", "StableBloomFilter", "ExpiringIds",
                     "KeyedBloomFilter", "BlockedBloomFilter", "ParquetBloomFilter"}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_class_pickles_with_the_same_answers_and_bits(blacklist, protocol):
    for name, stage, keys in stateful(blacklist):
        copy = pickle.loads(pickle.dumps(stage, protocol=protocol))
        assert type(copy) is type(stage), name
        assert _bits(copy) == _bits(stage), name
        assert _answers(copy, keys) == _answers(stage, keys), name
        if hasattr(stage, "__eq__") and type(stage).__eq__ is not object.__eq__:
            assert copy == stage, name
        if hasattr(stage, "_lock"):  # each copy makes its own lock
            assert copy._lock is not stage._lock, name
        if isinstance(stage, (BlacklistCache, BlacklistDatabase)):
            assert repr(copy) == repr(stage)
            if isinstance(stage, BlacklistCache):
                assert copy.stats == stage.stats and copy.bloom == stage.bloom
            copy.close()
            stage.close()
        elif hasattr(stage, "add"):  # a working, independent copy
            copy.add(b"more" if isinstance(stage, Bip37Filter) else "more")
            assert _answers(stage, keys) == _answers(pickle.loads(pickle.dumps(stage)), keys)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_result_records_pickle_too(protocol):
    stream = click_stream(50, seed=1)
    kept = [click for click in stream if not click.duplicate]
    records = [stream[0], score(stream, kept), LookupStats(lookups=3, filter_rejections=2),
               size_report(items=1000, fpp=0.01), explore(num_bits=1000, num_hashes=3, n=100, num_queries=500, max_k=4),
               sweep(num_bits=2 ** 10, num_hashes=2, num_items=50, num_queries=500)[0], Mistake(3, "a slip"),
               EXERCISES["07"][0],
               classroom.find_collision(lambda key: murmurhash2(key) % 64, max_tries=10_000)]
    bloom = filled(BloomFilter(64, 3))
    records += [classroom.bit_setters(bloom, KEYS[0], KEYS)[0],
                classroom.find_false_positive(bloom, KEYS, max_tries=100_000),
                classroom.fill_curve(BloomFilter(256, 3), [str(i) for i in range(30)], points=5)]
    for record in records:
        assert dataclasses.is_dataclass(record), record
        assert same(pickle.loads(pickle.dumps(record, protocol=protocol)), record), record


def same(a, b) -> bool:
    """Equal, field by field, arrays element by element."""
    if dataclasses.is_dataclass(a):
        return type(a) is type(b) and all(same(getattr(a, f.name), getattr(b, f.name))
                                          for f in dataclasses.fields(a))
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    return a == b


def make_nested_hash():
    def nested(text):
        return len(text)
    return nested


@pytest.mark.parametrize("hash_function", [lambda text: len(text), make_nested_hash()],
                         ids=["lambda", "nested function"])
@pytest.mark.parametrize("make", [lambda h: SaltedBloomFilter(3, 8, h), lambda h: BitVector(8, h),
                                  lambda h: HashedIds(h)],
                         ids=["SaltedBloomFilter", "BitVector", "HashedIds"])
def test_a_hash_function_pickle_cannot_find_is_a_clear_error(make, hash_function):
    stage = make(hash_function)
    for protocol in PROTOCOLS:
        with pytest.raises(pickle.PicklingError, match=f"cannot pickle this {type(stage).__name__}: "
                                                       "its hash_function .* cannot be pickled"):
            pickle.dumps(stage, protocol=protocol)


def test_a_custom_hash_function_survives_the_trip():
    stage = filled(SaltedBloomFilter(3, 10, reversed_murmur))
    copy = pickle.loads(pickle.dumps(stage))
    assert copy.hash_function is reversed_murmur
    assert copy.bit_indices("xyz") == stage.bit_indices("xyz") != SaltedBloomFilter(3, 10).bit_indices("xyz")
