"""What tests/test_conformance.py stands on: every filter class of the package, found by walking
it; a small instance of each; keys of every kind; and a filter's state, to compare.

Nothing here names a filter class: the classes are found by walking the package, and what the
suite needs to build each one is its entry in ``filter_registry.py``.
"""

from __future__ import annotations

import importlib
import inspect
import pickle
import pkgutil
import sys
import threading

import numpy as np

import bloomedu
import filter_registry
from bloomedu.core.contract import Filter

CAPACITY = 400  # keys a test puts in one instance: cheap, and past every forgetting class's memory


# --- discovery ---------------------------------------------------------------------------
def package_modules(package=bloomedu) -> list:
    """Every module of the package, imported (``__main__`` aside: importing it runs the CLI)."""
    modules = [package]
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if info.name.rpartition(".")[2] != "__main__":
            modules.append(importlib.import_module(info.name))
    return modules


def looks_like_a_filter(obj) -> bool:
    """A public class that answers "maybe in?" and takes keys: by ``add``/``add_many``, or
    built from them (a ``keys`` argument); not an abstract base (one that cannot be made: its
    subclasses are the filters)."""
    if not inspect.isclass(obj) or getattr(obj, "_is_protocol", False) or inspect.isabstract(obj):
        return False
    asks = hasattr(obj, "__contains__") or hasattr(obj, "contains_many")
    try:
        built = "keys" in inspect.signature(obj).parameters
    except (TypeError, ValueError):
        built = False
    takes = hasattr(obj, "add") or hasattr(obj, "add_many") or built
    return asks and takes


def exported_filters(modules) -> set[type]:
    """The classes that look like filters among every module's ``__all__``."""
    return {getattr(module, name) for module in modules for name in getattr(module, "__all__", ())
            if looks_like_a_filter(getattr(module, name, None))}


def subclasses(cls: type) -> set[type]:
    """Every class that descends from ``cls``, however deep."""
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub} | subclasses(sub)
    return found


def filter_classes(package=bloomedu) -> set[type]:
    """Every concrete, public subclass of :class:`~bloomedu.core.contract.Filter` that a module
    of the package holds under its name (the modules must have been imported)."""
    prefix = package.__name__ + "."
    return {cls for cls in subclasses(Filter)
            if cls.__module__.startswith(prefix) and not inspect.isabstract(cls)
            and not cls.__name__.startswith("_")
            and getattr(sys.modules.get(cls.__module__), cls.__name__, None) is cls}


def discover(package=bloomedu) -> list[type]:
    """Every concrete subclass of the base and every exported class that looks like a filter,
    after importing every module: a class that forgot the base is found too."""
    modules = package_modules(package)
    return sorted(filter_classes(package) | exported_filters(modules),
                  key=lambda cls: (cls.__module__, cls.__qualname__))


def class_id(cls: type) -> str:
    return f"{cls.__module__.removeprefix('bloomedu.')}.{cls.__qualname__}"


def declared(cls: type):
    """The class's entry in ``filter_registry.py``: how to build it and what to expect of it
    (``None`` if it does not descend from :class:`~bloomedu.core.contract.Filter` or has no
    entry: it must do both)."""
    return filter_registry.entry(cls) if issubclass(cls, Filter) else None


# --- instances -----------------------------------------------------------------------------
def make(cls: type, services: dict, capacity: int = CAPACITY, keys=()):
    """``cls(**arguments(...))`` from its registry entry, with the services the class needs."""
    declaration = declared(cls)
    assert declaration is not None, (
        f"{class_id(cls)} looks like a filter (it answers 'in' and takes keys) but does not "
        "descend from bloomedu.core.contract.Filter with an entry in tests/filter_registry.py")
    wanted = {name: services[name] for name in declaration.needs}
    return cls(**declaration.arguments(capacity, keys, **wanted))


def static(cls) -> bool:
    """True for a filter built once from its keys (its ``add`` refuses)."""
    return declared(cls).built_from_keys


def memory(f) -> int | None:
    return filter_registry.memory(f)


def kept(f, keys: list) -> list:
    """The keys of an insertion order that ``f`` promises to still find: all, or the last
    memory + 1."""
    promise = memory(f)
    return keys if promise is None else keys[max(0, len(keys) - promise - 1):]


def adds(f) -> bool:
    return not static(type(f))


def handle(f) -> bool:
    """True for a handle to a server's filter: its state is the server's, not pickled."""
    return bool(declared(type(f)).needs)


def state(f):
    """What two filters must share to be the same filter: their bytes, else (server-backed
    filters without bytes) their answers are compared by :func:`same_state`."""
    to_bytes = getattr(f, "to_bytes", None)
    return to_bytes() if callable(to_bytes) else f


def same_state(a, b, probes=()) -> bool:
    """Equal bytes, or ``==``, or (a handle with neither) the same answers on ``probes``."""
    if callable(getattr(a, "to_bytes", None)):
        return a.to_bytes() == b.to_bytes()
    if not handle(a):
        return a == b
    return ask_many(a, probes).tolist() == ask_many(b, probes).tolist()


def snapshot(f, probes=()):
    """A copy of ``f``'s state that later writes to ``f`` cannot change: its bytes, else its
    pickle, else (a handle to a server's filter, with neither) its answers on ``probes``."""
    if callable(getattr(f, "to_bytes", None)):
        return f.to_bytes()
    if handle(f):
        return ask_many(f, list(probes)).tolist()
    return pickle.dumps(f)


