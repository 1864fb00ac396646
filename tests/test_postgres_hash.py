"""PostgreSQL's hashtext and hashint4 (lookup3) and the bloom index's generator, without a server.

The expected hashes and signatures were computed by a real PostgreSQL 15
(``tools/postgres_vectors.py`` wrote ``tests/data/postgres_vectors.json``); the generator is
checked against Park and Miller's published value (x_10000 = 1043618065 from x_0 = 1) and C's
arithmetic is checked as its definition.  ``tests/test_postgres_server.py`` compares with a
running server.
"""

import json
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from bloomedu.compat.postgres_hash import as_int4, hash_any, hash_uint32, hashint4, hashtext
from bloomedu.compat.postgres_random import BloomRandom, c_div, c_mod, int32

ROOT = Path(__file__).resolve().parent.parent
VECTORS = json.loads((ROOT / "tests" / "data" / "postgres_vectors.json").read_text(encoding="utf-8"))


def test_the_vectors_cover_every_tail_length_and_non_ascii():
    lengths = {len(v["text"].encode()) for v in VECTORS["hashtext"]}
    assert set(range(41)) <= lengths
    assert any(not v["text"].isascii() for v in VECTORS["hashtext"])
    assert {-2 ** 31, -1, 0, 2 ** 31 - 1} <= {v["int4"] for v in VECTORS["hashint4"]}


@pytest.mark.parametrize("vector", VECTORS["hashtext"], ids=lambda v: repr(v["text"]))
def test_hashtext_is_the_servers(vector):
    assert as_int4(hashtext(vector["text"])) == vector["hashtext"]
    assert hashtext(vector["text"]) == hash_any(vector["text"].encode("utf-8"))


@pytest.mark.parametrize("vector", VECTORS["hashint4"], ids=lambda v: str(v["int4"]))
def test_hashint4_is_the_servers(vector):
    assert as_int4(hashint4(vector["int4"])) == vector["hashint4"]


@given(st.integers(0, 2 ** 32 - 1))
def test_hash_uint32_is_hash_any_of_the_four_little_endian_bytes(k):
    assert hash_uint32(k) == hash_any(k.to_bytes(4, "little"))


@given(st.binary(max_size=64))
def test_hash_any_takes_bytes_bytearray_and_memoryview_alike(key):
    assert hash_any(key) == hash_any(bytearray(key)) == hash_any(memoryview(key))
    assert 0 <= hash_any(key) < 2 ** 32


@pytest.mark.parametrize("call, error, words", [
    (lambda: hash_any("text"), TypeError, "key must be bytes"),
    (lambda: hash_uint32(-1), ValueError, "k must be an int in 0..4294967295"),
    (lambda: hash_uint32(True), TypeError, "k must be an int"),
    (lambda: hashtext(b"bytes"), TypeError, "text must be a str"),
    (lambda: hashtext("a\0b"), ValueError, "NUL"),
    (lambda: hashtext("\ud800"), ValueError, "UTF-8"),
    (lambda: hashint4(2 ** 31), ValueError, "value must be an int4, in -2147483648..2147483647"),
    (lambda: hashint4(-2 ** 31 - 1), ValueError, "value must be an int4"),
    (lambda: hashint4(1.0), TypeError, "value must be an int"),
    (lambda: hashint4(False), TypeError, "value must be an int"),
    (lambda: as_int4(-1), ValueError, "hash_value must be an unsigned 32-bit int, in 0..4294967295"),
    (lambda: as_int4(1.0), TypeError, "hash_value must be an int"),
    (lambda: int32(1.5), TypeError, "value must be an int"),
    (lambda: c_div(1, 0), ValueError, "b must be a nonzero int"),
    (lambda: c_mod(1.0, 2), TypeError, "a must be an int"),
])
def test_bad_input_is_refused_naming_the_argument(call, error, words):
    with pytest.raises(error, match=words.replace("(", r"\(").replace(".", r"\.")):
        call()


