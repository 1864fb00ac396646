"""pytest set-up shared by doctests, unit tests and nbval: the tiers and what runs together.

Two tiers (the README's "Tests" section): ``make check`` runs every test not marked ``full``,
in parallel; ``make test`` runs everything, in both environments.  A test is marked ``full``
here, from what it needs, so a new test lands in the right tier with no list to edit:

- ``redis``: it starts a Redis server (a test module ``tests/test_redis_*.py``, a doctest of
  ``bloomedu/services/redis_*.py``, or a test that asks for a server fixture of
  ``tests/redis_support.py``);
- ``postgres``: it starts a PostgreSQL cluster (``tests/test_postgres_server*.py``, a doctest
  of ``bloomedu/services/postgres_*.py``, or a test marked ``postgres``);
- ``site``: it asks for the ``site`` fixture (the Sphinx build of ``make html``);
- ``browser``: it drives Chromium (a test module ``tests/test_browser*.py``, or a test marked
  ``browser``); ``make test`` runs these in the newest environment only;
- ``spark``: it asks for the ``spark`` fixture (a local Spark of its test module, started by
  ``tests/spark_support.py``);
- ``slides`` and ``nbgrader`` (marked by their tests): every deck built as ``make slides`` builds
  them, and the nbgrader course graded end to end; the newest environment only (nbgrader 0.9.6
  needs JupyterLab >= 4.2).

A test that is slow for another reason says so itself with ``@pytest.mark.full``.  Both
tiers run on pytest-xdist workers with ``--dist loadfile``: a test file's tests share one
worker, so a module's fixtures (a Redis server, a JupyterLab, a stream computed once) are made
once; the site, which tests of two files read, is built once per run behind a lock (the
``site`` fixture).
"""
import importlib

import matplotlib
import pytest

matplotlib.use("Agg")  # draw off-screen

# The lessons' .py twins are notebooks in plain text: nbval runs the .ipynb, so
# --doctest-modules must not import (and so execute) the twins.
collect_ignore_glob = ["notebooks/*.py", "notebooks/*/*.py"]

# The fixtures of tests/redis_support.py that start a server (or use one that was started).
REDIS_FIXTURES = frozenset({"bloom_server", "bloom_client", "plain_server", "plain_client", "cluster"})
# The fixture of tests/spark_support.py that starts a local Spark (a JVM) for its test module.
SPARK_FIXTURES = frozenset({"spark"})


def needs(item) -> set[str]:
    """What ``item`` needs that ``make check`` does not give it: some of {"redis", "postgres",
    "site", "browser", "spark", "slides", "nbgrader"} (the last two: the decks of ``make slides``,
    real nbgrader)."""
    path, fixtures = item.path, set(getattr(item, "fixturenames", ()))
    found = set()
    if (path.name.startswith("test_redis_") or fixtures & REDIS_FIXTURES
            or (path.parent.name == "services" and path.name.startswith("redis_"))
            or item.get_closest_marker("redis")):
        found.add("redis")
    if (path.name.startswith("test_postgres_server") or item.get_closest_marker("postgres")
            or (path.parent.name == "services" and path.name.startswith("postgres_"))):
        found.add("postgres")
    if "site" in fixtures:
        found.add("site")
    if fixtures & SPARK_FIXTURES:
        found.add("spark")
    if path.name.startswith("test_browser") or item.get_closest_marker("browser"):
        found.add("browser")
    found |= {name for name in ("slides", "nbgrader") if item.get_closest_marker(name)}
    return found


# Test files that each take one worker for minutes (a browser sweeping the site, nbgrader grading
# 63 notebooks, the slides printed): run first, so the many short files fill the other worker and
# the end of the run. The first needs the site, which it builds; the second does not, so the
# other worker never waits on the build. pytest-xdist otherwise queues files by their number of
# tests, which put these 13-test files last and left one worker alone on them for minutes.
LONG_FILES_FIRST = ("test_browser_instructor.py", "test_assignments.py", "test_slides.py",
                    "test_site.py", "test_browser.py", "test_spark.py")


def pytest_configure(config):
    if hasattr(config.option, "loadscopereorder"):  # pytest-xdist >= 3.6 (the newest releases)
        config.option.loadscopereorder = False  # keep the order below


def long_first(item) -> int:
    """The rank of an item's file in :data:`LONG_FILES_FIRST` (after them: the collection's order)."""
    name = item.path.name
    return LONG_FILES_FIRST.index(name) if name in LONG_FILES_FIRST else len(LONG_FILES_FIRST)


def pytest_collection_modifyitems(config, items):
    """Mark each test with what it needs and its tier; skip the Redis and PostgreSQL doctests
    where no server can be had; the long files first (a stable sort: each file's tests keep
    their order)."""
    items.sort(key=long_first)
    for item in items:
        found = needs(item)
        for name in sorted(found):
            item.add_marker(getattr(pytest.mark, name))
        if found:
            item.add_marker(pytest.mark.full)
    for prefix, support in SERVER_DOCTESTS.items():
        skip_server_doctests_without_a_server(items, prefix, support)


# The services whose doctests start a server: their file names' prefix, and the module that
# says whether one can be had (unavailable_reason) and whether `make test` demands it (required).
SERVER_DOCTESTS = {"redis_": "bloomedu.services.redis_install",         # BLOOMEDU_REQUIRE_REDIS
                   "postgres_": "bloomedu.services.postgres_server"}   # BLOOMEDU_REQUIRE_ENGINES


def skip_server_doctests_without_a_server(items, prefix: str, support: str) -> None:
    """Doctests of ``bloomedu/services/{prefix}*.py`` start real servers: without one (and outside
    `make test`, which sets BLOOMEDU_REQUIRE_REDIS=1 and BLOOMEDU_REQUIRE_ENGINES=1 and so fails
    instead) they skip, saying what is missing."""
    doctests = [item for item in items if type(item).__name__ == "DoctestItem"
                and item.path.name.startswith(prefix) and item.path.parent.name == "services"]
    if not doctests:
        return
    module = importlib.import_module(support)
    reason = module.unavailable_reason()
    if reason and not module.required():
        for item in doctests:
            item.add_marker(pytest.mark.skip(reason=reason))
