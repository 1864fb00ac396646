"""XorFilter (Graf and Lemire 2020), and the promises every static filter keeps (XorFilter and
BinaryFuseFilter alike): every key of the set found, whatever its kind and however often it
was given; the rate within 5 sigma of 2**-f with fixed seeds; 1.23 f bits a key plus a
constant; the same keys give the same bytes; bytes, pickles, threads, forged bytes and bad
numbers.  What is the binary fuse filter's own: tests/test_binary_fuse.py."""

from __future__ import annotations

import math
import pickle
import struct
import threading
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from bloomedu import BinaryFuseFilter, XorFilter
from bloomedu.core import checks
from bloomedu.core.checks import StorageTooLarge
from bloomedu.variants import peeling
from bloomedu.variants.xor import xor_slots_for

STATIC = [pytest.param(lambda keys, bits=8: XorFilter(keys, bits), id="xor"),
          pytest.param(lambda keys, bits=8: BinaryFuseFilter(keys, bits), id="fuse3"),
          pytest.param(lambda keys, bits=8: BinaryFuseFilter(keys, bits, 4), id="fuse4")]
CLASSES = [XorFilter, BinaryFuseFilter]


def random_keys(count: int, seed: int) -> np.ndarray:
    """``count`` distinct uint64 keys: a seeded start, times an odd constant."""
    start = np.random.default_rng(seed).integers(0, 2 ** 40)
    return np.arange(start, start + count, dtype=np.uint64) * np.uint64(0xD1B54A32D192ED03)


def every_kind():
    """Keys of every kind the library hashes, with repeats inside and across kinds."""
    ints = np.arange(-150, 150)
    batches = [ints.astype(dtype) for dtype in ("<i8", ">i8", "<i4", ">i2")]
    batches += [np.arange(200, dtype=np.uint8), np.arange(300, dtype=">u8") + np.uint64(2 ** 63),
                np.array([f"s{i:03d}" for i in range(300)]), np.array([b"b%03d" % i for i in range(300)]),
                np.array(["città", b"\x00x", 7, 2 ** 64 - 1, -1, ""], dtype=object)]
    singles = ["", b"", "città", b"\x00", bytearray(b"ba"), memoryview(b"mv"), 0, -1, 2 ** 64 - 1,
               np.uint64(5), np.int8(-3), "😀"]
    everything = [key for batch in batches for key in batch.tolist()] + singles
    return batches, singles, everything


@pytest.mark.parametrize("make", STATIC)
@pytest.mark.parametrize("bits", [8, 16])
def test_every_key_of_every_kind_is_found(make, bits):
    batches, singles, everything = every_kind()
    f = make(everything, bits)
    for batch in batches:
        assert f.contains_many(batch).all()
    assert all(key in f and f.contains(key) for key in singles)
    assert f.contains_many(singles).all()
    # -1 and 2**64-1 are one key, "" and b"" too, and every int array repeats the others
    assert len(f) == len({bytes(k) if isinstance(k, (bytearray, memoryview)) else
                          (int(k) % 2 ** 64 if isinstance(k, (int, np.integer)) else
                           k.encode() if isinstance(k, str) else k) for k in everything})


@pytest.mark.parametrize("make", STATIC)
def test_keys_given_many_times_are_one_key(make):
    keys = random_keys(3000, seed=1)
    f = make(np.concatenate([keys, keys, keys[:1000][::-1]]))
    g = make(keys[::-1])
    assert len(f) == 3000 and f.contains_many(keys).all()
    assert f.to_bytes() == g.to_bytes()  # the same set, in any order: the same filter


@pytest.mark.parametrize("make", STATIC)
@pytest.mark.parametrize("count", [0, 1, 2, 3, 5, 17, 100])
def test_tiny_sets_and_the_empty_set_build(make, count):
    keys = random_keys(count, seed=count)
    f = make(keys)
    assert len(f) == count and f.contains_many(keys).all()
    absent = random_keys(20_000, seed=99)
    assert np.count_nonzero(f.contains_many(absent)) < 20_000 * 2 ** -8 + 5 * math.sqrt(20_000 * 2 ** -8)


QUERIES = 400_000


@pytest.mark.parametrize("make", STATIC)
@pytest.mark.parametrize("bits", [8, 16])
def test_the_rate_is_2_to_the_minus_f_within_5_sigma(make, bits):
    keys = random_keys(20_000 + QUERIES, seed=bits)
    f = make(keys[:20_000], bits)
    found = np.count_nonzero(f.contains_many(keys[20_000:]))
    p = 2.0 ** -bits
    assert abs(found - QUERIES * p) < 5 * math.sqrt(QUERIES * p * (1 - p))


