"""PostgreSQL's hash of text and of int4: Bob Jenkins' lookup3, as ``src/common/hashfn.c`` has it.

A bloom index (:mod:`bloomedu.compat.postgres`) hashes each column with the support function of
its operator class: ``hashtext`` for ``text`` and ``hashint4`` for ``int4`` (contrib/bloom's
``bloom--1.0.sql``).  Both end in Bob Jenkins' 2006 hash "lookup3", which PostgreSQL calls
``hash_any`` (``hash_bytes`` since version 12, with ``hash_any`` a wrapper around it):

- ``hashtext(t)`` is ``hash_any`` of the text's bytes in the database's encoding (UTF-8 here),
  for the deterministic collations every default database has;
- ``hashint4(i)`` is ``hash_uint32(i)``: the same hash of the 4 bytes of the int, computed
  without storing them.

PostgreSQL reads the key a 32-bit word at a time, in the machine's byte order; this module
follows little-endian machines (x86-64, ARM64), where the server's own numbers were recorded.
Everything is unsigned 32-bit arithmetic, so each step is masked with ``& 0xFFFFFFFF``; the
SQL functions return the same 32 bits as a signed ``int4``, which :func:`as_int4` gives.

Tested against values the real server computed (``SELECT hashtext(...), hashint4(...)``, kept
in ``tests/data/postgres_hash_vectors.json``) in ``tests/test_postgres_hash.py``.

>>> as_int4(hashtext("")), as_int4(hashint4(-1))
(-1477818771, 385747274)
"""

from __future__ import annotations

__all__ = ["hash_any", "hash_uint32", "hashtext", "hashint4", "as_int4"]

_MASK32 = 0xFFFFFFFF
_GOLDEN = 0x9E3779B9  # lookup3's initial value: the golden ratio, as a 32-bit fraction
_EXTRA = 3923095      # the constant PostgreSQL adds to it (Jenkins' code has the seed there)
INT4_MIN, INT4_MAX = -(1 << 31), (1 << 31) - 1


def _rot(x: int, k: int) -> int:
    """Rotate the 32-bit ``x`` left by ``k`` bits."""
    return ((x << k) | (x >> (32 - k))) & _MASK32


def _mix(a: int, b: int, c: int) -> tuple[int, int, int]:
    """lookup3's ``mix``: stir three 32-bit words after each 12 bytes of key (reversibly)."""
    a = (a - c) & _MASK32; a ^= _rot(c, 4);  c = (c + b) & _MASK32
    b = (b - a) & _MASK32; b ^= _rot(a, 6);  a = (a + c) & _MASK32
    c = (c - b) & _MASK32; c ^= _rot(b, 8);  b = (b + a) & _MASK32
    a = (a - c) & _MASK32; a ^= _rot(c, 16); c = (c + b) & _MASK32
    b = (b - a) & _MASK32; b ^= _rot(a, 19); a = (a + c) & _MASK32
    c = (c - b) & _MASK32; c ^= _rot(b, 4);  b = (b + a) & _MASK32
    return a, b, c


def _final(a: int, b: int, c: int) -> int:
    """lookup3's ``final``: mix the three words into ``c``, the hash."""
    c ^= b; c = (c - _rot(b, 14)) & _MASK32
    a ^= c; a = (a - _rot(c, 11)) & _MASK32
    b ^= a; b = (b - _rot(a, 25)) & _MASK32
    c ^= b; c = (c - _rot(b, 16)) & _MASK32
    a ^= c; a = (a - _rot(c, 4)) & _MASK32
    b ^= a; b = (b - _rot(a, 14)) & _MASK32
    c ^= b; c = (c - _rot(b, 24)) & _MASK32
    return c


