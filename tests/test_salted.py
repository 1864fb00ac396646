"""Article 1, steps 3-5: the bit vector and the salted Bloom filter (lessons 03, 04, 05).

Expected results come from the article (three of its four messages kept), from
the npm package's outputs in ``tests/data/article_js.json``, or from an
independent recomputation (hash of key + salt, modulo 2**n).  Statistical checks
use fixed seeds and bounds of 4 standard deviations.
"""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from bloomedu import BitVector, SaltedBloomFilter, deduplicate, murmurhash2, n_bit_hash_function
from bloomedu.workloads.clicks import uuid4_strings
from bloomedu.core.hashing import murmur3_32

ROOT = Path(__file__).resolve().parent.parent
VECTORS = json.loads((ROOT / "tests" / "data" / "article_js.json").read_text(encoding="utf-8"))
MESSAGES = [{"id": "123"}, {"id": "456"}, {"id": "123"}, {"id": "789"}]
STAGES = [lambda: BitVector(8), lambda: SaltedBloomFilter(3, 8), lambda: BitVector(12),
          lambda: SaltedBloomFilter(5, 14)]


def _keys(count, seed):
    return uuid4_strings(count, np.random.default_rng(seed))


# --- the article's example ------------------------------------------------------------
@pytest.mark.parametrize("make", STAGES[:2], ids=["BitVector(8)", "SaltedBloomFilter(3, 8)"])
def test_articles_stages_keep_three_of_its_four_messages(make):
    kept = deduplicate(MESSAGES, make(), key=lambda m: m["id"])
    assert kept == [{"id": "123"}, {"id": "456"}, {"id": "789"}]


def test_bit_vector_index_of_123_is_the_npm_hash_modulo_256():
    # The article's example index, 47, is murmurhash.v2("123") % 256.
    assert BitVector(8).bit_indices("123") == [VECTORS["murmurhash_v2"]["123"] % 256] == [47]


def test_bit_vector_sets_exactly_the_hash_bit():
    vector = BitVector(8)
    vector.add("123")
    assert vector.bits.to_bools().nonzero()[0].tolist() == [47]


# --- bit positions ---------------------------------------------------------------------
@pytest.mark.parametrize("num_hashes, hash_bits", [(1, 8), (3, 8), (4, 12), (11, 20)])
def test_salted_bit_indices_are_hash_functions_zero_to_k_minus_one_in_order(num_hashes, hash_bits):
    bloom = SaltedBloomFilter(num_hashes, hash_bits)
    for key in ["123", "città", ""] + _keys(5, 0):
        expected = [n_bit_hash_function(hash_bits, str(i))(key) for i in range(num_hashes)]
        assert bloom.bit_indices(key) == expected
        assert expected == [murmurhash2((key + str(i)).encode("utf-8")) % 2**hash_bits
                            for i in range(num_hashes)]


def test_salted_filter_takes_another_hash_function():
    bloom = SaltedBloomFilter(2, 8, hash_function=murmur3_32)
    assert bloom.bit_indices("123") == [murmur3_32("1230") % 256, murmur3_32("1231") % 256]


def test_add_sets_exactly_the_keys_bits():
    bloom = SaltedBloomFilter(3, 10)
    bloom.add("123")
    assert bloom.bits.to_bools().nonzero()[0].tolist() == sorted(set(bloom.bit_indices("123")))


