"""The split-block filter (``bloomedu.variants.blocked``), against its per-key methods.

The per-key ``add``/``in`` follow Parquet's block and bit rules in plain Python ints;
every bulk method is compared with them (crowded filters of one block included, where
every key of a batch shares the block), ``add_many_new`` with the loop ``in`` then
``add``.  The false-positive rate is measured on keys never inserted, against the
Poisson-averaged formula, within standard deviations (fixed seeds).
"""

import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bloomedu.core.hashing import hash128
from bloomedu.variants import BlockedBloomFilter
from bloomedu.variants.blocked import (SALTS, num_blocks_for,
                                       split_block_false_positive_rate)
from bloomedu.variants import blocked_kernels
from bloomedu.kernels import backend
from dedup_loop import sequential_new


def per_key(num_bits: int, keys) -> BlockedBloomFilter:
    f = BlockedBloomFilter(num_bits)
    for key in keys:
        f.add(key)
    return f




def test_a_key_sets_one_bit_in_each_word_of_one_block():
    f = BlockedBloomFilter(256 * 10)
    f.add("città")
    h = hash128("città")[0]
    block = (h >> 32) * 10 >> 32
    set_words = np.flatnonzero(f.words)
    assert set_words.tolist() == list(range(8 * block, 8 * block + 8))
    for w, salt in enumerate(SALTS):  # Parquet's rule, written out once more
        assert int(f.words[8 * block + w]) == 1 << ((h & 0xFFFFFFFF) * salt % 2 ** 32 >> 27)
    assert sorted(f.bit_indices("città")) == [32 * (8 * block + w) + int(f.words[8 * block + w])
                                             .bit_length() - 1 for w in range(8)]


@pytest.mark.parametrize("kernels", ["numpy", "native"])
@pytest.mark.parametrize("kind", ["uint64", "int32", "str", "bytes", "mixed"])
@pytest.mark.parametrize("num_bits", [256, 256 * 7, 256 * 4099])  # one block: all keys share it
def test_bulk_methods_agree_with_the_per_key_ones(kind, num_bits, workers, kernels):
    with backend.use(kernels):
        bulk_methods_agree_with_the_per_key_ones(kind, num_bits)


def bulk_methods_agree_with_the_per_key_ones(kind, num_bits):
    rng = np.random.default_rng(num_bits)
    values = rng.integers(0, 5000, 12_000 if num_bits > 4096 else 3000)  # with repeats
    keys = {"uint64": values.astype(np.uint64), "int32": values.astype(np.int32) - 2500,
            "str": [f"id-{v}" for v in values.tolist()],
            "bytes": [str(v).encode() for v in values.tolist()],
            "mixed": [(str(v), v, str(v).encode())[v % 3] for v in values.tolist()]}[kind]
    as_list = keys.tolist() if isinstance(keys, np.ndarray) else keys
    expected = per_key(num_bits, as_list)
    bulk = BlockedBloomFilter(num_bits)
    bulk.add_many(keys)
    assert bulk == expected
    queried = list(range(5000, 9000)) + as_list[:500]
    assert bulk.contains_many(queried).tolist() == [key in expected for key in queried]
    dedup = BlockedBloomFilter(num_bits)
    assert dedup.add_many_new(keys).tolist() == sequential_new(BlockedBloomFilter(num_bits),
                                                               as_list)
    assert dedup == expected


@settings(deadline=None)
@given(st.lists(st.one_of(st.integers(-2 ** 63, 2 ** 64 - 1), st.text(max_size=4),
                          st.binary(max_size=4)), max_size=100),
       st.integers(1, 12), st.booleans(), st.sampled_from(["numpy", "native"]))
def test_no_key_is_lost_and_add_many_new_is_the_loop(keys, num_blocks, prefilled, kernels):
    with backend.use(kernels):
        no_key_is_lost_and_add_many_new_is_the_loop(keys, num_blocks, prefilled)


