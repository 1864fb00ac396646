"""One lock per filter, held around every write to its bits.

Setting a bit reads a byte, ORs a mask into it and writes it back.  Two threads
doing that to the same byte at once keep only one of the two writes: numpy's
fancy-index ``data[i] |= mask`` and an in-place ``|=`` run with the GIL
released, so ``add_many`` from two threads on a filter of over 40 Mi bits lost
a large share of each other's keys, and ``|=`` likewise.  Every mutable filter
in the library (:class:`~bloomedu.core.filter.BloomFilter`,
:class:`~bloomedu.steps.salted.SaltedBloomFilter` and its ``BitVector``,
:class:`~bloomedu.compat.guava.GuavaBloomFilter`,
:class:`~bloomedu.compat.bip37.Bip37Filter`, and every structure of
:mod:`bloomedu.variants` through :class:`~bloomedu.core.serial.Shared`) takes
:class:`LockedWrites` as a base: its ``_lock`` is held for each write, and by the copies that must be
snapshots.  Reads take no lock: they never write, so they cannot undo a write,
and bits only go from 0 to 1 (see each class's docstring for what is safe).  The
variants' reads hold it too (:func:`locked`): their writes also clear or decrement.

The lock is made in ``__new__``, so every way a filter comes to exist (its
constructor, ``from_bytes``, ``cls.__new__`` in a reader, unpickling) gets
its own; it is never pickled or shared with a copy.

Tested in ``tests/test_threads.py`` (every filter and variant) and
``tests/test_pickling.py`` (each copy its own lock); its cost is measured by ``make bench``
(``benchmarks/locking.py``).
"""

from __future__ import annotations

import threading
from functools import wraps

from .bits import BitArray

__all__ = ["LockedWrites", "locked"]


def locked(method):
    """Run ``method`` holding the instance's ``_lock`` (the structures of :mod:`bloomedu.variants`).

    >>> class Counter(LockedWrites):
    ...     total = 0
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


class LockedWrites:
    """A base class that gives each instance its own lock, ``_lock``, and pickles without it.

    >>> from bloomedu.compat.guava import GuavaBloomFilter
    >>> f = GuavaBloomFilter.create(10, 0.1)
    >>> f._set_bits(f.bits, [1, 3], report=True), f._set_bits(f.bits, [3], report=True)
    (True, False)
    >>> import pickle; twin = pickle.loads(pickle.dumps(f))
    >>> twin == f, twin._lock is f._lock
    (True, False)
    """

    __slots__ = ("_lock",)

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        self._lock = threading.Lock()
        return self

    # --- the writes and snapshots every filter shares ----------------------------------
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
        """A copy of ``bits`` that no write is halfway through.

        >>> class Holder(LockedWrites):
        ...     pass
        >>> h = Holder(); bits = BitArray(8); bits.set(2)
        >>> h._snapshot(bits) == bits
        True
        """
        with self._lock:
            return bits.copy()

    # --- pickling: the state without the lock; a new lock on the way back -------------------
    def __getstate__(self):
        slots = {name: getattr(self, name) for name in _slot_names(type(self))
                 if name != "_lock" and hasattr(self, name)}
        return getattr(self, "__dict__", None) or None, slots

    def __setstate__(self, state) -> None:
        attributes, slots = state
        for name, value in {**(attributes or {}), **slots}.items():
            object.__setattr__(self, name, value)
        self._lock = threading.Lock()


def _slot_names(cls: type) -> list[str]:
    names = []
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names += [slots] if isinstance(slots, str) else list(slots)
    return [name for name in names if name not in ("__dict__", "__weakref__")]
