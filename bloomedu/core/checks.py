"""What every module accepts as a whole number and as a number, in one place.

Bad input must get a clear error that names the argument; each module writes
its own message, but they all agree on the types: Python and numpy integers
are whole numbers (``np.int64(8)`` straight out of a numpy computation works
anywhere an ``int`` does), any real number type is a number, and ``True`` is
neither, though Python counts ``bool`` as an ``int``.
"""

from __future__ import annotations

import numbers

__all__ = ["is_int", "is_number"]


def is_int(value) -> bool:
    """True for a Python or numpy integer, False for ``bool`` and everything else.

    >>> import numpy as np
    >>> is_int(3), is_int(np.uint64(3)), is_int(True), is_int(3.0)
    (True, True, False, False)
    """
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_number(value) -> bool:
    """True for any real number (int, float, numpy scalars), False for ``bool`` and the rest.

    >>> import numpy as np
    >>> is_number(0.5), is_number(np.float32(0.5)), is_number(False), is_number("0.5")
    (True, True, False, False)
    """
    return isinstance(value, numbers.Real) and not isinstance(value, bool)
