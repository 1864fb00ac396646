"""Compile the native kernels ahead of use: ``make env`` runs ``warm_kernels()`` once.

With ``bloomedu[fast]``, numba compiles each kernel at its first call (a second or two each,
:mod:`bloomedu.kernels.jit`) and keeps it in its cache; a later process loads it in
milliseconds.  :func:`warm_kernels` makes those first calls now, with the array types the
filters pass, so no lesson waits on the compiler.

>>> warm_kernels().split(":")[0] in ("native kernels ready", "numpy kernels")
True
"""

from __future__ import annotations

import numpy as np

from ..kernels import backend, jit
from ..variants.blocked import BlockedBloomFilter
from .filter import BloomFilter

__all__ = ["warm_kernels"]


def warm_kernels() -> str:
    """Compile every native kernel now (or load it from the cache), as the filters call them;
    says what it did.  Without numba, nothing to do: says why.

    >>> warm_kernels() == warm_kernels()
    True
    """
    if not backend.native_available():
        return f"numpy kernels: {backend.unavailable_reason()}"
    from ..variants.blocked_native import add_new_uint64

    with backend.use("native"):
        for f in (BloomFilter(1024, 3), BlockedBloomFilter(1024)):
            for keys in (["a", "é"], [b"b"], np.arange(3, dtype=np.uint64)):
                f.add_many(keys)
                f.add_many_new(keys)
                f.contains_many(keys)
        add_new_uint64(np.zeros(8, "<u4"), np.arange(3, dtype=np.uint64), 1, np.empty(3, bool))
    where = jit.CACHE_DIR or jit.CACHE_NOTE or "numba's default folder"
    return f"native kernels ready: numba {jit.numba_version()}, cache {where}"
