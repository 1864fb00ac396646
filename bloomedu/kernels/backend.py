"""Which kernels the filters' bulk methods run: numpy (always there) or native (``bloomedu[fast]``, numba).

Both give the same bits and answers, bit for bit (``tests/test_native_kernels.py``); the native
ones are compiled loops (:mod:`bloomedu.kernels.native_murmur`,
:mod:`bloomedu.kernels.native_bloom`, and :mod:`bloomedu.variants.blocked_native`, which the
blocked filter imports itself when :func:`active` says ``"native"``), several times faster on
large batches.  One switch picks them, for the whole process:

- the environment variable ``BLOOMEDU_KERNELS``: ``auto`` (the default: native when numba
  imports, numpy otherwise), ``numpy``, or ``native`` (an error, naming the variable, when
  numba is missing or fails to import);
- :func:`use` for a block of code (tests, benchmarks): ``with use("numpy"): ...``.

:func:`active` says which runs now.  numba is imported at the first bulk call that asks, not
when bloomedu is imported; its compiled kernels are cached on disk (:mod:`bloomedu.kernels.jit`).

>>> with use("numpy"):
...     active()
'numpy'
>>> active() in ("native", "numpy")
True
>>> with use("fast"):
...     pass
Traceback (most recent call last):
...
ValueError: kernels must be 'auto', 'numpy' or 'native', not 'fast'
"""

from __future__ import annotations

import importlib
import os
from contextlib import contextmanager
from typing import Iterator

__all__ = ["VARIABLE", "CHOICES", "active", "use", "native_available", "unavailable_reason",
           "bloom", "murmur"]

VARIABLE = "BLOOMEDU_KERNELS"
CHOICES = ("auto", "numpy", "native")
_chosen: str | None = None  # set by use(); None: the environment variable decides
_native_state: bool | None = None  # None until numba was tried


def _checked(name, where: str) -> str:
    if name not in CHOICES:
        raise ValueError(f"{where} must be 'auto', 'numpy' or 'native', not {name!r}")
    return name


def native_available() -> bool:
    """True when numba imports (the native kernels can run); tried once, at the first ask.

    >>> native_available() in (True, False)
    True
    """
    global _native_state
    if _native_state is None:
        from . import jit
        _native_state = jit.AVAILABLE
    return _native_state


def unavailable_reason() -> str | None:
    """Why the native kernels cannot run (numba's import error), or None when they can.

    >>> native_available() == (unavailable_reason() is None)
    True
    """
    if native_available():
        return None
    from . import jit
    return f"numba could not be imported ({jit.IMPORT_ERROR}); pip install 'bloomedu[fast]'"


def active() -> str:
    """``"native"`` or ``"numpy"``: the kernels a bulk call runs now.

    >>> with use("numpy"):
    ...     active()
    'numpy'
    """
    if _chosen is not None:
        name = _chosen
    else:
        name = _checked(os.environ.get(VARIABLE, "auto").strip().lower() or "auto",
                        f"the environment variable {VARIABLE}")
    if name == "numpy":
        return "numpy"
    if native_available():
        return "native"
    if name == "native":
        raise RuntimeError(f"{VARIABLE}=native (or use('native')) asks for the native kernels, "
                           f"but {unavailable_reason()}; or set {VARIABLE}=numpy or auto")
    return "numpy"


@contextmanager
def use(name: str) -> Iterator[str]:
    """Run the bulk calls of the ``with`` block on ``name``'s kernels (``auto``, ``numpy`` or
    ``native``), whatever ``BLOOMEDU_KERNELS`` says; yields :func:`active`.  Process-wide: meant
    for tests and benchmarks, not for threads that disagree.

    >>> from bloomedu import BloomFilter
    >>> import numpy as np
    >>> with use("numpy") as name:
    ...     f = BloomFilter(1024, 3); f.add_many(np.arange(10)); name
    'numpy'
    """
    global _chosen
    name = _checked(name, "kernels")
    previous, _chosen = _chosen, name
    try:
        yield active()
    finally:
        _chosen = previous


def _module(native: str, numpy: str):
    """This package's module ``native`` when :func:`active` says native, else ``numpy``."""
    return importlib.import_module(f"{__package__}.{native if active() == 'native' else numpy}")


def bloom():
    """The module of :class:`~bloomedu.BloomFilter`'s bulk kernels (``insert``, ``add_new``,
    ``contains``): :mod:`~bloomedu.kernels.bloom` or :mod:`~bloomedu.kernels.native_bloom`.

    >>> with use("numpy"):
    ...     bloom().__name__
    'bloomedu.kernels.bloom'
    """
    return _module("native_bloom", "bloom")


def murmur():
    """The module whose ``murmur3_128_list``, ``murmur3_128_uint64`` and ``spread_steps`` hash
    a chunk of keys: :mod:`~bloomedu.kernels.murmur` or :mod:`~bloomedu.kernels.native_murmur`.

    >>> with use("numpy"):
    ...     murmur().__name__
    'bloomedu.kernels.murmur'
    """
    return _module("native_murmur", "murmur")
