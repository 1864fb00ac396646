"""The promises of a class with a limit, checked by tests/test_conformance.py: one that forgets
by design (its registry entry's ``memory``: rotating, age-partitioned, stable filters) keeps
each key as long as it says, and one that fills up (its entry's ``full`` and ``room``: the
cuckoo filters) takes what it says and refuses the rest without changing or losing
anything."""

from __future__ import annotations

import itertools

from conformance_support import (CAPACITY, accepted_keys, ask_many, declared, has, kept, make,
                                 memory, same_state, snapshot, unchanged)


# --- a class that forgets --------------------------------------------------------------------
def forgets(cls) -> bool:
    """True if the class's entry says how long it keeps a key: it forgets by design."""
    return declared(cls) is not None and declared(cls).memory is not None


def check_memory_promise(cls, services: dict) -> None:
    """Inserted one by one, far past its memory, every key is still found at the last insert
    it was promised (``memory`` later), and so at every insert before."""
    f = make(cls, services)
    keys = accepted_keys(f, 4 * CAPACITY, seed=9)
    promise = memory(f)
    assert promise is not None and promise < 2 * CAPACITY, "the example forgets within the run"
    lost = []
    for i, key in enumerate(keys):
        f.add(key)
        oldest = i - promise
        if oldest >= 0 and not has(f, keys[oldest]):
            lost.append(oldest)
    assert not lost, f"keys lost inside the promised {promise} inserts: {lost[:5]}"


# --- a class that fills up -------------------------------------------------------------------
DISTINCT_LIMIT = 64 * CAPACITY  # distinct keys within which a filling example must fill


def fills(cls) -> bool:
    """True if the class's entry names ``full`` exceptions: ``add`` may refuse a key once it
    has no room."""
    return declared(cls) is not None and bool(declared(cls).full)


def fill(f, keys, limit: int) -> tuple[int, bool]:
    """Add ``keys`` one by one until ``add`` refuses one (with an exception of ``full``) or
    ``limit`` were taken: (keys taken, refused).  A refusal must leave the filter exactly as
    it was, and every key taken before it found."""
    taken, refusals = [], declared(type(f)).full
    for key in itertools.islice(keys, limit):
        before = snapshot(f, taken[-3:] + [key])
        try:
            f.add(key)
        except refusals:
            assert unchanged(f, before, taken[-3:] + [key]), \
                f"the refused add of {key!r}, after {len(taken)} inserts, changed the filter"
            lost = [k for k in kept(f, taken) if not has(f, k)]
            assert not lost, f"after a refused add, {len(lost)} keys it took are lost: {lost[:3]}"
            assert ask_many(f, kept(f, taken)).all(), "after a refused add, contains_many lost keys"
            return len(taken), True
        taken.append(key)
    return len(taken), False


def check_room_and_refusals(cls, services: dict) -> None:
    """The entry's ``room`` inserts are taken for certain, be they copies of one key (a cuckoo filter
    stores each) or distinct keys; distinct keys fill the example within
    :data:`DISTINCT_LIMIT`; each refusal changes nothing and loses nothing; and a batch path
    given the keys up to the refused one refuses too, leaving the filter as it was before the
    call, or as the one-by-one adds left it (the keys before the refused one kept)."""
    f = make(cls, services)
    room = declared(cls).room(f)
    assert isinstance(room, int) and room >= 1, f"a class that fills says its room: {room!r}"
    copies, _ = fill(f, itertools.repeat(accepted_keys(f, 1, seed=17)[0]), 8 * room + 64)
    assert copies >= room, f"one key added again was refused after {copies} inserts; room is {room}"

    loop = make(cls, services)
    keys = accepted_keys(loop, DISTINCT_LIMIT, seed=19)
    taken, refused = fill(loop, iter(keys), DISTINCT_LIMIT)
    assert refused, f"{taken} distinct keys did not fill the example: make it smaller"
    assert taken >= room, f"distinct keys were refused after {taken} inserts; room is {room}"
    for path in ("add_many", "add_many_new"):
        if not hasattr(loop, path):
            continue
        batch, empty = make(cls, services), make(cls, services)
        try:
            getattr(batch, path)(keys[:taken + 1])
        except declared(cls).full:
            pass
        else:
            raise AssertionError(f"{path} took the {taken + 1} keys a loop of add refused the last of")
        assert same_state(batch, empty, keys[:taken + 1]) or same_state(batch, loop, keys[:taken + 1]), \
            f"a refused {path} left neither the state before it nor the loop's"
