"""The general filter above 40 Mi bits, and the bulk dedup ``add_many_new``.

Above 40 Mi bits ``add_many`` leaves the byte scratch for sorted batches
(``bloomedu.kernels.bloom``).  Expected bits always come from
``add`` one key at a time, or from Python sets of indices; never from the code under
test.  Batches crowded into few bytes are made on purpose (a filter forced onto the
large path at a small m, and index arrays that hit every bit of a byte many times).
``add_many_new`` is compared with the loop it stands for: ``k not in f``, then ``f.add(k)``.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bloomedu.core.hashing as hashing
import bloomedu.kernels.bloom as bloom_kernels
import bloomedu.kernels.threads as pipeline
from bloomedu.kernels.stages import in_background
from bloomedu import BloomFilter
from bloomedu.core.bits import BitArray
from dedup_loop import sequential_new

JUST_LARGE = (40 << 20) + 4099  # bits: just above the staging limit


def per_key(m: int, k: int, keys) -> BloomFilter:
    f = BloomFilter(m, k)
    for key in keys:
        f.add(key)
    return f




@pytest.fixture
def small_batches(monkeypatch):
    """Tiny jobs and pieces, so a small test crosses many batch and piece boundaries."""
    monkeypatch.setattr(bloom_kernels, "PIECE_POSITIONS", 64)
    monkeypatch.setattr(bloom_kernels, "JOB_POSITIONS", 4096)
    monkeypatch.setattr(hashing, "CHUNK_KEYS", 128)


# --- the large path sets exactly the bits add sets -----------------------------------------
def test_a_filter_just_above_the_limit_takes_the_large_path():
    assert not BloomFilter(JUST_LARGE, 3).bits.stages_everything
    assert BloomFilter(40 << 20, 3).bits.stages_everything


@pytest.mark.parametrize("kind", ["uint64", "int64", "str"])
def test_add_many_on_a_large_filter_sets_the_bits_add_sets(kind, workers):
    rng = np.random.default_rng(12)
    values = rng.integers(0, 2 ** 63, 20_000, dtype=np.uint64)
    keys = {"uint64": values, "int64": values.view(np.int64) - 2 ** 62,
            "str": [f"click-{v}" for v in values.tolist()]}[kind]
    bulk = BloomFilter(JUST_LARGE, 7)
    bulk.add_many(keys)
    as_list = keys.tolist() if isinstance(keys, np.ndarray) else keys
    assert bulk.bits == per_key(JUST_LARGE, 7, as_list).bits
    assert bulk.contains_many(keys).all()


@pytest.mark.parametrize("m", [64, 1000, 20_011])
def test_crowded_batches_on_the_large_path_lose_no_bit(m, workers, small_batches, monkeypatch):
    monkeypatch.setattr(bloom_kernels, "STAGE_LIMIT_BITS", 0)  # large path at any size
    keys = np.arange(2 * m, dtype=np.uint64)  # about 10 positions a bit: every byte crowded
    bulk = BloomFilter(m, 5)
    bulk.add_many(keys)
    assert not bulk.bits.stages_everything
    assert bulk.bits == per_key(m, 5, keys.tolist()).bits


def test_set_sorted_keeps_every_bit_of_a_crowded_byte():
    data = np.zeros(4, dtype=np.uint8)
    positions = np.sort(np.r_[np.repeat(np.arange(8, 16), 50), np.arange(24, 32)])
    bloom_kernels.set_sorted(data, positions.astype(np.uint32))
    assert data.tolist() == [0, 255, 0, 255]


@pytest.mark.parametrize("num_bits", [5000, 2 ** 40], ids=["uint32 buffer", "uint64 buffer"])
def test_sorted_batches_equal_setting_one_by_one(num_bits, small_batches, monkeypatch):
    monkeypatch.setattr(bloom_kernels, "STAGE_LIMIT_BITS", 0)
    monkeypatch.setattr(bloom_kernels, "JOB_POSITIONS", 1500)
    rng = np.random.default_rng(3)
    chunks = [np.r_[rng.integers(0, 5000, 700), np.full(300, 4093)] for _ in range(9)]
    bits = BitArray(5000)
    bloom_kernels.set_positions(bits.data, num_bits, iter(chunks))
    assert set(np.flatnonzero(bits.to_bools()).tolist()) == set(np.concatenate(chunks).tolist())


def test_set_many_on_a_bit_array_too_large_to_stage(monkeypatch):
    monkeypatch.setattr(bloom_kernels, "STAGE_LIMIT_BITS", 0)
    rng = np.random.default_rng(8)
    indices = np.r_[np.tile(np.arange(40, 64), 100), rng.integers(0, 9000, 20_000)]
    rng.shuffle(indices)
    bits = BitArray(9000)
    bits.set_many(indices)
    assert set(np.flatnonzero(bits.to_bools()).tolist()) == set(indices.tolist())


# --- all or nothing -----------------------------------------------------------------------
@pytest.mark.parametrize("bad, error", [(1.5, TypeError), (None, TypeError), (2 ** 64, ValueError),
                                        ("\ud800", UnicodeEncodeError)])
def test_a_bad_key_mid_batch_leaves_a_large_filter_unchanged(bad, error, workers):
    f = BloomFilter(JUST_LARGE, 5)
    f.add_many(["already", "here"])
    before = f.bits.copy()
    keys = [f"key-{i}" for i in range(100_000)]
    keys[70_001] = bad
    for call in (f.add_many, f.add_many_new):
        with pytest.raises(error):
            call(keys)
        assert f.bits == before
        with pytest.raises(error):
            call(iter(keys))
        assert f.bits == before


def test_a_generator_failing_after_many_keys_leaves_a_large_filter_unchanged():
    f = BloomFilter(JUST_LARGE, 4)

    def keys():
        yield from range(200_000)
        raise RuntimeError("the source broke")

    with pytest.raises(RuntimeError, match="the source broke"):
        f.add_many(keys())
    assert f.bits_set() == 0


# --- add_many_new is the loop "in, then add" ------------------------------------------------
@pytest.mark.parametrize("m, k, n, distinct", [(64, 3, 400, 150), (5000, 4, 9000, 3000),
                                               (JUST_LARGE, 10, 15_000, 9000)])
def test_add_many_new_answers_as_the_sequential_loop(m, k, n, distinct, workers, small_batches):
    keys = np.random.default_rng(m).integers(0, distinct, n, dtype=np.uint64)  # duplicates
    bulk, loop = BloomFilter(m, k), BloomFilter(m, k)
    assert bulk.add_many_new(keys).tolist() == sequential_new(loop, keys.tolist())
    assert bulk.bits == loop.bits


@settings(deadline=None)
@given(st.lists(st.one_of(st.integers(0, 40), st.text(max_size=3), st.binary(max_size=3)),
                max_size=120),
       st.integers(1, 400), st.integers(1, 8), st.booleans())
def test_add_many_new_property(keys, m, k, second_half):
    bulk, loop = BloomFilter(m, k), BloomFilter(m, k)
    if second_half:  # a filter already holding some keys
        bulk.add_many(keys[::3])
        loop.add_many(keys[::3])
    assert bulk.add_many_new(keys).tolist() == sequential_new(loop, keys)
    assert bulk.bits == loop.bits


def test_add_many_new_of_nothing():
    f = BloomFilter(100, 3)
    assert f.add_many_new([]).shape == (0,) and f.add_many_new(np.zeros(0, np.uint64)).dtype == bool


# --- the pipeline ----------------------------------------------------------------------------
def test_ordered_map_keeps_order_and_raises_at_the_failing_item():
    def square_unless_seven(x):
        if x == 7:
            raise ValueError("seven")
        return x * x

    results = pipeline.ordered_map(square_unless_seven, range(20), workers=2)
    assert [next(results) for _ in range(7)] == [x * x for x in range(7)]
    with pytest.raises(ValueError, match="seven"):
        next(results)


def test_in_background_yields_in_order_and_passes_errors(monkeypatch):
    monkeypatch.setattr(pipeline, "WORKERS", 2)

    def numbers():
        yield from range(50)
        raise KeyError("end")

    seen = []
    with pytest.raises(KeyError):
        for x in in_background(numbers()):
            seen.append(x)
    assert seen == list(range(50))
    stream = in_background(iter(range(10 ** 9)))
    assert [next(stream) for _ in range(3)] == [0, 1, 2]
    stream.close()  # the producing thread stops
