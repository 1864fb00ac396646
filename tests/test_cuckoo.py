"""CuckooFilter (Fan, Andersen, Kaminsky and Mitzenmacher 2014): no key lost, whatever its kind;
``add_many`` leaves exactly the table a loop of ``add`` leaves, evictions and duplicates
included; a full filter raises and is unchanged, byte for byte; what ``delete`` does to a key
never added; bytes, pickles, threads and the library's limits.  Rates and loads against the
paper: tests/test_cuckoo_rates.py."""

from __future__ import annotations

import pickle
import threading
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomedu import CuckooFilter
from bloomedu.core.checks import StorageTooLarge
from bloomedu.variants.cuckoo import CuckooFilterFull, num_buckets_for


def key_kinds():
    """Keys of every kind the library hashes, as batches and as single keys."""
    ranges = {"<i8": 10 ** 12, ">i8": 2 * 10 ** 12, "<u4": 3 * 10 ** 9, ">u2": 1000, "i1": -120, "u1": 150}
    batches = [(np.arange(100) + start).astype(dtype) for dtype, start in ranges.items()]  # distinct
    batches += [np.array([f"k{i:03d}" for i in range(300)]), np.array([b"b%03d" % i for i in range(300)]),
                np.array(["città", b"\x00x", 7, 2 ** 64 - 1, -2 ** 63], dtype=object)]
    singles = ["", b"", "città", b"\x00", bytearray(b"ba"), memoryview(b"mv"), 0, -2, 2 ** 64 - 3,
               np.uint64(5), np.int8(-3), "😀"]
    return batches, singles


@pytest.mark.parametrize("bucket_size", [1, 2, 4, 8])
def test_no_key_of_any_kind_is_ever_lost(bucket_size):
    f = CuckooFilter(4000, 10, bucket_size)
    batches, singles = key_kinds()
    for batch in batches:
        f.add_many(batch)
    for key in singles:
        f.add(key)
    for batch in batches:
        assert f.contains_many(batch).all()
        assert all(f.contains(key) for key in batch.tolist()[:20])
    assert all(key in f for key in singles)
    assert f.contains_many(singles).all()
    assert len(f) == sum(b.size for b in batches) + len(singles)


def test_an_int_is_its_value_whatever_the_dtype_and_byte_order():
    f = CuckooFilter(100)
    f.add_many(np.array([1, 2, 300], dtype=">u2"))
    assert 300 in f and f.contains_many(np.array([300], dtype=np.int64)).all()


def test_arrays_that_numpy_would_blur_are_refused_and_change_nothing():
    f = CuckooFilter(100)
    before = f.to_bytes()
    for bad in (np.array(["ab", "c"]), np.array([b"ab", b"c"]), np.array([1.5]), np.array([True]),
                "one string", ["ok", 1.5], [None]):
        with pytest.raises((TypeError, ValueError)):
            f.add_many(bad)
    with pytest.raises(ValueError, match="ends in NUL"):
        f.contains_many(np.array(["ab", "c"]))
    assert f.to_bytes() == before


def loop_and_batch(keys, capacity, bits, bucket_size):
    one, batch = CuckooFilter(capacity, bits, bucket_size), CuckooFilter(capacity, bits, bucket_size)
    added = 0
    for key in keys.tolist():
        try:
            one.add(key)
        except CuckooFilterFull:
            break
        added += 1
    batch.add_many(keys[:added])
    return one, batch, added


@pytest.mark.parametrize("bucket_size", [1, 2, 4, 8])
@pytest.mark.parametrize("bits", [4, 8, 12, 16, 32])
def test_add_many_leaves_the_table_a_loop_of_add_leaves_up_to_the_first_failure(bucket_size, bits):
    rng = np.random.default_rng(bucket_size * 100 + bits)
    keys = rng.integers(0, 2 ** 63, 1500, dtype=np.uint64)
    keys = np.concatenate([keys, keys[:40], keys[:3], keys[:3]])  # duplicates are stored again
    one, batch, added = loop_and_batch(keys, 800, bits, bucket_size)
    assert added < keys.size  # it got full: evictions all the way up
    assert np.array_equal(one.table, batch.table) and len(one) == len(batch) == added
    assert one.to_bytes() == batch.to_bytes()


