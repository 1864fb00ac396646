"""SparkBloomFilter's own promises, no Java needed: Spark's refusals, the keys it takes and the
ones it refuses (naming the argument, changing nothing), its bytes' header, merging.

(Bit for bit against Spark: tests/test_spark_vectors.py with recorded bytes, tests/test_spark.py
with a live Spark; the conformance suite covers every filter's common promises.)
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bloomedu.compat.spark import (V1_REACHABLE_BITS, SparkBloomFilter, dataframe_sizing,
                                   reachable_bits, spark_num_bits, spark_num_hashes)


def test_sizing_is_guavas_formula_with_sparks_words():
    f = SparkBloomFilter(1_000_000, 0.03)
    assert f.bit_size == 64 * -(-spark_num_bits(n=1_000_000, p=0.03) // 64) == 7_298_496
    assert f.num_hash_functions == spark_num_hashes(num_bits=7_298_440, n=1_000_000) == 5
    assert len(f.to_bytes()) == 16 + f.bit_size // 8


@pytest.mark.parametrize("arguments, message", [
    ((1, 0.9), "0 bits"),                                  # Spark: "Number of bits must be positive"
    ((2 ** 62, 0.01), r"more than 2\*\*31-1 words"),         # Spark: "Can't allocate enough space"
    ((10, 1e-320), "hash functions"),                      # k > 1024, bloomedu's limit
    ((0, 0.01), "expected_items"), ((10, 1.0), "fpp"), ((10, 0.0), "fpp"),
    ((10, 0.01, 3), "version"), ((10, 0.01, True), "version"),
])
def test_what_spark_cannot_create_is_refused_naming_why(arguments, message):
    with pytest.raises((ValueError, TypeError), match=message):
        SparkBloomFilter(*arguments)


def test_seeds_are_java_ints_and_version_1_has_none():
    assert SparkBloomFilter(10, 0.1, seed=-2 ** 31).seed == -2 ** 31
    for bad in (2 ** 31, -2 ** 31 - 1):
        with pytest.raises(ValueError, match="seed"):
            SparkBloomFilter(10, 0.1, seed=bad)
    with pytest.raises(ValueError, match="seed must be 0 in version 1"):
        SparkBloomFilter(10, 0.1, version=1, seed=5)
    with pytest.raises(ValueError, match="num_bits"):
        SparkBloomFilter.with_num_bits(10, 0)


def test_seeds_change_every_position_and_are_written():
    plain, seeded = SparkBloomFilter(100, 0.01), SparkBloomFilter(100, 0.01, seed=99)
    assert plain.bit_indices("key") != seeded.bit_indices("key")
    assert seeded.to_bytes()[8:12] == (99).to_bytes(4, "big")
    assert SparkBloomFilter.from_bytes(seeded.to_bytes()).seed == 99


def test_str_is_its_utf8_bytes_and_a_long_its_8_little_endian_bytes():
    # hashLong mixes the low then the high int and finishes with length 8: exactly
    # hashUnsafeBytes of the long's 8 little-endian bytes, so putLong(x) is putBinary of them
    f = SparkBloomFilter(100, 0.01)
    assert f.bit_indices("città") == f.bit_indices("città".encode())
    for value in (1, -1, 2 ** 63 - 1, -2 ** 63):
        assert f.bit_indices(value) == f.bit_indices(value.to_bytes(8, "little", signed=True))
    assert f.bit_indices(1) != f.bit_indices((1).to_bytes(4, "little"))
    assert f.bit_indices("a\ud800") == f.bit_indices("a?")  # Java's getBytes(UTF_8)
    assert f.bit_indices(np.int8(-3)) == f.bit_indices(-3) == f.bit_indices(np.int64(-3))


@pytest.mark.parametrize("item, error, message", [
    (True, TypeError, "not bool"), (1.0, TypeError, "not float"), (None, TypeError, "NoneType"),
    (2 ** 63, ValueError, "Java long"), (-2 ** 63 - 1, ValueError, "Java long"),
    (np.uint64(2 ** 63), ValueError, "Java long"),
])
def test_keys_spark_cannot_take_are_refused_naming_the_argument(item, error, message):
    f = SparkBloomFilter(100, 0.01)
    f.put("kept")
    before = f.to_bytes()
    for call, name in [(f.put, "item"), (f.might_contain, "item"),
                       (lambda x: f.put_many(["a", x]), "each item"),
                       (lambda x: f.might_contain_many([x]), "each item")]:
        with pytest.raises(error, match=message) as raised:
            call(item)
        assert name in str(raised.value)
    assert f.to_bytes() == before


def test_a_uint64_array_past_a_long_is_refused_before_any_bit_is_set():
    f = SparkBloomFilter(100, 0.01)
    with pytest.raises(ValueError, match="Java longs"):
        f.put_many(np.array([1, 2, 2 ** 63], dtype=np.uint64))
    assert f.cardinality() == 0
    f.put_many(np.array([1, 2, 2 ** 63 - 1], dtype=np.uint64))
    assert f.might_contain_many([1, 2, 2 ** 63 - 1]).all()


def test_put_answers_whether_a_bit_changed_as_spark_does():
    f = SparkBloomFilter(10, 0.1)
    assert [f.put(key) for key in ["a", "a", b"a", 5, 5]] == [True, False, False, True, False]


@pytest.mark.parametrize("data, message", [
    (b"", "truncated"), (bytes.fromhex("00000003"), "unknown Bloom filter version 3"),
    (bytes.fromhex("0000000200000003000000"), "truncated"),
    (bytes.fromhex("00000001000000000000000100000000000000000000"), "0 hash functions"),
    (bytes.fromhex("000000010000000300000000"), "0 words"),
    (bytes.fromhex("00000001000000030000000200000000000000000000"), "2 words"),
    (bytes.fromhex("0000000100000003000000010000000000000000000000"), "1 words"),
    ("text", "bytes"),
])
def test_bytes_spark_would_not_read_or_would_misread_are_refused(data, message):
    with pytest.raises((ValueError, TypeError), match=message):
        SparkBloomFilter.from_bytes(data)


def test_merge_and_intersect_need_the_same_version_size_k_and_seed():
    a, b = SparkBloomFilter(100, 0.01), SparkBloomFilter(100, 0.01)
    a.put("x")
    b.put("y")
    merged = a.copy().merge_in_place(b)
    assert "x" in merged and "y" in merged
    assert a.copy().intersect_in_place(b).cardinality() < a.cardinality()
    for other in (SparkBloomFilter(100, 0.01, version=1), SparkBloomFilter(100, 0.01, seed=1),
                  SparkBloomFilter(1000, 0.01)):
        with pytest.raises(ValueError, match="not compatible"):
            a.merge_in_place(other)
    with pytest.raises(TypeError, match="other must be a SparkBloomFilter"):
        a.merge_in_place("x")
    assert a.might_contain("x") and not a.might_contain("y")


def test_the_dataframe_caps_and_the_version_1_cap():
    assert dataframe_sizing(3_000_000, 0.01) == (3_000_000, spark_num_bits(n=3_000_000, p=0.01))
    assert dataframe_sizing(5_000_000, 0.001, max_num_items=10 ** 7) == (5_000_000, 67_108_864)
    assert V1_REACHABLE_BITS == 2 ** 31
    assert reachable_bits(2 ** 31 + 64, 1) == 2 ** 31 and reachable_bits(64, 1) == 64
    assert SparkBloomFilter(1000, 0.01, version=1).reachable_bits == 9600  # all, below 2**31


@pytest.mark.parametrize("version", [1, 2])
def test_the_rate_on_absent_keys_is_the_theorys_within_four_standard_deviations(version):
    from bloomedu.core.theory import exact_false_positive_rate, measured_rate_std

    n, queries = 5_000, 100_000
    f = SparkBloomFilter(n, 0.01, version)
    f.put_many([f"click-{i:09d}" for i in range(n)])
    measured = f.might_contain_many([f"absent-{i:09d}" for i in range(queries)]).mean()
    sizes = dict(num_bits=f.bit_size, num_hashes=f.num_hash_functions, n=n)
    expected = exact_false_positive_rate(**sizes)
    assert abs(measured - expected) < 4 * measured_rate_std(**sizes, num_queries=queries)


KEYS = st.lists(st.one_of(st.text(), st.binary(), st.integers(-2 ** 63, 2 ** 63 - 1)), max_size=40)


@given(keys=KEYS, version=st.sampled_from([1, 2]), seed=st.integers(-2 ** 31, 2 ** 31 - 1),
       expected=st.integers(1, 300))
def test_put_many_sets_the_bits_of_put_one_by_one_in_every_version_and_seed(keys, version, seed,
                                                                              expected):
    seed = seed if version == 2 else 0
    one_by_one = SparkBloomFilter(expected, 0.05, version, seed=seed)
    for key in keys:
        one_by_one.put(key)
    in_bulk = SparkBloomFilter(expected, 0.05, version, seed=seed)
    in_bulk.put_many(keys)
    assert in_bulk.to_bytes() == one_by_one.to_bytes()
    assert in_bulk.might_contain_many(keys).all()
