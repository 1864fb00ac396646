"""The seeded data the lessons, tests and benchmarks run on.

- :mod:`~bloomedu.workloads.clicks`: article 1's stream of ad clicks, with known double clicks,
  and :func:`~bloomedu.workloads.clicks.score` to count what a deduplicator got right.
- :mod:`~bloomedu.workloads.urls`: article 2's malicious and safe URLs (disjoint by design).

>>> from bloomedu.workloads import click_stream
>>> len(list(click_stream(100, seed=1))) >= 100
True
"""

from .clicks import Click, click_stream, score

__all__ = ["Click", "click_stream", "score"]