@settings(deadline=None)
@given(keys=st.lists(st.integers(0, 60), max_size=120), capacity=st.integers(1, 40),
       bucket_size=st.sampled_from([1, 2, 4, 8]), bits=st.integers(2, 9))
def test_add_many_equals_the_loop_for_any_keys_with_many_repeats(keys, capacity, bucket_size, bits):
    one, batch, added = loop_and_batch(np.array(keys, dtype=np.int64), capacity, bits, bucket_size)
    assert np.array_equal(one.table, batch.table) and len(one) == len(batch)


def test_a_full_filter_raises_and_is_unchanged_byte_for_byte():
    f = CuckooFilter(200, 12, 4)
    keys = np.arange(10_000, dtype=np.uint64)
    added = 0
    with pytest.raises(CuckooFilterFull, match="the filter is full .* unchanged"):
        for key in keys.tolist():
            before = f.to_bytes()
            f.add(key)
            added += 1
    assert f.to_bytes() == before and len(f) == added
    assert f.load_factor > 0.85  # b = 4: full only near the paper's 95%
    assert f.contains_many(keys[:added]).all()


def test_add_many_is_all_or_nothing():
    f = CuckooFilter(200, 12, 4)
    f.add_many(np.arange(100, dtype=np.uint64))
    before = f.to_bytes()
    with pytest.raises(CuckooFilterFull, match=r"keys\[\d+\] does not fit.*nothing of this add_many"):
        f.add_many(np.arange(100, 10_000, dtype=np.uint64))
    assert f.to_bytes() == before and len(f) == 100
    with pytest.raises(TypeError):
        f.add_many([1, 2, 3.5])  # hashed first: the bad key stops the call before any change
    assert f.to_bytes() == before


def test_a_key_added_2b_plus_one_times_fills_its_two_buckets():
    f = CuckooFilter(1000, 12, 2)
    for _ in range(4):
        f.add("again")
    with pytest.raises(CuckooFilterFull):
        f.add("again")
    assert len(f) == 4
    for expected in (True, True, True, True, False):
        assert f.delete("again") is expected
    assert "again" not in f


def test_deleting_a_key_never_added_usually_changes_nothing():
    f = CuckooFilter(1000)
    f.add_many(range(500))
    before = f.to_bytes()
    missing = [key for key in range(1000, 3000) if key not in f]
    assert all(f.delete(key) is False for key in missing)
    assert f.to_bytes() == before


def test_deleting_a_false_positive_removes_the_key_it_was_mistaken_for():
    f = CuckooFilter(20, 4, 1)  # 4-bit fingerprints, one slot a bucket: false positives abound
    f.add("kept")
    twin = next(f"other-{i}" for i in range(100_000) if f"other-{i}" in f)
    assert f.delete(twin) is True  # never added, yet "deleted"
    assert "kept" not in f and len(f) == 0  # the key that was added is now a false negative


def test_the_second_bucket_is_its_own_inverse_for_any_number_of_buckets():
    for capacity in (1, 7, 100, 1001):
        f = CuckooFilter(capacity, 8, 2)
        for key in range(200):
            fingerprint, i1, i2 = f.buckets(key)
            assert f._other(fingerprint, i2) == i1 and 0 <= i2 < f.num_buckets


def test_sizing_follows_the_design_load():
    assert num_buckets_for(1_000_000, 4) == 277_778 and num_buckets_for(3, 8) == 1
    f = CuckooFilter(1_000_000, 16, 4)
    assert (f.num_slots, f.nbytes, f.num_bits) == (1_111_112, 2_222_224, 17_777_792)
    assert CuckooFilter(100, 20, 2).table.dtype == np.uint32
    assert CuckooFilter(100, 8, 2).table.dtype == np.uint8


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickles_and_bytes_keep_every_fingerprint(protocol):
    f = CuckooFilter(300, 20, 4)
    f.add_many(np.arange(250, dtype=np.uint64))
    for copy in (pickle.loads(pickle.dumps(f, protocol=protocol)), CuckooFilter.from_bytes(f.to_bytes()),
                 f.copy()):
        assert copy == f and copy._lock is not f._lock and len(copy) == 250
        assert copy.contains_many(np.arange(300)).tolist() == f.contains_many(np.arange(300)).tolist()
    copy.add("only in the copy")
    assert copy != f


