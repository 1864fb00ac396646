"""Record runs of RedisBloom's cuckoo filter for ``tests/test_cuckoo_redis_model.py``.

    .venv/bin/python tools/cuckoo_vectors.py tests/data     # needs the bloomedu[redis] extra

Starts a Redis with the RedisBloom module (``bloomedu.services.redis_server``), runs the
scripts of ``tests/cuckoo_support.py`` on a few configurations, and writes
``redisbloom_cuckoo_vectors.json``: each run's answers, its CF.SCANDUMP (iterators, the
header in hex, a SHA-256 of the bytes) and CF.INFO.  The test reads that file and needs no
server.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# (capacity, bucket size, max iterations, expansion, commands, seed)
RUNS = [(1024, 2, 20, 1, 3000, 1), (100, 1, 20, 2, 1500, 2), (64, 4, 500, 4, 1500, 3),
        (50, 6, 1, 1, 1200, 4), (64, 8, 20, 0, 800, 5), (2, 1, 1, 1, 400, 6),
        (33, 3, 3, 3, 1500, 7)]


def main(directory: str) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from cuckoo_support import run_server, script, server_dump, server_info

    from bloomedu.services.redis_server import RedisServer

    cases = []
    with RedisServer(module=True) as server:
        client = server.client()
        for capacity, bucket_size, max_iterations, expansion, count, seed in RUNS:
            key = f"run-{seed}"
            client.execute_command("CF.RESERVE", key, capacity, "BUCKETSIZE", bucket_size,
                                   "MAXITERATIONS", max_iterations, "EXPANSION", expansion)
            answers = run_server(client, key, script(count, seed))
            dump = server_dump(client, key)
            cases.append({
                "capacity": capacity, "bucket_size": bucket_size, "max_iterations": max_iterations,
                "expansion": expansion, "commands": count, "seed": seed,
                "answers": ",".join(map(str, answers)),
                "iterators": [iterator for iterator, _ in dump],
                "header": dump[0][1].hex(),
                "sha256": hashlib.sha256(b"".join(data for _, data in dump)).hexdigest(),
                "info": server_info(client, key)})
        module = next(m for m in client.execute_command("MODULE", "LIST") if m[b"name"] == b"bf")
        redis_version = client.info("server")["redis_version"]
    ver = module[b"ver"]
    source = (f"RedisBloom {ver // 10000}.{ver // 100 % 100}.{ver % 100} in redis-server "
              f"{redis_version}; scripts of tests/cuckoo_support.py script(commands, seed); "
              "written by tools/cuckoo_vectors.py")
    (Path(directory) / "redisbloom_cuckoo_vectors.json").write_text(
        json.dumps({"source": source, "cases": cases}, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "tests" / "data"))
