"""bloomedu against the peer Python Bloom-filter libraries (``make bench``).

Three workloads from the lesson-06 issue, on the same keys for every library:

- W1 blacklist: a filter for 1,000,000 expected items at p = 0.001, the
  1,000,000 malicious URLs of :func:`bloomedu.workloads.urls.malicious_urls` inserted,
  1,000,000 safe URLs (never inserted) queried;
- W2 clicks: 1,000,000 expected items at p = 0.01, 1,000,000 uint64 keys from a
  seeded generator inserted and 1,000,000 others queried;
- W3 sweep: lesson 07's grid of 240 filters (m in 2^14, 2^16, 2^18; k in 1..8;
  10 values of n from m/64 to m/2), 20,000 absent queries each, on every
  library that can set m and k directly.

Every run is a fresh process (:mod:`benchmarks.run_one`); the libraries take
turns (A B C, B C A, ...) for several rounds and the best run of each is
compared, because this shared machine is noisy.  :mod:`benchmarks.__main__`
prints the tables and writes ``benchmarks/results/latest.md``.
"""
