"""Article 1's expiry: "always remove the messages older than an hour", and a windowed loop.

After step 1 the article notes that a dict of processed IDs only grows, and that "we can
add some expiry: always remove the messages older than an hour".  :class:`ExpiringIds` is
that dict: each key remembers when it was last seen and is forgotten ``window`` seconds
later.  :func:`deduplicate_windowed` runs it, or any filter of :mod:`bloomedu.variants`,
over a :class:`~bloomedu.workloads.clicks.WindowedClicks` stream in small batches through
the bulk paths, and records the memory each uses as the simulated day goes by.

Taught in ``notebooks/15_forgetting_old_clicks.ipynb``; tested in ``tests/test_expiry.py``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from ..core.checks import real_number
from ..core.hashing import key_list
from ..core.contract import Filter
from .dedup import stored
from .sequential import keep_in_order

__all__ = ["ExpiringIds", "WindowedRun", "deduplicate_windowed", "BYTES_PER_ENTRY"]

BYTES_PER_ENTRY = 36 + 8  # the article's 36-character ID, and an 8-byte time of last sight


class ExpiringIds(Filter):
    """An exact set of keys seen in the last ``window`` seconds of simulated time.

    >>> seen = ExpiringIds(window=3600)
    >>> seen.advance(0.0); seen.add("123")
    >>> seen.advance(3599.0); "123" in seen
    True
    >>> seen.advance(3600.0); "123" in seen, len(seen)
    (False, 0)
    """

    timed = True  # deduplicate_windowed passes each message's time

    def __init__(self, window: float):
        self.window = real_number(window, "window", 0.0, open_low=True,
                                  allowed="a positive finite number of seconds")
        self.now = 0.0
        self.last_seen: dict = {}
        self._queue: deque = deque()

    def advance(self, now: float) -> None:
        """Move the clock to ``now`` and forget every key last seen ``window`` or more ago.

        >>> ExpiringIds(60).advance(float("nan"))
        Traceback (most recent call last):
        ValueError: now must be a finite number of seconds, not back in time before the clock (0.0), got nan
        """
        now = _time(now, "now", self.now)
        self.now, horizon = now, now - self.window
        queue, last = self._queue, self.last_seen
        while queue and queue[0][0] <= horizon:
            when, key = queue.popleft()
            if last.get(key) == when:
                del last[key]

    def add(self, key, now: float | None = None) -> None:
        """Remember ``key`` as seen at ``now`` (default: the clock's time).

        >>> seen = ExpiringIds(60); seen.add("x", now="5")
        Traceback (most recent call last):
        TypeError: now must be a finite number of seconds, not str
        """
        when = self.now if now is None else _time(now, "now")
        self._store(stored(key), when)

    def _store(self, key, when: float) -> None:
        self.last_seen[key] = when
        self._queue.append((when, key))

    def seen_at(self, key, now: float) -> bool:
        """True if ``key`` was seen less than ``window`` seconds before ``now``."""
        when = self.last_seen.get(stored(key))
        return when is not None and when > _time(now, "now") - self.window

    def __contains__(self, key) -> bool:
        return self.seen_at(key, self.now)

    def _batch(self, keys, times) -> tuple[list, list[float]]:
        """Every key (as stored) and its time, all checked before anything is stored."""
        keys = [stored(key) for key in key_list(keys)]
        if times is None:
            return keys, [self.now] * len(keys)
        if isinstance(times, (str, bytes)) or not hasattr(times, "__len__"):
            raise TypeError(f"times must be a sequence of times, one per key, not "
                            f"{type(times).__name__}")
        if len(times) != len(keys):
            raise ValueError(f"times must hold one time per key: {len(times)} times for "
                             f"{len(keys)} keys")
        return keys, [_time(when, f"times[{i}]") for i, when in enumerate(np.asarray(
            times, dtype=object).ravel().tolist())]

    def contains_many(self, keys, times=None) -> np.ndarray:
        """For each key, whether it was seen within the window before its time (or the clock's).

        >>> seen = ExpiringIds(60); seen.add("a", now=0.0)
        >>> seen.contains_many(["a", "a"], times=[59.0, 60.0]).tolist()
        [True, False]
        """
        keys, times = self._batch(keys, times)
        last, window = self.last_seen, self.window
        return np.fromiter((k in last and last[k] > t - window for k, t in zip(keys, times)),
                           dtype=bool, count=len(keys))

    def add_many(self, keys, times=None) -> None:
        """Remember every key, each at its time (default: the clock's); a batch with a bad key
        or time stores nothing.

        >>> seen = ExpiringIds(60); seen.add_many(["a", "b", "c"], times=[1.0])
        Traceback (most recent call last):
        ValueError: times must hold one time per key: 1 times for 3 keys
        >>> len(seen)
        0
        """
        for key, when in zip(*self._batch(keys, times)):
            self._store(key, when)

    def __len__(self) -> int:
        return len(self.last_seen)

    def __eq__(self, other: object) -> bool:
        """Equal when the window, the clock and every key's last sight agree."""
        if type(other) is not type(self):
            return NotImplemented
        return (self.window, self.now, self.last_seen) == (other.window, other.now, other.last_seen)

    __hash__ = None  # mutable

    @property
    def nbytes(self) -> int:
        """The article's accounting: 36 bytes of ID and 8 of time per key held (Python needs more)."""
        return len(self.last_seen) * BYTES_PER_ENTRY


def _time(value, name: str, not_before: float | None = None) -> float:
    """A time in seconds: a finite real number (not a bool or a str), at or after ``not_before``."""
    allowed = "a finite number of seconds" + (
        "" if not_before is None else f", not back in time before the clock ({not_before})")
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be {allowed}, not {type(value).__name__}")
    return real_number(value, name, not_before, allowed=allowed)


@dataclass(frozen=True)
class WindowedRun:
    """What :func:`deduplicate_windowed` returns: the kept mask and the memory over time."""

    kept: np.ndarray
    times: np.ndarray
    nbytes: np.ndarray


def deduplicate_windowed(stream, stage, batch: int = 256) -> WindowedRun:
    """Keep each message whose key ``stage`` does not remember, exactly as one at a time.

    A message is dropped iff the stage, updated by every earlier message (those earlier in
    its own batch too), reports it present; otherwise it is kept and added.  A filter runs
    ``batch`` messages at a time through its bulk paths and redoes one by one only the
    rare messages an earlier one of the batch could change
    (:func:`bloomedu.steps.sequential.keep_in_order`); :class:`ExpiringIds` gets each
    message's time, one by one.  The memory is recorded after each batch.

    >>> from bloomedu.workloads.clicks import windowed_click_stream, score_windowed
    >>> s = windowed_click_stream(4, time_scale=100_000, seed=3)
    >>> run = deduplicate_windowed(s, ExpiringIds(window=3600))
    >>> score_windowed(s, run.kept).doubles_missed, score_windowed(s, run.kept).genuine_dropped
    (0, 0)
    """
    if not isinstance(batch, int) or isinstance(batch, bool) or batch < 1:
        raise ValueError(f"batch must be a positive int, got {batch!r}")
    timed = getattr(stage, "timed", False)
    keys, times = stream.keys, stream.times
    kept = np.zeros(keys.size, dtype=bool)
    ends, sizes = [], []
    for start in range(0, keys.size, batch):
        part, when = keys[start:start + batch], times[start:start + batch]
        if timed:
            keep = kept[start:start + part.size]
            for i, (key, now) in enumerate(zip(part.tolist(), when.tolist())):
                stage.advance(now)
                if key not in stage:
                    keep[i] = True
                    stage.add(key)
        else:
            kept[start:start + part.size] = keep_in_order(stage, part)
        ends.append(float(when[-1]))
        sizes.append(int(stage.nbytes))
    return WindowedRun(kept, np.array(ends), np.array(sizes, dtype=np.int64))
