"""A seeded stream of ad-click messages, some of them double clicks.

Article 1's scenario: every click on a banner arrives as a message with an ID;
a user who double-clicks sends the same message twice, and the second copy must
be dropped.  :func:`click_stream` makes such a stream with the duplicates known,
so any dedup stage can be scored with :func:`score`: duplicates dropped (good)
and genuine clicks dropped (a false positive, the price of saving memory).

Taught in ``notebooks/01_seen_ids.ipynb``; tested in ``tests/test_clicks.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.checks import MAX_NUM_BITS, check_storage, real_number, whole_number

__all__ = ["Click", "DedupScore", "click_stream", "uuid4_bytes", "uuid4_strings", "uuid4_text",
           "score", "WindowedClicks", "WindowedScore", "windowed_click_stream", "score_windowed",
           "FIRST", "DOUBLE", "REPEAT"]

# The two lower-case hex digits of each byte value, as one little-endian 16-bit word.
_HEX_PAIRS = np.frombuffer(b"".join(f"{byte:02x}".encode() for byte in range(256)), dtype="<u2")


@dataclass(frozen=True)
class Click:
    """One click message.  ``duplicate`` is True for the second copy of a double click."""

    id: str
    user: int
    ad: int
    timestamp: float
    duplicate: bool = False


def uuid4_bytes(count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` random version-4 UUIDs as a numpy array of 36-byte ASCII strings (dtype S36).

    The fast path behind :func:`uuid4_strings` (same draws, same IDs): lesson 02
    hashes millions of them.

    >>> uuid4_bytes(1, np.random.default_rng(0))
    array([b'5f82c2d9-cfeb-4fa3-a1d7-d982f8bd1045'], dtype='|S36')
    """
    count = check_count(count, "count")
    return uuid4_text(rng.integers(0, 256, size=(count, 16), dtype=np.uint8))


def uuid4_text(raw: np.ndarray) -> np.ndarray:
    """Version-4 UUID text (dtype S36) from rows of 16 random bytes (version and variant set).

    >>> uuid4_text(np.zeros((1, 16), dtype=np.uint8))
    array([b'00000000-0000-4000-8000-000000000000'], dtype='|S36')
    """
    raw = np.array(raw, dtype=np.uint8).reshape(-1, 16)
    count = raw.shape[0]
    raw[:, 6] = (raw[:, 6] & 0x0F) | 0x40  # version 4
    raw[:, 8] = (raw[:, 8] & 0x3F) | 0x80  # RFC 4122 variant
    digits = _HEX_PAIRS.take(raw).view(np.uint8).reshape(count, 32)  # two per byte, high first
    text = np.full((count, 36), ord("-"), dtype=np.uint8)
    digit = 0
    for dashes, group in enumerate((8, 4, 4, 4, 12)):  # 8-4-4-4-12 hex digits
        text[:, digit + dashes:digit + dashes + group] = digits[:, digit:digit + group]
        digit += group
    return text.view("S36").ravel()


def uuid4_strings(count: int, rng: np.random.Generator) -> list[str]:
    """``count`` random version-4 UUIDs as 36-character strings, drawn from ``rng``.

    >>> uuid4_strings(1, np.random.default_rng(0))
    ['5f82c2d9-cfeb-4fa3-a1d7-d982f8bd1045']
    """
    return [text.decode("ascii") for text in uuid4_bytes(count, rng).tolist()]


def check_count(value, name: str, minimum: int = 0) -> int:
    """``value`` as an int of at least ``minimum`` (a count of messages, users, a seed), or a
    ValueError/TypeError naming ``name``; shared by the click workloads.

    >>> check_count(3, "count"), check_count(1, "chunk", minimum=1)
    (3, 1)
    """
    return whole_number(value, name, minimum, MAX_NUM_BITS)


def check_rate(value, name: str, low: float, high: float | None) -> float:
    """``value`` as a float in [``low``, ``high``] (``high`` None: no upper end), or a
    ValueError/TypeError naming ``name`` and the range.

    >>> check_rate(0.02, "double_click_rate", 0.0, 1.0)
    0.02
    """
    allowed = f"a finite number >= {low}" if high is None else f"a number in [{low}, {high}]"
    return real_number(value, name, low, high, allowed=allowed)


