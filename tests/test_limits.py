"""Limits agree everywhere, big sizes fail clearly, and whole-filter reads stay small in memory.

The bound on k is one constant (``MAX_HASHES`` in ``bloomedu/core/checks.py``); everything that
takes a k is checked against it here, and everything a constructor accepts must read back from
bytes and pickles.  Memory is checked against a machine of known size (the probe is replaced),
so these tests mean the same on any computer.
"""

import math
import pickle
import struct
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bloomedu import (AgePartitionedBloomFilter, BitArray, BitVector, BloomFilter,
                      CountingBloomFilter, RotatingBloomFilter, SaltedBloomFilter,
                      ScalableBloomFilter, StableBloomFilter)
from bloomedu.cli import SizeReport, size_report
from bloomedu.compat.bip37 import Bip37Filter, MAX_HASH_FUNCS, compact_size
from bloomedu.compat.guava import GuavaBloomFilter
from bloomedu.core import bits as bits_module
from bloomedu.core import checks, theory
from bloomedu.core.checks import MAX_HASHES, MAX_NUM_BITS, StorageTooLarge
from bloomedu.variants import BlockedBloomFilter
from bloomedu.teaching import experiments, explorer
from bloomedu.teaching.exercises import check

GIB = 2 ** 30


@pytest.fixture
def machine(monkeypatch):
    """A machine with a given number of bytes available: ``machine(8 * GIB)``."""
    def set_available(nbytes):
        monkeypatch.setattr(checks, "available_memory", lambda: nbytes)
    return set_available


# --- one bound for k ------------------------------------------------------------------------
def test_the_bound_is_where_the_best_rate_leaves_the_doubles():
    assert MAX_HASHES == 1024
    # at the best k, p = 2**-k: 2**-1022 is the smallest normal double, 2**-1075 rounds to 0
    assert 2.0 ** -(MAX_HASHES - 2) == np.finfo(float).tiny and 2.0 ** -1075 == 0.0
    assert explorer.MAX_CURVE_HASHES <= MAX_HASHES


@pytest.mark.parametrize("make", [
    lambda k: BloomFilter(64, k), lambda k: SaltedBloomFilter(k, 8),
    lambda k: theory.false_positive_rate(num_bits=1000, num_hashes=k, n=10),
    lambda k: theory.estimate_count(num_bits=10, num_hashes=k, bits_set=5),
    lambda k: theory.exact_false_positive_rate(num_bits=10 ** 6, num_hashes=k, n=1000),
    lambda k: theory.measured_rate_std(num_bits=10 ** 6, num_hashes=k, n=1000, num_queries=100),
    lambda k: experiments.measure_false_positive_rate(num_bits=64, num_hashes=k, num_items=1, num_queries=10, seed=0),
    lambda k: experiments.simulate_false_positive_rate(num_bits=64, num_hashes=k, num_items=1, num_queries=10, seed=0),
    lambda k: experiments.double_hash_positions(np.arange(2, dtype=np.uint64), num_bits=64, num_hashes=k),
    lambda k: size_report(bits=96, hashes=k, items=10),
    lambda k: SizeReport(num_bits=96, num_hashes=k, items=10),
    lambda k: check.fpp(0.5, num_bits=1000, num_hashes=k, n=10),
    lambda k: check.expected_bits_set(5, num_hashes=k),
    lambda k: CountingBloomFilter(64, k), lambda k: StableBloomFilter(64, k, 2, 1),
    lambda k: AgePartitionedBloomFilter(k, 2, 10),
], ids=["BloomFilter", "SaltedBloomFilter", "false_positive_rate", "estimate_count",
        "exact_false_positive_rate", "measured_rate_std", "measure_false_positive_rate",
        "simulate_false_positive_rate", "double_hash_positions", "size_report", "SizeReport",
        "exercise fpp", "exercise expected_bits_set", "CountingBloomFilter", "StableBloomFilter",
        "AgePartitionedBloomFilter"])
