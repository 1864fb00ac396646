"""What the API reference needs beyond stock autodoc and autosummary.

autosummary writes one page per public module (``api/<module>.rst``, recursively from
``docs/api_seed.rst``) with the template ``_templates/autosummary/module.rst``.  This
module gives that template, through ``autosummary_context``, what each page shows: the
names of the module's ``__all__`` documented there, the re-exported ones it links to, and
the lessons whose closing "where this lesson's code lives" paragraph names its file.  Each
name is documented once, in its *home*: the module that defines it if that module exports it,
else the deepest public module exporting it (``exercises._feedback.Exercise`` is documented in
``bloomedu.teaching.exercises``).  It also

- resolves a Python reference as Python resolves the name where it is written (in the class
  whose docstring holds it, then its module and what that module imports, then as a dotted
  name): a documented object links to its entry, a real object without one (a private helper,
  numpy) stays code, a name naming nothing fails the build;
- shows a class's constructor as its ``__init__`` declares it, where autodoc would show a
  pass-through ``__new__(cls, *args, **kwargs)``;
- keeps a constant without a ``#:`` comment from borrowing its type's docstring.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import re
from pathlib import Path

from sphinx.ext.autodoc.preserve_defaults import update_defvalue
from sphinx.util import inspect as sphinx_inspect

PACKAGE = "bloomedu"
CLOSING = "Where this lesson's code lives"


def public_modules(package: str = PACKAGE) -> list[str]:
    """Every module and subpackage with no ``_`` part in its name (a failed import stops the build)."""
    def fail(name):
        raise ImportError(f"the API reference cannot import {name}")
    found = [package] + [i.name for i in pkgutil.walk_packages(
        importlib.import_module(package).__path__, package + ".", onerror=fail)]
    return sorted(n for n in found if not any(part.startswith("_") for part in n.split(".")))


def exported(module) -> dict:
    """``__all__``, or the public names the module defines itself."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, v in vars(module).items() if not n.startswith("_") and not inspect.ismodule(v)
                 and getattr(v, "__module__", None) == module.__name__]
    return {name: getattr(module, name) for name in names}


