"""Numbers of every kind: numpy scalars, Fraction and Decimal give what their Python value gives.

Every public function of ``bloomedu.core.theory``, ``cli.size_report``, the constructors and
``from_capacity`` are called with Python ints and floats, then with each numpy integer type
(int8 to uint64) where an int goes, each numpy float type where a float goes, and Fraction and
Decimal where a real number goes.  The values fit in int8 and are exact in float32, so every
kind holds the same number and every result must be equal, not close.
"""

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from bloomedu import (AgePartitionedBloomFilter, CountingBloomFilter, RotatingBloomFilter,
                      ScalableBloomFilter, StableBloomFilter)
from bloomedu import BitArray, BitVector, BloomFilter, HashedIds, SaltedBloomFilter
from bloomedu.cli import size_report
from bloomedu.compat.bip37 import Bip37Filter
from bloomedu.compat.guava import GuavaBloomFilter
from bloomedu.core import theory

INTS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
FLOATS = [np.float32, np.float64]
REALS = FLOATS + [Fraction, lambda x: Decimal(repr(x))]


def whole(value):
    """Marks an argument that must be an integer (the others are real numbers)."""
    return ("int", value)


def real(value):
    return ("real", value)


# (function, arguments): each argument by name, an int-only or a real one; values fit int8,
# exact in float32
THEORY = [
    (theory.expected_collisions, dict(n=real(100), num_values=real(120))),
    (theory.collision_probability, dict(n=real(20), num_values=real(120))),
    (theory.bit_vector_false_positive_rate, dict(num_bits=real(120), n=real(10))),
    (theory.false_positive_rate, dict(num_bits=real(120), num_hashes=real(3), n=real(10))),
    (theory.optimal_num_hashes, dict(num_bits=real(120), n=real(10))),
    (theory.num_bits_for, dict(n=real(100), p=real(0.25))),
    (theory.hashes_for, dict(num_bits=real(120), n=real(10))),
    (theory.size_for, dict(n=real(100), p=real(0.25))),
    (theory.estimate_count, dict(num_bits=real(120), num_hashes=real(3), bits_set=real(50))),
    (theory.exact_false_positive_rate, dict(num_bits=real(120), num_hashes=real(3), n=real(10))),
    (theory.measured_rate_std, dict(num_bits=real(120), num_hashes=real(3), n=real(10),
                                    num_queries=real(100))),
    (theory.bits_per_item, dict(p=real(0.25))),
    (theory.lower_bound_bits_per_item, dict(p=real(0.03125))),
]


def _convert(arguments, kind):
    converted = []
    for role, value in arguments:
        if kind in INTS and role == "int" or kind in INTS and float(value).is_integer():
            converted.append(kind(int(value)))
        elif kind not in INTS and role == "real":
            converted.append(kind(value))
        else:
            converted.append(value)
    return converted


def test_every_public_function_of_theory_is_listed():
    assert {function.__name__ for function, _ in THEORY} == set(theory.__all__)


@pytest.mark.parametrize("function, arguments", THEORY, ids=[f.__name__ for f, _ in THEORY])
@pytest.mark.parametrize("kind", INTS + REALS, ids=lambda k: getattr(k, "__name__", "Decimal"))
def test_theory_gives_the_same_result_for_every_kind_of_number(function, arguments, kind):
    expected = function(**{name: value for name, (_, value) in arguments.items()})
    assert function(**dict(zip(arguments, _convert(arguments.values(), kind)))) == expected


def test_the_reported_failures_are_gone():
    assert theory.num_bits_for(n=np.uint64(1000), p=0.01) == theory.num_bits_for(n=1000, p=0.01) == 9586
    assert theory.optimal_num_hashes(num_bits=np.uint64(10_000), n=np.uint64(1000)) == 7
    assert theory.optimal_num_hashes(num_bits=np.int8(100), n=np.int8(10)) == 7
    assert theory.false_positive_rate(num_bits=np.int8(100), num_hashes=np.int8(7), n=np.int8(10)) == \
        theory.false_positive_rate(num_bits=100, num_hashes=7, n=10)
    assert type(theory.false_positive_rate(num_bits=np.float32(100), num_hashes=7, n=10)) is float


