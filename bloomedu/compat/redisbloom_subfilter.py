"""One sub-filter of RedisBloom's scalable filter, with the constants, item bytes and hashes it uses.

RedisBloom 2.8.2 (``deps/bloom/bloom.c``, ``src/sb.c``, ``src/rebloom.c``) sizes each
sub-filter of a chain with ``bloom_init`` and tests and sets its bits with
``bloom_check``/``bloom_add``; :class:`SubFilter` does the same, one item at a time
(readable) and for arrays of items (numpy).  :func:`encode_item` turns an item into the
bytes redis-py sends, :func:`hash_pair` into the module's two MurmurHash64A hashes.

The chain itself is :class:`bloomedu.compat.redisbloom.RedisBloomFilter`; taught in
``notebooks/17_redisbloom.ipynb``; tested in
``tests/test_redisbloom_model.py`` and, against the running module, ``tests/test_redisbloom.py``.
"""

from __future__ import annotations

import math
import struct

import numpy as np

from ..core.hashing import key_chunks
from ..core.checks import is_int, real_number, zeros
from .murmur64 import SEED, murmurhash64a, murmurhash64a_many, pack_items

__all__ = ["RedisBloomError", "SubFilter", "bits_per_entry", "encode_item", "encode_items",
           "hash_pair", "hash_pairs", "info_reply", "LN2", "LN2_SQUARED", "TIGHTENING", "MAX_CHUNK"]

LN2 = 0.693147180559945           # the module's ln 2, as written in deps/bloom/bloom.c
LN2_SQUARED = 0.480453013918201   # and its (ln 2)^2
TIGHTENING = 0.5                  # each new sub-filter's error rate: half the last one's
NOROUND, ENTS_IS_BITS, FORCE64, NO_SCALING = 1, 2, 4, 8   # the module's option bits
MAX_CHUNK = 16 << 20              # BF.SCANDUMP's largest piece
CHAIN_BYTES, LINK_BYTES = 32, 64  # sizeof(SBChain), sizeof(SBLink): in BF.INFO's "Size"
LINK = struct.Struct("<QQQddIQB")       # bytes, bits, size, error, bpe, hashes, entries, n2
_MASK64 = (1 << 64) - 1


class RedisBloomError(RuntimeError):
    """An error the module answers with (its text), e.g. a full NONSCALING filter."""


def bits_per_entry(error: float) -> float:
    """The module's bits per entry, -ln(error) / (ln 2)^2 with its constant.

    >>> round(bits_per_entry(0.01), 6)
    9.585058
    """
    error = real_number(error, "error", 0.0, 1.0, open_low=True, open_high=True,
                        allowed="a number strictly between 0 and 1")
    bpe = -(math.log(error) / LN2_SQUARED)
    return -bpe if bpe < 0 else bpe


def sizable(entries: int, error: float) -> bool:
    """True if the module's ``bloom_init`` can size a sub-filter of ``entries`` at ``error``
    (at least one entry, an error in (0, 1), fewer than 2**64 bits); nothing is allocated.

    >>> sizable(100, 0.005), sizable(100, 5e-324 / 2), sizable(2**64 - 1, 1e-9)
    (True, False, False)
    """
    return entries >= 1 and 0 < error < 1 and link_bytes(entries, bits_per_entry(error)) > 0


