"""Article 1's hashes pinned to the npm package, and the general filter's key encoding and hash.

Known outputs come from ``tests/data/article_js.json`` (the npm ``murmurhash``
package run under Node), never from the code under test.  Lessons 02-05 use
these functions; lesson 04 prints the article's 42 and 174.  Integer arrays hash
by value whatever their byte order; the step h2 of double hashing is made odd
exactly when its k values would repeat (checked against the definition itself).
"""

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import mmh3
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from bloomedu.core.filter import bit_indices, bit_position
from bloomedu.core.hashing import (hash128, js_utf8, key_to_bytes, murmur3_32, murmurhash2,
                                   n_bit_hash_function, spread_step)
from bloomedu.kernels.murmur import murmur3_128_uint64, spread_steps

ROOT = Path(__file__).resolve().parent.parent
VECTORS = json.loads((ROOT / "tests" / "data" / "article_js.json").read_text(encoding="utf-8"))


# --- murmurhash2 = npm murmurhash.v2 --------------------------------------------------
@pytest.mark.parametrize("text, expected", sorted(VECTORS["murmurhash_v2"].items()))
def test_murmurhash2_matches_npm_package(text, expected):
    assert murmurhash2(text) == expected


@pytest.mark.parametrize("text", sorted(VECTORS["murmurhash_v2"]))
def test_murmurhash2_of_str_equals_of_its_utf8_bytes(text):
    assert murmurhash2(text) == murmurhash2(text.encode("utf-8")) == murmurhash2(bytearray(text, "utf-8"))


@given(st.text(max_size=40))
def test_murmurhash2_hashes_the_utf8_bytes_of_any_text(text):
    value = murmurhash2(text)
    assert value == murmurhash2(text.encode("utf-8"))
    assert 0 <= value < 2**32


def test_murmurhash2_non_ascii_is_utf8_not_latin1():
    # 'città' is 6 UTF-8 bytes but 5 Latin-1 bytes: the npm package hashes UTF-8.
    assert murmurhash2("città") == murmurhash2(b"citt\xc3\xa0")
    assert murmurhash2("città") != murmurhash2("città".encode("latin-1"))


@pytest.mark.parametrize("text, node_bytes", [
    # What Node's Buffer.from(text) (the npm package's encoding) gives: a lone surrogate
    # is U+FFFD (EF BF BD), and two halves of a pair are the one character they encode.
    ("\ud800", b"\xef\xbf\xbd"),
    ("a\udc00b", b"a\xef\xbf\xbdb"),
    ("\udc00\ud800", b"\xef\xbf\xbd\xef\xbf\xbd"),
    ("\ud83d\ude00", "\U0001F600".encode("utf-8")),
])
def test_murmurhash2_encodes_surrogates_as_javascript_does(text, node_bytes):
    assert js_utf8(text) == node_bytes
    assert murmurhash2(text) == murmurhash2(node_bytes)


def test_salted_hash_of_a_split_surrogate_pair_is_the_pairs_hash():
    # text + salt can join two halves of a pair, as JavaScript's string + does.
    assert n_bit_hash_function(16, "\ude00")("\ud83d") == murmurhash2("\U0001F600") % 2**16


def test_murmurhash2_seed_changes_the_hash_and_is_checked():
    assert murmurhash2("123", seed=1) != murmurhash2("123")
    for bad in (-1, 2**32, 1.0, True):
        with pytest.raises(ValueError, match="seed"):
            murmurhash2("123", seed=bad)
    with pytest.raises(TypeError, match="data must be str or bytes"):
        murmurhash2(123)


def test_murmur3_32_is_mmh3_of_the_utf8_bytes():
    assert murmur3_32("città") == mmh3.hash("città".encode("utf-8"), 0, signed=False)
    assert murmur3_32(b"123", seed=7) == mmh3.hash(b"123", 7, signed=False)


# --- the article's n-bit salted functions ---------------------------------------------
@pytest.mark.parametrize("case", VECTORS["n_bit_hash_function"], ids=lambda c: c["salt"])
def test_n_bit_hash_function_prints_the_articles_numbers(case):
    assert n_bit_hash_function(case["n"], case["salt"])(case["text"]) == case["value"]


