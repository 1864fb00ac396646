"""The API reference: one page per public module of bloomedu, found by walking the package.

Every module and subpackage whose dotted name has no part starting with ``_`` gets a
page ``api/<module>.rst``, written before each build (only when its text changes; a
page whose module is gone is deleted), so a module added anywhere in the package is
documented with no edit to the site.  A page holds the module's docstring, its
submodules, and its public names: those listed in ``__all__`` (or, without one, the
names defined there), and links to the lessons whose closing "where this lesson's code
lives" paragraph names its file.  Each name is documented once, in its *home* module, by autodoc;
a package that re-exports it (``bloomedu.BloomFilter``) lists it in a table that links
home; a cross-reference resolves as Python resolves the name where it is written
(``:class:`bloomedu.BloomFilter``` goes to the entry in ``bloomedu.core.filter``; see
``bloomedu_names``).

autosummary's ``:recursive:`` mode finds modules the same way, but it documents a
re-exported class in full on every package page that exports it (three copies of
``BloomFilter``, and ambiguous cross-references) and never deletes a stale page.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path

from bloomedu_names import Homes, resolve
from bloomedu_site import modules_named_by_lessons, sync_folder

PACKAGE = "bloomedu"
API_DIR = "api"


@dataclass
class Page:
    """What one module's page shows."""

    module: str
    submodules: list[str] = field(default_factory=list)
    classes: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)
    data: list[str] = field(default_factory=list)
    reexports: dict[str, str] = field(default_factory=dict)  # name here -> home's full name
    lessons: list[str] = field(default_factory=list)  # pages of the lessons that name this module


def is_public(dotted: str) -> bool:
    return not any(part.startswith("_") for part in dotted.split("."))


def public_modules(package: str = PACKAGE) -> list[str]:
    """Every public module and subpackage, parents first (a failed import stops the build)."""
    root = importlib.import_module(package)

    def fail(name):
        raise ImportError(f"the API reference cannot import {name}")

    found = [package] + [info.name for info in
                         pkgutil.walk_packages(root.__path__, package + ".", onerror=fail)]
    return sorted(name for name in found if is_public(name))


def exported_names(module) -> list[str]:
    """``__all__``, or the public names the module defines itself."""
    names = getattr(module, "__all__", None)
    if names is not None:
        return list(names)
    return [name for name, value in vars(module).items()
            if not name.startswith("_") and not inspect.ismodule(value)
            and getattr(value, "__module__", None) == module.__name__]


def plan(package: str = PACKAGE) -> dict[str, Page]:
    """Which page documents each public name, and which pages only link to it."""
    modules = {name: importlib.import_module(name) for name in public_modules(package)}
    exports = {name: {n: getattr(mod, n) for n in exported_names(mod)} for name, mod in modules.items()}
    pages = {name: Page(name) for name in modules}
    for name in modules:
        parent = name.rpartition(".")[0]
        if parent in pages:
            pages[parent].submodules.append(name)

    def home(name: str, value) -> str:
        """The module that documents ``value``: where it is defined if that module exports
        it, else the deepest public module exporting the same object (the closest one to a
        private definition such as ``exercises._feedback``)."""
        defined_in = getattr(value, "__module__", None)
        if defined_in in exports and exports[defined_in].get(name) is value:
            return defined_in
        holders = [m for m, names in exports.items() if name in names and names[name] is value]
        if defined_in:
            related = [m for m in holders if defined_in.startswith(m + ".") or defined_in == m]
            holders = related or holders
        return max(holders, key=lambda m: (m.count("."), m))

    for module, names in exports.items():
        page = pages[module]
        for name, value in names.items():
            if inspect.ismodule(value):
                if value.__name__ in pages and value.__name__ not in page.submodules:
                    page.reexports[name] = value.__name__
                continue
            owner = home(name, value)
            if owner != module:
                page.reexports[name] = f"{owner}.{name}"
            elif inspect.isclass(value):
                (page.exceptions if issubclass(value, BaseException) else page.classes).append(name)
            elif inspect.isroutine(value):
                page.functions.append(name)
            else:
                page.data.append(name)
    return pages


def homes(pages: dict[str, Page]) -> Homes:
    """Every entry the pages write: each module, and each name documented on its page."""
    found = Homes()
    for page in pages.values():
        module = importlib.import_module(page.module)
        found.add(module, page.module)
        for name in page.classes + page.exceptions + page.functions + page.data:
            found.add(getattr(module, name), f"{page.module}.{name}")
    return found


