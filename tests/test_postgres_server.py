"""BloomIndex against a real PostgreSQL: every index tuple's signature, read from the pages, and
the rows each scan hands to the recheck.

One throwaway cluster for the module (bloomedu.services.postgres_server: initdb in a temporary
folder, a Unix socket only, as an unprivileged user when we are root).  conftest.py marks these
tests ``postgres`` and ``full``; under ``make test`` (BLOOMEDU_REQUIRE_ENGINES=1) a cluster that
cannot start fails them, elsewhere they skip and say what is missing.
"""

import json
import os
import random
import subprocess
import sys

import pytest

from bloomedu.compat.postgres import BloomIndex
from bloomedu.compat.postgres_pages import read_index
from bloomedu.services.postgres_server import (PostgresServer, PostgresUnavailable, main,
                                               required, sql_literal)


def start_cluster(**options) -> PostgresServer:
    """A cluster of our own, or a failure (under `make test`) or skip that says why there is none."""
    try:
        return PostgresServer(**options)
    except PostgresUnavailable as missing:
        if required():
            pytest.fail(f"no PostgreSQL under `make test`: {missing}")
        pytest.skip(str(missing))


@pytest.fixture(scope="module")
def server():
    cluster = start_cluster()
    yield cluster
    cluster.close()


def random_text(rng: random.Random) -> str:
    """Empty, ASCII with quotes and backslashes, Latin, CJK, emoji: 0..40 code points."""
    alphabets = ["abcxyz'\\\" %_", "àèìòùçßñ€", "日本語テキスト中文", "😀🎉🚀", "\t\n\r",
                 "\U0004fffe\U0010ffff\ufffe"]   # noncharacters, which psql does not print
    alphabet = "".join(rng.sample(alphabets, rng.randint(1, len(alphabets))))
    return "".join(rng.choice(alphabet) for _ in range(rng.choice([0, 1, 3, 11, 12, 13, 40])))


def random_rows(count: int, seed: int) -> list[tuple]:
    """(int4, text, int4) rows: negative and edge ints, every kind of text, NULLs in each column,
    and the first-column int4s that leave the index's generator stuck at -1."""
    rng = random.Random(seed)
    edges = [0, -1, 1, 2 ** 31 - 1, -2 ** 31, 188470658, 277430710, 565763808, -2130103132]
    rows = []
    for _ in range(count):
        i = rng.choice(edges) if rng.random() < 0.2 else rng.randint(-2 ** 31, 2 ** 31 - 1)
        j = rng.randint(-1000, 1000)
        row = [i, random_text(rng), j]
        for column in range(3):
            if rng.random() < 0.1:
                row[column] = None
        rows.append(tuple(row))
    return rows


def load(server, rows: list[tuple], index: BloomIndex, *, later: list[tuple] = ()) -> None:
    """Table t (i int4, a text, j int4) with ``rows``, a bloom index built over them, then
    ``later`` inserted one statement each (the index's insert path, not its build)."""
    values = ", ".join("(" + ", ".join(map(sql_literal, row)) + ")" for row in rows)
    inserts = "".join(f"INSERT INTO t VALUES ({', '.join(map(sql_literal, row))}); " for row in later)
    server.sql("DROP TABLE IF EXISTS t; CREATE TABLE t (i int4, a text, j int4); "
               f"INSERT INTO t VALUES {values}; "
               f"CREATE INDEX t_bloom ON t USING bloom (i, a, j) WITH ({index.options()}); {inserts}")


def heap_rows(server) -> dict[tuple[int, int], tuple]:
    """Every row of t by its address (block, line), as the server holds it (the text's bytes
    read as hex: psql would leave out characters it does not print)."""
    rows = server.sql("SELECT ctid, i, encode(convert_to(a, 'UTF8'), 'hex'), j FROM t")
    return {tuple(int(n) for n in ctid.strip("()").split(",")):
            (None if i is None else int(i), None if a is None else bytes.fromhex(a).decode("utf-8"),
             None if j is None else int(j))
            for ctid, i, a, j in rows}


