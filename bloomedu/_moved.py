"""Old import paths keep working after the library was split into folders.

Until version 0.1 every module sat at the top of the package (``bloomedu.theory``,
``bloomedu.filter``, ...).  They now live in the folder of the part they belong to;
:data:`MOVED` says where, and :func:`install` lets ``import bloomedu.theory`` (and old
pickles that name ``bloomedu.filter.BloomFilter``) find them there.  The alias is the
module itself, not a copy: ``bloomedu.theory is bloomedu.core.theory``.

>>> import bloomedu.theory, bloomedu.core.theory
>>> bloomedu.theory is bloomedu.core.theory
True
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

MOVED = {
    "bits": "core.bits", "checks": "core.checks", "filter": "core.filter",
    "hashing": "core.hashing", "theory": "core.theory",
    "dedup": "steps.dedup", "salted": "steps.salted",
    "clicks": "workloads.clicks", "urls": "workloads.urls",
    "blacklist": "services.blacklist",
    "classroom": "teaching.classroom", "exercises": "teaching.exercises",
    "experiments": "teaching.experiments", "explorer": "teaching.explorer",
    "memory": "teaching.memory", "plots": "teaching.plots",
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``bloomedu.<old>[.<rest>]`` and answers with the module at its new place."""

    def __init__(self, package: str):
        self.package = package
        self._specs: dict = {}  # the import system overwrites __spec__; exec_module puts it back

    def _target(self, fullname: str) -> str | None:
        prefix, _, rest = fullname.partition(".")
        head, _, tail = rest.partition(".")
        if prefix != self.package or head not in MOVED:
            return None
        return f"{self.package}.{MOVED[head]}" + (f".{tail}" if tail else "")

    def find_spec(self, fullname, path=None, target=None):
        if self._target(fullname) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        module = importlib.import_module(self._target(spec.name))
        self._specs[module.__name__] = module.__spec__
        return module

    def exec_module(self, module) -> None:
        """Nothing to run (the module at its new place is loaded): give it its own spec back."""
        module.__spec__ = self._specs.pop(module.__name__, module.__spec__)


def install(package: str) -> None:
    """Put the finder first on ``sys.meta_path``, once."""
    if not any(isinstance(f, _MovedModules) and f.package == package for f in sys.meta_path):
        sys.meta_path.insert(0, _MovedModules(package))  # before the path finder, which would
        # load a submodule of a moved package (bloomedu.exercises.filter_steps) a second time
