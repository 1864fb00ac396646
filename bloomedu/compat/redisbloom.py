"""RedisBloom's scalable Bloom filter (Redis's ``BF.*`` commands), bit for bit, in Python and numpy.

Article 1's deduplicator, shared by several consumers, keeps its filter in
Redis; Redis 8 and the RedisBloom module give it ``BF.RESERVE``, ``BF.ADD``,
``BF.EXISTS``, ``BF.INFO``, ``BF.SCANDUMP`` and ``BF.LOADCHUNK``.
:class:`RedisBloomFilter` does what RedisBloom 2.8.2 does (read from its
``src/sb.c``, ``src/rebloom.c``, ``deps/bloom/bloom.c``, checked against the
running module), so a filter built here dumps the very bytes the server dumps:

- a chain of sub-filters.  The first is sized for ``capacity`` items at half
  the error rate (the rate itself with ``nonscaling``); when the newest holds
  as many items as it was sized for, the next new item opens another with
  ``expansion`` times its capacity and half its error rate;
- each sub-filter: bpe = -ln(error) / 0.480453013918201 bits per entry (the
  module's (ln 2)^2), bits = floor(capacity * bpe) (at least 1) rounded up to
  whole 64-bit words, k = ceil(0.693147180559945 * bpe) hash functions;
- hashing: a = MurmurHash64A(item, 0xc6a4a7935bd1e995), b = MurmurHash64A(item,
  a) (:mod:`bloomedu.compat.murmur64`); position i = (a + i*b) mod 2^64 mod bits;
  bit x in byte x >> 3 under mask 1 << (x & 7), bloomedu's own layout;
- ``BF.ADD``: 0 if any sub-filter (newest first) holds the item; else the item
  goes into the newest (opening a new one first if it is full) and is counted
  only if one of its bits changed;
- ``BF.SCANDUMP``: a packed little-endian header, then each sub-filter's bits
  in pieces of at most 16 MiB, each with the iterator ``BF.LOADCHUNK`` wants.

Items are what redis-py sends: ``str`` as UTF-8, bytes as they are, an int as
its decimal digits.

Where the module breaks, the model refuses and changes nothing.  The module keeps
``expansion`` in 32 bits (``EXPANSION 4294967297`` is 1, and 2^32 is 0, which breaks the
filter at its first growth): the model takes 1 .. 2^32 - 1 only.  When the next sub-filter
cannot be sized (its error rate, halved at each growth, underflows: after about a thousand
growths of ``expansion=1``), the module answers "problem inserting into filter" and keeps an
empty link that answers present for every item; the model raises the same error and keeps
the filter as it was, so every state it reaches dumps and reads back.  ``max_inserts`` says
how many inserts a filter takes for certain.

The module's other structure, its cuckoo filter (``CF.*``), is modelled in
:mod:`bloomedu.compat.redisbloom_cuckoo` and importable from here too, as
``bloomedu.compat.redisbloom.RedisCuckooFilter``.

Taught in ``notebooks/17_redisbloom.ipynb``; tested against the
running module in ``tests/test_redisbloom.py`` and on their own in
``tests/test_redisbloom_model.py``.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from ..core.checks import MAX_NUM_BITS, probability, whole_number
from ..core.bits import count_ones
from ..core.contract import Filter, filter_repr, locked
from . import redisbloom_dump
from .redisbloom_cuckoo import RedisCuckooFilter  # noqa: F401  (CF.*, documented in its module)
from .redisbloom_subfilter import (CHAIN_BYTES, FORCE64, LINK_BYTES, MAX_CHUNK, NO_SCALING, NOROUND,
                               TIGHTENING, RedisBloomError, SubFilter, encode_item, encode_items,
                               first_setters, hash_pair, hash_pairs, info_reply, sizable)

__all__ = ["RedisBloomFilter", "RedisBloomError", "SubFilter", "encode_item", "hash_pair",
           "info_reply"]

_HEADER = redisbloom_dump.HEADER  # size, number of sub-filters, options, expansion
_MASK64 = (1 << 64) - 1
_CHUNK_ITEMS = 1 << 15


class RedisBloomFilter(Filter):
    """RedisBloom's scalable filter: what ``BF.RESERVE key error_rate capacity`` makes.

    >>> f = RedisBloomFilter(0.01, 2)
    >>> f.add("123"), f.add("123"), f.exists("123"), "456" in f
    (True, False, True, False)
    >>> f.add_many(["a", "b", "a"]).tolist()
    [True, True, False]
    >>> f.info()
    {'Capacity': 6, 'Size': 176, 'Number of filters': 2, 'Number of items inserted': 3, 'Expansion rate': 2}
    """

    def __init__(self, error_rate: float, capacity: int, expansion: int = 2,
                 nonscaling: bool = False):
        error_rate = probability(error_rate, "error_rate")  # BF.RESERVE's range
        capacity = whole_number(capacity, "capacity", 1, MAX_NUM_BITS)
        expansion = whole_number(expansion, "expansion", 1, 2 ** 32 - 1)  # the module's uint32
        if not isinstance(nonscaling, bool):
            raise TypeError(f"nonscaling must be a bool, not {type(nonscaling).__name__}")
        if nonscaling and expansion != 2:
            raise ValueError("a nonscaling filter cannot expand: leave expansion at its default "
                             "(BF.RESERVE refuses EXPANSION with NONSCALING)")
        self.error_rate, self.capacity = float(error_rate), int(capacity)
        self.expansion = int(expansion)
        self.options = FORCE64 | NOROUND | (NO_SCALING if nonscaling else 0)
        error = self.error_rate * (1.0 if nonscaling else TIGHTENING)
        try:
            first = SubFilter.sized(self.capacity, error)
        except RedisBloomError:
            raise ValueError(f"error_rate {error_rate!r} halves to {error!r} for the first "
                             "sub-filter: BF.RESERVE answers 'ERR could not create filter'") from None
        self.links: list[SubFilter] = [first]
        self.size = 0

    @property
    def nonscaling(self) -> bool:
        """True for a NONSCALING filter (it refuses new items once full)."""
        return bool(self.options & NO_SCALING)

    @property
    def max_inserts(self) -> int:
        """Inserts this filter takes for certain from empty, before ``add`` may refuse one with
        :class:`RedisBloomError` (full): the capacity of a NONSCALING filter, else the entries of
        every sub-filter that can be sized (counted up to 2**64, the module's size_t).

        >>> RedisBloomFilter(0.01, 10, nonscaling=True).max_inserts
        10
        >>> RedisBloomFilter(0.5, 1, expansion=1).max_inserts   # the error halves at each growth
        1073
        """
        if self.nonscaling:
            return self.links[0].entries
        total, entries, error = 0, self.links[0].entries, self.links[0].error
        while total < 1 << 64 and sizable(entries, error):
            total += entries
            entries, error = (entries * self.expansion) & _MASK64, error * TIGHTENING
        return total

    def reserve_args(self, key: str) -> list:
        """The BF.RESERVE command that makes this filter on a server (before any item).

        >>> RedisBloomFilter(0.001, 1000, expansion=4).reserve_args("clicks")
        ['BF.RESERVE', 'clicks', '0.001', 1000, 'EXPANSION', 4]
        """
        args = ["BF.RESERVE", key, repr(self.error_rate), self.capacity]
        return args + (["NONSCALING"] if self.nonscaling else ["EXPANSION", self.expansion])

    # --- one item ------------------------------------------------------------------------
    @locked
    def add(self, item) -> bool:
        """``BF.ADD``: True if the item was new (1), False if the filter says it is in (0).

        >>> f = RedisBloomFilter(0.01, 100); f.add(b"\\x00"), f.add(b"\\x00")
        (True, False)
        """
        a, b = hash_pair(item)
        if any(link.contains(a, b) for link in reversed(self.links)):
            return False
        current = self._room_for_one()
        if current.set(a, b):
            current.size += 1
            self.size = (self.size + 1) & _MASK64  # a size_t, as on the server
            return True
        return False

    def _room_for_one(self) -> SubFilter:
        """The newest sub-filter, after opening a new one if it is full (as SBChain_Add does)."""
        current = self.links[-1]
        if current.size < current.entries:
            return current
        if self.nonscaling:
            raise RedisBloomError("non scaling filter is full")
        entries = (current.entries * self.expansion) & _MASK64  # size_t arithmetic
        error = current.error * TIGHTENING
        if not sizable(entries, error):  # the module would keep an empty link that holds all
            raise RedisBloomError("problem inserting into filter: the next sub-filter "
                                  f"({entries} entries at error {error!r}) cannot be sized, so "
                                  "the filter is full (it is left as it was)")
        link = SubFilter.sized(entries, error)
        self.links.append(link)
        return link

    def exists(self, item) -> bool:
        """``BF.EXISTS``: True if some sub-filter holds every bit of the item.

        >>> f = RedisBloomFilter(0.01, 100); f.add(7)
        True
        >>> f.exists(7), f.exists("7"), f.exists(8)
        (True, True, False)
        """
        a, b = hash_pair(item)
        return any(link.contains(a, b) for link in reversed(self.links))

    __contains__ = exists

    def __len__(self) -> int:
        """``BF.CARD``: the items counted as inserted."""
        return self.size

    # --- many items --------------------------------------------------------------------------
    def exists_many(self, items) -> np.ndarray:
        """``BF.MEXISTS``, vectorised: a bool array, one answer per item.

        >>> f = RedisBloomFilter(0.01, 100); f.add_many(["x", "y"]).tolist()
        [True, True]
        >>> f.exists_many(["x", "z", "y"]).tolist()
        [True, False, True]
        """
        data = encode_items(items)
        answer = np.zeros(len(data), dtype=bool)
        for start in range(0, len(data), _CHUNK_ITEMS):
            a, b = hash_pairs(data[start:start + _CHUNK_ITEMS])
            found = np.zeros(a.size, dtype=bool)
            for link in reversed(self.links):
                rest = np.flatnonzero(~found)
                if not rest.size:
                    break
                found[rest] = link.contains_many(a.take(rest), b.take(rest))
            answer[start:start + a.size] = found
        return answer

    @locked
    def add_many(self, items) -> np.ndarray:
        """``BF.MADD``, vectorised: a bool array of what BF.ADD would answer, item after item.

        Exactly the sequential answers, growths included (an item found because an earlier
        item of the same call set its bits answers False).  Every item is checked before any
        bit changes; as on the server, an error (a full NONSCALING filter) keeps the items
        before it, and the exception's ``answers`` holds their answers.

        >>> f = RedisBloomFilter(0.01, 1, nonscaling=True)
        >>> f.add_many(["p", "q"])
        Traceback (most recent call last):
        bloomedu.compat.redisbloom_subfilter.RedisBloomError: non scaling filter is full
        >>> f.exists("p"), f.exists("q")
        (True, False)
        """
        data = encode_items(items)
        answers = np.zeros(len(data), dtype=bool)
        start = 0
        while start < len(data):
            stop = min(len(data), start + _CHUNK_ITEMS)
            a, b = hash_pairs(data[start:stop])
            try:
                start += self._add_hashed(a, b, answers[start:stop])
            except RedisBloomError as error:
                error.answers = answers[:start + getattr(error, "done", 0)]
                raise
        return answers

    def _add_hashed(self, a: np.ndarray, b: np.ndarray, answers: np.ndarray) -> int:
        """Add items in order until the newest sub-filter fills up; how many were handled."""
        current = self.links[-1]
        known = np.zeros(a.size, dtype=bool)
        for link in self.links[:-1]:
            rest = np.flatnonzero(~known)
            known[rest] = link.contains_many(a.take(rest), b.take(rest))
        candidates = np.flatnonzero(~known)
        positions = current.positions_many(a.take(candidates), b.take(candidates))
        before = np.arange(candidates.size)[:, None]
        found = (current.bits_at(positions) | (first_setters(positions) < before)).all(axis=1)
        inserted = np.flatnonzero(~found)  # each of these sets a bit: none is already in
        room = current.entries - current.size
        if inserted.size <= room:
            done, kept = a.size, inserted
        else:
            done, kept = int(candidates[inserted[room]]), inserted[:room]
        current.set_many(positions[kept])
        current.size += kept.size
        self.size = (self.size + kept.size) & _MASK64
        answers[candidates[kept]] = True
        if done < a.size:
            try:
                self._room_for_one()  # opens the next sub-filter (or raises, as the server does)
            except RedisBloomError as error:
                error.done = done
                raise
        return done

    # --- what BF.INFO reports --------------------------------------------------------------
    @locked
    def info(self) -> dict:
        """``BF.INFO``'s five fields, in its order (Expansion rate None for NONSCALING).

        "Size" is the module's memory count: 32 bytes for the chain, 64 per sub-filter
        and the sub-filters' bits.

        >>> RedisBloomFilter(0.001, 1000, nonscaling=True).info()
        {'Capacity': 1000, 'Size': 1896, 'Number of filters': 1, 'Number of items inserted': 0, 'Expansion rate': None}
        """
        return {"Capacity": sum(link.entries for link in self.links),
                "Size": CHAIN_BYTES + sum(LINK_BYTES + link.nbytes for link in self.links),
                "Number of filters": len(self.links),
                "Number of items inserted": self.size,
                "Expansion rate": None if self.nonscaling else self.expansion}

    # --- BF.SCANDUMP and BF.LOADCHUNK --------------------------------------------------------
    @locked
    def header(self) -> bytes:
        """The bytes of ``BF.SCANDUMP key 0``: the chain's header and each sub-filter's.

        >>> len(RedisBloomFilter(0.01, 100).header())   # 20 + 53 per sub-filter
        73
        """
        return self._header()

    def _header(self) -> bytes:
        return _HEADER.pack(self.size, len(self.links), self.options, self.expansion) + \
            b"".join(link.header() for link in self.links)

    @locked
    def scandump(self) -> list[tuple[int, bytes]]:
        """The (iterator, data) pairs ``BF.SCANDUMP`` returns, in order, without the final (0, b"").

        >>> f = RedisBloomFilter(0.01, 100); f.add("x")
        True
        >>> [(iterator, len(data)) for iterator, data in f.scandump()]
        [(1, 73), (145, 144)]
        """
        pairs, iterator = [(1, self._header())], 1
        for link in self.links:
            for offset in range(0, link.nbytes, MAX_CHUNK):
                piece = link.data[offset:offset + MAX_CHUNK].tobytes()
                iterator += len(piece)
                pairs.append((iterator, piece))
        return pairs

    @locked
    def to_bytes(self) -> bytes:
        """The dump as one string: ``BF.SCANDUMP``'s header, then every sub-filter's bits in
        order (what the data of all its pairs joined make).

        >>> f = RedisBloomFilter(0.01, 100); f.add("x")
        True
        >>> RedisBloomFilter.from_bytes(f.to_bytes()) == f, len(f.to_bytes())
        (True, 217)
        """
        return b"".join([self._header(), *(link.data.tobytes() for link in self.links)])

    @classmethod
    def from_bytes(cls, data) -> "RedisBloomFilter":
        """Read what :meth:`to_bytes` wrote: the header is checked as the module checks it,
        and the length it implies before anything is allocated (:mod:`.redisbloom_dump`).

        >>> RedisBloomFilter.from_bytes(RedisBloomFilter(0.01, 100).to_bytes()[:-1])
        Traceback (most recent call last):
        ValueError: data is truncated: 216 bytes, a chain of 1 sub-filters takes 217
        """
        return redisbloom_dump.read(cls, data)

    def __reduce__(self):
        """Pickle through :meth:`to_bytes`, at every protocol.

        >>> import pickle
        >>> f = RedisBloomFilter(0.01, 10); f.add("x")
        True
        >>> all(pickle.loads(pickle.dumps(f, protocol)) == f for protocol in range(6))
        True
        """
        return type(self).from_bytes, (self.to_bytes(),)

    @classmethod
    def loadchunks(cls, pairs: Iterable[tuple[int, bytes]]) -> "RedisBloomFilter":
        """Rebuild a filter from ``BF.SCANDUMP`` pairs, as ``BF.LOADCHUNK`` replays them.

        Bad data raises ``ValueError`` with the module's reason.  The header is checked, and
        the chunks must hold every byte of its sub-filters once, before anything the size of
        the sub-filters is allocated (:mod:`.redisbloom_dump`).

        >>> f = RedisBloomFilter(0.01, 10); int(f.add_many(map(str, range(30))).sum())
        30
        >>> RedisBloomFilter.loadchunks(f.scandump()) == f
        True
        """
        return redisbloom_dump.load_chunks(cls, pairs)

    def __eq__(self, other: object) -> bool:
        """Equal when their dumps are equal (header and every bit)."""
        if not isinstance(other, RedisBloomFilter):
            return NotImplemented
        return self.header() == other.header() and \
            all(np.array_equal(x.data, y.data) for x, y in zip(self.links, other.links))

    __hash__ = None

    def __repr__(self) -> str:
        """n, p, the growth, the sub-filters, the fill (of all their bits) and the items counted
        as inserted (``added=``: ``BF.CARD``, an item found already is not counted).

        >>> f = RedisBloomFilter(0.01, 100); _ = f.add_many(range(150)); f
        RedisBloomFilter(capacity=100, error_rate=0.01, expansion=2, nonscaling=False, sub_filters=2, fill=0.27, added=150)
        """
        links = list(self.links)
        return filter_repr(self, f"capacity={self.capacity}, error_rate={self.error_rate!r}, "
                                 f"expansion={self.expansion}, nonscaling={self.nonscaling}, "
                                 f"sub_filters={len(links)}",
                           fill=sum(count_ones(link.data) for link in links)
                           / sum(link.bits for link in links), added=self.size)
