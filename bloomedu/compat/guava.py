"""Guava's ``BloomFilter`` of strings, bit for bit (article 2's Java example).

"Bloom Filter: come memorizzare 1 Milione di stringhe in meno di 2MB?" creates
its filter with Google Guava:
``BloomFilter.create(Funnels.stringFunnel(UTF_8), expectedInsertions, fpp)``.
:class:`GuavaBloomFilter` does what Guava 31.1 does, down to the arithmetic:

- sizing: m = ``(long)(-n ln p / (ln 2)^2)`` (Java truncation), n = 0 counts as 1,
  k = ``max(1, Math.round(m / n * ln 2))``; the bits live in ceil(m / 64)
  64-bit words, and positions are taken modulo ``bitSize`` = 64 * words, not m;
- hashing (strategy ``MURMUR128_MITZ_64``, ordinal 1): (h1, h2) = MurmurHash3
  x64 128 of the UTF-8 bytes; bit i is ``((h1 + i*h2) mod 2^64 & Long.MAX_VALUE)
  % bitSize``; bit b is in word ``b >> 6`` under mask ``1 << (b & 63)``;
- ``writeTo``/``readFrom``: ordinal byte, k byte, word count (int32 big-endian),
  then every word as int64 big-endian.

Streams written with the older strategy ``MURMUR128_MITZ_32`` (ordinal 0), which
Guava's ``readFrom`` still accepts, are read and queried the same way.

Taught in ``notebooks/12_guava.ipynb``; tested in
``tests/test_guava.py``.
"""

from __future__ import annotations

import math

import mmh3
import numpy as np

from ..core.hashing import key_list
from ..core.bits import BitArray
from ..core.checks import check_storage, one_of, probability, whole_number
from ..core.contract import Filter, filter_repr
from ..core.serial import as_bytes, expect_length
from .java import signed32, java_round, java_utf8

__all__ = ["GuavaBloomFilter", "guava_num_bits", "guava_num_hashes", "java_round",
           "java_utf8", "MURMUR128_MITZ_32", "MURMUR128_MITZ_64"]

MURMUR128_MITZ_32 = 0   # Guava's strategy ordinals, the first byte of writeTo
MURMUR128_MITZ_64 = 1
_STRATEGIES = (MURMUR128_MITZ_32, MURMUR128_MITZ_64)
_LONG_MAX = (1 << 63) - 1
_MASK32 = 0xFFFFFFFF
_MASK64 = (1 << 64) - 1
_INT_MAX = (1 << 31) - 1          # Java arrays hold at most this many words
_LN2 = math.log(2)
_HEADER = 6                       # ordinal byte, k byte, int32 word count
_CHUNK = 1 << 16                  # strings hashed per chunk in the bulk methods


def guava_num_bits(*, n: int, p: float) -> int:
    """Guava's ``optimalNumOfBits``: ``(long)(-n * ln p / (ln 2 * ln 2))``, truncated.

    >>> [guava_num_bits(n=n, p=p)
    ...  for n, p in [(10, 0.1), (1_000_000, 0.03), (np.uint64(1000), 0.01)]]
    [47, 7298440, 9585]
    """
    n = whole_number(n, "n", 0, _LONG_MAX)
    p = probability(p, "p")
    value = -n * math.log(p) / (_LN2 * _LN2)
    return min(int(value), _LONG_MAX)   # Java's (long) truncates toward 0, saturates


def guava_num_hashes(*, num_bits: int, n: int) -> int:
    """Guava's ``optimalNumOfHashFunctions``: ``max(1, Math.round(m / n * ln 2))``.

    m (``num_bits``) is the bit count before rounding up to whole words.  Guava's own
    arguments are (n, m); here they are named, m first as everywhere in bloomedu.

    >>> guava_num_hashes(num_bits=47, n=10), guava_num_hashes(num_bits=7298440, n=1_000_000)
    (3, 5)
    """
    n = whole_number(n, "n", 1, _LONG_MAX)
    m = whole_number(num_bits, "num_bits", 0, _LONG_MAX)
    return max(1, java_round(m / n * _LN2))


