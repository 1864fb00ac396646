"""The promises tests/test_conformance.py checks, one function each, so that a test can run them
on any class: the suite on every class of the package, and
``test_a_broken_class_added_to_the_package_is_caught`` on one added to it for the test."""

from __future__ import annotations

import inspect
import itertools
import math
import pickle
import tracemalloc
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from conformance_support import (CAPACITY, accepted_keys, adds, ask_many, class_id, declared,
                                 forms, has, insert, kept, key_kinds, make, memory, paths,
                                 run_together, same_state, snapshot, static, unchanged)


# --- no false negative ---------------------------------------------------------------------------
def check_no_false_negative(cls, kind: str, path: str, services: dict) -> None:
    """Every key of ``kind``, in every form, put in by ``path``, is found (as long as the
    filter promises), by ``in`` with its Python value and by ``contains_many`` in its form."""
    for name, batch, keys in forms(kind, CAPACITY, seed=len(path)):
        if path == "built":
            f = make(cls, services, keys=batch)
        else:
            f = make(cls, services)
            insert(f, batch, path)
        promised = kept(f, keys)
        missed = [key for key in promised if not has(f, key)]
        assert not missed, f"{name} through {path}: {len(missed)} keys lost, e.g. {missed[:3]}"
        assert ask_many(f, promised).all(), f"{name} through {path}: contains_many lost keys"
        if hasattr(f, "contains_many") and not isinstance(batch, list):
            found = np.asarray(f.contains_many(batch))[len(keys) - len(promised):]
            assert found.all(), f"{name} through {path}: contains_many of the {name} lost keys"


def check_wrapped_bytes(cls, services: dict) -> None:
    """A ``bytearray`` or ``memoryview`` key is the key of its bytes, or a TypeError that changes
    nothing, on every path (sixteen keys each: a key routed by anything but its bytes, such
    as its repr, cannot land right by chance sixteen times)."""
    f = make(cls, services)
    for wrap in (bytearray, memoryview):
        for path in paths(f):
            keys = [f"wrapped-{wrap.__name__}-{path}-{i}".encode() for i in range(16)]
            before = snapshot(f, keys)
            try:
                insert(f, [wrap(key) for key in keys], path)
            except TypeError:
                assert unchanged(f, before, keys), f"a refused {wrap.__name__} changed the filter"
                continue
            lost = [key for key in keys if not has(f, key)]
            assert not lost, f"{wrap.__name__} keys through {path} are not the keys of their bytes"


# --- bad keys ------------------------------------------------------------------------------------
NOT_KEYS = [1.5, np.float64(2.0), True, np.bool_(False), None, 1 + 2j]
OF_KIND = {"str": "a str key", "bytes": b"a bytes key", "int": 12345}
NUL_ARRAYS = [np.array(["ab", "c"]), np.array([b"ab", b"c"]), np.array([["x", "yz"]])]
NOT_BATCHES = ["abc", b"abc", bytearray(b"ab"), memoryview(b"ab"), 5, np.int64(5),
               np.array([1.5, 2.5]), np.array([True, False]), np.array([1 + 2j])]


def refused(error, call, what: str, match: str = "") -> None:
    """``call()`` raises ``error`` (whose message holds ``match``), or the check fails naming
    ``what``."""
    try:
        call()
    except error as raised:
        assert match in str(raised), f"{what}: {raised}"
        return
    raise AssertionError(f"{what} was not refused with {error}")