def unchanged(f, before, probes=()) -> bool:
    if callable(getattr(f, "to_bytes", None)) or handle(f):
        return snapshot(f, probes) == before
    return f == pickle.loads(before)


def has(f, key) -> bool:
    """``key in f``."""
    return key in f


def ask_many(f, keys: list) -> np.ndarray:
    """``contains_many``: every filter has it (the base's default asks ``in`` key by key)."""
    return np.asarray(f.contains_many(keys), dtype=bool)


def insert(f, keys, path: str):
    """Put ``keys`` in by ``path``: "add" (one by one), "add_many" or "add_many_new"."""
    if path == "add":
        return [f.add(key) for key in (keys.tolist() if isinstance(keys, np.ndarray) else keys)]
    return getattr(f, path)(keys)


def paths(f) -> list[str]:
    """The ways ``f`` takes keys: none for a static filter."""
    return [] if static(type(f)) else \
        [name for name in ("add", "add_many", "add_many_new") if hasattr(f, name)]


def run_together(jobs, timeout: float = 120.0) -> None:
    """Each job in its own thread, all released at once; fail on an error or a hang."""
    barrier, errors = threading.Barrier(len(jobs)), []

    def run(job):
        barrier.wait()
        try:
            job()
        except BaseException as error:  # reported in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=run, args=(job,), daemon=True) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    assert not [t for t in threads if t.is_alive()], f"threads still running after {timeout} s"
    assert not errors, errors


# --- keys of every kind ----------------------------------------------------------------------
INT_DTYPES = ["i1", "u1", "<i2", ">i2", "<u2", ">u2", "<i4", ">i4", "<u4", ">u4", "<i8", ">i8",
              "<u8", ">u8"]


def str_keys(count: int, seed: int) -> list[str]:
    """Distinct str keys: the empty one, non-ASCII, long, and many ordinary ones."""
    special = ["", "città", "😀 emoji", "日本語", "x" * 300, "tab\tand\nnewline", "nul\x00inside"]
    return special + [f"key-{seed}-{i}" for i in range(count - len(special))]


def bytes_keys(count: int, seed: int) -> list[bytes]:
    """Distinct bytes keys: the empty one, NULs at the end and inside, every byte value."""
    rng = np.random.default_rng(seed)
    special = [b"", b"\x00", b"\x00" * 9, b"ab\x00", bytes(range(256)), b"\xff" * 40]
    rest = {rng.bytes(int(rng.integers(1, 40))) for _ in range(2 * count)} - set(special)
    return special + sorted(rest)[:count - len(special)]


def int_keys(count: int, seed: int) -> list[int]:
    """Distinct int keys (as values modulo 2**64 too): 0, the 64-bit ends, and random ones."""
    rng = np.random.default_rng(seed)
    special = [0, 1, -1, 2 ** 63 - 1, -2 ** 63, 255, -128, 65535]
    rest = [int(v) for v in rng.integers(-2 ** 63, 2 ** 63 - 1, size=2 * count, dtype=np.int64)]
    taken, out = {v % 2 ** 64 for v in special}, list(special)
    for value in rest:
        if value % 2 ** 64 not in taken and len(out) < count:
            taken.add(value % 2 ** 64)
            out.append(value)
    return out


def forms(kind: str, count: int, seed: int) -> list[tuple[str, object, list]]:
    """(name, batch, the same keys as Python keys) for every form a batch of ``kind`` takes:
    a list, numpy arrays (fixed-width, object, every integer dtype and byte order) and numpy
    scalars."""
    rng = np.random.default_rng(seed)
    if kind == "str":  # a fixed-width array holds keys of its full width: numpy pads the others
        keys = str_keys(count, seed)
        full = [f"{'üa'[i % 2]}{i:07d}-{seed:02d}" for i in range(count)]
        return [("list", keys, keys), ("U array", np.array(full), full),
                ("object array", np.array(keys, dtype=object), keys)]
    if kind == "bytes":
        keys = bytes_keys(count, seed)
        full = sorted({rng.bytes(11) + b"\x01" for _ in range(count)})
        return [("list", keys, keys), ("S array", np.array(full), full),
                ("object array", np.array(keys, dtype=object), keys)]
    keys = int_keys(count, seed)
    out = [("list", keys, keys), ("object array", np.array(keys, dtype=object), keys)]
    for dtype in INT_DTYPES:
        info = np.iinfo(np.dtype(dtype))
        fitting = [v for v in keys if info.min <= v <= info.max][:count]
        out.append((f"{dtype} array", np.array(fitting, dtype=dtype), fitting))
    small = [v for v in keys if -128 <= v <= 127]
    out.append(("numpy scalars", [np.dtype(d).type(v) for v, d in
                                  zip(small, ["i1", "i2", "i4", "i8"] * len(small))], small))
    return out


def accepted_keys(f, count: int, seed: int) -> list:
    """Distinct keys of the kinds ``f`` takes, mixed."""
    kinds = sorted(key_kinds(type(f))
                   - {"other"})
    makers = {"str": str_keys, "bytes": bytes_keys, "int": int_keys}
    per_kind = [makers[kind](count // len(kinds) + 1, seed) for kind in kinds]
    mixed = [key for group in zip(*per_kind) for key in group]
    return mixed[:count]


def key_kinds(cls: type) -> frozenset:
    return declared(cls).kinds
