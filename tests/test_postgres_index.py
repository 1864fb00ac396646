"""bloomedu.compat.postgres.BloomIndex without a server: recorded signatures, the options' rules,
the query's signature and the candidates, and the page reader on hand-made pages.

The signatures of ``tests/data/postgres_vectors.json`` were read from a real PostgreSQL 15's
index pages (``tools/postgres_vectors.py``); ``tests/test_postgres_server.py`` compares with a
running server on other rows and options.
"""

import json
import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bloomedu.compat.postgres import BloomIndex, column_hash
from bloomedu.compat.postgres_pages import (BLOOM_MAGIC, PAGE_SIZE, page_flags, read_index,
                                            read_options, read_tuples)

ROOT = Path(__file__).resolve().parent.parent
VECTORS = json.loads((ROOT / "tests" / "data" / "postgres_vectors.json").read_text(encoding="utf-8"))

texts = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=30)
int4s = st.integers(-2 ** 31, 2 ** 31 - 1)
rows = st.tuples(st.none() | texts, st.none() | int4s)


@pytest.mark.parametrize("vector", VECTORS["indexes"], ids=lambda v: f"length={v['length']},{v['col_bits']}")
def test_signatures_are_the_servers(vector):
    index = BloomIndex(vector["length"], vector["col_bits"])
    assert [list(index.signature(row)) for row in vector["rows"]] == vector["signatures"]


def test_a_stuck_generator_sets_bit_15_of_word_0_as_the_server_does():
    """188470658 in the first column: hashint4 ^ 16806 = 0xFFFFFFFF, so every draw is -1."""
    index = BloomIndex(80, (2, 2, 2))
    assert index.value_bits(0, 188470658) == [-1, -1]
    assert index.signature((188470658, None, None)) == (1 << 15, 0, 0, 0, 0)
    recorded = VECTORS["indexes"][0]
    assert recorded["rows"][2] == [188470658, None, None]
    assert recorded["signatures"][2] == [1 << 15, 0, 0, 0, 0]


@given(rows)
def test_a_row_sets_at_most_its_columns_bits_and_nulls_set_none(row):
    index = BloomIndex(80, (3, 2))
    signature = index.signature(row)
    assert len(signature) == 5 and all(0 <= word < 2 ** 16 for word in signature)
    ones = sum(bin(word).count("1") for word in signature)
    assert ones <= sum(bits for bits, value in zip((3, 2), row) if value is not None)
    if row == (None, None):
        assert ones == 0


@given(st.integers(1, 4096))
def test_length_is_rounded_up_to_whole_words(length):
    index = BloomIndex(length, (2, 2))
    assert index.num_words == (length + 15) // 16 and index.num_bits == 16 * index.num_words
    assert index.signature(("a", 1)) == BloomIndex(16 * index.num_words, (2, 2)).signature(("a", 1))


@given(st.lists(rows, max_size=60), rows, st.sampled_from([{0}, {1}, {0, 1}]))
def test_candidates_hold_every_matching_row_and_only_rows_covering_the_query(table, probe, columns):
    index = BloomIndex(32, (2, 1))
    query = {column: probe[column] for column in columns}
    found = index.candidates(table, query)
    wanted = index.query_signature(query)
    if wanted is None:      # a NULL key: the scan finds nothing
        assert found == [] and None in query.values()
        return
    matching = [i for i, row in enumerate(table) if all(row[c] == v for c, v in query.items())]
    assert set(matching) <= set(found)
    assert found == [i for i, row in enumerate(table) if BloomIndex.covers(index.signature(row), wanted)]


def test_a_querys_signature_is_a_rows_with_the_other_columns_null():
    index = BloomIndex(64, (2, 3))
    assert index.query_signature({0: "alice", 1: 42}) == index.signature(("alice", 42))
    assert index.query_signature({1: 42}) == index.signature((None, 42))
    assert index.query_signature({}) == (0,) * 4          # no key: every row is a candidate
    assert index.query_signature({0: "alice", 1: None}) is None


def test_the_same_value_sets_other_bits_in_another_column():
    index = BloomIndex(4096, (4, 4))
    assert index.signature((5, None)) != index.signature((None, 5))
    assert column_hash("5") != column_hash(5)


def test_options_and_repr():
    index = BloomIndex(100, (1, 4095, 3))
    assert index.options() == "length=100, col1=1, col2=4095, col3=3"
    assert repr(index) == "BloomIndex(length=100, col_bits=(1, 4095, 3))"
    assert index.num_columns == 3 and index.num_words == 7


