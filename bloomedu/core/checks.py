"""What every module accepts as an argument, and the limits it holds to, in one place.

Bad input must get a clear error that names the argument and what is allowed.
The types are the same everywhere: Python and numpy integers are whole numbers
(``np.int64(8)`` straight out of a numpy computation works anywhere an ``int``
does), any real number type (numpy floats, ``Fraction``, ``Decimal``) is a
number, and ``True`` is neither, though Python counts ``bool`` as an ``int``.
:func:`whole_number` and :func:`real_number` convert at the boundary, once, to
a Python ``int`` or ``float``, so no numpy scalar reaches the arithmetic (where
``-np.uint64(1000)`` wraps around and ``np.int8(100) * 2`` overflows).

The limits, and why:

- :data:`MAX_HASHES` = 1024 hash functions (k), for every filter, formula and
  command.  At the best k for a rate p, k = log2(1/p) (article 2's sizing), so
  k = 1024 already aims at p = 2**-1024, below the smallest normal double
  (2**-1022): no rate a float can hold needs more.  A query at that k stays
  fast in pure Python, and so does the exact rate of
  :mod:`bloomedu.core.occupancy`; a k of 2**40 would take hours a query.
  Real systems keep their own, smaller limits (Guava's 255, Bitcoin's 50):
  :mod:`bloomedu.compat` checks those.
- :data:`MAX_NUM_BITS` = 2**63 - 1 bits (m): positions are computed and used as
  signed 64-bit numpy indices.
- Memory: a size this machine cannot hold is refused before anything is
  allocated (:func:`check_storage`), with the bytes it needs and the bytes
  available.  Before, not after: numpy asks for zeroed memory, which Linux
  grants lazily, so a filter larger than the free memory is "created" at once
  and the process is killed by the kernel later, when its bits are written,
  with no Python error at all.

Taught nowhere on its own (every lesson's clear errors come from here); tested
in ``tests/test_limits.py`` and ``tests/test_numbers.py``.
"""

from __future__ import annotations

import math
import numbers
import os
import pickle
from decimal import Decimal
from pathlib import Path

import numpy as np

__all__ = ["MAX_HASHES", "MAX_NUM_BITS", "StorageTooLarge", "available_memory", "check_picklable",
           "check_storage", "human_bytes", "is_int", "is_number", "one_of", "probability", "real_number",
           "whole_number", "zeros"]

MAX_HASHES = 1024
MAX_NUM_BITS = 2 ** 63 - 1
_PROBED_FROM = 16 << 20  # smaller storage is not checked against the machine (numpy's own
# MemoryError, made clear by zeros(), covers it)
_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB")


def is_int(value) -> bool:
    """True for a Python or numpy integer, False for ``bool`` and everything else.

    >>> is_int(3), is_int(np.uint64(3)), is_int(True), is_int(3.0)
    (True, True, False, False)
    """
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def is_number(value) -> bool:
    """True for any real number (int, float, numpy scalars, Fraction, Decimal), False for bools.

    >>> from fractions import Fraction
    >>> is_number(0.5), is_number(np.float32(0.5)), is_number(Fraction(1, 2)), is_number("0.5")
    (True, True, True, False)
    >>> is_number(False), is_number(Decimal("0.5"))
    (False, True)
    """
    return (isinstance(value, (numbers.Real, Decimal))
            and not isinstance(value, (bool, np.bool_)))


def _range(low, high) -> str:
    if high is None:
        return f">= {low}"
    return f"in {low}..{'2**63-1' if high == MAX_NUM_BITS else high}"


