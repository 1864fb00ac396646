"""Apache Spark's ``BloomFilter``, bit for bit: both versions of its bytes.

Where the article's day outgrows one machine, a data engineer asks Spark for the filter:
``df.stat.bloomFilter(column, n, fpp)`` (``org.apache.spark.util.sketch.BloomFilter``).
:class:`SparkBloomFilter` does what Spark does, so a filter made here is read by
``BloomFilter.readFrom`` in the JVM and one Spark wrote is read here:

- sizing, as Guava's (Spark's is a copy): m = ``(long)(-n ln p / (ln 2)^2)``,
  k = ``max(1, (int) Math.round(m / n * ln 2))``, the bits in ceil(m / 64) 64-bit words, and
  positions taken modulo ``bitSize`` = 64 * words;
- hashing: h1 = H(key, seed), h2 = H(key, h1), with H Spark's Murmur3 x86_32
  (:mod:`bloomedu.compat.spark_murmur`): ``putString`` hashes the UTF-8 bytes, ``putBinary``
  the bytes, ``putLong`` the long;
- **version 1** (what Spark up to 4.0 writes): for i = 1..k, c = h1 + i*h2 as a Java int,
  c = ~c if negative, bit ``c % bitSize``.  c is below 2**31, so a filter of more bits
  never uses the rest (:func:`reachable_bits`);
- **version 2** (Spark 4.1 on, SPARK-47547): c = h1 * Integer.MAX_VALUE as a Java long, then k
  times: c += h2 (wrapping as a long), bit ``(c < 0 ? ~c : c) % bitSize``; the flip is for the
  index only, c itself runs on (one source version of the change kept the flipped value:
  Spark 4.3.0's own bytes, in the tests, settle it);
- ``writeTo``: big-endian int32 version, int32 k, (version 2) int32 seed, int32 number of
  words, then the words as int64; bit b is in word ``b >> 6`` under ``1 << (b & 63)``.

``df.stat.bloomFilter`` goes through Spark's ``bloom_filter_agg``, which caps n at 4,000,000
and the bits at 67,108,864 (``spark.sql.optimizer.runtime.bloomFilter.maxNumItems`` and
``maxNumBits``): :func:`dataframe_sizing` gives the n and m it really uses.

Tested against the real engine (pyspark in local mode, both directions, both versions) in
``tests/test_spark.py`` and against recorded bytes in ``tests/test_spark_vectors.py``.

>>> f = SparkBloomFilter(1000, 0.01); f.put("città")
True
>>> "città" in f, f.might_contain(b"citt\\xc3\\xa0"), f.bit_size, f.num_hash_functions
(True, True, 9600, 7)
>>> f.to_bytes()[:16].hex()   # version 2, k = 7, seed 0, 150 words
'00000002000000070000000000000096'
"""

from __future__ import annotations

import math

import numpy as np

from ..core.bits import BitArray
from ..core.checks import MAX_HASHES, check_storage, is_int, one_of, probability, whole_number
from ..core.contract import Filter, filter_repr
from ..core.filter_sets import SetOperations
from ..core.hashing import key_chunks
from ..core.serial import as_bytes, expect_length
from .java import java_round, java_utf8, signed32
from .spark_murmur import (java_int, spark_hash_bytes, spark_hash_bytes_many, spark_hash_long,
                           spark_hash_longs)

__all__ = ["SparkBloomFilter", "spark_num_bits", "spark_num_hashes", "spark_bit_indices",
           "spark_bit_indices_many", "reachable_bits", "dataframe_sizing", "V1_REACHABLE_BITS"]

V1_REACHABLE_BITS = 2 ** 31  # version 1's c is a non-negative Java int: bits 0 .. 2**31 - 1
_LONG_MIN, _LONG_MAX = -2 ** 63, 2 ** 63 - 1
_INT_MIN, _INT_MAX = -2 ** 31, 2 ** 31 - 1
_MASK64 = (1 << 64) - 1
_LN2 = math.log(2)
_HEADERS = {1: 12, 2: 16}  # version, k, [seed,] number of words
_DATAFRAME_MAX_ITEMS = 4_000_000
_DATAFRAME_MAX_BITS = 67_108_864


