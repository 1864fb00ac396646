"""Spark's hash and Bloom filter bytes pinned from the real engine, no Java needed (make check).

``tests/data/spark_vectors.json`` holds what Spark 4.0.5 (version 1) and Spark 4.3.0 (version 2,
and version 1 through ``BloomFilter.create(V1, ...)``) computed and wrote (``tools/spark_vectors.py``
recorded them; ``tests/data/README.md`` says how).  ``tests/test_spark.py`` compares with a live
Spark too; this file keeps the comparison in the quick tier.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bloomedu.compat.spark import (SparkBloomFilter, dataframe_sizing, reachable_bits,
                                   spark_bit_indices, spark_bit_indices_many, spark_num_bits,
                                   spark_num_hashes)
from bloomedu.compat.spark_murmur import (spark_hash_bytes, spark_hash_bytes_many, spark_hash_long,
                                          spark_hash_longs)

DATA = json.loads((Path(__file__).parent / "data" / "spark_vectors.json").read_text())
RECORDINGS = {recording["spark"]: recording for recording in DATA["recordings"]}
FILTERS = [(spark, entry) for spark, recording in RECORDINGS.items()
           for entry in recording["filters"]]


def keys_of(entry) -> list:
    """The recorded keys as Python keys: str, bytes (binary, kept as hex) or int."""
    if entry["column"] == "binary":
        return [bytes.fromhex(key) for key in entry["keys"]]
    return list(entry["keys"])


def made_like(entry) -> SparkBloomFilter:
    """An empty filter sized as Spark sized the recorded one."""
    version = int.from_bytes(bytes.fromhex(entry["bytes"][:8]), "big")
    if entry["how"] == "df.stat.bloomFilter":
        return SparkBloomFilter.with_num_bits(*dataframe_sizing(entry["n"], entry["fpp"]), version)
    if "num_bits" in entry:
        return SparkBloomFilter.with_num_bits(entry["n"], entry["num_bits"], version,
                                              seed=entry["seed"])
    return SparkBloomFilter(entry["n"], entry["fpp"], version)


def entry_id(case) -> str:
    spark, entry = case
    return f"spark{spark}-{entry['how']}-{entry['column']}-seed{entry.get('seed', 0)}"


def test_both_versions_and_every_way_of_writing_are_recorded():
    versions = {(spark, entry["bytes"][:8]) for spark, entry in FILTERS}
    assert ("4.0.5", "00000001") in versions and ("4.3.0", "00000002") in versions
    assert ("4.3.0", "00000001") in versions  # BloomFilter.create(V1, ...)
    assert {entry["column"] for _, entry in FILTERS} == {"string", "long", "int", "binary"}
    assert any(entry.get("seed") not in (None, 0) for _, entry in FILTERS)


# --- the hash ----------------------------------------------------------------------------------
HASHES = [h for recording in DATA["recordings"] for h in recording["hashes"]]


@pytest.mark.parametrize("kind", ["bytes", "long"])
def test_the_hash_is_the_jvms_on_every_recorded_input(kind):
    cases = [h for h in HASHES if h["kind"] == kind]
    assert len(cases) >= 40
    for case in cases:
        if kind == "bytes":
            data = bytes.fromhex(case["hex"])
            assert spark_hash_bytes(data, case["seed"]) == case["hash"], case
        else:
            assert spark_hash_long(case["value"], case["seed"]) == case["hash"], case
    if kind == "bytes":  # every length 0..12: each tail length 0..3, three times
        assert {len(bytes.fromhex(h["hex"])) for h in cases} >= set(range(13))


def test_the_bytes_kernel_is_the_reference_on_every_length_and_seed():
    rng = np.random.default_rng(5)
    items = [rng.bytes(int(n)) for n in rng.integers(0, 70, size=600)] + [b"", b"\x80", b"\xff" * 3]
    seeds = rng.integers(-2 ** 31, 2 ** 31, size=len(items)).astype(np.int32)
    got = spark_hash_bytes_many(items, seeds)
    assert got.dtype == np.int32
    assert got.tolist() == [spark_hash_bytes(item, int(seed)) for item, seed in zip(items, seeds)]
    assert spark_hash_bytes_many(items, 7).tolist() == [spark_hash_bytes(i, 7) for i in items]
    assert spark_hash_bytes_many([], 0).tolist() == []


def test_the_long_kernel_is_the_reference_at_the_ends_and_at_random():
    rng = np.random.default_rng(6)
    values = np.concatenate([np.array([0, 1, -1, 2 ** 63 - 1, -2 ** 63, 2 ** 31, -2 ** 31]),
                             rng.integers(-2 ** 63, 2 ** 63 - 1, size=500, dtype=np.int64)])
    seeds = rng.integers(-2 ** 31, 2 ** 31, size=values.size).astype(np.int32)
    assert spark_hash_longs(values, seeds).tolist() == [
        spark_hash_long(int(v), int(s)) for v, s in zip(values, seeds)]
    with pytest.raises(TypeError, match="int64"):
        spark_hash_longs(values.astype(np.uint64), 0)


@pytest.mark.parametrize("version", [1, 2])
def test_the_positions_kernel_is_the_reference(version):
    rng = np.random.default_rng(version)
    h1 = rng.integers(-2 ** 31, 2 ** 31, size=300).astype(np.int32)
    h2 = rng.integers(-2 ** 31, 2 ** 31, size=300).astype(np.int32)
    edges = np.array([-2 ** 31, 2 ** 31 - 1, 0, -1], dtype=np.int32)
    h1, h2 = np.concatenate([h1, edges, edges]), np.concatenate([h2, edges, edges[::-1]])
    for bit_size in (64, 9600, 2 ** 31 + 64, 2 ** 37):
        got = spark_bit_indices_many(h1, h2, 9, bit_size, version)
        assert got.tolist() == [spark_bit_indices(int(a), int(b), 9, bit_size, version)
                                for a, b in zip(h1, h2)]
        assert got.min() >= 0 and got.max() < reachable_bits(bit_size, version)


# --- the filters, byte for byte -------------------------------------------------------------------
@pytest.mark.parametrize("case", FILTERS, ids=entry_id)
def test_recorded_filters_are_built_byte_for_byte_and_read_back(case):
    spark, entry = case
    keys = keys_of(entry)
    one_by_one, in_bulk = made_like(entry), made_like(entry)
    for key in keys:
        one_by_one.put(key)
    in_bulk.put_many(keys)
    recorded = bytes.fromhex(entry["bytes"])
    assert one_by_one.to_bytes() == recorded
    assert in_bulk.to_bytes() == recorded
    read = SparkBloomFilter.from_bytes(recorded)
    assert read == one_by_one and read.to_bytes() == recorded
    assert read.might_contain_many(keys).all() and all(key in read for key in keys)


def test_int_columns_are_longs_and_int_arrays_give_the_same_bits():
    entry = next(e for spark, e in FILTERS if spark == "4.3.0" and e["column"] == "int")
    for dtype in ("<i4", ">i8", "<i8"):
        f = made_like(entry)
        f.put_many(np.array(entry["keys"], dtype=dtype))
        assert f.to_bytes() == bytes.fromhex(entry["bytes"])


# --- sizing ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", [c for c in FILTERS if "fpp" in c[1]], ids=entry_id)
def test_sizing_is_sparks(case):
    _, entry = case
    data = bytes.fromhex(entry["bytes"])
    k = int.from_bytes(data[4:8], "big")
    words = int.from_bytes(data[8:12] if data[3] == 1 else data[12:16], "big")
    n, num_bits = ((dataframe_sizing(entry["n"], entry["fpp"])) if entry["how"].startswith("df")
                   else (entry["n"], spark_num_bits(n=entry["n"], p=entry["fpp"])))
    assert (k, words) == (spark_num_hashes(num_bits=num_bits, n=n), -(-num_bits // 64))


def test_the_version_1_cap_at_the_articles_scale():
    num_bits = spark_num_bits(n=864_000_000, p=0.01)
    bit_size = 64 * -(-num_bits // 64)
    assert num_bits > 8 * 10 ** 9 and spark_num_hashes(num_bits=num_bits, n=864_000_000) == 7
    assert reachable_bits(bit_size, 1) == 2 ** 31 and reachable_bits(bit_size, 2) == bit_size
    # a version 1 key's positions never pass 2**31, however many bits the filter has
    h = np.arange(-2 ** 31, 2 ** 31, 2 ** 20 + 7, dtype=np.int64).astype(np.int32)
    assert spark_bit_indices_many(h, h[::-1].copy(), 7, bit_size, 1).max() < 2 ** 31
    assert spark_bit_indices_many(h, h[::-1].copy(), 7, bit_size, 2).max() >= 2 ** 31
