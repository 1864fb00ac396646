"""How an answer is judged and explained: the machinery behind every checker.

A checker computes the right value and a list of :class:`Mistake` values, the
answers that common slips produce (log10 for ln, bits for bytes, a percentage
for a rate), then calls :func:`judge` (or :func:`judge_measured` for a measured
value, accepted within 4 standard deviations).  The verdict is printed, one
line starting "Correct:", "Not quite:" or "Not answered yet:", and returned as
a bool.  An unanswered exercise (``None``) or an answer of the wrong type never
raises, so a lesson runs top to bottom with its exercises left blank.
"""

from __future__ import annotations

import functools
import math
import textwrap
from dataclasses import dataclass, field
from typing import Callable

from ...core.checks import MAX_HASHES, MAX_NUM_BITS, is_number, whole_number
from ...i18n import N_, gettext as _

__all__ = ["Mistake", "Verdict", "judge", "judge_measured", "Exercise", "KINDS", "checker",
           "CHECKERS", "as_number", "bits_set_moments", "hash_count"]

CHECKERS: dict[str, Callable] = {}

_UNIT_SLIPS = {
    "rate": [(100.0, N_("you gave a percentage; give the rate as a fraction (1% is 0.01)"))],
    "bytes": [(8.0, N_("you gave bits; the question asks bytes (8 bits each)"))]
    + [(1 / scale, text)
       for scale, text in [(1e3, N_("you gave kilobytes (kB); the question asks plain bytes")),
                           (1e6, N_("you gave megabytes (MB); the question asks plain bytes")),
                           (1e9, N_("you gave gigabytes (GB); the question asks plain bytes")),
                           (2 ** 10, N_("you gave kibibytes (KiB); the question asks plain bytes")),
                           (2 ** 20, N_("you gave mebibytes (MiB); the question asks plain bytes")),
                           (2 ** 30, N_("you gave gibibytes (GiB); the question asks plain bytes"))]],
    "bits": [(1 / 8, N_("you gave bytes; the question asks bits (8 per byte)"))],
}


class Verdict:
    """A checker's verdict: true when the answer is right, and silent as a cell's last value.

    It compares and prints like ``True`` or ``False``, but a notebook cell that ends with
    a check shows nothing more than the line the checker printed: an unanswered exercise
    does not leave a bare ``False`` under it.

    >>> right, wrong = Verdict(True), Verdict(False)
    >>> right, wrong, bool(wrong), wrong == False, [right]
    (True, False, False, True, [True])
    """

    __slots__ = ("correct",)

    def __init__(self, correct: bool):
        self.correct = bool(correct)

    def __bool__(self) -> bool:
        return self.correct

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (bool, Verdict)):
            return self.correct == bool(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.correct)

    def __repr__(self) -> str:
        return repr(self.correct)

    def _ipython_display_(self) -> None:
        """Show nothing: the checker has already printed its verdict in words."""


def checker(function: Callable) -> Callable:
    """Register a checker so that ``check.<name>`` finds it; it returns a :class:`Verdict`.

    >>> @checker
    ... def always_right(answer):
    ...     return judge(answer, answer or 1, "anything")
    >>> CHECKERS["always_right"](3)
    Correct: anything = 3.
    True
    >>> del CHECKERS["always_right"]
    """
    @functools.wraps(function)
    def check_answer(*args, **kwargs) -> Verdict:
        return Verdict(function(*args, **kwargs))

    CHECKERS[function.__name__] = check_answer
    return check_answer


def hash_count(value, name: str) -> int:
    """A checker's k parameter, in the library's bounds (1..1024); out of range is the lesson's bug.

    >>> hash_count(3, "k")
    3
    """
    return whole_number(value, name, 1, MAX_HASHES)


def bits_set_moments(num_bits: int, throws: int) -> tuple[float, float]:
    """Mean and standard deviation of the bits set after ``throws`` uniform settings of m bits.

    >>> [round(x, 2) for x in bits_set_moments(256, 150)]
    [113.68, 4.09]
    """
    m = whole_number(num_bits, "num_bits", 1, MAX_NUM_BITS)
    throws = whole_number(throws, "throws", 0, MAX_NUM_BITS)
    empty1, empty2 = (1 - 1 / m) ** throws, (1 - 2 / m) ** throws
    mean = m * (1 - empty1)
    variance = m * empty1 + m * (m - 1) * empty2 - (m * empty1) ** 2
    return mean, math.sqrt(max(variance, 0.0))


LN2 = math.log(2)


def classic_rate(m: float, n: float, k: float) -> float:
    """The classic false-positive rate (1 - e^(-kn/m))^k of any real m, n, k (no filter
    has n = 0 or k = 0, but a student's slip may): the formula the checkers' mistakes use.

    >>> round(classic_rate(9586, 1000, 7), 4), classic_rate(100, 0, 3), classic_rate(100, 5, 0)
    (0.01, 0.0, 1.0)
    """
    return 0.0 if n == 0 else (1 - math.exp(-k * n / m)) ** k if k > 0 else 1.0