def no_key_is_lost_and_add_many_new_is_the_loop(keys, num_blocks, prefilled):
    bulk, loop = BlockedBloomFilter(256 * num_blocks), BlockedBloomFilter(256 * num_blocks)
    if prefilled:
        bulk.add_many(keys[1::2])
        loop.add_many(keys[1::2])
    assert bulk.add_many_new(keys).tolist() == sequential_new(loop, keys)
    assert bulk == loop
    assert bulk.contains_many(keys).all()


def test_batches_that_share_blocks_across_apply_pieces(monkeypatch):
    monkeypatch.setattr(blocked_kernels, "APPLY_KEYS", 7)  # groups of one block span several pieces
    keys = np.random.default_rng(4).integers(0, 300, 5000, dtype=np.uint64)
    f = BlockedBloomFilter(256 * 40)
    assert f.add_many_new(keys).tolist() == sequential_new(BlockedBloomFilter(256 * 40),
                                                           keys.tolist())
    assert f == per_key(256 * 40, keys.tolist())


@pytest.mark.parametrize("kernels", ["numpy", "native"])
def test_a_bad_key_mid_batch_changes_nothing(kernels):
    f = BlockedBloomFilter(256 * 100)
    f.add_many(["here"])
    before = f.copy()
    keys = [f"k{i}" for i in range(70_000)]
    keys[50_000] = 2.5
    with backend.use(kernels):
        for call in (f.add_many, f.add_many_new, f.contains_many):
            with pytest.raises(TypeError, match="key must be str, bytes or int, not float"):
                call(keys)
            assert f == before


@pytest.mark.parametrize("bits_per_key", [8, 16])
def test_false_positive_rate_is_the_poisson_average(bits_per_key):
    n = 60_000
    f = BlockedBloomFilter(n * bits_per_key)
    rng = np.random.default_rng(bits_per_key)
    keys = rng.integers(0, 2 ** 63, 2 * n, dtype=np.uint64)
    f.add_many(keys[:n])
    queries = np.random.default_rng(99).integers(2 ** 63, 2 ** 64 - 1, 400_000, dtype=np.uint64)
    measured = f.contains_many(queries).mean()
    expected = split_block_false_positive_rate(num_blocks=f.num_blocks, n=n)
    sd = math.sqrt(expected * (1 - expected) / queries.size)
    assert abs(measured - expected) < 5 * sd + 0.05 * expected, (measured, expected)
    assert abs(f.current_false_positive_rate() - expected) < 0.1 * expected
    classic = (1 - math.exp(-8 / bits_per_key)) ** 8  # a plain filter with k = 8, same m
    assert expected > classic  # the price of one cache miss


def test_sizing_meets_the_rate_with_the_fewest_blocks():
    for n, p in ((1000, 0.01), (1_000_000, 0.001), (864_000_000, 0.001)):
        blocks_needed = num_blocks_for(n=n, p=p)
        assert split_block_false_positive_rate(num_blocks=blocks_needed, n=n) <= p
        assert split_block_false_positive_rate(num_blocks=blocks_needed - 1, n=n) > p
    f = BlockedBloomFilter.from_capacity(1_000_000, 0.001)
    assert f.num_blocks == num_blocks_for(n=1_000_000, p=0.001) and f.num_hashes == 8


def test_rate_formula_limits():
    assert split_block_false_positive_rate(num_blocks=10, n=0) == 0.0
    assert split_block_false_positive_rate(num_blocks=1, n=10 ** 7) == pytest.approx(1.0)
    one_key = split_block_false_positive_rate(num_blocks=1, n=1e-9)  # about n (1/32)^8
    assert one_key == pytest.approx(1e-9 * 32.0 ** -8, rel=1e-6)


def test_bytes_pickle_copy_union_and_counts():
    a, b = BlockedBloomFilter(256 * 50), BlockedBloomFilter(256 * 50)
    a.add_many(range(300))
    b.add_many(range(300, 600))
    union = a | b
    assert union == per_key(256 * 50, range(600))
    assert BlockedBloomFilter.from_bytes(union.to_bytes()) == union
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(union, protocol=protocol)) == union
    assert union.bits_set() == int(np.unpackbits(union.words.view(np.uint8)).sum())
    assert union.fill_ratio == union.bits_set() / union.num_bits
    c = union.copy()
    c.add("new")
    assert c != union and "new" not in union
    a |= b
    assert a == union