@pytest.mark.parametrize("k", [MAX_HASHES + 1, 70_000, 2 ** 40, 10 ** 17])
def test_every_k_above_the_bound_is_refused_at_once(make, k):
    with pytest.raises(ValueError, match=r"\b(num_hashes|hashes|k) must be .*1024"):
        make(k)


def test_k_at_the_bound_works_on_every_path():
    f = BloomFilter(10_000, MAX_HASHES)
    f.add("x")
    assert "x" in f and f.contains_many(["x", "y"]).tolist() == [True, False]
    salted = SaltedBloomFilter(MAX_HASHES, 16)
    salted.add("x")
    assert "x" in salted and len(set(salted.bit_indices("x"))) > 900
    assert 0 < theory.exact_false_positive_rate(num_bits=1100, num_hashes=MAX_HASHES, n=1) < 1e-150
    assert theory.optimal_num_hashes(num_bits=10 ** 9, n=1) == MAX_HASHES  # the best k would be 693 million
    assert theory.false_positive_rate(num_bits=10 ** 9, num_hashes=MAX_HASHES, n=1) == 0.0


def test_k_at_the_bound_works_in_every_variant():
    """k = 1024 is accepted, adds, finds and reads back in every structure that takes a k, and
    the sized ones (rotating, scalable) stop at it."""
    for f in (CountingBloomFilter(5000, MAX_HASHES), StableBloomFilter(5000, MAX_HASHES, 3, 1),
              AgePartitionedBloomFilter(MAX_HASHES, 1, 2)):
        f.add("x")
        f.add_many(["", "y"])
        assert {"x", "", "y"} <= {key for key in ("x", "", "y") if key in f}
        assert f.contains_many(["x", "", "y"]).all() and type(f).from_bytes(f.to_bytes()) == f
        assert pickle.loads(pickle.dumps(f)) == f
    assert RotatingBloomFilter(1, 1e-300, 2).num_hashes == 998  # fpp 1e-300 over 2 generations
    with pytest.raises(ValueError, match=r"capacity=1 at fpp=1e-320 needs k = \d+ hash functions, "
                                         r"more than 1024"):
        RotatingBloomFilter(1, 1e-320, 2)
    assert ScalableBloomFilter(1, 1e-299, tightening=0.5).tables[0].num_hashes == 995  # p0 = 5e-300


def test_from_capacity_refuses_a_rate_that_needs_more_hash_functions():
    assert BloomFilter.from_capacity(10, 1e-300).num_hashes == 997  # log2(1e300), under 1024
    with pytest.raises(ValueError, match=r"fpp=1e-320 needs k = 1063 hash functions, more than 1024"):
        BloomFilter.from_capacity(10, 1e-320)


# --- what a constructor accepts reads back ----------------------------------------------------
@settings(deadline=None)
@given(st.integers(1, 1 << 16), st.integers(1, MAX_HASHES), st.lists(st.text(max_size=8), max_size=5))
def test_every_filter_a_constructor_accepts_reads_back(m, k, keys):
    f = BloomFilter(m, k)
    f.add_many(keys)
    for copy in (BloomFilter.from_bytes(f.to_bytes()), pickle.loads(pickle.dumps(f))):
        assert copy == f and all(key in copy for key in keys)


def test_the_old_unreadable_filter_is_refused_when_made():
    with pytest.raises(ValueError, match=r"num_hashes must be an int in 1\.\.1024, got 70000"):
        BloomFilter(64, 70_000)  # it used to save bytes that from_bytes refused


@pytest.mark.parametrize("m, k", [(64, MAX_HASHES + 1), (64, 2 ** 40), (MAX_NUM_BITS + 1, 3)])
def test_from_bytes_refuses_a_header_no_constructor_would_write(m, k):
    header = struct.pack("<4sHHQQ", b"BLMD", 1, BloomFilter.HASHING, m, k)
    with pytest.raises(ValueError, match="corrupt header"):
        BloomFilter.from_bytes(header + bytes(8))


