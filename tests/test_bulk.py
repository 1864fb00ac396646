"""The bulk path: ``add_many``/``contains_many`` do exactly what ``add``/``in`` do.

Every comparison is against the per-key methods (which ``test_filter.py`` pins
to mmh3 and the double-hashing formula).  A property test runs every kind of
batch the bulk path takes (integer arrays of every dtype and byte order, views,
``S``/``U`` arrays, lists, tuples, generators and object arrays of str, bytes,
int, numpy integers, bytearray and memoryview) through a staged and a large
filter; every kind it refuses is refused with a clear error, the filter unchanged.  The memory check measures with
tracemalloc that a bulk call's working memory does not grow with the batch.
"""

import tracemalloc
from unittest import mock

import mmh3
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import bloomedu.core.hashing as hashing
import bloomedu.kernels.bloom as bloom_kernels
import bloomedu.kernels.murmur as murmur_kernels
from bloomedu.kernels import backend
from bloomedu import BloomFilter
from bloomedu.variants import BlockedBloomFilter
from bloomedu.core.hashing import key_to_bytes
from bloomedu.kernels.murmur import murmur3_128_uint64

RNG_SEED = 20240611


def per_key(m: int, k: int, keys) -> BloomFilter:
    f = BloomFilter(m, k)
    for key in keys:
        f.add(key)
    return f


def random_keys(kind: str, size: int, seed: int):
    rng = np.random.default_rng(seed)
    if kind == "uint64":
        return rng.integers(0, 2 ** 64 - 1, size, dtype=np.uint64, endpoint=True)
    if kind == "int64":
        return rng.integers(-2 ** 63, 2 ** 63 - 1, size, dtype=np.int64, endpoint=True)
    if kind == "int32":
        return rng.integers(-2 ** 31, 2 ** 31 - 1, size, dtype=np.int32, endpoint=True)
    if kind == "str":
        return [f"https://host{v % 97}.example/{v}/città" for v in rng.integers(0, 10 ** 12, size)]
    if kind == "bytes":
        return [rng.bytes(int(length)) for length in rng.integers(0, 40, size)]
    if kind == "mixed":
        values = rng.integers(-2 ** 40, 2 ** 40, size).tolist()
        makers = [str, lambda v: str(v).encode(), int, lambda v: np.int64(v),
                  lambda v: bytearray(str(v), "ascii")]
        return [makers[i % len(makers)](v) for i, v in enumerate(values)]
    raise AssertionError(kind)


