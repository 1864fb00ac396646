"""Record Spark's own Bloom filter bytes and Murmur3 hashes for ``tests/test_spark_vectors.py``.

    python tools/spark_vectors.py tests/data     # in an environment with pyspark and Java 17

Each run adds what the installed Spark writes to ``tests/data/spark_vectors.json`` (the
entries of another Spark version already there are kept), so one run with pyspark 4.0.x
(whose ``BloomFilter.create`` and ``DataFrame.stat.bloomFilter`` write version 1) and one
with pyspark >= 4.1 (version 2) record both versions. Recorded, by the JVM itself:

- ``hashes``: ``org.apache.spark.util.sketch.Murmur3_x86_32.hashUnsafeBytes`` (the hash the
  filters call, a package-private class whose static methods py4j reaches) on byte strings of
  every length 0..12 and more, and ``hashLong`` on the ends of a long, through the public
  class it was copied from, ``org.apache.spark.unsafe.hash.Murmur3_x86_32`` (py4j finds
  neither the sketch's constructor nor the static ``hashLong``: an instance of the public
  class answers);
- ``filters``: ``writeTo`` of filters built by ``df.stat.bloomFilter`` over a column of
  strings, of longs and of ints (and of binary where that Spark takes one), and by
  ``BloomFilter.create`` then ``putString``/``putLong``/``putBinary`` (with a seed where that
  Spark takes one), each with its keys, so the test needs neither Java nor pyspark.

The keys come from :func:`vector_keys`; the test reads them from the file.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

FILE = "spark_vectors.json"


def vector_keys() -> dict[str, list]:
    """The keys of the recorded filters: strings, longs and byte strings, edge cases first
    (the empty key, non-ASCII text, every length modulo 4, the ends of a long)."""
    strings = ["", "a", "ab", "abc", "abcd", "città", "日本語", "😀", "naïve café", "x" * 37]
    strings += [f"https://host{i % 37}.example/{i}/città" if i % 3 else f"click-{i:09d}"
                for i in range(990)]
    longs = [0, 1, -1, 2 ** 63 - 1, -2 ** 63, 2 ** 31, -2 ** 31 - 1, 255, -128, 65535]
    longs += [(i * 0x9E3779B97F4A7C15) % 2 ** 64 - 2 ** 63 for i in range(1, 991)]
    binary = [b"", b"\x00", b"\xff", b"\x80\x7f", b"abc", bytes(range(256))]
    binary += [hashlib.sha256(str(i).encode()).digest()[: i % 33] for i in range(494)]
    return {"string": strings, "long": longs, "binary": binary}


def encode(kind: str, keys: list) -> list:
    """Keys as JSON holds them: byte strings as hex."""
    return [key.hex() for key in keys] if kind == "binary" else list(keys)


def hash_samples() -> list[bytes]:
    return [bytes(range(length)) for length in range(13)] + [
        b"\x80\xff\x7f", "città".encode(), "😀".encode(), b"\xff" * 7, bytes(range(256))]


def record(spark) -> dict:
    """Everything this Spark writes, as one JSON-able dict."""
    from pyspark.sql.types import (BinaryType, IntegerType, LongType, StringType, StructField,
                                   StructType)

    jvm = spark._jvm
    sketch = jvm.org.apache.spark.util.sketch.BloomFilter
    murmur = jvm.org.apache.spark.util.sketch.Murmur3_x86_32
    public_murmur = jvm.org.apache.spark.unsafe.hash.Murmur3_x86_32
    offset = jvm.org.apache.spark.unsafe.Platform.BYTE_ARRAY_OFFSET

    def written(java_filter) -> str:
        out = jvm.java.io.ByteArrayOutputStream()
        java_filter.writeTo(out)
        return bytes(out.toByteArray()).hex()

    hashes = []
    for seed in (0, 42, -1, -2 ** 31):
        for data in hash_samples():
            hashes.append({"kind": "bytes", "hex": data.hex(), "seed": seed,
                           "hash": murmur.hashUnsafeBytes(bytearray(data), offset, len(data), seed)})
        for value in (0, 1, -1, 2 ** 63 - 1, -2 ** 63, 2 ** 32, 123456789012345):
            hashes.append({"kind": "long", "value": value, "seed": seed,
                           "hash": public_murmur(seed).hashLong(value)})

    keys = vector_keys()
    filters = []
    columns = [("string", StringType(), keys["string"], 1000, 0.01),
               ("long", LongType(), keys["long"], 1000, 0.03),
               ("int", IntegerType(), [k for k in keys["long"] if -2 ** 31 <= k < 2 ** 31], 300, 0.05),
               ("binary", BinaryType(), keys["binary"], 500, 0.05)]
    for kind, sql_type, values, n, fpp in columns:
        rows = [(bytearray(v) if kind == "binary" else v,) for v in values]
        frame = spark.createDataFrame(rows, StructType([StructField("key", sql_type)]))
        try:
            java_filter = frame._jdf.stat().bloomFilter("key", n, fpp)
        except Exception as error:  # noqa: BLE001 - a column type this Spark refuses is noted
            print(f"df.stat.bloomFilter over {kind}: refused ({str(error).splitlines()[0][:120]})")
            continue
        filters.append({"how": "df.stat.bloomFilter", "column": kind, "n": n, "fpp": fpp,
                        "keys": encode(kind, [int(v) for v in values] if kind == "int" else values),
                        "bytes": written(java_filter)})

    def put_all(java_filter, kind, values):
        for value in values:
            if kind == "string":
                java_filter.putString(value)
            elif kind == "long":
                java_filter.putLong(value)
            else:
                java_filter.putBinary(bytearray(value))
        return java_filter

    made = [("string", 10, 0.1), ("long", 100, 0.01), ("binary", 200, 0.02)]
    for kind, n, fpp in made:
        values = keys[kind][:n]
        filters.append({"how": "BloomFilter.create(n, fpp)", "column": kind, "n": n, "fpp": fpp,
                        "keys": encode(kind, values),
                        "bytes": written(put_all(sketch.create(n, fpp), kind, values))})
    major, minor = (int(part) for part in spark.version.split(".")[:2])
    if (major, minor) >= (4, 1):  # BloomFilter.create(Version, n, numBits, seed): SPARK-47547
        versions = sketch.Version
        for version, seed in (("V1", 0), ("V2", 0), ("V2", 12345), ("V2", -7)):
            for kind, n, num_bits in (("string", 300, 3000), ("long", 50, 700), ("binary", 64, 512)):
                values = keys[kind][:n]
                java_filter = sketch.create(getattr(versions, version), n, num_bits, seed)
                filters.append({"how": f"BloomFilter.create({version}, n, num_bits, seed)",
                                "column": kind, "n": n, "num_bits": num_bits, "seed": seed,
                                "keys": encode(kind, values),
                                "bytes": written(put_all(java_filter, kind, values))})
    return {"hashes": hashes, "filters": filters}


def main(directory: str) -> None:
    import pyspark
    from pyspark.sql import SparkSession

    path = Path(directory) / FILE
    known = json.loads(path.read_text()) if path.exists() else {"recordings": []}
    with tempfile.TemporaryDirectory() as scratch:
        spark = (SparkSession.builder.master("local[1]").appName("bloomedu-spark-vectors")
                 .config("spark.ui.enabled", "false").config("spark.driver.memory", "512m")
                 .config("spark.sql.shuffle.partitions", "1")
                 .config("spark.local.dir", scratch).getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        try:
            recording = {"pyspark": pyspark.__version__, "spark": spark.version,
                         "java": spark._jvm.java.lang.System.getProperty("java.version"),
                         **record(spark)}
        finally:
            spark.stop()
    kept = [r for r in known["recordings"] if r["spark"] != recording["spark"]]
    known["recordings"] = sorted(kept + [recording], key=lambda r: r["spark"])
    path.write_text(json.dumps(known, indent=0, ensure_ascii=False) + "\n")
    print(f"{path}: Spark {recording['spark']}, {len(recording['filters'])} filters, "
          f"{len(recording['hashes'])} hashes")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/data")
