"""A database behind a network, simulated: every round trip waits a chosen latency first.

Article 2 ("Bloom Filter: come memorizzare 1 Milione di stringhe in meno di
2MB?") puts a Bloom filter in front of a slow database or file system.  The
SQLite blacklist of :mod:`bloomedu.services.blacklist` is a local file that
answers in microseconds, not slow at all; a database server answers after a
network round trip, typically a fraction of a millisecond to a millisecond in
one data centre, and more across regions.  :class:`DistantDatabase` is the same
SQLite blacklist with a latency knob: each SELECT (one per :meth:`contains`, one
per :meth:`contains_many`) first waits ``latency`` seconds, so the filter's
saving can be measured at realistic latencies.

The wait is real, not a sleep: ``time.sleep`` overshoots short waits by tens
of microseconds on common systems, so waits under 2 ms spin on
``time.perf_counter`` (longer ones sleep all but the last 2 ms).

Taught in ``notebooks/10_blacklist_cache.ipynb`` (section 3); tested in
``tests/test_latency.py``.
"""

from __future__ import annotations

import threading
import time

from ..core.checks import is_number, real_number
from ..services.blacklist import BlacklistDatabase

__all__ = ["DistantDatabase", "wait"]

_SPIN_S = 0.002  # waits shorter than this spin; longer ones sleep first


def wait(seconds: float) -> None:
    """Wait ``seconds`` (at least), precisely even for a few microseconds.

    >>> start = time.perf_counter(); wait(0.0002); time.perf_counter() - start >= 0.0002
    True
    """
    seconds = real_number(seconds, "seconds", 0.0, threading.TIMEOUT_MAX,
                          allowed=f"a number of seconds from 0 to {threading.TIMEOUT_MAX:.3g}")
    end = time.perf_counter() + seconds
    if seconds > _SPIN_S:
        time.sleep(seconds - _SPIN_S)
    while time.perf_counter() < end:
        pass


class DistantDatabase(BlacklistDatabase):
    """A :class:`~bloomedu.services.blacklist.BlacklistDatabase` whose every SELECT waits ``latency`` s.

    ``waited`` adds up the latency of every round trip so far.

    >>> import tempfile
    >>> from pathlib import Path
    >>> from bloomedu.services.blacklist import create_database
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "bl.sqlite"
    ...     _ = create_database(path, ["http://a.xyz/1"])
    ...     with DistantDatabase(path, latency=0.001) as db:
    ...         print(db.contains("http://a.xyz/1"), db.contains_many(["x", "http://a.xyz/1"]).tolist())
    ...         print(db.statements, f"{db.waited:.3f} s")
    True [False, True]
    2 0.002 s
    """

    def __init__(self, path, latency: float = 0.001):
        self.latency = latency  # checked before a connection is opened
        self.waited = 0.0
        super().__init__(path)

    @property
    def latency(self) -> float:
        """Seconds each round trip waits before SQLite answers (0 to 1)."""
        return self._latency

    @latency.setter
    def latency(self, seconds: float) -> None:
        if not is_number(seconds) or not 0 <= seconds <= 1:
            raise ValueError(f"latency must be a number of seconds from 0 to 1, got {seconds!r}")
        self._latency = float(seconds)

    def _round_trip(self) -> None:
        wait(self._latency)
        self.waited += self._latency

    def contains(self, url: str) -> bool:
        """Whether ``url`` is blacklisted: one round trip, then one indexed SELECT."""
        self._round_trip()
        return super().contains(url)

    def contains_many(self, urls):
        """Many URLs in one round trip and one SELECT (none for no URLs; see the base class)."""
        if not isinstance(urls, (str, bytes)):
            urls = urls if isinstance(urls, list) else list(urls)
            if urls:
                self._round_trip()
        return super().contains_many(urls)

    def __repr__(self) -> str:
        return f"DistantDatabase({str(self.path)!r}, latency={self._latency})"
