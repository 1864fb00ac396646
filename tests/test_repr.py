"""A filter's ``repr``: its parameters (m, k, n, p in that order), then how full it is and how
many keys went in (:func:`bloomedu.core.contract.filter_repr`), for every filter class of the
package that writes a ``repr`` of its own, found by walking the package as the conformance
suite does (``conformance_support.discover``) and built from its entry in
``filter_registry.py``.  The handles to a filter on a Redis server are left to their own tests:
their state is on the server.
"""

from __future__ import annotations

import pickle
import re

import pytest

from bloomedu import BloomFilter, CuckooFilter, XorFilter
from bloomedu.core.contract import Filter, filter_repr
from conformance_support import class_id, declared, discover, make, static

KEYS = [f"https://example.org/{i}" for i in range(200)]
SHAPE = re.compile(r"(?P<name>\w+)\((?P<parameters>\w+=[^()]*), "
                   r"fill=(?P<fill>[01]\.\d\d|\d\.\de-\d\d), added(?P<how>[=~])(?P<added>\d+|inf)\)")


def own_repr(cls: type) -> bool:
    """True if a class between ``cls`` and the base writes ``__repr__``."""
    return any("__repr__" in vars(klass) for klass in cls.__mro__
               if klass is not object and klass is not Filter)


CLASSES = [cls for cls in discover() if declared(cls) is not None and not declared(cls).needs
           and own_repr(cls)]
PARAMS = [pytest.param(cls, id=class_id(cls)) for cls in CLASSES]


def parts(f) -> dict:
    text = repr(f)
    match = SHAPE.fullmatch(text)
    assert match, f"{text!r} is not Name(parameters, fill=0.00, added=N or added~N)"
    assert match["name"] == type(f).__name__
    return match.groupdict()


def filled(cls):
    """An instance with room for 400 keys after the 200 keys of ``KEYS`` went in."""
    keys = [key.encode() for key in KEYS] if "str" not in declared(cls).kinds else KEYS
    f = make(cls, {}, capacity=400, keys=keys)
    if not static(cls):
        f.add_many(keys)
    return f


def test_the_classes_are_found():
    names = {cls.__name__ for cls in CLASSES}
    assert {"BloomFilter", "BlockedBloomFilter", "CountingBloomFilter", "CuckooFilter",
            "ScalableBloomFilter", "XorFilter", "GuavaBloomFilter", "Bip37Filter",
            "RedisBloomFilter", "RedisCuckooFilter"} <= names, names


@pytest.mark.parametrize("cls", PARAMS)
def test_a_repr_shows_the_fill_and_the_keys_that_went_in(cls):
    f = filled(cls)
    shown = parts(f)
    assert 0 < float(shown["fill"]) < 1
    added = float(shown["added"])
    if shown["how"] == "=":  # counted: every key, or (a class that forgets) the ones it keeps
        assert 0 < added <= len(KEYS)
    else:  # estimated from the fill: 200 keys in a filter sized for 400 give close to 200
        assert abs(added - len(KEYS)) <= 0.1 * len(KEYS)
    assert len(repr(f)) <= 120, repr(f)


@pytest.mark.parametrize("cls", [cls for cls in PARAMS if not static(cls.values[0])])
def test_an_empty_filter_shows_no_fill_and_no_key(cls):
    shown = parts(make(cls, {}, capacity=400))
    assert (shown["fill"], shown["added"]) == ("0.00", "0")


@pytest.mark.parametrize("cls", CLASSES, ids=class_id)
def test_a_copy_and_a_pickle_show_the_same(cls):
    f = filled(cls)
    assert repr(f.copy()) == repr(f) == repr(pickle.loads(pickle.dumps(f)))


def test_a_bloom_filter_estimates_from_its_bits():
    f = BloomFilter.from_capacity(1000, 0.01)
    f.add_many(range(600))
    f.add_many(range(600))  # repeats set no bit: the estimate does not count them
    assert repr(f) == (f"BloomFilter(num_bits={f.num_bits}, num_hashes={f.num_hashes}, "
                       f"fill={f.fill_ratio:.2f}, added~{round(f.approximate_count())})")
    assert abs(f.approximate_count() - 600) < 30


def test_a_full_bloom_filter_says_the_count_is_lost():
    f = BloomFilter(8, 2)
    f.add_many(range(100))
    assert repr(f) == "BloomFilter(num_bits=8, num_hashes=2, fill=1.00, added~inf)"


def test_counting_classes_count_exactly():
    cuckoo = CuckooFilter(capacity=1000)
    cuckoo.add_many(["a", "b", "a"])  # a cuckoo filter stores a key again each time
    assert parts(cuckoo)["how"] == "=" and parts(cuckoo)["added"] == "3"
    assert parts(XorFilter(range(1000)))["added"] == "1000"


def test_filter_repr_rounds_and_marks_estimates():
    f = BloomFilter(64, 3)
    assert filter_repr(f, "a=1", fill=0.125, added=7) == "BloomFilter(a=1, fill=0.12, added=7)"
    assert filter_repr(f, "a=1", fill=0.001, added=7) == "BloomFilter(a=1, fill=1.0e-03, added=7)"
    assert filter_repr(f, "a=1", fill=0.5, added=6.5, estimated=True).endswith("added~6)")