def whole_number(value, name: str, low: int = 1, high: int | None = None, *,
                 whole_floats: bool = False) -> int:
    """``value`` as a Python ``int`` in ``low..high``, or a clear error that names ``name``.

    Any integer type is accepted; with ``whole_floats`` also a real number with
    no fractional part (``1e6``, ``np.float32(8)``).  A wrong type is a
    ``TypeError``, a number out of range or with a fraction a ``ValueError``.

    >>> whole_number(np.uint64(1000), "n"), whole_number(1e6, "n", whole_floats=True)
    (1000, 1000000)
    >>> whole_number(2000, "num_hashes", 1, MAX_HASHES)
    Traceback (most recent call last):
    ValueError: num_hashes must be an int in 1..1024, got 2000
    >>> whole_number("3", "num_hashes")
    Traceback (most recent call last):
    TypeError: num_hashes must be an int >= 1, not str
    """
    if is_int(value):
        number = int(value)
    elif whole_floats and is_number(value):
        if isinstance(value, (float, np.floating)) and not math.isfinite(value) \
                or isinstance(value, Decimal) and not value.is_finite() \
                or value != int(value):
            raise ValueError(f"{name} must be a whole number {_range(low, high)}, got {value!r}")
        number = int(value)
    else:
        kind = "a whole number" if whole_floats else "an int"
        raise TypeError(f"{name} must be {kind} {_range(low, high)}, not {type(value).__name__}")
    if number < low or high is not None and number > high:
        kind = "a whole number" if whole_floats else "an int"
        raise ValueError(f"{name} must be {kind} {_range(low, high)}, got {value!r}")
    return number


def real_number(value, name: str, low: float | None = None, high: float | None = None, *,
                open_low: bool = False, open_high: bool = False, allowed: str | None = None) -> float:
    """``value`` as a finite Python ``float`` in a range, or a clear error that names ``name``.

    Every real type converts (numpy scalars, ``Fraction``, ``Decimal``; an int
    too large for a float is out of range); bounds are inclusive unless open.
    ``allowed`` is what the error says a value must be ("a positive number").

    >>> from fractions import Fraction
    >>> real_number(Fraction(1, 4), "p", 0, 1, open_low=True, open_high=True)
    0.25
    >>> real_number(float("nan"), "p", 0, 1, allowed="a number strictly between 0 and 1")
    Traceback (most recent call last):
    ValueError: p must be a number strictly between 0 and 1, got nan
    """
    if allowed is None:
        parts = [f"{'>' if open_low else '>='} {low}" if low is not None else "",
                 f"{'<' if open_high else '<='} {high}" if high is not None else ""]
        allowed = " ".join(["a finite number"] + [" and ".join(part for part in parts if part)])
    if not is_number(value):
        raise TypeError(f"{name} must be {allowed.strip()}, not {type(value).__name__}")
    if isinstance(value, Decimal) and value.is_nan():  # float() refuses a signaling NaN
        raise ValueError(f"{name} must be {allowed.strip()}, got {value!r}")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf if value > 0 else -math.inf
    if not math.isfinite(number) \
            or low is not None and (number < low or open_low and number == low) \
            or high is not None and (number > high or open_high and number == high):
        raise ValueError(f"{name} must be {allowed.strip()}, got {value!r}")
    return number


def probability(value, name: str) -> float:
    """A rate strictly between 0 and 1, as a ``float`` (p, fpp).

    >>> probability(np.float32(0.25), "fpp"), probability(Decimal("0.001"), "fpp")
    (0.25, 0.001)
    """
    return real_number(value, name, 0.0, 1.0, open_low=True, open_high=True,
                       allowed="a number strictly between 0 and 1")


def one_of(value, name: str, allowed: tuple[int, ...]) -> int:
    """``value`` as a Python ``int`` if it is one of ``allowed``; TypeError for a non-integer.

    >>> one_of(np.int8(8), "counter_bits", (4, 8))
    8
    >>> one_of(5, "counter_bits", (4, 8))
    Traceback (most recent call last):
    ValueError: counter_bits must be one of 4, 8, got 5
    """
    listed = ", ".join(map(str, allowed))
    if not is_int(value):
        raise TypeError(f"{name} must be one of {listed}, not {type(value).__name__}")
    if int(value) not in allowed:
        raise ValueError(f"{name} must be one of {listed}, got {value!r}")
    return int(value)


# --- memory ---------------------------------------------------------------------------
class StorageTooLarge(ValueError, MemoryError):
    """A size that this machine cannot hold: both a ``ValueError`` (the argument is the cause)
    and a ``MemoryError`` (what numpy would have raised, or worse).

    >>> issubclass(StorageTooLarge, ValueError) and issubclass(StorageTooLarge, MemoryError)
    True
    """