SIZES = [(dict(items=100, fpp=0.25), {"items": "int", "fpp": "real"}),
         (dict(items=100, fpp=0.25, hashes=3), {"items": "int", "fpp": "real", "hashes": "int"}),
         (dict(items=100, bits=120), {"items": "int", "bits": "int"}),
         (dict(items=100, bits=120, hashes=3), {"items": "int", "bits": "int", "hashes": "int"})]


@pytest.mark.parametrize("arguments, roles", SIZES)
@pytest.mark.parametrize("kind", INTS + REALS, ids=lambda k: getattr(k, "__name__", "Decimal"))
def test_size_report_gives_the_same_report(arguments, roles, kind):
    expected = size_report(**arguments)
    converted = {name: _convert([(roles[name], value)], kind)[0] if
                 (roles[name] == "int") == (kind in INTS) else value
                 for name, value in arguments.items()}
    report = size_report(**converted)
    assert report == expected and report.lines() == expected.lines()
    assert all(type(getattr(report, name)) is int for name in ("items", "num_bits", "num_hashes"))


@pytest.mark.parametrize("kind", INTS)
def test_constructors_take_every_integer_type(kind):
    cases = [(BloomFilter, (64, 3)), (SaltedBloomFilter, (3, 8)), (BitVector, (8,)),
             (BitArray, (100,)), (GuavaBloomFilter, (2, 3)), (Bip37Filter, (10, 0.25, 5, 1))]
    for make, arguments in cases:
        plain = make(*arguments)
        typed = make(*[kind(a) if isinstance(a, int) else a for a in arguments])
        for name in ("num_bits", "num_hashes", "hash_bits", "num_hash_functions", "n_hash_funcs",
                     "tweak", "flags"):
            if hasattr(plain, name):
                assert getattr(typed, name) == getattr(plain, name)
                assert type(getattr(typed, name)) is int, (make, name)
        if hasattr(plain, "add"):
            for stage in (plain, typed):
                stage.add(b"x" if make is Bip37Filter else "x")
        assert stored_bits(typed) == stored_bits(plain)


def stored_bits(stage):
    bits = getattr(stage, "bits", None) or getattr(stage, "_bits", None) or stage
    return bits.data.tobytes() if hasattr(bits, "data") else bits


@pytest.mark.parametrize("fpp", [0.25, np.float32(0.25), np.float64(0.25), Fraction(1, 4),
                                 Decimal("0.25")], ids=repr)
@pytest.mark.parametrize("items", [100] + [kind(100) for kind in INTS], ids=repr)
def test_from_capacity_and_create_take_every_kind(items, fpp):
    assert BloomFilter.from_capacity(items, fpp) == BloomFilter.from_capacity(100, 0.25)
    assert GuavaBloomFilter.create(items, fpp) == GuavaBloomFilter.create(100, 0.25)
    assert Bip37Filter(items, fpp) == Bip37Filter(100, 0.25)


@pytest.mark.parametrize("bad", [True, np.bool_(True), "3", None, 3 + 0j])
def test_bools_strings_and_complex_numbers_are_not_numbers(bad):
    for call in (lambda: BloomFilter(64, bad), lambda: theory.false_positive_rate(num_bits=100, num_hashes=bad, n=10),
                 lambda: theory.num_bits_for(n=100, p=bad), lambda: size_report(bits=64, items=bad)):
        with pytest.raises(TypeError):
            call()


def test_huge_and_odd_reals_are_refused_clearly():
    for value, message in [(10 ** 400, "num_bits must be a positive number"),
                           (Decimal("NaN"), "num_bits must be a positive number"),
                           (Fraction(-1, 3), "num_bits must be a positive number")]:
        with pytest.raises(ValueError, match=message):
            theory.false_positive_rate(num_bits=value, num_hashes=3, n=10)
    with pytest.raises(ValueError, match="needs more bits than a float can count"):
        theory.num_bits_for(n=1e308, p=0.01)
    assert HashedIds().hash_function("x") == HashedIds().hash_function("x")


VARIANTS = [  # (class, arguments): ints as ints, rates as floats
    (CountingBloomFilter, (64, 3)), (CountingBloomFilter, (64, 3, 8)),
    (StableBloomFilter, (64, 3, 2, 1, 7)), (AgePartitionedBloomFilter, (3, 2, 10)),
    (RotatingBloomFilter, (20, 0.25, 3)), (ScalableBloomFilter, (20, 0.25, 2, 0.5)),
]


