"""Argument checks shared by the filters of :mod:`bloomedu.variants`: one message per kind.

Each check names the argument and the range it allows, and returns the value as a plain
``int`` or ``float`` (numpy scalars are accepted, as everywhere in bloomedu; see
:mod:`bloomedu.core.checks`).  Nothing is changed before every argument has passed, so a
refused call leaves a filter as it was.  Tested in ``tests/test_variants.py``.
"""

from __future__ import annotations

import math

from .checks import is_int, is_number

__all__ = ["int_in", "real_in", "choice"]


def int_in(value, name: str, low: int, high: int) -> int:
    """``value`` as an int in ``low..high``, or a ValueError that says so.

    >>> int_in(4, "num_hashes", 1, 256)
    4
    >>> int_in(0, "num_hashes", 1, 256)
    Traceback (most recent call last):
    ValueError: num_hashes must be an int in 1..256, got 0
    """
    if not is_int(value) or not low <= value <= high:
        raise ValueError(f"{name} must be an int in {low}..{high}, got {value!r}")
    return int(value)


def real_in(value, name: str, low: float, high: float, *, low_open: bool = True,
            high_open: bool = True) -> float:
    """``value`` as a float in the interval from ``low`` to ``high`` (open ends by default).

    >>> real_in(0.001, "fpp", 0.0, 1.0)
    0.001
    >>> real_in(1.0, "fpp", 0.0, 1.0)
    Traceback (most recent call last):
    ValueError: fpp must be a number in (0.0, 1.0), got 1.0
    """
    ok = is_number(value) and not math.isnan(value) and \
        (low < value if low_open else low <= value) and (value < high if high_open else value <= high)
    if not ok:
        interval = f"{'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
        raise ValueError(f"{name} must be a number in {interval}, got {value!r}")
    return float(value)


def choice(value, name: str, allowed: tuple) -> int:
    """``value`` if it is one of ``allowed`` (ints), else a ValueError listing them.

    >>> choice(8, "counter_bits", (4, 8))
    8
    >>> choice(5, "counter_bits", (4, 8))
    Traceback (most recent call last):
    ValueError: counter_bits must be one of 4, 8, got 5
    """
    if not is_int(value) or value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(str, allowed))}, got {value!r}")
    return int(value)
