"""What every filter of bloomedu promises, and what a new one declares to be tested for it.

The README's "What every part keeps": one interface for every filter and dedup stage of both
articles (``add``, ``in``), and one set of promises behind it, checked on every class.

Every filter and dedup stage of the library (the Bloom filter, its variants, the compatible
filters of real systems, article 1's dict and hashed IDs) takes :class:`Filter` as a base.
Subclassing it is all it takes to join the registry (:func:`filters`), and
``tests/test_conformance.py`` runs its promises on every class found there and on every
class of the package that looks like a filter (``__contains__`` or ``contains_many``, and
``add``, ``add_many`` or a constructor that takes the keys), so a class that forgets to join
fails the suite too.

The promises, checked for every class:

- **No false negative.** Every key of every kind in :attr:`Filter.KEY_KINDS` that went in
  through ``add``, ``add_many`` or ``add_many_new`` (whichever the class has), or that the
  filter was built from, is found by ``in`` and by ``contains_many``, for as long as the class
  promises to keep it (:attr:`Filter.memory_inserts`).  An int key is its value: the same key
  as a Python int, a numpy scalar, or an element of an integer array of any dtype and byte
  order.  ``bytearray`` and ``memoryview`` keys are the key of their bytes, or refused.
- **Bad keys change nothing.** A float, bool, ``None`` or a kind the class does not take is a
  ``TypeError``; an ``S``/``U`` numpy array whose element ends in NUL (numpy cannot tell
  ``b"ab"`` from ``b"ab\\x00"`` in it) a ``ValueError``; after either the filter is equal to
  what it was.
- **Threads.** Four threads adding at once (the interpreter switching every microsecond)
  leave the state one thread leaves: for a filter whose state does not depend on the order of
  its keys, the same state; for one whose state does (rotations, growth, decrements), the
  state of adding the four batches in some order, one ``add_many`` after another.
- **Bytes and pickles.** ``from_bytes(to_bytes())`` (where the class has both) and pickling at
  every protocol give an equal filter with the same answers; truncated, padded, mutated or
  forged bytes get a ``ValueError`` or ``TypeError`` before anything larger than a small
  multiple of the input is allocated.
- **Numbers.** Every int or float argument of the constructor refuses NaN, infinities,
  negatives, huge values, bools, strings and ``None`` with a ``ValueError`` or ``TypeError``
  whose message names the argument, and takes a numpy scalar, ``Fraction`` or ``Decimal`` of
  a valid value as that value.
- **add_many_new** (where it exists) answers, key by key, ``key not in f`` just before
  ``f.add(key)``; an ``add`` or ``add_many`` that returns something returns that same answer.
- **Full.** A filter that fills up instead of forgetting (a cuckoo filter stores a key again
  each time it is added, and has only so many slots) takes :attr:`Filter.room` inserts for
  certain, from empty; past them ``add`` may refuse a key with one of :attr:`Filter.FULL`,
  and a refusal changes nothing and loses nothing: the filter is what it was before the
  refused call (a batch path: before it, or after the keys it kept, one by one), and every
  key it took is still found.

What a new class declares (the defaults suit a dynamic filter of str, bytes and int keys that
never forgets):

- :meth:`Filter.example_arguments`: the keyword arguments of a small instance, the only hook
  a class must write.
- :attr:`Filter.KEY_KINDS`, :attr:`Filter.BUILT_FROM_KEYS`, :attr:`Filter.NEEDS`,
  :attr:`Filter.memory_inserts`, :attr:`Filter.FULL` with :attr:`Filter.room`, and
  :meth:`Filter.from_bytes_arguments`, where it differs.

A base that leaves methods to its subclasses says so with ``abc.abstractmethod``: an
abstract class cannot be made, so it is not a filter of its own; :func:`filters` and the
suite leave it out, and test its subclasses.

>>> from bloomedu import BloomFilter, RotatingBloomFilter
>>> BloomFilter in filters() and issubclass(RotatingBloomFilter, Filter)
True
>>> BloomFilter(**BloomFilter.example_arguments(100))
BloomFilter(num_bits=959, num_hashes=7)
>>> RotatingBloomFilter(**RotatingBloomFilter.example_arguments(100)).memory_inserts
50
"""

from __future__ import annotations

import inspect
from typing import ClassVar

__all__ = ["Filter", "filters", "EXAMPLE_FPP", "KINDS"]

EXAMPLE_FPP = 0.01  # the rate example_arguments sizes for: few false positives, small filters
KINDS = frozenset({"str", "bytes", "int", "other"})  # "other": any hashable object (a dict of IDs)

_REGISTRY: list[type] = []