def test_real_systems_keep_their_own_limits():
    assert GuavaBloomFilter(1, 255).num_hash_functions == 255
    with pytest.raises(ValueError, match=r"num_hash_functions must be an int in 1\.\.255"):
        GuavaBloomFilter(1, 256)
    with pytest.raises(ValueError, match=r"num_words must be an int in 1\.\.2147483647"):
        GuavaBloomFilter(2 ** 31, 3)
    with pytest.raises(ValueError, match="at most 255"):
        GuavaBloomFilter.create(10, 1e-100)
    assert Bip37Filter(1, 1e-30).n_hash_funcs == MAX_HASH_FUNCS == 50
    payload = lambda k: compact_size(1) + b"\x01" + k.to_bytes(4, "little") + bytes(5)  # noqa: E731
    with pytest.raises(ValueError, match="exceeds BIP37's limits"):
        Bip37Filter.deserialize(payload(51))
    assert Bip37Filter.deserialize(payload(MAX_HASHES), enforce_limits=False).n_hash_funcs == 1024
    for k in (MAX_HASHES + 1, 2 ** 32 - 1):
        with pytest.raises(ValueError, match="at most 1024 can be read"):
            Bip37Filter.deserialize(payload(k), enforce_limits=False)


@pytest.mark.parametrize("make, name", [
    (lambda: BitVector(33), "hash_bits"), (lambda: SaltedBloomFilter(3, 0), "hash_bits"),
    (lambda: BitArray(MAX_NUM_BITS + 1), "num_bits"), (lambda: BitArray(8, word_bits=7), "word_bits"),
    (lambda: GuavaBloomFilter(0, 3), "num_words"), (lambda: GuavaBloomFilter(1, 3, 2), "strategy"),
    (lambda: GuavaBloomFilter.create(-1, 0.1), "expected_insertions"),
    (lambda: Bip37Filter(2 ** 32, 0.1), "n_elements"), (lambda: Bip37Filter(3, 0.1, flags=256), "flags"),
    (lambda: BloomFilter.from_capacity(MAX_NUM_BITS + 1, 0.1), "expected_items"),
    (lambda: SizeReport(num_bits=96, num_hashes=3, items=0), "items"),
    (lambda: SizeReport(num_bits=MAX_NUM_BITS + 1, num_hashes=3, items=10), "num_bits"),
    (lambda: SizeReport(num_bits=96, num_hashes=3, items=10, target_fpp=1.5), "target_fpp"),
    (lambda: CountingBloomFilter(MAX_NUM_BITS + 1, 3), "num_cells"),
    (lambda: StableBloomFilter(10, 3, 9, 1), "bits_per_cell"),
    (lambda: StableBloomFilter(10, 3, 2, 2 ** 20 + 1), "decrements"),
    (lambda: StableBloomFilter(10, 3, 2, 1, seed=2 ** 64), "seed"),
    (lambda: RotatingBloomFilter(2 ** 40 + 1, 0.1, 2), "capacity"),
    (lambda: RotatingBloomFilter(10, 0.1, 1025), "generations"),
    (lambda: ScalableBloomFilter(2 ** 40 + 1, 0.1), "initial_capacity"),
    (lambda: ScalableBloomFilter(10, 0.1, growth=65), "growth"),
    (lambda: AgePartitionedBloomFilter(3, 1025, 10), "extra_slices"),
    (lambda: AgePartitionedBloomFilter(3, 2, 2 ** 36 + 1), "generation_size"),
])
def test_every_other_parameter_has_a_bound_that_names_it(make, name):
    with pytest.raises(ValueError, match=name):
        make()