def check_bad_keys_change_nothing(cls, services: dict) -> None:
    """A key of a type the class does not take is a TypeError, an array whose element ends in
    NUL a ValueError, and the filter is left exactly as it was, on every path."""
    f = make(cls, services)
    good = accepted_keys(f, 20, seed=1)
    if paths(f):
        insert(f, good, paths(f)[0])
    bad_keys = [] if "other" in key_kinds(cls) else list(NOT_KEYS)
    bad_keys += [key for kind, key in OF_KIND.items() if kind not in key_kinds(cls)]
    before = snapshot(f, good)
    for key in bad_keys:
        for name, attempt in [("add", lambda: f.add(key)), ("in", lambda: key in f),
                              ("add_many", lambda: f.add_many(good[:3] + [key])),
                              ("add_many_new", lambda: f.add_many_new(good[:3] + [key])),
                              ("contains_many", lambda: f.contains_many(good[:3] + [key]))]:
            if hasattr(f, "__contains__" if name == "in" else name):
                refused(TypeError, attempt, f"{name} of the key {key!r}")
                assert unchanged(f, before, good), f"{name}({key!r}) changed the filter"
    for name in ("add_many", "add_many_new", "contains_many"):
        if not hasattr(f, name):
            continue
        for batch in NOT_BATCHES:
            refused(TypeError, lambda: getattr(f, name)(batch), f"{name}({batch!r})")
            assert unchanged(f, before, good), f"{name}({batch!r}) changed the filter"
        for batch in NUL_ARRAYS:
            if ("str" if batch.dtype.kind == "U" else "bytes") in key_kinds(cls):
                refused(ValueError, lambda: getattr(f, name)(batch), f"{name}({batch!r})",
                        "ends in NUL")
                assert unchanged(f, before, good), f"{name}({batch!r}) changed the filter"
    surrogate = "lone \ud800 surrogate"
    if "str" in key_kinds(cls) and adds(f):  # refused everywhere or kept everywhere
        try:
            f.add(surrogate)
        except (TypeError, ValueError):
            assert unchanged(f, before, good)
            for name in ("add_many", "add_many_new", "contains_many"):
                if hasattr(f, name):
                    refused((TypeError, ValueError), lambda: getattr(f, name)([surrogate]),
                            f"{name} of a str add refused")
        else:
            assert has(f, surrogate) and ask_many(f, [surrogate]).all()


def check_static_bad_keys(cls, services: dict) -> None:
    """Bad keys refuse to build; built, the filter refuses ``add`` and ``add_many`` with a
    TypeError naming its class, and is left as it was."""
    for batch in [[OF_KIND["str"], 1.5], NUL_ARRAYS[0], "abc"]:
        with pytest.raises((TypeError, ValueError)):
            make(cls, services, keys=batch)
    good = [OF_KIND[kind] for kind in sorted(key_kinds(cls) - {"other"})]
    f = make(cls, services, keys=good)
    before = snapshot(f, good)
    for name, attempt in [("add", lambda: f.add(good[0])), ("add_many", lambda: f.add_many(good))]:
        refused(TypeError, attempt, f"{name} of the static {class_id(cls)}", cls.__name__)
        assert unchanged(f, before, good), f"a refused {name} changed the filter"


# --- what add and add_many_new answer -------------------------------------------------------------
def repeated(f, count: int) -> list:
    keys = accepted_keys(f, count, seed=5)
    return keys + keys[::3] + keys[:10]