# (options, rows): 700 rows fill two index pages of 80 bits; the longest signatures (4095
# draws of the generator for each first-column value) get fewer rows, to stay fast
OPTIONS = [(BloomIndex(80, (2, 2, 2)), 700), (BloomIndex(16, (1, 1, 1)), 700),
           (BloomIndex(50, (3, 7, 1)), 700), (BloomIndex(256, (9, 4, 30)), 400),
           (BloomIndex(4096, (4095, 17, 2)), 40)]


@pytest.mark.parametrize("index, count", OPTIONS, ids=[repr(index) for index, _ in OPTIONS])
def test_every_tuple_on_the_pages_is_bloomindex_signature(server, index, count):
    rows = random_rows(count, seed=index.length)
    later = random_rows(30, seed=index.length + 1)
    load(server, rows, index, later=later)
    pages = server.raw_pages("t_bloom")
    assert len(pages) >= 3      # the metapage and data pages, of the build and of the inserts
    words, bits, tuples = read_index(pages)
    assert (words, bits[:3]) == (index.num_words, index.col_bits)
    by_address = heap_rows(server)
    assert sorted(by_address.values(), key=repr) == sorted(rows + later, key=repr)  # text came back whole
    assert len(tuples) == len(rows) + len(later)
    assert {address for address, _ in tuples} == set(by_address)
    mismatched = [(by_address[address], words) for address, words in tuples
                  if index.signature(by_address[address]) != words]
    assert mismatched == []


def test_the_random_rows_hold_what_the_comparison_needs():
    rows = random_rows(700, seed=80)
    assert any(row[1] == "" for row in rows) and any(row[1] and not row[1].isascii() for row in rows)
    assert any(row[0] is not None and row[0] < 0 for row in rows)
    assert all(any(row[c] is None for row in rows) for c in range(3))
    assert any(row[0] == 188470658 for row in rows)
    assert BloomIndex(80, (2, 2, 2)).value_bits(0, 188470658) == [-1, -1]


def explain(server, where: str) -> dict:
    """The plan of ``SELECT * FROM t WHERE ...`` with the bloom index forced, as run."""
    out = server.sql("SET enable_seqscan = off; "
                     "EXPLAIN (ANALYZE, FORMAT JSON, TIMING OFF, SUMMARY OFF) "
                     f"SELECT * FROM t WHERE {where}")
    return json.loads(out[0][0])[0]["Plan"]


def test_the_scan_hands_the_recheck_exactly_the_candidates(server):
    index = BloomIndex(16, (1, 1, 2))        # short signatures: many false positives to count
    rows = random_rows(1000, seed=7)
    load(server, rows, index)
    by_address = heap_rows(server)
    table = list(by_address.values())
    rng = random.Random(8)
    picked = [rng.choice(table) for _ in range(12)]
    queries = [{0: row[0]} for row in picked[:4]] + [{1: row[1]} for row in picked[4:8]] \
        + [{0: row[0], 2: row[2]} for row in picked[8:]] + [{1: "absent ✗"}, {2: 5000}]
    queries = [query for query in queries if None not in query.values()]
    assert len(queries) >= 10
    names = ("i", "a", "j")
    for query in queries:
        where = " AND ".join(f"{names[c]} = {sql_literal(v)}" for c, v in query.items())
        plan = explain(server, where)
        assert plan["Node Type"] == "Bitmap Heap Scan"
        scan = plan["Plans"][0]
        assert scan["Node Type"] == "Bitmap Index Scan" and scan["Index Name"] == "t_bloom"
        candidates = index.candidates(table, query)
        matching = [row for row in table if all(row[c] == v for c, v in query.items())]
        assert scan["Actual Rows"] == len(candidates), where
        assert plan["Actual Rows"] == len(matching), where
        assert plan["Rows Removed by Index Recheck"] == len(candidates) - len(matching), where
        assert plan["Exact Heap Blocks"] == len({address[0] for address, row in by_address.items()
                                                 if row in [table[i] for i in candidates]}), where


def test_the_server_runs_unprivileged_on_a_unix_socket_only(server):
    assert server.sql("SHOW listen_addresses") == [("",)]
    assert server.sql("SHOW unix_socket_directories") == [(str(server.socket_dir),)]
    owner = os.stat(server.data_dir).st_uid
    assert owner != 0 and (os.geteuid() != 0 or owner == server.user.pw_uid)
    assert oct(os.stat(server.socket_dir).st_mode & 0o777) == "0o700"
    assert server.sql("SELECT extname FROM pg_extension WHERE extname <> 'plpgsql' ORDER BY 1") \
        == [("bloom",), ("pageinspect",)]


