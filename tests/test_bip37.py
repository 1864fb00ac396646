"""Bitcoin's BIP37 filter, byte for byte as Bitcoin Core builds it (bloomedu.compat.bip37; lesson 13).

Expected values come from Bitcoin Core's unit tests (``tests/data/bip37.json``,
a copy of the project's shared vectors: every vector there is checked), from
BIP37's own text (the seed example), or are worked out by hand from Bitcoin
Core's sizing formula (each such case says how).  Statistical checks use fixed
seeds and bounds of 4 standard deviations.
"""

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bloomedu.compat.bip37 import (MAX_COMPACT_SIZE, Bip37Filter, bip37_filter_bytes,
                                   bip37_num_hash_funcs, bitcoinj_sizing, compact_size,
                                   read_compact_size)
from bloomedu.core.hashing import murmur3_32
from bloomedu.core.theory import false_positive_rate

ROOT = Path(__file__).resolve().parent.parent
BIP37 = json.loads((ROOT / "tests" / "data" / "bip37.json").read_text(encoding="utf-8"))
SERIALIZED = BIP37["serialized_filter_vectors"]


def _payload(size_hex: str, vdata: bytes, k: int, tweak: int = 0, flags: int = 0) -> bytes:
    """A filterload payload put together by hand, field by field."""
    return bytes.fromhex(size_hex) + vdata + k.to_bytes(4, "little") \
        + tweak.to_bytes(4, "little") + bytes([flags])


# --- Bitcoin Core's vectors ------------------------------------------------------------
@pytest.mark.parametrize("vector", BIP37["murmur3_32_vectors"],
                         ids=[f"{v['seed']}-{v['data_hex'] or 'empty'}" for v in BIP37["murmur3_32_vectors"]])
def test_murmur3_32_matches_bitcoin_core(vector):
    seed = int(vector["seed"], 16)
    assert murmur3_32(bytes.fromhex(vector["data_hex"]), seed) == int(vector["expected"], 16)


@pytest.mark.parametrize("vector", SERIALIZED, ids=[v["test"] for v in SERIALIZED])
def test_create_insert_serialize_matches_bitcoin_core(vector):
    f = Bip37Filter(vector["nElements"], vector["fpRate"], vector["nTweak"], vector["nFlags"])
    for item in vector["inserted_hex"]:
        f.insert(bytes.fromhex(item))
    assert all(f.contains(bytes.fromhex(item)) for item in vector["must_contain"])
    assert not any(f.contains(bytes.fromhex(item)) for item in vector["must_not_contain"])
    assert f.serialize().hex() == vector["expected_serialized_hex"]


@pytest.mark.parametrize("vector", SERIALIZED, ids=[v["test"] for v in SERIALIZED])
def test_deserialize_reads_bitcoin_cores_payload(vector):
    data = bytes.fromhex(vector["expected_serialized_hex"])
    f = Bip37Filter.deserialize(data)
    assert (f.tweak, f.flags) == (vector["nTweak"], vector["nFlags"])
    assert all(bytes.fromhex(item) in f for item in vector["must_contain"])
    assert not any(bytes.fromhex(item) in f for item in vector["must_not_contain"])
    assert f.serialize() == data and f.is_within_size_constraints()


@pytest.mark.parametrize("vector", [v for v in SERIALIZED if "after_clear_must_not_contain" in v],
                         ids=lambda v: v["test"])
def test_clear_forgets_everything_and_keeps_the_shape(vector):
    f = Bip37Filter(vector["nElements"], vector["fpRate"], vector["nTweak"], vector["nFlags"])
    for item in vector["inserted_hex"]:
        f.insert(bytes.fromhex(item))
    shape = (f.num_bits, f.n_hash_funcs, f.tweak, f.flags)
    f.clear()
    assert not any(f.contains(bytes.fromhex(item)) for item in vector["after_clear_must_not_contain"])
    assert (f.num_bits, f.n_hash_funcs, f.tweak, f.flags) == shape and f.data == bytes(len(f.data))


