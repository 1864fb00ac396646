"""The blacklist cache of article 2: the filter's "no" is final, its "maybe" asks SQLite.

Whatever the filter, every answer must be exactly the database's; the counts
must add up, and the database must be asked only about the filter's maybes.
"""

import hashlib
import sqlite3

import pytest

from bloomedu import BloomFilter
from bloomedu.services.blacklist import BlacklistCache, BlacklistDatabase, LookupStats, create_database
from bloomedu.workloads.urls import malicious_urls, safe_urls, traffic_mix

BAD = malicious_urls(3000, seed=21)
GOOD = safe_urls(20_000, seed=21)


@pytest.fixture(scope="module")
def db_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("blacklist") / "blacklist.sqlite"
    assert create_database(path, BAD) == len(BAD)
    return path


@pytest.fixture(scope="module")
def visits():
    urls, _ = traffic_mix(6000, BAD, GOOD, malicious_share=0.3, seed=4)
    return urls + ["http://città.xyz/è-" + str(i) for i in range(3)] + [BAD[0], BAD[0]]


@pytest.fixture
def tiny(db_path):
    """A cache whose filter is far too small: most of its maybes are false positives."""
    with BlacklistCache(db_path, bloom=BloomFilter(num_bits=64, num_hashes=2)) as cache:
        yield cache


def truth(urls):
    blacklist = set(BAD)
    return [url in blacklist for url in urls]


# --- the database -----------------------------------------------------------------
def test_database_answers_and_counts(db_path, visits):
    with BlacklistDatabase(db_path) as db:
        assert len(db) == len(BAD)
        assert [db.contains(url) for url in visits] == truth(visits)
        assert (db.queries, db.statements) == (len(visits), len(visits))
        assert db.contains_many(visits).tolist() == truth(visits)
        assert (db.queries, db.statements) == (2 * len(visits), len(visits) + 1)
        assert sorted(url for chunk in db.iter_urls(chunk_size=1000) for url in chunk) \
            == sorted(BAD)


def test_create_database_keeps_distinct_urls_and_refuses_to_overwrite(tmp_path):
    path = tmp_path / "dup.sqlite"
    assert create_database(path, iter(["b", "a", "b", "c", "a"])) == 3
    with pytest.raises(FileExistsError, match="overwrite=True"):
        create_database(path, ["x"])
    assert create_database(path, ["x", "y"], overwrite=True) == 2
    with BlacklistDatabase(path) as db:
        assert len(db) == 2 and db.contains("x") and not db.contains("a")


def test_create_database_rejects_non_str_and_leaves_no_file(tmp_path):
    path = tmp_path / "bad.sqlite"
    with pytest.raises(TypeError, match=r"urls\[2\] is bytes"):
        create_database(path, ["a", "b", b"c"])
    with pytest.raises(TypeError, match="urls must be an iterable of str"):
        create_database(path, "http://a.xyz/1")
    with pytest.raises(TypeError, match="path must be a str or os.PathLike"):
        create_database(3, ["a"])
    with pytest.raises(FileNotFoundError, match="does not exist"):
        create_database(tmp_path / "no" / "such.sqlite", ["a"])
    assert list(tmp_path.iterdir()) == []


def test_opening_a_missing_or_foreign_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="create_database"):
        BlacklistDatabase(tmp_path / "missing.sqlite")
    with pytest.raises(FileNotFoundError, match="no blacklist database"):
        BlacklistCache(tmp_path / "missing.sqlite")
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(ValueError, match="is not a blacklist database"):
        BlacklistDatabase(junk)
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE customers (name TEXT)")
    connection.close()
    with pytest.raises(ValueError, match="is not a blacklist database"):
        BlacklistDatabase(other)


def test_lookups_never_change_the_database_file(db_path, visits):
    before = hashlib.sha256(db_path.read_bytes()).hexdigest()
    with BlacklistCache(db_path, fpp=0.05) as cache:
        cache.is_blacklisted_many(visits)
        [cache.is_blacklisted(url) for url in visits[:500]]
    assert hashlib.sha256(db_path.read_bytes()).hexdigest() == before


def test_closing_closes_the_connection(db_path):
    with BlacklistCache(db_path) as cache:
        assert cache.is_blacklisted(BAD[5])
    with pytest.raises(sqlite3.ProgrammingError):
        cache.database.contains(BAD[5])
    with BlacklistDatabase(db_path) as db:
        with BlacklistCache(db) as borrowing:  # a database passed in stays open
            assert borrowing.is_blacklisted(BAD[6])
        assert db.contains(BAD[6])


# --- the cache: answers -------------------------------------------------------------
def test_tiny_filter_many_false_positives_answers_still_exact(tiny, visits):
    answers = [tiny.is_blacklisted(url) for url in visits]
    assert answers == truth(visits)
    stats = tiny.stats
    assert stats.false_positives > 1000  # the filter really was fooled, often
    assert stats.blacklisted == sum(truth(visits))


