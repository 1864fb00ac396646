"""What xor and binary fuse filters share: built once from a key set, then only queried.

A static filter is given all its keys at once.  Each distinct key (keys are told apart by
h1, the first half of the key's MurmurHash3 from :mod:`bloomedu.core.hashing`, so a key
given twice is one key) is mixed with a seed, ``fmix64(h1 + seed * 0x9E3779B97F4A7C15)``;
that 64-bit value gives its f-bit fingerprint (``x ^ (x >> 32)``, low f bits) and its
slots (each subclass's layout).  The table is built by :mod:`bloomedu.variants.peeling`;
when peeling fails, the next seed (0, 1, 2, ...) is tried, so a filter built from the same
keys is always the same filter, byte for byte.

A key of the set is always found (the XOR of its slots is its fingerprint); another key is
found with probability 2**-f, its fingerprint being independent of what its slots hold.

Used by :mod:`bloomedu.variants.xor` and :mod:`bloomedu.variants.binary_fuse`; tested in
``tests/test_xor.py`` and ``tests/test_binary_fuse.py``.
"""

from __future__ import annotations

from abc import abstractmethod

import numpy as np

from ..kernels.murmur import fmix64_array
from ..core.checks import check_storage, one_of
from ..core.hashing import hashed_batches, key_hashes
from ..core.contract import filter_repr
from ..core.serial import Header, Shared
from . import peeling

__all__ = ["StaticFilter", "MAX_KEYS", "MAX_ATTEMPTS", "fastrange", "mix"]

MAX_KEYS = (1 << 31) - 1  # slots come from 32-bit multiply-shifts: tables below 2**32 slots
MAX_ATTEMPTS = 64         # seeds tried; one failure is a few percent likely, 64 in a row never
_GOLDEN = 0x9E3779B97F4A7C15
_CHUNK_KEYS = 1 << 16
_WORK_BYTES_PER_KEY = 120  # the construction's arrays: slots, fingerprints, peeling rounds


def mix(h1: np.ndarray, seed: int) -> np.ndarray:
    """``fmix64(h1 + seed * 0x9E3779B97F4A7C15)`` of every element (uint64, modulo 2**64).

    >>> from bloomedu.core.hashing import fmix64
    >>> int(mix(np.array([7], np.uint64), 2)[0]) == fmix64((7 + 2 * 0x9E3779B97F4A7C15) % 2**64)
    True
    """
    with np.errstate(over="ignore"):
        start = h1 + np.uint64(seed * _GOLDEN % (1 << 64))
    out = np.empty_like(start)
    fmix64_array(out, np.empty_like(start), source=start)
    return out


def fastrange(x: np.ndarray, size: int) -> np.ndarray:
    """The top 32 bits of each x scaled to 0..size-1: ``((x >> 32) * size) >> 32`` (size < 2**32).

    >>> fastrange(np.array([0, 2 ** 63, 2 ** 64 - 1], np.uint64), 10).tolist()
    [0, 5, 9]
    """
    return ((x >> np.uint64(32)) * np.uint64(size) >> np.uint64(32)).astype(np.int64)


def rotl(x: np.ndarray, bits: int) -> np.ndarray:
    """Rotate each 64-bit value left by ``bits`` (1..63)."""
    return (x << np.uint64(bits)) | (x >> np.uint64(64 - bits))


