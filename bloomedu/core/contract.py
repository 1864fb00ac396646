"""One base for every filter: ``add`` and ``in`` declared, the rest given a default.

The README's "What every part keeps": one interface for every filter and dedup stage of both
articles (``add``, ``in``), declared by one abstract base, :class:`Filter`, and one set of
promises behind it, checked on every class.  Every filter and dedup stage of the library (the
Bloom filter, its variants, the compatible filters of real systems, article 1's dict and hashed
IDs, the handles to a filter in Redis) descends from it.

A class writes ``add`` and ``__contains__``; :class:`Filter` gives the rest a default it may
override with something faster:

- ``add_many(keys)``: the batch's keys checked (:func:`~bloomedu.core.hashing.key_list`,
  then each asked ``in``, so a bad key raises before anything is stored), then ``add`` one by
  one;
- ``contains_many(keys)``: ``in`` of each key, as a numpy array of bools;
- ``copy()``: an independent filter with the same state;
- pickling through ``to_bytes``/``from_bytes`` where the class has both (its state, without the
  lock, otherwise), and ``==`` on those bytes where the class has no better ``__eq__``;
- a lock of its own (``_lock``), made in ``__new__``, so every way an instance comes to exist
  (its constructor, ``from_bytes``, ``cls.__new__`` in a reader, unpickling) gets one; it is
  never pickled or shared with a copy.  Writes hold it (:func:`locked`, or ``with
  self._lock``): two threads' read-modify-writes of one byte would otherwise keep only one
  of the two writes (numpy's fancy-index ``data[i] |= mask`` runs with the GIL released).

A static filter, built once from all its keys (:class:`~bloomedu.variants.static.StaticFilter`),
has no way to take one more: its ``add`` and ``add_many`` raise a ``TypeError`` naming the class.

The promises, checked for every class by ``tests/test_conformance.py``, which finds the classes
by importing every module of the package and taking every concrete subclass of :class:`Filter`
(and fails for a class that looks like a filter without descending from it, or that has no
entry in ``tests/filter_registry.py``, where the suite reads how to build a small instance of
each class, the key kinds it takes, how long it keeps a key and when it may be full):

- **No false negative.** Every key of every kind the class takes that went in through ``add``,
  ``add_many`` or ``add_many_new`` (whichever the class has), or that the filter was built
  from, is found by ``in`` and by ``contains_many``, for as long as the class promises to keep
  it.  An int key is its value: the same key as a Python int, a numpy scalar, or an element of
  an integer array of any dtype and byte order.  ``bytearray`` and ``memoryview`` keys are the
  key of their bytes, or refused.
- **Bad keys change nothing.** A float, bool, ``None`` or a kind the class does not take is a
  ``TypeError``; an ``S``/``U`` numpy array whose element ends in NUL (numpy cannot tell
  ``b"ab"`` from ``b"ab\\x00"`` in it) a ``ValueError``; after either the filter is equal to
  what it was.
- **Threads.** Four threads adding at once (the interpreter switching every microsecond)
  leave the state one thread leaves: for a filter whose state does not depend on the order of
  its keys, the same state; for one whose state does (rotations, growth, decrements), the
  state of adding the four batches in some order, one ``add_many`` after another.
- **Bytes and pickles.** ``from_bytes(to_bytes())`` (where the class has both), pickling at
  every protocol and ``copy`` give an equal filter with the same answers and a lock of its
  own; truncated, padded, mutated or forged bytes get a ``ValueError`` or ``TypeError`` before
  anything larger than a small multiple of the input is allocated.
- **Numbers.** Every int or float argument of the constructor refuses NaN, infinities,
  negatives, huge values, bools, strings and ``None`` with a ``ValueError`` or ``TypeError``
  whose message names the argument, and takes a numpy scalar, ``Fraction`` or ``Decimal`` of
  a valid value as that value.
- **add_many_new** (where it exists) answers, key by key, ``key not in f`` just before
  ``f.add(key)``; an ``add`` or ``add_many`` that returns something returns that same answer.
- **Full.** A filter that fills up instead of forgetting (a cuckoo filter stores a key again
  each time it is added, and has only so many slots) takes a certain number of inserts from
  empty; past them ``add`` may refuse a key with the exception it documents, and a refusal
  changes nothing and loses nothing: the filter is what it was before the refused call (a
  batch path: before it, or after the keys it kept, one by one), and every key it took is
  still found.

>>> from bloomedu import BloomFilter, RotatingBloomFilter
>>> issubclass(BloomFilter, Filter) and issubclass(RotatingBloomFilter, Filter)
True
>>> class Exact(Filter):
...     def __init__(self):
...         self.keys = set()
...     def add(self, key):
...         self.keys.add(key)
...     def __contains__(self, key):
...         return key in self.keys
>>> f = Exact(); f.add_many(["a", "b"])
>>> f.contains_many(["a", "c"]).tolist(), f.copy().keys == {"a", "b"}, f.copy()._lock is f._lock
([True, False], True, False)
>>> Filter()
Traceback (most recent call last):
TypeError: Can't instantiate abstract class Filter ...
"""

from __future__ import annotations

import copy as _copy
import copyreg
import threading
from abc import ABC, abstractmethod
from functools import wraps

import numpy as np

from .hashing import key_list
from .bits import BitArray

__all__ = ["Filter", "filter_repr", "locked"]


def locked(method):
    """Run ``method`` holding the instance's ``_lock`` (the structures of :mod:`bloomedu.variants`).

    >>> class Counter(Filter):
    ...     total = 0
    ...     def add(self, key): pass
    ...     def __contains__(self, key): return False
    ...     @locked
    ...     def bump(self):
    ...         self.total += 1
    ...         return self._lock.locked()
    >>> Counter().bump()
    True
    """
    @wraps(method)
    def run(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)
    return run