@pytest.mark.parametrize("hash_bits", range(1, 21))
def test_nbytes_is_two_to_the_n_bits_over_eight_at_least_one(hash_bits):
    for stage in (BitVector(hash_bits), SaltedBloomFilter(3, hash_bits)):
        assert stage.num_bits == 2**hash_bits
        assert stage.nbytes == max(1, 2**hash_bits // 8)


# --- the properties the article lists --------------------------------------------------
@pytest.mark.parametrize("make", STAGES, ids=["BitVector(8)", "Salted(3, 8)", "BitVector(12)", "Salted(5, 14)"])
def test_no_false_negatives(make):
    stage = make()
    keys = _keys(3000, 1)
    for key in keys:
        stage.add(key)
    assert all(key in stage for key in keys)


def _measured_rate(stage, num_inserted, num_queries, seed):
    keys = _keys(num_inserted + num_queries, seed)
    for key in keys[:num_inserted]:
        stage.add(key)
    assert not set(keys[:num_inserted]) & set(keys[num_inserted:])
    return sum(key in stage for key in keys[num_inserted:]) / num_queries


def _within_4_sd(measured, expected, queries):
    return abs(measured - expected) <= 4 * math.sqrt(expected * (1 - expected) / queries)


def test_bit_vector_false_positive_rate_matches_one_minus_one_minus_two_to_minus_n_to_the_n():
    # A key never inserted is reported present iff its one bit was set: 1 - (1 - 2**-n)^items.
    measured = _measured_rate(BitVector(12), 3000, 6000, seed=2)
    expected = 1 - (1 - 2**-12) ** 3000
    assert _within_4_sd(measured, expected, 6000)


def test_salted_filter_false_positive_rate_matches_the_bloom_formula():
    m, k, items = 2**14, 4, 2000
    measured = _measured_rate(SaltedBloomFilter(k, 14), items, 6000, seed=3)
    expected = (1 - math.exp(-k * items / m)) ** k
    assert _within_4_sd(measured, expected, 6000)


def test_differently_salted_functions_agree_as_often_as_independent_ones():
    # Independent 8-bit hashes agree on a key with probability 1/256.
    first, second = n_bit_hash_function(8, "nejakaSul"), n_bit_hash_function(8, "nejakaJinaSul")
    keys = [str(i) for i in range(20_000)]
    agree = sum(first(key) == second(key) for key in keys) / len(keys)
    assert _within_4_sd(agree, 1 / 256, len(keys))


# --- bad input: a clear error, and the filter unchanged ---------------------------------
@pytest.mark.parametrize("num_hashes, error", [(0, ValueError), (-1, ValueError), (1025, ValueError),
                                               (10 ** 7, ValueError), (True, TypeError),
                                               (1.5, TypeError), ("3", TypeError), (None, TypeError)])
def test_num_hashes_must_be_an_int_up_to_1024(num_hashes, error):
    with pytest.raises(error, match=r"num_hashes must be an int in 1\.\.1024"):
        SaltedBloomFilter(num_hashes, 8)


@pytest.mark.parametrize("hash_bits, error", [(0, ValueError), (33, ValueError), (-8, ValueError),
                                              (True, TypeError), (8.0, TypeError), (None, TypeError)])
def test_hash_bits_must_be_in_1_to_32(hash_bits, error):
    for make in (lambda: SaltedBloomFilter(3, hash_bits), lambda: BitVector(hash_bits)):
        with pytest.raises(error, match=r"hash_bits must be an int in 1\.\.32"):
            make()


@pytest.mark.parametrize("make", STAGES[:2], ids=["BitVector(8)", "SaltedBloomFilter(3, 8)"])
@pytest.mark.parametrize("key", [123, b"123", None, 1.5])
def test_non_str_key_raises_and_leaves_the_bits_unchanged(make, key):
    stage = make()
    for message in MESSAGES:
        stage.add(message["id"])
    before = stage.bits.data.copy()
    with pytest.raises(TypeError, match="key must be str"):
        stage.add(key)
    with pytest.raises(TypeError, match="key must be str"):
        key in stage  # noqa: B015 - the membership test itself must raise
    assert np.array_equal(stage.bits.data, before) and before.any()


def test_numpy_integers_work_where_ints_do():
    # A size computed with numpy (np.int64) is a whole number like any int.
    from_numpy = SaltedBloomFilter(np.int64(3), np.int64(8))
    assert from_numpy.bit_indices("123") == SaltedBloomFilter(3, 8).bit_indices("123")
    assert type(from_numpy.num_hashes) is int and type(from_numpy.hash_bits) is int
    assert type(n_bit_hash_function(np.uint8(8), "nejakaSul")("123")) is int
