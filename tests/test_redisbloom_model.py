"""RedisBloomFilter and MurmurHash64A on their own, without a server: the numpy hash equals the
scalar one (hypothesis), dumps recorded from the running module (tests/data/redisbloom_vectors.json)
are reproduced, and bad input gets a clear error and changes nothing.  The comparison with the
running module itself is tests/test_redisbloom.py."""

from __future__ import annotations

import hashlib
import json
import pickle
import tracemalloc
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomedu.compat.murmur64 import SEED, murmurhash64a, murmurhash64a_many, pack_items
from bloomedu.compat.redisbloom import RedisBloomError, RedisBloomFilter, encode_item
from bloomedu.compat.redisbloom_subfilter import LINK, LN2
from redis_support import mixed_items

VECTORS = json.loads((Path(__file__).parent / "data" / "redisbloom_vectors.json").read_text())


@settings(deadline=None)
@given(st.lists(st.binary(max_size=200), max_size=60), st.integers(0, 2 ** 64 - 1))
def test_numpy_murmurhash64a_equals_the_scalar_one(items, seed):
    hashed = murmurhash64a_many(*pack_items(items), seed) if items else []
    assert [int(h) for h in hashed] == [murmurhash64a(item, seed) for item in items]


def test_long_items_are_finished_one_by_one_and_still_equal():
    items = [bytes(range(256)) * 40, b"x" * 8193] + [b"short"] * 30
    seeds = np.arange(len(items), dtype=np.uint64) * np.uint64(2 ** 61 + 3)
    hashed = murmurhash64a_many(*pack_items(items), seeds)
    assert [int(h) for h in hashed] == [murmurhash64a(i, int(s)) for i, s in zip(items, seeds)]


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda c: f"{c['error_rate']}-{c['capacity']}")
def test_dumps_recorded_from_the_module_are_reproduced(case):
    model = RedisBloomFilter(case["error_rate"], case["capacity"], case["expansion"], case["nonscaling"])
    items = mixed_items(case["items"], seed=case["items"])[: case["capacity"] if case["nonscaling"] else None]
    assert "".join(map(str, model.add_many(items).astype(int))) == case["answers"]
    pairs = model.scandump()
    assert pairs[0][1].hex() == case["header"]
    assert [iterator for iterator, _ in pairs] == case["iterators"]
    assert hashlib.sha256(b"".join(data for _, data in pairs)).hexdigest() == case["sha256"]
    assert model.info() == case["info"]


def test_bulk_and_one_by_one_agree_through_growths():
    items = mixed_items(700, seed=3) + mixed_items(200, seed=3)
    one, bulk = RedisBloomFilter(0.2, 3, expansion=2), RedisBloomFilter(0.2, 3, expansion=2)
    assert [one.add(item) for item in items] == bulk.add_many(items).tolist()
    assert one == bulk and one.info()["Number of filters"] > 5
    probes = mixed_items(500, seed=4)
    assert [one.exists(p) for p in probes] == bulk.exists_many(probes).tolist()
    assert all(bulk.exists(item) for item in items)  # never a false negative


def test_encoding_is_what_redis_py_sends():
    assert encode_item(12) == encode_item("12") == b"12"
    f = RedisBloomFilter(0.01, 100)
    f.add_many(np.array([5, -7], dtype=np.int64))
    assert f.exists(5) and f.exists("-7") and not f.exists(6)


@pytest.mark.parametrize("kwargs, message", [
    ({"error_rate": 0, "capacity": 10}, "error_rate must be a number strictly between 0 and 1"),
    ({"error_rate": 1.0, "capacity": 10}, "error_rate"), ({"error_rate": float("nan"), "capacity": 10}, "error_rate"),
    ({"error_rate": True, "capacity": 10}, "error_rate"), ({"error_rate": 0.1, "capacity": 0}, "capacity"),
    ({"error_rate": 0.1, "capacity": 2 ** 63}, "capacity"), ({"error_rate": 0.1, "capacity": 1.5}, "capacity"),
    ({"error_rate": 0.1, "capacity": 5, "expansion": 0}, "expansion"),
    ({"error_rate": 0.1, "capacity": 5, "expansion": 3, "nonscaling": True}, "cannot expand"),
    ({"error_rate": 5e-324, "capacity": 5}, "could not create filter"),
])
def test_bad_parameters_are_refused_by_name(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):  # a bool or a float: TypeError
        RedisBloomFilter(**kwargs)