# The boundary tests cross chunk boundaries with small chunks patched in: the code that runs is
# the same, with 32 times fewer keys than real chunks would need. A chunk is still several
# pieces (str and bytes keys are hashed a piece at a time), as with the real sizes.
CHUNK, PIECE = 1024, 256


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of CHUNK keys, hashed in pieces of PIECE keys, for this test."""
    real_chunk, real_piece = hashing.CHUNK_KEYS, murmur_kernels.PIECE_KEYS
    assert real_chunk % real_piece == 0 and real_chunk // real_piece >= CHUNK // PIECE > 1
    monkeypatch.setattr(hashing, "CHUNK_KEYS", CHUNK)
    monkeypatch.setattr(bloom_kernels, "POOL_KEYS", CHUNK)
    monkeypatch.setattr(murmur_kernels, "PIECE_KEYS", PIECE)


KINDS = ["uint64", "int64", "int32", "str", "bytes", "mixed"]
SIZES = {"small batch": 300, "several chunks": 3 * CHUNK + 17}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("size", SIZES.values(), ids=SIZES.keys())
def test_add_many_sets_the_bits_add_sets(kind, size, small_chunks):
    keys = random_keys(kind, size, seed=size)
    m, k = 3 * size + 11, 5  # crowded: many repeated positions within a batch
    bulk = BloomFilter(m, k)
    bulk.add_many(keys)
    one_by_one = per_key(m, k, keys.tolist() if isinstance(keys, np.ndarray) else keys)
    assert bulk.bits == one_by_one.bits


@pytest.mark.parametrize("kind", KINDS)
def test_a_sparse_batch_sets_the_bits_add_sets(kind):  # below m/64 positions: np.bitwise_or.at
    keys = random_keys(kind, 200, seed=11)
    bulk = BloomFilter(1_000_003, 4)
    bulk.add_many(keys)
    as_list = keys.tolist() if isinstance(keys, np.ndarray) else keys
    assert bulk.bits == per_key(1_000_003, 4, as_list).bits


@pytest.mark.parametrize("kind", KINDS)
def test_contains_many_answers_what_in_answers(kind, small_chunks):
    inserted = random_keys(kind, 2000, seed=1)
    queried = random_keys(kind, 3 * CHUNK // 2, seed=2)
    f = BloomFilter(12_000, 4)
    f.add_many(inserted)
    as_list = queried.tolist() if isinstance(queried, np.ndarray) else queried
    answers = f.contains_many(queried)
    assert answers.dtype == bool and answers.shape == (len(as_list),)
    assert answers.tolist() == [key in f for key in as_list]
    assert f.contains_many(inserted).all()
    assert 0 < answers.sum() < len(as_list)  # some false positives, not all


def test_sort_path_for_filters_too_big_to_stage(monkeypatch):
    monkeypatch.setattr(bloom_kernels, "STAGE_LIMIT_BITS", 0)
    keys = random_keys("uint64", 40_000, seed=5)
    bulk = BloomFilter(50_000, 3)
    bulk.add_many(keys)
    assert bulk.bits == per_key(50_000, 3, keys.tolist()).bits


def test_other_inputs_generators_arrays_of_str_and_2d_arrays():
    words = [f"w{i:03d}" for i in range(500)]  # one width: a U4 array holds them faithfully
    expected = per_key(4096, 3, words)
    for keys in (iter(words), (w for w in words), np.array(words), np.array(words, dtype=object),
                 tuple(words)):
        f = BloomFilter(4096, 3)
        f.add_many(keys)
        assert f.bits == expected.bits
    grid = np.arange(60, dtype=np.uint64).reshape(6, 10)
    f = BloomFilter(4096, 3)
    f.add_many(grid)
    assert f.bits == per_key(4096, 3, range(60)).bits
    assert f.contains_many(grid).shape == (60,)


def test_empty_batches():
    f = BloomFilter(100, 2)
    f.add_many([])
    f.add_many(np.zeros(0, dtype=np.uint64))
    assert f.bits_set() == 0
    assert f.contains_many([]).shape == (0,) and f.contains_many(iter([])).dtype == bool


@settings(deadline=None)
@given(hnp.arrays(np.int64, st.integers(0, 300)), st.integers(1, 5000), st.integers(1, 9))
def test_no_inserted_int_key_is_ever_reported_absent(keys, m, k):
    f = BloomFilter(m, k)
    f.add_many(keys)
    assert f.contains_many(keys).all()
    assert f.bits == per_key(m, k, keys.tolist()).bits


@settings(deadline=None)
@given(st.lists(st.one_of(st.text(max_size=20), st.binary(max_size=20),
                          st.integers(-2 ** 63, 2 ** 64 - 1)), max_size=80),
       st.integers(1, 3000), st.integers(1, 9))
def test_no_inserted_key_of_any_type_is_ever_reported_absent(keys, m, k):
    f = BloomFilter(m, k)
    f.add_many(keys)
    assert f.contains_many(keys).all()
    assert f.bits == per_key(m, k, keys).bits


# --- the integer hash is MurmurHash3 x64 128 of the key's 8 little-endian bytes -------------
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint32, np.int32, np.int64])
def test_vectorised_hash_is_mmh3_for_every_integer_dtype(dtype):
    info = np.iinfo(dtype)
    keys = np.random.default_rng(9).integers(info.min, info.max, 500, dtype=dtype, endpoint=True)
    h1, h2 = murmur3_128_uint64(keys[::3])  # a strided view, too
    expected = [mmh3.hash64(key_to_bytes(int(key)), 0, signed=False) for key in keys[::3]]
    assert list(zip(h1.tolist(), h2.tolist())) == expected


# --- every kind of key the bulk path takes, on a staged and on a large filter ----------------
INT_DTYPES = [np.dtype(f"{order}{kind}{size}") for kind in "ui" for size in (1, 2, 4, 8)
              for order in "<>"]
VIEWS = {"as is": lambda a: a, "strided": lambda a: a[::2], "reversed": lambda a: a[::-1],
         "transposed": lambda a: a.reshape(2, -1).T if a.size % 2 == 0 else a[::-1]}
NOT_NUL = st.integers(1, 255).map(lambda b: bytes([b]))


def object_array(keys: list) -> np.ndarray:
    array = np.empty(len(keys), dtype=object)
    for i, key in enumerate(keys):  # one by one: numpy would read a memoryview as a row
        array[i] = key
    return array


@st.composite
def int_arrays(draw) -> list[np.ndarray]:
    """The same drawn values in every integer dtype and byte order (wrapped to fit), one view."""
    values = draw(hnp.arrays(np.int64, st.integers(0, 40), unique=draw(st.booleans())))
    view = VIEWS[draw(st.sampled_from(sorted(VIEWS)))]
    return [view(values.astype(dtype)) for dtype in INT_DTYPES]


@st.composite
def fixed_width_arrays(draw):
    """S or U arrays (either byte order for U) whose elements all fill the width: faithful."""
    width, size = draw(st.integers(1, 12)), draw(st.integers(0, 30))
    if draw(st.booleans()):
        keys = draw(st.lists(st.tuples(st.binary(min_size=width - 1, max_size=width - 1), NOT_NUL)
                             .map(b"".join), min_size=size, max_size=size))
        array = np.array(keys, dtype=f"S{width}")
    else:
        keys = draw(st.lists(st.text(min_size=width, max_size=width)
                             .filter(lambda t: not t.endswith("\0")), min_size=size, max_size=size))
        array = np.array(keys, dtype=f"{draw(st.sampled_from('<>'))}U{width}")
    return VIEWS[draw(st.sampled_from(sorted(VIEWS)))](array)


SCALARS = st.one_of(st.text(max_size=20), st.binary(max_size=20),
                    st.integers(-2 ** 63, 2 ** 64 - 1),
                    st.builds(lambda v, t: t(v), st.integers(-2 ** 31, 2 ** 31 - 1),
                              st.sampled_from([np.int32, np.int64, np.intp])),
                    st.integers(0, 2 ** 64 - 1).map(np.uint64),
                    st.binary(max_size=20).map(bytearray), st.binary(max_size=20).map(memoryview))


BATCH_KINDS = ["int arrays", "S/U array", "str list", "bytes list", "mixed list", "object array",
               "generator", "tuple"]


@st.composite
def batches(draw, kind: str):
    """(kind, functions that make the batches afresh, the keys as add takes them one by one)."""
    if kind == "int arrays":
        arrays = draw(int_arrays())
        return kind, [lambda a=a: a for a in arrays], [int(x) for a in arrays for x in a.ravel()]
    if kind == "S/U array":
        array = draw(fixed_width_arrays())
        return kind, [lambda: array], array.ravel().tolist()
    elements = {"str list": st.text(max_size=20), "bytes list": st.binary(max_size=20)}
    keys = draw(st.lists(elements.get(kind, SCALARS), max_size=60))
    make = {"object array": lambda: object_array(keys), "generator": lambda: (k for k in keys),
            "tuple": lambda: tuple(keys)}.get(kind, lambda: list(keys))
    return kind, [make], keys


# A filter over 40 Mi bits (5 MiB) cannot stage its writes: it takes the large path
# (bloomedu.kernels.bloom). The property runs that path on a small filter, with the limit patched
# to 0 bytes: the same code (positions below 2**32 in both), without allocating and comparing
# 5 MiB filters at each example. The tests further down use real 45 Mi-bit filters.
LARGE_M = 45 * 2 ** 20 + 3
FILTERS = {"staged": (4099, 5, None, False), "large path": (40_009, 5, None, True),
           "large path, sorted writes": (40_009, 5, 0.0, True),
           "native": (4099, 5, "native", False)}  # the compiled walk: no staging, no large path


def test_a_filter_over_40_mi_bits_takes_the_large_path():
    assert BloomFilter(40 * 2 ** 20, 5).bits.stages_everything
    assert not BloomFilter(40 * 2 ** 20 + 1, 5).bits.stages_everything
    assert not BloomFilter(LARGE_M, 5).bits.stages_everything


@pytest.mark.parametrize("kind", BATCH_KINDS)
@pytest.mark.parametrize("m, k, threshold, large", FILTERS.values(), ids=FILTERS.keys())
@settings(deadline=None)
@given(data=st.data())
def test_every_key_kind_add_many_and_add_agree(m, k, threshold, large, kind, data):
    _, makers, keys = data.draw(batches(kind))
    limit = 0 if large else bloom_kernels.STAGE_LIMIT_BITS
    kernels = "native" if threshold == "native" else "numpy"
    threshold = None if threshold == "native" else threshold
    with mock.patch.object(bloom_kernels, "SCATTER_SHARE",
                           bloom_kernels.SCATTER_SHARE if threshold is None else threshold), \
            mock.patch.object(bloom_kernels, "STAGE_LIMIT_BITS", limit), backend.use(kernels):
        assert BloomFilter(m, k).bits.stages_everything == (not large)
        bulk = BloomFilter(m, k)
        for make in makers:
            bulk.add_many(make())
        one_by_one = per_key(m, k, keys)
        assert bulk.bits == one_by_one.bits  # add_many sets exactly the bits add sets
        assert all(key in bulk for key in keys)  # add_many <-> in
        found = [one_by_one.contains_many(make()) for make in makers]  # add <-> contains_many
        assert all(f.dtype == bool for f in found) and np.concatenate(found).all()
        assert sum(f.size for f in found) == len(keys)


@pytest.mark.parametrize("m, k", [(4099, 5), (LARGE_M, 5)], ids=["staged", "large"])
@pytest.mark.parametrize("make, where", [
    (lambda: np.array([b"ab", b"c", b"de"]), r"keys\[1\] of the S2 array"),
    (lambda: np.frombuffer(b"\x01\x02\x00" * 3, "S3"), r"keys\[0\] of the S3 array"),
    (lambda: np.array(["xy", "zw", "q"], dtype=">U2"), r"keys\[2\] of the U2 array"),
    (lambda: np.array([["ab", "cd"], ["ef", "g"]]).T, r"keys\[\(1, 1\)\] of the U2 array"),
    (lambda: np.array(["abc\0"] * 3, dtype="U4")[::2], r"keys\[0\] of the U4 array"),
], ids=["shorter bytes", "a digest ending in 0x00", "shorter str", "2-d, transposed", "strided"])
def test_a_fixed_width_element_ending_in_nul_is_refused_by_name(make, where, m, k):
    f = BloomFilter(m, k)
    f.add_many(["already", "here"])
    before = f.bits.copy()
    for call in (f.add_many, f.contains_many):
        with pytest.raises(ValueError, match=where + " ends in NUL: .* pass a list of "):
            call(make())
    assert f.bits == before


def test_a_digest_ending_in_nul_is_found_when_passed_as_the_message_says():
    digests = np.frombuffer(bytes(range(1, 20)) + b"\x00" + bytes(range(21, 41)), "S20")
    f = BloomFilter(4099, 5)
    f.add_many(digests.view("V20").tolist())  # the full 20 bytes of each
    full = [bytes(range(1, 20)) + b"\x00", bytes(range(21, 41))]
    assert all(d in f for d in full) and f.contains_many(full).all()
    assert f.contains_many(digests[1:]).all()  # an element not ending in NUL: faithful as is


REFUSED = {
    "float array": (lambda: np.array([1.0, 2.0]), TypeError, "must hold integers, str or bytes"),
    "float16 array": (lambda: np.zeros(3, np.float16), TypeError, "add refuses float and bool"),
    "bool array": (lambda: np.array([True, False]), TypeError, "must hold integers, str or bytes"),
    "complex array": (lambda: np.zeros(2, complex), TypeError, "must hold integers, str or bytes"),
    "datetime array": (lambda: np.zeros(2, "M8[s]"), TypeError, "must hold integers, str or"),
    "float in a list": (lambda: ["a", 1.5], TypeError, "key must be str, bytes or int, not float"),
    "bool in a list": (lambda: [b"a", True], TypeError, "not bool"),
    "numpy float": (lambda: [np.float64(1)], TypeError, "not float64"),
    "None in an object array": (lambda: object_array(["a", None]), TypeError, "not NoneType"),
    "int beyond 64 bits": (lambda: iter([1, 2 ** 64]), ValueError, r"-2\*\*63 .. 2\*\*64-1"),
    "lone surrogate": (lambda: ["ok", "\ud800"], UnicodeEncodeError, "surrogates not allowed"),
    "a str": (lambda: "abc", TypeError, "iterable of keys"),
}


@pytest.mark.parametrize("m, k, kernels", [(4099, 5, "numpy"), (LARGE_M, 5, "numpy"),
                                           (4099, 5, "native")], ids=["staged", "large", "native"])
@pytest.mark.parametrize("make, error, message", REFUSED.values(), ids=REFUSED.keys())
def test_each_refused_kind_is_a_clear_error_and_changes_nothing(make, error, message, m, k,
                                                                kernels):
    with backend.use(kernels):
        f = BloomFilter(m, k)
        f.add_many(np.arange(50, dtype=np.uint64))
        before = f.bits.copy()
        for call in (f.add_many, f.add_many_new, f.contains_many):
            with pytest.raises(error, match=message):
                call(make())
    assert f.bits == before


BAD_KEYS = [1.5, None, True, 2 ** 64, "\ud800", [1], np.float32(2)]


@settings(deadline=None)
@given(batch=st.sampled_from(BATCH_KINDS).flatmap(batches), bad=st.sampled_from(BAD_KEYS),
       where=st.integers(0, 60), large=st.booleans(),
       shape=st.sampled_from([list, tuple, iter, object_array]),
       kernels=st.sampled_from(["numpy", "native"]))
def test_a_bad_key_anywhere_in_any_batch_changes_nothing(batch, bad, where, large, shape, kernels):
    keys = list(batch[2])
    keys.insert(min(where, len(keys)), bad)
    with backend.use(kernels):
        f = BloomFilter(LARGE_M if large else 4099, 5)
        f.add_many(["already", "here"])
        before = f.bits.copy()
        for call in (f.add_many, f.add_many_new, f.contains_many):
            with pytest.raises((TypeError, ValueError), match="key|surrogate"):
                call(shape(keys))
    assert f.bits == before


# --- bad input: a clear error, and the filter unchanged -------------------------------------
def bad_in_the_middle(bad, size: int) -> list:
    keys = [f"key-{i}" for i in range(size)]
    keys[size // 2 + 3] = bad
    return keys


# On one thread too (workers): there a large path that wrote a job's bits before hashing the
# next chunk shows it; two workers hash the next job before the first is written.
@pytest.mark.parametrize("staged", [True, False], ids=["scratch", "checking pass"])
@pytest.mark.parametrize("bad, error", [(1.5, TypeError), (None, TypeError), (True, TypeError),
                                        (np.float32(1), TypeError), (2 ** 64, ValueError),
                                        ("\ud800", UnicodeEncodeError),
                                        (np.frombuffer(b"12345678", np.uint8), TypeError)])
def test_bad_key_in_the_middle_of_add_many_changes_nothing(bad, error, staged, monkeypatch,
                                                          small_chunks, workers):
    if not staged:
        monkeypatch.setattr(bloom_kernels, "STAGE_LIMIT_BITS", 0)
    f = BloomFilter(20_000, 4)
    f.add_many(["already", "here"])
    before = f.bits.copy()
    with pytest.raises(error):
        f.add_many(bad_in_the_middle(bad, 3 * CHUNK))
    assert f.bits == before
    with pytest.raises(error):
        f.add_many(bad_in_the_middle(bad, 10))
    assert f.bits == before
    with pytest.raises(error):
        f.contains_many(bad_in_the_middle(bad, 10))


def test_bad_key_in_a_generator_changes_nothing(small_chunks):
    f = BloomFilter(20_000, 4)
    with pytest.raises(TypeError, match="key must be str, bytes or int, not float"):
        f.add_many(x for x in [*range(5 * CHUNK), 0.5])
    assert f.bits_set() == 0


@pytest.mark.parametrize("keys, message", [
    ("abc", "iterable of keys"), (b"abc", "iterable of keys"), (5, "iterable of keys"),
    (np.uint64(5), "iterable of keys"), (np.array([1.0, 2.0]), "must hold integers, str or bytes"),
    (np.array([True]), "must hold integers, str or bytes"), (None, "not iterable"),
])
def test_add_many_rejects_non_batches(keys, message):
    f = BloomFilter(100, 2)
    with pytest.raises(TypeError, match=message):
        f.add_many(keys)
    with pytest.raises(TypeError, match=message):
        f.contains_many(keys)
    assert f.bits_set() == 0


# --- memory: bounded whatever the batch size -------------------------------------------------
def peak_bytes(call) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("kind", ["uint64", "str"])
def test_working_memory_does_not_grow_with_the_batch(kind, monkeypatch):
    monkeypatch.setattr(hashing, "CHUNK_KEYS", 8192)  # the same mechanism, smaller
    monkeypatch.setattr(bloom_kernels, "POOL_KEYS", 8192)
    m, k = 200_000, 4
    small, large = random_keys(kind, 3 * 8192, seed=1), random_keys(kind, 12 * 8192, seed=2)
    peaks = {}
    for name, keys in (("small", small), ("large", large)):
        f = BloomFilter(m, k)
        peaks[name, "add"] = peak_bytes(lambda: f.add_many(keys))
        peaks[name, "query"] = peak_bytes(lambda: f.contains_many(keys)) - len(keys)  # the answer
    scratch = m  # one byte per bit while staging
    chunk_work = 4 << 20  # hashes, positions and (for str) the encoded keys of one chunk
    for step in ("add", "query"):
        assert peaks["large", step] < peaks["small", step] * 1.25 + 64_000, peaks
    assert peaks["large", "add"] < scratch + chunk_work, peaks


@pytest.mark.parametrize("fill", ["empty", "full"])
def test_contains_many_on_an_empty_and_a_full_filter(fill, small_chunks):
    f = BloomFilter(1000, 6)
    if fill == "full":
        f.bits.set_many(np.arange(1000))
    keys = random_keys("uint64", 2 * CHUNK + 5, seed=3)
    assert f.contains_many(keys).tolist() == [fill == "full"] * keys.size


def test_strided_and_fortran_ordered_arrays():
    grid = random_keys("int64", 600, seed=8).reshape(20, 30)
    for keys in (grid[:, ::2], grid.T, np.asfortranarray(grid), grid[::3]):
        f = BloomFilter(5000, 3)
        f.add_many(keys)
        assert f.bits == per_key(5000, 3, keys.ravel().tolist()).bits
        assert f.contains_many(keys).tolist() == [True] * keys.size
    words = np.array([f"w{i:03d}" for i in range(600)]).reshape(20, 30).T
    f = BloomFilter(5000, 3)
    f.add_many(words)
    assert f.bits == per_key(5000, 3, words.ravel().tolist()).bits


@pytest.mark.parametrize("num_hashes, size, first", [(89, 48, 0), (3, 5, 7), (10, 7000, 0),
                                                     (1, 1, 0), (89, 48, 15), (8, 4096, 3),
                                                     (8, 4097, 3)])  # SMALL_TABLE: one pass, rows
def test_the_vectorised_positions_equal_the_scalar_formula(num_hashes, size, first):
    """bit_positions (one i, many keys) and the (k, n) table built from it give, key by key,
    what bit_position gives, steps past 2**63 included; so does the kernels' running sum."""
    from bloomedu.core.filter import bit_indices, positions
    from bloomedu.kernels.bloom import next_positions

    rng = np.random.default_rng(RNG_SEED)
    h1 = rng.integers(0, 2 ** 64, size, dtype=np.uint64, endpoint=False)
    h2 = rng.integers(0, 2 ** 64, size, dtype=np.uint64, endpoint=False) | np.uint64(1)
    h1[:2], h2[:2] = [0, 2 ** 64 - 1][:size], [2 ** 64 - 1, 2 ** 63 + 1][:size]  # the edges
    m = 1_000_003
    table = positions(h1, h2, num_bits=m, num_hashes=num_hashes, first=first)
    assert table.shape == (num_hashes, size)
    running, out, scratch = h1 + h2 * np.uint64(first), np.empty_like(h1), np.empty_like(h1)
    for i in range(num_hashes):
        row = next_positions(running, h2, int(i > 0), np.uint64(m), out, scratch)
        assert np.array_equal(row, table[i])
    for j in range(min(size, 5)):
        every = bit_indices(int(h1[j]), int(h2[j]), num_bits=m, num_hashes=first + num_hashes)
        assert table[:, j].tolist() == every[first:]