@pytest.mark.parametrize("cls, arguments", VARIANTS, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("kind", INTS + REALS, ids=lambda k: getattr(k, "__name__", "Decimal"))
def test_variants_take_every_kind_of_number(cls, arguments, kind):
    """numpy integers wherever an int goes, any real kind wherever a rate goes: the same filter."""
    as_kind = [kind(a) if (isinstance(a, int)) == (kind in INTS) else a for a in arguments]
    plain, typed = cls(*arguments), cls(*as_kind)
    plain.add_many(["x", "", 7])
    typed.add_many(["x", "", 7])
    assert typed.to_bytes() == plain.to_bytes() and repr(typed) == repr(plain)


@pytest.mark.parametrize("cls, arguments", VARIANTS, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("bad", [True, "3", None, 3 + 0j])
def test_variants_refuse_bools_strings_and_complex_numbers_with_a_type_error(cls, arguments, bad):
    for i in range(len(arguments)):
        with pytest.raises(TypeError):
            cls(*arguments[:i], bad, *arguments[i + 1:])


# --- every public function, found by walking the package ------------------------------------------
# Functions that draw, open widgets or start servers are left to their own tests.
_NOT_HERE = ("bloomedu.services.redis_", "bloomedu.teaching.explorer", "bloomedu.teaching.toy",
             "bloomedu.teaching.plots", "bloomedu.teaching.lab",
             "bloomedu.teaching.engines")  # quiet_spark starts Spark: tests/test_engines_lesson.py
ODD_NUMBERS = [0, -1, -0.0, math.nan, math.inf, -math.inf, Decimal("NaN"), Decimal("sNaN"),
               Decimal("-Infinity"), 10 ** 400, 1e308, np.int8(-1), np.uint64(2 ** 63),
               Fraction(0), Fraction(-1, 3), True, "3", None, 3 + 0j]


def numeric_functions():
    """(name, function, arguments, parameter) for every public function of the package with an
    int or float parameter, the others at their defaults (or 10 and 0.5 where there is none)."""
    import inspect

    from conformance_support import package_modules
    found, seen = [], set()
    for module in package_modules():
        if module.__name__.startswith(_NOT_HERE):
            continue
        for name in getattr(module, "__all__", ()):
            function = getattr(module, name)
            if not inspect.isfunction(function) or function in seen:
                continue
            seen.add(function)
            parameters = [p for p in inspect.signature(function).parameters.values()
                          if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
            numeric = [p for p in parameters if isinstance(p.annotation, str) and "str" not in
                       p.annotation and ("int" in p.annotation or "float" in p.annotation)]
            if not numeric or any(p.default is p.empty and p not in numeric for p in parameters):
                continue
            arguments = {p.name: p.default if p.default is not p.empty else
                         10 if "int" in p.annotation else 0.5 for p in parameters}
            found += [(f"{function.__module__}.{name}", function, arguments, p.name)
                      for p in numeric]
    return found


NUMERIC = numeric_functions()


def test_the_walk_finds_the_helpers_that_once_raised_the_wrong_error():
    names = {name.rpartition(".")[2] for name, *_ in NUMERIC}
    assert {"guava_num_bits", "guava_num_hashes", "bit_position", "covered", "wilson_interval",
            "windowed_click_stream", "split_block_false_positive_rate", "human_bytes"} <= names


@pytest.mark.parametrize("name, function, arguments, parameter", NUMERIC,
                         ids=[f"{name}-{parameter}" for name, _, _, parameter in NUMERIC])
def test_every_public_function_meets_odd_numbers_with_a_value_or_type_error(name, function,
                                                                            arguments, parameter):
    """NaN, infinities, Decimal NaN, numbers beyond a float, numpy scalars, bools: a result or a
    ValueError/TypeError, never ZeroDivisionError, decimal.InvalidOperation, OverflowError; and
    where the other arguments are fine, the error names the argument."""
    try:
        function(**arguments)
        clean = True  # the other arguments are fine: an error is about this one
    except (ValueError, TypeError):
        clean = False
    for odd in ODD_NUMBERS:
        try:
            function(**{**arguments, parameter: odd})
        except (ValueError, TypeError) as error:
            assert not clean or parameter in str(error), f"{parameter}={odd!r}: {error}"