def test_bad_items_change_nothing():
    f = RedisBloomFilter(0.01, 10)
    f.add_many(["a", "b"])
    before = f.scandump()
    for bad, error in [(["c", 3.5], TypeError), (["d", True], TypeError), (["\ud800"], ValueError),
                       ("abc", TypeError), (np.array(["x", "yz"]), ValueError)]:  # "x" ends in NUL in a U2
        with pytest.raises(error):
            f.add_many(bad)
        assert f.scandump() == before
    with pytest.raises(TypeError, match="item must be str, bytes or int"):
        f.add(None)


def test_loadchunks_refuses_bad_data_as_the_module_does():
    f = RedisBloomFilter(0.01, 10)
    f.add_many(map(str, range(25)))
    pairs = f.scandump()
    assert RedisBloomFilter.loadchunks(pairs) == f
    header = bytearray(pairs[0][1])
    with pytest.raises(ValueError, match="header"):
        RedisBloomFilter.loadchunks([(2, bytes(header))])
    with pytest.raises(ValueError, match="length"):
        RedisBloomFilter.loadchunks([(1, bytes(header[:-1]))])
    with pytest.raises(ValueError, match="invalid chunk - Too big"):
        RedisBloomFilter.loadchunks([pairs[0], (pairs[1][0] + 8, pairs[1][1] + bytes(8))])
    with pytest.raises(ValueError, match="no link found"):
        RedisBloomFilter.loadchunks([pairs[0], (10 ** 9, b"x")])
    header[8:12] = (0).to_bytes(4, "little")  # zero sub-filters but a size: does not add up
    with pytest.raises(ValueError, match="bad data"):
        RedisBloomFilter.loadchunks([(1, bytes(header[:20]))])


def test_a_full_nonscaling_filter_refuses_one_more_and_stays_as_it_was():
    f = RedisBloomFilter(0.01, 2, nonscaling=True)
    f.add_many(["a", "b"])
    before = f.scandump()
    with pytest.raises(RedisBloomError, match="non scaling filter is full"):
        f.add("c")
    assert f.scandump() == before and f.info()["Expansion rate"] is None


# --- a lock, pickles, and dumps that cannot make the model build what they say --------------------
def test_writes_and_dumps_hold_the_models_lock():
    f, held = RedisBloomFilter(0.01, 5), []

    class Spy:  # a lock that records each time it is taken
        def __enter__(self):
            held.append(True)

        def __exit__(self, *exc):
            return False

    f._lock = Spy()
    for call in (lambda: f.add("x"), lambda: f.add_many(["y", "z"]), f.scandump, f.to_bytes,
                 f.info, f.header):
        before = len(held)
        call()
        assert len(held) == before + 1, call


@pytest.mark.parametrize("protocol", range(6))
def test_the_model_pickles_at_every_protocol(protocol):
    f = RedisBloomFilter(0.01, 10)
    f.add_many(map(str, range(40)))  # three sub-filters
    twin = pickle.loads(pickle.dumps(f, protocol=protocol))
    assert twin == f and twin.info() == f.info() and twin._lock is not f._lock
    assert twin.exists_many(list(map(str, range(40)))).all()


def forged_header(f: RedisBloomFilter, **fields) -> bytes:
    """f's BF.SCANDUMP header with the first sub-filter's fields replaced."""
    header = bytearray(f.header())
    names = ["nbytes", "bits", "size", "error", "bpe", "hashes", "entries", "n2"]
    values = dict(zip(names, LINK.unpack_from(header, 20)))
    values.update(fields)
    LINK.pack_into(header, 20, *(values[name] for name in names))
    return bytes(header)


