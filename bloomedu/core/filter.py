"""The general Bloom filter: any m bits, any k hash functions.

Article 1 ends with a ``BloomFilter(numberOfHashFunctions, numberOfBits)`` whose size is a
power of two and whose k hash functions are k salted MurmurHash2 calls (that one is
:class:`bloomedu.SaltedBloomFilter`).  Here m is any size and each key is hashed once:
MurmurHash3 x64 128 gives (h1, h2), and position i is ``fmix64(h1 + i*h2 mod 2**64) mod m``
(double hashing, Kirsch and Mitzenmacher 2006, each value mixed before the reduction so that
small filters keep the rate of k independent hashes: :mod:`bloomedu.core.positions`).
Article 2 sizes a filter from n and p; so does :meth:`BloomFilter.from_capacity`.

The per-key methods (``add``, ``in``, ``bit_indices``) are written to be read; ``add_many``
and ``contains_many`` do the same work on numpy arrays (:mod:`bloomedu.core.bulk_query`,
:mod:`bloomedu.core.large`).  Union ``|``, intersection ``&`` (:mod:`bloomedu.core.filter_sets`), ``copy``, bytes
(:mod:`bloomedu.core.filter_bytes`), pickling and estimates read from the bits are here too.

Taught in ``notebooks/06_inside_the_filter.ipynb`` (one key at a time),
``notebooks/07_false_positive_rate.ipynb`` (its rate, measured),
``notebooks/08_sizing_a_filter.ipynb`` (``from_capacity``, the bulk path) and
``notebooks/09_one_million_urls.ipynb`` (a million URLs); tested in ``tests/test_filter.py``, ``tests/test_bulk.py``,
``tests/test_serialization.py`` and ``tests/test_threads.py``.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from . import bulk_query, filter_bytes, large, segments
from .bits import BitArray
from .checks import MAX_HASHES, MAX_NUM_BITS, check_storage, probability, whole_number
from .contract import EXAMPLE_FPP, Filter
from .filter_sets import SetOperations
from .hashing import _bit_position as bit_position
from .hashing import _double_hash_indices as double_hash_indices
from .locking import LockedWrites
from .positions import hashed_batches, joined, key_hashes, positions
from .theory import estimate_count, size_for

__all__ = ["BloomFilter"]

_CHUNK_KEYS = 1 << 15  # keys per chunk: bounds a bulk call's memory, keeps buffers in cache


class BloomFilter(Filter, SetOperations, LockedWrites):
    """A Bloom filter of ``num_bits`` bits (m) and ``num_hashes`` hash functions (k).

    >>> f = BloomFilter(num_bits=1024, num_hashes=3)
    >>> f.add("123")
    >>> "123" in f, "456" in f
    (True, False)
    >>> f.bit_indices("123")
    [524, 190, 435]
    >>> f.nbytes
    128

    Threads may share a filter.  Every write (``add``, ``add_many``, ``|=``,
    ``&=``) holds the filter's lock while it reads, ORs and writes back the
    bytes it changes, so no two writers interleave and no write is lost.
    Reads (``in``, ``contains_many``, ``bit_indices``, ``==``, the estimates)
    take no lock: they never write, so they cannot undo a write, and a write
    only turns bits from 0 to 1 (``&=`` excepted, which is meant to clear
    bits).  So once ``add`` or ``add_many`` has returned, all the keys' bits are
    set and every later read finds them; a read that runs during the add of its
    key may answer False, as if it had come first.  ``copy`` and ``to_bytes``
    hold the lock: their snapshot holds an ``add_many`` whole or not at all
    (above 40 Mi bits ``add_many`` writes chunk by chunk, so a snapshot may hold
    its first chunks).  ``a |= b`` copies b's bits block by block under b's lock
    and ORs them in under a's, never holding both, so ``a |= b`` and
    ``b |= a`` in two threads cannot deadlock.  Not safe: writing to ``f.bits`` yourself
    (a :class:`~bloomedu.core.bits.BitArray` has no lock), or forking while another thread
    writes.  Processes never share a filter: each works on its own copy; send it back with
    ``to_bytes()`` or pickle (each copy makes its own lock) and combine the copies with ``|``.

    >>> import threading
    >>> f = BloomFilter(1 << 16, 3)
    >>> parts = [[f"{t}-{i}" for i in range(500)] for t in range(4)]
    >>> threads = [threading.Thread(target=f.add_many, args=(part,)) for part in parts]
    >>> for thread in threads: thread.start()
    >>> for thread in threads: thread.join()
    >>> all(key in f for part in parts for key in part)
    True
    """

    # In to_bytes. 2: h2 | 1 for a step whose k values repeat; a filter read from scheme-1
    # bytes (h2 as it is) keeps scheme 1, so the keys it holds keep their positions.
    HASHING = 2
    _READ_HASHING = (1, 2)  # the schemes from_bytes reads (3 is KeyedBloomFilter's)

    def __init__(self, num_bits: int, num_hashes: int):  # m < 2**63 that fits memory; k <= 1024
        self.num_bits = whole_number(num_bits, "num_bits", 1, MAX_NUM_BITS)
        self.num_hashes = whole_number(num_hashes, "num_hashes", 1, MAX_HASHES)
        self.bits = BitArray(self.num_bits, word_bits=64)  # refuses what memory cannot hold
        self._m64 = np.uint64(self.num_bits)

    @classmethod
    def example_arguments(cls, capacity: int, keys=(), **services) -> dict:
        """m and k for ``capacity`` keys at 1% (:mod:`bloomedu.core.contract`).

        >>> BloomFilter.example_arguments(1000)
        {'num_bits': 9586, 'num_hashes': 7}
        """
        num_bits, num_hashes = size_for(n=capacity, p=EXAMPLE_FPP)
        return {"num_bits": num_bits, "num_hashes": num_hashes}

    @classmethod
    def from_capacity(cls, expected_items: int, fpp: float) -> "BloomFilter":
        """Size a filter for n expected items at false-positive rate p.

        m = ceil(-n ln p / (ln 2)^2) and the best whole k
        (:func:`~bloomedu.core.theory.size_for`, the library's one sizing rule); too large is
        said in n and p.

        >>> f = BloomFilter.from_capacity(1_000_000, 0.001)
        >>> f.num_bits, f.num_hashes, f.nbytes
        (14377588, 10, 1797200)
        >>> BloomFilter.from_capacity(2**62, 0.01)
        Traceback (most recent call last):
        ValueError: expected_items=4611686018427387904 at fpp=0.01 needs 44203279704715722752 bits, more than the 2**63-1 a filter can hold
        """
        n = whole_number(expected_items, "expected_items", 1, MAX_NUM_BITS)
        p = probability(fpp, "fpp")
        asked = f"expected_items={n} at fpp={p}"
        m, k = size_for(n=n, p=p, asked=asked)
        check_storage(8 * -(-m // 64), f"{asked} (num_bits={m})")
        return cls(m, k)

    # --- one key at a time ------------------------------------------------------
    def bit_indices(self, key: str | bytes | int) -> list[int]:
        """The k bit positions of a key: ``fmix64((h1 + i*h2) mod 2**64) mod m`` for i = 0..k-1.

        >>> BloomFilter(1024, 3).bit_indices("123")
        [524, 190, 435]
        >>> BloomFilter(1024, 3).bit_indices("")   # h2 = 0, made odd: spread like any key
        [0, 812, 999]
        """
        h1, h2 = self._hash(key)
        return double_hash_indices(h1, h2, self.num_hashes, self.num_bits)

    def _hash(self, key: str | bytes | int) -> tuple[int, int]:
        """(h1, h2) of a key, with the step h2 spread as this filter's hashing scheme says."""
        return key_hashes(key, self.num_hashes, spread=self.HASHING != 1)

    def add(self, key: str | bytes | int) -> None:
        """Insert a key (str, bytes or int): set its k bits.

        >>> f = BloomFilter(1024, 3); f.add("123")
        >>> sorted(f.bits.to_bools().nonzero()[0].tolist())
        [190, 435, 524]
        """
        self._set_bits(self.bits, self.bit_indices(key))

    def __contains__(self, key: str | bytes | int) -> bool:
        """True if all k bits of the key are set: inserted, or a false positive.

        >>> f = BloomFilter(1024, 3); f.add(42)
        >>> 42 in f, 43 in f
        (True, False)
        """
        h1, h2 = self._hash(key)  # positions one by one: a "no" stops at the first clear bit
        return all(self.bits[bit_position(h1, h2, i, self.num_bits)]
                   for i in range(self.num_hashes))

    # --- many keys at once --------------------------------------------------------
    def _hashed_chunks(self, keys) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """:func:`~bloomedu.core.positions.hashed_batches`, each step h2 spread as in ``_hash``."""
        yield from hashed_batches(keys, self.num_hashes, _CHUNK_KEYS, spread=self.HASHING != 1)

    def _chunk_positions(self, keys) -> Iterator[np.ndarray]:
        """Every key's k positions: one array per chunk of keys and per i."""
        return bulk_query.chunk_positions(self._hashed_chunks(keys), self.num_hashes, self._m64)

    def add_many(self, keys) -> None:
        """Insert many keys: a numpy array, or an iterable of str/bytes/int.

        Sets exactly the bits that ``add`` would set for each key.  A numpy array
        may hold integers of any dtype and byte order (each key is its value, as
        ``add(int(x))``), str or bytes (``U``, ``S``) or any keys (object).  An
        ``S`` or ``U`` array whose element ends in NUL is refused: numpy cannot
        tell ``b"ab"`` from ``b"ab\\x00"`` in it (pass a list).  If a key is
        rejected, no bit of the filter has changed: for m up to 40 Mi bits the
        bits are staged in a scratch array first; a larger filter hashes every
        key first, then sorts and writes its positions in batches
        (:mod:`bloomedu.core.large`).

        >>> f = BloomFilter(1024, 3)
        >>> f.add_many(np.arange(100, dtype=">u8"))   # big-endian, as read from the network
        >>> bool(f.contains_many(np.arange(100, dtype=np.uint64)).all()), 99 in f
        (True, True)
        >>> f.add_many(np.array(["ab", "c"]))
        Traceback (most recent call last):
        ...
        ValueError: keys[1] of the U2 array ends in NUL: ... pass a list of str ...
        >>> f.add_many(["ab", "c"]); "c" in f
        True
        """
        if not self.bits.stages_everything:  # hashes every key first: a bad key changes nothing
            return large.insert(self, keys)
        self.bits.set_chunks(self._chunk_positions(keys), lock=self._lock)

    def add_many_new(self, keys) -> np.ndarray:
        """Add many keys; a bool array, True for each key that was new (as ``k not in f`` just
        before ``f.add(k)``, one key after the other: earlier keys of the batch count).

        >>> BloomFilter(1024, 3).add_many_new(["a", "b", "a"]).tolist()
        [True, True, False]
        """
        return large.add_new(self, keys)

    def contains_many(self, keys) -> np.ndarray:
        """A bool array: for each key, whether the filter might contain it.

        >>> f = BloomFilter(1024, 3)
        >>> f.add_many(["a", "b"])
        >>> f.contains_many(["a", "b", "zzz"]).tolist()
        [True, True, False]

        Position i is computed only for the keys whose first i bits are all set (most absent
        keys fail at their first bit or two): see :mod:`bloomedu.core.bulk_query`.
        """
        return bulk_query.contains_many(self.bits, self._hashed_chunks(keys), self.num_hashes,
                                        self._m64, _CHUNK_KEYS)

    # --- what a batch may change (bloomedu.steps.sequential) -------------------------
    def inserts_before_change(self) -> None:
        """None: a Bloom filter never changes shape (:mod:`bloomedu.core.segments`)."""
        return None

    def segment_writes(self, keys) -> segments.Writes:
        """The bits each key's ``add`` sets and which are set now (:mod:`bloomedu.core.segments`).

        >>> f = BloomFilter(64, 2); f.add("a")
        >>> w = f.segment_writes(["a", "b"]); w.seen.tolist(), w.now_set.all(axis=1).tolist()
        ([True, False], [True, False])
        """
        h1, h2 = joined(self._hashed_chunks(keys))  # the filter's own hashing: tags, schemes
        cells = positions(h1, h2, self.num_hashes, self.num_bits)
        now_set = self.bits.get_unchecked(cells)
        return segments.Writes(now_set.all(axis=0), cells.T, now_set.T)

    # --- what the filter holds ----------------------------------------------------
    @property
    def nbytes(self) -> int:
        """Bytes of bit storage: 8 * ceil(m / 64).

        >>> BloomFilter(65, 1).nbytes
        16
        """
        return self.bits.nbytes

    def bits_set(self) -> int:
        """Number of bits set to 1 (X, in the estimates below).

        >>> f = BloomFilter(1024, 3); f.add("123"); f.bits_set()
        3
        """
        return self.bits.count()

    @property
    def fill_ratio(self) -> float:
        """The fraction of the m bits set to 1.

        >>> f = BloomFilter(64, 2); f.add_many([5, 6])
        >>> f.fill_ratio == f.bits_set() / 64
        True
        """
        return self.bits_set() / self.num_bits

    def current_false_positive_rate(self) -> float:
        """The false-positive rate now: a key never inserted hits k set bits, fill_ratio ** k.

        Exact for uniform positions given the bits actually set; no formula in n.

        >>> f = BloomFilter(1000, 3)
        >>> f.current_false_positive_rate()
        0.0
        >>> f.add_many(range(100)); round(f.current_false_positive_rate(), 4)
        0.0174
        """
        return self.fill_ratio ** self.num_hashes

    def approximate_count(self) -> float:
        """Estimated number of distinct keys inserted, from the bits set (Swamidass and Baldi).

        ``-(m/k) ln(1 - X/m)`` with X the bits set: see
        :func:`bloomedu.core.theory.estimate_count`.

        >>> f = BloomFilter(10_000, 5); f.add_many(range(700))
        >>> round(f.approximate_count())
        698
        """
        return estimate_count(num_bits=self.num_bits, num_hashes=self.num_hashes,
                              bits_set=self.bits_set())

    # --- set operations (bloomedu.core.filter_sets), copies, equality -----------------
    def _check_compatible(self, other: object) -> "BloomFilter":
        if not isinstance(other, BloomFilter):
            raise TypeError(f"can only combine with a BloomFilter, not {type(other).__name__}")
        for name in ("num_bits", "num_hashes", "HASHING"):
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine != theirs:
                why = "" if name != "HASHING" else (": the two place some keys on different "
                                                    "bits; add one's keys to a new filter")
                raise ValueError(f"{name} differs: {mine} vs {theirs}{why}")
        return other

    def copy(self) -> "BloomFilter":
        """An independent filter with the same m, k, hashing scheme and bits (a snapshot).

        >>> f = BloomFilter(64, 2); g = f.copy(); g.add("x")
        >>> "x" in f, "x" in g
        (False, True)
        """
        new = type(self)(self.num_bits, self.num_hashes)
        if self.HASHING != new.HASHING:  # read from older bytes: the copy keeps their scheme
            new.HASHING = self.HASHING
        new.bits = self._snapshot(self.bits)
        return new

    def __eq__(self, other: object) -> bool:
        """Equal when m, k, hashing and every bit agree.

        >>> BloomFilter(64, 2) == BloomFilter(64, 2), BloomFilter(64, 2) == BloomFilter(64, 3)
        (True, False)
        """
        if not isinstance(other, BloomFilter):
            return NotImplemented
        return (self.num_bits, self.num_hashes, self.HASHING) == \
            (other.num_bits, other.num_hashes, other.HASHING) and self.bits == other.bits

    __hash__ = None  # mutable: not a dict key

    # --- bytes and pickling ---------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """A versioned header, then the bit storage (:mod:`bloomedu.core.filter_bytes`).

        >>> f = BloomFilter(100, 3); f.add("x")
        >>> data = f.to_bytes()
        >>> len(data), data[:4]
        (40, b'BLMD')
        >>> BloomFilter.from_bytes(data) == f
        True
        """
        return filter_bytes.dump(self)

    @classmethod
    def from_bytes(cls, data: bytes) -> "BloomFilter":
        """Read what :meth:`to_bytes` wrote; anything else raises ``ValueError``.

        >>> BloomFilter.from_bytes(b"BLMD")
        Traceback (most recent call last):
        ValueError: data is truncated: 4 bytes, the header alone is 24
        """
        return filter_bytes.load(cls, data)

    def __reduce__(self):
        """Pickle through :meth:`to_bytes`, at every protocol.

        >>> import pickle
        >>> f = BloomFilter(64, 2); f.add("x")
        >>> pickle.loads(pickle.dumps(f)) == f
        True
        """
        return type(self).from_bytes, (self.to_bytes(),)

    def __repr__(self) -> str:  # m and k only: nothing is read from the bits
        return f"{type(self).__name__}(num_bits={self.num_bits}, num_hashes={self.num_hashes})"
