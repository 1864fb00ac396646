"""The click stream of article 1 ("Filtro di Bloom: un elemento appartiene all'insieme?").

bloomedu.workloads.clicks makes the stream every dedup stage is scored on, so its promises
are checked here: determinism per seed, time order, where the double clicks
are, well-formed UUIDs, the double-click rate, and the scoring.
"""

import math
import uuid
from collections import Counter

import numpy as np
import pytest

from bloomedu.workloads.clicks import Click, click_stream, score, uuid4_bytes, uuid4_strings

SIGMAS = 5  # statistical bounds, in standard deviations (fixed seeds: they never flake)


@pytest.fixture(scope="module")
def stream():
    """Two seconds of clicks at the article's 10,000 messages per second."""
    return click_stream(20_000, rate=10_000, double_click_rate=0.05, seed=7)


def test_same_seed_same_stream_other_seed_other_stream():
    first = click_stream(3000, seed=3)
    assert click_stream(3000, seed=3) == first
    other = click_stream(3000, seed=4)
    assert {c.id for c in first}.isdisjoint({c.id for c in other})
    assert [c.timestamp for c in first] != [c.timestamp for c in other]


def test_length_and_empty_stream():
    assert len(click_stream(1234, seed=1)) == 1234
    assert click_stream(0) == []


def test_timestamps_are_sorted(stream):
    times = np.array([c.timestamp for c in stream])
    assert times[0] > 0
    assert np.all(np.diff(times) >= 0)


def test_messages_arrive_at_the_requested_rate(stream):
    # The n-th message comes near n / rate seconds; the sum of n exponential gaps
    # has standard deviation sqrt(n) / rate.  Copies of clicks near the end fall
    # after the cut, which can stretch the stream by at most one second's worth
    # of copies (rate * double_click_rate messages).
    n, rate, doubles = len(stream), 10_000, 0.05
    tolerance = SIGMAS * math.sqrt(n) / rate + doubles
    assert abs(stream[-1].timestamp - n / rate) < tolerance


def test_every_duplicate_follows_its_original_within_one_second(stream):
    first_seen = {}
    copies = 0
    for click in stream:
        if click.duplicate:
            original = first_seen[click.id]  # KeyError if no earlier original
            assert not original.duplicate
            assert 0.05 <= click.timestamp - original.timestamp <= 1.0
            assert (click.user, click.ad) == (original.user, original.ad)
            copies += 1
        else:
            assert click.id not in first_seen, "a genuine click reused an ID"
            first_seen[click.id] = click
    assert copies > 0
    assert max(Counter(c.id for c in stream).values()) == 2


def test_ids_are_version_4_uuids(stream):
    for click in stream:
        parsed = uuid.UUID(click.id)
        assert parsed.version == 4
        assert parsed.variant == uuid.RFC_4122
        assert str(parsed) == click.id  # canonical form: lower case, 36 characters


def test_uuid4_bytes_and_strings_agree():
    as_bytes = uuid4_bytes(500, np.random.default_rng(9))
    assert as_bytes.dtype == np.dtype("S36") and as_bytes.shape == (500,)
    assert [b.decode() for b in as_bytes.tolist()] == uuid4_strings(500, np.random.default_rng(9))
    assert all(uuid.UUID(bytes=uuid.UUID(b.decode()).bytes).version == 4 for b in as_bytes)


@pytest.mark.parametrize("double_click_rate", [0.0, 0.02, 0.3, 1.0])
def test_duplicate_fraction_matches_the_requested_rate(double_click_rate):
    # Each genuine click is doubled with probability d: the duplicates are
    # Binomial(genuine, d), less the copies due after the cut.  At 10 messages
    # per second a 50,000-message stream lasts over an hour, and the copies due
    # after it are those of the last second's clicks: at most rate * d of them.
    rate, d = 10, double_click_rate
    clicks = click_stream(50_000, rate=rate, double_click_rate=d, seed=21)
    duplicates = sum(c.duplicate for c in clicks)
    genuine = len(clicks) - duplicates
    sd = math.sqrt(genuine * d * (1 - d))
    assert genuine * d - rate * d - SIGMAS * sd <= duplicates <= genuine * d + SIGMAS * sd


def test_score_on_known_kept_lists():
    a = Click("a", 1, 1, 0.0)
    b = Click("b", 2, 1, 0.1)
    a_again = Click("a", 1, 1, 0.2, duplicate=True)
    c = Click("c", 3, 2, 0.3)
    messages = [a, b, a_again, c]
    perfect = score(messages, [a, b, c])
    assert (perfect.messages, perfect.duplicates) == (4, 1)
    assert (perfect.duplicates_dropped, perfect.genuine_dropped) == (1, 0)
    assert (perfect.duplicates_missed, perfect.genuine) == (0, 3)
    keep_all = score(messages, messages)
    assert (keep_all.duplicates_dropped, keep_all.duplicates_missed, keep_all.genuine_dropped) \
        == (0, 1, 0)
    keep_none = score(messages, [])
    assert (keep_none.duplicates_dropped, keep_none.genuine_dropped) == (1, 3)
    too_eager = score(messages, [a])  # a collision took b and c for duplicates
    assert (too_eager.duplicates_dropped, too_eager.genuine_dropped) == (1, 2)


def test_score_counts_by_message_not_by_id():
    # An equal but distinct copy of a kept click is not the kept click.
    a = Click("a", 1, 1, 0.0)
    a_again = Click("a", 1, 1, 0.0)
    assert score([a, a_again], [a]).genuine_dropped == 1


def test_score_rejects_a_kept_message_not_in_the_stream():
    a = Click("a", 1, 1, 0.0)
    with pytest.raises(ValueError, match="kept"):
        score([a], [Click("z", 1, 1, 0.0)])


@pytest.mark.parametrize("arguments, name", [
    ({"num_messages": -1}, "num_messages"),
    ({"num_messages": 2.5}, "num_messages"),
    ({"num_messages": True}, "num_messages"),
    ({"rate": 0}, "rate"),
    ({"rate": -10.0}, "rate"),
    ({"rate": float("nan")}, "rate"),
    ({"rate": "fast"}, "rate"),
    ({"double_click_rate": -0.01}, "double_click_rate"),
    ({"double_click_rate": 1.5}, "double_click_rate"),
    ({"double_click_rate": float("nan")}, "double_click_rate"),
    ({"num_users": -3}, "num_users"),
    ({"num_users": 0}, "num_users"),
    ({"num_ads": 0}, "num_ads"),
    ({"num_ads": 1.0}, "num_ads"),
])
def test_bad_arguments_name_the_argument(arguments, name):
    kwargs = {"num_messages": 10, **arguments}
    with pytest.raises((ValueError, TypeError), match=name):  # a wrong type is a TypeError
        click_stream(**kwargs)


def test_bad_uuid_count_names_the_argument():
    with pytest.raises(ValueError, match="count"):
        uuid4_bytes(-1, np.random.default_rng(0))