def test_a_xor_filter_spends_1_23_f_bits_a_key_plus_a_constant():
    for count in (0, 10, 1000, 10 ** 6, 10 ** 9):
        assert count * 1.23 + 32 <= xor_slots_for(count) <= count * 1.23 + 35
    for bits in (8, 16):
        f = XorFilter(random_keys(5000, seed=3), bits)
        assert f.nbytes * 8 == xor_slots_for(5000) * bits
        assert f.nbytes * 8 <= 1.23 * bits * 5000 + 35 * bits


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickles_and_bytes_keep_the_answers(cls, protocol):
    keys = random_keys(2000, seed=4)
    f = cls(keys, 16)
    probes = random_keys(5000, seed=5)
    for copy in (pickle.loads(pickle.dumps(f, protocol=protocol)), cls.from_bytes(f.to_bytes()), f.copy()):
        assert type(copy) is cls and copy == f and copy._lock is not f._lock
        assert copy.contains_many(probes).tolist() == f.contains_many(probes).tolist()
        assert copy.contains_many(keys).all() and len(copy) == 2000


def test_bytes_are_little_endian():
    f = XorFilter([1, 2, 3], 16)
    assert f.to_bytes()[24:] == f.table.astype("<u2").tobytes()


def header(magic=b"BLMX", version=1, seed=0, keys=10, bits=8, arity=3):
    return struct.pack("<4sHQQBB", magic, version, seed, keys, bits, arity)


@pytest.mark.parametrize("data, message", [
    (header() + bytes(xor_slots_for(10) - 1), "truncated"),
    (header() + bytes(xor_slots_for(10) + 1), "padded"),
    (header(keys=2 ** 30) + bytes(45), "truncated"),  # 1.3 GB asked, refused by its length
    (header(bits=12), "corrupt"), (header(arity=4), "corrupt"), (header(seed=64), "corrupt"),
    (header(keys=2 ** 31), "corrupt"), (header(version=2), "version"), (header(magic=b"BLMF"), "magic"),
    (header()[:20], "truncated"),
], ids=lambda value: value if isinstance(value, str) else None)
def test_forged_bytes_are_refused_before_anything_is_allocated(data, message):
    with pytest.raises(ValueError, match=message):
        XorFilter.from_bytes(data)
    with pytest.raises(TypeError, match="data must be bytes"):
        XorFilter.from_bytes("BLMX")


@pytest.mark.parametrize("cls", CLASSES)
def test_threads_share_a_filter(cls):
    keys = random_keys(20_000, seed=6)
    f = cls(keys)
    expected = f.contains_many(random_keys(20_000, seed=7))
    answers = []
    threads = [threading.Thread(target=lambda: answers.append(
        (f.contains_many(keys).all(), f.contains_many(random_keys(20_000, seed=7))))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(answers) == 4 and all(ok and np.array_equal(got, expected) for ok, got in answers)


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("bad, error", [
    (float("nan"), TypeError), (float("inf"), TypeError), (8.0, TypeError), (True, TypeError),
    (Fraction(8), TypeError), (Decimal(8), TypeError), ("8", TypeError), (None, TypeError),
    (-8, ValueError), (12, ValueError), (2 ** 64, ValueError),
])
def test_bad_numbers_are_refused_naming_the_argument(cls, bad, error):
    with pytest.raises(error, match="fingerprint_bits"):
        cls([1, 2, 3], bad)
    if cls is BinaryFuseFilter:
        with pytest.raises(error, match="arity"):
            cls([1, 2, 3], 8, bad if bad != 12 else 5)


@pytest.mark.parametrize("cls", CLASSES)
def test_numpy_integers_are_numbers(cls):
    assert cls([1, 2], np.int64(16)).fingerprint_bits == 16


@pytest.mark.parametrize("cls", CLASSES)
def test_keys_that_cannot_be_hashed_as_add_hashes_them_are_refused(cls):
    for bad, error in [("one string", TypeError), (np.array([1.5]), TypeError),
                       (np.array([True]), TypeError), (np.array(["ab", "c"]), ValueError),
                       (np.array([b"ab", b"c"]), ValueError), ([1, None], TypeError), (7, TypeError)]:
        with pytest.raises(error):
            cls(bad)
    f = cls(["a"])
    for key in (1.5, None, 2 ** 64):
        with pytest.raises((TypeError, ValueError)):
            f.contains(key)


def test_memory_is_checked_before_the_filter_is_built(monkeypatch):
    monkeypatch.setattr(checks, "available_memory", lambda: 1 << 20)
    with pytest.raises(StorageTooLarge, match="keys \\(200000 distinct"):
        XorFilter(np.arange(200_000))


def test_peeling_leaves_no_key_and_assigns_each_slot_once():
    rng = np.random.default_rng(8)
    for _ in range(20):
        slots = np.stack([rng.choice(60, 3, replace=False) for _ in range(40)])
        rounds = peeling.peel(slots, 60)
        if rounds is None:
            continue
        keys = np.concatenate([k for k, _ in rounds])
        alone = np.concatenate([a for _, a in rounds])
        assert sorted(keys.tolist()) == list(range(40)) and np.unique(alone).size == 40
        fps = rng.integers(0, 256, 40).astype(np.uint8)
        assert peeling.matches(peeling.assign(rounds, slots, fps, 60, np.uint8), slots, fps).all()
