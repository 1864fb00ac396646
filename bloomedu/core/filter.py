"""The general Bloom filter, any m bits and any k hash functions: the reference to read.

Article 1 ends with a ``BloomFilter(numberOfHashFunctions, numberOfBits)`` whose size is a
power of two and whose k hash functions are k salted MurmurHash2 calls (that one is
:class:`bloomedu.SaltedBloomFilter`).  Here m is any size and each key is hashed once:
MurmurHash3 x64 128 gives two 64-bit halves (h1, h2) (:func:`bloomedu.core.hashing.key_hashes`),
and position i of the key is

    ``fmix64((h1 + i*h2) mod 2**64) mod m``, for i = 0 .. k-1

(double hashing, Kirsch and Mitzenmacher 2006, each value mixed before the reduction so that
small filters keep the rate of k independent hashes).  :func:`bit_position` is that formula
for one key; :func:`bit_positions` is its twin for a whole array of keys.  Article 2 sizes a
filter from n and p; so does :meth:`BloomFilter.from_capacity`.

Everything a filter does is here, one key at a time and then in bulk:

- ``add`` sets the k bits of a key, ``in`` checks them (stopping at the first clear one);
- ``add_many``, ``add_many_new`` and ``contains_many`` hash a batch in numpy
  (:func:`~bloomedu.core.hashing.hashed_batches`) and hand the hashes to the kernels of
  :mod:`bloomedu.kernels.bloom` (or their native twins, :mod:`bloomedu.kernels.backend`), which
  set or read exactly the bits ``add`` and ``in`` would (``tests/test_bulk.py`` checks them
  against the loop, key by key).

Taught in ``notebooks/06_inside_the_filter.ipynb`` (one key at a time),
``notebooks/07_false_positive_rate.ipynb`` (its rate, measured),
``notebooks/08_sizing_a_filter.ipynb`` (``from_capacity``, the bulk path) and
``notebooks/09_one_million_urls.ipynb`` (a million URLs); tested in ``tests/test_filter.py``,
``tests/test_bulk.py``, ``tests/test_serialization.py`` and ``tests/test_threads.py``.
"""

from __future__ import annotations

import numpy as np

from ..kernels import backend
from ..kernels.murmur import fmix64_array
from . import filter_bytes
from .bits import BitArray
from .checks import MAX_HASHES, MAX_NUM_BITS, check_storage, probability, whole_number
from .contract import Filter, filter_repr
from .filter_sets import SetOperations
from .hashing import cannot_fail, fmix64, hashed_batches, key_hashes
from .theory import estimate_count, size_for

__all__ = ["BloomFilter", "bit_position", "bit_positions", "bit_indices", "positions",
           "key_positions"]

_MASK64 = 0xFFFFFFFFFFFFFFFF


# --- the positions of a key: the formula, for one key and for many --------------------------
def bit_position(h1: int, h2: int, i: int, num_bits: int) -> int:
    """Position i of a key whose hash halves are (h1, h2): ``fmix64((h1 + i*h2) mod 2**64) mod m``.

    Reducing ``h1 + i*h2`` straight modulo m, as Guava does, ties the k positions together
    whenever h2 mod m is 0 or has a small order (about one key in m): on small filters the
    false-positive rate then runs several times above the exact rate
    (``notebooks/deeper/06_small_filters`` measures it).  Mixing each value with ``fmix64``
    first removes that.

    >>> bit_position(10, 3, i=1, num_bits=8)
    5
    >>> bit_position(10, 3, i=1, num_bits=0)
    Traceback (most recent call last):
    ValueError: num_bits must be an int in 1..2**63-1, got 0
    """
    h1, h2, i, num_bits = _checked(h1, h2, i, num_bits)  # ints in range, or a clear error
    return fmix64((h1 + i * h2) & _MASK64) % num_bits


def _checked(h1, h2, i, num_bits) -> tuple[int, int, int, int]:
    """The four arguments of :func:`bit_position` as ints in range, or an error naming one."""
    if (type(h1) is type(h2) is type(i) is type(num_bits) is int  # the filters' own calls
            and 0 <= h1 <= _MASK64 and 0 <= h2 <= _MASK64 and 0 <= i and 0 < num_bits):
        return h1, h2, i, num_bits
    return (whole_number(h1, "h1", 0, _MASK64), whole_number(h2, "h2", 0, _MASK64),
            whole_number(i, "i", 0, MAX_HASHES + 1024),
            whole_number(num_bits, "num_bits", 1, MAX_NUM_BITS))


