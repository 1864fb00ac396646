"""Guava 31.1's BloomFilter of strings, bit for bit (bloomedu.compat.guava; lesson 12).

Every expected value comes from real Guava: ``tests/data/guava_vectors.json`` was
recorded by running Guava 31.1 (its Java program is in the file), and its first
filter is the public vector of the project's shared notes.  Other checks are
properties (no false negatives, round trips, per-key path == bulk path) or
statistical bounds of 4 standard deviations with fixed seeds.
"""

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bloomedu.compat.guava import (MURMUR128_MITZ_32, GuavaBloomFilter, guava_num_bits, guava_num_hashes,
                                   java_round, java_utf8)

ROOT = Path(__file__).resolve().parent.parent
GUAVA = json.loads((ROOT / "tests" / "data" / "guava_vectors.json").read_text(encoding="utf-8"))


def _inserted(vector):
    if "inserted" in vector:
        return vector["inserted"]
    return [vector["inserted_pattern"].format(i=i) for i in range(vector["inserted_count"])]


def _probes(vector):
    return [f"{vector['probe_prefix']}{i}" for i in range(vector["probe_count"])]


def _check_against_guava(f, vector):
    """The state Guava recorded after the insertions: bits, estimates, probe answers."""
    assert f.bit_size == vector["bit_size"]
    assert f.num_hash_functions == vector["num_hash_functions"]
    assert f.to_bytes().hex() == vector["write_to_hex"]
    assert f.expected_fpp() == vector["expected_fpp"]
    if vector["approximate_element_count"] is None:       # Guava threw ArithmeticException
        with pytest.raises(OverflowError, match="every bit is set"):
            f.approximate_element_count()
    else:
        assert f.approximate_element_count() == vector["approximate_element_count"]
    probes = _probes(vector)
    assert [p for p in probes if f.might_contain(p)] == vector["probes_reported_present"]
    assert [p for p, yes in zip(probes, f.might_contain_many(probes)) if yes] \
        == vector["probes_reported_present"]


FILTERS = GUAVA["filters"]
FILTER_IDS = [f"n={v['expected_insertions']},fpp={v['fpp']}" for v in FILTERS]


# --- the recorded filters ----------------------------------------------------------
def test_first_recorded_filter_is_the_public_vector():
    vector = FILTERS[0]
    assert (vector["expected_insertions"], vector["fpp"]) == (10, 0.1)
    assert vector["write_to_hex"] == "0103000000010408010030410049"
    assert "d-8" in vector["probes_reported_present"]


@pytest.mark.parametrize("vector", FILTERS, ids=FILTER_IDS)
def test_put_one_by_one_matches_guava(vector):
    f = GuavaBloomFilter.create(vector["expected_insertions"], vector["fpp"])
    returned = [f.put(text) for text in _inserted(vector)]
    assert [i for i, changed in enumerate(returned) if not changed] \
        == vector["put_returned_false_at"]
    _check_against_guava(f, vector)


@pytest.mark.parametrize("vector", FILTERS, ids=FILTER_IDS)
def test_put_many_sets_the_same_bits_as_guava(vector):
    f = GuavaBloomFilter.create(vector["expected_insertions"], vector["fpp"])
    f.put_many(_inserted(vector))
    _check_against_guava(f, vector)


@pytest.mark.parametrize("vector", FILTERS, ids=FILTER_IDS)
def test_reading_guavas_bytes_gives_the_same_filter(vector):
    data = bytes.fromhex(vector["write_to_hex"])
    f = GuavaBloomFilter.from_bytes(data)
    _check_against_guava(f, vector)
    assert all(f.might_contain(text) for text in _inserted(vector))
    assert f.to_bytes() == data


def test_default_fpp_is_three_percent_as_in_guava():
    assert GuavaBloomFilter.create(1000) == GuavaBloomFilter.create(1000, 0.03)
    assert GuavaBloomFilter.create(1000) != GuavaBloomFilter.create(1000, 0.02)


@pytest.mark.parametrize("size", GUAVA["sizing"],
                         ids=[f"n={s['expected_insertions']},fpp={s['fpp']}" for s in GUAVA["sizing"]])