# --- big sizes fail clearly, before anything is allocated --------------------------------------
@pytest.mark.parametrize("make, message", [
    (lambda: BloomFilter(2 ** 40, 3), "num_bits=1099511627776 needs 128 GiB of bit storage"),
    (lambda: BloomFilter.from_capacity(10 ** 12, 0.001),
     r"expected_items=1000000000000 at fpp=0.001 \(num_bits=14377587566052\) needs 1.63 TiB"),
    (lambda: GuavaBloomFilter(2 ** 31 - 1, 3), "num_words=2147483647 needs 16.0 GiB"),
    (lambda: GuavaBloomFilter.create(10 ** 9, 0.001), "expected_insertions=1000000000 at fpp=0.001"),
    (lambda: SaltedBloomFilter(3, 32), "hash_bits=32 needs 512 MiB"),
    (lambda: BitArray(2 ** 40), "num_bits=1099511627776 needs 128 GiB"),
    (lambda: experiments.simulate_false_positive_rate(num_bits=2 ** 33, num_hashes=1, num_items=1, num_queries=1, seed=0), "num_bits=8589934592 needs 8.00 GiB"),
    (lambda: CountingBloomFilter(2 ** 32, 3), "num_cells=4294967296 needs 2.00 GiB"),
    (lambda: StableBloomFilter(2 ** 31, 3, 8, 1), "num_cells=2147483648 needs 2.00 GiB"),
    (lambda: RotatingBloomFilter(10 ** 9, 0.001, 4),
     r"capacity=1000000000, fpp=0.001, generations=4 \(4 generations of num_bits=\d+\) needs"),
    (lambda: AgePartitionedBloomFilter(10, 20, 10 ** 9),
     r"num_hashes=10, extra_slices=20, generation_size=1000000000 \(30 slices .*\) needs"),
    (lambda: BlockedBloomFilter(2 ** 33), "num_bits=8589934592 needs 1.00 GiB"),
    (lambda: BlockedBloomFilter.from_capacity(10 ** 10, 0.001),
     r"expected_items=10000000000 at fpp=0.001 \(num_bits=\d+\) needs"),
    (lambda: ScalableBloomFilter(10 ** 10, 0.001),
     r"sub-filter 0 \(initial_capacity \* growth\*\*0 = 10000000000 keys .*\) needs"),
])
def test_a_size_this_machine_cannot_hold_names_the_argument_and_the_memory(machine, make, message):
    machine(256 * 2 ** 20)
    with pytest.raises(StorageTooLarge, match=message + r".*this machine has 256 MiB available"):
        make()


def test_the_error_is_both_a_value_error_and_a_memory_error(machine):
    machine(4 * GIB)
    with pytest.raises(ValueError):
        BloomFilter(2 ** 36, 3)
    with pytest.raises(MemoryError):
        BloomFilter(2 ** 36, 3)
    assert BloomFilter(2 ** 20, 3).nbytes == 2 ** 17  # what fits is made


def test_no_machine_holds_half_an_exbibyte():
    with pytest.raises(StorageTooLarge, match="num_bits=4611686018427387904 needs 512 PiB"):
        BloomFilter(2 ** 62, 3)


def test_from_capacity_names_expected_items_when_no_filter_could_hold_it():
    with pytest.raises(ValueError, match="expected_items=4611686018427387904 at fpp=0.01 needs"):
        BloomFilter.from_capacity(2 ** 62, 0.01)


