"""The general Bloom filter: per-key methods, sizing from (n, p), and bad input.

Bit positions are recomputed here from ``mmh3`` and the formula
``fmix64((h1 + i*h2) mod 2**64) mod m`` in plain Python (the finaliser written
out from MurmurHash3's reference code), not taken from the filter; a key whose
k values h1 + i*h2 repeat (the empty key: h2 = 0) steps by h2 | 1 instead.
The bulk path (``add_many``/``contains_many``) is checked in ``test_bulk.py``.
"""

import math

import mmh3
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bloomedu import BloomFilter
from bloomedu.core.theory import exact_false_positive_rate, optimal_num_hashes

keys_strategy = st.one_of(st.text(max_size=30), st.binary(max_size=30),
                          st.integers(-2 ** 63, 2 ** 64 - 1))


def positions_by_hand(key, m: int, k: int) -> list[int]:
    if isinstance(key, str):
        data = key.encode("utf-8")
    elif isinstance(key, int):
        data = (key % 2 ** 64).to_bytes(8, "little")
    else:
        data = bytes(key)
    h1, h2 = mmh3.hash64(data, 0, signed=False)
    if len({(h1 + i * h2) % 2 ** 64 for i in range(k)}) < k:  # the k values repeat: odd step
        h2 |= 1
    return [_fmix64((h1 + i * h2) % 2 ** 64) % m for i in range(k)]


def _fmix64(k: int) -> int:
    # MurmurHash3.cpp, fmix64: k ^= k >> 33; k *= 0xff51afd7ed558ccd; k ^= k >> 33;
    # k *= 0xc4ceb9fe1a85ec53; k ^= k >> 33 (64-bit arithmetic)
    k ^= k >> 33
    k = k * 0xFF51AFD7ED558CCD % 2 ** 64
    k ^= k >> 33
    k = k * 0xC4CEB9FE1A85EC53 % 2 ** 64
    return k ^ (k >> 33)


@settings(deadline=None)
@given(keys_strategy, st.integers(1, 10 ** 9), st.integers(1, 12))
def test_bit_indices_are_double_hashing_of_murmur3(key, m, k):
    assert BloomFilter(m, k).bit_indices(key) == positions_by_hand(key, m, k)


def test_add_sets_exactly_the_key_bits():
    f = BloomFilter(10_000, 7)
    for key in ("https://example.org/", b"\x00\xff", -5, 2 ** 64 - 1):
        f.add(key)
    expected = set()
    for key in ("https://example.org/", b"\x00\xff", -5, 2 ** 64 - 1):
        expected |= set(positions_by_hand(key, 10_000, 7))
    assert set(np.flatnonzero(f.bits.to_bools()).tolist()) == expected
    assert f.bits_set() == len(expected)


def test_int_keys_are_their_value_modulo_2_to_the_64():
    f = BloomFilter(1 << 16, 4)
    f.add(-1)
    assert 2 ** 64 - 1 in f and f.bit_indices(-1) == f.bit_indices(2 ** 64 - 1)
    assert f.bit_indices(np.int64(-7)) == f.bit_indices(-7)


@settings(deadline=None)
@given(st.lists(keys_strategy, max_size=60), st.integers(1, 4000), st.integers(1, 9))
def test_no_inserted_key_is_ever_reported_absent(keys, m, k):
    f = BloomFilter(m, k)
    for key in keys:
        f.add(key)
    assert all(key in f for key in keys)


@settings(deadline=None)
@given(st.integers(1, 10 ** 6), st.integers(1, 20))
def test_storage_is_eight_bytes_per_64_bits(m, k):
    f = BloomFilter(m, k)
    assert f.nbytes == 8 * math.ceil(m / 64) == f.bits.data.nbytes


def test_false_positive_rate_is_near_the_classic_formula():
    m, k, n, queries = 20_000, 5, 2_000, 50_000
    f = BloomFilter(m, k)
    for key in range(n):
        f.add(f"in-{key}")
    hits = sum(f"out-{key}" in f for key in range(queries))
    p = (1 - math.exp(-k * n / m)) ** k
    sigma = math.sqrt(queries * p * (1 - p))
    assert abs(hits - queries * p) < 5 * sigma + 0.02 * queries * p  # formula is approximate


# --- the empty key is a key like any other ------------------------------------------------
@pytest.mark.parametrize("k", [2, 3, 7, 10, 16])
def test_the_empty_key_has_k_spread_positions(k):
    f = BloomFilter(1_000_003, k)
    h1, h2 = mmh3.hash64(b"", 0, signed=False)
    assert (h1, h2) == (0, 0)  # MurmurHash3 of no bytes: every h1 + i*h2 would be 0
    step = h2 | 1  # the k values repeat: the step is made odd
    values = [(h1 + i * step) % 2 ** 64 for i in range(k)]
    assert len(set(values)) == k
    assert f.bit_indices("") == f.bit_indices(b"") == [_fmix64(v) % f.num_bits for v in values]
    assert len(set(f.bit_indices(""))) == k
    f.add("")
    assert f.bits_set() == k and "" in f and b"" in f


