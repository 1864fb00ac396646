"""BinaryFuseFilter (Graf and Lemire 2022), what is its own: the paper's sizes (1.125 n slots
for arity 3 and 1.075 n for arity 4 once n is large, plus under a segment), a key's slots in
``arity`` consecutive segments, and its bytes.  The promises it shares with XorFilter (keys of
every kind, repeats, the rate, pickles, threads, bad numbers) are tested in tests/test_xor.py."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from bloomedu import BinaryFuseFilter
from bloomedu.variants.binary_fuse import fuse_layout
from bloomedu.variants.space import FUSE_FACTORS, lower_bound_bits, static_bits_per_key
from bloomedu.variants.static import mix


@pytest.mark.parametrize("arity", [3, 4])
def test_large_sets_take_the_papers_slots_a_key_plus_under_a_segment_or_two(arity):
    for count in (10 ** 6, 10 ** 7, 10 ** 8, 10 ** 9):
        length, segments, slots = fuse_layout(count, arity)
        assert length & (length - 1) == 0 and length <= 1 << 18
        assert slots == (segments + arity - 1) * length
        assert FUSE_FACTORS[arity] * count <= slots <= FUSE_FACTORS[arity] * count + 2 * length


def test_at_a_million_keys_the_3_wise_filter_spends_at_most_1_13_times_8_bits_plus_a_constant():
    length, _, slots = fuse_layout(10 ** 6, 3)
    assert 8 * slots <= 1.13 * 8 * 10 ** 6 + 8 * length  # 9.044 bits a key: 1.1305 x 8
    assert round(8 * slots / 10 ** 6, 3) == 9.044
    assert static_bits_per_key(8, "fuse") / lower_bound_bits(2 ** -8) == 1.125


def test_small_sets_get_more_slots_a_key_as_the_paper_says():
    factors = [fuse_layout(n)[2] / n for n in (100, 1000, 10_000, 100_000)]
    assert factors == sorted(factors, reverse=True) and factors[0] > 1.9
    assert fuse_layout(0) == fuse_layout(1) == fuse_layout(2)  # ln n: sized as 2 keys


@pytest.mark.parametrize("arity", [3, 4])
def test_a_keys_slots_lie_in_consecutive_segments(arity):
    f = BinaryFuseFilter(np.arange(5000, dtype=np.uint64), 8, arity)
    slots = f._slots(mix(np.arange(10_000, dtype=np.uint64), f.seed))
    segment = slots // f.segment_length
    assert (np.diff(segment, axis=1) == 1).all()  # one slot in each of arity segments in a row
    assert slots.min() >= 0 and slots.max() < f.num_slots
    assert segment[:, 0].max() == f.segment_count - 1  # every start segment is used


@pytest.mark.parametrize("arity", [3, 4])
def test_the_table_is_the_layouts_size(arity):
    for count in (1, 50, 3000):
        f = BinaryFuseFilter(np.arange(count), 16, arity)
        assert f.nbytes == 2 * fuse_layout(count, arity)[2] and f.arity == arity
        assert f.bits_per_key == 16 * fuse_layout(count, arity)[2] / count


def test_a_4_wise_filter_is_smaller_than_a_3_wise_one_for_large_sets():
    keys = np.arange(200_000, dtype=np.uint64)
    three, four = BinaryFuseFilter(keys), BinaryFuseFilter(keys, arity=4)
    assert four.nbytes < three.nbytes and four.contains_many(keys).all()
    assert math.isclose(three.nbytes / 200_000, fuse_layout(200_000, 3)[2] / 200_000)


def test_bytes_keep_the_arity_and_refuse_a_xor_filters():
    f = BinaryFuseFilter(range(100), 8, 4)
    copy = BinaryFuseFilter.from_bytes(f.to_bytes())
    assert copy.arity == 4 and copy == f and repr(copy) == repr(f)
    assert repr(copy).startswith("BinaryFuseFilter(fingerprint_bits=8, arity=4, fill=0.")
    assert repr(copy).endswith(", added=100)")
    forged = struct.pack("<4sHQQBB", b"BLMF", 1, 0, 100, 8, 5) + bytes(f.nbytes)
    with pytest.raises(ValueError, match="corrupt BinaryFuseFilter header"):
        BinaryFuseFilter.from_bytes(forged)
    from bloomedu import XorFilter
    with pytest.raises(ValueError, match="magic"):
        BinaryFuseFilter.from_bytes(XorFilter(range(100)).to_bytes())