def _signed64(value: int) -> int:
    value &= _MASK64
    return value - (1 << 64) if value >> 63 else value


def spark_num_bits(*, n: int, p: float) -> int:
    """``BloomFilter.optimalNumOfBits(n, p)``: ``(long)(-n * ln p / (ln 2)^2)``, truncated.

    >>> spark_num_bits(n=1000, p=0.01), spark_num_bits(n=864_000_000, p=0.01)
    (9585, 8281490438)
    """
    n = whole_number(n, "n", 1, _LONG_MAX)
    p = probability(p, "p")
    return min(int(-n * math.log(p) / (_LN2 * _LN2)), _LONG_MAX)


def spark_num_hashes(*, num_bits: int, n: int) -> int:
    """``optimalNumOfHashFunctions(n, m)``: ``max(1, (int) Math.round((double) m / n * ln 2))``.

    >>> spark_num_hashes(num_bits=9585, n=1000), spark_num_hashes(num_bits=67_108_864, n=4_000_000)
    (7, 12)
    """
    n = whole_number(n, "n", 1, _LONG_MAX)
    m = whole_number(num_bits, "num_bits", 1, _LONG_MAX)
    return max(1, signed32(java_round(m / n * _LN2)))


def dataframe_sizing(expected_items: int, fpp: float, *, max_num_items: int = _DATAFRAME_MAX_ITEMS,
                     max_num_bits: int = _DATAFRAME_MAX_BITS) -> tuple[int, int]:
    """(n, m) that ``df.stat.bloomFilter(col, expected_items, fpp)`` builds with: m from the
    n asked for, then each capped by ``bloom_filter_agg``, at the session's
    ``spark.sql.optimizer.runtime.bloomFilter.maxNumItems`` and ``maxNumBits`` (``max_num_items``
    and ``max_num_bits`` here, Spark's defaults unless given).  k follows from the capped pair.

    >>> dataframe_sizing(1000, 0.01)
    (1000, 9585)
    >>> dataframe_sizing(864_000_000, 0.01)   # the article's day: 8 MiB, whatever n asks
    (4000000, 67108864)
    """
    n = whole_number(expected_items, "expected_items", 1, _LONG_MAX)
    num_bits = spark_num_bits(n=n, p=probability(fpp, "fpp"))
    max_num_items = whole_number(max_num_items, "max_num_items", 1, _LONG_MAX)
    max_num_bits = whole_number(max_num_bits, "max_num_bits", 1, _LONG_MAX)
    return min(n, max_num_items), min(num_bits, max_num_bits)


def reachable_bits(bit_size: int, version: int) -> int:
    """How many of a filter's ``bit_size`` bits a key can ever set: all of them in version 2;
    in version 1 at most :data:`V1_REACHABLE_BITS` (2**31), since c is a non-negative Java int.

    >>> reachable_bits(9600, 1), reachable_bits(8_281_490_496, 1), reachable_bits(8_281_490_496, 2)
    (9600, 2147483648, 8281490496)

    At the article's scale (864 M IDs at 1 %, k = 7) version 1 spreads the keys over 2**31 bits
    instead of 8.3e9, and its rate is the rate of that smaller filter:

    >>> from bloomedu.core.theory import false_positive_rate
    >>> m = 64 * -(-spark_num_bits(n=864_000_000, p=0.01) // 64)
    >>> [f"{false_positive_rate(num_bits=reachable_bits(m, v), num_hashes=7, n=864_000_000):.4f}"
    ...  for v in (1, 2)]
    ['0.6493', '0.0100']
    """
    bit_size = whole_number(bit_size, "bit_size", 1, _LONG_MAX)
    version = one_of(version, "version", (1, 2))
    return min(bit_size, V1_REACHABLE_BITS) if version == 1 else bit_size