def hash_any(key: bytes) -> int:
    """PostgreSQL's ``hash_any`` (``hash_bytes``) of ``key``: an unsigned 32-bit int.

    The state starts at ``0x9e3779b9 + len + 3923095`` in all three words; each whole 12 bytes
    are added as three little-endian words and mixed.  The last 0..11 bytes are added the same
    way, except that the lowest byte of ``c`` is left for the length, already in it: bytes 8, 9
    and 10 of the tail go to ``c``'s bits 8..31.

    >>> hash_any(b"a"), hash_any("città".encode())
    (1075015857, 616179568)
    """
    if not isinstance(key, (bytes, bytearray, memoryview)):
        raise TypeError(f"key must be bytes, not {type(key).__name__}")
    key = bytes(key)
    length = len(key)
    a = b = c = (_GOLDEN + length + _EXTRA) & _MASK32
    whole = length - length % 12
    for start in range(0, whole, 12):
        a = (a + int.from_bytes(key[start:start + 4], "little")) & _MASK32
        b = (b + int.from_bytes(key[start + 4:start + 8], "little")) & _MASK32
        c = (c + int.from_bytes(key[start + 8:start + 12], "little")) & _MASK32
        a, b, c = _mix(a, b, c)
    tail = key[whole:]
    a = (a + int.from_bytes(tail[0:4], "little")) & _MASK32
    b = (b + int.from_bytes(tail[4:8], "little")) & _MASK32
    c = (c + (int.from_bytes(tail[8:11], "little") << 8)) & _MASK32
    return _final(a, b, c)


def hash_uint32(k: int) -> int:
    """PostgreSQL's ``hash_uint32``: ``hash_any`` of the 4 little-endian bytes of ``k``.

    A 4-byte key is all tail: it is added to ``a`` and mixed once by ``final``.

    >>> hash_uint32(7) == hash_any((7).to_bytes(4, "little"))
    True
    """
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"k must be an int, not {type(k).__name__}")
    if not 0 <= k <= _MASK32:
        raise ValueError(f"k must be an int in 0..{_MASK32}, got {k}")
    a = b = c = (_GOLDEN + 4 + _EXTRA) & _MASK32
    return _final((a + k) & _MASK32, b, c)


def hashtext(text: str) -> int:
    """``hashtext``: ``hash_any`` of the text's UTF-8 bytes (a UTF-8 database, any
    deterministic collation), unsigned.

    >>> as_int4(hashtext("PostgreSQL")), as_int4(hashtext("città"))
    (-1696465276, 616179568)
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str (a text value), not {type(text).__name__}")
    if "\0" in text:
        raise ValueError("text cannot hold the NUL character: PostgreSQL's text refuses it")
    try:
        return hash_any(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValueError("text must be encodable as UTF-8 (no lone surrogates)") from None


def hashint4(value: int) -> int:
    """``hashint4``: ``hash_uint32`` of the int4, its 32 bits read as unsigned, unsigned.

    An int4 is signed: -1 is stored as the bits 0xFFFFFFFF, and hashed as those.

    >>> hashint4(-1) == hash_uint32(0xFFFFFFFF), as_int4(hashint4(42))
    (True, 1509752520)
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"value must be an int (an int4 value), not {type(value).__name__}")
    if not INT4_MIN <= value <= INT4_MAX:
        raise ValueError(f"value must be an int4, in {INT4_MIN}..{INT4_MAX}, got {value}")
    return hash_uint32(value & _MASK32)


def as_int4(hash_value: int) -> int:
    """The unsigned 32-bit ``hash_value`` read as the signed ``int4`` SQL shows.

    >>> as_int4(0x7FFFFFFF), as_int4(0x80000000), as_int4(0xFFFFFFFF)
    (2147483647, -2147483648, -1)
    """
    if isinstance(hash_value, bool) or not isinstance(hash_value, int):
        raise TypeError(f"hash_value must be an int, not {type(hash_value).__name__}")
    if not 0 <= hash_value <= _MASK32:
        raise ValueError(f"hash_value must be an unsigned 32-bit int, in 0..{_MASK32}, got {hash_value}")
    return hash_value - (1 << 32) if hash_value & 0x80000000 else hash_value
