"""numba for the native kernels, when it is there: ``njit``, a prefetch, and where compiled code is cached.

The native kernels (:mod:`bloomedu.kernels.native_murmur`, :mod:`bloomedu.kernels.native_bloom`,
:mod:`bloomedu.variants.blocked_native`) are plain Python functions over numpy arrays, written
so numba compiles them.  This module is the only place that imports numba:

- :func:`njit` is ``numba.njit(cache=True, nogil=True)`` (nogil: a worker thread hashes the next
  chunk while the kernel writes this one).  Compiled code is kept on disk so a new process loads
  it instead of compiling again (:data:`CACHE_DIR`): ``NUMBA_CACHE_DIR`` if set, else a folder
  of the user's own, one per Python environment and numba version
  (``~/.cache/bloomedu/numba-<version>-<environment>``; two environments sharing one source
  tree, as .venv and .venv-oldest do, would otherwise overwrite each other's cache).  numba
  then caches every function it compiles in this process there, not only bloomedu's.  Where
  that folder cannot be written, numba's own order applies (a ``__pycache__`` beside the
  source, then ``~/.cache/numba``); where nothing is writable the kernels are compiled without
  a cache, once per process, and ``CACHE_NOTE`` says so (``IMPORT_ERROR``: why numba did not
  import, when it did not).
- without numba, :func:`njit` leaves a function as it is (Python over numpy scalars, integer
  overflow wrapping silently as it does compiled): the docstrings' examples still run, slowly;
  the filters never call these kernels then (:mod:`bloomedu.kernels.backend` picks numpy).
- :func:`mulhi`: the high half of a 64 x 64-bit product (one instruction), for ``x mod m``
  without a division (:func:`bloomedu.kernels.native_bloom.reduce`);
- :func:`peek64`, :func:`peek32`, :func:`peek8` read memory at an address, :func:`address_of`
  gives an array's: for MurmurHash3 straight from Python's own str objects
  (:func:`bloomedu.kernels.native_murmur.hash_str_list`);
- :func:`block8_in_then_add` and :func:`block8_holds`: a split block's eight masks
  ``1 << ((low * salts[w] mod 2**32) >> 27)`` ORed into (or tested against) eight 32-bit words
  at once, as one 256-bit vector (LLVM's ``<8 x i32>``: on a CPU with AVX2 one multiply, two
  shifts, a load and a store), for :mod:`bloomedu.variants.blocked_native`; numba does not
  vectorise the eight-step loop by itself, and that loop costs about twice the memory access;
- :func:`prefetch` asks the CPU to start loading ``array[index]``'s cache line (LLVM's
  ``llvm.prefetch``, a hint: it never faults); a no-op without numba.

>>> import numpy as np
>>> @njit
... def total(a):
...     s = np.uint64(0)
...     for i in range(a.size):
...         prefetch(a, min(i + 8, a.size - 1))
...         s += a[i]
...     return s
>>> int(total(np.arange(10, dtype=np.uint64)))
45
>>> @njit
... def twice(words, low, salts):
...     return block8_in_then_add(words, 0, low, salts), block8_holds(words, 0, low, salts)
>>> words, salts = np.zeros(8, np.uint32), np.arange(1, 9, dtype=np.uint32) << np.uint32(27)
>>> twice(words, 1, salts), words.tolist()     # masks 1 << w + 1, then all of them are set
((False, True), [2, 4, 8, 16, 32, 64, 128, 256])
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import sys
import tempfile

import numpy as np

# IMPORT_ERROR and CACHE_NOTE are None when all is well: module state, not in the API pages
# (Sphinx's autosummary cannot document a name whose value is None)
__all__ = ["AVAILABLE", "CACHE_DIR", "njit", "prefetch", "mulhi",
           "peek64", "peek32", "peek8", "address_of", "block8_in_then_add", "block8_holds",
           "plain_block8_in_then_add", "plain_block8_holds",
           "numba_version", "cache_folder"]

try:
    import numba
    from numba.core import cgutils, types
    from numba.extending import intrinsic
    from llvmlite import ir
except Exception as error:  # noqa: BLE001 - any failure to import numba means: no native path
    numba, AVAILABLE, IMPORT_ERROR = None, False, f"{type(error).__name__}: {error}"
else:
    AVAILABLE, IMPORT_ERROR = True, None

_IN_THEN_ADD_DOC = """OR the eight masks ``1 << ((low * salts[w] mod 2**32) >> 27)`` into
``words[base + w]`` (w = 0..7; ``words`` and ``salts`` C-contiguous uint32, ``salts`` eight long);
True if all eight were set already.  Compiled, it is called from compiled code only."""
_HOLDS_DOC = """True if the eight masks of ``low`` (:func:`block8_in_then_add`) are all set in
``words[base:base + 8]``; nothing is written."""

def _masks8(low, salts) -> np.ndarray:
    return np.uint32(1) << ((np.uint32(int(low) & 0xFFFFFFFF) * salts) >> np.uint32(27))


def plain_block8_in_then_add(words, base, low, salts) -> bool:
    """:func:`block8_in_then_add` in numpy, one key: what runs without numba, and what the
    tests hold the compiled one to.

    >>> words, salts = np.zeros(8, np.uint32), np.arange(1, 9, dtype=np.uint32) << np.uint32(27)
    >>> plain_block8_in_then_add(words, 0, 1, salts), words[:3].tolist()
    (False, [2, 4, 8])
    """
    block, masks = words[int(base):int(base) + 8], _masks8(low, salts)
    present = bool(((block & masks) == masks).all())
    block |= masks
    return present


def plain_block8_holds(words, base, low, salts) -> bool:
    """:func:`block8_holds` in numpy, one key.

    >>> salts = np.arange(1, 9, dtype=np.uint32) << np.uint32(27)
    >>> plain_block8_holds(np.full(8, 0x1FE, np.uint32), 0, 1, salts)
    True
    """
    masks = _masks8(low, salts)
    return bool(((words[int(base):int(base) + 8] & masks) == masks).all())


CACHE_NOTE: str | None = None  # why compiled kernels are not cached, when they are not


def cache_folder(base: str | None = None) -> str | None:
    """This environment's folder for numba's cache, made if missing; None if it cannot be
    written (or without numba).  ``base``: the user's cache folder (``XDG_CACHE_HOME``, else
    ``~/.cache``).

    >>> folder = cache_folder()
    >>> folder is None or os.path.isdir(folder)
    True
    """
    if not AVAILABLE:
        return None
    base = base or os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    environment = hashlib.sha256(f"{sys.prefix}|{sys.version}".encode()).hexdigest()[:12]
    folder = os.path.join(base, "bloomedu", f"numba-{numba.__version__}-{environment}")
    try:
        os.makedirs(folder, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError:
        return None
    return folder


CACHE_DIR: str | None = None  # where the compiled kernels are kept (None: numba's own choice)
if AVAILABLE:
    if os.environ.get("NUMBA_CACHE_DIR"):
        CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]
    else:
        CACHE_DIR = cache_folder()
        if CACHE_DIR is not None:
            numba.config.CACHE_DIR = CACHE_DIR  # read when each function's cache is set up


def numba_version() -> str | None:
    """numba's version, or None without it.

    >>> numba_version() is None or numba_version()[0].isdigit()
    True
    """
    return numba.__version__ if AVAILABLE else None


def njit(function=None, *, nogil: bool = True):
    """``numba.njit(cache=True, nogil=True)``, without the cache where no folder is writable;
    the function itself (overflow ignored, as compiled code wraps) without numba.
    ``@njit(nogil=False)`` keeps the GIL: for a kernel that reads Python objects.

    >>> @njit
    ... def square(x):
    ...     return x * x
    >>> int(square(np.uint64(2**33)))   # 2**66 wraps to 0
    0
    """
    if function is None:
        return functools.partial(njit, nogil=nogil)
    if not AVAILABLE:
        @functools.wraps(function)
        def plain(*args):
            with np.errstate(over="ignore"):
                return function(*args)
        return plain
    global CACHE_NOTE
    try:
        return numba.njit(cache=True, nogil=nogil)(function)
    except RuntimeError as error:  # numba: "cannot cache function ...: no locator available"
        CACHE_NOTE = (f"numba found no writable cache folder ({error}); kernels compile once per "
                      "process: set NUMBA_CACHE_DIR to a writable folder to keep them")
        return numba.njit(cache=False, nogil=nogil)(function)


if AVAILABLE:
    @intrinsic
    def prefetch(typingctx, array, index):
        """Hint the CPU to load ``array[index]``'s cache line for writing (no bounds check: it
        never faults, whatever the index)."""
        if not isinstance(array, types.Array) or not isinstance(index, types.Integer):
            return None

        def codegen(context, builder, signature, args):
            array_type = signature.args[0]
            view = context.make_array(array_type)(context, builder, args[0])
            pointer = cgutils.get_item_pointer(context, builder, array_type, view, [args[1]],
                                               wraparound=False)
            byte_pointer = ir.IntType(8).as_pointer()
            i32 = ir.IntType(32)
            callee = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), [byte_pointer, i32, i32, i32]),
                "llvm.prefetch.p0i8" if _TYPED_POINTERS else "llvm.prefetch.p0")
            # write = 1, locality = 3 (keep in every cache level), data cache = 1
            builder.call(callee, [builder.bitcast(pointer, byte_pointer), ir.Constant(i32, 1),
                                  ir.Constant(i32, 3), ir.Constant(i32, 1)])
            return context.get_dummy_value()

        return types.void(array, index), codegen

    @intrinsic
    def mulhi(typingctx, a, b):
        """The high 64 bits of the 128-bit product of two uint64."""
        if not (a == types.uint64 and b == types.uint64):
            return None

        def codegen(context, builder, signature, args):
            wide = ir.IntType(128)
            product = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
            return builder.trunc(builder.lshr(product, ir.Constant(wide, 64)), ir.IntType(64))

        return types.uint64(types.uint64, types.uint64), codegen

    def _peek(width):
        @intrinsic
        def peek(typingctx, address):
            """The unsigned integer of ``width`` bits at a memory address, read at any alignment."""
            if not isinstance(address, types.Integer):
                return None
            result = types.uint64 if width == 64 else types.uint32 if width == 32 else types.uint8

            def codegen(context, builder, signature, args):
                word = ir.IntType(width)
                pointer = builder.inttoptr(args[0], word.as_pointer())
                return builder.zext(builder.load(pointer, align=1), context.get_value_type(result)) \
                    if width < result.bitwidth else builder.load(pointer, align=1)

            return result(address), codegen
        return peek

    peek64, peek32, peek8 = _peek(64), _peek(32), _peek(8)

    @intrinsic
    def address_of(typingctx, array):
        """The address of an array's first element, as a uint64."""
        if not isinstance(array, types.Array):
            return None

        def codegen(context, builder, signature, args):
            view = context.make_array(signature.args[0])(context, builder, args[0])
            return builder.ptrtoint(view.data, ir.IntType(64))

        return types.uint64(array), codegen

    def _block8(update: bool, doc: str):
        def block8(typingctx, words, base, low, salts):
            if not (isinstance(words, types.Array) and words.dtype == types.uint32
                    and words.layout == "C" and isinstance(salts, types.Array)
                    and salts.dtype == types.uint32 and salts.layout == "C"
                    and isinstance(base, types.Integer) and isinstance(low, types.Integer)):
                return None

            def codegen(context, builder, signature, args):
                i32, i64 = ir.IntType(32), ir.IntType(64)
                lanes = ir.VectorType(i32, 8)

                def eight_at(array_type, value, index):  # <8 x i32>* to array[index]
                    view = context.make_array(array_type)(context, builder, value)
                    item = cgutils.get_item_pointer(context, builder, array_type, view, [index],
                                                    wraparound=False)
                    return builder.inttoptr(builder.ptrtoint(item, i64), lanes.as_pointer())

                at = context.cast(builder, args[1], signature.args[1], types.intp)
                block = eight_at(signature.args[0], args[0], at)
                salt = builder.load(eight_at(signature.args[3], args[3], ir.Constant(i64, 0)),
                                    align=4)
                width = args[2].type.width
                low32 = builder.trunc(args[2], i32) if width > 32 else \
                    builder.zext(args[2], i32) if width < 32 else args[2]
                spread = builder.shuffle_vector(
                    builder.insert_element(ir.Constant(lanes, ir.Undefined), low32, ir.Constant(i32, 0)),
                    ir.Constant(lanes, ir.Undefined), ir.Constant(lanes, [0] * 8))
                masks = builder.shl(ir.Constant(lanes, [1] * 8),
                                    builder.lshr(builder.mul(spread, salt), ir.Constant(lanes, [27] * 8)))
                old = builder.load(block, align=4)
                if update:
                    builder.store(builder.or_(old, masks), block, align=4)
                missing = builder.bitcast(builder.and_(masks, builder.not_(old)), ir.IntType(256))
                return builder.icmp_unsigned("==", missing, ir.Constant(ir.IntType(256), 0))

            return types.boolean(words, base, low, salts), codegen
        block8.__doc__ = doc
        return intrinsic(block8)

    block8_in_then_add = _block8(True, _IN_THEN_ADD_DOC)
    block8_holds = _block8(False, _HOLDS_DOC)

    # llvmlite before 0.45 writes typed pointers (i8*), later ones opaque pointers (ptr)
    _TYPED_POINTERS = str(ir.IntType(8).as_pointer()) == "i8*"
else:
    def prefetch(array, index):
        """A hint only: nothing to do in Python."""

    def mulhi(a, b):
        """The high 64 bits of the 128-bit product of two uint64."""
        return np.uint64((int(a) * int(b)) >> 64)

    def peek64(address):
        """The uint64 at a memory address."""
        return np.uint64(ctypes.c_uint64.from_address(int(address)).value)

    def peek32(address):
        """The uint32 at a memory address."""
        return np.uint32(ctypes.c_uint32.from_address(int(address)).value)

    def peek8(address):
        """The byte at a memory address."""
        return np.uint8(ctypes.c_uint8.from_address(int(address)).value)

    def address_of(array):
        """The address of an array's first element."""
        return np.uint64(array.ctypes.data)

    block8_in_then_add, block8_holds = plain_block8_in_then_add, plain_block8_holds

