"""The benchmark harness itself (no timing here): who runs when, and how results are judged."""

import numpy as np
import pytest

from benchmarks.__main__ import best_of, large_schedule, ratios, schedule
from benchmarks.libraries import LARGE_LIBRARIES, LIBRARIES
from benchmarks.workloads import sweep_grid, uint64_keys


def test_schedule_rotates_libraries_and_runs_the_slow_one_once():
    pairs = schedule(5, native=False)
    rounds = []
    for i, (workload, name) in enumerate(pairs):
        if workload == "W1" and (i == 0 or pairs[i - 1][0] != "W1"):
            rounds.append([])
        rounds[-1].append(name)
    assert len(rounds) == 5
    assert [r[0] for r in rounds] == ["bloomedu", "rbloom", "fastbloom-rs", "bloomedu", "rbloom"]
    for workload in ("W1", "W2"):
        counts = {name: pairs.count((workload, name)) for name in LIBRARIES}
        assert counts == {"bloomedu": 5, "bloomedu-native": 0, "rbloom": 5, "fastbloom-rs": 5,
                          "pybloom-live": 1}
    assert {n for w, n in pairs if w == "W3"} == {"bloomedu", "fastbloom-rs"}  # can set m and k


def test_large_schedule_runs_each_w4_library_every_round_rotated():
    pairs = large_schedule(3, native=True)
    for workload, names in LARGE_LIBRARIES.items():
        runs = [name for w, name in pairs if w == workload]
        assert sorted(runs) == sorted(names * 3)
        assert runs[0] == names[0] and runs[len(names)] == names[1]  # rotated
    assert "rbloom" in LARGE_LIBRARIES["W4-day"] and "bloomedu" in LARGE_LIBRARIES["W4-day"]
    assert large_schedule(0) == []


def test_sweep_grid_is_lesson_06s():
    grid = sweep_grid()
    assert len(grid) == 240
    assert {m for m, _, _ in grid} == {2 ** 14, 2 ** 16, 2 ** 18}
    assert {k for _, k, _ in grid} == set(range(1, 9))
    for m in (2 ** 14, 2 ** 16, 2 ** 18):
        counts = sorted({n for mm, _, n in grid if mm == m})
        assert len(counts) == 10 and counts[0] == m // 64 and counts[-1] == m // 2


def test_uint64_keys_are_distinct_and_seeded():
    keys = uint64_keys(10_000, seed=3)
    assert keys.dtype == np.uint64 and np.unique(keys).size == 10_000
    assert np.array_equal(keys, uint64_keys(10_000, seed=3))


def fake(insert_s, query_s, fn=0):
    return {"insert_s": insert_s, "query_s": query_s, "false_negatives": fn, "peak_bytes": 1}


def test_best_of_takes_the_best_time_and_the_worst_false_negatives():
    best = best_of([fake(2.0, 1.0), fake(1.0, 3.0, fn=1)])
    assert (best["insert_s"], best["query_s"], best["false_negatives"], best["runs"]) == \
        (1.0, 1.0, 1, 2)


@pytest.mark.parametrize("sweep_s, expected", [(0.5, True), (1.5, False)])
def test_ratio_table_passes_only_when_every_target_is_met(sweep_s, expected):
    results = {("W1", "bloomedu"): fake(0.10, 0.05), ("W1", "rbloom"): fake(0.09, 0.07),
               ("W2", "bloomedu"): fake(0.03, 0.01), ("W2", "rbloom"): fake(0.03, 0.05),
               ("W3", "bloomedu"): {"sweep_s": sweep_s}}
    lines, all_pass = ratios(results)
    assert all_pass is expected
    assert "| W1 query vs rbloom | 1.40x | >= 1.3x | PASS |" in lines
    assert "| W1 insert vs rbloom | 0.90x | >= 0.8x | PASS |" in lines
    results["W2", "bloomedu"] = fake(0.05, 0.01)
    lines, all_pass = ratios(results)
    assert "| W2 insert vs rbloom | 0.60x | >= 1.0x | FAIL |" in lines and not all_pass
    assert not any(line.startswith("| W4") for line in lines)  # W4 not run: no row