def test_bad_capacity_and_rate_are_refused():
    with pytest.raises(ValueError, match="expected_items"):
        BlockedBloomFilter.from_capacity(0, 0.01)
    with pytest.raises(ValueError, match="fpp"):
        BlockedBloomFilter.from_capacity(10, 1.5)


def test_combining_different_filters_is_refused():
    with pytest.raises(ValueError, match="num_bits differs"):
        BlockedBloomFilter(512) | BlockedBloomFilter(1024)
    from bloomedu import BloomFilter
    with pytest.raises(TypeError, match="BlockedBloomFilter"):
        BlockedBloomFilter(512) | BloomFilter(512, 8)


@pytest.mark.parametrize("data, message", [
    (b"BLMB", "truncated"), (b"XXXX" + bytes(44), "not a bloomedu blocked filter"),
    (BlockedBloomFilter(256).to_bytes()[:-1], "truncated"),
    (BlockedBloomFilter(256).to_bytes() + b"\0", "padded"),
    (b"BLMB\x02\x00\x01\x00" + (1).to_bytes(8, "little") + bytes(32), "format version 2"),
    (b"BLMB\x01\x00\x07\x00" + (1).to_bytes(8, "little") + bytes(32), "hashing 7"),
    (b"BLMB\x01\x00\x01\x00" + (0).to_bytes(8, "little"), "corrupt header"),
])
def test_from_bytes_refuses_what_to_bytes_did_not_write(data, message):
    with pytest.raises(ValueError, match=message):
        BlockedBloomFilter.from_bytes(data)
    with pytest.raises(TypeError, match="data must be bytes"):
        BlockedBloomFilter.from_bytes("BLMB")


@pytest.mark.parametrize("keys, message", [("abc", "iterable of keys"), (5, "iterable of keys"),
                                           (np.array([1.5]), "must hold integers")])
def test_bulk_methods_refuse_non_batches(keys, message):
    f = BlockedBloomFilter(512)
    for call in (f.add_many, f.contains_many, f.add_many_new):
        with pytest.raises(TypeError, match=message):
            call(keys)
    assert f.bits_set() == 0


@pytest.mark.parametrize("key", ["", b""])
def test_the_empty_key_sets_eight_different_bits(key):
    """Its hash is 0, so every word's bit is bit 0: still eight bits, one per word."""
    f = BlockedBloomFilter(1 << 12)
    positions = f.bit_indices(key)
    assert len(set(positions)) == 8
    assert key not in f
    f.add(key)
    assert key in f and f.bits_set() == 8


def test_every_block_sits_in_one_cache_line():
    """The words start on a 64-byte boundary however the filter came to exist, so each
    32-byte block lies inside one line (numpy alone aligns to 16 bytes)."""
    f = BlockedBloomFilter.from_capacity(10_000, 0.01)
    f.add_many(range(100))
    for g in (f, f.copy(), BlockedBloomFilter.from_bytes(f.to_bytes()),
              pickle.loads(pickle.dumps(f)), *(BlockedBloomFilter(256 * b) for b in range(1, 9))):
        assert g.words.ctypes.data % 64 == 0
    assert f.copy() == f


@pytest.mark.parametrize("n", [np.int16(30000), np.uint16(30000), np.int32(30000), np.uint64(30000)],
                         ids=repr)
def test_from_capacity_takes_numpy_integers_as_their_values(n):
    """np.int16(30000) // 32 * 2 would overflow in int16: every size goes through core.checks."""
    assert BlockedBloomFilter.from_capacity(n, 0.01) == BlockedBloomFilter.from_capacity(30000, 0.01)
    assert num_blocks_for(n=n, p=0.01) == num_blocks_for(n=30000, p=0.01)


@pytest.mark.parametrize("bad, error", [(None, TypeError), (True, TypeError), (2.0, TypeError),
                                        (2.5, TypeError), (0, ValueError), (-1, ValueError),
                                        (2 ** 40 + 1, ValueError)], ids=repr)
def test_num_bits_is_refused_by_name(bad, error):
    with pytest.raises(error, match="num_bits"):
        BlockedBloomFilter(bad)
