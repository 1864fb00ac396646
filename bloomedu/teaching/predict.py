"""Predictions a student commits to before the cell that reveals the answer.

A demonstration teaches when the student first commits to a prediction; watched
alone it teaches little more than nothing (Crouch, Fagen, Callan and Mazur,
*Classroom demonstrations: learning tools or entertainment?*, 2004).  A lesson
asks in one cell, which the student edits::

    guess = predict("How many of 1,000,000 safe URLs come back 'maybe'?", None)

and, after the cell that measures it, compares::

    guess.reveal(false_positives)

``predict`` prints the question and whether a guess is recorded; ``reveal``
prints the guess beside the answer and how far it was: the difference and, for
two positive numbers, the factor between them (a guess of 300 for 940 is "3.1
times too low").  A guess may also be one of a few ``choices`` (``"better"``
or ``"worse"``), judged right or wrong; in Italian (:mod:`bloomedu.i18n`) the
choices are shown translated and a guess may be either the English the code
names or the Italian shown.  With no guess (the committed lessons leave
``None``, so strict nbval sees the same text on every machine), ``reveal`` says
so, then shows the answer.

>>> guess = predict("How many fresh IDs are tried before one is claimed?", 30)
Predict: How many fresh IDs are tried before one is claimed?
Your guess: 30. The answer comes further down: read on.
>>> guess.reveal(34)
Your guess: 30. Measured: 34.
You were 4 too low (a factor of 1.13): close.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from numbers import Real

import numpy as np

from ..i18n import N_, gettext as _

# The labels the lessons give reveal(): their code is the same in every edition, so the
# catalog translates them here.
LABELS = (N_("Measured"), N_("Computed"), N_("Counted"), N_("Claimed"), N_("Exact"), N_("Tried"),
          N_("Measured on this machine"), N_("Round trips saved"), N_("The formula's factor"),
          N_("Bits that differ"), N_("Beyond one standard deviation"), N_("Off by (%)"),
          N_("Computed, version 1 (2^31 bits)"), N_("BF.MADD answered 1"),
          N_("Rows Removed by Index Recheck"))

__all__ = ["Prediction", "predict"]


def _is_number(value) -> bool:
    """A real number (numpy's, Fraction and Decimal included), but not a bool: a guess of True is not 1."""
    if isinstance(value, (bool, np.bool_)):
        return False
    return isinstance(value, (Real, np.number, Decimal))


def _shown(value) -> str:
    """A number as the lessons print it: thousands separators, at most 4 significant digits."""
    if not _is_number(value):
        return repr(value) if isinstance(value, str) else str(value)
    number = float(value)
    if not math.isfinite(number):
        return str(number)
    if number.is_integer() and abs(number) < 1e15:
        return f"{int(number):,}"
    if 1e-4 <= abs(number) < 1e6:
        return f"{number:,.4g}" if abs(number) >= 1 else f"{number:.4g}"
    return f"{number:.3g}"


@dataclass(frozen=True)
class Prediction:
    """A question, the student's guess (``None`` until they commit one) and, optionally,
    the ``choices`` a guess must be one of.

    >>> Prediction("Will k = 12 beat k = 6?", "worse", choices=("better", "worse")).reveal("worse")
    Your guess: 'worse'. The answer: 'worse'.
    Right.
    """

    question: str
    guess: object = None
    choices: tuple = ()

    def reveal(self, answer, *, label: str = "Measured") -> None:
        """Print the guess beside ``answer`` and how far it was.

        ``label`` names where the answer comes from ("Measured", "Computed", ...);
        for a choice it reads "The answer".

        >>> predict("How many bits does the filter set?", None).reveal(79, label="Counted")
        Predict: How many bits does the filter set?
        Your guess: none yet. Replace None with your guess and run the cell before reading on.
        No guess was recorded above: next time, commit to one before the answer.
        Counted: 79.
        >>> Prediction("p?", 0.01).reveal(0.0094)
        Your guess: 0.01. Measured: 0.0094.
        You were 0.0006 too high (a factor of 1.06): close.
        """
        if self.guess is None:
            print(_("No guess was recorded above: next time, commit to one before the answer."))
            print(_("{label}: {answer}.").format(label=_(label) if not self.choices else _("The answer"),
                                                 answer=_shown(_as_shown(answer) if self.choices else answer)))
            return
        if self.choices or not (_is_number(self.guess) and _is_number(answer)):
            print(_("Your guess: {guess}. The answer: {answer}.").format(
                guess=_shown(self.guess), answer=_shown(_as_shown(answer) if self.choices else answer)))
            right = _is_choice(self.guess, answer) if self.choices else _same(self.guess, answer)
            print(_("Right.") if right else _("Not this time: read why below."))
            return
        guess, value = float(self.guess), float(answer)
        print(_("Your guess: {guess}. {label}: {answer}.").format(guess=_shown(self.guess),
                                                              label=_(label), answer=_shown(answer)))
        print(_distance(guess, value))


def _same(guess, answer) -> bool:
    if isinstance(guess, str) and isinstance(answer, str):
        return guess.strip().casefold() == answer.strip().casefold()
    return guess == answer


def _as_shown(choice):
    """A choice as the reader reads it: a word in the current language, anything else as it is."""
    return _(choice) if isinstance(choice, str) else choice


def _is_choice(guess, choice) -> bool:
    """Whether ``guess`` is ``choice``, in English (as the code names it) or as the current
    language shows it: an Italian student may answer ``'cresce'`` for ``'grows'``."""
    return _same(guess, choice) or _same(guess, _as_shown(choice))


def _distance(guess: float, value: float) -> str:
    """How far a numeric guess was: the difference, the factor, and a word for it."""
    if guess == value:
        return _("Exactly right.")
    difference = _shown(abs(guess - value))
    if not (guess > 0 and value > 0):
        return (_("You were {difference} too high.") if guess > value
                else _("You were {difference} too low.")).format(difference=difference)
    factor = max(guess, value) / min(guess, value)
    word = _("close") if factor < 1.25 else _("the right order of magnitude") if factor < 10 \
        else _("far off")
    text = (_("You were {difference} too high (a factor of {factor}): {verdict}.") if guess > value
            else _("You were {difference} too low (a factor of {factor}): {verdict}."))
    return text.format(difference=difference, factor=f"{factor:.3g}", verdict=word)


def predict(question: str, guess=None, *, choices=()) -> Prediction:
    """Record a guess to ``question`` before the answer is shown; returns a :class:`Prediction`.

    The student replaces ``None`` with a number (or one of ``choices``) and runs the cell.

    >>> guess = predict("Better or worse at k = 12?", "worse", choices=("better", "worse"))
    Predict: Better or worse at k = 12? (one of 'better', 'worse')
    Your guess: 'worse'. The answer comes further down: read on.
    >>> predict("", None)
    Traceback (most recent call last):
    ...
    ValueError: question must be a non-empty str, got ''
    >>> predict("Which?", "maybe", choices=("yes", "no"))
    Traceback (most recent call last):
    ...
    ValueError: guess must be None or one of 'yes', 'no', got 'maybe'
    """
    if not isinstance(question, str) or not question.strip():
        raise ValueError(f"question must be a non-empty str, got {question!r}")
    choices = tuple(choices)
    shown = ", ".join(repr(_as_shown(choice)) for choice in choices)
    if choices and guess is not None and not any(_is_choice(guess, choice) for choice in choices):
        raise ValueError(f"guess must be None or one of {shown}, got {guess!r}")
    if not choices and guess is not None and not _is_number(guess):
        raise TypeError(f"guess must be None or a number, got {type(guess).__name__} {guess!r}")
    if _is_number(guess) and not math.isfinite(float(guess)):
        raise ValueError(f"guess must be a finite number, got {guess!r}")
    offered = _(" (one of {choices})").format(choices=shown) if choices else ""
    print(_("Predict: {question}{choices}").format(question=_(question), choices=offered))
    if guess is None:
        print(_("Your guess: none yet. Replace None with your guess and run the cell before reading on."))
    else:
        print(_("Your guess: {guess}. The answer comes further down: read on.").format(guess=_shown(guess)))
    return Prediction(question, guess, choices)
