"""Bitcoin's BIP37 Bloom filter, byte for byte as Bitcoin Core builds it (article 2's end).

"Bloom Filter: come memorizzare 1 Milione di stringhe in meno di 2MB?" ends with
Bitcoin light wallets.  A wallet following BIP37 ("Connection Bloom filtering",
Hearn and Corallo, 2012) puts its public-key hashes in a filter and sends it to a
node in a ``filterload`` message; the node then relays only the transactions
that match.  :class:`Bip37Filter` is Bitcoin Core's ``CBloomFilter``:

- size in bytes: ``min((unsigned int)(-1 / LN2SQUARED * n * log(p)), 36000 * 8) / 8``
  (C++ truncation of the bit count, the cap, then integer division);
- hash functions: ``min((unsigned int)(bytes * 8 / n * LN2), 50)``, where
  ``bytes * 8 / n`` is C++ integer division;
- hash i of data: MurmurHash3 x86 32 with seed ``i * 0xFBA4C795 + nTweak``
  (mod 2^32), modulo the number of bits; bit b is bit ``b & 7`` of byte ``b >> 3``;
- an empty filter (0 bytes) ignores inserts and contains everything;
- ``serialize()`` is the ``filterload`` payload: CompactSize length, the bytes,
  nHashFuncs (uint32 LE), nTweak (uint32 LE), nFlags (uint8).

Under BIP37 the light wallet sizes its filter and sends it; the node never sees n
or p, only checks the payload against 36,000 bytes and 50 hash functions
(:meth:`Bip37Filter.is_within_size_constraints`) and matches transactions.  A
wallet library sizes with its own arithmetic: :func:`bitcoinj_sizing` is
bitcoinj's ``BloomFilter(elements, falsePositiveRate, ...)`` constructor, and
:meth:`Bip37Filter.sized` builds the filter of a given size and k.

Taught in ``notebooks/13_bitcoin_light_wallets.ipynb``; tested in
``tests/test_bip37.py``.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..core.hashing import key_list
from ..core.bits import BitArray
from ..core.checks import MAX_HASHES, is_int, is_number, real_number, whole_number
from ..core.contract import Filter, filter_repr
from ..core.theory import estimate_count
from ..core.hashing import murmur3_32
from ..core.serial import as_bytes, expect_length

__all__ = ["Bip37Filter", "bip37_filter_bytes", "bip37_num_hash_funcs", "bitcoinj_sizing",
           "compact_size",
           "read_compact_size", "MAX_BLOOM_FILTER_SIZE", "MAX_HASH_FUNCS"]

MAX_BLOOM_FILTER_SIZE = 36_000     # bytes
MAX_HASH_FUNCS = 50
MAX_COMPACT_SIZE = 0x02000000      # Bitcoin Core's MAX_SIZE for a length read off the wire
_SEED_STEP = 0xFBA4C795
_UINT32 = 0xFFFFFFFF
# Bitcoin Core's constants, as its source spells them (parsed to the same doubles).
LN2SQUARED = float("0.4804530139182014246671025263266649717305529515945455")
LN2 = float("0.6931471805599453094172321214581765680755001343602552")


def _check_int(value, name: str, low: int, high: int) -> int:
    if not is_int(value):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be in {low}..{high}, got {value}")
    return int(value)


def _check_data(data) -> bytes:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be bytes (encode text first), not {type(data).__name__}")
    return bytes(data)


def bip37_filter_bytes(*, n_elements: int, fp_rate: float) -> int:
    """Bitcoin Core's filter size in bytes for n elements at false-positive rate p.

    >>> [bip37_filter_bytes(n_elements=n, fp_rate=p)
    ...  for n, p in [(3, 0.01), (100_000, 0.0001), (1, 0.5)]]
    [3, 36000, 0]
    """
    n = _check_int(n_elements, "n_elements", 1, _UINT32)
    if not is_number(fp_rate):
        raise TypeError(f"fp_rate must be a float, not {type(fp_rate).__name__}")
    # numpy scalars, Fraction and Decimal give what their value gives (Decimal NaN too)
    fp_rate = real_number(fp_rate, "fp_rate", 0.0, 1.0, open_low=True, allowed="in (0, 1]")
    bits = -1 / LN2SQUARED * n * math.log(fp_rate)
    if bits >= 2 ** 32:
        # (unsigned int) of a double beyond 2^32 is undefined in C++: x86-64 wraps, ARM saturates.
        raise ValueError(f"n_elements={n} at fp_rate={fp_rate} needs {bits:.4g} bits, beyond the "
                         "2**32 - 1 that Bitcoin Core's sizing can count; lower n_elements")
    return min(int(bits), MAX_BLOOM_FILTER_SIZE * 8) // 8


def bip37_num_hash_funcs(filter_bytes: int, n_elements: int) -> int:
    """Bitcoin Core's number of hash functions, with its integer division ``bytes * 8 / n``.

    >>> bip37_num_hash_funcs(3, 3), bip37_num_hash_funcs(11, 10), bip37_num_hash_funcs(17, 1)
    (5, 5, 50)
    """
    size = _check_int(filter_bytes, "filter_bytes", 0, MAX_COMPACT_SIZE)
    n = _check_int(n_elements, "n_elements", 1, _UINT32)
    return min(int(size * 8 // n * LN2), MAX_HASH_FUNCS)


def bitcoinj_sizing(*, n_elements: int, fp_rate: float) -> tuple[int, int]:
    """(bytes, k) of the filter a wallet built on bitcoinj sends for n elements at rate p.

    bitcoinj's ``BloomFilter`` constructor (core/src/main/java/org/bitcoinj/core/
    BloomFilter.java) truncates the bit count, caps it at 36,000 x 8 and divides by
    8 like Bitcoin Core, but keeps at least 1 byte; its k divides bits by elements
    in floating point, truncates, and keeps it between 1 and 50.  So it never sends
    k = 0, where Bitcoin Core's constructor (:func:`bip37_num_hash_funcs`) can.

    >>> [bitcoinj_sizing(n_elements=20, fp_rate=p) for p in (0.5, 0.1, 0.01)]
    [(3, 1), (11, 3), (23, 6)]
    >>> bitcoinj_sizing(n_elements=100_000, fp_rate=0.0001)   # the 36,000-byte cap
    (36000, 1)
    """
    n = _check_int(n_elements, "n_elements", 1, 2 ** 31 - 1)  # a Java int
    if not is_number(fp_rate):
        raise TypeError(f"fp_rate must be a float, not {type(fp_rate).__name__}")
    fp_rate = real_number(fp_rate, "fp_rate", 0.0, 1.0, open_low=True, allowed="in (0, 1]")
    # Java's (int) of a double saturates at 2**31 - 1, which the cap makes harmless
    bits = min(int(-1 / math.log(2) ** 2 * n * math.log(fp_rate)), 2 ** 31 - 1)
    size = max(1, min(bits, MAX_BLOOM_FILTER_SIZE * 8) // 8)
    k = int(size * 8 / n * math.log(2))
    return size, max(1, min(k, MAX_HASH_FUNCS))


def compact_size(value: int) -> bytes:
    """Bitcoin's CompactSize encoding of a length (1, 3, 5 or 9 bytes).

    >>> compact_size(3).hex(), compact_size(36000).hex(), compact_size(70000).hex()
    ('03', 'fda08c', 'fe70110100')
    """
    value = _check_int(value, "value", 0, 2 ** 64 - 1)
    if value < 0xFD:
        return bytes([value])
    for marker, width in ((0xFD, 2), (0xFE, 4), (0xFF, 8)):
        if value < 1 << (8 * width):
            return bytes([marker]) + value.to_bytes(width, "little")
    raise AssertionError("unreachable")  # pragma: no cover


def read_compact_size(data: bytes, offset: int = 0) -> tuple[int, int]:
    """Read a CompactSize at ``offset``; return (value, offset after it).

    Strict as Bitcoin Core's ``ReadCompactSize``: a non-canonical (longer than
    needed) encoding, a value above 0x02000000, or missing bytes are ValueErrors.

    >>> read_compact_size(bytes.fromhex("fda08c"))
    (36000, 3)
    """
    data = as_bytes(data)
    offset = whole_number(offset, "offset", 0)
    if offset >= len(data):
        raise ValueError("data is truncated: no CompactSize length")
    first = data[offset]
    width = {0xFD: 2, 0xFE: 4, 0xFF: 8}.get(first, 0)
    if width == 0:
        return first, offset + 1
    end = offset + 1 + width
    if end > len(data):
        raise ValueError(f"data is truncated inside its {1 + width}-byte CompactSize")
    value = int.from_bytes(data[offset + 1:end], "little")
    if value < {2: 0xFD, 4: 1 << 16, 8: 1 << 32}[width]:
        raise ValueError(f"non-canonical CompactSize: {value} written in {1 + width} bytes")
    if value > MAX_COMPACT_SIZE:
        raise ValueError(f"CompactSize {value} is too large (Bitcoin Core's limit is "
                         f"{MAX_COMPACT_SIZE})")
    return value, end


class Bip37Filter(Filter):
    """Bitcoin Core's ``CBloomFilter(nElements, nFPRate, nTweak, nFlags)``.

    ``insert``/``contains`` take bytes (a public-key hash, a txid, an outpoint);
    ``add`` and ``in`` are the project's common interface.

    >>> f = Bip37Filter(3, 0.01, tweak=0, flags=1)
    >>> pubkey_hash = bytes.fromhex("99108ad8ed9bb6274d3980bab5a85c048f0950c8")
    >>> f.insert(pubkey_hash)
    >>> f.contains(pubkey_hash), f.contains(bytes(20))
    (True, False)
    >>> f.serialize().hex()   # 3 bytes of bits, k = 5, tweak 0, flags 1
    '03010098050000000000000001'

    Threads may share one: ``insert`` and ``clear`` hold the filter's lock
    (:class:`~bloomedu.core.contract.Filter`), ``data`` and ``serialize`` read a snapshot
    under it; ``contains`` only reads.  See :class:`bloomedu.BloomFilter` for
    what is and is not safe.
    """

    __slots__ = ("_bits", "n_hash_funcs", "tweak", "flags")

    def __init__(self, n_elements: int, fp_rate: float, tweak: int = 0, flags: int = 0):
        size = bip37_filter_bytes(n_elements=n_elements, fp_rate=fp_rate)
        self._setup(size, bip37_num_hash_funcs(size, n_elements), tweak, flags)

    @classmethod
    def sized(cls, filter_bytes: int, n_hash_funcs: int, tweak: int = 0,
              flags: int = 0) -> "Bip37Filter":
        """An empty filter of ``filter_bytes`` bytes and ``n_hash_funcs`` hash functions.

        The filter a wallet sends when its own library chose the size, such as
        :func:`bitcoinj_sizing`'s.  BIP37's limits are not enforced here: a node
        checks them (:meth:`is_within_size_constraints`).

        >>> f = Bip37Filter.sized(*bitcoinj_sizing(n_elements=20, fp_rate=0.5), tweak=5)
        >>> f, Bip37Filter(20, 0.5).n_hash_funcs    # Bitcoin Core's constructor: k = 0
        (Bip37Filter(bytes=3, n_hash_funcs=1, tweak=5, flags=0, fill=0.00, added~0), 0)
        """
        size = _check_int(filter_bytes, "filter_bytes", 0, MAX_COMPACT_SIZE)
        k = _check_int(n_hash_funcs, "n_hash_funcs", 0, MAX_HASHES)
        new = cls.__new__(cls)
        cls._setup(new, size, k, tweak, flags)
        return new

    def _setup(self, size: int, n_hash_funcs: int, tweak: int, flags: int,
               data: np.ndarray | None = None) -> None:
        """Every field of a filter of ``size`` bytes: its bits all 0, or ``data``'s."""
        self.tweak = _check_int(tweak, "tweak", 0, _UINT32)
        self.flags = _check_int(flags, "flags", 0, 255)
        self.n_hash_funcs = n_hash_funcs
        self._bits = BitArray(size * 8, word_bits=8) if size else None
        if data is not None and size:
            self._bits.data[:] = data

    # --- what it holds -----------------------------------------------------------
    @property
    def data(self) -> bytes:
        """The filter's bytes (Bitcoin Core's ``vData``).

        >>> Bip37Filter(3, 0.01).data
        b'\\x00\\x00\\x00'
        """
        return self._snapshot(self._bits).data.tobytes() if self._bits is not None else b""

    @property
    def num_bits(self) -> int:
        """m: 8 times the number of bytes.

        >>> Bip37Filter(10, 0.01).num_bits
        88
        """
        return len(self._bits) if self._bits is not None else 0

    def bit_count(self) -> int:
        """How many of the m bits are set.

        >>> f = Bip37Filter(3, 0.01); f.insert(b"x"); f.bit_count() <= f.n_hash_funcs
        True
        """
        return self._bits.count() if self._bits is not None else 0

    def is_within_size_constraints(self) -> bool:
        """True if at most 36,000 bytes and 50 hash functions (what a node accepts).

        >>> Bip37Filter(10**6, 1e-9).is_within_size_constraints()   # capped when built
        True
        """
        return self.num_bits // 8 <= MAX_BLOOM_FILTER_SIZE and self.n_hash_funcs <= MAX_HASH_FUNCS

    # --- hashing -----------------------------------------------------------------
    def seeds(self) -> list[int]:
        """The k MurmurHash3 seeds: ``(i * 0xFBA4C795 + tweak) mod 2^32``.

        >>> Bip37Filter(10, 0.000001, tweak=5).seeds()[:2]   # BIP37's own example
        [5, 4221880218]
        """
        return [(i * _SEED_STEP + self.tweak) & _UINT32 for i in range(self.n_hash_funcs)]

    def bit_indices(self, data: bytes) -> list[int]:
        """The k bit positions of ``data`` (empty for an empty filter).

        >>> Bip37Filter(3, 0.01).bit_indices(b"abc"), Bip37Filter(1, 0.5).bit_indices(b"abc")
        ([2, 16, 18, 5, 23], [])
        """
        data = _check_data(data)
        if self._bits is None:
            return []
        return [murmur3_32(data, seed) % self.num_bits for seed in self.seeds()]

    def insert(self, data: bytes) -> None:
        """Set the k bits of ``data`` (nothing happens in an empty filter).

        >>> f = Bip37Filter(3, 0.01); f.insert(b"abc"); f.bit_count()
        5
        """
        indices = self.bit_indices(data)
        if indices:
            self._set_bits(self._bits, indices)

    add = insert

    def contains(self, data: bytes) -> bool:
        """True if all k bits of ``data`` are set; always True for an empty filter.

        >>> f = Bip37Filter(3, 0.01); f.insert(b"abc")
        >>> f.contains(b"abc"), f.contains(b"abd"), Bip37Filter(1, 0.5).contains(b"abd")
        (True, False, True)
        """
        return all(self._bits[index] for index in self.bit_indices(data))

    __contains__ = contains

    def contains_many(self, items) -> np.ndarray:
        """``contains`` of each bytes item, as a bool array.

        Items of one common length (20-byte public-key hashes, 32-byte txids)
        are hashed together in numpy; others one by one.

        >>> f = Bip37Filter(2, 0.001); f.insert(b"a")
        >>> f.contains_many([b"a", b"b", b"ab"]).tolist()
        [True, False, False]
        """
        items = [_check_data(item) for item in key_list(items)]
        if self._bits is None or len({len(item) for item in items}) != 1:
            return np.fromiter(map(self.contains, items), dtype=bool, count=len(items))
        keys = np.frombuffer(b"".join(items), dtype=np.uint8).reshape(len(items), len(items[0]))
        found = np.ones(len(items), dtype=bool)
        for seed in self.seeds():
            positions = _murmur3_32_rows(keys, seed) % np.uint32(self.num_bits)
            found &= self._bits.get_many(positions.astype(np.int64))
        return found

    def clear(self) -> None:
        """Set every bit to 0, keeping size, k, tweak and flags.

        >>> f = Bip37Filter(3, 0.01); f.insert(b"abc"); f.clear(); f.contains(b"abc")
        False
        """
        if self._bits is not None:
            with self._lock:
                self._bits.data[:] = 0

    # --- the filterload payload --------------------------------------------------
    def serialize(self) -> bytes:
        """The ``filterload`` payload: CompactSize(len) || bytes || k u32 || tweak u32 || flags u8.

        >>> Bip37Filter(1, 0.5, tweak=5, flags=1).serialize().hex()   # the empty filter
        '00000000000500000001'
        """
        return (compact_size(self.num_bits // 8) + self.data
                + self.n_hash_funcs.to_bytes(4, "little") + self.tweak.to_bytes(4, "little")
                + bytes([self.flags]))

    @classmethod
    def deserialize(cls, data: bytes, *, enforce_limits: bool = True) -> "Bip37Filter":
        """Read a ``filterload`` payload; the whole of ``data`` must be that payload.

        With ``enforce_limits`` (the default) a filter over 36,000 bytes or 50
        hash functions is a ValueError, as a node refuses it; without, it is read
        and :meth:`is_within_size_constraints` says False, up to the 0x02000000
        bytes a CompactSize may announce and 1024 hash functions (``MAX_HASHES``:
        the 2**32 - 1 that the field can hold would take hours a query).

        >>> f = Bip37Filter.deserialize(bytes.fromhex("03614e9b050000000000000001"))
        >>> f.n_hash_funcs, f.tweak, f.flags, f.contains(bytes.fromhex("19108ad8ed9bb6274d3980bab5a85c048f0950c8"))
        (5, 0, 1, False)
        """
        data = as_bytes(data)
        size, offset = read_compact_size(data)
        expect_length(data, offset + size + 9, f"the payload of a filter of {size} bytes")
        tail = data[offset + size:]
        n_hash_funcs = int.from_bytes(tail[:4], "little")
        if enforce_limits and (size > MAX_BLOOM_FILTER_SIZE or n_hash_funcs > MAX_HASH_FUNCS):
            raise ValueError(f"filter of {size} bytes and {n_hash_funcs} hash functions exceeds "
                             f"BIP37's limits ({MAX_BLOOM_FILTER_SIZE} bytes, "
                             f"{MAX_HASH_FUNCS} hash functions)")
        if n_hash_funcs > MAX_HASHES:
            raise ValueError(f"filter with {n_hash_funcs} hash functions: at most {MAX_HASHES} "
                             f"can be read, even without BIP37's limit of {MAX_HASH_FUNCS}")
        new = cls.__new__(cls)  # its lock from Filter.__new__, its fields from the payload:
        cls._setup(new, size, n_hash_funcs, int.from_bytes(tail[4:8], "little"), tail[8],
                   np.frombuffer(data, dtype=np.uint8, count=size, offset=offset))
        return new

    to_bytes = serialize  # every filter's names for its bytes
    from_bytes = deserialize

    def __reduce__(self):
        """Pickle as the ``filterload`` payload, at every protocol (limits not enforced).

        >>> import pickle
        >>> f = Bip37Filter(3, 0.01, tweak=7); f.insert(b"abc")
        >>> pickle.loads(pickle.dumps(f, protocol=0)) == f
        True
        """
        return functools.partial(type(self).deserialize, enforce_limits=False), (self.serialize(),)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Bip37Filter):
            return NotImplemented
        return self.serialize() == other.serialize()

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        """Its size, k, tweak and flags, the fill and the keys that went in, estimated from the
        fill (``added~``: a BIP37 filter keeps nothing but its bytes).

        >>> f = Bip37Filter(100, 0.01); f.add_many([b"%d" % i for i in range(100)]); f
        Bip37Filter(bytes=119, n_hash_funcs=6, tweak=0, flags=0, fill=0.47, added~100)
        """
        bits_set = self._bits.count() if self._bits is not None else 0
        added = estimate_count(num_bits=self.num_bits, num_hashes=self.n_hash_funcs,
                               bits_set=bits_set) if bits_set else 0  # none set: k or m is 0 too
        return filter_repr(self, f"bytes={self.num_bits // 8}, n_hash_funcs={self.n_hash_funcs}, "
                                 f"tweak={self.tweak}, flags={self.flags}",
                           fill=bits_set / self.num_bits if self.num_bits else 0.0, added=added,
                           estimated=True)