def test_as_int4_reads_the_top_bit_as_the_sign():
    assert [as_int4(h) for h in (0, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1)] == [0, 2 ** 31 - 1, -2 ** 31, -1]


# --- C's int32 and its truncating division ----------------------------------------------------
@given(st.integers(-2 ** 40, 2 ** 40), st.integers(-2 ** 20, 2 ** 20).filter(bool))
def test_c_division_truncates_toward_zero(a, b):
    quotient, remainder = c_div(a, b), c_mod(a, b)
    assert a == b * quotient + remainder
    assert abs(remainder) < abs(b)
    assert remainder == 0 or (remainder < 0) == (a < 0)   # the sign of the dividend
    assert abs(quotient) == abs(a) // abs(b)


@given(st.integers(-2 ** 40, 2 ** 40))
def test_int32_keeps_the_low_32_bits_as_twos_complement(value):
    wrapped = int32(value)
    assert -2 ** 31 <= wrapped < 2 ** 31 and (wrapped - value) % 2 ** 32 == 0


# --- the generator ----------------------------------------------------------------------------
def test_the_generator_is_park_and_millers_minimal_standard():
    generator = BloomRandom()
    generator.srand(0)                     # next = 0 % 0x7ffffffe + 1 = 1, Park and Miller's x_0
    for _ in range(10_000):
        generator.rand()
    assert generator.next == 1_043_618_065  # their published x_10000


@given(st.integers(1, 2 ** 31 - 2))
def test_from_a_positive_state_it_is_16807_x_mod_2_31_minus_1(state):
    generator = BloomRandom()
    generator.next = state
    assert generator.rand() == state * 16807 % (2 ** 31 - 1) - 1
    assert 1 <= generator.next <= 2 ** 31 - 2


@given(st.integers(0, 2 ** 32 - 1))
@example(0x80000002)  # the one negative seed that lands on 1
def test_srand_keeps_the_seeds_sign_and_c_remainder(seed):
    generator = BloomRandom()
    generator.srand(seed)
    signed = seed - 2 ** 32 if seed >= 2 ** 31 else seed
    if signed >= 0:
        assert generator.next == signed % 0x7FFFFFFE + 1
    else:   # C's % keeps the sign: Python's would give a positive state here
        assert generator.next == -((-signed) % 0x7FFFFFFE) + 1
        # at most 0, but for -0x7FFFFFFE (seed 0x80000002), a multiple of 0x7FFFFFFE: 0 + 1
        assert generator.next <= 0 or seed == 0x80000002


def test_the_one_negative_seed_that_lands_on_a_positive_state():
    generator = BloomRandom()
    generator.srand(0x80000002)  # the int32 -0x7FFFFFFE: C's remainder is 0, with no sign to keep
    assert generator.next == 1 and generator.rand() == 16806


@given(st.integers(2 ** 31, 2 ** 32 - 1).filter(lambda s: s not in (0x80000001, 0x80000002, 0xFFFFFFFF)))
def test_from_a_negative_state_every_draw_stays_in_the_generators_range(seed):
    generator = BloomRandom()
    generator.srand(seed)
    state = generator.next
    assert state < 0
    first = generator.rand()
    # Schrage's steps on a negative state still give 16807 * state mod (2^31 - 1), in range
    assert first + 1 == 16807 * state % (2 ** 31 - 1) and 0 <= first <= 0x7FFFFFFD


@pytest.mark.parametrize("seed", [0x80000001, 0xFFFFFFFF])
def test_two_seeds_leave_the_generator_stuck_at_minus_one(seed):
    generator = BloomRandom()
    generator.srand(seed)
    assert generator.next == 0
    assert [generator.rand() for _ in range(4)] == [-1] * 4


@pytest.mark.parametrize("seed, error", [(-1, ValueError), (2 ** 32, ValueError), ("1", TypeError),
                                         (True, TypeError)])
def test_srand_refuses_what_is_not_a_uint32(seed, error):
    generator = BloomRandom()
    with pytest.raises(error, match="seed must be"):
        generator.srand(seed)
    assert generator.next == 1