def test_bulk_equals_per_key_answers_and_counts(db_path, visits):
    with BlacklistCache(db_path, bloom=BloomFilter(256, 2)) as one, \
            BlacklistCache(db_path, bloom=BloomFilter(256, 2)) as bulk:
        per_key = [one.is_blacklisted(url) for url in visits]
        together = bulk.is_blacklisted_many(visits)
        assert together.dtype == bool and together.tolist() == per_key == truth(visits)
        assert one.stats.false_positives > 100
        keep = ("lookups", "filter_rejections", "database_queries", "blacklisted",
                "false_positives")
        assert [getattr(bulk.stats, k) for k in keep] == [getattr(one.stats, k) for k in keep]
        assert bulk.stats.sql_statements == 1
        assert one.stats.sql_statements == one.stats.database_queries


def test_no_blacklisted_url_is_ever_missed(db_path):
    with BlacklistCache(db_path, fpp=0.01) as cache:
        assert cache.is_blacklisted_many(BAD).all()
        assert all(cache.is_blacklisted(url) for url in BAD[:300])
        assert cache.stats.false_positives == 0


def test_create_gives_the_same_filter_as_reading_the_database(tmp_path, db_path):
    with BlacklistCache.create(tmp_path / "again.sqlite", BAD, fpp=0.02) as made, \
            BlacklistCache(db_path, fpp=0.02) as read:
        assert (made.bloom.num_bits, made.bloom.num_hashes) == \
            (read.bloom.num_bits, read.bloom.num_hashes)
        assert made.bloom.bits == read.bloom.bits
        assert made.is_blacklisted_many(GOOD[:2000]).tolist() == [False] * 2000


def test_empty_blacklist(tmp_path):
    with BlacklistCache.create(tmp_path / "empty.sqlite", []) as cache:
        assert len(cache.database) == 0
        assert cache.is_blacklisted_many(GOOD[:100]).sum() == 0
        assert not cache.is_blacklisted(GOOD[0])
        assert cache.is_blacklisted_many([]).shape == (0,)
        assert cache.stats.lookups == 101


# --- the cache: counts ----------------------------------------------------------------
class Spy(BlacklistDatabase):
    """A database that remembers every URL it was asked about."""

    asked: list

    def contains(self, url):
        self.asked.append(url)
        return super().contains(url)

    def contains_many(self, urls):
        self.asked.extend(urls)
        return super().contains_many(urls)


@pytest.mark.parametrize("bulk", [False, True])
def test_the_database_is_asked_only_about_maybes(db_path, visits, bulk):
    with Spy(db_path) as spy:
        spy.asked = []
        cache = BlacklistCache(spy, bloom=BloomFilter(4096, 3))
        if bulk:
            cache.is_blacklisted_many(visits)
        else:
            [cache.is_blacklisted(url) for url in visits]
        maybes = [url for url in visits if url in cache.bloom]
        assert spy.asked == maybes
        stats = cache.stats
        assert stats.lookups == stats.filter_rejections + stats.database_queries == len(visits)
        assert stats.database_queries == stats.blacklisted + stats.false_positives \
            == len(maybes) == spy.queries
        assert 0 < stats.false_positives and 0 < stats.filter_rejections


def test_counts_accumulate_and_reset(tiny, visits):
    tiny.is_blacklisted_many(visits[:100])
    tiny.is_blacklisted(visits[100])
    assert tiny.stats.lookups == 101
    tiny.reset_stats()
    assert tiny.stats == LookupStats()
    assert tiny.stats.saved_share == 0.0


def test_a_right_sized_filter_keeps_false_positives_near_p(db_path):
    p = 0.01
    with BlacklistCache(db_path, fpp=p) as cache:
        cache.is_blacklisted_many(GOOD)  # no safe URL is blacklisted
        stats = cache.stats
    expected = len(GOOD) * p
    sd = (len(GOOD) * p * (1 - p)) ** 0.5
    assert abs(stats.false_positives - expected) < 5 * sd
    assert stats.blacklisted == 0
    assert stats.saved_share == stats.filter_rejections / len(GOOD) > 0.98


# --- bad input --------------------------------------------------------------------------
@pytest.mark.parametrize("url", [b"http://a.xyz/1", None, 3])
def test_non_str_url_is_a_type_error(tiny, url):
    with pytest.raises(TypeError, match="url must be str"):
        tiny.is_blacklisted(url)
    with pytest.raises(TypeError, match="url must be str"):
        tiny.database.contains(url)
    assert tiny.stats == LookupStats()


def test_bad_bulk_input_is_a_type_error_and_counts_nothing(tiny):
    with pytest.raises(TypeError, match="urls must be an iterable of str"):
        tiny.is_blacklisted_many("http://a.xyz/1")
    with pytest.raises(TypeError, match=r"urls\[1\] is NoneType"):
        tiny.is_blacklisted_many([BAD[0], None])
    assert tiny.stats == LookupStats()