class GuavaBloomFilter(Filter):
    """A filter of strings equal to Guava 31.1's, bit for bit and byte for byte.

    Made with :meth:`create` (like ``BloomFilter.create``) or :meth:`from_bytes`
    (like ``BloomFilter.readFrom``).  ``add`` and ``in`` are the project's
    common interface; ``put`` and ``might_contain`` are Guava's names.

    >>> f = GuavaBloomFilter.create(10, 0.1)
    >>> f.put("città"), f.put("città"), f.might_contain("città"), "città" in f
    (True, False, True, True)
    >>> f.bit_size, f.num_hash_functions, f.bit_indices("città")
    (64, 3, [51, 40, 29])

    Threads may share one: ``put`` and ``put_many`` hold the filter's lock
    while they set bits (:class:`~bloomedu.core.contract.Filter`), ``copy`` and
    ``to_bytes`` while they read them; ``might_contain`` only reads.  See
    :class:`bloomedu.BloomFilter` for what is and is not safe.
    """

    __slots__ = ("bits", "num_hash_functions", "strategy")

    def __init__(self, num_words: int, num_hash_functions: int,
                 strategy: int = MURMUR128_MITZ_64):
        # Guava's own limits: a Java long[] of at most 2**31-1 words, k stored in one byte.
        num_words = whole_number(num_words, "num_words", 1, _INT_MAX)
        self.num_hash_functions = whole_number(num_hash_functions, "num_hash_functions", 1, 255)
        self.strategy = one_of(strategy, "strategy (0: MURMUR128_MITZ_32, 1: MURMUR128_MITZ_64)",
                               _STRATEGIES)
        check_storage(8 * num_words, f"num_words={num_words}")
        self.bits = BitArray(64 * num_words, word_bits=64)

    @classmethod
    def create(cls, expected_insertions: int, fpp: float = 0.03) -> "GuavaBloomFilter":
        """Like ``BloomFilter.create(Funnels.stringFunnel(UTF_8), expectedInsertions, fpp)``.

        Guava's checks: 0 <= expected_insertions <= Long.MAX_VALUE and
        0 < fpp < 1; a size that rounds to 0 bits, more than 2^31 - 1 words or
        more than 255 hash functions is refused, as Guava refuses it.

        >>> f = GuavaBloomFilter.create(1_000_000, 0.001)
        >>> f.bit_size, f.num_hash_functions, len(f.to_bytes())
        (14377600, 10, 1797206)
        >>> GuavaBloomFilter.create(1, 0.9)
        Traceback (most recent call last):
        ...
        ValueError: Guava cannot create a filter of 0 bits (expected_insertions=1, fpp=0.9): ...
        """
        given = whole_number(expected_insertions, "expected_insertions", 0, _LONG_MAX)
        fpp = probability(fpp, "fpp")
        n = max(given, 1)                  # Guava: 0 expected insertions count as 1
        m = guava_num_bits(n=n, p=fpp)
        k = guava_num_hashes(num_bits=m, n=n)
        where = f"(expected_insertions={given}, fpp={fpp})"
        if m == 0:
            raise ValueError(f"Guava cannot create a filter of 0 bits {where}: "
                             "-n ln(p) / (ln 2)^2 is below 1; lower fpp or raise n")
        if -(-m // 64) > _INT_MAX:
            raise ValueError(f"Guava cannot create a filter of {m} bits {where}: more than "
                             f"2**31-1 words of 64 bits")
        if k > 255:
            raise ValueError(f"Guava cannot create a filter with {k} hash functions {where}: "
                             "at most 255 (fpp too small)")
        check_storage(8 * -(-m // 64), f"expected_insertions={given} at fpp={fpp} ({m} bits)")
        return cls(-(-m // 64), k)

    # --- the bits ------------------------------------------------------------------
    @property
    def bit_size(self) -> int:
        """Guava's ``bitSize()``: 64 times the number of words (indices run modulo this).

        >>> GuavaBloomFilter.create(10, 0.1).bit_size   # m = 47, stored in one word
        64
        """
        return self.bits.num_bits

    def bit_count(self) -> int:
        """How many bits are set (Guava keeps this count as ``bitCount``).

        >>> f = GuavaBloomFilter.create(10, 0.1); f.put("città"); f.bit_count()
        True
        3
        """
        return self.bits.count()

    def bit_indices(self, text: str) -> list[int]:
        """The k bit positions of a string, in Guava's order.

        >>> GuavaBloomFilter.create(10, 0.1).bit_indices("naïve")
        [58, 0, 6]
        """
        h1, h2 = mmh3.hash64(java_utf8(text), 0, signed=False)
        size, k = self.bit_size, self.num_hash_functions
        if self.strategy == MURMUR128_MITZ_64:
            return [(((h1 + i * h2) & _MASK64) & _LONG_MAX) % size for i in range(k)]
        # MURMUR128_MITZ_32: two signed 32-bit halves of h1, int arithmetic, ~ if negative.
        low, high = signed32(h1 & _MASK32), signed32(h1 >> 32)
        combined = [signed32(low + i * high) for i in range(1, k + 1)]
        return [(~c if c < 0 else c) % size for c in combined]

    def put(self, text: str) -> bool:
        """Insert a string; True if at least one bit changed (Guava's ``put``).

        >>> f = GuavaBloomFilter.create(10, 0.1)
        >>> f.put("a"), f.put("a")
        (True, False)
        """
        return self._set_bits(self.bits, self.bit_indices(text), report=True)

    add = put

    def might_contain(self, text: str) -> bool:
        """True if all k bits of the string are set: inserted, or a false positive.

        >>> f = GuavaBloomFilter.create(10, 0.1); f.put("a")
        True
        >>> f.might_contain("a"), f.might_contain("b")
        (True, False)
        """
        return all(self.bits[i] for i in self.bit_indices(text))

    __contains__ = might_contain

    # --- many strings at once -----------------------------------------------------
    def _positions(self, texts) -> list[np.ndarray]:
        """The (len, k) bit positions of every string, chunk by chunk, in numpy.

        Every string is encoded (and so checked) before any position is returned; the batch
        itself goes through the library's one way in for keys
        (:func:`~bloomedu.core.hashing.key_list`).
        """
        encoded = [java_utf8(text) for text in key_list(texts)]
        k, size = self.num_hash_functions, np.uint64(self.bit_size)
        chunks = []
        for start in range(0, len(encoded), _CHUNK):
            part = encoded[start:start + _CHUNK]
            digests = np.fromiter(map(mmh3.hash_bytes, part), dtype="S16", count=len(part))
            halves = digests.view("<u8").reshape(-1, 2)
            h1, h2 = halves[:, :1], halves[:, 1:]
            if self.strategy == MURMUR128_MITZ_64:
                combined = h1 + h2 * np.arange(k, dtype=np.uint64)   # wraps mod 2^64
                combined &= np.uint64(_LONG_MAX)
            else:
                low = (h1 & np.uint64(_MASK32)).astype(np.uint32).view(np.int32)
                high = (h1 >> np.uint64(32)).astype(np.uint32).view(np.int32)
                steps = np.arange(1, k + 1, dtype=np.int32)
                combined = (low + high * steps).astype(np.int64)      # wraps mod 2^32
                combined = np.where(combined < 0, ~combined, combined).astype(np.uint64)
            chunks.append((combined % size).astype(np.int64))
        return chunks

    def put_many(self, texts) -> None:
        """Insert many strings: the same bits as calling ``put`` on each.

        >>> f = GuavaBloomFilter.create(100, 0.01)
        >>> f.put_many([f"https://site-{i}.example/" for i in range(100)])
        >>> f.might_contain("https://site-7.example/")
        True
        """
        for positions in self._positions(texts):
            with self._lock:
                self.bits.set_many(positions)

    def might_contain_many(self, texts) -> np.ndarray:
        """A bool array: ``might_contain`` of each string.

        >>> f = GuavaBloomFilter.create(10, 0.1); f.put_many(["a", "b"])
        >>> f.might_contain_many(["a", "b", "c"]).tolist()
        [True, True, False]
        """
        answers = [self.bits.get_many(p).all(axis=1) for p in self._positions(texts)]
        return np.concatenate(answers) if answers else np.zeros(0, dtype=bool)

    add_many, contains_many = put_many, might_contain_many  # every filter's bulk names

    # --- Guava's estimates -------------------------------------------------------------
    def expected_fpp(self) -> float:
        """Guava's ``expectedFpp()``: (bits set / bitSize)^k, from the bits actually set.

        >>> GuavaBloomFilter.create(10, 0.1).expected_fpp()
        0.0
        """
        return (self.bit_count() / self.bit_size) ** self.num_hash_functions

    def approximate_element_count(self) -> int:
        """Guava's ``approximateElementCount()``: -ln(1 - X/bitSize) * bitSize / k, rounded half up.

        X is the number of bits set.  With every bit set the estimate is
        infinite: Guava throws ``ArithmeticException``, this raises ``OverflowError``.

        >>> f = GuavaBloomFilter.create(1000, 0.01)
        >>> f.put_many([str(i) for i in range(1000)]); f.approximate_element_count()
        1004
        """
        fraction = self.bit_count() / self.bit_size
        if fraction == 1.0:
            raise OverflowError("every bit is set: the element count estimate is infinite "
                                "(Guava throws ArithmeticException)")
        return java_round(-math.log1p(-fraction) * self.bit_size / self.num_hash_functions)

    # --- Guava's writeTo / readFrom ------------------------------------------------
    def to_bytes(self) -> bytes:
        """Exactly the bytes of Guava's ``writeTo``.

        >>> GuavaBloomFilter.create(10, 0.1).to_bytes().hex()   # strategy 1, k = 3, one word
        '0103000000010000000000000000'
        """
        stream = bytearray(_HEADER + self.bits.nbytes)  # filled in place: one copy of the bits
        stream[:_HEADER] = bytes([self.strategy, self.num_hash_functions]) \
            + (self.bits.nbytes // 8).to_bytes(4, "big")
        with self._lock:  # a snapshot: no put halfway through
            np.frombuffer(stream, dtype=">u8", offset=_HEADER)[:] = self.bits.data.view("<u8")
        return bytes(stream)

    @classmethod
    def from_bytes(cls, data: bytes) -> "GuavaBloomFilter":
        """Read a ``writeTo`` stream (as Guava's ``readFrom`` with a UTF-8 string funnel).

        The whole of ``data`` must be one stream: a short, padded, zero-word,
        zero-hash or unknown-strategy stream is a ``ValueError``.

        >>> f = GuavaBloomFilter.from_bytes(bytes.fromhex("0103000000010408010030410049"))
        >>> f.might_contain("città"), f.might_contain("roma")
        (True, False)
        """
        data = as_bytes(data)  # the words are read in place, not copied first
        if len(data) < _HEADER:
            raise ValueError(f"data is truncated: a Guava stream starts with a {_HEADER}-byte "
                             f"header, got {len(data)} bytes")
        ordinal = int.from_bytes(data[:1], "big", signed=True)
        if ordinal not in _STRATEGIES:
            raise ValueError(f"unknown strategy ordinal {ordinal} in byte 0: Guava knows "
                             "0 (MURMUR128_MITZ_32) and 1 (MURMUR128_MITZ_64)")
        num_hashes = data[1]
        num_words = int.from_bytes(data[2:6], "big", signed=True)
        if num_hashes == 0 or num_words <= 0:
            raise ValueError(f"invalid header: {num_hashes} hash functions and {num_words} "
                             "words; both must be positive")
        expect_length(data, _HEADER + 8 * num_words, f"a Guava stream of {num_words} words")
        new = cls(num_words, num_hashes, ordinal)
        new.bits.data.view("<u8")[:] = np.frombuffer(data, dtype=">u8", offset=_HEADER)
        return new

    def __reduce__(self):
        """Pickle as Guava's own ``writeTo`` bytes, at every protocol.

        >>> import pickle
        >>> f = GuavaBloomFilter.create(10, 0.1); f.put("città")
        True
        >>> pickle.loads(pickle.dumps(f, protocol=0)) == f
        True
        """
        return GuavaBloomFilter.from_bytes, (self.to_bytes(),)

    # --- plumbing --------------------------------------------------------------------
    def copy(self) -> "GuavaBloomFilter":
        """An independent copy (Guava's ``copy()``).

        >>> f = GuavaBloomFilter.create(10, 0.1); g = f.copy(); g.put("x")
        True
        >>> f == g, "x" in f
        (False, False)
        """
        new = GuavaBloomFilter(self.bit_size // 64, self.num_hash_functions, self.strategy)
        new.bits = self._snapshot(self.bits)
        return new

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GuavaBloomFilter):
            return NotImplemented
        return (self.strategy, self.num_hash_functions) == (other.strategy,
                                                            other.num_hash_functions) \
            and self.bits == other.bits

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        """m, k, the strategy, the fill and the keys that went in, estimated from the fill as
        Guava estimates them (``added~``: :meth:`approximate_element_count`; Guava counts nothing).

        >>> f = GuavaBloomFilter.create(1000, 0.01); f.put_many([str(i) for i in range(1000)]); f
        GuavaBloomFilter(bit_size=9600, num_hash_functions=7, strategy=1, fill=0.52, added~1004)
        """
        bits_set = self.bit_count()
        try:
            added = self.approximate_element_count()
        except OverflowError:  # every bit set
            added = math.inf
        return filter_repr(self, f"bit_size={self.bit_size}, num_hash_functions="
                                 f"{self.num_hash_functions}, strategy={self.strategy}",
                           fill=bits_set / self.bit_size, added=added, estimated=True)
