"""``make bench-day``'s report (``benchmarks.day.report``) from made-up measurements: each
target's PASS or MISS against the same run's C loop, and what it says without a compiler."""

from benchmarks.day import DAY_MESSAGES, report


def path(name, seconds, uuid_seconds, peak_gib):
    return dict(path=name, warm_up_s=0.5, making_s=2.0, filter_bytes=2 ** 30, num_blocks=2 ** 25,
                peak_kib=int(peak_gib * 2 ** 20), base_kib=50 * 1024,
                ids=dict(messages=DAY_MESSAGES, duplicates=1000, caught=1000, genuine_dropped=90,
                         expected=100.0, seconds=seconds, process_cpu_s=1.5 * seconds,
                         minor_faults=500, faults_warming=480, chunks=824,
                         stage_cpu_s=dict(stream=0.3 * seconds, hash=0.4 * seconds,
                                          insert=0.9 * seconds)),
                uuids=dict(messages=1_728_000, duplicates=10, caught=10, genuine_dropped=0,
                           expected=0.0, seconds=uuid_seconds, process_cpu_s=uuid_seconds))


def run(compiler="/usr/bin/cc", c_ns=(20.0, 20.0, 30.0)):
    return dict(command="make bench-day", when="2026-12-07 01:00", cores=2, workers=2,
                loads=((0.5, 0.6, 0.7), (1.5, 1.0, 0.8)), filter_name="BlockedBloomFilter",
                messages=DAY_MESSAGES, uuid_messages=1_728_000, compiler=compiler,
                c_runs=[dict(ns_per_key=ns) for ns in c_ns] if compiler else [],
                paths=[path("numpy", 40.0 * DAY_MESSAGES / 1e9, 0.2, 1.1),
                       path("native", 20.0 * DAY_MESSAGES / 1e9, 0.1, 1.25)],
                start=dict(compile_s=9.5, cached_s=0.9))


def table_row(text, start):
    return next(line for line in text.splitlines() if line.startswith(start))


def test_each_path_is_judged_against_the_c_runs_around_it():
    text = report(run())
    # numpy: 40 ns against (20 + 20) / 2; native: 20 ns against (20 + 30) / 2
    assert table_row(text, "| day of 64-bit IDs").endswith("| 2.00x: MISS | 0.80x: PASS |")
    # UUIDs: 0.2 s / 1,728,000 keys = 115.7 ns, against 20 ns; native 57.9 ns against 25
    assert table_row(text, "| day of UUID strings").endswith("| 5.79x: MISS | 2.31x: PASS |")
    assert table_row(text, "| peak memory under").endswith("| 1.10x: PASS | 1.25x: MISS |")
    assert "load average 0.50 0.60 0.70 before, 1.50 1.00 0.80 after" in text
    assert "9.5 s compiling (empty numba cache), 0.90 s from the cache" in text
    assert "20.0, 20.0, 30.0 ns a key" in text


def test_the_overlap_and_faults_are_printed():
    text = report(run())
    assert table_row(text, "| stages' CPU / wall").endswith("| 1.60 | 1.60 |")
    assert table_row(text, "| minor page faults").endswith("| 480; 20 (0.0) | 480; 20 (0.0) |")
    assert "| thread CPU: stream / hash / insert | 10.4 / 13.8 / 31.1 s |" in text


def test_without_a_compiler_it_says_so_and_reports_no_ratio():
    text = report(run(compiler=None))
    assert "no C compiler on this machine" in text
    assert table_row(text, "| day of 64-bit IDs").endswith(
        "| no ratio (no C compiler) | no ratio (no C compiler) |")
    assert "PASS" not in table_row(text, "| day of UUID strings")
