"""Record what a real PostgreSQL computes, for the plain tests of ``tests/test_postgres_hash.py``.

    python tools/postgres_vectors.py tests/data     # needs PostgreSQL with contrib (make postgres)

Starts a throwaway cluster (:mod:`bloomedu.services.postgres_server`) and writes
``postgres_vectors.json``: ``SELECT hashtext(t)`` for texts of every length 0..40 and
non-ASCII ones, ``SELECT hashint4(i)`` for the int4 edges and others, and the signatures of a
bloom index (read from its pages with pageinspect) for a few rows under a few options, among
them the int4 values that leave the index's generator stuck at -1.  The tests need no server:
they read this file.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path


def texts() -> list[str]:
    """Every tail length of lookup3 (0..11) over one to three 12-byte blocks, and non-ASCII."""
    ascii_ = [("abcdefghijklmnopqrstuvwxyz0123456789ABCD")[:n] for n in range(41)]
    return ascii_ + ["città", "日本語テキスト", "😀", "Ünïcödé ✓", "it's", "back\\slash", " ",
                     "\t\n", "\u00ff" * 7, "\U0010FFFF", "é" * 13]


def ints() -> list[int]:
    rng = random.Random(31)
    return [0, 1, -1, 2, -2, 42, 255, 256, 65535, 65536, 2 ** 31 - 1, -2 ** 31, -2 ** 31 + 1] + \
        [rng.randrange(-2 ** 31, 2 ** 31) for _ in range(20)]


# Options and rows of the recorded indexes (columns int4, text, int4 each).  The int4s
# 188470658, 277430710 and 565763808 in the first column leave the generator stuck at -1
# (hashint4 ^ the column's first draw, 16806, is 0xFFFFFFFF or 0x80000001).
INDEXES = [(80, (2, 2, 2)), (17, (1, 5, 3)), (1000, (12, 7, 1))]
ROWS = [(1, "a", -1), (None, None, None), (188470658, None, None), (277430710, "", 163734319),
        (565763808, "città", 0), (-2 ** 31, "😀 emoji", 2 ** 31 - 1), (None, "x" * 13, None),
        (7, None, 163734319)]


def main(directory: str) -> None:
    from bloomedu.compat.postgres import BloomIndex
    from bloomedu.compat.postgres_pages import read_index
    from bloomedu.services.postgres_server import PostgresServer, sql_literal

    with PostgresServer() as server:
        version = server.version()
        hashtext = [{"text": t, "hashtext": int(server.sql(f"SELECT hashtext({sql_literal(t)})")[0][0])}
                    for t in texts()]
        hashint4 = [{"int4": i, "hashint4": int(server.sql(f"SELECT hashint4({i})")[0][0])}
                    for i in ints()]
        indexes = []
        values = ", ".join("(" + ", ".join(map(sql_literal, row)) + ")" for row in ROWS)
        for length, col_bits in INDEXES:
            options = BloomIndex(length, col_bits).options()
            server.sql("DROP TABLE IF EXISTS t; CREATE TABLE t (i int4, a text, j int4); "
                       f"INSERT INTO t VALUES {values}; "
                       f"CREATE INDEX t_bloom ON t USING bloom (i, a, j) WITH ({options})")
            _, _, tuples = read_index(server.raw_pages("t_bloom"))
            assert [line for (_, line), _ in tuples] == list(range(1, len(ROWS) + 1))
            indexes.append({"length": length, "col_bits": list(col_bits),
                            "rows": [list(row) for row in ROWS],
                            "signatures": [list(words) for _, words in tuples]})
    data = {"description": "Recorded from a real PostgreSQL by tools/postgres_vectors.py: "
                           "SELECT hashtext(...), hashint4(...), and the signatures of bloom "
                           "indexes ON t (i int4, a text, j int4) read from their pages "
                           "(pageinspect's get_raw_page), in row order",
            "server_version": version, "hashtext": hashtext, "hashint4": hashint4,
            "indexes": indexes}
    (Path(directory) / "postgres_vectors.json").write_text(
        json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/data")