def link_bytes(entries: int, bpe: float) -> int:
    """The bytes of a sub-filter for ``entries`` at ``bpe`` bits per entry, as ``bloom_init``
    sizes it with FORCE64 | NOROUND: floor(entries * bpe) bits (at least 1), in 64-bit words;
    0 if that is 2**64 bits or more (the module cannot size it).

    >>> link_bytes(100, bits_per_entry(0.005)), link_bytes(2**64 - 1, 20.0)
    (144, 0)
    """
    wanted = float(entries) * bpe  # C: (uint64_t)(entries * bpe)
    if not wanted < 2.0 ** 64:
        return 0
    return -(-max(1, int(wanted)) // 64) * 8


def info_reply(reply) -> dict:
    """``BF.INFO``'s reply as ``{field: value}``, in the module's order, to compare with
    ``RedisBloomFilter.info()``: redis-py 5.0 returns the flat list the server sends, later
    versions a dict (with bytes or str names, as the client decodes).

    >>> info_reply([b"Capacity", 100, b"Number of filters", 1])
    {'Capacity': 100, 'Number of filters': 1}
    >>> info_reply({b"Capacity": 100}) == info_reply({"Capacity": 100}) == {"Capacity": 100}
    True
    """
    pairs = reply.items() if isinstance(reply, dict) else zip(reply[::2], reply[1::2])
    return {name.decode() if isinstance(name, bytes) else name: value for name, value in pairs}


def encode_item(item) -> bytes:
    """The bytes redis-py sends for an item: str as UTF-8, bytes as is, an int as its digits.

    >>> encode_item("città"), encode_item(b"\\x00"), encode_item(-12)
    (b'citt\\xc3\\xa0', b'\\x00', b'-12')
    """
    if isinstance(item, str):
        try:
            return item.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("item is a str that UTF-8 cannot encode (a lone surrogate); "
                             "redis-py cannot send it either") from None
    if isinstance(item, (bytes, bytearray, memoryview)):
        return bytes(item)
    if is_int(item):
        return str(int(item)).encode("ascii")
    raise TypeError(f"item must be str, bytes or int (what redis-py sends as is), "
                    f"not {type(item).__name__}")


def encode_items(items) -> list[bytes]:
    """:func:`encode_item` of every item of a batch, read through the library's one way in for
    keys (:func:`~bloomedu.core.hashing.key_chunks`: an integer array's values, a
    fixed-width array whose elements end in NUL refused).

    >>> encode_items(np.array([7, -1], dtype=">i2")), encode_items(["a", b"b"])
    ([b'7', b'-1'], [b'a', b'b'])
    """
    encoded: list[bytes] = []
    for chunk in key_chunks(items, 1 << 15):
        if isinstance(chunk, np.ndarray):  # decimal digits, as redis-py sends an int
            encoded += chunk.astype(np.int64 if chunk.dtype.kind == "i" else np.uint64) \
                .astype(bytes).tolist()
        else:
            encoded += [encode_item(item) for item in chunk]
    return encoded


def hash_pair(item) -> tuple[int, int]:
    """RedisBloom's two 64-bit hashes of an item: a with the fixed seed, b seeded with a.

    >>> a, b = hash_pair("123"); b == murmurhash64a(b"123", a)
    True
    """
    data = encode_item(item)
    a = murmurhash64a(data, SEED)
    return a, murmurhash64a(data, a)


def hash_pairs(data: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    packed = pack_items(data)
    a = murmurhash64a_many(*packed, SEED)
    return a, murmurhash64a_many(*packed, a)


class SubFilter:
    """One link of the chain: a Bloom filter of ``bits`` bits and ``hashes`` hash functions.

    Sized as the module's ``bloom_init`` sizes it (options FORCE64 | NOROUND).

    >>> link = SubFilter.sized(100, 0.005)
    >>> link.bits, link.nbytes, link.hashes
    (1152, 144, 8)
    """

    __slots__ = ("entries", "error", "bpe", "hashes", "bits", "nbytes", "size", "n2", "data")

    @classmethod
    def sized(cls, entries: int, error: float) -> "SubFilter":
        """A new empty sub-filter for ``entries`` items at ``error``; RedisBloomError where the
        module's ``bloom_init`` fails (entries 0, an error rate that is not in (0, 1))."""
        if entries < 1 or not 0 < error < 1:
            raise RedisBloomError(f"cannot size a sub-filter for {entries} entries at error "
                                  f"{error!r} (the module's bloom_init refuses it)")
        link = cls()
        link.entries, link.error, link.size, link.n2 = int(entries), float(error), 0, 0
        link.bpe = bits_per_entry(error)
        link.nbytes = link_bytes(entries, link.bpe)
        if link.nbytes == 0:
            raise ValueError(f"a sub-filter of {entries} entries at error {error!r} needs "
                             f"{float(entries) * link.bpe:.3g} bits, more than 2**64")
        link.bits = link.nbytes * 8
        link.hashes = int(math.ceil(LN2 * link.bpe))
        link.data = zeros(link.nbytes, f"a sub-filter of {entries} entries at error {error!r}")
        return link

    def positions(self, a: int, b: int) -> list[int]:
        """The item's bit positions here: (a + i*b) mod 2^64 mod bits, i = 0..hashes-1."""
        return [((a + i * b) & _MASK64) % self.bits for i in range(self.hashes)]

    def contains(self, a: int, b: int) -> bool:
        """True if every position is set (the module's bloom_check)."""
        return all(self.data[x >> 3] >> (x & 7) & 1 for x in self.positions(a, b))

    def set(self, a: int, b: int) -> bool:
        """Set the item's bits; True if one of them changed (bloom_add)."""
        changed = False
        for x in self.positions(a, b):
            if not self.data[x >> 3] >> (x & 7) & 1:
                self.data[x >> 3] |= 1 << (x & 7)
                changed = True
        return changed

    def positions_many(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """An (items, hashes) int64 array of every item's positions."""
        out = np.empty((a.size, self.hashes), dtype=np.uint64)
        running, bits = a.copy(), np.uint64(self.bits)
        with np.errstate(over="ignore"):
            for i in range(self.hashes):
                np.remainder(running, bits, out=out[:, i])
                running += b
        return out.view(np.int64)

    def bits_at(self, positions: np.ndarray) -> np.ndarray:
        """The bits at an array of positions, as bools of the same shape."""
        found = self.data.take(positions >> 3)
        found >>= (positions & 7).astype(np.uint8)
        return (found & 1).astype(bool)

    def contains_many(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """For each item (arrays a, b), whether every position is set; a round per hash function,
        on the items still in the running."""
        alive = np.arange(a.size)
        running, bits = a.copy(), np.uint64(self.bits)
        with np.errstate(over="ignore"):
            for i in range(self.hashes):
                if i:
                    running += b.take(alive)
                keep = np.flatnonzero(self.bits_at((running % bits).view(np.int64)))
                alive, running = alive.take(keep), running.take(keep)
                if not alive.size:
                    break
        answer = np.zeros(a.size, dtype=bool)
        answer[alive] = True
        return answer

    def set_many(self, positions: np.ndarray) -> None:
        """Set the bits at an array of positions (repeats allowed)."""
        flat = positions.ravel()
        masks = np.left_shift(np.uint8(1), (flat & 7).astype(np.uint8))
        np.bitwise_or.at(self.data, flat >> 3, masks)

    def header(self) -> bytes:
        """This link's 53 bytes in the BF.SCANDUMP header."""
        return LINK.pack(self.nbytes, self.bits, self.size, self.error, self.bpe, self.hashes,
                          self.entries, self.n2)

    def __repr__(self) -> str:
        return (f"SubFilter(entries={self.entries}, error={self.error!r}, bits={self.bits}, "
                f"hashes={self.hashes}, size={self.size})")


def first_setters(positions: np.ndarray) -> np.ndarray:
    """For each entry of an (items, k) positions array: the first item (row) with that position."""
    flat = positions.ravel()
    order = np.argsort(flat, kind="stable")  # equal positions keep their items' order
    ordered = flat[order]
    starts = np.r_[True, ordered[1:] != ordered[:-1]]
    group_start = np.maximum.accumulate(np.where(starts, np.arange(flat.size), 0))
    first = np.empty(flat.size, dtype=np.int64)
    first[order] = order[group_start] // positions.shape[1]
    return first.reshape(positions.shape)