@pytest.mark.parametrize("n", [1, 8, 17, 32])
def test_n_bit_hash_function_is_the_salted_hash_modulo_2_to_the_n(n):
    for text in VECTORS["murmurhash_v2"]:
        assert n_bit_hash_function(n, "")(text) == VECTORS["murmurhash_v2"][text] % 2**n
    assert n_bit_hash_function(8, "nejakaSul")("123") == VECTORS["murmurhash_v2"]["123nejakaSul"] % 256


def test_n_bit_hash_function_takes_another_hash():
    seeded = n_bit_hash_function(8, "x", hash_function=lambda text: mmh3.hash(text, 5, signed=False))
    assert seeded("123") == mmh3.hash("123x", 5, signed=False) % 256


@pytest.mark.parametrize("n", [0, 33, -1, True, 8.0, "8"])
def test_n_bit_hash_function_rejects_n_outside_1_to_32(n):
    with pytest.raises(ValueError, match=r"n \(hash bits\) must be an int in 1\.\.32"):
        n_bit_hash_function(n, "salt")


@pytest.mark.parametrize("salt", [1, b"salt", None])
def test_n_bit_hash_function_rejects_a_non_str_salt(salt):
    with pytest.raises(TypeError, match="salt must be str"):
        n_bit_hash_function(8, salt)


@pytest.mark.parametrize("text", [123, b"123", None])
def test_n_bit_hash_rejects_a_non_str_text(text):
    with pytest.raises(TypeError, match="text must be str"):
        n_bit_hash_function(8, "salt")(text)


# --- key encoding of the general filter -------------------------------------------------
@pytest.mark.parametrize("key, expected", [
    ("città", "città".encode("utf-8")),
    ("", b""),
    (b"\x00\xff", b"\x00\xff"),
    (bytearray(b"ab"), b"ab"),
    (memoryview(b"ab"), b"ab"),
    (0, struct.pack("<Q", 0)),
    (1, struct.pack("<Q", 1)),
    (2**64 - 1, struct.pack("<Q", 2**64 - 1)),
    (-1, struct.pack("<q", -1)),
    (-2**63, struct.pack("<q", -2**63)),
    (np.int64(-5), struct.pack("<q", -5)),
    (np.uint64(2**63), struct.pack("<Q", 2**63)),
])
def test_key_to_bytes(key, expected):
    encoded = key_to_bytes(key)
    assert type(encoded) is bytes and encoded == expected


def test_key_to_bytes_negative_int_is_the_same_key_as_its_uint64():
    assert key_to_bytes(-1) == key_to_bytes(2**64 - 1)


@pytest.mark.parametrize("key", [2**64, -2**63 - 1, 10**30])
def test_key_to_bytes_rejects_ints_outside_64_bits(key):
    with pytest.raises(ValueError, match=r"-2\*\*63 \.\. 2\*\*64-1"):
        key_to_bytes(key)


@pytest.mark.parametrize("key", [True, False, np.bool_(True), 1.0, 1.5, None, [1], ("a",)])
def test_key_to_bytes_rejects_other_types(key):
    with pytest.raises(TypeError, match="key must be str, bytes or int"):
        key_to_bytes(key)


@pytest.mark.parametrize("key", ["123", "città", b"\x00" * 17, 0, -1, 2**64 - 1])
def test_hash128_is_mmh3_hash64_of_the_key_bytes(key):
    assert hash128(key) == mmh3.hash64(key_to_bytes(key), 0, signed=False)


# --- the vectorised 128-bit hash agrees with the per-key one ----------------------------
@settings(deadline=None)
@given(hnp.arrays(np.uint64, st.integers(0, 40)))
def test_murmur3_128_uint64_equals_hash128_for_uint64(keys):
    h1, h2 = murmur3_128_uint64(keys)
    assert h1.dtype == h2.dtype == np.uint64
    assert [(int(a), int(b)) for a, b in zip(h1, h2)] == [hash128(int(key)) for key in keys]


@settings(deadline=None)
@given(hnp.arrays(np.int64, st.integers(0, 40)))
def test_murmur3_128_uint64_equals_hash128_for_int64(keys):
    h1, h2 = murmur3_128_uint64(keys)
    assert [(int(a), int(b)) for a, b in zip(h1, h2)] == [hash128(int(key)) for key in keys]


def test_murmur3_128_uint64_does_not_change_its_input():
    keys = np.array([1, 2, 3], dtype=np.uint64)
    murmur3_128_uint64(keys)
    assert keys.tolist() == [1, 2, 3]


def test_murmur3_128_uint64_rejects_non_integer_arrays():
    with pytest.raises(TypeError, match="integer array"):
        murmur3_128_uint64(np.array([1.0]))