# --- MurmurHash3 x86 32 of many keys of one length, in numpy ---------------------
_C1, _C2 = np.uint32(0xCC9E2D51), np.uint32(0x1B873593)


def _rotl32(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def _murmur3_32_rows(keys: np.ndarray, seed: int) -> np.ndarray:
    """MurmurHash3 x86 32 of each row of a (count, length) uint8 array; equal to ``mmh3.hash``.

    >>> rows = np.frombuffer(b"abcdefg" * 2, dtype=np.uint8).reshape(2, 7)
    >>> _murmur3_32_rows(rows, 5).tolist() == [murmur3_32(b"abcdefg", 5)] * 2
    True
    """
    count, length = keys.shape
    h = np.full(count, seed, dtype=np.uint32)
    whole = length - length % 4
    blocks = np.ascontiguousarray(keys[:, :whole]).view("<u4").astype(np.uint32)
    for j in range(whole // 4):
        k = _rotl32(blocks[:, j] * _C1, 15) * _C2
        h = _rotl32(h ^ k, 13) * np.uint32(5) + np.uint32(0xE6546B64)
    if length % 4:
        k = np.zeros(count, dtype=np.uint32)
        for i in range(length % 4):
            k |= keys[:, whole + i].astype(np.uint32) << np.uint32(8 * i)
        h ^= _rotl32(k * _C1, 15) * _C2
    h ^= np.uint32(length)
    h ^= h >> np.uint32(16)
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h *= np.uint32(0xC2B2AE35)
    h ^= h >> np.uint32(16)
    return h
