"""The keyed filter: a secret moves every bit, nothing inserted is ever lost, and crafted keys fail.

The attack is the one lesson 11 shows: with the public hash, an attacker who knows the keys
rebuilds the filter and keeps the candidates it wrongly claims; against the keyed filter those
crafted keys pass only at the ordinary rate.
"""

import math
import pickle
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomedu import BloomFilter
from bloomedu.core.keyed import KeyedBloomFilter
from bloomedu.core.theory import false_positive_rate, measured_rate_std

SECRET = bytes(range(16))
OTHER = bytes(range(1, 17))
keys_strategy = st.lists(st.one_of(st.text(), st.binary(), st.integers(-2**63, 2**64 - 1)),
                         max_size=60)


@settings(deadline=None)
@given(keys_strategy)
def test_an_added_key_is_never_reported_absent(keys):
    one, many = KeyedBloomFilter(512, 4, SECRET), KeyedBloomFilter(512, 4, SECRET)
    for key in keys:
        one.add(key)
    many.add_many(keys)
    assert one == many
    assert all(key in one for key in keys)
    assert many.contains_many(keys).all()


def test_an_integer_array_is_tagged_as_its_ints_are():
    f = KeyedBloomFilter(1 << 12, 3, SECRET)
    values = np.array([0, 1, 2**63, 2**64 - 1], dtype=np.uint64)
    signed = np.array([-1, 5], dtype=np.int64)
    assert f.tags(values).tolist() == [f.tag(int(v)) for v in values]
    assert f.tags(signed).tolist() == [f.tag(2**64 - 1), f.tag(5)]
    f.add_many(values)
    assert all(int(v) in f for v in values)


def test_the_secret_decides_the_bits_and_the_default_filter_is_unchanged():
    keyed, other, plain = (KeyedBloomFilter(1024, 3, SECRET), KeyedBloomFilter(1024, 3, OTHER),
                           BloomFilter(1024, 3))
    assert plain.bit_indices("123") == [524, 190, 435]  # pinned: the public bits did not move
    differ = sum(keyed.bit_indices(f"k{i}") != other.bit_indices(f"k{i}") for i in range(200))
    public = sum(keyed.bit_indices(f"k{i}") != plain.bit_indices(f"k{i}") for i in range(200))
    assert differ == public == 200


def test_the_rate_on_keys_never_added_is_the_ordinary_one():
    m, k, n, q = 20_000, 5, 2000, 100_000
    f = KeyedBloomFilter(m, k, SECRET)
    f.add_many(np.arange(n, dtype=np.uint64))
    rate = float(f.contains_many(np.arange(n, n + q, dtype=np.uint64)).mean())
    shape = dict(num_bits=m, num_hashes=k, n=n)
    assert abs(rate - false_positive_rate(**shape)) < 4 * measured_rate_std(**shape, num_queries=q)


def test_keys_crafted_against_the_public_hash_fail_against_the_secret_one():
    m, k, n = 4096, 3, 600
    blacklist = [f"https://bad.example/{i}" for i in range(n)]
    public = BloomFilter(m, k)
    public.add_many(blacklist)
    candidates = [f"https://attacker.example/{i}" for i in range(60_000)]
    crafted = [url for url, hit in zip(candidates, public.contains_many(candidates)) if hit]
    expected = len(candidates) * false_positive_rate(num_bits=m, num_hashes=k, n=n)
    assert abs(len(crafted) - expected) < 5 * math.sqrt(expected) and len(crafted) > 1000
    keyed = KeyedBloomFilter(m, k, SECRET)
    keyed.add_many(blacklist)
    passed = int(keyed.contains_many(crafted).sum())
    p = false_positive_rate(num_bits=m, num_hashes=k, n=n)
    assert passed < len(crafted) * p + 5 * math.sqrt(len(crafted) * p)  # 100% before, ~p now


def test_bytes_pickle_and_copies_keep_the_secret_apart():
    f = KeyedBloomFilter(1000, 4, SECRET)
    f.add_many(["a", "b", 3])
    data = f.to_bytes()
    assert SECRET not in data
    assert KeyedBloomFilter.from_bytes(data, SECRET) == f
    with pytest.raises(ValueError, match="secret is not the one these bytes were written with"):
        KeyedBloomFilter.from_bytes(data, OTHER)  # it would find none of f's keys
    assert f.secret_fingerprint.hex() in data.hex() and len(data) == 24 + 16 + f.nbytes
    with pytest.raises(ValueError, match=r"hashing 3 is not this filter's \(2\), nor an older"):
        BloomFilter.from_bytes(data)
    with pytest.raises(ValueError, match=r"hashing 2 is not this filter's \(3\)$"):
        KeyedBloomFilter.from_bytes(BloomFilter(1000, 4).to_bytes(), SECRET)
    assert pickle.loads(pickle.dumps(f)) == f
    g = f.copy()
    g.add("c")
    assert "c" in g and "c" not in f and g._secret == SECRET
    assert "secret=..." in repr(f) and SECRET.hex() not in repr(f)


def test_filters_with_different_secrets_do_not_combine():
    a, b = KeyedBloomFilter(256, 2, SECRET), KeyedBloomFilter(256, 2, OTHER)
    a.add("x")
    b.add("y")
    with pytest.raises(ValueError, match="secret differs"):
        a | b
    with pytest.raises(ValueError, match="HASHING differs: 3 vs 2: the two place some keys"):
        a | BloomFilter(256, 2)
    same = KeyedBloomFilter(256, 2, SECRET)
    same.add("y")
    assert "x" in a | same and "y" in a | same and "y" in (a | same) & same


@pytest.mark.parametrize("secret, error, words", [
    ("a string", TypeError, "secret must be bytes"),
    (b"short", ValueError, "16 to 64 bytes long (BLAKE2b's key), got 5"),
    (bytes(65), ValueError, "16 to 64 bytes long (BLAKE2b's key), got 65"),
], ids=["str", "5 bytes", "65 bytes"])
def test_a_bad_secret_gets_a_clear_error(secret, error, words):
    with pytest.raises(error, match=re.escape(words)):
        KeyedBloomFilter(64, 2, secret)


def test_a_bad_key_leaves_the_filter_unchanged():
    f = KeyedBloomFilter(256, 3, SECRET)
    f.add_many(["a", "b"])
    before = f.copy()
    for bad in (["c", 3.5], "abc", np.array([True, False])):
        with pytest.raises(TypeError):
            f.add_many(bad)
    with pytest.raises(TypeError):
        f.add(2.5)
    assert f == before


# --- the keyed filter hashes its tags on every path -----------------------------------------------
def test_add_many_new_stores_tags_so_every_added_key_is_found():
    f = KeyedBloomFilter(1 << 12, 4, SECRET)
    assert f.add_many_new(["a", "b"]).tolist() == [True, True]
    assert "a" in f and "b" in f and f.contains_many(["a", "b"]).all()
    loop = KeyedBloomFilter(1 << 12, 4, SECRET)
    loop.add("a")
    loop.add("b")
    assert f == loop  # the same bits as add, key by key


@pytest.mark.parametrize("keys", [np.array([b"ab", b"c"]), np.array(["ab", "c"])], ids=["S", "U"])
def test_an_array_whose_element_ends_in_nul_is_refused_and_changes_nothing(keys):
    f = KeyedBloomFilter(1 << 12, 4, SECRET)
    f.add("kept")
    before = f.to_bytes()
    for method in (f.add_many, f.add_many_new, f.contains_many, f.tags):
        with pytest.raises(ValueError, match="ends in NUL"):
            method(keys)
    assert f.to_bytes() == before
