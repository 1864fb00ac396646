"""Exercises with feedback: each lesson ends with two or three (compute, predict, then measure).

A lesson cell poses an exercise and checks it in three lines::

    # Exercise 07.1 (compute): the best whole k for m = 10,000 bits and n = 1,000 keys?
    answer = None  # replace None with your answer
    check.optimal_k(answer, num_bits=10_000, n=1000)

The checker prints "Correct: ...", an explanation of the specific slip
("you used log10 instead of ln"; "your k is the best for m/n between 7.9 and
9.4, but this filter has m/n = 10"), or "Not answered yet" for ``None``, and
returns whether the answer is right (a ``Verdict``: true or false, but not
echoed under the cell); it never raises on an answer, so the student notebooks
run with every exercise blank.  :data:`EXERCISES` is the catalogue, keyed by
lesson ("01", "02", ...); :func:`show` prints a lesson's questions.

>>> check.optimal_k(None, num_bits=10_000, n=1000)
Not answered yet: replace None with k.
False
>>> check.optimal_k(3, num_bits=10_000, n=1000)
Not quite: you used log10 instead of ln: k = (m/n) ln 2.
False
"""

from __future__ import annotations

from ._feedback import CHECKERS, Exercise, Mistake, judge, judge_measured
from . import article2_steps, blocked_steps, filter_steps, hashing_steps, redis_steps, window_steps
from . import after_bloom_steps, engines_steps, systems_steps

__all__ = ["check", "EXERCISES", "Exercise", "Mistake", "judge", "judge_measured", "show"]


class _Checks:
    """Every checker as an attribute: ``check.optimal_k(answer, num_bits=..., n=...)``."""

    def __getattr__(self, name: str):
        try:
            return CHECKERS[name]
        except KeyError:
            raise AttributeError(f"no checker named {name!r}; the checkers are "
                                 f"{', '.join(sorted(CHECKERS))}") from None

    def __dir__(self):
        return sorted(CHECKERS)

    def __repr__(self) -> str:
        return f"<{len(CHECKERS)} exercise checkers: {', '.join(sorted(CHECKERS))}>"


check = _Checks()

EXERCISES: dict[str, tuple[Exercise, ...]] = {}
for _exercise in (hashing_steps.EXERCISES + filter_steps.EXERCISES + article2_steps.EXERCISES
                  + systems_steps.EXERCISES
                  + window_steps.EXERCISES
                  + redis_steps.EXERCISES + blocked_steps.EXERCISES
                  + after_bloom_steps.EXERCISES + engines_steps.EXERCISES):
    EXERCISES.setdefault(_exercise.lesson, ())
    EXERCISES[_exercise.lesson] += (_exercise,)


def show(lesson: str) -> None:
    """Print a lesson's exercises, one line each, in the current language (:mod:`bloomedu.i18n`).

    >>> show("09")  # doctest: +ELLIPSIS
    09.1 (compute): The blacklist of 1,000,000 URLs must fit in 1 MiB (1,048,576 bytes). ...
    09.2 (predict): ...
    09.3 (measure): ...
    """
    if lesson not in EXERCISES:
        raise ValueError(f"lesson must be one of {', '.join(EXERCISES)}, got {lesson!r}")
    for exercise in EXERCISES[lesson]:
        print(exercise.line())