def spark_bit_indices(h1: int, h2: int, num_hashes: int, bit_size: int, version: int) -> list[int]:
    """The k bit positions of a key with hashes (h1, h2), in Spark's order: the reference.

    >>> spark_bit_indices(721651713, -1891752531, 3, 64, 1)
    [17, 27, 55]
    >>> spark_bit_indices(721651713, -1891752531, 3, 64, 2)
    [44, 25, 6]
    """
    h1, h2 = java_int(h1, "h1"), java_int(h2, "h2")
    num_hashes = whole_number(num_hashes, "num_hashes", 1, MAX_HASHES)
    bit_size = whole_number(bit_size, "bit_size", 1, _LONG_MAX)
    version = one_of(version, "version", (1, 2))
    return _bit_indices(h1, h2, num_hashes, bit_size, version)


def _bit_indices(h1: int, h2: int, num_hashes: int, bit_size: int, version: int) -> list[int]:
    """:func:`spark_bit_indices` of arguments already checked (a filter's own calls)."""
    out = []
    if version == 1:
        for i in range(1, num_hashes + 1):
            c = signed32(h1 + i * h2)       # int arithmetic: wraps at 2**31
            out.append((~c if c < 0 else c) % bit_size)
        return out
    c = h1 * _INT_MAX                       # (long) h1 * Integer.MAX_VALUE
    for _ in range(num_hashes):
        c = _signed64(c + h2)               # long arithmetic: wraps at 2**63
        out.append((~c if c < 0 else c) % bit_size)   # flipped for the index only
    return out


def spark_bit_indices_many(h1: np.ndarray, h2: np.ndarray, num_hashes: int, bit_size: int,
                           version: int) -> np.ndarray:
    """:func:`spark_bit_indices` of int32 arrays h1 and h2: a (keys, k) int64 array.

    >>> spark_bit_indices_many(np.array([721651713], np.int32), np.array([-1891752531], np.int32),
    ...                        3, 64, 2).tolist()
    [[44, 25, 6]]
    """
    out = np.empty((h1.size, num_hashes), dtype=np.int64)
    size = np.int64(bit_size)
    with np.errstate(over="ignore"):
        if version == 1:
            h1, h2 = h1.astype(np.int32), h2.astype(np.int32)
            for i in range(1, num_hashes + 1):
                c = h1 + np.int32(i) * h2           # wraps as a Java int
                out[:, i - 1] = np.where(c < 0, ~c, c).astype(np.int64) % size
            return out
        c = h1.astype(np.int64) * np.int64(_INT_MAX)
        step = h2.astype(np.int64)
        for i in range(num_hashes):
            c = c + step                            # wraps as a Java long
            out[:, i] = np.where(c < 0, ~c, c) % size
    return out


def _key(item, name: str = "item"):
    """(bytes, None) for a str (Java's UTF-8) or bytes-like key, (None, value) for a long."""
    if isinstance(item, str):
        return java_utf8(item), None
    if isinstance(item, (bytes, bytearray, memoryview)):
        return bytes(item), None
    if is_int(item):
        value = int(item)
        if not _LONG_MIN <= value <= _LONG_MAX:
            raise ValueError(f"{name} must be an int in -2**63..2**63-1 (a Java long: Spark's "
                             f"putLong), got {value if value.bit_length() < 200 else 'a larger int'}")
        return None, value
    raise TypeError(f"{name} must be str (putString), bytes (putBinary) or an int in "
                    f"-2**63..2**63-1 (putLong), not {type(item).__name__}")


def _shape(f: "SparkBloomFilter") -> tuple[int, int, int, int]:
    """What two filters must share to be merged: (version, bit size, k, seed)."""
    return f.version, f.bit_size, f.num_hash_functions, f.seed


