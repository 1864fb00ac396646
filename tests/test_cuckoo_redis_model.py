"""RedisCuckooFilter on its own, without a server: runs recorded from the running module
(tests/data/redisbloom_cuckoo_vectors.json, written by tools/cuckoo_vectors.py) are reproduced;
the library's promises hold (limits with clear errors naming the argument, memory checked
before allocating, one lock, pickles at every protocol, forged dumps refused before a large
allocation); and what a delete of an item never added does is shown.  The comparison with the
running module itself is tests/test_cuckoo_redis.py."""

from __future__ import annotations

import hashlib
import json
import pickle
import struct
import threading
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomedu.compat.redisbloom_cuckoo import RedisBloomError, RedisCuckooFilter
from bloomedu.compat.redisbloom_cuckoo_subfilter import item_hash, lookup, next_power_of_two
from bloomedu.core.checks import StorageTooLarge
from cuckoo_support import run_model, script
from redis_support import mixed_items

VECTORS = json.loads((Path(__file__).parent / "data" / "redisbloom_cuckoo_vectors.json").read_text())
HEADER = struct.Struct("<QQQQHHH")


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda c: f"{c['capacity']}-{c['bucket_size']}")
def test_runs_recorded_from_the_module_are_reproduced(case):
    model = RedisCuckooFilter(case["capacity"], case["bucket_size"], case["max_iterations"],
                              case["expansion"])
    answers = run_model(model, script(case["commands"], case["seed"]))
    assert ",".join(map(str, answers)) == case["answers"]
    dump = model.scandump()
    assert dump[0][1].hex() == case["header"]
    assert [iterator for iterator, _ in dump] == case["iterators"]
    assert hashlib.sha256(b"".join(data for _, data in dump)).hexdigest() == case["sha256"]
    assert model.info() == case["info"]


def test_the_recorded_runs_cover_growth_full_filters_and_the_limit():
    answers = ",".join(case["answers"] for case in VECTORS["cases"])
    assert "Filter is full" in answers and "Maximum expansions reached" in answers
    assert max(case["info"]["Number of filters"] for case in VECTORS["cases"]) == 32


def filled(seed=1, capacity=40, bucket_size=2, expansion=2) -> RedisCuckooFilter:
    model = RedisCuckooFilter(capacity, bucket_size, 20, expansion)
    run_model(model, script(400, seed))
    return model


@settings(deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=20), st.text(max_size=8),
                          st.integers(-2 ** 63, 2 ** 64 - 1)), max_size=50))
def test_exists_many_answers_as_exists_one_by_one(probes):
    model = filled()
    probes = probes + mixed_items(30, seed=2)
    assert model.exists_many(probes).tolist() == [model.exists(item) for item in probes]


def test_int_arrays_are_sent_as_their_decimal_digits():
    model = filled()
    model.add(123)
    keys = np.array([123, -5, 2 ** 62], dtype=np.int64)
    assert model.exists_many(keys).tolist() == [model.exists(str(int(k))) for k in keys]


def test_an_item_never_added_can_delete_another_items_fingerprint():
    """CF.DEL cannot tell an item from another with the same fingerprint in the same bucket:
    it removes that one, which then answers absent (a false negative), as on the server."""
    model = RedisCuckooFilter(4, 2, expansion=0)  # 2 buckets
    first = lookup(item_hash("kept"))
    twin = next(f"other-{i}" for i in range(100_000)
                if lookup(item_hash(f"other-{i}"))[0] == first[0]
                and lookup(item_hash(f"other-{i}"))[1] % 2 == first[1] % 2)
    model.add("kept")
    assert model.exists(twin)  # a false positive already
    assert model.delete(twin) is True  # "deleted", though never added
    assert not model.exists("kept") and model.num_items == 0