def test_seeds_follow_bip37s_example():
    # BIP37: 4 hash functions and nTweak = 5 give 4221880218 as the seed of hash 1.
    f = Bip37Filter.deserialize(_payload("01", b"\0", k=4, tweak=5))
    assert f.seeds()[1] == 4221880218
    assert f.seeds() == [(i * 0xFBA4C795 + 5) % 2 ** 32 for i in range(4)]


def test_bits_are_murmur3_modulo_m_lsb_first():
    f = Bip37Filter.deserialize(_payload("02", b"\0\0", k=3, tweak=7))
    f.insert(b"wallet")
    expected = [murmur3_32(b"wallet", (i * 0xFBA4C795 + 7) % 2 ** 32) % 16 for i in range(3)]
    assert f.bit_indices(b"wallet") == expected
    as_int = int.from_bytes(f.data, "little")   # byte 0 holds bits 0..7, bit 0 = 1
    assert as_int == sum(1 << b for b in set(expected))


# --- Bitcoin Core's sizing, worked out by hand ---------------------------------------------
@pytest.mark.parametrize("n, p, size, k", [
    (3, 0.01, 3, 5),           # 28.75 bits -> 28 -> 3 bytes; 24 // 3 = 8, 8 ln 2 = 5.5 -> 5
    (10, 0.01, 11, 5),         # 95.85 bits -> 11 bytes; 88 // 10 = 8 -> 5 (88 / 10 * ln 2 would give 6)
    (100_000, 0.0001, 36_000, 1),  # capped at 288,000 bits; 288000 // 100000 = 2 -> 1.39 -> 1
    (1, 1e-30, 17, 50),        # 143.8 bits -> 17 bytes; 136 ln 2 = 94.3, capped at 50
    (1, 0.5, 0, 0),            # 1.44 bits -> 1 -> 0 bytes: the empty filter
    (10, 0.5, 1, 0),           # 14.4 bits -> 1 byte; 8 // 10 = 0 hash functions
    (7, 1.0, 0, 0),            # ln 1 = 0: nothing to store
])
def test_sizing_is_bitcoin_cores_integer_arithmetic(n, p, size, k):
    assert bip37_filter_bytes(n_elements=n, fp_rate=p) == size
    f = Bip37Filter(n, p)
    assert (f.num_bits // 8, f.n_hash_funcs) == (size, k) == (len(f.data), bip37_num_hash_funcs(size, n))


def test_empty_filter_ignores_inserts_and_contains_everything():
    f = Bip37Filter(1, 0.5, tweak=9, flags=2)
    f.insert(b"anything")
    assert f.data == b"" and f.contains(b"anything") and f.contains(b"") and b"x" in f
    assert f.serialize() == _payload("00", b"", k=0, tweak=9, flags=2)
    assert Bip37Filter.deserialize(f.serialize()) == f


def test_zero_hash_functions_match_everything():
    f = Bip37Filter(10, 0.5)
    assert len(f.data) == 1 and f.n_hash_funcs == 0
    f.insert(b"a")
    assert f.data == b"\0" and f.contains(b"never inserted")


# --- a wallet's own sizing: bitcoinj's BloomFilter constructor --------------------------
@pytest.mark.parametrize("n, p, size, k", [
    (20, 0.5, 3, 1),           # 28.85 bits -> 28 -> 3 bytes; 24 / 20 ln 2 = 0.83 -> 0, kept at 1
    (20, 0.1, 11, 3),          # 95.85 bits -> 95 -> 11 bytes; 88 / 20 ln 2 = 3.05 -> 3 (Core: 2)
    (40, 0.1, 23, 3),          # 191.7 bits -> 191 -> 23 bytes; 184 / 40 ln 2 = 3.19 -> 3 (Core: 2)
    (100_000, 0.0001, 36_000, 1),  # capped at 288,000 bits; 2.88 ln 2 = 1.996 -> 1
    (1, 1e-30, 17, 50),        # 143.8 bits -> 17 bytes; 136 ln 2 = 94.3, capped at 50
    (1, 0.5, 1, 5),            # 1.44 bits -> 0 bytes, kept at 1; 8 / 1 ln 2 = 5.5 -> 5 (Core: empty)
    (7, 1.0, 1, 1),            # ln 1 = 0: still 1 byte and 1 hash function
])
def test_bitcoinj_sizing_never_gives_k_0(n, p, size, k):
    assert bitcoinj_sizing(n_elements=n, fp_rate=p) == (size, k)
    f = Bip37Filter.sized(size, k, tweak=3)
    assert (len(f.data), f.n_hash_funcs, f.tweak) == (size, k, 3) and f.is_within_size_constraints()
    f.insert(b"a")
    assert f.contains(b"a") and Bip37Filter.deserialize(f.serialize()) == f


def test_a_wallet_filter_at_the_same_size_as_cores_differs_only_in_k():
    core, wallet = Bip37Filter(20, 0.1, tweak=5), Bip37Filter.sized(11, 3, tweak=5)
    assert (core.num_bits, core.n_hash_funcs) == (wallet.num_bits, 2)
    assert wallet.bit_indices(b"x")[:2] == core.bit_indices(b"x")  # the same seeds, one more


def test_sized_names_bad_arguments():
    with pytest.raises(ValueError, match="n_hash_funcs must be in 0..1024"):
        Bip37Filter.sized(3, 2000)
    with pytest.raises(TypeError, match="filter_bytes must be an int"):
        Bip37Filter.sized(3.0, 1)
    with pytest.raises(ValueError, match="fp_rate"):
        bitcoinj_sizing(n_elements=20, fp_rate=0.0)


# --- the wire format --------------------------------------------------------------------
@pytest.mark.parametrize("value, encoded", [(0, "00"), (252, "fc"), (253, "fdfd00"), (36_000, "fda08c"),
                                            (65_535, "fdffff"), (65_536, "fe00000100"),
                                            (2 ** 32, "ff0000000001000000")])
def test_compact_size_encoding(value, encoded):
    assert compact_size(value).hex() == encoded


@settings(deadline=None)
@given(value=st.integers(0, MAX_COMPACT_SIZE), prefix=st.binary(max_size=3))
def test_compact_size_round_trip(value, prefix):
    data = prefix + compact_size(value) + b"rest"
    assert read_compact_size(data, len(prefix)) == (value, len(data) - 4)


@pytest.mark.parametrize("data, message", [
    ("", "no CompactSize"),
    ("fd03", "truncated inside"),
    ("fd0300" + "000000" + "00" * 9, "non-canonical"),        # 3 written in 3 bytes
    ("fe00010000" + "00" * 9, "non-canonical"),               # 256 written in 5 bytes
    ("ff0000000001000000", "too large"),
    ("03614e9b0500000000000000", "truncated"),                # the flags byte is missing
    ("03614e9b05000000000000000100", "trailing"),
    ("00", "truncated"),
])
def test_deserialize_is_strict(data, message):
    with pytest.raises(ValueError, match=message):
        Bip37Filter.deserialize(bytes.fromhex(data))


def test_oversize_filters_are_refused_unless_asked_for():
    too_big = _payload("fda18c", bytes(36_001), k=5)
    too_many = _payload("01", b"\xff", k=51)
    for data in (too_big, too_many):
        with pytest.raises(ValueError, match="exceeds BIP37's limits"):
            Bip37Filter.deserialize(data)
        f = Bip37Filter.deserialize(data, enforce_limits=False)
        assert not f.is_within_size_constraints() and f.serialize() == data
    at_limit = _payload("fda08c", bytes(36_000), k=50)
    assert Bip37Filter.deserialize(at_limit).is_within_size_constraints()


@settings(deadline=None)
@given(items=st.lists(st.binary(max_size=40), max_size=30), n=st.integers(1, 200),
       p=st.floats(1e-8, 1.0), tweak=st.integers(0, 2 ** 32 - 1), flags=st.integers(0, 255))
def test_no_false_negatives_and_payload_round_trip(items, n, p, tweak, flags):
    f = Bip37Filter(n, p, tweak, flags)
    for item in items:
        f.insert(item)
    assert all(f.contains(item) for item in items) and f.contains_many(items).all()
    copy = Bip37Filter.deserialize(f.serialize())
    assert copy == f and copy.data == f.data


# --- bad input ----------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, error, message", [
    ({"n_elements": 0}, ValueError, "n_elements must be in 1..4294967295"),
    ({"n_elements": -5}, ValueError, "n_elements must be in 1..4294967295"),
    ({"n_elements": 2 ** 32}, ValueError, "n_elements must be in 1..4294967295"),
    ({"n_elements": 2.0}, TypeError, "n_elements must be an int"),
    ({"n_elements": True}, TypeError, "n_elements must be an int"),
    ({"fp_rate": 0.0}, ValueError, r"fp_rate must be in \(0, 1\]"),
    ({"fp_rate": -0.1}, ValueError, r"fp_rate must be in \(0, 1\]"),
    ({"fp_rate": 1.01}, ValueError, r"fp_rate must be in \(0, 1\]"),
    ({"fp_rate": math.nan}, ValueError, r"fp_rate must be in \(0, 1\]"),
    ({"fp_rate": "0.1"}, TypeError, "fp_rate must be a float"),
    ({"tweak": -1}, ValueError, "tweak must be in 0..4294967295"),
    ({"tweak": 2 ** 32}, ValueError, "tweak must be in 0..4294967295"),
    ({"tweak": "5"}, TypeError, "tweak must be an int"),
    ({"flags": 256}, ValueError, "flags must be in 0..255"),
    ({"flags": -1}, ValueError, "flags must be in 0..255"),
    ({"n_elements": 2 ** 32 - 1, "fp_rate": 1e-10}, ValueError, "beyond the 2\\*\\*32 - 1"),
])
def test_bad_arguments_are_named(kwargs, error, message):
    arguments = {"n_elements": 10, "fp_rate": 0.01, "tweak": 0, "flags": 0, **kwargs}
    with pytest.raises(error, match=message):
        Bip37Filter(**arguments)