def filter_repr(filter: object, parameters: str, *, fill: float, added: float,
                estimated: bool = False) -> str:
    """What a filter's ``repr`` says: its class, its parameters (m, k, n, p in that order), the
    fraction of its cells in use (``fill``, two places, or two digits below 0.005) and the keys that went in (``added``).

    ``added=N`` where the class counts its inserts; ``added~N`` (rounded) where it estimates them
    from the fill, as a plain Bloom filter must (it keeps nothing but its bits); ``added~inf``
    once every cell is set and the fill tells nothing any more.

    >>> from bloomedu import BloomFilter
    >>> filter_repr(BloomFilter(64, 3), "num_bits=64, num_hashes=3", fill=0.5, added=14.8,
    ...             estimated=True)
    'BloomFilter(num_bits=64, num_hashes=3, fill=0.50, added~15)'
    >>> filter_repr(BloomFilter(64, 3), "m=64", fill=1.0, added=float("inf"), estimated=True)
    'BloomFilter(m=64, fill=1.00, added~inf)'
    >>> filter_repr(BloomFilter(64, 3), "m=2**32", fill=3 / 2**32, added=1)
    'BloomFilter(m=2**32, fill=7.0e-10, added=1)'
    """
    count = "inf" if added == float("inf") else f"{round(added)}"
    share = f"{fill:.1e}" if 0 < fill < 0.005 else f"{fill:.2f}"  # a few keys in many bits: not 0.00
    return (f"{type(filter).__name__}({parameters}, fill={share}, "
            f"added{'~' if estimated else '='}{count})")


class Filter(ABC):
    """The base of every filter: ``add`` and ``in`` to write, the bulk forms, ``copy``, pickling,
    equality and a lock of its own given (see the module's docstring).

    >>> from bloomedu import SeenIds
    >>> seen = SeenIds(); seen.add_many(["123", "456"])
    >>> isinstance(seen, Filter), seen.contains_many(["123", "789"]).tolist()
    (True, [True, False])
    """

    __slots__ = ("_lock",)

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        self._lock = threading.Lock()
        return self

    # --- what every filter writes -------------------------------------------------------------
    @abstractmethod
    def add(self, key) -> None:
        """Put ``key`` in the filter."""

    @abstractmethod
    def __contains__(self, key) -> bool:
        """False: ``key`` was never added; True: it was, or (a filter with false positives)
        another key took all its places."""

    # --- defaults a filter may override -------------------------------------------------------
    def add_many(self, keys) -> None:
        """``add`` each key of ``keys``, once every key has been checked (the batch through
        :func:`~bloomedu.core.hashing.key_list`, each key through ``in``), so a bad key
        raises before any key is stored."""
        keys = key_list(keys)
        for key in keys:
            key in self  # noqa: B015 - refuses a bad key as add would, before anything is stored
        for key in keys:
            self.add(key)

    def contains_many(self, keys) -> np.ndarray:
        """``key in self`` for each key of ``keys``, as a numpy array of bools."""
        keys = key_list(keys)
        return np.fromiter((key in self for key in keys), dtype=bool, count=len(keys))

    def copy(self):
        """An independent filter with the same parameters and state (and a lock of its own)."""
        if _has_bytes(type(self)):
            return type(self).from_bytes(self.to_bytes())
        with self._lock:  # no write holding it is halfway through
            state = _copy.deepcopy(Filter.__getstate__(self))
        new = type(self).__new__(type(self))
        new.__setstate__(state)
        return new

    def __eq__(self, other: object) -> bool:
        """Equal bytes, for a class with ``to_bytes`` and ``from_bytes``; otherwise identity."""
        if type(other) is not type(self) or not _has_bytes(type(self)):
            return NotImplemented
        return self.to_bytes() == other.to_bytes()

    __hash__ = None  # mutable: not a dict key

    # --- pickling: through the bytes, or the state without the lock; a new lock on the way back
    def __reduce__(self):
        if _has_bytes(type(self)):
            return type(self).from_bytes, (self.to_bytes(),)
        return copyreg.__newobj__, (type(self),), self.__getstate__()

    def __getstate__(self):
        slots = {name: getattr(self, name) for name in _slot_names(type(self))
                 if name != "_lock" and hasattr(self, name)}
        return getattr(self, "__dict__", None) or None, slots

    def __setstate__(self, state) -> None:
        attributes, slots = (state, {}) if isinstance(state, dict) else state
        for name, value in {**(attributes or {}), **slots}.items():
            object.__setattr__(self, name, value)
        self._lock = threading.Lock()

    # --- the writes and snapshots of the bit-array filters ------------------------------------
    def _set_bits(self, bits: BitArray, indices: list[int], report: bool = False) -> bool:
        """Set the bits at ``indices`` (computed before, outside the lock).

        With ``report``, return whether one of them was 0 (Guava's ``put``), read
        under the same lock; without, return True and read nothing.
        """
        with self._lock:
            changed = not report or not all(bits[index] for index in indices)
            for index in indices:
                bits.set(index)
        return changed

    def _snapshot(self, bits: BitArray) -> BitArray:
        """A copy of ``bits`` that no write is halfway through."""
        with self._lock:
            return bits.copy()


def _has_bytes(cls: type) -> bool:
    return callable(getattr(cls, "to_bytes", None)) and callable(getattr(cls, "from_bytes", None))


def _slot_names(cls: type) -> list[str]:
    names = []
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names += [slots] if isinstance(slots, str) else list(slots)
    return [name for name in names if name not in ("__dict__", "__weakref__")]
