"""W5's harness (benchmarks/after_bloom.py), no timing checked: who runs when, how results are
judged and written, and that bloomedu's runs count what they should on a few keys."""

import numpy as np
import pytest

from benchmarks import after_bloom
from benchmarks.workloads import uint64_keys


def test_schedule_rotates_every_library_every_round():
    pairs = after_bloom.schedule(3)
    names = list(after_bloom.LIBRARIES)
    assert len(pairs) == 3 * len(names) and pairs[0] == names[0] and pairs[len(names)] == names[1]
    assert {name: pairs.count(name) for name in names} == dict.fromkeys(names, 3)
    assert after_bloom.schedule(0) == []


def fake(build_s, query_s, storage, **extra):
    return {"build_s": build_s, "query_s": query_s, "keys": 1000, "queried": 1000,
            "false_positive_rate": 0.004, "false_negatives": 0, "storage_bytes": storage,
            "peak_bytes": 1, **extra}


def test_the_tables_compare_each_bloomedu_filter_with_its_peer():
    results = {name: after_bloom.best_of([fake(2.0, 1.0, 1230), fake(1.0, 2.0, 1230)])
               for name in ("bloomedu-xor", "pyfusefilter-xor8")}
    results["pyfusefilter-xor8"] = dict(results["pyfusefilter-xor8"], build_s=3.0, query_s=4.0)
    results["bloomedu-cuckoo"] = dict(fake(1.0, 1.0, 1000, load=0.9), runs=1)
    lines = after_bloom.tables(results)
    assert "| bloomedu-xor vs pyfusefilter-xor8 | 3.00x | 4.00x | 1.000 |" in lines
    assert sum(line.startswith("| bloomedu-cuckoo vs") for line in lines) == 0  # no peer ran
    row = next(line for line in lines if line.startswith("| bloomedu-xor |"))
    assert "| 9.840 |" in row and "0.00391" in row and "0 of 1,000" in row


def test_the_w5_section_replaces_only_itself():
    text = "# results\n\n" + "\n".join([after_bloom.BEGIN, "old", after_bloom.END]) + "\nafter\n"
    new = after_bloom.replace_section(text, [after_bloom.BEGIN, "new", after_bloom.END])
    assert new == text.replace("old", "new")
    assert after_bloom.replace_section("# results\n", ["x"]) == "# results\n\nx\n"


@pytest.mark.parametrize("name", ["bloomedu-xor", "bloomedu-fuse", "bloomedu-fuse4", "bloomedu-cuckoo"])
def test_a_bloomedu_run_counts_no_false_negative(tmp_path, name):
    keys = uint64_keys(4000, seed=2)
    np.save(tmp_path / "W2_inserted.npy", keys[:2000])
    np.save(tmp_path / "W2_absent.npy", keys[2000:])
    result = after_bloom.run(after_bloom.LIBRARIES[name], tmp_path)
    assert result["false_negatives"] == 0 and result["keys"] == result["queried"] == 2000
    assert result["false_positive_rate"] < 0.05 and result["storage_bytes"] > 2000


def test_the_redisbloom_run_starts_one_server_and_stops_it(tmp_path, monkeypatch):
    """Its keys are prepared twice (inserted, absent): a server started each time leaked one."""
    from bloomedu.services import redis_server
    from redis_support import start
    start(module=True).close()  # fails under `make test`, skips without the redis extra, if none
    started = []
    real = redis_server.RedisServer

    class Recorded(real):
        def __init__(self, **options):
            super().__init__(**options)
            started.append(self)

    monkeypatch.setattr(redis_server, "RedisServer", Recorded)
    keys = uint64_keys(400, seed=3)
    np.save(tmp_path / "W2_inserted.npy", keys[:200])
    np.save(tmp_path / "W2_absent.npy", keys[200:])
    result = after_bloom.run(after_bloom.RedisBloomCuckoo(), tmp_path)
    assert result["false_negatives"] == 0 and result["filters"] == 1
    assert len(started) == 1 and started[0].pid is None