def test_the_empty_key_is_a_false_positive_at_the_design_rate_only():
    runs, n, p = 3000, 100, 0.001
    rng = np.random.default_rng(20240612)
    hits = {"": 0, "an ordinary absent key": 0}
    for _ in range(runs):
        f = BloomFilter.from_capacity(n, p)
        f.add_many(rng.integers(0, 2 ** 64, n, dtype=np.uint64))
        hits[""] += "" in f
        hits["an ordinary absent key"] += "never-added" in f
    rate = exact_false_positive_rate(num_bits=f.num_bits, num_hashes=f.num_hashes, n=n)
    bound = runs * rate + 6 * math.sqrt(runs * rate * (1 - rate))
    assert rate < 2 * p and all(count <= bound for count in hits.values()), (hits, bound)


# --- sizing from (n, p), as in article 2 --------------------------------------------------
def test_from_capacity_one_million_urls_at_one_in_a_thousand():
    f = BloomFilter.from_capacity(1_000_000, 0.001)
    assert (f.num_bits, f.num_hashes, f.nbytes) == (14_377_588, 10, 1_797_200)


@pytest.mark.parametrize("n, p", [(1, 0.5), (1000, 0.01), (12345, 1e-6)])
def test_from_capacity_follows_the_formulas(n, p):
    f = BloomFilter.from_capacity(n, p)
    m = math.ceil(-n * math.log(p) / math.log(2) ** 2)
    assert f.num_bits == m and f.num_hashes == optimal_num_hashes(num_bits=m, n=n)  # the best whole k


# --- bad input: a clear error, and the filter unchanged -----------------------------------
@pytest.mark.parametrize("num_bits, error", [(0, ValueError), (-8, ValueError), (2 ** 63, ValueError),
                                             (1.5, TypeError), (True, TypeError), (None, TypeError),
                                             ("64", TypeError)])
def test_num_bits_must_be_an_int_below_2_to_the_63(num_bits, error):
    with pytest.raises(error, match=r"num_bits must be an int in 1\.\.2\*\*63-1"):
        BloomFilter(num_bits, 3)


@pytest.mark.parametrize("num_hashes, error", [(0, ValueError), (-1, ValueError), (1025, ValueError),
                                               (2.0, TypeError), (False, TypeError), (None, TypeError)])
def test_num_hashes_must_be_an_int_up_to_1024(num_hashes, error):
    with pytest.raises(error, match=r"num_hashes must be an int in 1\.\.1024"):
        BloomFilter(64, num_hashes)


@pytest.mark.parametrize("fpp, error", [(0, ValueError), (1, ValueError), (-0.1, ValueError),
                                        (1.5, ValueError), (float("nan"), ValueError),
                                        (True, TypeError), ("0.01", TypeError), (None, TypeError)])
def test_fpp_must_be_strictly_between_0_and_1(fpp, error):
    with pytest.raises(error, match="fpp must be a number strictly between 0 and 1"):
        BloomFilter.from_capacity(1000, fpp)


@pytest.mark.parametrize("expected_items, error", [(0, ValueError), (-5, ValueError),
                                                   (10.0, TypeError), (None, TypeError)])
def test_expected_items_must_be_a_positive_int(expected_items, error):
    with pytest.raises(error, match=r"expected_items must be an int in 1\.\.2\*\*63-1"):
        BloomFilter.from_capacity(expected_items, 0.01)


@pytest.mark.parametrize("key", [1.5, None, True, np.bool_(True), np.float64(2.0), [1], (1,),
                                 object()])
def test_wrong_key_types_raise_type_error_and_change_nothing(key):
    f = BloomFilter(1000, 4)
    f.add("kept")
    before = f.bits.copy()
    with pytest.raises(TypeError, match="key must be str, bytes or int"):
        f.add(key)
    with pytest.raises(TypeError, match="key must be str, bytes or int"):
        key in f  # noqa: B015
    assert f.bits == before


@pytest.mark.parametrize("key", [2 ** 64, -2 ** 63 - 1])
def test_ints_beyond_64_bits_raise_value_error(key):
    f = BloomFilter(1000, 4)
    with pytest.raises(ValueError, match=r"-2\*\*63 \.\. 2\*\*64-1"):
        f.add(key)
    assert f.bits_set() == 0


def test_repr_names_m_and_k():
    assert repr(BloomFilter(1024, 3)) == "BloomFilter(num_bits=1024, num_hashes=3, fill=0.00, added~0)"