class SparkBloomFilter(Filter, SetOperations):
    """A filter equal to Spark's ``BloomFilter.create(expected_items, fpp)``, bit for bit, in
    version 2 (Spark 4.1 on) or 1 (Spark up to 4.0).

    ``put`` and ``might_contain`` are Spark's names (``add`` and ``in`` the project's);
    a str key is ``putString``, bytes ``putBinary``, an int ``putLong``.  ``seed`` is version
    2's seed (``BloomFilter.create(V2, n, numBits, seed)``; ``df.stat.bloomFilter`` uses 0).

    >>> f = SparkBloomFilter(10, 0.1, version=1); f.put_many(["a", b"b", -5])
    >>> f.might_contain_many(["a", b"b", -5, "z"]).tolist(), f.bit_size, f.num_hash_functions
    ([True, True, True, False], 64, 3)
    >>> SparkBloomFilter.from_bytes(f.to_bytes()) == f
    True
    """

    __slots__ = ("bits", "num_hash_functions", "version", "seed")

    def __init__(self, expected_items: int, fpp: float, version: int = 2, *, seed: int = 0):
        n = whole_number(expected_items, "expected_items", 1, _LONG_MAX)
        fpp = probability(fpp, "fpp")
        num_bits = spark_num_bits(n=n, p=fpp)
        if num_bits <= 0:
            raise ValueError(f"Spark cannot create a filter of 0 bits (expected_items={n}, "
                             f"fpp={fpp}): -n ln(p) / (ln 2)^2 is below 1; lower fpp or raise n")
        self._make(n, num_bits, version, seed, f"expected_items={n} at fpp={fpp}")

    @classmethod
    def with_num_bits(cls, expected_items: int, num_bits: int, version: int = 2, *,
                      seed: int = 0) -> "SparkBloomFilter":
        """Spark's ``BloomFilter.create(expectedNumItems, numBits)`` (and, with a version and a
        seed, ``create(version, n, numBits, seed)``): what ``bloom_filter_agg`` and so
        ``df.stat.bloomFilter`` build (:func:`dataframe_sizing`).

        >>> f = SparkBloomFilter.with_num_bits(*dataframe_sizing(864_000_000, 0.01))
        >>> f.bit_size, f.num_hash_functions, len(f.to_bytes())
        (67108864, 12, 8388624)
        """
        n = whole_number(expected_items, "expected_items", 1, _LONG_MAX)
        num_bits = whole_number(num_bits, "num_bits", 1, _LONG_MAX)
        new = cls.__new__(cls)
        cls._make(new, n, num_bits, version, seed, f"expected_items={n}, num_bits={num_bits}")
        return new

    def _make(self, n: int, num_bits: int, version, seed, where: str) -> None:
        self.version = one_of(version, "version (1: Spark <= 4.0, 2: Spark >= 4.1)", (1, 2))
        self.seed = whole_number(seed, "seed", _INT_MIN, _INT_MAX)
        if self.version == 1 and self.seed != 0:
            raise ValueError(f"seed must be 0 in version 1, got {seed}: its bytes hold no seed "
                             "(Spark ignores the seed of a version 1 filter)")
        num_words = -(-num_bits // 64)
        if num_words > _INT_MAX:
            raise ValueError(f"Spark cannot create a filter of {num_bits} bits ({where}): more "
                             "than 2**31-1 words of 64 bits")
        k = spark_num_hashes(num_bits=num_bits, n=n)
        if k > MAX_HASHES:
            raise ValueError(f"{where} gives {k} hash functions: bloomedu takes at most "
                             f"{MAX_HASHES} (fpp too small, or too many bits for n)")
        check_storage(8 * num_words, f"{where} ({num_bits} bits)")
        self.num_hash_functions = k
        self.bits = BitArray(64 * num_words, word_bits=64)

    # --- the bits ------------------------------------------------------------------
    @property
    def bit_size(self) -> int:
        """Spark's ``bitSize()``: 64 times the number of words (positions run modulo this).

        >>> SparkBloomFilter(10, 0.1).bit_size   # m = 47, held in one word
        64
        """
        return self.bits.num_bits

    @property
    def reachable_bits(self) -> int:
        """The bits a key can set: all in version 2, at most 2**31 in version 1
        (:func:`reachable_bits`).

        >>> SparkBloomFilter(10, 0.1, version=1).reachable_bits
        64
        """
        return reachable_bits(self.bit_size, self.version)

    def cardinality(self) -> int:
        """Spark's ``cardinality()``: how many bits are set.

        >>> f = SparkBloomFilter(10, 0.1); f.put(1); f.cardinality()
        True
        3
        """
        return self.bits.count()

    def expected_fpp(self) -> float:
        """Spark's ``expectedFpp()``: (bits set / bitSize) ** k.

        >>> SparkBloomFilter(10, 0.1).expected_fpp()
        0.0
        """
        return (self.cardinality() / self.bit_size) ** self.num_hash_functions

    def bit_indices(self, item) -> list[int]:
        """The k bit positions of a key (str, bytes or a long), in Spark's order.

        >>> SparkBloomFilter(10, 0.1, version=1).bit_indices("a")
        [17, 27, 55]
        """
        data, value = _key(item)
        if data is not None:
            h1 = spark_hash_bytes(data, self.seed)
            h2 = spark_hash_bytes(data, h1)
        else:
            h1 = spark_hash_long(value, self.seed)
            h2 = spark_hash_long(value, h1)
        return _bit_indices(h1, h2, self.num_hash_functions, self.bit_size, self.version)

    def put(self, item) -> bool:
        """Insert a key; True if a bit changed (Spark's ``put``: then it was surely new).

        >>> f = SparkBloomFilter(10, 0.1)
        >>> f.put("a"), f.put("a"), f.put(7), f.put(b"a")   # b"a" is the bytes of "a"
        (True, False, True, False)
        """
        return self._set_bits(self.bits, self.bit_indices(item), report=True)

    add = put

    def might_contain(self, item) -> bool:
        """True if all k bits of the key are set: inserted, or a false positive.

        >>> f = SparkBloomFilter(10, 0.1); f.put(-1)
        True
        >>> f.might_contain(-1), f.might_contain(1), -1 in f
        (True, False, True)
        """
        bits = self.bits
        return all(bits[i] for i in self.bit_indices(item))

    __contains__ = might_contain

    # --- many keys at once -----------------------------------------------------------
    def _chunks(self, items) -> list[tuple[np.ndarray, np.ndarray]]:
        """(h1, h2) int32 arrays of every key, a chunk at a time: every key is checked (and
        so a bad one refused) before any hash is computed."""
        checked = []
        for chunk in key_chunks(items):
            if isinstance(chunk, np.ndarray):
                # int(): numpy 1.x compares a uint64 with a Python int as float64 (2**63 == 2**63-1)
                if chunk.dtype.kind == "u" and chunk.size and int(chunk.max()) > _LONG_MAX:
                    raise ValueError(f"items must be ints in -2**63..2**63-1 (Java longs: "
                                     f"Spark's putLong), got {chunk.max()} in a {chunk.dtype} array")
                checked.append(chunk.astype(np.int64))
            else:
                checked.append([_key(item, "each item") for item in chunk])
        hashed = []
        for chunk in checked:
            if isinstance(chunk, np.ndarray):
                h1 = spark_hash_longs(chunk, self.seed)
                hashed.append((h1, spark_hash_longs(chunk, h1)))
                continue
            h1 = np.empty(len(chunk), dtype=np.int32)
            h2 = np.empty(len(chunk), dtype=np.int32)
            longs = [at for at, (data, _) in enumerate(chunk) if data is None]
            texts = [at for at, (data, _) in enumerate(chunk) if data is not None]
            if longs:
                values = np.array([chunk[at][1] for at in longs], dtype=np.int64)
                first = spark_hash_longs(values, self.seed)
                h1[longs], h2[longs] = first, spark_hash_longs(values, first)
            if texts:
                data = [chunk[at][0] for at in texts]
                first = spark_hash_bytes_many(data, self.seed)
                h1[texts], h2[texts] = first, spark_hash_bytes_many(data, first)
            hashed.append((h1, h2))
        return hashed

    def _positions(self, items) -> list[np.ndarray]:
        return [spark_bit_indices_many(h1, h2, self.num_hash_functions, self.bit_size,
                                       self.version) for h1, h2 in self._chunks(items)]

    def put_many(self, items) -> None:
        """Insert many keys (str, bytes, ints, or an integer numpy array): the bits of ``put``
        on each; a bad key is refused before any is stored.

        >>> f = SparkBloomFilter(100, 0.01); f.put_many(np.arange(100))
        >>> f.might_contain(99), f.cardinality() == SparkBloomFilter.from_bytes(f.to_bytes()).cardinality()
        (True, True)
        """
        positions = self._positions(items)
        with self._lock:
            for chunk in positions:
                self.bits.set_many(chunk)

    def might_contain_many(self, items) -> np.ndarray:
        """A bool array: ``might_contain`` of each key.

        >>> f = SparkBloomFilter(10, 0.1); f.put_many(["a", 2])
        >>> f.might_contain_many(["a", 2, "c"]).tolist()
        [True, True, False]
        """
        answers = [self.bits.get_many(p).all(axis=1) for p in self._positions(items)]
        return np.concatenate(answers) if answers else np.zeros(0, dtype=bool)

    add_many, contains_many = put_many, might_contain_many  # every filter's bulk names

    # --- combining, as Spark's mergeInPlace / intersectInPlace (and |, &, |=, &=) ---------------
    def is_compatible(self, other) -> bool:
        """Spark's ``isCompatible``: same version, bit size, k and seed.

        >>> SparkBloomFilter(10, 0.1).is_compatible(SparkBloomFilter(10, 0.1, version=1))
        False
        """
        return isinstance(other, SparkBloomFilter) and _shape(self) == _shape(other)

    def _check_compatible(self, other) -> "SparkBloomFilter":
        """``other``, if Spark would merge it with this filter; else a clear error."""
        if not isinstance(other, SparkBloomFilter):
            raise TypeError(f"other must be a SparkBloomFilter, not {type(other).__name__}")
        if not self.is_compatible(other):
            raise ValueError("other is not compatible: Spark merges only filters of the same "
                             f"(version, bit size, k, seed), got {_shape(other)} and {_shape(self)}")
        return other

    def bits_snapshot(self, start: int = 0, stop: int | None = None) -> np.ndarray:
        """A copy of bytes ``start:stop`` of the bits, read under the filter's lock.

        >>> f = SparkBloomFilter(10, 0.1); f.bits_snapshot().tolist()
        [0, 0, 0, 0, 0, 0, 0, 0]
        """
        with self._lock:
            return self.bits.data[start:stop].copy()

    def merge_in_place(self, other: "SparkBloomFilter") -> "SparkBloomFilter":
        """Spark's ``mergeInPlace`` (``|=``): OR in the bits of a compatible filter; returns
        ``self``.

        >>> a, b = SparkBloomFilter(10, 0.1), SparkBloomFilter(10, 0.1); b.put("x")
        True
        >>> "x" in a.merge_in_place(b), "x" in SparkBloomFilter(10, 0.1) | b
        (True, True)
        """
        return self.__ior__(other)

    def intersect_in_place(self, other: "SparkBloomFilter") -> "SparkBloomFilter":
        """Spark's ``intersectInPlace`` (``&=``): AND with the bits of a compatible filter.

        >>> a, b = SparkBloomFilter(10, 0.1), SparkBloomFilter(10, 0.1); a.put("x")
        True
        >>> "x" in a.intersect_in_place(b)
        False
        """
        return self.__iand__(other)

    # --- writeTo / readFrom -----------------------------------------------------------
    def to_bytes(self) -> bytes:
        """Exactly the bytes of Spark's ``writeTo``.

        >>> SparkBloomFilter(10, 0.1, version=1).to_bytes().hex()   # version 1, k = 3, 1 word
        '0000000100000003000000010000000000000000'
        """
        header = _HEADERS[self.version]
        fields = [self.version, self.num_hash_functions] + ([self.seed] if self.version == 2 else [])
        stream = bytearray(header + self.bits.nbytes)
        stream[:header] = b"".join(v.to_bytes(4, "big", signed=True)
                                   for v in [*fields, self.bits.nbytes // 8])
        with self._lock:  # a snapshot: no put halfway through
            np.frombuffer(stream, dtype=">u8", offset=header)[:] = self.bits.data.view("<u8")
        return bytes(stream)

    @classmethod
    def from_bytes(cls, data) -> "SparkBloomFilter":
        """Read a ``writeTo`` stream of either version (Spark's ``BloomFilter.readFrom``).

        The whole of ``data`` must be one stream.  Refused with a ValueError, where Spark
        would fail later or answer wrongly: an unknown version, k below 1 (Spark answers
        "maybe" to everything) or above 1024 (bloomedu's limit), no words, a short or padded
        stream.

        >>> f = SparkBloomFilter.from_bytes(bytes.fromhex("000000020000000300000000000000010000000000000010"))
        >>> f.version, f.num_hash_functions, f.bit_size, f.cardinality()
        (2, 3, 64, 1)
        """
        data = as_bytes(data)  # the words are read in place, not copied first
        if len(data) < 4:
            raise ValueError(f"data is truncated: a Spark stream starts with its int32 "
                             f"version, got {len(data)} bytes")
        version = int.from_bytes(data[:4], "big", signed=True)
        if version not in _HEADERS:
            raise ValueError(f"unknown Bloom filter version {version} in bytes 0-3: Spark "
                             "writes 1 (up to 4.0) and 2 (4.1 on)")
        header = _HEADERS[version]
        if len(data) < header:
            raise ValueError(f"data is truncated: a version {version} header is {header} "
                             f"bytes, got {len(data)}")
        fields = [int.from_bytes(data[at:at + 4], "big", signed=True) for at in range(4, header, 4)]
        num_hashes, num_words = fields[0], fields[-1]
        seed = fields[1] if version == 2 else 0
        if not 1 <= num_hashes <= MAX_HASHES:
            raise ValueError(f"invalid header: {num_hashes} hash functions (bytes 4-7); "
                             f"bloomedu reads 1..{MAX_HASHES}")
        if num_words <= 0:
            raise ValueError(f"invalid header: {num_words} words (bytes {header - 4}-"
                             f"{header - 1}); a filter has at least one")
        expect_length(data, header + 8 * num_words, f"a Spark stream of {num_words} words")
        new = cls.__new__(cls)
        new.version, new.seed, new.num_hash_functions = version, seed, num_hashes
        new.bits = BitArray(64 * num_words, word_bits=64)
        new.bits.data.view("<u8")[:] = np.frombuffer(data, dtype=">u8", offset=header)
        return new

    def __eq__(self, other: object) -> bool:
        """Spark's ``equals``: the same version, k, seed and bits.

        >>> SparkBloomFilter(10, 0.1) == SparkBloomFilter(10, 0.1, version=1)
        False
        """
        if not isinstance(other, SparkBloomFilter):
            return NotImplemented
        return self.to_bytes() == other.to_bytes()

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        """Version, m, k, the fill and the keys estimated from it (Spark counts none).

        >>> f = SparkBloomFilter(1000, 0.01); f.put_many([str(i) for i in range(1000)]); f
        SparkBloomFilter(version=2, bit_size=9600, num_hash_functions=7, fill=0.52, added~1016)
        """
        fill = self.cardinality() / self.bit_size
        k = self.num_hash_functions
        added = math.inf if fill == 1.0 else -math.log1p(-fill) * self.bit_size / k
        return filter_repr(self, f"version={self.version}, bit_size={self.bit_size}, "
                                 f"num_hash_functions={k}", fill=fill, added=added, estimated=True)