def filters() -> list[type]:
    """Every public class that took :class:`Filter` as a base and defines (or inherits)
    :meth:`Filter.example_arguments`, in the order they were defined, but abstract bases
    (a method left to subclasses with ``abc.abstractmethod``: such a class cannot be made).

    Only classes whose modules were imported: ``tests/test_conformance.py`` imports every
    module of the package first.

    >>> from bloomedu import CountingBloomFilter, XorFilter
    >>> from bloomedu.variants.static import StaticFilter
    >>> CountingBloomFilter in filters(), XorFilter in filters(), StaticFilter in filters()
    (True, True, False)
    """
    return [cls for cls in _REGISTRY if not inspect.isabstract(cls)]


class Filter:
    """The base of every filter: its registry entry and the declarations the suite reads.

    >>> class Tiny(Filter):
    ...     @classmethod
    ...     def example_arguments(cls, capacity, keys=(), **services):
    ...         return {}
    >>> Tiny in filters(), Tiny.KEY_KINDS == {"str", "bytes", "int"}, Tiny().memory_inserts
    (True, True, None)
    >>> _REGISTRY.remove(Tiny)   # (a doctest's class leaves the registry again)
    >>> class _Filling(Filter):
    ...     FULL = RuntimeError
    Traceback (most recent call last):
    TypeError: _Filling.FULL must be a tuple of exception classes, not <class 'RuntimeError'>
    """

    __slots__ = ()

    #: The key kinds ``add`` takes: "str", "bytes", "int" and "other" (any other hashable
    #: object, for an exact set of keys; without it, other kinds are a ``TypeError``).
    KEY_KINDS: ClassVar[frozenset[str]] = frozenset({"str", "bytes", "int"})
    #: True for a static filter, built once from its keys (``keys`` among its arguments), with
    #: no ``add``.
    BUILT_FROM_KEYS: ClassVar[bool] = False
    #: The services :meth:`example_arguments` needs, by name (``{"redis"}``: a redis-py client
    #: as ``redis=``); a class that needs one is a handle to shared state, not pickled.
    NEEDS: ClassVar[frozenset[str]] = frozenset()
    #: The exceptions ``add`` (and ``add_many``, ``add_many_new``) raise when a key finds no
    #: room, for a filter that fills up (see :attr:`room`); empty: ``add`` always takes a key.
    FULL: ClassVar[tuple[type[Exception], ...]] = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        unknown = set(cls.KEY_KINDS) - KINDS
        if unknown:
            raise TypeError(f"{cls.__name__}.KEY_KINDS holds {sorted(unknown)}: the kinds are "
                            f"{sorted(KINDS)}")
        if not isinstance(cls.FULL, tuple) or not all(
                isinstance(error, type) and issubclass(error, Exception) for error in cls.FULL):
            raise TypeError(f"{cls.__name__}.FULL must be a tuple of exception classes, "
                            f"not {cls.FULL!r}")
        concrete = cls.example_arguments.__func__ is not Filter.example_arguments.__func__
        if concrete and not cls.__name__.startswith("_"):  # a base such as serial.Shared: not yet
            _REGISTRY.append(cls)

    @classmethod
    def example_arguments(cls, capacity: int, keys=(), **services) -> dict:
        """The keyword arguments of a small instance of this class: room for about ``capacity``
        keys at a rate near :data:`EXAMPLE_FPP` (a class that forgets may forget sooner: it
        says when in :attr:`memory_inserts`), built from ``keys`` if :attr:`BUILT_FROM_KEYS`,
        with each service of :attr:`NEEDS` passed by name.  ``cls(**arguments)`` must make it
        (a handle to a server's filter may make that filter here, under a fresh name, and
        return the arguments of a handle to it).
        """
        raise NotImplementedError(f"{cls.__name__} must define example_arguments to join "
                                  "the conformance suite (bloomedu/core/contract.py)")

    @property
    def memory_inserts(self) -> int | None:
        """Inserts after its own that a key is certainly still found through (None: for ever).

        Counted in inserts of other keys, with no explicit ``rotate``/``shift``/``remove`` in
        between; a filter that forgets by design says here what it promises.
        """
        return None

    @property
    def room(self) -> int | None:
        """Inserts this filter takes for certain from empty, a key added again counting again,
        before ``add`` may refuse one with an exception of :attr:`FULL` (None: never refuses).

        A certain number, for any keys: a cuckoo filter's is its bucket size b (keys whose
        two buckets are one bucket fill it after b inserts), far below the keys of random
        hashes it holds at its design load.
        """
        return None

    def from_bytes_arguments(self) -> dict:
        """What ``from_bytes`` needs beside the bytes to read this filter back (a secret the
        bytes do not hold); nothing for most filters."""
        return {}
