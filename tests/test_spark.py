"""SparkBloomFilter against a real Spark, both ways, byte for byte (make test: a JVM per module).

Spark -> bloomedu: ``df.stat.bloomFilter`` over a column of strings, of longs and of ints, and
``BloomFilter.create`` then ``putBinary`` (Spark's DataFrame route takes no binary column),
written by ``writeTo``; bloomedu builds the same filter from the same keys and must give the same
bytes, and read Spark's.  bloomedu -> Spark: ``BloomFilter.readFrom`` of bloomedu's bytes, then
``mightContain*`` of every key in the JVM, and the JVM's answers on absent keys (its false
positives) equal bloomedu's.  Both versions where this Spark writes them (4.1 on: both, through
``BloomFilter.create(Version, ...)``; before: version 1 only); ``tests/test_spark_vectors.py``
covers the other with recorded bytes.  The data: random keys and the edges (the empty string,
non-ASCII text, every length modulo 4, the ends of a long).
"""

from __future__ import annotations

import numpy as np
import pytest

from bloomedu.compat.spark import SparkBloomFilter, dataframe_sizing, spark_num_hashes
from bloomedu.services.spark_session import dataframe_bloom_filter, filter_bytes, read_in_jvm
from spark_support import spark  # noqa: F401  (the fixture)

ALPHABET = list("abcxyz09 -_/") + ["é", "ß", "日", "本", "😀", "🦜", "\u0301", "\x00", "€"]
EDGE_STRINGS = ["", "a", "ab", "abc", "abcd", "città", "日本語", "😀", "\x00", "naïve café"]
EDGE_LONGS = [0, 1, -1, 2 ** 63 - 1, -2 ** 63, 2 ** 31, -2 ** 31 - 1, 2 ** 32, 255, -128]
EDGE_BYTES = [b"", b"\x00", b"\xff", b"\x80\x7f", b"abc", bytes(range(256))]