@pytest.mark.parametrize("arguments, error, words", [
    ((0, (2,)), ValueError, "length must be an int in 1..4096, got 0"),
    ((4097, (2,)), ValueError, "length must be an int in 1..4096, got 4097"),
    ((80.0, (2,)), TypeError, "length must be an int"),
    ((True, (2,)), TypeError, "length must be an int"),
    ((80, ()), ValueError, "col_bits must name 1..32 columns"),
    ((80, (2,) * 33), ValueError, "col_bits must name 1..32 columns .* got 33"),
    ((80, (2, 0)), ValueError, r"col_bits\[1\] must be an int in 1..4095, got 0"),
    ((80, (4096,)), ValueError, r"col_bits\[0\] must be an int in 1..4095, got 4096"),
    ((80, 2), TypeError, "col_bits must be a sequence of ints"),
    ((80, "22"), TypeError, "col_bits must be a sequence of ints"),
    ((80, (2.5,)), TypeError, r"col_bits\[0\] must be an int"),
])
def test_bad_options_are_refused_naming_the_argument(arguments, error, words):
    with pytest.raises(error, match=words):
        BloomIndex(*arguments)


def test_the_limits_themselves_are_accepted():
    assert BloomIndex(4096, (4095,) + (1,) * 31).num_words == 256
    assert BloomIndex(1, (1,)).num_bits == 16


@pytest.mark.parametrize("call, error, words", [
    (lambda index: index.signature(("a",)), ValueError, "row must have 2 values"),
    (lambda index: index.signature("ab"), TypeError, "row must be a sequence"),
    (lambda index: index.signature((b"a", 1)), TypeError, "a column value must be a str"),
    (lambda index: index.signature(("a", 2 ** 31)), ValueError, "value must be an int4"),
    (lambda index: index.signature(("a\0", 1)), ValueError, "NUL"),
    (lambda index: index.signature((1.5, 1)), TypeError, "not float"),
    (lambda index: index.query_signature([("a", 1)]), TypeError, "query must be a mapping"),
    (lambda index: index.query_signature({2: 1}), ValueError, "a query's column must be an int in 0..1"),
    (lambda index: index.candidates([("a", 1), ("b",)], {0: "a"}), ValueError, r"rows\[1\] must have 2"),
    (lambda index: index.value_bits(-1, "a"), ValueError, "column must be an int in 0..1"),
])
def test_bad_rows_and_queries_are_refused_naming_the_argument(call, error, words):
    with pytest.raises(error, match=words):
        call(BloomIndex(80, (2, 2)))


# --- the page reader, on pages made here as bloom.h lays them out --------------------------
def _page(flags: int, tuples: list[bytes] = (), body: bytes = b"") -> bytes:
    page = bytearray(PAGE_SIZE)
    page[16:18] = (PAGE_SIZE - 8).to_bytes(2, "little")             # pd_special
    page[PAGE_SIZE - 8:] = struct.pack("<HHHH", len(tuples), flags, 0, 0xFF83)
    data = body or b"".join(tuples)
    page[24:24 + len(data)] = data
    return bytes(page)


def test_pages_are_read_as_bloom_h_lays_them_out():
    index = BloomIndex(40, (2, 1))
    meta = _page(1, body=struct.pack("<IHHii", BLOOM_MAGIC, 0, 0, 0, index.num_words)
                 + struct.pack("<32i", 2, 1, *([2] * 30)))
    rows = [("a", 1), (None, -7), ("città", None)]
    tuples = [struct.pack("<HHH", block >> 16, block & 0xFFFF, line)
              + struct.pack(f"<{index.num_words}H", *index.signature(row))
              for (block, line), row in zip([(0, 1), (70000, 2), (3, 65535)], rows)]
    words, bits, found = read_index([meta, _page(0, tuples), _page(2, tuples)])  # 2: deleted
    assert (words, bits[:3]) == (3, (2, 1, 2))
    assert found == [((0, 1), index.signature(rows[0])), ((70000, 2), index.signature(rows[1])),
                     ((3, 65535), index.signature(rows[2]))]
    assert page_flags(meta) == (0, 1) and read_tuples(meta, 3) == []


@pytest.mark.parametrize("call, error, words", [
    (lambda: page_flags(b"\0" * 100), ValueError, "page must be 8192 bytes long, got 100"),
    (lambda: page_flags("page"), TypeError, "page must be bytes"),
    (lambda: page_flags(bytes(PAGE_SIZE)), ValueError, "not a bloom index page"),
    (lambda: read_options(_page(0)), ValueError, "not a bloom metapage"),
    (lambda: read_index([]), ValueError, "pages must hold at least the metapage"),
])
def test_what_is_not_a_bloom_page_is_refused(call, error, words):
    with pytest.raises(error, match=words):
        call()