def test_numpys_bare_memory_error_is_made_clear(machine, monkeypatch):
    machine(None)  # no probe on this machine: the allocation itself fails

    def refuse(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(checks.np, "zeros", refuse)
    with pytest.raises(StorageTooLarge, match="num_bits=68719476736 needs 8.00 GiB of bit storage, "
                                              "and this machine could not allocate it"):
        BloomFilter(2 ** 36, 3)


def test_the_memory_probe_reads_a_container_limit(tmp_path):
    (tmp_path / "memory.max").write_text("max\n")
    assert checks._cgroup_room(tmp_path) is None
    (tmp_path / "memory.max").write_text(f"{4 * GIB}\n")
    (tmp_path / "memory.current").write_text(f"{GIB}\n")
    assert checks._cgroup_room(tmp_path) == 3 * GIB
    assert checks._cgroup_room(tmp_path / "absent") is None
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal: 100 kB\nMemAvailable:    2048 kB\n")
    assert checks._meminfo("MemAvailable", meminfo) == 2048 * 1024
    assert checks.available_memory() is None or checks.available_memory() > 0


def test_huge_k_paths_refuse_at_once_instead_of_running_for_minutes():
    for slow in (lambda: BloomFilter(64, 2 ** 40).add("x"), lambda: SaltedBloomFilter(10 ** 7, 8),
                 lambda: theory.exact_false_positive_rate(num_bits=10 ** 6, num_hashes=5000, n=1000),
                 lambda: theory.measured_rate_std(num_bits=10 ** 6, num_hashes=3000, n=1000, num_queries=100)):
        with pytest.raises(ValueError, match="num_hashes"):
            slow()


# --- whole-filter reads in memory small next to the filter -----------------------------------
# numpy < 2.0 has no bitwise_count: there the byte table is the only path, and the only one tested
COUNT_PATHS = {"byte table": True, **({"numpy's bitwise_count": False}
                                      if bits_module._HAS_BITWISE_COUNT else {})}


@pytest.mark.parametrize("fallback", COUNT_PATHS.values(), ids=COUNT_PATHS.keys())
@pytest.mark.parametrize("size", [0, 1, 7, 8, 4099, bits_module._COUNT_CHUNK + 13])
def test_count_ones_is_exact_on_every_path(monkeypatch, fallback, size):
    if fallback:
        monkeypatch.setattr(bits_module, "_HAS_BITWISE_COUNT", False)
    data = np.random.default_rng(size).integers(0, 256, size=size, dtype=np.uint8)
    assert bits_module.count_ones(data) == sum(bin(byte).count("1") for byte in data.tolist())


def _peak_extra_bytes(read) -> int:
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        read()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def test_whole_filter_reads_need_little_memory_next_to_the_filter():
    m = 2 ** 28  # 32 MiB of bits
    bloom = BloomFilter(m, 5)
    bloom.bits.data[:] = np.random.default_rng(7).integers(0, 256, size=m // 8, dtype=np.uint8)
    guava = GuavaBloomFilter(m // 64, 5)
    guava.bits.data[:] = bloom.bits.data
    reads = {"bits_set": bloom.bits_set, "fill_ratio": lambda: bloom.fill_ratio,
             "approximate_count": bloom.approximate_count,
             "current_false_positive_rate": bloom.current_false_positive_rate,
             "repr": lambda: repr(bloom.bits), "BitArray.count": bloom.bits.count,
             "Guava bit_count": guava.bit_count, "Guava expected_fpp": guava.expected_fpp}
    for name, read in reads.items():
        extra = _peak_extra_bytes(read)
        assert extra < 2 * 2 ** 20, (name, extra)  # under 2 MiB next to 32 MiB (was 256 MiB)
    assert bloom.bits_set() == sum(bin(b).count("1") for b in bloom.bits.data[:4096].tolist()) + \
        bits_module.count_ones(bloom.bits.data[4096:])
    assert math.isclose(bloom.fill_ratio, bloom.bits_set() / m)


def test_to_bools_says_what_it_costs():
    assert "one byte per bit" in BitArray.to_bools.__doc__
    bits = BitArray(20)
    bits.set(19)
    assert bits.to_bools().dtype == bool and bits.to_bools().nonzero()[0].tolist() == [19]


# --- extreme rates and huge keys: the error names what the caller passed ----------------------
def test_extreme_rates_are_refused_naming_fpp():
    from bloomedu import BlockedBloomFilter
    from bloomedu.variants.theory import stable_decrements_for
    with pytest.raises(ValueError, match=r"fpp=5e-324 is too small"):
        stable_decrements_for(num_cells=20_000, num_hashes=4, max_value=15, fpp=5e-324)
    with pytest.raises(ValueError, match=r"expected_items=50 at fpp=4e-321 needs more than 2\*\*32 blocks"):
        BlockedBloomFilter.from_capacity(50, 4e-321)


def test_a_huge_int_key_is_refused_with_a_message_that_fits():
    """str() of an int of 16,610 bits is past Python's 4,300-digit limit: the message gives its
    size instead of its digits."""
    f = BloomFilter(100, 3)
    for add in (f.add, lambda key: f.add_many([1, key])):
        with pytest.raises(ValueError, match="an int of 16610 bits"):
            add(10 ** 5000)
    assert f.bits_set() == 0
