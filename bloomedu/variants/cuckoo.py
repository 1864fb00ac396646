"""A cuckoo filter: a fingerprint per key in one of two buckets, deletes allowed.

Fan, Andersen, Kaminsky and Mitzenmacher ("Cuckoo filter: practically better than Bloom",
CoNEXT 2014) keep an f-bit fingerprint of each key in a table of buckets of b slots.  A key
may live in two buckets: i1 from its hash, and i2 from i1 and the fingerprint alone, so a
fingerprint can be moved to its other bucket without the key ("partial-key cuckoo
hashing").  Insert: an empty slot in either bucket, else evict a fingerprint and move it to
its other bucket, and so on, up to 500 moves.  A query looks at 2b slots, so an absent key
matches with probability about 2b / 2**f: the rate falls by half for every fingerprint bit,
down to any p (RedisBloom's one-byte fingerprints stop at 2/255 for b = 1:
:mod:`bloomedu.compat.redisbloom_cuckoo`).

The layout, here:

- (h1, h2) from :mod:`bloomedu.core.hashing`, like every filter of the library;
  i1 = h1 mod B for B buckets, the fingerprint ``h2 mod (2**f - 1) + 1`` (0 marks an empty
  slot);
- i2 = (t - i1) mod B with t = fmix64(fingerprint) mod B.  The paper writes
  ``i1 XOR hash(fingerprint)``, which needs B a power of two; this subtraction is its own
  inverse too (t - i2 = i1 mod B) for any B, so the table is sized to the capacity instead of
  up to twice it;
- the evictions: a walk from i1 or i2, evicting the slot a key's own hash chooses at each
  step (so ``add`` and ``add_many`` are deterministic and give the same table).

What happens at high load: past about 95% of the slots at b = 4 (84% at b = 2, 50% at
b = 1, 98% at b = 8: the paper's table), the 500 moves fail to find an empty slot.  ``add``
then undoes every move of its walk, in reverse, and raises :class:`CuckooFilterFull`: the
filter is unchanged, byte for byte (the key that did not fit is not in it).
``add_many`` is all or nothing: a key that does not fit undoes the whole call.

Deleting: ``delete`` removes one copy of the key's fingerprint from its buckets.  For a key
never added it usually finds none and returns False; but when the key is a false positive
(another key's fingerprint sits in one of its buckets) it removes that other key's
fingerprint, and that key, which was added, is then reported absent: delete only what you
added.  A key added twice is stored twice, and needs two deletes.

Taught in ``notebooks/20_after_bloom.ipynb``; tested in
``tests/test_cuckoo.py`` (and its rates in ``tests/test_cuckoo_rates.py``).
"""

from __future__ import annotations

import math

import numpy as np

from ..core.checks import MAX_NUM_BITS, one_of, whole_number, zeros
from ..core.hashing import hashed_batches, key_hashes
from ..core.contract import filter_repr
from ..core.serial import Header, Shared, locked
from . import cuckoo_batch

__all__ = ["CuckooFilter", "CuckooFilterFull", "DESIGN_LOAD"]

# The load factor the table is sized for, by bucket size: below the paper's load at the
# first failed insert (about 50%, 84%, 95% and 98%; measured here 49%, 87%, 96% and 99% at f = 12 on a
# table for 1,000,000 keys: `python -m benchmarks.after_bloom figures`), so that `capacity` keys fit.
DESIGN_LOAD = {1: 0.4, 2: 0.8, 4: 0.9, 8: 0.95}
_HEADER = Header(b"BLMK", 1, "QQBB")  # capacity, buckets, fingerprint bits, bucket size
_DTYPES = ((8, np.uint8), (16, np.uint16), (32, np.uint32))
_CHUNK_KEYS = 1 << 15


def _dtype_for(fingerprint_bits: int) -> np.dtype:
    """The narrowest of uint8, uint16 and uint32 that holds ``fingerprint_bits`` bits."""
    return np.dtype(next(kind for width, kind in _DTYPES if width >= fingerprint_bits))