def bits_for(n: float, p: float, log=math.log) -> float:
    """-n log(p) / (ln 2)^2, unrounded, with ``log`` swappable to name a student's slip.

    >>> round(bits_for(1000, 0.01)), round(bits_for(1000, 0.01, math.log10))
    (9585, 4163)
    """
    return -n * log(p) / LN2 ** 2


def fmt(value: float) -> str:
    """A number for a message: whole numbers with thousands separators, else 4 digits.

    >>> fmt(31104000000.0), fmt(0.0091234), fmt(7)
    ('31,104,000,000', '0.009123', '7')
    """
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:.4g}"


@dataclass(frozen=True)
class Mistake:
    """The answer a slip gives, and what to say when a student gives it.

    ``tolerance`` is absolute; ``None`` means the tolerance of the exercise.

    >>> Mistake(3, "you used log10 instead of ln").explanation
    'you used log10 instead of ln'
    """

    value: float
    explanation: str
    tolerance: float | None = None


def _shown(answer) -> str:
    """A short repr of any answer, even one whose repr fails or runs long."""
    try:
        text = repr(answer)
    except Exception:  # noqa: BLE001 - an answer may be any object at all
        text = f"<{type(answer).__name__}>"
    return text if len(text) <= 40 else text[:37] + "..."


def as_number(answer) -> float | None:
    """The answer as a finite float, or None (not a number, nan, infinite, or too large).

    Any real type converts (numpy scalars, ``Fraction``, ``Decimal``); ``True`` does not.

    >>> from fractions import Fraction
    >>> as_number(Fraction(7, 2)), as_number(10 ** 400), as_number("7"), as_number(True)
    (3.5, None, None, None)
    """
    if not is_number(answer):
        return None
    try:
        value = float(answer)
    except (OverflowError, ValueError, TypeError):
        return None
    return value if math.isfinite(value) else None


def _read(answer, what: str) -> tuple[float | None, str | None]:
    """(the answer as a float, None), or (None, why it cannot be judged)."""
    if answer is None:
        return None, _("Not answered yet: replace None with {what}.").format(what=_(what))
    value = as_number(answer)
    if value is not None:
        return value, None
    if not is_number(answer):
        return None, _("Not quite: the answer should be a number ({what}), not a {type} "
                       "({answer}).").format(what=_(what), type=type(answer).__name__,
                                             answer=_shown(answer))
    return None, _("Not quite: {what} is a finite number of ordinary size, not {answer}.").format(
        what=_(what), answer=_shown(answer))


def _sentence(text: str) -> str:
    return text if text.endswith((".", "?", "!")) else text + "."


def _matching(answer: float, mistakes, tolerance: Callable[[float], float]) -> Mistake | None:
    for mistake in mistakes:
        allowed = mistake.tolerance if mistake.tolerance is not None else tolerance(mistake.value)
        if abs(answer - mistake.value) <= allowed:
            return mistake
    return None


def judge(answer, correct: float, what: str, *, mistakes=(), rel: float = 1e-3,
          abs_tol: float = 0.0, unit: str | None = None, hint: str = "", note: str = "") -> bool:
    """Print a verdict on ``answer`` for the value ``correct`` and return whether it is right.

    Right means within ``rel`` (relative) or ``abs_tol``.  A wrong answer is
    compared with each mistake, then with the slips of its ``unit``
    ("rate", "bytes" or "bits"), and the first match is explained.

    >>> judge(3, 7, "k", mistakes=[Mistake(3, "you used log10 instead of ln")])
    Not quite: you used log10 instead of ln.
    False
    >>> judge(None, 7, "k")
    Not answered yet: replace None with k.
    False
    >>> judge(0.7, 0.007, "the rate", unit="rate")
    Not quite: you gave a percentage; give the rate as a fraction (1% is 0.01).
    False
    """
    answer, problem = _read(answer, what)
    if problem:
        print(problem)
        return False
    tolerance = lambda value: max(rel * abs(value), abs_tol)  # noqa: E731
    if abs(answer - correct) <= tolerance(correct):
        print(_("Correct: {what} = {value}.").format(what=_(what), value=fmt(correct))
              + (f" {_(note)}" if note else ""))
        return True
    slips = [Mistake(correct * scale, text, max(tolerance(correct * scale), 0.02 * abs(correct * scale)))
             for scale, text in _UNIT_SLIPS.get(unit, [])]
    found = _matching(answer, list(mistakes) + slips, tolerance)
    if found:
        print(_("Not quite: {explanation}").format(explanation=_sentence(_(found.explanation))))
    else:
        text = (_("Not quite: {answer} is too high for {what}.") if answer > correct
                else _("Not quite: {answer} is too low for {what}."))
        print(text.format(answer=fmt(answer), what=_(what))
              + (" " + _("Hint: {hint}").format(hint=_(hint)) if hint else ""))
    return False


