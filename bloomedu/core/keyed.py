"""A Bloom filter with a secret key: no one without the key can craft its false positives.

:class:`~bloomedu.core.filter.BloomFilter` hashes with MurmurHash3 and seed 0, as
Guava and most libraries do, so anyone who knows the keys it holds (a public
blacklist, say: article 2's "Bloom Filter: come memorizzare 1 Milione di
stringhe in meno di 2MB?" puts a filter of malicious URLs in front of a
database) can rebuild it bit for bit and search offline for keys it wrongly
claims, then send only those (lesson 11 does).  A secret MurmurHash seed is not
enough: MurmurHash2 and 3 have multicollisions that hold for every seed
(Aumasson, Bernstein and Boßlet, "Hash-flooding DoS reloaded", 29C3, 2012).

:class:`KeyedBloomFilter` puts a keyed cryptographic hash in front: each key is
first replaced by a 64-bit tag, BLAKE2b keyed with a secret of 16 to 64 bytes
(``hashlib.blake2b(..., key=secret)``, a pseudo-random function; RFC 7693), and
the tag is then stored as an ordinary ``BloomFilter`` stores an int.  Without
the secret, where a key's bits fall is unpredictable, so crafted keys are
false positives only at the filter's ordinary rate p.  Two keys share a tag
with probability 2**-64, far below any p a filter is built for.
``BloomFilter`` itself is unchanged: the same bits as before for the same keys.

Taught in ``notebooks/11_a_filter_is_not_a_set.ipynb`` (section 4: someone who
knows the hash); tested in ``tests/test_keyed.py``.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Iterable

import numpy as np

from . import filter_bytes
from .filter import BloomFilter
from .hashing import key_list, key_to_bytes

__all__ = ["KeyedBloomFilter"]

_TAG_BYTES = 8
_FINGERPRINT_BYTES = 16  # in to_bytes: a keyed hash of a fixed text, so a wrong secret is refused


def _check_secret(secret) -> bytes:
    if not isinstance(secret, (bytes, bytearray)):
        raise TypeError(f"secret must be bytes (e.g. secrets.token_bytes(16)), not "
                        f"{type(secret).__name__}")
    if not 16 <= len(secret) <= 64:
        raise ValueError(f"secret must be 16 to 64 bytes long (BLAKE2b's key), got {len(secret)}")
    return bytes(secret)


class KeyedBloomFilter(BloomFilter):
    """A :class:`~bloomedu.core.filter.BloomFilter` whose positions depend on a secret key.

    >>> secret = bytes(range(16))          # in real use: secrets.token_bytes(16), kept private
    >>> f = KeyedBloomFilter(1024, 3, secret)
    >>> f.add("123")
    >>> "123" in f, "456" in f
    (True, False)
    >>> f.bit_indices("123") == BloomFilter(1024, 3).bit_indices("123")  # not the public bits
    False
    """

    # In to_bytes: 3, BloomFilter's positions (scheme 2) of a keyed 64-bit BLAKE2b tag of each
    # key; so neither class reads the other's bytes, nor combines with the other.
    HASHING = 3
    _READ_HASHING = (3,)

    def __init__(self, num_bits: int, num_hashes: int, secret: bytes):
        super().__init__(num_bits, num_hashes)
        self._secret = _check_secret(secret)
        # What two filters compare to tell whether their secrets are equal, without either
        # reading the other's secret: a keyed hash of a fixed text, which reveals nothing of it.
        self.secret_fingerprint = hashlib.blake2b(b"bloomedu keyed filter", key=self._secret,
                                                  digest_size=_FINGERPRINT_BYTES).digest()

    @classmethod
    def from_capacity(cls, expected_items: int, fpp: float, secret: bytes) -> "KeyedBloomFilter":
        """Size a keyed filter for n items at rate p, as :meth:`BloomFilter.from_capacity` does.

        >>> f = KeyedBloomFilter.from_capacity(1000, 0.01, bytes(16))
        >>> (f.num_bits, f.num_hashes) == (BloomFilter.from_capacity(1000, 0.01).num_bits, 7)
        True
        """
        plain = BloomFilter.from_capacity(expected_items, fpp)
        return cls(plain.num_bits, plain.num_hashes, secret)

    # --- the keyed tag --------------------------------------------------------------
    def tag(self, key: str | bytes | int) -> int:
        """The key's 64-bit tag: BLAKE2b of its bytes, keyed with the secret.

        >>> a, b = KeyedBloomFilter(64, 2, bytes(16)), KeyedBloomFilter(64, 2, b"x" * 16)
        >>> a.tag("123") == b.tag("123"), a.tag("123") == a.copy().tag("123")
        (False, True)
        """
        digest = hashlib.blake2b(key_to_bytes(key), key=self._secret, digest_size=_TAG_BYTES)
        return int.from_bytes(digest.digest(), "little")

    def tags(self, keys: Iterable) -> np.ndarray:
        """The tags of many keys, as a uint64 array; a bad key raises before any is returned.

        >>> f = KeyedBloomFilter(64, 2, bytes(16))
        >>> f.tags(["a", 7]).tolist() == [f.tag("a"), f.tag(7)]
        True
        """
        secret, blake2b = self._secret, hashlib.blake2b
        digests = b"".join([blake2b(key_to_bytes(key), key=secret, digest_size=_TAG_BYTES).digest()
                            for key in key_list(keys)])
        return np.frombuffer(digests, dtype="<u8").astype(np.uint64)

    # --- the one place BloomFilter turns keys into hashes, on tags --------------------
    def _hash(self, key: str | bytes | int) -> tuple[int, int]:
        """(h1, h2) of the key's tag: every per-key method (``add``, ``in``, ``bit_indices``)
        of BloomFilter reads them here.

        >>> f = KeyedBloomFilter(64, 3, bytes(16))
        >>> f.bit_indices("x") == BloomFilter(64, 3).bit_indices(f.tag("x"))
        True
        """
        return super()._hash(self.tag(key))

    def _hashed(self, keys):
        """(h1, h2) of the keys' tags, a chunk at a time: ``add_many``, ``contains_many`` and
        ``add_many_new`` all read them here; every key is tagged (and checked) first.

        >>> f = KeyedBloomFilter(1024, 3, bytes(16)); f.add_many_new(["a", "b", "a"]).tolist()
        [True, True, False]
        >>> "a" in f, f.contains_many(["a", "b", "zzz"]).tolist()
        (True, [True, True, False])
        """
        return super()._hashed(self.tags(keys))

    # --- what depends on the secret -------------------------------------------------
    def _check_compatible(self, other: object) -> "KeyedBloomFilter":
        other = super()._check_compatible(other)
        if not hmac.compare_digest(self.secret_fingerprint, other.secret_fingerprint):
            raise ValueError("secret differs: filters with different secrets put the same key "
                             "on different bits, so their bits cannot be combined")
        return other

    def _with_bits(self, data: np.ndarray) -> "KeyedBloomFilter":
        """A new filter with this one's m, k and secret, holding ``data`` as its bits."""
        new = type(self)(self.num_bits, self.num_hashes, self._secret)
        new.bits.data[:] = data
        return new

    def __eq__(self, other: object) -> bool:
        """Equal when m, k, secret and every bit agree."""
        if not isinstance(other, BloomFilter):
            return NotImplemented
        same_secret = hmac.compare_digest(self.secret_fingerprint,
                                          getattr(other, "secret_fingerprint", b""))
        return bool(super().__eq__(other)) and same_secret

    __hash__ = None

    def to_bytes(self) -> bytes:
        """BloomFilter's bytes with the secret's fingerprint (not the secret) after the header.

        >>> f = KeyedBloomFilter(100, 3, bytes(16)); len(f.to_bytes()) - len(BloomFilter(100, 3).to_bytes())
        16
        """
        return filter_bytes.dump(self.HASHING, self.bits_snapshot(), num_bits=self.num_bits,
                                 num_hashes=self.num_hashes, extra=self.secret_fingerprint)

    @classmethod
    def from_bytes(cls, data: bytes, secret: bytes) -> "KeyedBloomFilter":
        """Read what :meth:`to_bytes` wrote, with the secret it was written with (the bytes hold
        only its fingerprint); another secret is refused.

        >>> f = KeyedBloomFilter(100, 3, bytes(16)); f.add("x")
        >>> KeyedBloomFilter.from_bytes(f.to_bytes(), bytes(16)) == f
        True
        >>> KeyedBloomFilter.from_bytes(f.to_bytes(), b"another secret!!")
        Traceback (most recent call last):
        ValueError: secret is not the one these bytes were written with: the filter would find none of its keys
        """
        hashing, num_bits, num_hashes, bits, fingerprint = filter_bytes.load(
            data, cls.HASHING, cls._READ_HASHING, extra=_FINGERPRINT_BYTES)
        new = cls(num_bits, num_hashes, secret)
        if not hmac.compare_digest(fingerprint, new.secret_fingerprint):
            raise ValueError("secret is not the one these bytes were written with: the filter "
                             "would find none of its keys")
        new.bits.data[:] = bits
        return new

    def __reduce__(self):
        """Pickle with the secret (so keep a pickle as private as the secret itself)."""
        return _restore, (self.to_bytes(), self._secret)

    def _repr_parameters(self) -> str:  # repr: BloomFilter's, the secret never shown
        return super()._repr_parameters() + ", secret=..."


def _restore(data: bytes, secret: bytes) -> KeyedBloomFilter:
    return KeyedBloomFilter.from_bytes(data, secret)