def test_bad_constructor_arguments(db_path):
    with pytest.raises(TypeError, match="database must be a BlacklistDatabase or a file path"):
        BlacklistCache(42)
    with pytest.raises(TypeError, match="bloom must be a BloomFilter or None"):
        BlacklistCache(db_path, bloom={"a"})
    with pytest.raises(ValueError, match="fpp must be a number strictly between 0 and 1"):
        BlacklistCache(db_path, fpp=1.5)
    with pytest.raises(ValueError, match="chunk_size must be a positive int"):
        with BlacklistDatabase(db_path) as db:
            next(db.iter_urls(chunk_size=0))


def test_bad_fpp_in_create_writes_nothing(tmp_path):
    with pytest.raises(ValueError, match="fpp"):
        BlacklistCache.create(tmp_path / "x.sqlite", ["a"], fpp=0.0)
    assert list(tmp_path.iterdir()) == []


def test_stats_shares_add_up():
    stats = LookupStats(lookups=8, filter_rejections=6, database_queries=2, blacklisted=1,
                        false_positives=1, sql_statements=2)
    assert stats.queries_saved == 6 and stats.saved_share == pytest.approx(0.75)


# --- a database made elsewhere must compare URLs byte for byte ---------------------------
def made_elsewhere(tmp_path, *statements, urls=("http://a.xyz/1", "http://b.top/2")):
    """A database written by someone else's SQL; each row goes in through `url` only."""
    path = tmp_path / "elsewhere.sqlite"
    connection = sqlite3.connect(path)
    for statement in statements:
        connection.execute(statement)
    if connection.execute("SELECT type FROM sqlite_master WHERE name = 'blacklist' COLLATE NOCASE"
                          ).fetchone() == ("table",) and urls:
        connection.executemany("INSERT INTO blacklist (url) VALUES (?)", [(url,) for url in urls])
    connection.commit()
    connection.close()
    return path


@pytest.mark.parametrize("statements, message", [
    (["CREATE TABLE blacklist (url TEXT COLLATE NOCASE PRIMARY KEY)"], "finds 'http://case.example/'"),
    (["CREATE TABLE blacklist (url TEXT COLLATE RTRIM)"], "finds 'http://space.example/'"),
    (["CREATE TABLE blacklist (url NUMERIC)"], r"declared 'NUMERIC'.*turns '1\.0' into 1"),
    (["CREATE TABLE blacklist (url INTEGER)"], "declared 'INTEGER'"),
    (["CREATE TABLE blacklist (url REAL UNIQUE)"], "declared 'REAL'"),
    (["CREATE TABLE blacklist (url INTEGER PRIMARY KEY)"], "cannot check how blacklist.url compares"),
    (["CREATE TABLE urls (url TEXT)", "CREATE VIEW blacklist AS SELECT url FROM urls"],
     "blacklist is a view, not a table"),
    (["CREATE TABLE urls (url TEXT)"], "no such table: blacklist"),
    (["CREATE TABLE blacklist (link TEXT, url_hash TEXT)"], "no such column: url"),
])
def test_a_schema_that_is_not_byte_equality_is_refused(tmp_path, statements, message):
    path = made_elsewhere(tmp_path, *statements, urls=())
    with pytest.raises(ValueError, match=message):
        BlacklistCache(path)
    if "no such" not in message:
        with BlacklistDatabase(path) as db, pytest.raises(ValueError, match=message):
            BlacklistCache(db)


def test_nocase_would_have_answered_differently(tmp_path):
    path = made_elsewhere(tmp_path, "CREATE TABLE blacklist (url TEXT COLLATE NOCASE PRIMARY KEY)")
    with BlacklistDatabase(path) as db:  # the database alone answers by its own rules
        assert db.contains("HTTP://A.XYZ/1")
        with pytest.raises(ValueError, match="COLLATE NOCASE"):
            BlacklistCache(db)


def test_values_that_are_not_text_are_refused(tmp_path):
    path = made_elsewhere(tmp_path, "CREATE TABLE blacklist (url)")  # no affinity: stored as given
    connection = sqlite3.connect(path)
    connection.execute("INSERT INTO blacklist (url) VALUES (x'6869')")
    connection.commit()
    connection.close()
    with pytest.raises(ValueError, match="holds a bytes in blacklist.url"):
        BlacklistCache(path)


@pytest.mark.parametrize("statements", [
    ["CREATE TABLE blacklist (id INTEGER PRIMARY KEY, url VARCHAR(2048) NOT NULL UNIQUE, "
     "added TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP, hits INT NOT NULL DEFAULT 0 CHECK (hits >= 0))"],
    ["CREATE TABLE BlackList (URL text, note BLOB)"],
    ["CREATE TABLE blacklist (url)"],
    ["CREATE TABLE blacklist (url TEXT COLLATE BINARY PRIMARY KEY) WITHOUT ROWID"],
])
def test_a_byte_equality_schema_made_elsewhere_is_accepted(tmp_path, statements):
    path = made_elsewhere(tmp_path, *statements)
    with BlacklistCache(path, fpp=0.01) as cache:
        assert cache.is_blacklisted("http://a.xyz/1") and not cache.is_blacklisted("HTTP://A.XYZ/1")
        assert cache.is_blacklisted_many(["http://b.top/2", "http://b.top/2 "]).tolist() \
            == [True, False]