def judge_measured(answer, expected: float, sd: float, what: str, *, trials: int | None = None,
                   mistakes=(), note: str = "") -> bool:
    """Accept a measured rate within 4 standard deviations ``sd`` of ``expected``.

    With ``trials``, a count (rate times trials), a percentage and a rate near
    1 (measured on the inserted keys) are recognised and explained.

    >>> judge_measured(0.0104, 0.0100, 0.0003, "the measured rate", trials=100_000)
    Correct: 0.0104 is within 4 standard deviations (4 x 0.0003) of the expected 0.01.
    True
    >>> judge_measured(1040, 0.0100, 0.0003, "the measured rate", trials=100_000)
    Not quite: you gave a count (1,040 of 100,000 keys); divide by the number of keys tested.
    False
    """
    answer, problem = _read(answer, what)
    if problem:
        print(problem)
        return False
    if abs(answer - expected) <= 4 * sd + 1e-12:
        print(_("Correct: {answer} is within 4 standard deviations (4 x {sd}) of the expected "
                "{expected}.").format(answer=fmt(answer), sd=f"{sd:.2g}", expected=fmt(expected))
              + (f" {_(note)}" if note else ""))
        return True
    slips = list(mistakes)
    if trials:
        slips += [Mistake(1.0, _("a rate near 1 means the keys tested were the inserted ones; a "
                                 "false positive is measured on keys never inserted"), 0.02),
                  Mistake(expected * trials, _("you gave a count ({answer} of {trials} keys); "
                                               "divide by the number of keys tested").format(
                                                   answer=fmt(answer), trials=f"{trials:,}"),
                          4 * sd * trials + 1),
                  Mistake(100 * expected, _("you gave a percentage; give the rate as a fraction "
                                            "(1% is 0.01)"), 400 * sd)]
    found = _matching(answer, slips, lambda value: 4 * sd)
    if found:
        print(_("Not quite: {explanation}").format(explanation=_sentence(_(found.explanation))))
    else:
        away = abs(answer - expected) / sd if sd > 0 else math.inf
        print(_("Not quite: {answer} is {away} standard deviations from the {expected} expected "
                "for {what}; check the experiment's parameters (m, k, n, the keys tested).").format(
                    answer=fmt(answer), away=f"{away:.1f}", expected=fmt(expected), what=_(what)))
    return False


KINDS = (N_("compute"), N_("predict"), N_("measure"))  # an exercise's kind, in a lesson's order


@dataclass(frozen=True)
class Exercise:
    """One exercise of a lesson: its question, its checker and the parameters it is set with.

    The question is an English template, marked ``N_(...)`` where it is written so that the
    catalog holds it: :meth:`line` shows it in the reader's language, while :meth:`cell`, the
    code the English lesson poses it with, stays English.

    >>> ex = Exercise("07", 1, "compute", "Best k for m = {num_bits:,}, n = {n:,}?", "optimal_k",
    ...               {"num_bits": 10_000, "n": 1000})
    >>> print(ex.cell())
    # Exercise 07.1 (compute): Best k for m = 10,000, n = 1,000?
    answer = None  # replace None with your answer
    check.optimal_k(answer, num_bits=10_000, n=1000)
    >>> ex.line()
    '07.1 (compute): Best k for m = 10,000, n = 1,000?'
    """

    lesson: str
    number: int
    kind: str
    question: str
    checker: str
    params: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The exercise's label, lesson.number."""
        return f"{self.lesson}.{self.number}"

    @property
    def text(self) -> str:
        """The question with its parameters filled in, in English (the lessons' code and markdown)."""
        return self.question.format(**self.params)

    def line(self) -> str:
        """The line :func:`~bloomedu.teaching.exercises.show` prints, "lesson.number (kind):
        question", in the current language (:mod:`bloomedu.i18n`), the parameters filled in as
        in English.

        >>> from bloomedu.i18n import set_language
        >>> ex = Exercise("07", 1, "compute", "What is the best whole number of hash functions "
        ...               "k for m = {num_bits:,} bits and n = {n:,} keys?", "optimal_k",
        ...               {"num_bits": 12_000, "n": 1000})
        >>> set_language("it"); print(ex.line()); set_language("en")  # doctest: +NORMALIZE_WHITESPACE
        07.1 (calcola): Qual è il miglior numero intero di funzioni di hash k per m = 12,000 bit
        e n = 1,000 chiavi?
        """
        return f"{self.name} ({_(self.kind)}): {_(self.question).format(**self.params)}"

    def cell(self) -> str:
        """The code of the lesson cell that poses this exercise, unanswered (English)."""
        args = "".join(f", {key}={_literal(value)}" for key, value in self.params.items())
        comment = textwrap.wrap(f"Exercise {self.name} ({self.kind}): {self.text}", 96,
                                initial_indent="# ", subsequent_indent="# ")
        return "\n".join(comment + ["answer = None  # replace None with your answer",
                                    f"check.{self.checker}(answer{args})"])

    def check(self, answer) -> bool:
        """Check an answer with this exercise's parameters."""
        return CHECKERS[self.checker](answer, **self.params)


def _literal(value) -> str:
    """Python source for a parameter, with digit groups for big whole numbers."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10_000:
        return f"{value:_}"
    return repr(value)