def random_strings(count: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    keys = {"".join(rng.choice(ALPHABET, size=int(n))) for n in rng.integers(0, 23, size=count)}
    return EDGE_STRINGS + sorted(keys - set(EDGE_STRINGS))


def random_longs(count: int, seed: int) -> list[int]:
    rng = np.random.default_rng(seed)
    return EDGE_LONGS + [int(v) for v in rng.integers(-2 ** 63, 2 ** 63 - 1, size=count,
                                                      dtype=np.int64)]


def random_bytes(count: int, seed: int) -> list[bytes]:
    rng = np.random.default_rng(seed)
    return EDGE_BYTES + [rng.bytes(int(n)) for n in rng.integers(0, 41, size=count)]


def spark_version(spark) -> tuple[int, int]:  # noqa: F811
    major, minor = spark.session.version.split(".")[:2]
    return int(major), int(minor)


def versions_written(spark) -> list[int]:  # noqa: F811
    """The versions this Spark's ``BloomFilter.create`` writes and ``readFrom`` reads: 1 and 2
    from 4.1 on, else 1."""
    return [1, 2] if spark_version(spark) >= (4, 1) else [1]


def java_filter(spark, version: int, n: int, num_bits: int, seed: int = 0):  # noqa: F811
    """A JVM BloomFilter made as ``BloomFilter.create(version, n, numBits, seed)`` would."""
    sketch = spark.jvm.org.apache.spark.util.sketch.BloomFilter
    if spark_version(spark) >= (4, 1):
        return sketch.create(getattr(sketch.Version, f"V{version}"), n, num_bits, seed)
    assert version == 1 and seed == 0
    return sketch.create(n, num_bits)


def in_jvm(target, action: str, key) -> bool:
    """``target.putString(key)`` (action "put") or ``mightContainString``, ``...Binary`` or
    ``...Long``, as the key's type says: what bloomedu's put and might_contain choose."""
    kind = "String" if isinstance(key, str) else "Binary" if isinstance(key, bytes) else "Long"
    return getattr(target, action + kind)(bytearray(key) if isinstance(key, bytes) else key)


# --- Spark -> bloomedu ------------------------------------------------------------------------
COLUMNS = [("string", "string", random_strings, 1500, 0.01),
           ("long", "bigint", random_longs, 1500, 0.03),
           ("int", "int", lambda count, seed: [v for v in random_longs(4 * count, seed)
                                               if -2 ** 31 <= v < 2 ** 31], 400, 0.2)]


@pytest.mark.parametrize("kind, sql_type, make_keys, count, fpp", COLUMNS, ids=[c[0] for c in COLUMNS])
def test_a_dataframe_columns_filter_is_bloomedus_byte_for_byte(spark, kind, sql_type, make_keys,  # noqa: F811
                                                               count, fpp):
    keys = make_keys(count, seed=len(kind))
    frame = spark.session.createDataFrame([(key,) for key in keys], f"key {sql_type}")
    written = dataframe_bloom_filter(frame, "key", len(keys), fpp)
    ours = SparkBloomFilter.with_num_bits(*dataframe_sizing(len(keys), fpp),
                                          version=int.from_bytes(written[:4], "big"))
    ours.put_many(keys)
    assert ours.to_bytes() == written
    read = SparkBloomFilter.from_bytes(written)
    assert read == ours and read.might_contain_many(keys).all()


def test_a_dataframe_filter_past_bloom_filter_aggs_limits_is_capped_as_bloomedu_says(spark):  # noqa: F811
    keys = random_strings(200, seed=9)
    frame = spark.session.createDataFrame([(key,) for key in keys], "key string")
    written = dataframe_bloom_filter(frame, "key", 10 ** 9, 0.01)  # asks for 9.6e9 bits
    read = SparkBloomFilter.from_bytes(written)
    assert (read.bit_size, read.num_hash_functions) == (67_108_864, spark_num_hashes(
        num_bits=67_108_864, n=4_000_000)) == (67_108_864, 12)
    ours = SparkBloomFilter.with_num_bits(*dataframe_sizing(10 ** 9, 0.01), version=read.version)
    ours.put_many(keys)
    assert ours.to_bytes() == written


def test_the_caps_are_the_sessions_settings_as_dataframe_sizing_takes_them(spark):  # noqa: F811
    settings = {"spark.sql.optimizer.runtime.bloomFilter.maxNumBits": 3 * 2 ** 20,
                "spark.sql.optimizer.runtime.bloomFilter.maxNumItems": 50_000}
    keys = random_longs(100, seed=10)
    frame = spark.session.createDataFrame([(key,) for key in keys], "key bigint")
    try:
        for name, value in settings.items():
            spark.session.conf.set(name, str(value))
        written = dataframe_bloom_filter(frame, "key", 10 ** 6, 0.02)
    finally:
        for name in settings:
            spark.session.conf.unset(name)
    ours = SparkBloomFilter.with_num_bits(*dataframe_sizing(
        10 ** 6, 0.02, max_num_items=50_000, max_num_bits=3 * 2 ** 20),
        version=int.from_bytes(written[:4], "big"))
    ours.put_many(keys)
    assert ours.to_bytes() == written and ours.bit_size == 3 * 2 ** 20


def test_the_dataframe_route_refuses_a_binary_column_so_binary_keys_go_through_put_binary(spark):  # noqa: F811
    # bloom_filter_agg takes longs and strings only (Spark 4.0 to 4.3): the test below puts
    # binary keys with putBinary; a Spark that takes the column makes this fail, to be extended
    frame = spark.session.createDataFrame([(bytearray(b"ab"),)], "key binary")
    with pytest.raises(Exception, match="BLOOM_FILTER_WRONG_TYPE"):
        dataframe_bloom_filter(frame, "key", 10, 0.1)


@pytest.mark.parametrize("kind", ["string", "long", "binary"])
def test_sparks_create_and_put_give_bloomedus_bytes_in_every_version_it_writes(spark, kind):  # noqa: F811
    keys = {"string": random_strings, "long": random_longs, "binary": random_bytes}[kind](600, 3)
    for version in versions_written(spark):
        for seed in ([0, -123456, 2 ** 31 - 1] if version == 2 else [0]):
            target = java_filter(spark, version, len(keys), 7 * len(keys), seed)
            ours = SparkBloomFilter.with_num_bits(len(keys), 7 * len(keys), version, seed=seed)
            for key in keys:
                assert in_jvm(target, "put", key) == ours.put(key), (version, seed, key)
            written = filter_bytes(spark.jvm, target)
            assert ours.to_bytes() == written, (version, seed)
            assert SparkBloomFilter.from_bytes(written) == ours


# --- bloomedu -> Spark ------------------------------------------------------------------------
def test_spark_reads_bloomedus_bytes_and_answers_as_bloomedu_does(spark):  # noqa: F811
    keys = random_strings(300, 11) + random_longs(300, 12) + random_bytes(300, 13)
    absent = random_strings(600, 21)[len(EDGE_STRINGS):] + random_longs(600, 22)[len(EDGE_LONGS):]
    for version in versions_written(spark):
        for seed in ([0, 987654] if version == 2 else [0]):
            ours = SparkBloomFilter(len(keys) // 3, 0.05, version, seed=seed)  # overfull: many FPs
            ours.put_many(keys)
            theirs = read_in_jvm(spark.jvm, ours.to_bytes())
            assert filter_bytes(spark.jvm, theirs) == ours.to_bytes()
            assert theirs.bitSize() == ours.bit_size and theirs.cardinality() == ours.cardinality()
            assert all(in_jvm(theirs, "mightContain", key) for key in keys), (version, seed)
            answers = [in_jvm(theirs, "mightContain", key) for key in absent]
            assert answers == ours.might_contain_many(absent).tolist(), (version, seed)
            assert 0 < sum(answers) < len(absent)  # false positives, the same ones


def test_sparks_merge_of_bloomedus_filters_is_bloomedus_merge(spark):  # noqa: F811
    version = versions_written(spark)[-1]
    a, b = SparkBloomFilter(500, 0.01, version), SparkBloomFilter(500, 0.01, version)
    a.put_many(random_strings(200, 31))
    b.put_many(random_longs(200, 32))
    merged = read_in_jvm(spark.jvm, a.to_bytes()).mergeInPlace(read_in_jvm(spark.jvm, b.to_bytes()))
    assert filter_bytes(spark.jvm, merged) == a.copy().merge_in_place(b).to_bytes()