def human_bytes(nbytes: int) -> str:
    """A byte count in binary units with three significant digits.

    >>> human_bytes(512), human_bytes(1_797_199), human_bytes(3 * 2**30), human_bytes(2**90)
    ('512 B', '1.71 MiB', '3.00 GiB', '1024 YiB')
    >>> human_bytes(10**400)
    '8.27e+375 YiB'
    """
    nbytes = whole_number(nbytes, "nbytes", 0)
    unit = 0
    while nbytes >= 1024 ** (unit + 1) and unit < len(_UNITS) - 1:
        unit += 1
    if nbytes >= 1024 ** unit * 10 ** 300:  # beyond a float: count the YiB in Decimal
        return f"{Decimal(nbytes) / Decimal(1024) ** unit:.2e} {_UNITS[unit]}"
    value = nbytes / 1024 ** unit
    if unit == 0:
        return f"{nbytes} B"
    digits = 2 if value < 10 else 1 if value < 100 else 0
    return f"{value:.{digits}f} {_UNITS[unit]}"


def _meminfo(field: str, path: Path = Path("/proc/meminfo")) -> int | None:
    try:
        for line in path.read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cgroup_room(root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """Bytes left under this process's cgroup v2 memory limit (containers), or None."""
    try:
        limit = (root / "memory.max").read_text().strip()
        if limit == "max":
            return None
        return max(0, int(limit) - int((root / "memory.current").read_text()))
    except (OSError, ValueError):
        return None


def available_memory() -> int | None:
    """Bytes this process can still fill without swapping or being killed, or None if unknown.

    Linux's ``MemAvailable`` (or the free part of a container's memory limit, if
    lower); elsewhere the physical memory, which is all ``os.sysconf`` tells.

    >>> available = available_memory()
    >>> available is None or available > 0
    True
    """
    known = [room for room in (_meminfo("MemAvailable"), _cgroup_room()) if room is not None]
    if not known:
        try:
            known = [os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")]
        except (AttributeError, ValueError, OSError):
            return None
    return min(known)


def check_storage(nbytes: int, what: str) -> None:
    """Refuse storage of ``nbytes`` that this machine cannot hold now: :class:`StorageTooLarge`.

    ``what`` names the argument that asks for it (``"num_bits=1099511627776"``).

    >>> check_storage(1 << 20, "num_bits=8388608")   # 1 MiB: fine anywhere
    >>> check_storage(1 << 80, "num_bits=2**83")
    Traceback (most recent call last):
    ...
    bloomedu.core.checks.StorageTooLarge: num_bits=2**83 needs 1.00 YiB of bit storage; ...
    """
    if nbytes < _PROBED_FROM:
        return
    available = available_memory()
    if available is not None and nbytes > available:
        raise StorageTooLarge(f"{what} needs {human_bytes(nbytes)} of bit storage; this machine "
                              f"has {human_bytes(available)} available")


def zeros(nbytes: int, what: str) -> np.ndarray:
    """``np.zeros(nbytes, uint8)`` after :func:`check_storage`; numpy's bare MemoryError made clear.

    >>> zeros(3, "num_bits=24")
    array([0, 0, 0], dtype=uint8)
    """
    check_storage(nbytes, what)
    try:
        return np.zeros(nbytes, dtype=np.uint8)
    except MemoryError:
        raise StorageTooLarge(f"{what} needs {human_bytes(nbytes)} of bit storage, and this "
                              "machine could not allocate it") from None


# --- pickling -------------------------------------------------------------------------
def check_picklable(function, owner: str) -> None:
    """Raise a clear ``pickle.PicklingError`` if ``function`` (a hash function) cannot be pickled.

    Pickle saves a function by its module and name, so a module-level function
    works and a lambda or a function defined inside another does not.

    >>> check_picklable(len, "HashedIds")
    >>> check_picklable(lambda text: 0, "HashedIds")
    Traceback (most recent call last):
    ...
    _pickle.PicklingError: cannot pickle this HashedIds: its hash_function <lambda> ...
    """
    try:
        pickle.dumps(function)
    except (pickle.PicklingError, AttributeError, TypeError) as error:
        name = getattr(function, "__qualname__", type(function).__name__)
        raise pickle.PicklingError(
            f"cannot pickle this {owner}: its hash_function {name} cannot be pickled (pickle "
            "stores a function by its module and name, so a lambda or a function defined "
            "inside another cannot be saved); use a function defined at the top level of a "
            "module") from error
