"""A blocked Bloom filter: all of a key's bits in one 256-bit block, one cache miss per key.

Putze, Sanders and Singler ("Cache-, hash- and space-efficient Bloom filters",
WEA 2007) put a key's k bits in one block the size of a cache line: a query or an
insert then costs one cache miss instead of k.  The price is a higher false-positive
rate at the same m, because blocks fill unevenly (some get more keys than the
average): :func:`split_block_false_positive_rate` averages the rate over the
Poisson number of keys per block, as they derive.

This is the *split-block* layout of Apache Impala and Parquet (the Parquet format's
``BloomFilter.md``, "SBBF"; Kudu and Arrow use it too): a block is eight 32-bit
words, and a key sets exactly one bit in each word.  From a key's 64-bit hash h,
the block is ``((h >> 32) * num_blocks) >> 32`` and the bit in word w is
``((h mod 2**32) * SALT[w] mod 2**32) >> 27``, with Parquet's eight odd salts.  The
hash here is the library's own (h1 of MurmurHash3 x64 128 of ``key_to_bytes``);
:mod:`bloomedu.compat.parquet` swaps in Parquet's XXH64 and is checked against
files written by pyarrow.

The bulk methods hash a chunk of keys, read each key's block once (``take`` of
32-byte rows), OR the masks in and write the rows back (with ``bloomedu[fast]``, one compiled
loop over the keys instead: :mod:`~bloomedu.variants.blocked_native`).  Keys of one chunk that
share a block are found with a small tag table and merged in batch order, so no
bit is lost and :meth:`BlockedBloomFilter.add_many_new` answers exactly as a loop
of ``in`` then ``add`` would.

Taught in ``notebooks/19_blocked_filters.ipynb``; tested in ``tests/test_blocked.py``;
timed by ``make bench`` (W4) and ``make bench-day``.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.checks import MAX_NUM_BITS, check_storage, probability, real_number, whole_number
from ..core.contract import Filter, filter_repr
from ..core.theory import estimate_count
from ..core.hashing import hash128, hashed_batches, key_chunks
from ..kernels import backend
from ..kernels.threads import ordered_map
from ..core.serial import Header
from . import blocked_kernels

__all__ = ["BlockedBloomFilter", "split_block_false_positive_rate", "num_blocks_for"]

BLOCK_BITS = 256
SALTS = tuple(int(salt) for salt in blocked_kernels.SALTS)  # Parquet's BloomFilter.md
_MAX_BLOCKS = 1 << 32  # the block comes from 32 bits of the hash
_HEADER = Header(b"BLMB", 1, "HQ")  # hashing, number of blocks
_CHUNK_KEYS = 1 << 15  # keys hashed per numpy call (and per job on a worker thread)
_LINE = blocked_kernels.LINE_BYTES


def _native():
    """The compiled kernels (:mod:`~bloomedu.variants.blocked_native`) when
    :func:`bloomedu.kernels.backend.active` says ``"native"``, else None (numpy's)."""
    if backend.active() == "native":
        from . import blocked_native
        return blocked_native
    return None


def _itself(h1: np.ndarray) -> np.ndarray:
    return h1


def split_block_false_positive_rate(*, num_blocks: int, n: float) -> float:
    """The rate of a split-block filter after n keys: the Poisson average over blocks.

    A block that received j keys has, in each of its 8 words of 32 bits, each bit
    set with probability 1 - (31/32)^j; a query needs its 8 bits set:
    (1 - (31/32)^j)^8.  The number of keys per block is about Poisson with mean
    n / num_blocks, so the rate is the sum over j of P(j) (1 - (31/32)^j)^8
    (Putze, Sanders and Singler 2007, section 3, for blocks of this kind).

    >>> round(split_block_false_positive_rate(num_blocks=62_500, n=1_000_000), 5)  # 16 bits a key
    0.00132
    """
    n = real_number(n, "n", 0.0, allowed="a non-negative number")
    num_blocks = whole_number(num_blocks, "num_blocks", 1, _MAX_BLOCKS)
    mean = n / num_blocks
    if mean == 0:
        return 0.0
    if mean > 4000:  # every block holds over 3,000 keys: (31/32)**3000 is below 1e-41
        return 1.0
    spread = 12 * math.sqrt(mean) + 12
    low, high = max(0, int(mean - spread)), int(mean + spread) + 1
    terms = (math.exp(j * math.log(mean) - mean - math.lgamma(j + 1)
                      + 8 * math.log1p(-(31 / 32) ** j)) for j in range(max(low, 1), high))
    return math.fsum(terms)


def num_blocks_for(*, n: int, p: float) -> int:
    """The fewest blocks that hold n keys at a rate of at most p (by bisection).

    >>> blocks = num_blocks_for(n=1_000_000, p=0.001)
    >>> blocks, round(blocks * 256 / 1e6, 2)
    (65976, 16.89)
    """
    n = whole_number(n, "expected_items", 1, MAX_NUM_BITS)  # a Python int: no numpy overflow
    p = probability(p, "fpp")
    low, high = 1, max(1, n // 32)  # start at 8 bits a key
    while split_block_false_positive_rate(num_blocks=high, n=n) > p:
        if high >= _MAX_BLOCKS:
            raise ValueError(f"expected_items={n} at fpp={p} needs more than 2**32 blocks "
                             "(2**40 bits), the most a split-block filter addresses")
        low, high = high, min(2 * high, _MAX_BLOCKS)
    while low < high:  # the rate falls as blocks are added
        middle = (low + high) // 2
        too_few = split_block_false_positive_rate(num_blocks=middle, n=n) > p
        low, high = (middle + 1, high) if too_few else (low, middle)
    return low


class BlockedBloomFilter(Filter):
    """A split-block Bloom filter of ``num_bits`` bits (rounded up to 256-bit blocks), k = 8.

    >>> f = BlockedBloomFilter(num_bits=1024)
    >>> f.add("123")
    >>> "123" in f, "456" in f
    (True, False)
    >>> f.num_blocks, f.num_hashes, f.nbytes, len(f.bit_indices("123"))
    (4, 8, 128, 8)

    Threads may share it as they share a :class:`~bloomedu.BloomFilter`: every write (``add``,
    ``add_many``, ``add_many_new``, ``|=``) holds its lock, ``copy`` and ``to_bytes`` too.
    """

    HASHING = 1  # in to_bytes: h1 of MurmurHash3 x64 128 of key_to_bytes, Parquet's bit choice
    num_hashes = 8

    def __init__(self, num_bits: int):
        num_bits = whole_number(num_bits, "num_bits", 1, _MAX_BLOCKS * BLOCK_BITS)
        self.num_blocks = -(-num_bits // BLOCK_BITS)
        self.num_bits = self.num_blocks * BLOCK_BITS
        check_storage(32 * self.num_blocks + _LINE, f"num_bits={num_bits}")
        self.words = blocked_kernels.aligned_words(self.num_blocks * 8)  # no block straddles two lines

    @classmethod
    def from_capacity(cls, expected_items: int, fpp: float) -> "BlockedBloomFilter":
        """Size a filter for n keys at rate p, by the Poisson-averaged rate.

        >>> f = BlockedBloomFilter.from_capacity(1_000_000, 0.001)
        >>> f.num_blocks, f.nbytes
        (65976, 2111232)
        """
        num_blocks = num_blocks_for(n=expected_items, p=fpp)
        check_storage(32 * num_blocks + _LINE, f"expected_items={expected_items} at fpp={fpp} "
                                               f"(num_bits={num_blocks * BLOCK_BITS})")
        return cls(num_blocks * BLOCK_BITS)

    # --- one key at a time ------------------------------------------------------------
    def _hash(self, key) -> int:
        return hash128(key)[0]

    def block_and_masks(self, key) -> tuple[int, list[int]]:
        """The key's block and its eight 32-bit word masks (one bit each).

        >>> BlockedBloomFilter(1024).block_and_masks("123")[0]
        2
        """
        h = self._hash(key)
        low = h & 0xFFFFFFFF
        return (h >> 32) * self.num_blocks >> 32, \
            [1 << ((low * salt & 0xFFFFFFFF) >> 27) for salt in SALTS]

    def bit_indices(self, key) -> list[int]:
        """The key's 8 bit positions in the whole filter (word w of its block, LSB first).

        >>> BlockedBloomFilter(1024).bit_indices("123")
        [512, 567, 584, 620, 648, 701, 729, 749]
        """
        block, masks = self.block_and_masks(key)
        return [(block * 8 + w) * 32 + mask.bit_length() - 1 for w, mask in enumerate(masks)]

    # --- in-then-add in two steps, for a pipeline (bloomedu.workloads.day.deduplicate) -------
    def batch_of(self, h1: np.ndarray):
        """What :meth:`add_batch_new` needs for keys of 64-bit hashes ``h1`` (the first half of
        ``hash128``), computed without touching the filter, so another thread can make it: ``h1``
        itself for the native kernels, the blocks, masks and shared blocks for numpy's.

        >>> f = BlockedBloomFilter(4096); h1 = np.array([5, 6, 5], dtype=np.uint64)
        >>> present = np.empty(3, dtype=bool); f.add_batch_new(f.batch_of(h1), present)
        >>> present.tolist()
        [False, False, True]
        """
        return h1 if _native() is not None else self._batch(h1)

    def add_batch_new(self, batch, present: np.ndarray) -> None:
        """Insert the keys of a :meth:`batch_of` in order, holding the filter's lock;
        ``present[j]``: key j's bits were all set at its turn (``not`` of ``add_many_new``)."""
        native = _native()
        if isinstance(batch, np.ndarray):
            if native is None:  # made on the native path, written on numpy's
                batch = self._batch(batch)
            else:
                with self._lock:
                    native.add_new(self.words, batch, self.num_blocks, present)
                return
        with self._lock:
            present[:] = blocked_kernels.apply(self.words, batch, report=True)

    def add(self, key) -> None:
        """Insert a key (str, bytes or int): one bit in each word of its block.

        >>> f = BlockedBloomFilter(512); f.add(42); f.bits_set()
        8
        """
        block, masks = self.block_and_masks(key)
        with self._lock:
            for w, mask in enumerate(masks):
                self.words[block * 8 + w] |= np.uint32(mask)

    def __contains__(self, key) -> bool:
        """True if the key's 8 bits are set: inserted, or a false positive.

        >>> f = BlockedBloomFilter(512); f.add(42)
        >>> 42 in f, 43 in f
        (True, False)
        """
        block, masks = self.block_and_masks(key)
        return all(int(self.words[block * 8 + w]) & mask for w, mask in enumerate(masks))

    # --- many keys at once --------------------------------------------------------------
    def _prepared(self, keys, make):
        """``make(h)`` for every chunk of keys' 64-bit hashes, on worker threads, in order.

        An integer array is hashed on the workers too; other keys are all hashed here
        first, so a bad key raises before any bit is set."""
        if isinstance(keys, np.ndarray) and keys.dtype.kind in "iu":
            flat = keys.ravel()
            parts = (flat[start:start + _CHUNK_KEYS] for start in range(0, flat.size, _CHUNK_KEYS))
            return ordered_map(lambda part: make(self._hash_integers(part)), parts)
        hashed = [self._hash_keys(chunk) for chunk in key_chunks(keys, _CHUNK_KEYS)]
        return ordered_map(make, hashed)

    def _hash_integers(self, keys: np.ndarray) -> np.ndarray:
        """The 64-bit hash of every key of a (non-empty) integer array (the library's: h1)."""
        return next(hashed_batches(keys, None, keys.size))[0]

    def _hash_keys(self, keys: list) -> np.ndarray:
        """The 64-bit hashes of a (non-empty) chunk of Python keys from ``key_chunks``."""
        return next(hashed_batches(keys, None, len(keys)))[0]

    def _query(self, h1: np.ndarray):
        return blocked_kernels.block_index(h1, self.num_blocks), blocked_kernels.masks(h1)

    def _batch(self, h1: np.ndarray) -> blocked_kernels.Batch:
        return blocked_kernels.Batch(*self._query(h1))

    def add_many(self, keys) -> None:
        """Insert many keys: a numpy integer array, or an iterable of str/bytes/int.

        Sets exactly the bits ``add`` sets; if a key is rejected, nothing has changed.

        >>> f = BlockedBloomFilter(4096)
        >>> f.add_many(np.arange(100, dtype=np.uint64))
        >>> bool(f.contains_many(np.arange(100, dtype=np.uint64)).all())
        True
        """
        native = _native()
        if native is not None:  # one compiled loop, keys in order: no Batch to build
            for h1 in self._prepared(keys, _itself):
                with self._lock:
                    native.add(self.words, h1, self.num_blocks)
            return
        for batch in self._prepared(keys, self._batch):  # hashed on workers, written here
            with self._lock:
                blocked_kernels.apply(self.words, batch, report=False)

    def add_many_new(self, keys) -> np.ndarray:
        """Add many keys; True for each key that was new (as ``k not in f`` just before
        ``f.add(k)``, one key after the other: earlier keys of the batch count).

        >>> BlockedBloomFilter(4096).add_many_new(["a", "b", "a"]).tolist()
        [True, True, False]
        """
        answers, native = [], _native()
        if native is not None:
            for h1 in self._prepared(keys, _itself):
                present = np.empty(h1.size, dtype=bool)
                with self._lock:
                    native.add_new(self.words, h1, self.num_blocks, present)
                answers.append(~present)
        else:
            for batch in self._prepared(keys, self._batch):
                with self._lock:  # the answers and the writes of a batch, together
                    answers.append(~blocked_kernels.apply(self.words, batch, report=True))
        return np.concatenate(answers) if answers else np.zeros(0, dtype=bool)

    def contains_many(self, keys) -> np.ndarray:
        """A bool array: for each key, whether the filter might contain it.

        >>> f = BlockedBloomFilter(4096); f.add_many(["a", "b"])
        >>> f.contains_many(["a", "b", "zzz"]).tolist()
        [True, True, False]
        """
        native = _native()
        if native is not None:
            answers = []
            for h1 in self._prepared(keys, _itself):
                found = np.empty(h1.size, dtype=bool)
                native.contains(self.words, h1, self.num_blocks, found)
                answers.append(found)
        else:
            answers = [blocked_kernels.contains(self.words, block, masks)
                       for block, masks in self._prepared(keys, self._query)]
        return np.concatenate(answers) if answers else np.zeros(0, dtype=bool)

    # --- what the filter holds ------------------------------------------------------------
    @property
    def nbytes(self) -> int:
        """Bytes of bit storage: 32 per block.

        >>> BlockedBloomFilter(257).nbytes
        64
        """
        return int(self.words.nbytes)

    def bits_set(self) -> int:
        """Number of bits set to 1 (counted a megabyte at a time).

        >>> f = BlockedBloomFilter(256); f.add("x"); f.bits_set()
        8
        """
        return blocked_kernels.popcount(self.words)

    @property
    def fill_ratio(self) -> float:
        """The fraction of the m bits set to 1.

        >>> BlockedBloomFilter(256).fill_ratio
        0.0
        """
        return self.bits_set() / self.num_bits

    def current_false_positive_rate(self) -> float:
        """The rate now, from the bits: the mean over blocks of the product of the 8 words'
        fill ratios (a key never inserted picks a block, then one bit in each word).

        >>> f = BlockedBloomFilter(256); f.add("x"); f.current_false_positive_rate() == 32.0 ** -8
        True
        """
        return blocked_kernels.mean_block_rate(self.words)

    # --- combining, copies, equality, bytes ------------------------------------------------
    def _check_compatible(self, other) -> "BlockedBloomFilter":
        if not isinstance(other, BlockedBloomFilter) or type(other) is not type(self):
            raise TypeError(f"can only combine with a {type(self).__name__}, "
                            f"not {type(other).__name__}")
        if other.num_blocks != self.num_blocks:
            raise ValueError(f"num_bits differs: {self.num_bits} vs {other.num_bits}")
        return other

    def __ior__(self, other: "BlockedBloomFilter") -> "BlockedBloomFilter":
        """In-place union ``a |= b``.

        >>> a, b = BlockedBloomFilter(512), BlockedBloomFilter(512); b.add("y")
        >>> a |= b; "y" in a
        True
        """
        words = self._check_compatible(other).copy().words  # a snapshot, under their lock
        with self._lock:  # then ours, under our lock: never both locks at once
            np.bitwise_or(self.words, words, out=self.words)
        return self

    def __or__(self, other: "BlockedBloomFilter") -> "BlockedBloomFilter":
        """The union: exactly the filter of both filters' keys.

        >>> a = BlockedBloomFilter(512); a | BlockedBloomFilter(1024)
        Traceback (most recent call last):
        ValueError: num_bits differs: 512 vs 1024
        """
        return self.copy().__ior__(other)

    def copy(self) -> "BlockedBloomFilter":
        """An independent filter with the same blocks and bits.

        >>> f = BlockedBloomFilter(512); g = f.copy(); g.add("x"); "x" in f
        False
        """
        new = type(self)(self.num_bits)
        with self._lock:
            new.words[:] = self.words
        return new

    def __eq__(self, other: object) -> bool:
        """Equal when the type, size and every bit agree.

        >>> BlockedBloomFilter(512) == BlockedBloomFilter(512)
        True
        """
        if type(other) is not type(self):
            return NotImplemented
        return self.num_blocks == other.num_blocks and np.array_equal(self.words, other.words)

    __hash__ = None  # mutable: not a dict key

    def to_bytes(self) -> bytes:
        """A header (magic, version, hashing, number of blocks), then the blocks' words.

        >>> f = BlockedBloomFilter(256); f.add("x")
        >>> data = f.to_bytes(); len(data), BlockedBloomFilter.from_bytes(data) == f
        (48, True)
        """
        header = _HEADER.pack(self.HASHING, self.num_blocks)
        with self._lock:
            return header + self.words.tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> "BlockedBloomFilter":
        """Read what :meth:`to_bytes` wrote; anything else raises ``ValueError``.

        >>> BlockedBloomFilter.from_bytes(b"BLMB")
        Traceback (most recent call last):
        ValueError: data is truncated: 4 bytes, the header alone is 16
        """
        def payload(values):
            hashing, num_blocks = values
            if hashing != cls.HASHING:
                raise ValueError(f"hashing {hashing} is not this filter's ({cls.HASHING})")
            if not 1 <= num_blocks <= _MAX_BLOCKS:
                raise ValueError(f"corrupt header: {num_blocks} blocks (1..2**32)")
            return 32 * num_blocks, f"a filter of {num_blocks} blocks"

        (_, num_blocks), words = _HEADER.read(data, "blocked filter", payload)
        new = cls(num_blocks * BLOCK_BITS)
        new.words[:] = np.frombuffer(words, dtype="<u4")
        return new

    def __reduce__(self):
        """Pickle through :meth:`to_bytes`.

        >>> import pickle
        >>> f = BlockedBloomFilter(512); f.add("x"); pickle.loads(pickle.dumps(f)) == f
        True
        """
        return type(self).from_bytes, (self.to_bytes(),)

    def __repr__(self) -> str:
        """m, the fill and the keys that went in, estimated from the fill (``added~``: the
        blocks keep nothing but their bits), as a Bloom filter of k = 8 estimates them.

        >>> f = BlockedBloomFilter(num_bits=8192); f.add_many(range(500)); f
        BlockedBloomFilter(num_bits=8192, fill=0.39, added~500)
        """
        bits_set = self.bits_set()
        return filter_repr(self, f"num_bits={self.num_bits}", fill=bits_set / self.num_bits,
                           added=estimate_count(num_bits=self.num_bits, num_hashes=len(SALTS),
                                                bits_set=bits_set), estimated=True)