class CuckooFilterFull(RuntimeError):
    """A key found no slot within :data:`~bloomedu.variants.cuckoo_batch.MAX_KICKS` moves: the
    filter is full, and unchanged."""


def num_buckets_for(capacity: int, bucket_size: int) -> int:
    """The buckets a filter for ``capacity`` keys gets: capacity / (b * DESIGN_LOAD[b]), rounded up.

    >>> num_buckets_for(1_000_000, 4), num_buckets_for(1, 4)
    (277778, 1)
    """
    return max(1, math.ceil(capacity / (bucket_size * DESIGN_LOAD[bucket_size])))


class CuckooFilter(Shared):
    """A cuckoo filter for ``capacity`` keys: f-bit fingerprints in buckets of ``bucket_size``.

    >>> f = CuckooFilter(capacity=1000, fingerprint_bits=12, bucket_size=4)
    >>> f.add("123"); f.add("456")
    >>> "123" in f, "789" in f, len(f)
    (True, False, 2)
    >>> f.delete("123"), "123" in f, f.delete("never added")
    (True, False, False)
    >>> f.num_buckets, f.num_slots, f.nbytes, f.num_bits
    (278, 1112, 2224, 13344)

    Fingerprints of up to 8, 16 or 32 bits are kept in bytes, 16-bit or 32-bit words: ``nbytes``
    is that memory, ``num_bits`` (B * b * f) what a packed table would take.  Threads may share
    a filter: every method holds its lock (evictions and deletes move fingerprints, so reads
    hold it too).
    """

    def __init__(self, capacity: int, fingerprint_bits: int = 12, bucket_size: int = 4):
        self.capacity = whole_number(capacity, "capacity", 1, MAX_NUM_BITS)
        self.fingerprint_bits = whole_number(fingerprint_bits, "fingerprint_bits", 2, 32)
        self.bucket_size = one_of(bucket_size, "bucket_size", tuple(DESIGN_LOAD))
        self.num_buckets = num_buckets_for(self.capacity, self.bucket_size)
        dtype = _dtype_for(self.fingerprint_bits)
        slots = self.num_buckets * self.bucket_size
        self.table = zeros(slots * np.dtype(dtype).itemsize,
                           f"capacity={self.capacity} (fingerprint_bits={self.fingerprint_bits}, "
                           f"bucket_size={self.bucket_size})").view(dtype).reshape(
                               self.num_buckets, self.bucket_size)

    # --- a key's fingerprint and buckets -------------------------------------------------
    def _fingerprint(self, h2: int) -> int:
        return h2 % ((1 << self.fingerprint_bits) - 1) + 1

    def _other(self, fingerprint: int, bucket: int) -> int:
        """The other bucket of a fingerprint in ``bucket``: (fmix64(fp) - bucket) mod B."""
        return cuckoo_batch.other_bucket(fingerprint, bucket, self.num_buckets)

    def buckets(self, key) -> tuple[int, int, int]:
        """(fingerprint, i1, i2) of a key.

        >>> f = CuckooFilter(1000); fp, i1, i2 = f.buckets("123")
        >>> 1 <= fp < 2 ** 12, f._other(fp, i1) == i2, f._other(fp, i2) == i1
        (True, True, True)
        """
        h1, h2 = key_hashes(key, None)
        fingerprint = self._fingerprint(h2)
        i1 = h1 % self.num_buckets
        return fingerprint, i1, self._other(fingerprint, i1)

    def _batch(self, h1: np.ndarray, h2: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(fingerprints, i1, i2) as arrays: :meth:`buckets` for a batch of (h1, h2)."""
        return cuckoo_batch.buckets_of(h1, h2, self.num_buckets, self.fingerprint_bits)

    # --- one key ---------------------------------------------------------------------------
    @locked
    def add(self, key) -> None:
        """Store the key's fingerprint (again, if it is there already).

        Raises :class:`CuckooFilterFull`, the filter unchanged, when it does not fit.

        >>> f = CuckooFilter(4, bucket_size=1)
        >>> for key in range(20):
        ...     f.add(key)
        Traceback (most recent call last):
        ...
        bloomedu.variants.cuckoo.CuckooFilterFull: key 8 does not fit: the filter is full (8 ...
        >>> len(f), 8 in f
        (8, False)
        """
        h1, h2 = key_hashes(key, None)
        journal: list = []
        fingerprint = self._fingerprint(h2)
        i1 = h1 % self.num_buckets
        if not cuckoo_batch.insert_one(self, fingerprint, i1, self._other(fingerprint, i1),
                                       h1, journal):
            raise CuckooFilterFull(f"key {key!r} does not fit: {self._full_note()}")

    def _full_note(self) -> str:
        return (f"the filter is full ({len(self)} fingerprints in {self.num_slots} slots, load "
                f"{self.load_factor:.3f}) and unchanged: every move was undone")

    @locked
    def __contains__(self, key) -> bool:
        """True if one of the key's two buckets holds its fingerprint: added, or a false positive."""
        fingerprint, i1, i2 = self.buckets(key)
        return bool((self.table[i1] == fingerprint).any() or (self.table[i2] == fingerprint).any())

    contains = __contains__

    @locked
    def delete(self, key) -> bool:
        """Remove one copy of the key's fingerprint (first bucket first); False if none is there.

        A false positive's fingerprint belongs to another key: deleting it removes that key.
        """
        fingerprint, i1, i2 = self.buckets(key)
        for bucket in (i1, i2):
            slots = np.flatnonzero(self.table[bucket] == fingerprint)
            if slots.size:
                self.table[bucket, slots[0]] = 0
                return True
        return False

    # --- many keys --------------------------------------------------------------------------
    @locked
    def add_many(self, keys) -> None:
        """``add`` every key, in order, as a loop of ``add`` would (the same table), all or nothing.

        Every key is hashed before anything changes; a key that does not fit raises
        :class:`CuckooFilterFull` and undoes the whole call.

        >>> f = CuckooFilter(1000); f.add_many(np.arange(500, dtype=">u8"))
        >>> bool(f.contains_many(np.arange(500)).all()), len(f)
        (True, 500)
        """
        h1, h2 = _hash_all(keys)
        journal: list = []
        failed = cuckoo_batch.insert_batch(self, h1, h2, journal)
        if failed is not None:
            cuckoo_batch.undo(self, journal)
            raise CuckooFilterFull(f"keys[{failed}] does not fit: {self._full_note()}; "
                                   "nothing of this add_many was kept")

    @locked
    def add_until_full(self, keys) -> int:
        """Add keys in order until the first that does not fit; how many were added.

        The filter keeps them: it is exactly as after a loop of ``add`` stopped at its first
        :class:`CuckooFilterFull`.  The load factor then is the one the paper measures "at the
        first failed insert".

        >>> f = CuckooFilter(1000, 12, 4); added = f.add_until_full(np.arange(5000))
        >>> added == len(f) < 5000, f.load_factor > 0.9
        (True, True)
        """
        h1, h2 = _hash_all(keys)
        failed = cuckoo_batch.insert_batch(self, h1, h2, [])
        added = h1.size if failed is None else failed
        return added

    @locked
    def contains_many(self, keys) -> np.ndarray:
        """For each key, whether one of its buckets holds its fingerprint (a bool array).

        >>> f = CuckooFilter(100); f.add_many(["a", "b"])
        >>> f.contains_many(["a", "b", "zzz"]).tolist()
        [True, True, False]
        """
        answers = []
        for h1, h2 in hashed_batches(keys, None, _CHUNK_KEYS):
            fingerprints, i1, i2 = self._batch(h1, h2)
            want = fingerprints[:, None]
            answers.append((self.table[i1] == want).any(axis=1) | (self.table[i2] == want).any(axis=1))
        return np.concatenate(answers) if answers else np.zeros(0, dtype=bool)

    # --- what it holds -------------------------------------------------------------------------
    def __len__(self) -> int:
        """The fingerprints stored: keys added (each copy) minus keys deleted, counted in the
        table (a fingerprint is never 0, an empty slot always)."""
        return int(np.count_nonzero(self.table))

    @property
    def num_slots(self) -> int:
        """B * b slots."""
        return self.num_buckets * self.bucket_size

    @property
    def load_factor(self) -> float:
        """The fraction of slots in use.

        >>> f = CuckooFilter(100); f.add_many(range(50)); f.load_factor == 50 / f.num_slots
        True
        """
        return len(self) / self.num_slots

    @property
    def nbytes(self) -> int:
        """Bytes of the table (fingerprints in bytes, 16-bit or 32-bit words)."""
        return int(self.table.nbytes)

    @property
    def num_bits(self) -> int:
        """m of a packed table: B * b * f bits."""
        return self.num_slots * self.fingerprint_bits

    # --- bytes ------------------------------------------------------------------------------------
    @locked
    def to_bytes(self) -> bytes:
        """A versioned header (magic ``BLMK``, capacity, buckets, f, b), then the table, little-endian.

        >>> f = CuckooFilter(100); f.add("x")
        >>> CuckooFilter.from_bytes(f.to_bytes()) == f
        True
        """
        little = self.table.astype(self.table.dtype.newbyteorder("<"))
        return _HEADER.pack(self.capacity, self.num_buckets, self.fingerprint_bits,
                            self.bucket_size) + little.tobytes()

    @classmethod
    def from_bytes(cls, data) -> "CuckooFilter":
        """Read what :meth:`to_bytes` wrote; anything else raises ``ValueError`` or ``TypeError``.

        The header is checked against the payload's length before the table is allocated.

        >>> CuckooFilter.from_bytes(b"BLMK")
        Traceback (most recent call last):
        ValueError: data is truncated: 4 bytes, the header alone is 24
        """
        def length(values):
            capacity, buckets, bits, bucket_size = values
            if bucket_size not in DESIGN_LOAD or not 2 <= bits <= 32 or \
                    not 1 <= capacity <= MAX_NUM_BITS:
                raise ValueError(f"corrupt CuckooFilter header: capacity {capacity}, "
                                 f"fingerprint_bits {bits}, bucket_size {bucket_size}")
            if buckets != num_buckets_for(capacity, bucket_size):
                raise ValueError(f"corrupt CuckooFilter header: {buckets} buckets, where capacity "
                                 f"{capacity} at bucket_size {bucket_size} gives "
                                 f"{num_buckets_for(capacity, bucket_size)}")
            return buckets * bucket_size * _dtype_for(bits).itemsize

        (capacity, buckets, bits, bucket_size), payload = _HEADER.read(data, "CuckooFilter", length)
        dtype = _dtype_for(bits).newbyteorder("<")
        table = np.frombuffer(payload, dtype=dtype)
        if int(table.max(initial=0)) >= 1 << bits:
            raise ValueError(f"corrupt CuckooFilter data: a fingerprint above {bits} bits")
        new = cls(capacity, bits, bucket_size)
        new.table[...] = table.reshape(buckets, bucket_size)
        return new

    def __repr__(self) -> str:
        """Its parameters, the fill (:attr:`load_factor`) and the keys in it, counted
        (``added=``: the fingerprints stored, ``len(f)``).

        >>> f = CuckooFilter(capacity=1000, fingerprint_bits=12); f.add_many(range(300)); f
        CuckooFilter(capacity=1000, fingerprint_bits=12, bucket_size=4, fill=0.27, added=300)
        """
        stored = len(self)
        return filter_repr(self, f"capacity={self.capacity}, fingerprint_bits="
                                 f"{self.fingerprint_bits}, bucket_size={self.bucket_size}",
                           fill=stored / self.num_slots, added=stored)


def _hash_all(keys) -> tuple[np.ndarray, np.ndarray]:
    """(h1, h2) of every key, hashed before anything changes (a bad key raises here)."""
    hashed = list(hashed_batches(keys, None, _CHUNK_KEYS))
    if not hashed:
        return np.zeros(0, np.uint64), np.zeros(0, np.uint64)
    return np.concatenate([h1 for h1, _ in hashed]), np.concatenate([h2 for _, h2 in hashed])