def test_an_empty_filter_dumps_nothing_even_after_deletes():
    model = RedisCuckooFilter(8)
    model.add("x")
    assert len(model.scandump()) == 2
    model.delete("x")
    assert model.scandump() == [] and model.info()["Number of items deleted"] == 1


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_it_pickles_at_every_protocol_with_the_same_answers(protocol):
    for model in (filled(), RedisCuckooFilter(8)):  # the empty one has no dump: pickled anyway
        copy = pickle.loads(pickle.dumps(model, protocol=protocol))
        assert copy == model and copy._lock is not model._lock
        assert copy.info() == model.info()
        probes = mixed_items(200, seed=3)
        assert copy.exists_many(probes).tolist() == model.exists_many(probes).tolist()
        more = script(100, seed=4)
        assert run_model(copy, more) == run_model(model, more)


def test_a_copy_is_independent():
    model = filled()
    copy = model.copy()
    copy.add("only in the copy")
    assert copy != model and not model.exists("only in the copy")


def test_threads_lose_no_item_and_no_count():
    model = RedisCuckooFilter(4000, 4, expansion=2)
    parts = [[f"{t}-{i}" for i in range(1500)] for t in range(4)]

    def add_all(items):
        for item in items:
            model.add(item)

    threads = [threading.Thread(target=add_all, args=(part,)) for part in parts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert model.num_items == 6000
    assert all(model.exists_many([item for part in parts for item in part]))


@pytest.mark.parametrize("name, position", [("capacity", 0), ("bucket_size", 1),
                                            ("max_iterations", 2), ("expansion", 3)])
@pytest.mark.parametrize("bad, error", [
    (float("nan"), TypeError), (float("inf"), TypeError), (2.0, TypeError), (True, TypeError),
    (Fraction(8), TypeError), (Decimal(8), TypeError), ("8", TypeError), (None, TypeError),
    (-1, ValueError), (2 ** 64, ValueError),
])
def test_bad_numbers_are_refused_naming_the_argument(name, position, bad, error):
    args = [1000, 2, 20, 1]
    args[position] = bad
    with pytest.raises(error, match=name):
        RedisCuckooFilter(*args)


def test_numpy_integers_are_numbers_and_the_module_ranges_are_kept():
    model = RedisCuckooFilter(np.int64(100), np.uint8(4), np.int16(7), np.uint64(3))
    assert model.info()["Bucket size"] == 4 and model.info()["Expansion rate"] == 4
    with pytest.raises(ValueError, match="bucket_size"):
        RedisCuckooFilter(1000, 256)
    with pytest.raises(ValueError, match="max_iterations"):
        RedisCuckooFilter(1000, 2, 65536)
    with pytest.raises(ValueError, match="expansion"):
        RedisCuckooFilter(1000, 2, 20, 32769)
    with pytest.raises(ValueError, match="capacity must be at least 2 \\* bucket_size = 8"):
        RedisCuckooFilter(7, 4)


def test_memory_is_checked_before_anything_is_allocated():
    with pytest.raises(StorageTooLarge, match="capacity=2199023255552"):
        RedisCuckooFilter(2 ** 41, 1)  # 2 TiB of buckets
    with pytest.raises(ValueError, match="capacity=8589934592"):  # 8 GiB: too much here, or
        RedisCuckooFilter(2 ** 33, 1)  # the module's 32-bit evictions would divide by zero


def test_growth_that_cannot_be_held_is_refused_and_the_filter_is_unchanged():
    model = RedisCuckooFilter(2 ** 20, 1, 1, expansion=32768)  # the next sub-filter: 2**35 buckets
    items = iter(f"k{i}" for i in range(10 ** 7))
    while True:
        item = next(items)
        before = (model.num_items, len(model.filters))
        try:
            model.add(item)
        except ValueError as error:
            assert "32 bits" in str(error) or "needs" in str(error)
            break
    assert (model.num_items, len(model.filters)) == before and not model.exists(item)


def test_bad_items_are_refused_and_change_nothing():
    model = filled()
    before = model.scandump()
    for item, error in [(1.5, TypeError), ("\ud800", ValueError), (None, TypeError), (True, TypeError)]:
        for call in (model.add, model.add_nx, model.exists, model.delete, model.count):
            with pytest.raises(error):
                call(item)
    with pytest.raises(TypeError, match="keys must be an iterable of keys"):  # every filter's words
        model.exists_many("abc")
    assert model.scandump() == before


def header(items=1, buckets=8, deletes=0, filters=1, bucket_size=2, iterations=20, expansion=1):
    return HEADER.pack(items, buckets, deletes, filters, bucket_size, iterations, expansion)


@pytest.mark.parametrize("chunks, message", [
    ([], "must start with the header"),
    ([(9, bytes(16))], "must start with the header"),
    ([(1, bytes(37))], "a header is 38"),
    ([(1, header(bucket_size=0)), (1, b"")], "bucket size 0"),
    ([(1, header(bucket_size=256))], "bucket size 256"),
    ([(1, header(buckets=6))], "6 buckets"),
    ([(1, header(buckets=0))], "0 buckets"),
    ([(1, header(filters=0))], "0 sub-filters"),
    ([(1, header(filters=65536))], "0 sub-filters"),
    ([(1, header(iterations=0))], "max iterations 0"),
    ([(1, header(buckets=2 ** 50)), (17, bytes(16))], "2251799813685248 bytes"),  # 2 PiB
    ([(1, header(filters=60000, expansion=65535)), (17, bytes(16))], "over 16 bytes"),
    ([(1, header()), (17, bytes(15))], "carry 15"),
    ([(1, header(filters=2, expansion=0)), (17, bytes(16))], "0 buckets"),
    ([(1, header(buckets=2 ** 32, bucket_size=1)), (2, b"x")], "carry 1"),
    ([(1, header()), (1, bytes(16))], "second header"),
    ([(1, header()), (0, bytes(16))], "Invalid position"),
    ([(1, header()), (16, bytes(16))], "does not fit"),
    ([(1, header()), (18, bytes(16))], "does not fit"),
    ([(1, header()), (17, "x" * 16)], "must be bytes"),
    ([(1, header()), ("17", bytes(16))], "must be an int"),
    ([(1, header()), (17,)], "pair"),
])
def test_forged_chunks_are_refused_before_a_large_allocation(chunks, message):
    with pytest.raises((ValueError, TypeError), match=message):
        RedisCuckooFilter.loadchunks(chunks)


def test_a_loaded_sub_filter_of_2_to_the_32_buckets_is_refused_in_32_bits():
    """The bytes for it (4 GiB) are not made here: the check the loader runs is called alone."""
    from bloomedu.compat.redisbloom_cuckoo_subfilter import check_buckets
    with pytest.raises(ValueError, match="32 bits"):
        check_buckets(2 ** 32, 1, "chunks[0]'s sub-filter 0", loaded=True)
    check_buckets(2 ** 31, 1, "chunks[0]'s sub-filter 0", loaded=True)  # 2 GiB: allowed


def test_chunks_may_come_in_any_order_and_pieces_as_loadchunk_takes_them():
    model = filled(capacity=400, expansion=2)
    pairs = model.scandump()
    data = b"".join(d for _, d in pairs[1:])
    pieces = [(1, pairs[0][1])]
    for start in range(0, len(data), 37):  # 37-byte pieces, last first
        piece = data[start:start + 37]
        pieces.append((start + len(piece) + 1, piece))
    reordered = [pieces[0]] + pieces[1:][::-1]
    assert RedisCuckooFilter.loadchunks(reordered) == model


def test_next_power_of_two_wraps_as_the_modules_does():
    assert [next_power_of_two(n) for n in (1, 2, 5, 2 ** 40 + 1)] == [1, 2, 8, 2 ** 41]
    assert next_power_of_two(0) == 0 and next_power_of_two(2 ** 64 - 1) == 0
