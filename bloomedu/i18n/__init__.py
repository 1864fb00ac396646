"""The language of what the library prints and draws for a student: English, or Italian.

>>> from bloomedu.i18n import set_language, language, _
>>> set_language("it"); language(), _("Right.")
('it', 'Corretto!')
>>> set_language("en"); language(), _("Right.")
('en', 'Right.')

Text a lesson's code passes in (a :func:`~bloomedu.teaching.predict.predict` question, a
``reveal`` label) is looked up too, so a catalog entry can translate it with no change to the
code cell the two editions share.  The lessons print their own sentences and table headers
through :func:`say` (and build a label with :func:`phrase`), never ``print(f"...")``: an
f-string is filled in before any catalog could see it, so its English would stay English.

>>> say("{n:,} IDs remembered, {rate:.1%} of them twice", n=12345, rate=0.0125)
12,345 IDs remembered, 1.2% of them twice

The Italian lessons start with ``from bloomedu.i18n import set_language; set_language("it")``;
``bloomedu lab --lang it`` starts JupyterLab with ``BLOOMEDU_LANG=it`` in its environment, the
default of every kernel it runs (an unknown value there warns and keeps English).  English is
the default and is never translated: a message is its own English.

The messages are a standard gettext catalog, ``bloomedu/i18n/locale/it/LC_MESSAGES/bloomedu.po``,
compiled to ``bloomedu.mo`` beside it (``python -m tools.i18n_catalog compile``).  A message with
parts keeps them as named fields (``_("Your guess: {guess}.").format(guess=...)``), so a
translator may move them; numbers are formatted as in English.  Tested in ``tests/test_i18n.py``
(the .mo is the compile of the .po, no entry fuzzy or untranslated, every literal passed to
``_()`` in the package is in the catalog).
"""

from __future__ import annotations

import gettext as _gettext
import os
import warnings
from pathlib import Path

__all__ = ["LANGUAGES", "DOMAIN", "LOCALE_DIR", "ENVIRONMENT", "check_language", "set_language",
           "language",
           "gettext", "_", "N_", "say", "phrase"]

LANGUAGES = ("en", "it")
DOMAIN = "bloomedu"
LOCALE_DIR = Path(__file__).resolve().with_name("locale")
ENVIRONMENT = "BLOOMEDU_LANG"

_current: dict = {}  # "language" and "catalog", filled at the first message


def check_language(code, name: str = "language") -> str:
    """``code`` if it is one of :data:`LANGUAGES`, else a ``ValueError`` naming ``name``.

    >>> check_language("it")
    'it'
    >>> check_language("fr", "--lang")
    Traceback (most recent call last):
    ...
    ValueError: --lang must be one of 'en', 'it', got 'fr'
    """
    if not isinstance(code, str) or code not in LANGUAGES:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, LANGUAGES))}, got {code!r}")
    return code


def _catalog_for(code: str):
    if code == "en":
        return _gettext.NullTranslations()
    # fallback=False: a missing catalog is a broken install, not English by accident
    return _gettext.translation(DOMAIN, localedir=str(LOCALE_DIR), languages=[code])


def set_language(code: str) -> None:
    """Print and draw the library's messages in ``code``: ``"en"`` (the default) or ``"it"``.

    >>> set_language("fr")
    Traceback (most recent call last):
    ...
    ValueError: code must be one of 'en', 'it', got 'fr'
    """
    check_language(code, "code")
    _current.update(language=code, catalog=_catalog_for(code))


def _from_environment() -> str:
    value = os.environ.get(ENVIRONMENT, "").strip()
    if not value:
        return "en"
    if value not in LANGUAGES:
        warnings.warn(f"{ENVIRONMENT} must be one of {', '.join(map(repr, LANGUAGES))}, got "
                      f"{value!r}: the library's messages stay in English", UserWarning,
                      stacklevel=3)
        return "en"
    return value


def language() -> str:
    """The language of the messages now: ``set_language``'s, else ``BLOOMEDU_LANG``'s, else "en".

    >>> set_language("en"); language()
    'en'
    """
    if "language" not in _current:
        set_language(_from_environment())
    return _current["language"]


def gettext(message: str) -> str:
    """``message`` (English) in the current language; itself when English or not in the catalog.

    >>> set_language("it"); gettext("Right."); set_language("en")
    'Corretto!'
    """
    if not message:  # gettext("") is the catalog's header, never a message
        return message
    language()
    return _current["catalog"].gettext(message)


_ = gettext


def N_(message: str) -> str:  # noqa: N802 - gettext's own name for it
    """Mark ``message`` for the catalog without translating it now (``gettext_noop``): for
    English kept in a table and translated where it is shown.

    >>> N_("Measured")
    'Measured'
    """
    return message


def phrase(message: str, /, **fields) -> str:
    """``message`` in the current language with its ``{fields}`` filled in, as ``str.format``
    fills them (format specs included): a title, label or line a lesson builds from values.

    The English is the key a translation is found by, so ``message`` must be the literal text,
    never an f-string (``tests/test_i18n.py`` checks the lessons for that).

    >>> phrase("m = {m:,} bits", m=2**20)
    'm = 1,048,576 bits'
    >>> set_language("it"); phrase("Fill of a filter with k = {k}", k=3); set_language("en")
    'Riempimento di un filtro con k = 3'
    >>> phrase("{n} keys", m=3)
    Traceback (most recent call last):
    ...
    TypeError: fields: '{n} keys' needs n, got m
    """
    if not isinstance(message, str):
        raise TypeError(f"message must be a str, got {type(message).__name__}")
    text = gettext(message)
    try:
        return text.format(**fields)
    except KeyError as missing:
        raise TypeError(f"fields: {message!r} needs {missing.args[0]}, got "
                        f"{', '.join(sorted(fields)) or 'none'}") from None
    except IndexError:  # "{}": a translation may move fields, so each must have a name
        raise TypeError(f"fields: {message!r} has a field without a name; name it, as in "
                        f"{{n}}") from None


def say(message: str, /, **fields) -> None:
    """Print :func:`phrase` (``message`` in the current language, its ``{fields}`` filled in):
    the lessons' ``print`` for anything a student reads as words.

    >>> say("{hits} of {n} keys found", hits=9, n=10)
    9 of 10 keys found
    >>> set_language("it"); say("Correct: {what} = {value}.", what="k", value=7); set_language("en")
    Corretto! k = 7.
    """
    print(phrase(message, **fields))