def bit_positions(h1: np.ndarray, h2: np.ndarray, i: int, num_bits: int) -> np.ndarray:
    """:func:`bit_position` i of many keys at once: h1 and h2 are uint64 arrays (one element
    a key), the result an int64 array of their positions.

    >>> bit_positions(np.array([10, 5], np.uint64), np.array([3, 3], np.uint64), 1, 8).tolist()
    [5, 7]
    >>> [bit_position(10, 3, 1, 8), bit_position(5, 3, 1, 8)]
    [5, 7]
    """
    with np.errstate(over="ignore"):  # wraps modulo 2**64, as & _MASK64 above
        values = np.multiply(h2, np.uint64(i), dtype=np.uint64)
        values += h1
    fmix64_array(values, np.empty_like(values))
    values %= np.uint64(num_bits)
    return values.view(np.int64)  # below m < 2**63: a valid index


def bit_indices(h1: int, h2: int, *, num_bits: int, num_hashes: int) -> list[int]:
    """The k positions of a key: :func:`bit_position` for i = 0 .. k-1.

    >>> bit_indices(10, 3, num_bits=8, num_hashes=4)
    [5, 5, 4, 1]
    """
    num_hashes = whole_number(num_hashes, "num_hashes", 1, MAX_HASHES + 1024)
    return [bit_position(h1, h2, i, num_bits) for i in range(num_hashes)]


# positions() fills a table of at most this many cells in one pass (numpy's cost per call is paid
# once, not k times: a few keys into a filter of 60 slices called it 62 times a key); a larger one
# a row at a time, each row small enough to stay in cache
SMALL_TABLE = 1 << 15


def positions(h1: np.ndarray, h2: np.ndarray, *, num_bits: int, num_hashes: int,
              first: int = 0) -> np.ndarray:
    """A (k, n) int64 array: row i holds :func:`bit_positions` ``first + i`` of every key.

    >>> h1, h2 = key_hashes("123", 3)
    >>> positions(np.array([h1], np.uint64), np.array([h2], np.uint64),
    ...           num_bits=1024, num_hashes=3).ravel().tolist()
    [524, 190, 435]
    """
    if num_hashes * h1.size <= SMALL_TABLE:  # all rows in one pass: numpy's per-call cost, once
        steps = np.arange(first, first + num_hashes, dtype=np.uint64)[:, None]
        with np.errstate(over="ignore"):  # wraps modulo 2**64, as bit_positions
            values = np.multiply(h2[None, :], steps, dtype=np.uint64)
            values += h1[None, :]
        fmix64_array(values, np.empty_like(values))
        values %= np.uint64(num_bits)
        return values.view(np.int64)
    table = np.empty((num_hashes, h1.size), dtype=np.int64)
    for row, i in enumerate(range(first, first + num_hashes)):  # a row at a time: stays in cache
        table[row] = bit_positions(h1, h2, i, num_bits)
    return table


def key_positions(key, *, num_bits: int, num_hashes: int, spread: bool = True) -> list[int]:
    """The k positions of one key among m bits: ``BloomFilter(m, k).bit_indices(key)``.

    >>> key_positions("123", num_bits=1024, num_hashes=3)
    [524, 190, 435]
    """
    h1, h2 = key_hashes(key, num_hashes, spread=spread)
    return bit_indices(h1, h2, num_bits=num_bits, num_hashes=num_hashes)


