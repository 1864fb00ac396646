"""The simulated network: each round trip really waits its latency, and only the filter's maybes pay it."""

import time

import pytest

from bloomedu.services.blacklist import BlacklistCache, create_database
from bloomedu.teaching.latency import DistantDatabase, wait

BLACKLIST = [f"http://bad-{i}.xyz/" for i in range(200)]


@pytest.fixture
def path(tmp_path):
    create_database(tmp_path / "bl.sqlite", BLACKLIST)
    return tmp_path / "bl.sqlite"


@pytest.mark.parametrize("seconds", [0.0, 0.00005, 0.001, 0.003])
def test_a_wait_is_at_least_as_long_as_asked(seconds):
    start = time.perf_counter()
    wait(seconds)
    assert time.perf_counter() - start >= seconds


def test_every_round_trip_waits_and_is_counted(path):
    with DistantDatabase(path, latency=0.002) as db:
        start = time.perf_counter()
        assert db.contains(BLACKLIST[0]) and not db.contains("https://ok.org/")
        assert db.contains_many(["https://ok.org/", BLACKLIST[1]]).tolist() == [False, True]
        assert db.contains_many([]).tolist() == []  # no URL, no round trip
        elapsed = time.perf_counter() - start
        assert db.statements == 3 and db.queries == 4
        assert db.waited == pytest.approx(0.006) and elapsed >= 0.006


def test_the_cache_pays_the_latency_only_for_its_maybes(path):
    database = DistantDatabase(path, latency=0.0005)
    cache = BlacklistCache(database, fpp=0.01)
    visits = BLACKLIST[:20] + [f"https://ok-{i}.org/" for i in range(500)]
    answers = [cache.is_blacklisted(url) for url in visits]
    assert answers == [url in BLACKLIST for url in visits]
    assert database.statements == cache.stats.database_queries < 40
    assert database.waited == pytest.approx(0.0005 * cache.stats.database_queries)
    database.close()


@pytest.mark.parametrize("latency", [-0.001, 2, "1ms", None])
def test_a_bad_latency_gets_a_clear_error(path, latency):
    with pytest.raises(ValueError, match="latency must be a number of seconds from 0 to 1"):
        DistantDatabase(path, latency=latency)