class StaticFilter(Shared):
    """Base of :class:`~bloomedu.variants.xor.XorFilter` and
    :class:`~bloomedu.variants.binary_fuse.BinaryFuseFilter`.

    A subclass sets ``MAGIC``, ``ARITIES`` and the layout: :meth:`_layout` (the table's
    parameters for n keys) and :meth:`_slots` (each mixed key's slots).  Abstract until it
    does, so the conformance suite tests the subclasses, not this base.

    Built once from all its keys, it takes no more: ``add`` and ``add_many`` raise a
    ``TypeError`` (build a new filter from every key instead).

    >>> from bloomedu import XorFilter
    >>> XorFilter(["a", "b"]).add("c")
    Traceback (most recent call last):
    TypeError: XorFilter is built once from all its keys and takes no more: build a new one from every key
    """

    MAGIC = b"BLM?"
    ARITIES: tuple[int, ...] = (3,)
    def __init__(self, keys, fingerprint_bits: int = 8, arity: int = 3):
        self.fingerprint_bits = one_of(fingerprint_bits, "fingerprint_bits", (8, 16))
        self.arity = one_of(arity, "arity", self.ARITIES)
        h1 = _distinct_h1(keys)
        if h1.size > MAX_KEYS:
            raise ValueError(f"keys: {h1.size} distinct keys, more than the {MAX_KEYS} a "
                             f"{type(self).__name__} holds")
        self.num_keys = int(h1.size)
        self._set_layout()
        check_storage(self.num_slots * self._dtype.itemsize + _WORK_BYTES_PER_KEY * self.num_keys,
                      f"keys ({self.num_keys} distinct, fingerprint_bits={self.fingerprint_bits})")
        for seed in range(MAX_ATTEMPTS):
            mixed = mix(h1, seed)
            slots = self._slots(mixed)
            rounds = peeling.peel(slots, self.num_slots)
            if rounds is not None:
                break
        else:  # pragma: no cover - about 0.03**64 likely
            raise RuntimeError(f"no seed of {MAX_ATTEMPTS} could peel these keys")
        self.seed = seed
        self.table = peeling.assign(rounds, slots, self._fingerprints(mixed), self.num_slots,
                                    self._dtype)

    # --- the layout a subclass defines --------------------------------------------------
    @classmethod
    @abstractmethod
    def _layout(cls, num_keys: int, arity: int) -> dict[str, int]:
        """``num_slots`` and the layout's other sizes for ``num_keys`` keys, by name."""

    def _set_layout(self) -> None:
        for name, value in self._layout(self.num_keys, self.arity).items():
            setattr(self, name, value)

    @abstractmethod
    def _slots(self, mixed: np.ndarray) -> np.ndarray:
        """The (n, arity) slots of n mixed hashes."""

    def add(self, key) -> None:
        raise TypeError(f"{type(self).__name__} is built once from all its keys and takes no "
                        "more: build a new one from every key")

    add_many = add  # a batch: the same refusal

    # --- fingerprints and queries --------------------------------------------------------
    @property
    def _dtype(self) -> np.dtype:
        return _fingerprint_dtype(self.fingerprint_bits)

    def _fingerprints(self, mixed: np.ndarray) -> np.ndarray:
        return ((mixed ^ (mixed >> np.uint64(32))) & np.uint64((1 << self.fingerprint_bits) - 1)
                ).astype(self._dtype)

    def _found(self, h1: np.ndarray) -> np.ndarray:
        mixed = mix(h1, self.seed)
        return peeling.matches(self.table, self._slots(mixed), self._fingerprints(mixed))

    def contains(self, key) -> bool:
        """True for every key of the set, and for another key with probability 2**-f."""
        h1, _ = key_hashes(key, None)
        return bool(self._found(np.array([h1], dtype=np.uint64))[0])

    __contains__ = contains

    def contains_many(self, keys) -> np.ndarray:
        """``contains`` for a batch of keys (any kind the library hashes): a bool array."""
        answers = [self._found(h1) for h1, _ in hashed_batches(keys, None, _CHUNK_KEYS)]
        return np.concatenate(answers) if answers else np.zeros(0, dtype=bool)

    # --- what it holds ------------------------------------------------------------------------
    def __len__(self) -> int:
        """The distinct keys it was built from."""
        return self.num_keys

    @property
    def nbytes(self) -> int:
        """Bytes of the table: one fingerprint-sized slot each."""
        return int(self.table.nbytes)

    @property
    def bits_per_key(self) -> float:
        """The table's bits over the number of keys (at least one)."""
        return 8 * self.nbytes / max(1, self.num_keys)

    # --- bytes ------------------------------------------------------------------------------------
    @classmethod
    def _header(cls) -> Header:
        return Header(cls.MAGIC, 1, "QQBB")  # seed, distinct keys, fingerprint bits, arity

    def to_bytes(self) -> bytes:
        """A versioned header (seed, keys, f, arity), then the table, little-endian."""
        return self._header().pack(self.seed, self.num_keys, self.fingerprint_bits, self.arity) \
            + self.table.astype(self._dtype.newbyteorder("<")).tobytes()

    @classmethod
    def from_bytes(cls, data):
        """Read what ``to_bytes`` wrote; anything else raises ``ValueError`` or ``TypeError``.

        The table's size follows from the header: a payload of another length is refused
        before anything is allocated.
        """
        new = cls.__new__(cls)

        def length(values):
            seed, num_keys, bits, arity = values
            if bits not in (8, 16) or arity not in cls.ARITIES or num_keys > MAX_KEYS \
                    or seed >= MAX_ATTEMPTS:
                raise ValueError(f"corrupt {cls.__name__} header: seed {seed}, {num_keys} keys, "
                                 f"fingerprint_bits {bits}, arity {arity}")
            new.fingerprint_bits, new.arity, new.num_keys, new.seed = bits, arity, num_keys, seed
            for name, value in cls._layout(num_keys, arity).items():
                setattr(new, name, value)
            return new.num_slots * _fingerprint_dtype(bits).itemsize

        _, payload = cls._header().read(data, cls.__name__, length)
        dtype = _fingerprint_dtype(new.fingerprint_bits)
        new.table = np.frombuffer(payload, dtype=dtype.newbyteorder("<")).astype(dtype)
        return new

    def __repr__(self) -> str:
        """Its parameters, the fill (keys per slot: every slot holds a value, but only this
        share of them a key's worth) and the keys it was built from, counted (``added=``).

        >>> from bloomedu import XorFilter
        >>> XorFilter(range(1000))
        XorFilter(fingerprint_bits=8, fill=0.79, added=1000)
        """
        arity = "" if self.ARITIES == (3,) else f", arity={self.arity}"
        return filter_repr(self, f"fingerprint_bits={self.fingerprint_bits}{arity}",
                           fill=self.num_keys / self.num_slots, added=self.num_keys)


def _fingerprint_dtype(fingerprint_bits: int) -> np.dtype:
    return np.dtype(np.uint8 if fingerprint_bits == 8 else np.uint16)


def _distinct_h1(keys) -> np.ndarray:
    """h1 of every key (hashed first: a bad key raises before any work), without repeats."""
    parts = [h1 for h1, _ in hashed_batches(keys, None, _CHUNK_KEYS)]
    if not parts:
        return np.zeros(0, dtype=np.uint64)
    # Sorted, then each value once: what np.unique returns, but np.unique of numpy 2.3+ hashes
    # the values first, 0.6 s a million against a few ms for the sort.
    h1 = np.sort(np.concatenate(parts))
    return h1[np.concatenate(([True], h1[1:] != h1[:-1]))] if len(h1) else h1
