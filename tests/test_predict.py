"""Committed predictions (bloomedu.teaching.predict): what the student sees before and after."""

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from bloomedu.teaching.predict import Prediction, predict


def lines(capsys) -> list[str]:
    return capsys.readouterr().out.splitlines()


def test_no_guess_asks_for_one_then_shows_the_answer(capsys):
    guess = predict("How many?", None)
    assert lines(capsys) == ["Predict: How many?",
                             "Your guess: none yet. Replace None with your guess and run the cell "
                             "before reading on."]
    guess.reveal(940)
    assert lines(capsys) == ["No guess was recorded above: next time, commit to one before the answer.",
                             "Measured: 940."]


@pytest.mark.parametrize("guess, answer, expected", [
    (300, 940, "You were 640 too low (a factor of 3.13): the right order of magnitude."),
    (30, 940, "You were 910 too low (a factor of 31.3): far off."),
    (1000, 940, "You were 60 too high (a factor of 1.06): close."),
    (2000, 940, "You were 1,060 too high (a factor of 2.13): the right order of magnitude."),
    (940, 940, "Exactly right."),
    (0, 3, "You were 3 too low."),
    (-1.5, 2, "You were 3.5 too low."),
    (np.int64(30), np.float64(34.0), "You were 4 too low (a factor of 1.13): close."),
    (Decimal("0.5"), 1, "You were 0.5 too low (a factor of 2): the right order of magnitude."),
    (Fraction(1, 100), 0.0094, "You were 0.0006 too high (a factor of 1.06): close."),
])
def test_a_numeric_guess_is_told_how_far_it_was(capsys, guess, answer, expected):
    predict("q", guess).reveal(answer)
    assert lines(capsys)[-1] == expected


def test_the_answer_is_labelled_where_it_comes_from(capsys):
    Prediction("q", 2).reveal(3, label="Computed")
    assert lines(capsys)[0] == "Your guess: 2. Computed: 3."


def test_choices_are_right_or_wrong_whatever_the_case(capsys):
    guess = predict("Better or worse?", "Worse", choices=("better", "worse"))
    assert lines(capsys)[0] == "Predict: Better or worse? (one of 'better', 'worse')"
    guess.reveal("worse")
    assert lines(capsys)[-1] == "Right."
    Prediction("q", "better", ("better", "worse")).reveal("worse")
    assert lines(capsys)[-1] == "Not this time: read why below."
    Prediction("q", None, ("better", "worse")).reveal("worse")
    assert lines(capsys)[-1] == "The answer: 'worse'."


@pytest.mark.parametrize("question, guess, choices, error, words", [
    ("", None, (), ValueError, "question must be a non-empty str"),
    (3, None, (), ValueError, "question must be a non-empty str"),
    ("q", "a lot", (), TypeError, "guess must be None or a number, got str"),
    ("q", True, (), TypeError, "guess must be None or a number, got bool"),
    ("q", np.bool_(True), (), TypeError, "guess must be None or a number"),
    ("q", float("nan"), (), ValueError, "guess must be a finite number"),
    ("q", float("inf"), (), ValueError, "guess must be a finite number"),
    ("q", Decimal("NaN"), (), ValueError, "guess must be a finite number"),
    ("q", "maybe", ("yes", "no"), ValueError, "guess must be None or one of 'yes', 'no'"),
])
def test_a_bad_question_or_guess_is_refused_naming_it(question, guess, choices, error, words, capsys):
    with pytest.raises(error, match=words):
        predict(question, guess, choices=choices)
    assert capsys.readouterr().out == ""  # nothing printed for a refused prediction


def test_large_and_small_numbers_print_readably(capsys):
    predict("q", 1_000_000).reveal(940_000.5)
    assert lines(capsys)[-2] == "Your guess: 1,000,000. Measured: 9.4e+05."
    predict("q", 1e-6).reveal(2e-6)
    assert lines(capsys)[-2] == "Your guess: 1e-06. Measured: 2e-06."