def test_bad_data_raises_and_leaves_the_filter_unchanged():
    f = Bip37Filter(10, 0.01)
    f.insert(b"kept")
    before = f.serialize()
    for call in (f.insert, f.contains):
        with pytest.raises(TypeError, match="data must be bytes"):
            call("a str")
    with pytest.raises(TypeError, match="data must be bytes"):
        Bip37Filter.deserialize(before.hex())
    assert f.serialize() == before


# --- statistics -----------------------------------------------------------------------
def test_measured_false_positive_rate_is_within_4_sigma_of_theory():
    rng = np.random.default_rng(37)
    f = Bip37Filter(1000, 0.01, tweak=12345)
    for _ in range(1000):
        f.insert(rng.bytes(20))
    trials = 20_000
    rate = f.contains_many(rng.bytes(20) for _ in range(trials)).mean()
    p = false_positive_rate(num_bits=f.num_bits, num_hashes=f.n_hash_funcs, n=1000)
    assert abs(rate - p) <= 4 * math.sqrt(p * (1 - p) / trials)


@settings(deadline=None)
@given(length=st.integers(0, 45), count=st.integers(0, 30), n=st.integers(1, 50),
       p=st.floats(1e-6, 0.3), tweak=st.integers(0, 2 ** 32 - 1), seed=st.integers(0, 2 ** 16))
def test_contains_many_equals_contains_one_by_one(length, count, n, p, tweak, seed):
    rng = np.random.default_rng(seed)
    f = Bip37Filter(n, p, tweak)
    for _ in range(n):
        f.insert(rng.bytes(length))
    same_length = [rng.bytes(length) for _ in range(count)]
    mixed = same_length + [rng.bytes(length + 1)]
    for items in (same_length, mixed):
        assert f.contains_many(items).tolist() == [f.contains(item) for item in items]
