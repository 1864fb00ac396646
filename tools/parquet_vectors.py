"""Write the Parquet test vectors of ``tests/test_parquet.py`` with a real Parquet writer.

    python tools/parquet_vectors.py tests/data        # needs pyarrow >= 24 and xxhash

Writes ``parquet_bloom.parquet``: one row group, an INT64 column ``id`` and a
string column ``url`` (the keys of :func:`vector_keys`), each with the split-block
Bloom filter pyarrow builds (ndv 2,000, fpp 0.01), no dictionary encoding; and
``xxh64_vectors.json``: XXH64 of a few byte strings by the ``xxhash`` package.
The test needs neither package: it reads these files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def vector_keys() -> tuple[list[int], list[str]]:
    """The keys written to the file (the test makes the same ones)."""
    ids = [(i * 0x9E3779B97F4A7C15) % 2 ** 64 - 2 ** 63 for i in range(1500)]  # signed int64
    urls = [f"https://host{i % 37}.example/{i}/città" for i in range(1500)]
    return ids, urls


def main(directory: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    import xxhash

    target = Path(directory)
    ids, urls = vector_keys()
    table = pa.table({"id": pa.array(ids, pa.int64()), "url": pa.array(urls, pa.string())})
    pq.write_table(table, target / "parquet_bloom.parquet", use_dictionary=False,
                   compression="NONE", bloom_filter_options={
                       "id": {"ndv": 2000, "fpp": 0.01}, "url": {"ndv": 2000, "fpp": 0.01}})
    samples = [b"", b"a", b"abc", b"0123456789abcdef", b"x" * 31, b"y" * 32, b"z" * 100,
               "città".encode(), (2 ** 63 - 1).to_bytes(8, "little")]
    vectors = [{"hex": data.hex(), "xxh64": xxhash.xxh64_intdigest(data)} for data in samples]
    (target / "xxh64_vectors.json").write_text(json.dumps(
        {"source": f"xxhash {xxhash.VERSION} (xxhash.xxh64_intdigest, seed 0)",
         "writer": f"pyarrow {pa.__version__}", "vectors": vectors}, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/data")