def _short_value(value) -> bool:
    text = repr(value)
    return len(text) <= 80 and " at 0x" not in text


def render(page: Page) -> str:
    """The reStructuredText of one module's page."""
    module = importlib.import_module(page.module)
    kind = "package" if hasattr(module, "__path__") else "module"
    title = page.module
    lines = [title, "=" * len(title), "", f".. automodule:: {page.module}", ""]
    if page.lessons:
        lines += [".. admonition:: The lessons whose code lives here", "   :class: bloomedu-lessons-here",
                  "", "   " + ", ".join(f":doc:`/{lesson}`" for lesson in page.lessons), ""]

    def section(heading: str, body: list[str]) -> None:
        lines.extend([heading, "-" * len(heading), "", *body, ""])

    def table(names: list[str]) -> list[str]:
        # full names in the table, so no current module while autosummary reads them
        return [".. py:currentmodule:: None", "", ".. autosummary::", "",
                *[f"   {name}" for name in names], "", f".. py:currentmodule:: {page.module}", ""]

    if page.submodules:
        section("Modules", [*table(page.submodules), ".. toctree::", "   :hidden:", "",
                            *[f"   {m}" for m in page.submodules]])
    if page.reexports:
        section(f"Names this {kind} re-exports", [
            f"Defined elsewhere and importable from ``{page.module}`` too "
            "(each link goes to the one place it is documented):", "",
            *table(list(page.reexports.values()))])
    options = {"autoclass": ["   :members:", "   :undoc-members:",
                             "   :special-members: __contains__, __len__, __iter__, __or__, "
                             "__and__, __ior__, __iand__, __call__"],
               "autoexception": ["   :members:"], "autofunction": []}
    for heading, names, directive in (("Classes", page.classes, "autoclass"),
                                      ("Exceptions", page.exceptions, "autoexception"),
                                      ("Functions", page.functions, "autofunction")):
        if names:
            body = []
            for name in names:
                body += [f".. {directive}:: {page.module}.{name}", *options[directive]]
                if directive != "autofunction" and getattr(module, name).__bases__ != (object,):
                    body += ["   :show-inheritance:"]  # "Bases: object" would say nothing
                body += [""]
            section(heading, body)
    if page.data:
        body = []
        for name in page.data:
            value = getattr(module, name)
            body += [f".. autodata:: {page.module}.{name}"]
            body += [] if _short_value(value) else ["   :no-value:"]
            body += [""]
        section("Constants and objects", body)
    return "\n".join(lines).rstrip() + "\n"


def write_pages(srcdir: Path, pages: dict[str, Page]) -> list[str]:
    """Write ``api/<module>.rst`` for each page whose text changed; delete pages of gone modules."""
    texts = {f"{page.module}.rst": render(page).encode("utf-8") for page in pages.values()}
    return sync_folder(Path(srcdir) / API_DIR, texts, "*.rst")


def _generate(app) -> None:
    app.bloomedu_pages = pages = plan()
    for module, lessons in modules_named_by_lessons(Path(app.srcdir).parent / "notebooks").items():
        if module in pages:
            pages[module].lessons = lessons
    app.bloomedu_homes = homes(pages)
    write_pages(Path(app.srcdir), pages)


def _resolve_missing(app, env, node, contnode):
    """A Python reference Sphinx could not resolve by its own rules: resolved as Python
    would resolve the name where it is written (see ``bloomedu_names``); a real object
    without an entry stays code; a name that names nothing is left to warn."""
    if node.get("refdomain") != "py" or not hasattr(app, "bloomedu_homes"):
        return None
    entry, exists = resolve(node.get("reftarget", ""), app.bloomedu_homes,
                            node.get("py:module"), node.get("py:class"))
    if entry:
        return env.get_domain("py").resolve_xref(env, node["refdoc"], app.builder, "obj", entry,
                                                node, contnode)
    return contnode if exists else None


def _no_borrowed_docstring(app, what, name, obj, options, lines):
    """A constant without a ``#:`` comment would show its type's docstring (``dict()
    -> new empty dictionary``): show nothing instead."""
    if what in ("data", "attribute") and not type(obj).__module__.startswith(PACKAGE):
        borrowed = " ".join((getattr(type(obj), "__doc__", None) or "").split())
        if borrowed and " ".join(" ".join(lines).split()).endswith(borrowed):  # after a signature
            lines.clear()


def setup(app):
    app.connect("builder-inited", _generate)
    app.connect("missing-reference", _resolve_missing)
    app.connect("autodoc-process-docstring", _no_borrowed_docstring)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