@pytest.mark.parametrize("length, col_bits", [(0, (2,)), (1, (2,)), (4096, (2,)), (4097, (2,)),
                                              (80, (0,)), (80, (4095,)), (80, (4096,)),
                                              (80, (1,) * 32), (80, (1,) * 33)])
def test_bloomindex_refuses_the_options_the_index_refuses(server, length, col_bits):
    try:
        index = BloomIndex(length, col_bits)
    except ValueError:
        index = None
    columns = ", ".join(f"c{i}" for i in range(len(col_bits)))
    options = ", ".join([f"length={length}"] + [f"col{i + 1}={bits}" for i, bits in enumerate(col_bits)])
    try:
        table = ", ".join(f"c{i} int4" for i in range(33))
        server.sql(f"DROP TABLE IF EXISTS bounds; CREATE TABLE bounds ({table}); "
                   f"CREATE INDEX ON bounds USING bloom ({columns}) WITH ({options})")
        accepted = True
    except RuntimeError:
        accepted = False
    assert accepted == (index is not None)


@pytest.mark.parametrize("extensions", ["bloom", ("bloom", 'x"; DROP'), (1,)])
def test_extensions_must_be_names(extensions):
    with pytest.raises(ValueError, match="extensions must be a tuple of extension names"):
        PostgresServer(extensions=extensions)


def test_sql_errors_say_what_the_server_said(server):
    with pytest.raises(TypeError, match="statements must be a str"):
        server.sql(b"SELECT 1")
    with pytest.raises(RuntimeError, match="relation \"no_such_table\" does not exist"):
        server.sql("SELECT * FROM no_such_table")
    with pytest.raises(RuntimeError, match="value 4097 out of bounds|4097"):
        server.sql("DROP TABLE IF EXISTS u; CREATE TABLE u (a int4); "
                   "CREATE INDEX ON u USING bloom (a) WITH (length=4097)")


def test_close_stops_the_server_by_pid_and_deletes_its_folder():
    cluster = start_cluster(extensions=())
    pid, folder = cluster.pid, cluster.folder
    assert pid is not None and folder.exists()
    cluster.close()
    assert cluster.pid is None and not folder.exists()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_server_nobody_closed_is_stopped_when_python_exits():
    code = ("from bloomedu.services.postgres_server import PostgresServer\n"
            "server = PostgresServer(extensions=())\n"
            "print(server.pid, server.folder)\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # this bloomedu first
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root)
    if run.returncode != 0:
        start_cluster(extensions=())     # fails or skips, saying why there is no cluster
        pytest.fail(run.stderr)
    pid, folder = run.stdout.split()
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid), 0)
    assert not os.path.exists(folder)


def test_check_says_what_it_found(server, capsys):
    assert main(["--check"]) == 0      # what `make postgres` runs
    out = capsys.readouterr().out
    assert "bloom 1.0" in out and "pageinspect" in out
    assert "on a Unix socket only" in out and "now stopped" in out


def test_check_says_what_is_missing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BLOOMEDU_POSTGRES_BIN", str(tmp_path))
    assert main(["--check"]) == 1
    assert f"BLOOMEDU_POSTGRES_BIN={tmp_path} lacks initdb, postgres, psql" in capsys.readouterr().err


def test_under_make_test_a_missing_server_fails_and_elsewhere_it_skips(tmp_path, monkeypatch):
    monkeypatch.setenv("BLOOMEDU_POSTGRES_BIN", str(tmp_path / "missing"))
    monkeypatch.setenv("BLOOMEDU_REQUIRE_ENGINES", "1")
    with pytest.raises(pytest.fail.Exception, match="no PostgreSQL under `make test`: .* lacks initdb"):
        start_cluster()
    monkeypatch.setenv("BLOOMEDU_REQUIRE_ENGINES", "")
    with pytest.raises(pytest.skip.Exception, match="lacks initdb, postgres, psql"):
        start_cluster()
