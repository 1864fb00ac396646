"""What Guava's Java does to numbers and strings, in Python: Java's rounding, its UTF-8, its int.

Article 2 builds its filter with Guava (:mod:`bloomedu.compat.guava`), whose sizing rounds as
``Math.round`` does and whose string funnel hashes ``String.getBytes(UTF_8)``; its older
strategy adds two 32-bit halves as Java ints.  Each is written out here once.

Tested in ``tests/test_guava.py``; taught in ``notebooks/12_guava.ipynb``.

>>> java_round(0.5), java_utf8("città"), signed32(2**31)
(1, b'citt\\xc3\\xa0', -2147483648)
"""

from __future__ import annotations

import math

from ..core.checks import real_number

__all__ = ["java_round", "java_utf8"]  # and signed32, for guava.py

_MASK32 = 0xFFFFFFFF


def java_round(x: float) -> int:
    """Java's ``Math.round``: the nearest integer, ties toward positive infinity.

    Exact, unlike ``floor(x + 0.5)`` (which rounds 0.49999999999999994 up).

    >>> java_round(2.5), java_round(-2.5), java_round(0.49999999999999994)
    (3, -2, 0)
    """
    x = real_number(x, "x")  # Java rounds NaN to 0 and saturates infinities; nothing here asks
    floor = math.floor(x)
    return floor + 1 if x - floor >= 0.5 else floor


def java_utf8(text: str) -> bytes:
    """The bytes Java's ``String.getBytes(UTF_8)`` gives: what Guava's string funnel hashes.

    A Python ``str`` is code points and a Java ``String`` is UTF-16 units: a
    surrogate pair becomes one character, and a lone surrogate becomes ``?``.

    >>> java_utf8("città"), java_utf8("a\\ud800b"), java_utf8("\\ud83d\\ude00") == java_utf8("😀")
    (b'citt\\xc3\\xa0', b'a?b', True)
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be str (Guava's stringFunnel), not {type(text).__name__}")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        units = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
        return units.encode("utf-8", "replace")


def signed32(value: int) -> int:
    """The low 32 bits of an int, read as a Java (signed) int.

    >>> signed32(2**31 - 1), signed32(2**31), signed32(-1)
    (2147483647, -2147483648, -1)
    """
    value &= _MASK32
    return value - (1 << 32) if value & 0x80000000 else value
