"""What a name written in a docstring or a lesson means, and where its entry is.

A reference resolves as Python would resolve the name where it is written: in the
class whose docstring holds it, then in its module (whose imports count:
``:meth:`BloomFilter.add_many``` in a module that imports ``BloomFilter``), then as an
absolute dotted name; a bare method name in a module's own docstring means the one
class of that module that has it.  The object found is then looked up among the
entries the API reference writes (:class:`Homes`): each class, function and constant
once, where its module exports it, with the public methods and attributes of each
class.  Three outcomes:

- an entry: the reference links to it;
- a real object without an entry (a private helper, a name its module does not
  export, an object of numpy or the standard library, whose docs cannot be fetched
  offline): it stays code, without a link;
- nothing at all (a typo, a name that moved): Sphinx warns, and the build fails.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field

# dunder methods the API pages document (autoclass :special-members:)
SPECIAL = ("__contains__", "__len__", "__iter__", "__or__", "__and__", "__ior__", "__iand__",
           "__call__")


@dataclass
class Homes:
    """The API reference's entries: documented objects by identity, constants by name."""

    objects: dict[int, str] = field(default_factory=dict)  # id(class/function/module) -> full name
    data: set[str] = field(default_factory=set)  # full names of documented constants
    _alive: list = field(default_factory=list, repr=False)  # keep the ids valid

    def add(self, value, full_name: str) -> None:
        if inspect.ismodule(value) or inspect.isclass(value) or inspect.isroutine(value):
            self.objects[id(value)] = full_name
            self._alive.append(value)
        else:
            self.data.add(full_name)

    def entry(self, owner, attribute: str | None, value) -> str | None:
        """The entry of ``value``, reached as ``owner.attribute`` (None: it has none)."""
        if inspect.isclass(owner) and attribute:
            for cls in owner.__mro__:  # the class that defines it documents it
                if attribute in vars(cls) or attribute in vars(cls).get("__annotations__", {}):
                    documented = not attribute.startswith("_") or attribute in SPECIAL
                    return f"{self.objects[id(cls)]}.{attribute}" \
                        if documented and id(cls) in self.objects else None
        if inspect.ismodule(owner) and attribute and f"{owner.__name__}.{attribute}" in self.data:
            return f"{owner.__name__}.{attribute}"
        return self.objects.get(id(getattr(value, "__func__", value)))


def _import(name: str | None):
    if not name:
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _walk(start, parts: list[str], homes: Homes):
    """Follow ``parts`` by attribute from ``start``: (its entry or None, True), or None if a part is missing."""
    owner, attribute, value = None, None, start
    for part in parts:
        try:
            owner, attribute, value = value, part, getattr(value, part)
        except AttributeError:
            return None
    return homes.entry(owner, attribute, value), True


def resolve(written: str, homes: Homes, module: str | None = None,
            cls: str | None = None) -> tuple[str | None, bool]:
    """``(entry, exists)`` for a name written in ``module`` (inside class ``cls``).

    >>> homes = Homes(); homes.add(Homes, "bloomedu_names.Homes")
    >>> resolve("Homes.entry", homes, module="bloomedu_names")
    ('bloomedu_names.Homes.entry', True)
    >>> resolve("_walk", homes, module="bloomedu_names")
    (None, True)
    >>> resolve("no_such_name", homes, module="bloomedu_names")
    (None, False)
    """
    parts = [part for part in written.lstrip(".~").split(".") if part]
    if not parts:
        return None, False
    where = _import(module)
    starts = []
    if where is not None and cls:
        klass = where
        for part in cls.split("."):
            klass = getattr(klass, part, None)
        starts += [klass] if inspect.isclass(klass) else []
    if where is not None:
        starts.append(where)
    for start in starts:
        if found := _walk(start, parts, homes):
            return found
    for length in range(len(parts), 0, -1):  # an absolute name: its longest importable prefix
        top = _import(".".join(parts[:length]))
        if top is not None:
            if found := _walk(top, parts[length:], homes):
                return found
            break
    if where is not None and len(parts) == 1:  # a method named from its module's docstring
        holders = [value for value in vars(where).values() if inspect.isclass(value)
                   and value.__module__ == where.__name__ and hasattr(value, parts[0])]
        if len(holders) == 1:
            return _walk(holders[0], parts, homes)
    return None, False