class BloomFilter(Filter, SetOperations):
    """A Bloom filter of ``num_bits`` bits (m) and ``num_hashes`` hash functions (k).

    >>> f = BloomFilter(num_bits=1024, num_hashes=3)
    >>> f.add("123")
    >>> "123" in f, "456" in f
    (True, False)
    >>> f.bit_indices("123")
    [524, 190, 435]
    >>> f.nbytes
    128

    A key may be a str, bytes or an int; ``add`` sets its k bits and ``in`` answers True when
    all k are set: for every key added, and for a few others (the false positives).
    :meth:`from_capacity` sizes a filter from n and p; ``add_many`` and ``contains_many`` do
    the same as ``add`` and ``in`` for a whole batch (a list, or a numpy array of any integer
    dtype and byte order), fast; ``|`` and ``&`` combine two filters of the same m and k; and
    ``to_bytes``, ``from_bytes`` and pickle carry a filter to another process.

    **Threads** may share a filter.  Every write (``add``, ``add_many``, ``|=``, ``&=``) holds
    the filter's lock while it changes the bits, so no two writers interleave and no write is
    lost.  Reads (``in``, ``contains_many``, ``bit_indices``, ``==``, the estimates) take no
    lock: they never write, and a write only turns bits from 0 to 1 (``&=`` excepted).  So
    once ``add`` or ``add_many`` has returned, every later read finds the keys; a read that
    runs during the add of its key may answer False, as if it had come first.  ``copy`` and
    ``to_bytes`` hold the lock: their snapshot holds an ``add_many`` whole or not at all
    (above 40 Mi bits ``add_many`` writes in sorted batches, so a snapshot may hold its first
    batches).  Not safe: writing to ``f.bits`` yourself, or forking while another thread
    writes.  Processes never share a filter: send a copy with ``to_bytes()`` or pickle and
    combine copies with ``|``.

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
    def _hash(self, key) -> tuple[int, int]:
        """(h1, h2) of a key, the step h2 spread as this filter's hashing scheme says
        (a keyed filter hashes a secret tag of the key instead)."""
        return key_hashes(key, self.num_hashes, spread=self.HASHING != 1)

    def bit_indices(self, key: str | bytes | int) -> list[int]:
        """The k bit positions of a key.

        >>> BloomFilter(1024, 3).bit_indices("123")
        [524, 190, 435]
        >>> BloomFilter(1024, 3).bit_indices("")   # h2 = 0, made odd: spread like any key
        [0, 812, 999]
        """
        h1, h2 = self._hash(key)
        return [bit_position(h1, h2, i, self.num_bits) for i in range(self.num_hashes)]

    def add(self, key: str | bytes | int) -> None:
        """Insert a key (str, bytes or int): set its k bits.

        >>> f = BloomFilter(1024, 3); f.add("123")
        >>> sorted(f.bits.to_bools().nonzero()[0].tolist())
        [190, 435, 524]
        """
        indices = self.bit_indices(key)  # hashed outside the lock
        with self._lock:
            for index in indices:
                self.bits.set(index)

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
    def _hashed(self, keys):
        """(h1, h2) arrays of the keys, a chunk at a time, each step spread as in ``_hash``."""
        return hashed_batches(keys, self.num_hashes, spread=self.HASHING != 1)

    def add_many(self, keys) -> None:
        """Insert many keys: a numpy array, or an iterable of str/bytes/int.

        Sets exactly the bits that ``add`` would set for each key.  A numpy array may hold
        integers of any dtype and byte order (each key is its value, as ``add(int(x))``), str
        or bytes (``U``, ``S``) or any keys (object).  An ``S`` or ``U`` array whose element ends
        in NUL is refused: numpy cannot tell ``b"ab"`` from ``b"ab\\x00"`` in it (pass a list).
        If a key is rejected, no bit of the filter has changed.

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
        hashed, kernels = self._hashed(keys), backend.bloom()
        kernels.insert(self.bits.data, hashed, num_bits=self.num_bits, num_hashes=self.num_hashes,
                       lock=self._lock, checked=cannot_fail(keys))

    def add_many_new(self, keys) -> np.ndarray:
        """Add many keys; a bool array, True for each key that was new (as ``k not in f`` just
        before ``f.add(k)``, one key after the other: earlier keys of the batch count).

        >>> BloomFilter(1024, 3).add_many_new(["a", "b", "a"]).tolist()
        [True, True, False]
        """
        hashed, kernels = self._hashed(keys), backend.bloom()
        return kernels.add_new(self.bits.data, hashed, num_bits=self.num_bits,
                               num_hashes=self.num_hashes, lock=self._lock)

    def contains_many(self, keys) -> np.ndarray:
        """A bool array: for each key, whether the filter might contain it.

        >>> f = BloomFilter(1024, 3)
        >>> f.add_many(["a", "b"])
        >>> f.contains_many(["a", "b", "zzz"]).tolist()
        [True, True, False]
        """
        hashed, kernels = self._hashed(keys), backend.bloom()
        return kernels.contains(self.bits.data, hashed, num_bits=self.num_bits,
                                num_hashes=self.num_hashes)

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
        """Estimated number of distinct keys inserted, from the bits set (Swamidass and Baldi):
        ``-(m/k) ln(1 - X/m)`` with X the bits set (:func:`bloomedu.core.theory.estimate_count`).

        >>> f = BloomFilter(10_000, 5); f.add_many(range(700))
        >>> round(f.approximate_count())
        698
        """
        return estimate_count(num_bits=self.num_bits, num_hashes=self.num_hashes,
                              bits_set=self.bits_set())

    # --- set operations (bloomedu.core.filter_sets), copies, equality -----------------
    def _check_compatible(self, other: object) -> "BloomFilter":
        """``other``, if its bits can be combined with these (``|``, ``&``); else a clear error."""
        if not isinstance(other, BloomFilter):
            raise TypeError(f"can only combine with a BloomFilter, not {type(other).__name__}")
        for name in ("num_bits", "num_hashes", "HASHING"):
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine != theirs:
                why = "" if name != "HASHING" else (": the two place some keys on different "
                                                    "bits; add one's keys to a new filter")
                raise ValueError(f"{name} differs: {mine} vs {theirs}{why}")
        return other

    def bits_snapshot(self, start: int = 0, stop: int | None = None) -> np.ndarray:
        """A copy of bytes ``start:stop`` of the bit storage, read under the filter's lock: no
        write is halfway through it.

        >>> f = BloomFilter(64, 1); f.add_many(range(3)); f.bits_snapshot().tolist() == f.bits.data.tolist()
        True
        """
        with self._lock:
            return self.bits.data[start:stop].copy()

    def copy(self) -> "BloomFilter":
        """An independent filter with the same m, k, hashing scheme and bits (a snapshot).

        >>> f = BloomFilter(64, 2); g = f.copy(); g.add("x")
        >>> "x" in f, "x" in g
        (False, True)
        """
        return self._with_bits(self.bits_snapshot())

    def _with_bits(self, data: np.ndarray) -> "BloomFilter":
        """A new filter of this one's class, parameters and scheme, holding ``data`` as its bits."""
        new = type(self)(self.num_bits, self.num_hashes)
        new.HASHING = self.HASHING  # one read from older bytes keeps their scheme
        new.bits.data[:] = data
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
        return filter_bytes.dump(self.HASHING, self.bits_snapshot(), num_bits=self.num_bits,
                                 num_hashes=self.num_hashes)

    @classmethod
    def from_bytes(cls, data: bytes) -> "BloomFilter":
        """Read what :meth:`to_bytes` wrote; anything else raises ``ValueError``.

        >>> BloomFilter.from_bytes(b"BLMD")
        Traceback (most recent call last):
        ValueError: data is truncated: 4 bytes, the header alone is 24
        """
        hashing, num_bits, num_hashes, bits, _ = filter_bytes.load(data, cls.HASHING,
                                                                   cls._READ_HASHING)
        new = cls(num_bits, num_hashes)
        new.HASHING = hashing  # scheme 1: its keys keep the positions they were added at
        new.bits.data[:] = bits
        return new

    def __reduce__(self):
        """Pickle through :meth:`to_bytes`, at every protocol.

        >>> import pickle
        >>> f = BloomFilter(64, 2); f.add("x")
        >>> pickle.loads(pickle.dumps(f)) == f
        True
        """
        return type(self).from_bytes, (self.to_bytes(),)

    def _repr_parameters(self) -> str:
        """What ``repr`` shows before the fill (a subclass may add to it)."""
        return f"num_bits={self.num_bits}, num_hashes={self.num_hashes}"

    def __repr__(self) -> str:
        """m, k, the fill and the keys that went in: a Bloom filter keeps nothing but its bits, so
        ``added~`` is :meth:`approximate_count`, estimated from the fill (repeats are not counted).

        >>> f = BloomFilter.from_capacity(1000, 0.01); f.add_many(range(1000)); f
        BloomFilter(num_bits=9586, num_hashes=7, fill=0.52, added~1002)
        """
        bits_set = self.bits_set()  # once: fill and estimate from the same bits
        return filter_repr(self, self._repr_parameters(), fill=bits_set / self.num_bits,
                           estimated=True, added=estimate_count(num_bits=self.num_bits, num_hashes=self.num_hashes,
                                                bits_set=bits_set))