def check_answers_are_a_loop_of_in_then_add(cls, services: dict) -> None:
    """``add`` returns None or whether the key was new; ``add_many``, if it returns answers, and
    ``add_many_new`` give exactly the loop's answers, and leave the loop's state."""
    loop = make(cls, services)
    keys = repeated(loop, CAPACITY // 2)
    answers = []
    for key in keys:
        new = key not in loop
        returned = loop.add(key)
        assert returned is None or bool(returned) == new, f"add({key!r}) returned {returned!r}"
        answers.append(new)
    for name in ("add_many", "add_many_new"):
        if not hasattr(loop, name):
            continue
        f = make(cls, services)
        returned = getattr(f, name)(keys)
        if returned is not None or name == "add_many_new":
            assert np.asarray(returned, dtype=bool).tolist() == answers, f"{name}'s answers"
        assert same_state(f, loop, keys), f"{name} left another state than add one by one"


# --- threads -------------------------------------------------------------------------------------
THREADS, PER_THREAD = 4, 60  # 180 inserts after a thread's last key: inside every memory


def check_threads(cls, services: dict, path: str) -> None:
    """Four threads put four parts in at once: one key at a time (``add``), or one batch each
    (``add_many``).  The state is one thread's: for a filter whose state does not depend on
    the order, the state of every order; for one whose state does, batches leave the state of
    some order of the four batches, and every key whose add was promised is found."""
    f = make(cls, services, capacity=8 * CAPACITY)
    keys = accepted_keys(f, THREADS * PER_THREAD, seed=13)
    parts = [keys[t::THREADS] for t in range(THREADS)]

    def one_thread(order):
        alone = make(cls, services, capacity=8 * CAPACITY)
        for t in order:
            insert(alone, parts[t], path)
        return alone

    if path == "add":
        jobs = [lambda part=part: [f.add(key) for key in part] for part in parts]
    else:
        jobs = [lambda part=part: getattr(f, path)(part) for part in parts]
    run_together(jobs)
    forward = one_thread(range(THREADS))
    if same_state(forward, one_thread(reversed(range(THREADS))), keys):  # order does not matter
        assert same_state(f, forward, keys), "threads left another state than one thread"
    elif path != "add":
        assert any(same_state(f, one_thread(order), keys)
                   for order in itertools.permutations(range(THREADS))), \
            "the threads' batches interleaved: no order of them gives this state"
    promised = keys if memory(f) is None or memory(f) >= len(keys) else [p[-1] for p in parts]
    assert ask_many(f, promised).all(), "a key whose add returned was lost"


# --- bytes and pickles ---------------------------------------------------------------------------
def filled(cls, services: dict, count: int = 100, capacity: int = CAPACITY):
    """An instance holding ``count`` keys of the kinds it takes, and those keys."""
    probe = make(cls, services, capacity=capacity)
    keys = accepted_keys(probe, count, seed=21)
    if static(cls):
        return make(cls, services, capacity=capacity, keys=keys), keys
    insert(probe, keys, paths(probe)[-1] if "add_many" in paths(probe) else "add")
    return probe, keys


def has_bytes(cls) -> bool:
    return callable(getattr(cls, "to_bytes", None)) and callable(getattr(cls, "from_bytes", None))


def read_back(f, data):
    return type(f).from_bytes(data, **declared(type(f)).read_arguments)


def check_round_trips(cls, services: dict) -> None:
    """Bytes (as bytes, bytearray, memoryview), pickles at every protocol and ``copy``: an equal
    filter with the same answers, independent of the original."""
    f, keys = filled(cls, services)
    probes = keys + [f"absent-{i}" if "str" in key_kinds(cls) else f"absent-{i}".encode()
                     for i in range(50)]
    probes = [key for key in probes if "other" in key_kinds(cls) or
              ("str" if isinstance(key, str) else "bytes" if isinstance(key, bytes) else "int")
              in key_kinds(cls)]
    answers = ask_many(f, probes).tolist()
    twins = []
    if has_bytes(cls):
        data = f.to_bytes()
        twins += [("from_bytes", read_back(f, form)) for form in
                  (data, bytearray(data), memoryview(data))]
    if declared(cls).needs:  # a handle: the server holds the state, which no copy takes
        refused(TypeError, f.copy, f"copy of the handle {class_id(cls)}")
    else:
        twins += [(f"pickle {protocol}", pickle.loads(pickle.dumps(f, protocol=protocol)))
                  for protocol in range(pickle.HIGHEST_PROTOCOL + 1)]
        twins.append(("copy", f.copy()))
    assert twins or declared(cls).needs, f"{class_id(cls)} has neither bytes nor pickles"
    for how, twin in twins:
        assert type(twin) is type(f) and same_state(twin, f, probes), how
        assert ask_many(twin, probes).tolist() == answers, how
        assert twin._lock is not f._lock, f"{how} shares the lock"
    if not twins:  # a handle to a server's filter: its state is the server's
        return
    before = snapshot(f, probes)
    how, twin = twins[-1]
    if adds(twin):
        twin.add(probes[-1])
        assert unchanged(f, before, probes), f"writing to the {how} changed the original"


def forgeries(data: bytes):
    """Truncated, padded, mutated and forged versions of valid bytes: every byte of the first
    64 set to 0, 0x7F, 0x80 and 0xFF and flipped, every 2-, 4- and 8-byte field there (either
    byte order) set to its largest value and to sizes from 2**16 to 2**36."""
    cut = sorted({0, 1, 2, 4, 5, 6, 8, 16, 20, 24, 32, 48, 64, len(data) // 2, len(data) - 1})
    yield from (data[:n] for n in cut if n < len(data))
    yield from (data + b"\x00", data + b"\xff" * 64)
    head = min(64, len(data))
    for at in range(head):
        for value in (0, 0x7F, 0x80, 0xFF, data[at] ^ 1, data[at] ^ 0x40):
            yield data[:at] + bytes([value]) + data[at + 1:]
    for width in (2, 4, 8):
        for at in range(0, head - width + 1):
            for value in {2 ** (8 * width) - 1, 2 ** (8 * width - 1), 2 ** 16, 2 ** 24, 2 ** 30,
                          2 ** 33, 2 ** 36}:
                if value < 2 ** (8 * width):
                    for order in ("little", "big"):
                        yield data[:at] + value.to_bytes(width, order) + data[at + width:]


ALLOWANCE = 1 << 20  # bytes any read may allocate beside a small multiple of its input


def peak_of(call):
    """(result or exception, peak bytes traced while ``call`` ran): tracing runs for the call
    alone, so what the caller does with the result afterwards costs no tracing."""
    tracemalloc.start()
    try:
        result = call()
    except Exception as error:  # noqa: BLE001 - the caller says which are allowed
        result = error
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return result, peak


def check_forged_bytes(cls, services: dict) -> None:
    """Every forgery is refused with ValueError/TypeError, or read as a working filter, and no
    read allocates more than 4 times its input (plus a megabyte) on the way."""
    f, keys = filled(cls, services, count=20, capacity=64)
    data = f.to_bytes()
    for blob in [*forgeries(data), "text", None, 12, [1, 2]]:
        result, peak = peak_of(lambda: read_back(f, blob))
        size = len(blob) if isinstance(blob, bytes) else 0
        assert peak <= 4 * size + ALLOWANCE, f"{peak:,} bytes allocated reading {size} bytes"
        if isinstance(result, Exception):
            assert isinstance(result, (ValueError, TypeError)), repr(result)
            continue
        assert type(result) is type(f)
        again = result.to_bytes()
        assert read_back(f, again).to_bytes() == again, "what was read does not read back"
        ask_many(result, keys[:3])
        if adds(result):
            result.add(keys[0])
            result.to_bytes()  # a forged counter must not break the next write


def check_large_read(cls, services: dict) -> None:
    """Reading a filter made for 400,000 keys allocates at most 3 times its bytes (plus a
    megabyte): nothing is unpacked to a byte a bit, nothing copied twice."""
    f, _ = filled(cls, services, count=50, capacity=400_000)
    data = f.to_bytes()
    result, peak = peak_of(lambda: read_back(f, data))
    assert not isinstance(result, Exception), result
    assert peak <= 3 * len(data) + ALLOWANCE, f"{peak:,} bytes allocated reading {len(data):,}"


# --- numbers -------------------------------------------------------------------------------------
BAD_INTS = [math.nan, math.inf, -math.inf, -1, 10 ** 30, True, np.bool_(True), 1.5, 2.0,
            np.float64(2.0), Fraction(3, 2), Decimal("NaN"), Decimal("1.5"), "3", 3 + 0j]
BAD_REALS = [math.nan, math.inf, -math.inf, -1.0, 10 ** 400, True, np.bool_(True), "0.5",
             Decimal("NaN"), Decimal("-Infinity"), Fraction(-1, 3), 0.5 + 0j]
INT_TYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


def numeric_parameters(cls) -> dict[str, tuple[str, bool]]:
    """The constructor's int and float parameters: name -> ("int" or "float", None allowed)."""
    out = {}
    for name, parameter in inspect.signature(cls.__init__).parameters.items():
        annotation = parameter.annotation
        text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
        kinds = {part.strip() for part in text.split("|")}
        for kind in ("int", "float"):
            if kind in kinds and kinds <= {kind, "None"}:
                out[name] = (kind, "None" in kinds)
    return out


def same_as(value, kind: str) -> list:
    """Other types holding exactly ``value``: numpy scalars, Fraction, Decimal."""
    if kind == "int":
        return [t(value) for t in INT_TYPES if np.iinfo(t).min <= value <= np.iinfo(t).max]
    out = [np.float64(value), Fraction(value), Decimal(repr(float(value)))]
    return out + ([np.float32(value)] if float(np.float32(value)) == value else [])


def check_numbers(cls, services: dict) -> None:
    """Each int or float argument: a bad value is refused naming it, an equal value of another
    type gives the same filter."""
    wanted = {name: services[name] for name in declared(cls).needs}
    arguments = declared(cls).arguments(CAPACITY, (), **wanted)
    numeric = numeric_parameters(cls)
    assert numeric or not any(isinstance(v, (int, float)) for v in arguments.values()), \
        "annotate the constructor's numbers (int, float) so the suite finds them"
    baseline = cls(**arguments)
    for name, (kind, optional) in numeric.items():
        if name not in arguments:
            continue
        for bad in BAD_INTS if kind == "int" else BAD_REALS:
            with pytest.raises((TypeError, ValueError)) as caught:
                cls(**{**arguments, name: bad})
            assert name in str(caught.value), f"{name}={bad!r}: {caught.value}"
        if not optional:
            with pytest.raises(TypeError, match=name):
                cls(**{**arguments, name: None})
        for other in same_as(arguments[name], kind):
            twin = cls(**{**arguments, name: other})
            assert same_state(twin, baseline), f"{name}={other!r} ({type(other).__name__})"