INT_DTYPES = [np.dtype(f"{order}{kind}{size}") for kind in "ui" for size in (1, 2, 4, 8)
              for order in "<>"]


@settings(deadline=None)
@given(st.sampled_from(INT_DTYPES).flatmap(lambda dtype: hnp.arrays(dtype, st.integers(0, 30))),
       st.sampled_from([slice(None), slice(None, None, 2), slice(None, None, -3)]))
def test_murmur3_128_uint64_hashes_every_dtype_and_byte_order_by_value(keys, view):
    keys = keys[view]  # contiguous, strided, reversed
    h1, h2 = murmur3_128_uint64(keys)
    assert list(zip(h1.tolist(), h2.tolist())) == [hash128(int(key)) for key in keys]


def test_a_big_endian_key_is_its_value_not_its_bytes():
    network = np.frombuffer((7).to_bytes(8, "big") + (-2).to_bytes(8, "big", signed=True), ">i8")
    h1, h2 = murmur3_128_uint64(network)
    assert [(int(a), int(b)) for a, b in zip(h1, h2)] == [hash128(7), hash128(-2)]


# --- the step of double hashing: made odd exactly when the k values would repeat ----------
def repeats(h2: int, k: int) -> bool:
    """The definition: some two of h1 + i*h2 mod 2**64, i = 0..k-1, are equal (for any h1)."""
    return len({i * h2 % 2 ** 64 for i in range(k)}) < k


STEPS = sorted({0, 1, 2 ** 64 - 1, 12345} | {m * 2 ** j % 2 ** 64 for j in range(65)
                                             for m in (1, 3, 2 ** 40 + 1)})


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33, 64, 65, 1000])
def test_spread_step_changes_exactly_the_steps_whose_values_repeat(k):
    for h2 in STEPS:
        step = spread_step(h2, k)
        assert step == (h2 | 1 if repeats(h2, k) else h2), (h2, k)
        assert not repeats(step, k)
    array = np.array(STEPS, dtype=np.uint64)
    spread_steps(array, k)
    assert array.tolist() == [spread_step(h2, k) for h2 in STEPS]


def test_the_empty_key_hashes_to_zero_and_its_step_is_made_odd():
    assert hash128("") == hash128(b"") == (0, 0)
    for k in (2, 3, 10, 40):
        step = spread_step(0, k)
        values = {i * step % 2 ** 64 for i in range(k)}
        assert step == 1 and len(values) == k


# --- stable across processes: nothing depends on Python's salted hash() -------------------
_INDICES = """
from bloomedu import BloomFilter, SaltedBloomFilter
keys = ["123", "città", "", "5f82c2d9-cfeb-4fa3-a1d7-d982f8bd1045"]
general = BloomFilter(1000, 5)
salted = SaltedBloomFilter(4, 12)
result = {
    "general": [general.bit_indices(k) for k in keys + [42, -1, b"ab"]],
    "salted": [salted.bit_indices(k) for k in keys],
}
"""


def test_bit_indices_do_not_depend_on_pythonhashseed():
    here = {}
    exec(_INDICES, here)
    expected = json.loads(json.dumps(here["result"]))
    runs = []
    for seed in ("0", "1", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(ROOT))
        out = subprocess.run([sys.executable, "-c", _INDICES + "import json; print(json.dumps(result))"],
                             env=env, cwd=ROOT, capture_output=True, text=True, check=True).stdout
        runs.append(json.loads(out))
    assert len(runs) == 3 and all(run == expected for run in runs)


@pytest.mark.parametrize("arguments, name", [((10, 3, 1, 0), "num_bits"), ((-1, 3, 1, 8), "h1"),
                                             ((10, 2 ** 64, 1, 8), "h2"), ((10, 3, 1.5, 8), "i"),
                                             ((10, 3, 1, float("nan")), "num_bits")])
def test_the_position_helpers_name_a_bad_argument(arguments, name):
    """A bad argument (num_bits=0, say) is a ValueError or TypeError naming it, never a ZeroDivisionError."""
    with pytest.raises((ValueError, TypeError), match=name):
        bit_position(*arguments)
    h1, h2, k, m = arguments
    with pytest.raises((ValueError, TypeError), match=name.replace("i", "num_hashes") if name == "i" else name):
        bit_indices(h1, h2, num_bits=m, num_hashes=k)
