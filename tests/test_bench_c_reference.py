"""The C split-block loop ``make bench-day`` measures bloomedu against
(``benchmarks/c/split_block.c``, through ``benchmarks/c_reference.py``) does bloomedu's work:
bit for bit the filter of ``BlockedBloomFilter.add_many_new``, and the same answers.

``make test`` installs a C compiler where it may (the ``cc`` target); without one these tests
are skipped, saying why, as the benchmark then says it reports no ratio."""

import numpy as np
import pytest

from benchmarks.c_reference import compile_reference, find_compiler, reference_bits, time_reference
from bloomedu.variants import BlockedBloomFilter
from bloomedu.workloads.day import day_chunks

pytestmark = pytest.mark.skipif(find_compiler() is None,
                                reason="no C compiler (cc, gcc or clang): make cc installs gcc")


@pytest.fixture(scope="module")
def executable(tmp_path_factory):
    return compile_reference(tmp_path_factory.mktemp("c"))


@pytest.mark.parametrize("num_blocks", [1, 3, 1000, 65_537])
def test_the_c_loop_sets_bloomedus_bits_and_gives_its_answers(executable, num_blocks):
    rng = np.random.default_rng(num_blocks)
    keys = rng.integers(0, 2 ** 64, 20_000, dtype=np.uint64, endpoint=False)
    edges = np.array([0, 2 ** 64 - 1, 1], dtype=np.uint64)
    keys = np.concatenate([keys, edges, keys[:500], keys[-7:]])  # repeats at the end
    f = BlockedBloomFilter(num_bits=256 * num_blocks)
    new = f.add_many_new(keys)
    words, present = reference_bits(executable, f.num_blocks, keys)
    assert np.array_equal(words, f.words)
    assert np.array_equal(present, ~new)
    assert present[-507:].all()  # the repeats were all found


def test_the_c_loop_takes_keys_by_value_like_bloomedu(executable):
    keys = np.array([-1, 0, 5, -(2 ** 63)], dtype=">i8")  # big-endian, signed
    f = BlockedBloomFilter(num_bits=256 * 17)
    f.add_many(keys)
    words, _ = reference_bits(executable, f.num_blocks, keys)
    assert np.array_equal(words, f.words)


def test_the_timed_loop_runs_the_days_genuine_ids(executable):
    # its keys are the genuine clicks of day_chunks with the same seed, so on a small filter it
    # finds exactly the keys (false positives) bloomedu finds on them
    seed, count = 20_240_611, 30_000
    ids, is_copy = next(day_chunks(40_000, double_click_rate=0.02, seed=seed, chunk=count))
    genuine = ids[~is_copy][:count]
    assert genuine.size == count
    f = BlockedBloomFilter(num_bits=256 * 2000)
    expected = int(np.count_nonzero(~f.add_many_new(genuine)))
    result = time_reference(executable, f.num_blocks, count, seed)
    assert result["keys"] == count and result["found"] == expected > 0
    assert result["wall_s"] >= 0 and result["ns_per_key"] >= 0
