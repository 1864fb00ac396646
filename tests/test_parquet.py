"""Parquet's split-block Bloom filters, bit for bit, against a file pyarrow 26 wrote.

``tests/data/parquet_bloom.parquet`` was written by pyarrow (``tools/parquet_vectors.py``):
an INT64 and a string column, each with its Bloom filter.  The test reads the filters'
Thrift headers and bitsets straight from the file's bytes (no pyarrow needed) and
builds the same filters with ``ParquetBloomFilter``: the bytes must be identical.
XXH64 is pinned to values the ``xxhash`` package computed.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from bloomedu.compat.parquet import ParquetBloomFilter, xxh64, xxh64_uint64
from bloomedu.variants import BlockedBloomFilter
from tools.parquet_vectors import vector_keys

DATA = Path(__file__).parent / "data"


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if byte < 0x80:
            return value, at


def bloom_filters(data: bytes) -> list[bytes]:
    """Every Bloom filter bitset in a Parquet file, in file order.

    A filter is a Thrift compact BloomFilterHeader, then numBytes of bitset: field 1
    (i32 numBytes, zigzag varint), then the unions BLOCK, XXHASH and UNCOMPRESSED, each
    an empty struct (bytes 1c 1c 00 00), and the header's stop byte.
    """
    unions = b"\x1c\x1c\x00\x00" * 3 + b"\x00"
    found, at = [], 0
    while (at := data.find(b"\x15", at)) >= 0:
        num_bytes, end = _varint(data, at + 1)
        num_bytes = num_bytes >> 1 ^ -(num_bytes & 1)
        if num_bytes > 0 and data[end:end + len(unions)] == unions:
            start = end + len(unions)
            found.append(data[start:start + num_bytes])
            at = start + num_bytes
        else:
            at += 1
    return found


def test_the_file_holds_two_filters_written_by_pyarrow():
    data = (DATA / "parquet_bloom.parquet").read_bytes()
    assert data[:4] == data[-4:] == b"PAR1"
    assert [len(bitset) for bitset in bloom_filters(data)] == [2048, 2048]
    assert json.loads((DATA / "xxh64_vectors.json").read_text())["writer"] == "pyarrow 26.0.1"


def test_bloomedu_builds_the_bitsets_pyarrow_wrote():
    id_bits, url_bits = bloom_filters((DATA / "parquet_bloom.parquet").read_bytes())
    ids, urls = vector_keys()
    for keys, written in ((np.array(ids, dtype=np.int64), id_bits), (urls, url_bits)):
        bulk = ParquetBloomFilter(8 * len(written))
        bulk.add_many(keys)
        assert bulk.to_parquet_bitset() == written
        one_by_one = ParquetBloomFilter(8 * len(written))
        for key in (keys.tolist() if isinstance(keys, np.ndarray) else keys):
            one_by_one.add(key)
        assert one_by_one == bulk


def test_a_filter_read_from_the_file_finds_every_value_and_refuses_most_others():
    id_bits, url_bits = bloom_filters((DATA / "parquet_bloom.parquet").read_bytes())
    ids, urls = vector_keys()
    by_id, by_url = ParquetBloomFilter.from_parquet_bitset(id_bits), \
        ParquetBloomFilter.from_parquet_bitset(url_bits)
    assert by_id.contains_many(np.array(ids, dtype=np.int64)).all()
    assert all(url in by_url for url in urls)
    others = np.arange(10 ** 12, 10 ** 12 + 20_000, dtype=np.int64)
    assert by_id.contains_many(others).mean() < 0.01  # the file was written for fpp = 0.01


def test_xxh64_is_the_xxhash_librarys():
    vectors = json.loads((DATA / "xxh64_vectors.json").read_text())["vectors"]
    assert len(vectors) >= 9
    for vector in vectors:  # every code path: lengths 0, 1, 3, 16, 31, 32, 100
        assert xxh64(bytes.fromhex(vector["hex"])) == vector["xxh64"]


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.int32, np.uint8])
def test_the_vectorised_hash_is_xxh64_of_the_8_byte_value(dtype):
    info = np.iinfo(dtype)
    keys = np.random.default_rng(3).integers(info.min, info.max, 300, dtype=dtype, endpoint=True)
    expected = [xxh64((int(key) % 2 ** 64).to_bytes(8, "little")) for key in keys]
    assert xxh64_uint64(keys).tolist() == expected


def test_parquet_hashing_is_its_own_format():
    f = ParquetBloomFilter(512)
    f.add("x")
    assert ParquetBloomFilter.from_bytes(f.to_bytes()) == f
    with pytest.raises(ValueError, match="hashing 2 is not this filter's"):
        BlockedBloomFilter.from_bytes(f.to_bytes())
    with pytest.raises(TypeError, match="ParquetBloomFilter"):
        f | BlockedBloomFilter(512)
    with pytest.raises(TypeError, match="iterable of keys"):
        f.add_many("abc")
    with pytest.raises(TypeError, match="bitset must be bytes"):
        ParquetBloomFilter.from_parquet_bitset("abc")


@pytest.mark.parametrize("keys", [np.array([b"ab", b"c"]), np.array(["ab", "c"])], ids=["S", "U"])
def test_an_array_whose_element_ends_in_nul_is_refused_and_changes_nothing(keys):
    """b"c" in an S2 array is stored as b"c\\x00": it cannot be told from that key."""
    f = ParquetBloomFilter(2048)
    f.add("kept")
    before = f.to_bytes()
    for method in (f.add_many, f.add_many_new, f.contains_many):
        with pytest.raises(ValueError, match="ends in NUL"):
            method(keys)
    assert f.to_bytes() == before