def test_sizing_matches_guava_including_what_it_refuses(size):
    n, fpp = size["expected_insertions"], size["fpp"]
    if "error" in size:   # Guava: "Could not create BloomFilter of <m> bits"
        m = int(size["error"].split()[-2])
        assert guava_num_bits(n=max(n, 1), p=fpp) == m
        with pytest.raises(ValueError, match=f"Guava cannot create a filter .*{fpp}"):
            GuavaBloomFilter.create(n, fpp)
    elif size["bit_size"] <= 1 << 25:
        f = GuavaBloomFilter.create(n, fpp)
        assert (f.bit_size, f.num_hash_functions) == (size["bit_size"], size["num_hash_functions"])
    else:   # too large to allocate in a unit test: check the arithmetic only
        m = guava_num_bits(n=max(n, 1), p=fpp)
        assert 64 * -(-m // 64) == size["bit_size"]


# --- the older strategy, MURMUR128_MITZ_32 -----------------------------------------------
def test_ordinal_zero_stream_behaves_as_in_guava():
    vector = GUAVA["mitz32_stream"]
    f = GuavaBloomFilter.from_bytes(bytes.fromhex(vector["read_from_hex"]))
    assert f.strategy == MURMUR128_MITZ_32
    returned = [f.put(text) for text in _inserted(vector)]
    assert [i for i, changed in enumerate(returned) if not changed] \
        == vector["put_returned_false_at"]
    _check_against_guava(f, vector)
    bulk = GuavaBloomFilter.from_bytes(bytes.fromhex(vector["read_from_hex"]))
    bulk.put_many(_inserted(vector))
    assert bulk == f


# --- reading streams ------------------------------------------------------------------
@pytest.mark.parametrize("stream", GUAVA["read_from"], ids=[s["hex"] or "empty" for s in GUAVA["read_from"]])
def test_from_bytes_accepts_what_guava_reads_and_nothing_else(stream):
    data = bytes.fromhex(stream["hex"])
    if stream["accepted"] and stream["bytes_left_unread"] == 0:
        assert GuavaBloomFilter.from_bytes(data).to_bytes() == data
    else:   # Guava throws, or (a stream) leaves bytes unread: one buffer must be one filter
        with pytest.raises(ValueError, match="truncated|trailing|strategy|invalid header"):
            GuavaBloomFilter.from_bytes(data)


def test_from_bytes_names_the_problem():
    good = bytes.fromhex(FILTERS[0]["write_to_hex"])
    with pytest.raises(ValueError, match="truncated"):
        GuavaBloomFilter.from_bytes(good[:-1])
    with pytest.raises(ValueError, match="trailing"):
        GuavaBloomFilter.from_bytes(good + b"\0")
    with pytest.raises(ValueError, match="unknown strategy ordinal 2"):
        GuavaBloomFilter.from_bytes(b"\x02" + good[1:])
    with pytest.raises(TypeError, match="data must be bytes"):
        GuavaBloomFilter.from_bytes(good.hex())


# --- Java's arithmetic ----------------------------------------------------------------
@pytest.mark.parametrize("x, expected", [(0.5, 1), (1.5, 2), (2.5, 3), (-0.5, 0), (-1.5, -1),
                                         (0.49999999999999994, 0), (3.2613, 3), (4.5, 5)])
def test_java_round_ties_go_up_and_is_exact(x, expected):
    assert java_round(x) == expected


def test_indices_are_taken_modulo_bit_size_not_m():
    # n = 10, fpp = 0.1: m = 47 bits but the words hold 64, and Guava uses all 64.
    f = GuavaBloomFilter.create(10, 0.1)
    assert guava_num_bits(n=10, p=0.1) == 47 and f.bit_size == 64
    positions = {i for k in range(300) for i in f.bit_indices(f"key-{k}")}
    assert max(positions) >= 47 and positions <= set(range(64))


def test_a_string_is_hashed_as_java_encodes_it():
    assert java_utf8("\ud83d\ude00") == java_utf8("😀") == "😀".encode("utf-8")
    assert java_utf8("a\ud800b") == b"a?b"
    f = GuavaBloomFilter.create(100, 0.01)
    f.put("\ud83d\ude00")   # a surrogate pair spelled as two code points
    assert f.might_contain("😀")


# --- bad input --------------------------------------------------------------------
@pytest.mark.parametrize("n, error", [(-1, ValueError), (2 ** 63, ValueError), (1.5, TypeError),
                                      (True, TypeError), ("10", TypeError), (None, TypeError)])
def test_create_rejects_bad_expected_insertions(n, error):
    with pytest.raises(error, match="expected_insertions must be an int in 0..2\\*\\*63-1"):
        GuavaBloomFilter.create(n, 0.01)


@pytest.mark.parametrize("fpp, error", [(0, ValueError), (0.0, ValueError), (1, ValueError),
                                        (1.0, ValueError), (-0.1, ValueError), (1.5, ValueError),
                                        (math.nan, ValueError), (True, TypeError), ("0.1", TypeError),
                                        (None, TypeError)])
def test_create_rejects_fpp_outside_zero_one(fpp, error):
    with pytest.raises(error, match="fpp must be a number strictly between 0 and 1"):
        GuavaBloomFilter.create(100, fpp)


def test_bad_keys_raise_and_leave_the_filter_unchanged():
    f = GuavaBloomFilter.create(100, 0.01)
    f.put("kept")
    before = f.to_bytes()
    for call in (f.put, f.might_contain):
        with pytest.raises(TypeError, match="text must be str"):
            call(b"bytes")
    with pytest.raises(TypeError, match="text must be str"):
        f.put_many(["fine", "also fine", 7])
    with pytest.raises(TypeError, match="keys must be an iterable of keys"):  # every filter's words
        f.put_many("not a list")
    assert f.to_bytes() == before


# --- properties -----------------------------------------------------------------------
TEXTS = st.lists(st.text(max_size=30), max_size=40)


@settings(deadline=None)
@given(texts=TEXTS, n=st.integers(0, 500), fpp=st.floats(1e-6, 0.5))
def test_no_false_negatives_and_bulk_equals_one_by_one(texts, n, fpp):
    one, bulk = GuavaBloomFilter.create(n, fpp), GuavaBloomFilter.create(n, fpp)
    for text in texts:
        one.put(text)
    bulk.put_many(texts)
    assert one == bulk
    assert all(one.might_contain(t) for t in texts)
    assert bulk.might_contain_many(texts).all()


@settings(deadline=None)
@given(texts=TEXTS, fpp=st.floats(1e-9, 0.3))
def test_bytes_round_trip(texts, fpp):
    f = GuavaBloomFilter.create(len(texts), fpp)   # fpp <= 0.3: at least 2 bits, never refused
    f.put_many(texts)
    copy = GuavaBloomFilter.from_bytes(f.to_bytes())
    assert copy == f and copy.to_bytes() == f.to_bytes()


def test_copy_is_independent():
    f = GuavaBloomFilter.create(50, 0.01)
    g = f.copy()
    g.put("only in the copy")
    assert not f.might_contain("only in the copy") and g != f


def test_measured_false_positive_rate_is_within_4_sigma_of_expected_fpp():
    rng = np.random.default_rng(8)
    f = GuavaBloomFilter.create(20_000, 0.01)
    f.put_many([f"in-{v}" for v in rng.integers(0, 2 ** 62, size=20_000)])
    trials = 100_000
    rate = f.might_contain_many([f"out-{i}" for i in range(trials)]).mean()
    p = f.expected_fpp()
    assert abs(rate - p) <= 4 * math.sqrt(p * (1 - p) / trials)
    assert abs(p - 0.01) < 0.002   # sized for 1%, filled with what it was sized for


def test_an_array_whose_element_ends_in_nul_is_refused_and_changes_nothing():
    f = GuavaBloomFilter.create(100, 0.01)
    f.put("kept")
    before = f.to_bytes()
    for method in (f.put_many, f.might_contain_many, f.add_many, f.contains_many):
        with pytest.raises(ValueError, match="ends in NUL"):
            method(np.array(["ab", "c"]))
    assert f.to_bytes() == before
    f.put_many(np.array(["ab", "cd"]))  # full-width elements are their own strings
    assert f.might_contain("ab") and f.might_contain("cd")


@pytest.mark.parametrize("n", [np.uint64(1000), np.int16(1000), np.uint32(1000)], ids=repr)
def test_the_sizing_helpers_take_numpy_integers_as_their_values(n):
    assert guava_num_bits(n=n, p=0.01) == guava_num_bits(n=1000, p=0.01) == 9585
    assert guava_num_hashes(num_bits=np.uint64(9585), n=n) == guava_num_hashes(num_bits=9585, n=1000) == 7


@pytest.mark.parametrize("call", [lambda: guava_num_bits(n=-1, p=0.01), lambda: guava_num_bits(n=10, p=0),
                                  lambda: guava_num_hashes(num_bits=10, n=0),
                                  lambda: guava_num_bits(n=10, p=math.nan)],
                         ids=["negative n", "p = 0", "n = 0", "NaN"])
def test_the_sizing_helpers_refuse_what_guava_refuses(call):
    with pytest.raises(ValueError, match=r"\b(n|p) must be"):
        call()
