"""Article 1's expiry: "always remove the messages older than an hour", and a windowed loop.

After step 1 the article notes that a dict of processed IDs only grows, and that "we can
add some expiry: always remove the messages older than an hour".  :class:`ExpiringIds` is
that dict: each key remembers when it was last seen and is forgotten ``window`` seconds
later.  :func:`deduplicate_windowed` runs it, or any filter of :mod:`bloomedu.variants`,
over a :class:`~bloomedu.workloads.clicks.WindowedClicks` stream in small batches through
the bulk paths, and records the memory each uses as the simulated day goes by.

Taught in ``notebooks/10_forgetting_old_clicks.ipynb``; tested in ``tests/test_expiry.py``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from ..core.checks import real_number

__all__ = ["ExpiringIds", "WindowedRun", "deduplicate_windowed", "BYTES_PER_ENTRY"]

BYTES_PER_ENTRY = 36 + 8  # the article's 36-character ID, and an 8-byte time of last sight


class ExpiringIds:
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
        when = self.now if now is None else float(now)
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
        times = [self.now] * len(keys) if times is None else times
        return np.fromiter((self.seen_at(k, t) for k, t in zip(keys, times)), dtype=bool,
                           count=len(keys))

    def add_many(self, keys, times=None) -> None:
        for key, when in zip(keys, [self.now] * len(keys) if times is None else times):
            self.add(key, when)

    def __len__(self) -> int:
        return len(self.last_seen)

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
    """Keep each message whose key ``stage`` does not remember, in batches of ``batch`` messages.

    Each batch is checked against the stage as the previous batch left it
    (``contains_many``), a key met earlier in the same batch (a few seconds before) counts
    as seen, and the kept keys are then added in order (``add_many``).  One by one, a key
    would also see the batch's earlier keys in the stage: a false positive among keys of one
    batch, or a rotation, shift or decrement caused by them, is what batching leaves out.
    :class:`ExpiringIds` gets each message's time and answers exactly.

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
        part = keys[start:start + batch]
        when = times[start:start + batch]
        if timed:
            stage.advance(float(when[0]))
            part_list, when_list = part.tolist(), when.tolist()
            seen = stage.contains_many(part_list, when_list)
        else:
            seen = stage.contains_many(part)
        _, first = np.unique(part, return_index=True)
        fresh = np.zeros(part.size, dtype=bool)
        fresh[first] = True
        keep = fresh & ~seen
        kept[start:start + part.size] = keep
        if timed:
            stage.add_many([k for k, x in zip(part_list, keep.tolist()) if x],
                           [t for t, x in zip(when_list, keep.tolist()) if x])
        else:
            stage.add_many(part[keep])
        ends.append(float(when[-1]))
        sizes.append(int(stage.nbytes))
    return WindowedRun(kept, np.array(ends), np.array(sizes, dtype=np.int64))