def lessons_naming(notebooks: Path) -> dict[str, list[str]]:
    """Module -> the lesson pages whose closing paragraph names its file (``bloomedu/core/filter.py``)."""
    named: dict[str, list[str]] = {}
    for path in sorted(Path(notebooks).glob("[0-9][0-9]_*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        text = "\n".join("".join(c["source"]) for c in cells if c.get("cell_type") == "markdown")
        for paragraph in (p for p in re.split(r"\n\s*\n", text) if CLOSING in p):
            for file in re.findall(r"`(bloomedu/[\w/]+)\.py`", paragraph):
                pages = named.setdefault(file.replace("/", ".").removesuffix(".__init__"), [])
                pages += [] if f"notebooks/{path.stem}" in pages else [f"notebooks/{path.stem}"]
    return named


def plan(package: str = PACKAGE, notebooks: Path | None = None) -> dict[str, dict]:
    """Each public module's page: what it documents, re-exports and which lessons name it."""
    exports = {name: exported(importlib.import_module(name)) for name in public_modules(package)}
    lessons = lessons_naming(notebooks) if notebooks else {}

    def home(name, value) -> str:
        defined_in = getattr(value, "__module__", None)
        if exports.get(defined_in, {}).get(name) is value:
            return defined_in
        holders = [m for m, names in exports.items() if name in names and names[name] is value]
        related = [m for m in holders if defined_in and (defined_in + ".").startswith(m + ".")]
        return max(related or holders, key=lambda m: (m.count("."), m))

    pages = {}
    for module, names in exports.items():
        page = pages[module] = {"kind": "package" if hasattr(importlib.import_module(module), "__path__")
                                else "module", "lessons": lessons.get(module, []), "reexports": [],
                                "classes": [], "exceptions": [], "functions": [], "data": []}
        for name, value in names.items():
            if inspect.ismodule(value):
                if value.__name__ in exports and value.__name__.rpartition(".")[0] != module:
                    page["reexports"].append(value.__name__)
            elif (owner := home(name, value)) != module:
                page["reexports"].append(f"{owner}.{name}")
            elif inspect.isclass(value):
                kind = "exceptions" if issubclass(value, BaseException) else "classes"
                page[kind].append((name, value.__bases__ != (object,)))  # "Bases: object" says nothing
            elif inspect.isroutine(value):
                page["functions"].append(name)
            else:
                page["data"].append((name, len(repr(value)) <= 80 and " at 0x" not in repr(value)))
    return pages


def resolve(written: str, documented, module: str | None = None, cls: str | None = None):
    """``(entry, exists)`` for a name written in ``module`` (inside class ``cls``): the documented
    full name it stands for, or None, and whether it names a real object at all."""
    parts = [part for part in written.lstrip(".~").split(".") if part]
    where = klass = _import(module)
    for part in cls.split(".") if where and cls else []:
        klass = getattr(klass, part, None)
    starts = [(klass, _names(klass), parts)] if cls and inspect.isclass(klass) else []
    starts += [(where, [module], parts)] if where else []
    for length in range(len(parts), 0, -1):  # an absolute name: its longest importable prefix
        if (top := _import(".".join(parts[:length]))) is not None:
            starts.append((top, [top.__name__], parts[length:]))
            break
    if where and len(parts) == 1:  # a method named from its module's docstring: its one class
        holders = [v for v in vars(where).values() if inspect.isclass(v) and v.__module__ == module
                   and hasattr(v, parts[0])]
        starts += [(holders[0], _names(holders[0]), parts)] if len(holders) == 1 else []
    for value, names, path in starts:
        try:
            for part in path:
                if inspect.isclass(value):  # the class that defines an attribute documents it
                    names = _names(next((c for c in value.__mro__ if part in vars(c)), value))
                value = getattr(value, part)
                names = [f"{n}.{part}" for n in names] + _names(value)
        except AttributeError:
            continue
        return next((n for n in names if n in documented), None), True
    return None, False


def _names(value) -> list[str]:
    value = getattr(value, "__func__", value)
    qualname, module = getattr(value, "__qualname__", None), getattr(value, "__module__", None)
    return [f"{module}.{qualname}"] if isinstance(qualname, str) and isinstance(module, str) else []


def _import(name: str | None):
    try:
        return importlib.import_module(name) if name else None
    except ImportError:
        return None


def missing_reference(app, env, node, contnode):
    """A Python reference Sphinx's own search missed, resolved by :func:`resolve`; a code span
    that only might be a name (``bloomedu_site``) stays code when it is not."""
    if node.get("refdomain") != "py":
        return None
    domain = env.get_domain("py")
    entry, exists = resolve(node.get("reftarget", ""), domain.objects, node.get("py:module"),
                            node.get("py:class"))
    if entry:
        return domain.resolve_xref(env, node["refdoc"], app.builder, "obj", entry, node, contnode)
    return contnode if exists or node.get("bloomedu_span") else None


def constructor_signature(app, what, name, obj, options, signature, return_annotation):
    """A class whose ``__new__`` only passes ``*args, **kwargs`` on shows its ``__init__``'s
    parameters (none for a ``typing.Protocol``, which is never instantiated)."""
    if what not in ("class", "exception") or signature != "(*args, **kwargs)":
        return None
    init = obj.__init__
    if getattr(obj, "_is_protocol", False) or not inspect.isfunction(init):
        return ("" if getattr(obj, "_is_protocol", False) else "()"), return_annotation
    update_defvalue(app, init, True)  # autodoc_preserve_defaults: defaults as the source spells them
    stringify = sphinx_inspect.stringify_signature
    short = {"short_literals": True} if "short_literals" in inspect.signature(stringify).parameters else {}
    return stringify(sphinx_inspect.signature(init, bound_method=True), show_return_annotation=False,
                     unqualified_typehints=True, **short), return_annotation  # short: Sphinx >= 7.4


def no_borrowed_docstring(app, what, name, obj, options, lines):
    """A constant without a ``#:`` comment would show its type's docstring (``dict() -> new
    empty dictionary``): it shows nothing instead."""
    if what in ("data", "attribute") and not type(obj).__module__.startswith(PACKAGE):
        borrowed = " ".join((type(obj).__doc__ or "").split())
        if borrowed and " ".join(" ".join(lines).split()).endswith(borrowed):
            lines.clear()


def _pages(app, config) -> None:
    """The pages' plan for the template; a page whose module is gone is deleted, so that
    autosummary, which never deletes one, does not build it."""
    pages = plan(notebooks=Path(app.srcdir).parent / "notebooks")
    config.autosummary_context = {**config.autosummary_context, "bloomedu_api": pages}
    for stale in (Path(app.srcdir) / "api").glob("*.rst"):
        if stale.stem not in pages:
            stale.unlink()


def setup(app):
    app.connect("config-inited", _pages)
    app.connect("missing-reference", missing_reference)
    app.connect("autodoc-process-signature", constructor_signature)
    app.connect("autodoc-process-docstring", no_borrowed_docstring)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "2"}
