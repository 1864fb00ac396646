"""Packed bit storage (article 1, step 3's bit vector; the storage of every filter).

Expected bits are computed here with plain Python sets, never by the code under
test.  Every path of ``BitArray.set_many`` (``np.bitwise_or.at`` for small
batches, the byte scratch + ``np.packbits`` for large ones, the sort for arrays
too big for a scratch) is run on batches full of repeated indices inside the
same byte: the naive ``data[i >> 3] |= mask`` would lose bits there.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bloomedu.kernels.bloom as bloom_kernels
from bloomedu.core.bits import BitArray


def set_bits(bits: BitArray) -> set[int]:
    """The indices of the 1 bits, read one bit at a time through __getitem__."""
    return {i for i in range(bits.num_bits) if bits[i]}


def test_single_bits_are_lsb_first_in_bytes():
    bits = BitArray(20)
    for index in (0, 3, 9, 19):
        bits.set(index)
    assert bits.data[:3].tolist() == [0b0000_1001, 0b0000_0010, 0b0000_1000]
    assert set_bits(bits) == {0, 3, 9, 19} and bits.count() == 4
    bits.clear(3)
    assert set_bits(bits) == {0, 9, 19}


@settings(deadline=None)
@given(st.integers(1, 5000), st.sampled_from([8, 16, 32, 64]))
def test_storage_is_whole_words(num_bits, word_bits):
    bits = BitArray(num_bits, word_bits=word_bits)
    assert bits.nbytes == word_bits // 8 * math.ceil(num_bits / word_bits)
    assert len(bits) == num_bits and bits.count() == 0


# --- set_many: every path, with repeats inside one byte ---------------------------------
def repeats_batch(num_bits: int, size: int, seed: int) -> np.ndarray:
    """``size`` indices: every bit of a few bytes, many times over, shuffled among random ones."""
    rng = np.random.default_rng(seed)
    dense = np.tile(np.arange(8 * 5, 8 * 8), size // 48 + 1)[: size // 2]  # bytes 5..7, all bits
    scattered = rng.integers(0, num_bits, size - dense.size)
    batch = np.concatenate([dense, scattered])
    rng.shuffle(batch)
    return batch


def small_batch_path(num_bits):
    return num_bits // 200  # below m/64: np.bitwise_or.at


def scratch_path(num_bits):
    return num_bits // 2  # above m/64: the byte scratch


@pytest.mark.parametrize("path", ["or_at", "scratch", "sort"])
@pytest.mark.parametrize("num_bits", [4096, 100_003])
def test_set_many_keeps_every_repeated_bit(path, num_bits, monkeypatch):
    if path == "sort":
        monkeypatch.setattr(bloom_kernels, "STAGE_LIMIT_BITS", 0)
    size = small_batch_path(num_bits) if path == "or_at" else scratch_path(num_bits)
    batch = repeats_batch(num_bits, size, seed=num_bits)
    bits = BitArray(num_bits)
    bits.set(1)
    bits.set_many(batch)
    assert set_bits(bits) == {1} | set(batch.tolist())
    assert bits.count() == len({1} | set(batch.tolist()))


@pytest.mark.parametrize("path", ["or_at", "scratch", "sort"])
def test_set_chunks_equals_setting_one_by_one(path, monkeypatch):
    if path == "sort":
        monkeypatch.setattr(bloom_kernels, "STAGE_LIMIT_BITS", 0)
    num_bits = 50_000
    size = small_batch_path(num_bits) if path == "or_at" else scratch_path(num_bits)
    rng = np.random.default_rng(7)
    chunks = [repeats_batch(num_bits, size // 4, seed) for seed in range(4)]
    expected = BitArray(num_bits)
    for index in np.concatenate(chunks).tolist():
        expected.set(index)
    bits = BitArray(num_bits)
    buffer = np.empty(size // 4, dtype=np.int64)

    def reused_buffer():  # the filter reuses one buffer per chunk: staging must copy it
        for chunk in chunks:
            buffer[:] = chunk
            yield buffer
        buffer[:] = rng.integers(0, num_bits, buffer.size)  # overwritten after the last chunk

    bits.set_chunks(reused_buffer())
    assert bits == expected


@pytest.mark.parametrize("size", [100, 20_000])  # pending list only, then the scratch
def test_set_chunks_is_all_or_nothing(size):
    bits = BitArray(100_000)
    bits.set_many(np.array([5, 77_777]))
    before = bits.data.copy()

    def failing():
        yield np.arange(size)
        yield np.arange(size, 2 * size)
        raise ValueError("a bad key in the third chunk")

    with pytest.raises(ValueError, match="third chunk"):
        bits.set_chunks(failing())
    assert np.array_equal(bits.data, before)


def test_stages_everything_only_while_the_scratch_fits(monkeypatch):
    assert BitArray(1 << 20).stages_everything
    monkeypatch.setattr(bloom_kernels, "STAGE_LIMIT_BITS", (1 << 20) - 1)
    assert not BitArray(1 << 20).stages_everything


# --- get_many ---------------------------------------------------------------------------
def test_get_many_agrees_with_getitem_and_keeps_shape():
    rng = np.random.default_rng(3)
    bits = BitArray(1000)
    for index in rng.integers(0, 1000, 300).tolist():
        bits.set(index)
    query = rng.integers(0, 1000, (50, 4))
    found = bits.get_many(query)
    assert found.shape == (50, 4) and found.dtype == bool
    assert found.tolist() == [[bits[i] for i in row] for row in query.tolist()]


def test_to_bools_copy_and_equality():
    bits = BitArray(70)
    bits.set_many(np.array([0, 69, 8]))
    assert np.flatnonzero(bits.to_bools()).tolist() == [0, 8, 69]
    twin = bits.copy()
    assert twin == bits
    twin.set(1)
    assert twin != bits and not bits[1]
    assert BitArray(70) != BitArray(71)


# --- bad input ---------------------------------------------------------------------------
@pytest.mark.parametrize("num_bits, error", [(0, ValueError), (-1, ValueError), (2 ** 63, ValueError),
                                             (2.5, TypeError), (True, TypeError), ("8", TypeError),
                                             (None, TypeError)])
def test_num_bits_must_be_a_positive_int(num_bits, error):
    with pytest.raises(error, match=r"num_bits must be an int in 1\.\.2\*\*63-1"):
        BitArray(num_bits)


def test_word_bits_must_be_a_machine_word():
    with pytest.raises(ValueError, match="word_bits must be one of 8, 16, 32, 64, got 12"):
        BitArray(10, word_bits=12)
    for bad in (True, 8.0, None):  # a bool or a float is not a word size: TypeError
        with pytest.raises(TypeError, match="word_bits must be one of 8, 16, 32, 64"):
            BitArray(10, word_bits=bad)


def test_single_bit_index_is_checked():
    bits = BitArray(10)
    with pytest.raises(IndexError, match=r"0\.\.9, got 10"):
        bits.set(10)
    with pytest.raises(IndexError, match=r"0\.\.9, got -1"):
        bits[-1]
    with pytest.raises(TypeError, match="bit index must be an int"):
        bits.set(1.0)
    with pytest.raises(TypeError, match="bit index must be an int"):
        bits.set(True)
    assert bits.count() == 0


@pytest.mark.parametrize("indices, error, message", [
    ([3, 10], IndexError, r"0\.\.9, got 3\.\.10"), ([-1, 2], IndexError, r"got -1\.\.2"),
    ([1.0], TypeError, "bit indices must be integers, not float64"),
])
def test_many_bit_indices_are_checked(indices, error, message):
    bits = BitArray(10)
    bits.set(4)
    with pytest.raises(error, match=message):
        bits.set_many(np.array(indices))
    with pytest.raises(error, match=message):
        bits.get_many(np.array(indices))
    assert set_bits(bits) == {4}
