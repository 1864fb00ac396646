"""The random generator of PostgreSQL's bloom index: Park and Miller's "minimal standard", on a C int32.

contrib/bloom (``blutils.c``) turns a column's hash into bit positions with its own copy of
FreeBSD's ``random()``, so that the positions on disk never change with PostgreSQL's generator:
``x -> 16807 x mod (2^31 - 1)`` (Park and Miller, "Random number generators: good ones are
hard to find", CACM 31(10), 1988), computed as Schrage does, without overflowing 31 bits, since
``2^31 - 1 = 127773 * 16807 + 2836``.

Its state ``next`` is a C ``int32``, and C's ``/`` and ``%`` truncate toward zero, where
Python's ``//`` and ``%`` round toward minus infinity.  Both matter: ``mySrand`` takes an
unsigned 32-bit seed (a hash), stores it in the signed ``next`` (so seeds of 2^31 and more
become negative), and reduces it with ``%``; a negative state then stays on the negative side
of C's arithmetic.  :func:`int32`, :func:`c_div` and :func:`c_mod` spell that out.

Used by :mod:`bloomedu.compat.postgres`; tested in ``tests/test_postgres_hash.py`` (and, through
the index's signatures, against the real server in ``tests/test_postgres_server.py``).

>>> generator = BloomRandom()
>>> generator.srand(0)
>>> generator.rand(), generator.rand()
(16806, 282475248)
"""

from __future__ import annotations

from ..core.checks import is_int

__all__ = ["BloomRandom", "int32", "c_div", "c_mod", "MODULUS"]

MODULUS = 0x7FFFFFFF   # 2^31 - 1, a prime
MULTIPLIER = 16807     # 7^5
_Q, _R = 127773, 2836  # MODULUS = _Q * MULTIPLIER + _R: Schrage's decomposition


def _integer(value, name: str) -> int:
    """``value`` as a Python int, or a TypeError naming ``name`` (C's arithmetic is on integers)."""
    if not is_int(value):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    return int(value)


def int32(value: int) -> int:
    """``value`` stored in a C ``int32``: its low 32 bits, read as two's complement.

    What ``next = seed`` does to an unsigned seed (every C compiler PostgreSQL supports wraps).

    >>> int32(5), int32(0x80000000), int32(0xFFFFFFFF)
    (5, -2147483648, -1)
    """
    value = _integer(value, "value") & 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def c_div(a: int, b: int) -> int:
    """C's ``a / b`` on ints: the quotient truncated toward zero (Python's ``//`` floors).

    >>> c_div(7, 2), c_div(-7, 2), -7 // 2
    (3, -3, -4)
    """
    a, b = _integer(a, "a"), _integer(b, "b")
    if b == 0:
        raise ValueError("b must be a nonzero int (C leaves a division by 0 undefined)")
    quotient = abs(a) // abs(b)
    return quotient if (a < 0) == (b < 0) else -quotient


def c_mod(a: int, b: int) -> int:
    """C's ``a % b``: ``a - b * (a / b)``, which has the sign of ``a`` (Python's ``%`` has ``b``'s).

    >>> c_mod(7, 2), c_mod(-7, 2), -7 % 2
    (1, -1, 1)
    """
    quotient = c_div(a, b)   # checks both
    return int(a) - int(b) * quotient


class BloomRandom:
    """``mySrand`` and ``myRand`` of ``blutils.c``: one state, ``next``, a C int32.

    >>> generator = BloomRandom()
    >>> generator.srand(0x80000000)      # the seed 2^31 is the int32 -2^31
    >>> generator.next
    -1
    >>> generator.rand()                 # from -1: x = -16807, then + (2^31 - 1), minus 1
    2147466839
    """

    def __init__(self):
        self.next = 1

    def srand(self, seed: int) -> None:
        """``mySrand(uint32 seed)``: ``next = seed`` (an int32), then ``next = next % 0x7ffffffe + 1``.

        Meant to put ``next`` in 1..0x7ffffffe, which it does for seeds below 2^31; a larger
        seed is a negative int32 and C's ``%`` keeps its sign, so ``next`` lands in
        -0x7ffffffc..0 instead.

        >>> generator = BloomRandom()
        >>> [(generator.srand(seed), generator.next)[1] for seed in (0, 5, 0x7FFFFFFE, 0xFFFFFFFE)]
        [1, 6, 1, -1]
        """
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"seed must be an int, not {type(seed).__name__}")
        if not 0 <= seed <= 0xFFFFFFFF:
            raise ValueError(f"seed must be a uint32, in 0..{0xFFFFFFFF}, got {seed}")
        self.next = c_mod(int32(seed), 0x7FFFFFFE) + 1

    def rand(self) -> int:
        """``myRand()``: ``next = 16807 * next mod (2^31 - 1)`` by Schrage's method; returns ``next - 1``.

        ``hi = next / 127773`` and ``lo = next % 127773`` (C's, truncating), then
        ``x = 16807 lo - 2836 hi``, which stays inside an int32 for every ``next`` ``srand``
        can leave, and ``x + (2^31 - 1)`` if it is negative.  From a state in 1..2^31 - 2 the
        result is in 0..2^31 - 3; from a state of 0 (the seeds 0xFFFFFFFF and 0x80000001) the
        generator is stuck at 0 and returns -1 forever.

        >>> generator = BloomRandom()
        >>> generator.srand(0xFFFFFFFF)
        >>> generator.next, generator.rand(), generator.rand()
        (0, -1, -1)
        """
        hi, lo = c_div(self.next, _Q), c_mod(self.next, _Q)
        x = MULTIPLIER * lo - _R * hi
        if x < 0:
            x += MODULUS
        self.next = x
        return x - 1