def click_stream(num_messages: int, rate: float = 10_000.0, double_click_rate: float = 0.02,
                 seed: int = 0, num_users: int = 100_000, num_ads: int = 500) -> list[Click]:
    """``num_messages`` click messages in time order, arriving ``rate`` per second.

    Each genuine click is followed, with probability ``double_click_rate``, by a
    copy with the same ID 0.05 to 1 s later (``duplicate=True``).  The stream
    is cut after ``num_messages``, so a copy due after the cut is not in it: a
    stream much shorter than a second holds few duplicates.

    >>> clicks = click_stream(1000, rate=100, double_click_rate=0.1, seed=1)
    >>> len(clicks), sum(c.duplicate for c in clicks)
    (1000, 84)
    >>> clicks[0].id == clicks[1].id
    False
    """
    num_messages = check_count(num_messages, "num_messages")
    rate = check_rate(rate, "rate", 1e-9, None)
    double_click_rate = check_rate(double_click_rate, "double_click_rate", 0.0, 1.0)
    num_users = check_count(num_users, "num_users", minimum=1)
    num_ads = check_count(num_ads, "num_ads", minimum=1)
    check_storage(64 * num_messages, f"num_messages={num_messages}")  # its arrays, before the list
    rng = np.random.default_rng(check_count(seed, "seed"))
    genuine_rate = rate / (1.0 + double_click_rate)
    times = np.cumsum(rng.exponential(1.0 / genuine_rate, size=num_messages))
    ids = uuid4_strings(num_messages, rng)
    users = rng.integers(0, num_users, size=num_messages)
    ads = rng.integers(0, num_ads, size=num_messages)
    doubled = np.flatnonzero(rng.random(num_messages) < double_click_rate)
    delays = rng.uniform(0.05, 1.0, size=doubled.size)

    all_times = np.concatenate([times, times[doubled] + delays])
    source = np.concatenate([np.arange(num_messages), doubled])
    is_copy = np.concatenate([np.zeros(num_messages, bool), np.ones(doubled.size, bool)])
    order = np.lexsort((is_copy, all_times))[:num_messages]
    return [Click(ids[s], int(users[s]), int(ads[s]), float(all_times[j]), bool(is_copy[j]))
            for j, s in ((j, source[j]) for j in order)]


@dataclass(frozen=True)
class DedupScore:
    """How a dedup stage did on a stream whose duplicates are known."""

    messages: int
    duplicates: int
    duplicates_dropped: int
    genuine_dropped: int

    @property
    def duplicates_missed(self) -> int:
        return self.duplicates - self.duplicates_dropped

    @property
    def genuine(self) -> int:
        return self.messages - self.duplicates


def score(messages: list[Click], kept: list[Click]) -> DedupScore:
    """Score a dedup result: ``kept`` must be a sub-list of ``messages``.

    >>> clicks = click_stream(100, rate=10, double_click_rate=0.5, seed=2)
    >>> score(clicks, [c for c in clicks if not c.duplicate])
    DedupScore(messages=100, duplicates=32, duplicates_dropped=32, genuine_dropped=0)
    """
    kept_ids = {id(c) for c in kept}
    if not kept_ids <= {id(c) for c in messages}:
        raise ValueError("kept must hold only messages from `messages` (the same objects)")
    duplicates = sum(c.duplicate for c in messages)
    dropped = [c for c in messages if id(c) not in kept_ids]
    duplicates_dropped = sum(c.duplicate for c in dropped)
    return DedupScore(len(messages), duplicates, duplicates_dropped,
                      len(dropped) - duplicates_dropped)


# --- a day of clicks, for deduplicators that forget (lesson 15) ---------------------------
FIRST, DOUBLE, REPEAT = 0, 1, 2  # the kinds of message in a windowed stream


@dataclass(frozen=True)
class WindowedClicks:
    """A time-compressed stream of click keys with the right answer for each message.

    ``keys`` (uint64, one per (user, ad) click), ``times`` (simulated seconds, sorted) and
    ``kinds``: FIRST (a key never seen), DOUBLE (the same key again within seconds: drop it)
    or REPEAT (a key last seen hours ago: a new, legitimate click; keep it).  Each message
    stands for ``time_scale`` messages of the real stream, so an hour holds
    ``rate * 3600 / time_scale`` of them.
    """

    keys: np.ndarray
    times: np.ndarray
    kinds: np.ndarray
    rate: float
    time_scale: float
    double_gap: tuple
    repeat_gap: tuple

    def __len__(self) -> int:
        return int(self.keys.size)

    @property
    def per_hour(self) -> float:
        """Messages of this stream per simulated hour."""
        return self.rate * 3600 / self.time_scale


