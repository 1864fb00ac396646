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
from ..core.batch_hashing import key_list
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
        """Move the clock to ``now`` and forget every key last seen ``window`` or more ago."""
        now = float(now)
        if now < self.now:
            raise ValueError(f"now must not go back in time: {now} < {self.now}")
        self.now, horizon = now, now - self.window
        queue, last = self._queue, self.last_seen
        while queue and queue[0][0] <= horizon:
            when, key = queue.popleft()
            if last.get(key) == when:
                del last[key]

    def add(self, key, now: float | None = None) -> None:
        """Remember ``key`` as seen at ``now`` (default: the clock's time)."""
        when, key = self.now if now is None else float(now), stored(key)
        self.last_seen[key] = when
        self._queue.append((when, key))

    def seen_at(self, key, now: float) -> bool:
        """True if ``key`` was seen less than ``window`` seconds before ``now``."""
        when = self.last_seen.get(key)
        return when is not None and when > now - self.window

    def __contains__(self, key) -> bool:
        return self.seen_at(key, self.now)

    def contains_many(self, keys, times=None) -> np.ndarray:
        """For each key, whether it was seen within the window before its time (or the clock's)."""
        keys = key_list(keys)
        times = [self.now] * len(keys) if times is None else times
        return np.fromiter((self.seen_at(k, t) for k, t in zip(keys, times)), dtype=bool,
                           count=len(keys))

    def add_many(self, keys, times=None) -> None:
        keys = key_list(keys)
        for key, when in zip(keys, [self.now] * len(keys) if times is None else times):
            self.add(key, when)

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
