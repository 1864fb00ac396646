"""The first article's filter: k salted n-bit hash functions over 2**n bits.

Article 1, steps 3 to 5.  Step 3 keeps one n-bit hash of each ID in a vector of
2**n bits (:class:`BitVector`, "a very degenerate Bloom filter").  Step 4 makes
several n-bit hash functions by appending a salt to the input
(:func:`bloomedu.core.hashing.n_bit_hash_function`).  Step 5 is the article's
``BloomFilter(numberOfHashFunctions, numberOfBits)``: k such functions salted
with "0", "1", ..., "k-1" (:class:`SaltedBloomFilter`).  With the default
``murmurhash2`` its bits match the article's JavaScript exactly.

Taught in ``notebooks/03_bit_vector.ipynb`` and
``notebooks/05_bloom_filter.ipynb``; tested in ``tests/test_salted.py``.
"""

from __future__ import annotations

from typing import Callable

from ..core.bits import BitArray
from ..core.checks import MAX_HASHES, check_picklable, check_storage, whole_number
from ..core.contract import Filter, filter_repr
from ..core.hashing import murmurhash2, n_bit_hash_function
from ..core.theory import estimate_count

__all__ = ["BitVector", "SaltedBloomFilter"]


def _check_key(key) -> str:
    if not isinstance(key, str):
        raise TypeError(f"key must be str (the article hashes text IDs), not {type(key).__name__}")
    return key


class SaltedBloomFilter(Filter):
    """The article's Bloom filter: ``num_hashes`` salted ``hash_bits``-bit hashes.

    >>> f = SaltedBloomFilter(num_hashes=3, hash_bits=8)
    >>> kept = []
    >>> for message_id in ["123", "456", "123", "789"]:
    ...     if message_id not in f:
    ...         f.add(message_id)
    ...         kept.append(message_id)
    >>> kept
    ['123', '456', '789']
    >>> f.num_bits, f.nbytes
    (256, 32)

    Its arguments come in the article's order, k first, as in its
    ``BloomFilter(numberOfHashFunctions, numberOfBits)``, so that lesson 05's code reads
    like the article's.  The second is the hash width, not m: the filter has 2**hash_bits bits.

    k is at most 1024 (``MAX_HASHES``) and n at most 32 (the hash is 32 bits).  It
    pickles, its ``hash_function`` by reference: a module-level function works,
    a lambda gets a clear ``PicklingError``.

    Threads may share one: ``add`` holds the filter's lock while it sets the
    bits (:class:`~bloomedu.core.contract.Filter`), ``in`` only reads, so no added key is
    lost; see :class:`bloomedu.BloomFilter` for what is and is not safe.
    """

    def __init__(self, num_hashes: int, hash_bits: int,
                 hash_function: Callable[[str], int] = murmurhash2):
        self.num_hashes = whole_number(num_hashes, "num_hashes", 1, MAX_HASHES)
        self.hash_bits = whole_number(hash_bits, "hash_bits", 1, 32)
        if not callable(hash_function):
            raise TypeError(f"hash_function must be callable, not {type(hash_function).__name__}")
        self.hash_function = hash_function
        self.num_bits = 2 ** self.hash_bits
        check_storage(self.num_bits // 8, f"hash_bits={self.hash_bits}")
        self.hash_functions = self._make_hash_functions()
        self.bits = BitArray(self.num_bits, word_bits=8)

    def _make_hash_functions(self) -> list[Callable[[str], int]]:
        """The k salted functions, salts "0" to "k-1" (rebuilt, not pickled: they are closures)."""
        return [n_bit_hash_function(self.hash_bits, str(i), self.hash_function)
                for i in range(self.num_hashes)]

    def __getstate__(self):
        """The state without the lock (:class:`~bloomedu.core.contract.Filter`) and
        without the closures, which are rebuilt from ``hash_function``."""
        check_picklable(self.hash_function, type(self).__name__)
        attributes, slots = super().__getstate__()
        return {name: value for name, value in attributes.items() if name != "hash_functions"}, slots

    def __setstate__(self, state) -> None:
        super().__setstate__(state)  # a new lock, whatever the protocol
        self.hash_functions = self._make_hash_functions()

    def bit_indices(self, key: str) -> list[int]:
        """The k positions of a key, hash function i = 0..k-1 in order.

        >>> SaltedBloomFilter(3, 8).bit_indices("123")   # salts "0", "1", "2"
        [246, 204, 89]
        """
        key = _check_key(key)
        return [hash_function(key) for hash_function in self.hash_functions]

    def add(self, key: str) -> None:
        """Set the key's k bits; a non-str key raises TypeError before any bit changes.

        >>> f = SaltedBloomFilter(3, 8); f.add("123"); f.bits.count()
        3
        """
        self._set_bits(self.bits, self.bit_indices(key))

    def __contains__(self, key: str) -> bool:
        """False means never added; True means added or a collision (false positive).

        >>> f = SaltedBloomFilter(3, 8); f.add("123")
        >>> "123" in f, "456" in f
        (True, False)
        """
        return all(self.bits[index] for index in self.bit_indices(key))

    def __eq__(self, other: object) -> bool:
        """Equal when k, n, the hash function and every bit agree.

        >>> SaltedBloomFilter(3, 8) == SaltedBloomFilter(3, 8), SaltedBloomFilter(3, 8) == BitVector(8)
        (True, False)
        """
        if type(other) is not type(self):
            return NotImplemented
        return (self.num_hashes, self.hash_bits, self.hash_function) == \
            (other.num_hashes, other.hash_bits, other.hash_function) and self.bits == other.bits

    __hash__ = None  # mutable

    @property
    def nbytes(self) -> int:
        """Bytes of bit storage: 2**hash_bits / 8 (at least 1).

        >>> SaltedBloomFilter(3, 8).nbytes, SaltedBloomFilter(3, 2).nbytes
        (32, 1)
        """
        return self.bits.nbytes

    def _repr_parameters(self) -> str:
        return f"num_hashes={self.num_hashes}, hash_bits={self.hash_bits}"

    def __repr__(self) -> str:
        """k, the hash width, the fill and the keys that went in, estimated from the fill
        (``added~``: the filter keeps nothing but its bits).

        >>> f = SaltedBloomFilter(num_hashes=3, hash_bits=8); f.add_many(["123", "456", "789"]); f
        SaltedBloomFilter(num_hashes=3, hash_bits=8, fill=0.04, added~3)
        """
        bits_set = self.bits.count()
        return filter_repr(self, self._repr_parameters(), fill=bits_set / self.num_bits,
                           estimated=True, added=estimate_count(
                               num_bits=self.num_bits, num_hashes=self.num_hashes, bits_set=bits_set))


class BitVector(SaltedBloomFilter):
    """Step 3: one unsalted n-bit hash, one bit per possible hash value.

    ``key -> hash_function(key) % 2**n``, exactly the article's
    ``murmurhash.v2(id) % numberOfValues``.

    >>> v = BitVector(hash_bits=8)
    >>> v.add("123")
    >>> v.bit_indices("123"), "123" in v, "456" in v
    ([47], True, False)
    """

    def __init__(self, hash_bits: int, hash_function: Callable[[str], int] = murmurhash2):
        super().__init__(1, hash_bits, hash_function)

    def _make_hash_functions(self) -> list[Callable[[str], int]]:
        return [n_bit_hash_function(self.hash_bits, "", self.hash_function)]

    def _repr_parameters(self) -> str:
        return f"hash_bits={self.hash_bits}"