def windowed_click_stream(hours: float, rate: float = 10_000.0, time_scale: float = 1000.0,
                          double_click_rate: float = 0.02, repeat_rate: float = 0.05,
                          double_gap: tuple = (0.05, 2.0), repeat_gap: tuple = (2.0, 6.0),
                          seed: int = 0) -> WindowedClicks:
    """``hours`` of clicks at ``rate`` messages/s, time compressed by ``time_scale``.

    Genuine clicks arrive as a Poisson stream.  Each is, with chance ``repeat_rate`` (once
    ``repeat_gap[0]`` hours have passed), a REPEAT: the key of a FIRST click from
    ``repeat_gap`` hours before (drawn uniformly), each key repeated at most once.  Each
    genuine click is doubled with chance ``double_click_rate``: a DOUBLE copy follows it
    ``double_gap`` seconds later.  So a DOUBLE's key was last seen at most
    ``double_gap[1]`` seconds before, a REPEAT's at least ``repeat_gap[0]`` hours minus
    ``double_gap[1]`` seconds before, and a FIRST's never.  A deduplicator with any window W
    between those two should drop every DOUBLE and keep every FIRST and REPEAT
    (:func:`score_windowed`).

    >>> day = windowed_click_stream(24, time_scale=10_000, seed=1)
    >>> len(day), int((day.kinds == DOUBLE).sum()), int((day.kinds == REPEAT).sum())
    (86722, 1760, 3288)
    """
    hours = check_rate(hours, "hours", 0.0, None)
    rate = check_rate(rate, "rate", 1e-9, None)
    time_scale = check_rate(time_scale, "time_scale", 1.0, None)
    double_click_rate = check_rate(double_click_rate, "double_click_rate", 0.0, 1.0)
    repeat_rate = check_rate(repeat_rate, "repeat_rate", 0.0, 1.0)
    low_d, high_d = (check_rate(x, "double_gap", 0.0, None) for x in double_gap)
    low_r, high_r = (check_rate(x, "repeat_gap", 0.0, None) for x in repeat_gap)
    if not (low_d <= high_d and low_r <= high_r and high_d < low_r * 3600):
        raise ValueError("double_gap and repeat_gap must be (low, high) pairs with every double "
                         "gap (seconds) shorter than every repeat gap (hours)")
    rng = np.random.default_rng(check_count(seed, "seed"))
    duration, per_second = hours * 3600, rate / time_scale
    genuine_rate = per_second / (1 + double_click_rate)
    expected = genuine_rate * duration
    if not expected < 2 ** 63:
        raise ValueError(f"hours={hours} at rate={rate} and time_scale={time_scale} ask for "
                         f"{expected:.3g} messages, more than any array holds")
    size = int(expected + 10 * expected ** 0.5 + 10)
    check_storage(48 * size, f"hours={hours} at rate={rate} and time_scale={time_scale} "
                             f"({size:,} messages)")
    times = np.cumsum(rng.exponential(1 / genuine_rate, size=size))
    times = times[times < duration]
    count = times.size
    keys = rng.integers(0, 2 ** 63, size=count, dtype=np.int64).astype(np.uint64) * np.uint64(2) \
        + rng.integers(0, 2, size=count, dtype=np.int64).astype(np.uint64)
    kinds = np.full(count, FIRST, dtype=np.int8)
    back = rng.uniform(low_r * 3600, high_r * 3600, size=count)
    wants = (rng.random(count) < repeat_rate) & (times >= low_r * 3600)
    sources = np.searchsorted(times, times - back, side="right") - 1
    candidates = np.flatnonzero(wants & (sources >= 0))
    used = np.zeros(count, dtype=bool)
    for i in candidates.tolist():  # in time order: a source must be a FIRST not used yet
        s = int(sources[i])
        if kinds[s] == FIRST and not used[s]:
            used[s] = True
            kinds[i] = REPEAT
            keys[i] = keys[s]
    doubled = np.flatnonzero(rng.random(count) < double_click_rate)
    delays = rng.uniform(low_d, high_d, size=doubled.size)
    all_times = np.concatenate([times, times[doubled] + delays])
    all_keys = np.concatenate([keys, keys[doubled]])
    all_kinds = np.concatenate([kinds, np.full(doubled.size, DOUBLE, dtype=np.int8)])
    order = np.lexsort((all_kinds == DOUBLE, all_times))
    order = order[all_times[order] < duration]
    if np.unique(keys[kinds == FIRST]).size != int((kinds == FIRST).sum()):
        raise RuntimeError("two first clicks drew the same 64-bit key; use another seed")
    return WindowedClicks(all_keys[order], all_times[order], all_kinds[order], rate, time_scale,
                          (low_d, high_d), (low_r, high_r))


@dataclass(frozen=True)
class WindowedScore:
    """How a windowed deduplicator did: doubles it dropped, genuine clicks it wrongly dropped."""

    messages: int
    doubles: int
    doubles_dropped: int
    firsts: int
    firsts_dropped: int
    repeats: int
    repeats_dropped: int

    @property
    def genuine_dropped(self) -> int:
        """Genuine clicks dropped: false positives on new keys, and repeats remembered too long."""
        return self.firsts_dropped + self.repeats_dropped

    @property
    def doubles_missed(self) -> int:
        return self.doubles - self.doubles_dropped


def score_windowed(stream: WindowedClicks, kept: np.ndarray) -> WindowedScore:
    """Score a windowed deduplicator's ``kept`` mask (one bool per message of ``stream``).

    >>> s = windowed_click_stream(3, time_scale=100_000, seed=4)
    >>> score_windowed(s, s.kinds != DOUBLE).genuine_dropped
    0
    """
    kept = np.asarray(kept, dtype=bool)
    if kept.shape != stream.keys.shape:
        raise ValueError(f"kept must hold one bool per message ({len(stream)}), got shape {kept.shape}")
    dropped = ~kept
    counts = [int((stream.kinds == kind).sum()) for kind in (FIRST, DOUBLE, REPEAT)]
    lost = [int((dropped & (stream.kinds == kind)).sum()) for kind in (FIRST, DOUBLE, REPEAT)]
    return WindowedScore(len(stream), counts[1], lost[1], counts[0], lost[0], counts[2], lost[2])
