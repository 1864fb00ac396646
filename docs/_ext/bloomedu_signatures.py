"""Class signatures as their constructors declare them, not the lock's ``(*args, **kwargs)``.

Every filter takes :class:`~bloomedu.core.contract.Filter` as a base, whose
``__new__(cls, *args, **kwargs)`` makes the instance's lock and passes everything else on.
autodoc reads a class's signature from a user-defined ``__new__`` before ``__init__`` (as
``inspect.signature`` does), so fifteen classes showed ``class BloomFilter(*args, **kwargs)``.
Sphinx keeps a list of such pass-through ``__new__`` methods, private and frozen; this
extension does the same through the public ``autodoc-process-signature`` event: when a class's
``__new__`` only forwards ``*args, **kwargs`` and the class has an ``__init__`` of its own
making, the signature shown is that ``__init__``'s, formatted as autodoc formats any other
(defaults as written in the source, short type names); a base with no ``__init__`` of its own
shows ``()``, and a ``typing.Protocol``, never instantiated, shows none.
"""

from __future__ import annotations

import inspect

from sphinx.ext.autodoc.preserve_defaults import update_defvalue
from sphinx.util import inspect as sphinx_inspect

PASS_THROUGH = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def forwards_everything(function) -> bool:
    """True for ``def __new__(cls, *args, **kwargs)``: a method that declares nothing of its own.

    >>> class Passing:
    ...     def __new__(cls, *args, **kwargs):
    ...         return super().__new__(cls)
    >>> forwards_everything(Passing.__new__), forwards_everything(lambda cls, m, k: None)
    (True, False)
    """
    if not inspect.isfunction(function):
        return False
    kinds = [p.kind for p in inspect.signature(function).parameters.values()][1:]
    return kinds == list(PASS_THROUGH)


def constructor(cls) -> object | None:
    """The ``__init__`` whose signature a class should show, when its ``__new__`` passes through.

    >>> from bloomedu import BloomFilter
    >>> constructor(BloomFilter) is BloomFilter.__init__, constructor(int)
    (True, None)
    """
    new, init = getattr(cls, "__new__", None), getattr(cls, "__init__", None)
    if not forwards_everything(new) or not inspect.isfunction(init):
        return None
    return init


def format_signature(app, init) -> str:
    """``init``'s signature without ``self``, as autodoc would write it with this project's settings."""
    update_defvalue(app, init, True)  # autodoc_preserve_defaults: defaults as the source spells them
    signature = sphinx_inspect.signature(init, bound_method=True,
                                         type_aliases=app.config.autodoc_type_aliases)
    options = {"show_annotation": app.config.autodoc_typehints not in ("none", "description"),
               "show_return_annotation": False,
               "unqualified_typehints": app.config.autodoc_typehints_format == "short"}
    if "short_literals" in inspect.signature(sphinx_inspect.stringify_signature).parameters:
        options["short_literals"] = app.config.python_display_short_literal_types  # Sphinx >= 7.4
    return sphinx_inspect.stringify_signature(signature, **options)


def real_signature(app, what, name, obj, options, signature, return_annotation):
    """The signature autodoc shows for a class: its ``__init__``'s when ``__new__`` only passes
    arguments on; ``()`` for a base whose ``__init__`` is ``object``'s; none for a Protocol,
    which is never instantiated (``typing`` gives it a placeholder ``__init__(*args, **kwargs)``)."""
    if what not in ("class", "exception") or not inspect.isclass(obj):
        return None
    if getattr(obj, "_is_protocol", False):
        return "", return_annotation
    init = constructor(obj)
    if init is not None:
        return format_signature(app, init), return_annotation
    if forwards_everything(getattr(obj, "__new__", None)) and obj.__init__ is object.__init__:
        return "()", return_annotation
    return None


def setup(app):
    app.connect("autodoc-process-signature", real_signature)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