def test_bytes_are_little_endian_whatever_the_machine():
    f = CuckooFilter(10, 16, 1)
    f.table[0, 0] = 0x0102
    assert f.to_bytes()[24:26] == b"\x02\x01"


def forged(capacity=100, buckets=None, bits=12, bucket_size=4, payload=None):
    import struct
    buckets = num_buckets_for(capacity, bucket_size) if buckets is None else buckets
    header = struct.pack("<4sHQQBB", b"BLMK", 1, capacity, buckets, bits, bucket_size)
    if payload is None:
        payload = bytes(buckets * bucket_size * (1 if bits <= 8 else 2 if bits <= 16 else 4))
    return header + payload


@pytest.mark.parametrize("data, message", [
    (forged()[:-1], "truncated"), (forged() + b"\x00", "padded"),
    (forged(buckets=7, bucket_size=3, payload=b""), "corrupt CuckooFilter header"),
    (forged(bits=1, payload=b""), "corrupt"), (forged(bits=33, payload=b""), "corrupt"),
    (forged(capacity=0, buckets=1, payload=b""), "corrupt"), (forged(bits=1, buckets=1, payload=b""), "corrupt"),
    (forged(buckets=10 ** 15, payload=b""), "buckets, where capacity"),
    (forged(capacity=2 ** 50, payload=b""), "truncated"),  # 2 PiB asked: refused by its length
    (forged(bits=4, payload=b"\x10" + bytes(111)), "above 4 bits"),
    (b"BLMX" + forged()[4:], "magic"), (forged()[:10], "truncated"),
])
def test_forged_bytes_are_refused_before_anything_is_allocated(data, message):
    with pytest.raises(ValueError, match=message):
        CuckooFilter.from_bytes(data)


def test_from_bytes_refuses_what_is_not_bytes():
    with pytest.raises(TypeError, match="data must be bytes"):
        CuckooFilter.from_bytes("BLMK")


def test_threads_lose_no_key_and_no_count():
    f = CuckooFilter(40_000, 12, 4)
    parts = [np.arange(t * 8000, (t + 1) * 8000, dtype=np.uint64) for t in range(4)]
    threads = [threading.Thread(target=f.add_many, args=(part,)) for part in parts[:2]]
    threads += [threading.Thread(target=lambda part=part: [f.add(int(k)) for k in part])
                for part in parts[2:]]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(f) == 32_000 and all(f.contains_many(part).all() for part in parts)


@pytest.mark.parametrize("name, position", [("capacity", 0), ("fingerprint_bits", 1), ("bucket_size", 2)])
@pytest.mark.parametrize("bad, error", [
    (float("nan"), TypeError), (float("inf"), TypeError), (4.0, TypeError), (True, TypeError),
    (Fraction(4), TypeError), (Decimal(4), TypeError), ("4", TypeError), (None, TypeError),
    (-1, ValueError), (2 ** 64, ValueError), (0, ValueError),
])
def test_bad_numbers_are_refused_naming_the_argument(name, position, bad, error):
    args = [100, 12, 4]
    args[position] = bad
    with pytest.raises(error, match=name):
        CuckooFilter(*args)


def test_numpy_integers_work_and_the_ranges_are_said():
    f = CuckooFilter(np.int64(100), np.uint8(8), np.int16(2))
    assert (f.capacity, f.fingerprint_bits, f.bucket_size) == (100, 8, 2)
    with pytest.raises(ValueError, match="bucket_size must be one of 1, 2, 4, 8, got 3"):
        CuckooFilter(100, 12, 3)
    with pytest.raises(ValueError, match="fingerprint_bits must be an int in 2..32"):
        CuckooFilter(100, 33)


def test_memory_is_checked_before_the_table_is_allocated():
    with pytest.raises(StorageTooLarge, match="capacity=1000000000000000"):
        CuckooFilter(10 ** 15)


def test_bad_keys_are_refused_and_change_nothing():
    f = CuckooFilter(100)
    f.add("x")
    before = f.to_bytes()
    for key in (1.5, None, True, 2 ** 64, [1]):
        for call in (f.add, f.contains, f.delete, f.__contains__):
            with pytest.raises((TypeError, ValueError)):
                call(key)
    assert f.to_bytes() == before