def test_each_kernel_path_is_judged_against_rbloom():
    results = {("W1", "bloomedu"): fake(0.10, 0.10), ("W1", "rbloom"): fake(0.09, 0.14),
               ("W1", "bloomedu-native"): fake(0.05, 0.07),
               ("W2", "bloomedu"): fake(0.03, 0.01), ("W2", "rbloom"): fake(0.03, 0.05),
               ("W3", "bloomedu"): {"sweep_s": 0.5}}
    lines, all_pass = ratios(results)
    assert "| W1 query vs rbloom | 1.40x | >= 1.3x | PASS |" in lines
    assert "| W1 insert vs rbloom, native | 1.80x | >= 0.8x | PASS |" in lines
    assert "| W1 query vs rbloom, native | 2.00x | >= 1.3x | PASS |" in lines
    assert not any("W2" in line and "native" in line for line in lines)  # not run: no row
    assert all_pass
    results["W1", "bloomedu-native"] = fake(0.05, 0.2)
    lines, all_pass = ratios(results)
    assert "| W1 query vs rbloom, native | 0.70x | >= 1.3x | FAIL |" in lines and not all_pass
    assert any(line.startswith("- W1 query vs rbloom, native: 0.70x") and "numba" in line
               for line in lines)
    assert schedule(1, native=False).count(("W1", "bloomedu-native")) == 0
    assert schedule(2, native=True).count(("W1", "bloomedu-native")) == 2


def test_w4_targets_are_judged_when_w4_ran():
    results = {("W1", "bloomedu"): fake(0.1, 0.05), ("W1", "rbloom"): fake(0.1, 0.1),
               ("W2", "bloomedu"): fake(0.03, 0.01), ("W2", "rbloom"): fake(0.03, 0.05),
               ("W3", "bloomedu"): {"sweep_s": 0.5},
               ("W4", "bloomedu"): fake(2.0, 1.0), ("W4", "rbloom"): fake(4.0, 2.0),
               ("W4-day", "bloomedu"): fake(3.0, 1.0), ("W4-day", "rbloom"): fake(6.0, 4.0)}
    lines, all_pass = ratios(results)
    assert "| W4 insert vs rbloom | 2.00x | >= 1.5x | PASS |" in lines
    assert "| W4 query vs rbloom | 2.00x | >= 3.0x | FAIL |" in lines and not all_pass
    assert "| W4-day insert vs rbloom | 2.00x | >= 1.5x | PASS |" in lines


def write_small_keys(directory):
    """1,000 keys of each part of W1 and W2, where ``read_keys`` looks for them."""
    keys = uint64_keys(2000, seed=4)
    np.save(directory / "W2_inserted.npy", keys[:1000])
    np.save(directory / "W2_absent.npy", keys[1000:])
    for part in ("inserted", "absent"):
        (directory / f"W1_{part}.txt").write_text("\n".join(f"https://{part}.example/{i}"
                                                            for i in range(1000)))


def test_breakdown_table_has_a_row_per_workload(tmp_path):  # the harness runs; no time is checked
    from benchmarks.breakdown import table
    write_small_keys(tmp_path)
    rows = [line for line in table(tmp_path) if line.startswith("| W")]
    assert [row.split("|")[1].strip() for row in rows] == ["W1", "W2"]
    assert all(len(row.split("|")) == 8 for row in rows)


def test_locking_table_counts_the_acquisitions_of_each_call(tmp_path):  # no time is checked
    from benchmarks.locking import table
    write_small_keys(tmp_path)
    lines = table(tmp_path)
    rows = [line.split("|") for line in lines if line.startswith("| `")]
    counts = [int(row[3].strip().replace(",", "")) for row in rows]
    assert len(rows) == 4 and counts[:3] == [1000, 1, 1]  # one per add; one per staged add_many
    assert counts[3] >= 1 and any("into one shared W1 filter" in line for line in lines)