# --- pyarrow's scalars and arrays (a parquet column of IDs), by the interface pyarrow has ----------
class _ArrowScalar:
    """What the filters use of a pyarrow scalar (``pa.scalar("x")``): ``as_py`` and ``type``."""

    def __init__(self, value, type_name):
        self.value, self.type = value, type_name

    def as_py(self):
        return self.value


class _ArrowArray:
    """What the filters use of a pyarrow Array or ChunkedArray: ``type``, ``null_count``,
    ``to_pylist`` and the numpy conversion."""

    def __init__(self, values, type_name):
        self.values, self.type = values, type_name
        self.null_count = sum(value is None for value in values)

    def to_pylist(self):
        return list(self.values)

    def __array__(self, dtype=None, copy=None):
        return np.array(self.values, dtype=dtype or np.int64)

    def __len__(self):
        return len(self.values)


for _kind in (_ArrowScalar, _ArrowArray):  # pyarrow's classes live in pyarrow.lib
    _kind.__module__ = "pyarrow.lib"


@pytest.mark.parametrize("make", [lambda: BloomFilter(4096, 5),
                                  lambda: BlockedBloomFilter.from_capacity(200, 0.01)],
                         ids=["BloomFilter", "BlockedBloomFilter"])
def test_pyarrow_keys_are_the_keys_they_hold(make):
    arrow, plain = make(), make()
    arrow.add(_ArrowScalar("x", "string"))
    arrow.add(_ArrowScalar(5, "int64"))
    arrow.add_many(_ArrowArray(["y", "città"], "string"))
    arrow.add_many(_ArrowArray([7, -1], "int64"))
    arrow.add_many(_ArrowArray([b"ab"], "binary"))
    for key in ("x", 5, "y", "città", 7, -1, b"ab"):
        plain.add(key)
    assert arrow == plain
    found = arrow.contains_many(_ArrowArray(["x", "città", "q"], "string"))
    assert found.tolist() == [True, True, False]
    assert _ArrowScalar(7, "int64") in arrow and 7 in arrow and "7" not in arrow


@pytest.mark.parametrize("call, error, words", [
    (lambda f: f.add_many(_ArrowArray([1, None], "int64")), ValueError,
     r"keys holds 1 nulls \(a pyarrow int64 array\): a null is no key"),
    (lambda f: f.add(_ArrowScalar(None, "string")), ValueError, "key is a pyarrow null"),
    (lambda f: f.add(_ArrowScalar(1.5, "double")), TypeError,
     "key must be str, bytes or int, not a pyarrow double scalar"),
    (lambda f: f.add_many(_ArrowArray([1.5], "double")), TypeError, "not float"),
])
def test_pyarrow_nulls_and_floats_are_refused_naming_the_argument(call, error, words):
    f = BloomFilter(4096, 5)
    f.add("kept")
    before = f.to_bytes()
    with pytest.raises(error, match=words):
        call(f)
    assert f.to_bytes() == before
