"""The day's dedup in overlapping stages (``bloomedu.workloads.day.deduplicate`` on
``bloomedu.kernels.stages.staged``): exactly the filter and the answers of ``add_many_new``
one chunk after the other, whichever the threads; the stages' order, errors and early stops."""

import threading

import numpy as np
import pytest

from bloomedu import BloomFilter
from bloomedu.kernels import backend
from bloomedu.kernels.stages import StageClock, staged
from bloomedu.variants import BlockedBloomFilter
from bloomedu.workloads.day import day_chunks, deduplicate


def small_day():
    return day_chunks(50_000, rate=1000, double_click_rate=0.05, seed=11, chunk=9_000)


@pytest.mark.parametrize("make", [lambda: BlockedBloomFilter(num_bits=256 * 900),
                                  lambda: BloomFilter(200_000, 7)])
@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("kernels", ["numpy", "native"])
def test_the_pipeline_gives_the_filter_and_answers_of_add_many_new(make, workers, kernels):
    if kernels == "native" and not backend.native_available():
        pytest.skip(f"native kernels not installed: {backend.unavailable_reason()}")
    sequential, piped = make(), make()
    with backend.use("numpy"):  # the reference: numpy's add_many_new, chunk after chunk
        expected = [(ids, copy, ~sequential.add_many_new(ids)) for ids, copy in small_day()]
    clock = StageClock()
    with backend.use(kernels):
        got = list(deduplicate(piped, small_day(), clock=clock, workers=workers, piece=1000))
    assert piped == sequential
    assert len(got) == len(expected)
    for (ids, copy, dropped), (ids_0, copy_0, dropped_0) in zip(got, expected):
        assert np.array_equal(ids, ids_0) and np.array_equal(copy, copy_0)
        assert np.array_equal(dropped, dropped_0)
    dropped = np.concatenate([d for _, _, d in got])
    copies = np.concatenate([c for _, c, _ in got])
    assert dropped[copies].all() and dropped[~copies].sum() > 0  # a small filter: some false positives
    assert set(clock.cpu_s) == {"stream", "hash", "insert"}
    assert all(seconds >= 0 for seconds in clock.cpu_s.values())


def test_the_pipeline_checks_its_piece():
    with pytest.raises(ValueError, match="piece"):
        next(deduplicate(BlockedBloomFilter(256), small_day(), piece=0))


@pytest.mark.parametrize("workers", [1, 2])
def test_stages_keep_the_order_and_run_each_step_on_every_item(workers):
    out = list(staged(range(200), lambda x: [x] * (x % 3), lambda x: [x, -x], workers=workers))
    assert out == [y for x in range(200) for y in [x, -x] * (x % 3)]


def test_stages_run_on_threads_of_their_own():
    seen = {}

    def source():
        for i in range(5):
            seen.setdefault("source", set()).add(threading.current_thread().name)
            yield i

    def step(x):
        seen.setdefault("step", set()).add(threading.current_thread().name)
        return [x]

    assert list(staged(source(), step, workers=2, names=["stream", "hash"])) == list(range(5))
    assert seen == {"source": {"bloomedu-stream"}, "step": {"bloomedu-hash"}}


@pytest.mark.parametrize("workers", [1, 2])
def test_an_error_in_a_stage_is_raised_to_the_caller(workers):
    def step(x):
        if x == 3:
            raise KeyError("bad item")
        return [x]

    got = []
    with pytest.raises(KeyError, match="bad item"):
        for x in staged(range(10), step, workers=workers):
            got.append(x)
    assert got == [0, 1, 2]


def test_stopping_early_stops_every_stage():
    before = threading.active_count()
    items = staged(iter(range(10 ** 9)), lambda x: [x], workers=2, depth=2)
    assert next(items) == 0
    items.close()
    assert threading.active_count() == before


def test_the_native_pipeline_takes_any_integer_array():
    if not backend.native_available():
        pytest.skip(f"native kernels not installed: {backend.unavailable_reason()}")
    ids = np.arange(-500, 500, dtype=">i8")  # big-endian, signed: not the ring's uint64 path
    chunks = [(ids, np.zeros(ids.size, bool)), (ids[::2], np.ones(500, bool))]
    f, g = BlockedBloomFilter(256 * 50), BlockedBloomFilter(256 * 50)
    with backend.use("native"):
        got = [dropped for _, _, dropped in deduplicate(f, chunks, piece=64)]
    expected = [~g.add_many_new(keys) for keys, _ in chunks]
    assert f == g and all(np.array_equal(a, b) for a, b in zip(got, expected))


def test_stage_depths_are_checked():
    with pytest.raises(ValueError, match="depth"):
        list(staged(range(3), lambda x: [x], depth=(2,), workers=2))
    assert list(staged(range(3), lambda x: [x], depth=(1, 3), workers=2)) == [0, 1, 2]


def test_stage_names_must_match_the_stages():
    with pytest.raises(ValueError, match="names"):
        list(staged(range(3), lambda x: [x], names=["only one"]))


@pytest.mark.parametrize("made, written", [("numpy", "numpy"), ("native", "native"),
                                           ("native", "numpy")])
def test_a_batch_is_written_as_add_many_new_would_whichever_kernels(made, written):
    if "native" in (made, written) and not backend.native_available():
        pytest.skip(f"native kernels not installed: {backend.unavailable_reason()}")
    from bloomedu.core.hashing import hashed_batches
    keys = np.concatenate([np.arange(3000, dtype=np.uint64)] * 2)
    h1 = next(hashed_batches(keys, None, keys.size))[0]
    f, g = BlockedBloomFilter(256 * 40), BlockedBloomFilter(256 * 40)
    present = np.empty(keys.size, dtype=bool)
    with backend.use(made):
        batch = f.batch_of(h1)
    with backend.use(written):
        f.add_batch_new(batch, present)
    with backend.use("numpy"):
        expected = ~g.add_many_new(keys)
    assert f == g and np.array_equal(present, expected) and present[3000:].all()