def test_a_forged_k_is_refused():
    """A header may set k (hashes) up to 2**32 - 1, with a bpe that agrees: each query then
    builds k positions.  bpe must be the one the error rate gives, and k follows from it."""
    f = RedisBloomFilter(0.01, 10)
    k = 2 ** 32 - 1
    header = forged_header(f, hashes=k, bpe=(k - 0.5) / LN2)
    data = [(1, header), *f.scandump()[1:]]
    with pytest.raises(ValueError, match="integrity check"):
        RedisBloomFilter.loadchunks(data)
    with pytest.raises(ValueError, match="integrity check"):
        RedisBloomFilter.from_bytes(header + f.to_bytes()[len(header):])


def test_a_forged_size_allocates_nothing_before_the_bits_arrive():
    """A 73-byte header announcing a gigabyte: refused before a gigabyte is allocated."""
    f = RedisBloomFilter(0.01, 10)
    entries = 2 ** 30
    nbytes = -(-int(entries * f.links[0].bpe) // 64) * 8
    header = forged_header(f, entries=entries, nbytes=nbytes, bits=8 * nbytes)
    tracemalloc.start()
    try:
        for read in (lambda: RedisBloomFilter.loadchunks([(1, header)]),
                     lambda: RedisBloomFilter.from_bytes(header)):
            tracemalloc.reset_peak()
            with pytest.raises(ValueError, match="truncated|exactly once"):
                read()
            assert tracemalloc.get_traced_memory()[1] < 1 << 20
    finally:
        tracemalloc.stop()


def test_a_sub_filter_the_machine_cannot_hold_is_refused_clearly(monkeypatch):
    from bloomedu.core import checks
    monkeypatch.setattr(checks, "available_memory", lambda: 1 << 30)
    with pytest.raises(ValueError, match="needs .* of bit storage; this machine has 1.00 GiB"):
        RedisBloomFilter(0.01, 2 ** 31)


@pytest.mark.parametrize("value", [Decimal("NaN"), Decimal("-Infinity"), Decimal("2")], ids=str)
def test_a_decimal_rate_out_of_range_is_a_value_error(value):
    with pytest.raises(ValueError, match="error_rate"):
        RedisBloomFilter(value, 10)


def test_a_chain_that_cannot_grow_is_full_and_refuses_whole():
    """With expansion 1 the error halves at each growth until no sub-filter can be sized (from
    1e-320, in 11 growths; from 0.5, in 1,073): then add refuses with RedisBloomError and
    changes nothing, and the filter still dumps and reads back (the module would keep an empty
    link holding every item)."""
    assert RedisBloomFilter(0.5, 1, expansion=1).max_inserts == 1073
    model = RedisBloomFilter(1e-320, 1, expansion=1)
    assert model.max_inserts == 11
    refused = 0
    for i in range(60):
        links, items, last = len(model.links), len(model), model.links[-1].data.copy()
        try:
            model.add(f"id-{i}")
        except RedisBloomError as error:
            assert "problem inserting into filter" in str(error)
            assert (len(model.links), len(model)) == (links, items)
            assert np.array_equal(model.links[-1].data, last)
            refused += 1
    assert refused and len(model) == model.max_inserts and len(model.links) == 11
    assert RedisBloomFilter.from_bytes(model.to_bytes()) == model
    with pytest.raises(RedisBloomError, match="problem inserting"):
        model.add_many([f"more-{i}" for i in range(50)])


def test_loadchunks_refuses_a_pair_that_is_not_bytes_before_allocating():
    """bytes(2**28) would be 268 MB of zeros: a pair's data must be bytes."""
    with pytest.raises(TypeError, match="data must be bytes"):
        RedisBloomFilter.loadchunks([(1, 2 ** 28)])
    header = RedisBloomFilter(0.01, 10).scandump()[0]
    with pytest.raises(TypeError, match="data must be bytes"):
        RedisBloomFilter.loadchunks([header, (81, 2 ** 28)])
