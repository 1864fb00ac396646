"""Steps 1 and 2 of article 1: remember every processed ID, then only its hash.

Every dedup stage in bloomedu, these two and the bit vectors and filters after
them, has the same two methods, ``add(key)`` and ``key in stage``, so one
function, :func:`deduplicate`, runs any of them on a click stream.

Taught in ``notebooks/01_seen_ids.ipynb`` and
``notebooks/02_hashed_ids.ipynb``; tested in ``tests/test_dedup.py``.
"""

from __future__ import annotations

import numbers
from typing import Callable, Iterable, Protocol

import numpy as np

from ..core.checks import check_picklable
from ..core.contract import Filter
from ..core.hashing import murmur3_32

__all__ = ["SeenIds", "HashedIds", "SeenSet", "add_all", "deduplicate"]


class SeenSet(Protocol):
    """What every dedup stage and filter provides."""

    def add(self, key) -> None: ...

    def __contains__(self, key) -> bool: ...


def stored(key):
    """The key a dict of IDs keeps, or a TypeError for one it must not take.

    A ``memoryview`` or ``bytearray`` is kept as its bytes (equal to them, but unpicklable or
    unhashable), a numpy integer as its int, any other hashable key as it is.  A bool, a float
    (NaN among them: it is not even equal to itself, so it would never be found again) or any
    other number that is not a whole number is refused, as the filters refuse them: in a dict
    ``True``, ``1`` and ``1.0`` would be one key.

    >>> stored(memoryview(b"123")), stored("123"), stored(np.int8(7))
    (b'123', '123', 7)
    >>> stored(float("nan"))
    Traceback (most recent call last):
    TypeError: key must be a str, bytes, int or another hashable ID, not float (bool and float keys are refused, as by every filter)
    """
    if isinstance(key, (bytes, str)):
        return key
    if isinstance(key, (bool, np.bool_)) or (isinstance(key, numbers.Number)
                                             and not isinstance(key, numbers.Integral)):
        raise TypeError(f"key must be a str, bytes, int or another hashable ID, not "
                        f"{type(key).__name__} (bool and float keys are refused, as by every "
                        "filter)")
    if isinstance(key, (memoryview, bytearray)):
        return bytes(key)
    if isinstance(key, np.integer):
        return int(key)
    try:
        hash(key)
    except TypeError:
        raise TypeError(f"key must be hashable (a str, bytes, int or tuple), not "
                        f"{type(key).__name__}") from None
    return key


class SeenIds(Filter):
    """Step 1: a dict of processed IDs (the article's ``processedIds`` object). Exact.

    >>> seen = SeenIds()
    >>> seen.add("123")
    >>> "123" in seen, "456" in seen, len(seen)
    (True, False, 1)
    """

    def __init__(self) -> None:
        self.processed: dict[str, bool] = {}

    def add(self, key: str) -> None:
        self.processed[stored(key)] = True

    def __contains__(self, key: str) -> bool:
        return stored(key) in self.processed

    def __len__(self) -> int:
        return len(self.processed)

    def __eq__(self, other: object) -> bool:
        """Equal when they hold the same keys."""
        if type(other) is not type(self):
            return NotImplemented
        return self.processed.keys() == other.processed.keys()

    __hash__ = None  # mutable


class HashedIds(Filter):
    """Step 2: keep only a 32-bit hash of each ID (MurmurHash3 by default).

    Two IDs with the same hash are confused: the second is taken for a duplicate.

    >>> seen = HashedIds()
    >>> seen.add("123")
    >>> "123" in seen, seen.hashes
    (True, {2662625771})
    """

    def __init__(self, hash_function: Callable[[str], int] = murmur3_32) -> None:
        if not callable(hash_function):
            raise TypeError(f"hash_function must be callable, not {type(hash_function).__name__}")
        self.hash_function = hash_function
        self.hashes: set[int] = set()

    def __getstate__(self) -> dict:
        """Pickle the hashes and the hash function by reference (a lambda cannot be pickled)."""
        check_picklable(self.hash_function, type(self).__name__)
        return dict(self.__dict__)

    def add(self, key: str) -> None:
        self.hashes.add(self.hash_function(key))

    def __contains__(self, key: str) -> bool:
        return self.hash_function(key) in self.hashes

    def __len__(self) -> int:
        return len(self.hashes)

    def __eq__(self, other: object) -> bool:
        """Equal when they hash alike and hold the same hashes."""
        if type(other) is not type(self):
            return NotImplemented
        return self.hash_function == other.hash_function and self.hashes == other.hashes

    __hash__ = None  # mutable


def deduplicate(messages: Iterable, seen: SeenSet, key: Callable = lambda m: m.id) -> list:
    """Keep each message whose key ``seen`` has not seen yet, and remember it.

    >>> deduplicate([{"id": "123"}, {"id": "456"}, {"id": "123"}, {"id": "789"}],
    ...             SeenIds(), key=lambda m: m["id"])
    [{'id': '123'}, {'id': '456'}, {'id': '789'}]
    """
    kept = []
    for message in messages:
        message_key = key(message)
        if message_key not in seen:
            seen.add(message_key)
            kept.append(message)
    return kept


def add_all(seen: SeenSet, keys: Iterable) -> SeenSet:
    """Add every key to ``seen`` and return it (handy for measuring a stage's memory).

    >>> len(add_all(SeenIds(), ["123", "456", "123"]))
    2
    """
    for key in keys:
        seen.add(key)
    return seen
