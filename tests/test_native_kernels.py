"""The native kernels (``bloomedu[fast]``, numba) give the reference's bits and answers, bit for bit.

Three references: ``hash128`` (mmh3 of ``key_to_bytes``) for the hash, a loop of ``add`` and
``in`` for each filter, and the numpy kernels (which ``test_bulk.py`` and ``test_blocked.py``
hold to the same loop).  Every comparison runs the same batch through both paths with
:func:`bloomedu.kernels.backend.use`: edge keys (empty, NUL inside and at the end, non-ASCII,
a megabyte long, every tail length of MurmurHash3), every integer dtype and byte order, every
batch shape (empty, one key, chunk boundaries, the prefetch distance, keys repeated inside a
batch), and every refusal, which must read the same and leave the filter as it was.

numba compiles each kernel once per process (then loads it from its cache): the module fixture
``native`` pays that before the first test.  ``bloomedu[dev]`` holds ``bloomedu[fast]``, so a
missing numba fails here, naming what to do.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bloomedu.core.hashing as hashing
import bloomedu.variants.blocked as blocked
from bloomedu import BloomFilter
from bloomedu.core.hashing import hash128, key_to_bytes
from bloomedu.core.warm import warm_kernels
from bloomedu.kernels import backend, jit, murmur, native_bloom, native_murmur
from bloomedu.kernels import bloom as numpy_bloom
from bloomedu.variants import BlockedBloomFilter, blocked_kernels, blocked_native

BOTH = ["numpy", "native"]
LONG = "https://example.org/" + "é" * (1 << 19)  # 1 MiB of UTF-8


@pytest.fixture(scope="module", autouse=True)
def native():
    """numba imported and every kernel compiled (or loaded from the cache) once for the module."""
    if not backend.native_available():
        pytest.fail(f"{backend.unavailable_reason()}: build the environment with `make env` "
                    "(bloomedu[dev] holds bloomedu[fast])")
    assert warm_kernels().startswith("native kernels ready: numba ")


# --- the hash ---------------------------------------------------------------------------------
EDGE_KEYS = ["", "\0", "a\0", "\0a", "ab\0\0", "città", "日本語", "😀", "\x7f", "é" * 1000, LONG,
             b"", b"\0", b"a\0", b"\xff" * 31, bytearray(b"xy\0"), memoryview(b"mv"),
             memoryview(np.arange(3, dtype="<u2")), 0, -1, 2 ** 64 - 1, -2 ** 63, np.int8(-1),
             np.uint64(7)]
EDGE_KEYS += [bytes(range(length)) for length in range(49)]  # every tail, 0 to 3 blocks
EDGE_KEYS += ["x" * length for length in range(49)] + ["é" * length for length in range(25)]


def hashes(kernels, keys) -> list[tuple[int, int]]:
    h1, h2 = kernels.murmur3_128_list(list(keys), key_to_bytes)
    assert h1.dtype == h2.dtype == np.uint64 and h1.size == len(keys)
    return list(zip(h1.tolist(), h2.tolist()))


@pytest.mark.parametrize("batch", ["all", "ascii str", "bytes", "non-ascii str", "one by one"])
def test_the_native_hash_is_hash128_on_edge_keys(batch):
    keys = {"all": EDGE_KEYS, "ascii str": [k for k in EDGE_KEYS if type(k) is str and k.isascii()],
            "bytes": [k for k in EDGE_KEYS if type(k) is bytes],
            "non-ascii str": [k for k in EDGE_KEYS if type(k) is str and not k.isascii()]}
    for piece in ([[key] for key in EDGE_KEYS] if batch == "one by one" else [keys[batch]]):
        expected = [hash128(key) for key in piece]
        assert hashes(native_murmur, piece) == expected == hashes(murmur, piece)


@settings(deadline=None)
@given(st.lists(st.one_of(st.text(), st.text(st.characters(max_codepoint=127)), st.binary(),
                          st.integers(-2 ** 63, 2 ** 64 - 1)), max_size=40))
def test_the_native_hash_is_hash128_on_any_batch(keys):
    assert hashes(native_murmur, keys) == [hash128(key) for key in keys]


def test_the_joined_buffer_holds_each_key_between_its_offsets():
    keys = ["ab", "", "a\0", "é"]
    buffer, offsets = native_murmur.joined_keys(keys, key_to_bytes)
    assert [buffer[a:b].tobytes() for a, b in zip(offsets[:-1], offsets[1:])] == \
        [key.encode() for key in keys]
    assert offsets.dtype == np.int64 and buffer.dtype == np.uint8
    assert buffer[offsets[-1]:].tobytes() == bytes(native_murmur.PADDING)  # the tails' words
    for keys in ([], [b"ab", b""]):
        buffer, offsets = native_murmur.joined_keys(keys, key_to_bytes)
        assert offsets[-1] == len(b"".join(keys)) and buffer.size == offsets[-1] + 16


@pytest.mark.parametrize("dtype", [f"{order}{kind}{size}" for order in "<>" for kind in "iu"
                                   for size in (1, 2, 4, 8)])
def test_the_native_integer_hash_is_hash128_for_every_dtype_and_byte_order(dtype):
    info = np.iinfo(np.dtype(dtype))
    values = np.array([0, 1, info.min, info.max, info.max // 3], dtype=dtype)
    for keys in (values, values[::2], np.repeat(values, 2).reshape(5, 2).T):  # strided, 2-d
        h1, h2 = native_murmur.murmur3_128_uint64(keys)
        expected = [hash128(int(key)) for key in keys.ravel()]
        assert list(zip(h1.tolist(), h2.tolist())) == expected
        n1, n2 = murmur.murmur3_128_uint64(keys.ravel())
        assert h1.tolist() == n1.tolist() and h2.tolist() == n2.tolist()


def test_the_native_integer_hash_refuses_what_numpys_refuses():
    for kernels in (native_murmur, murmur):
        with pytest.raises(TypeError, match="keys must be an integer array, not float64"):
            kernels.murmur3_128_uint64(np.array([1.0]))


# --- the filters, through the switch --------------------------------------------------------
FILTERS = {"bloom": lambda: BloomFilter(4099, 5), "bloom k=1": lambda: BloomFilter(1 << 12, 1),
           "bloom, old hashing": lambda: BloomFilter.from_bytes(_old_bytes()),
           "bloom over 40 Mi bits": lambda: BloomFilter(41 << 20, 3),
           "blocked": lambda: BlockedBloomFilter(256 * 37),
           "blocked, one block": lambda: BlockedBloomFilter(256)}


def _old_bytes() -> bytes:
    f = BloomFilter(2053, 4)
    f.HASHING = 1  # the unspread step of earlier versions (from_bytes keeps it)
    return f.to_bytes()


def bits(f) -> np.ndarray:
    return (f.words if isinstance(f, BlockedBloomFilter) else f.bits.data).copy()


def batch_kinds(size: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    values = rng.integers(-2 ** 63, 2 ** 63 - 1, size, dtype=np.int64, endpoint=True)
    values[size // 2:] = values[:size - size // 2]  # the second half repeats the first
    text = [f"https://host{v % 7}.example/{v}" for v in values.tolist()]
    return {"int64": values, ">u2": values.astype(">u2"), "<i1": values.astype("i1"),
            "ascii str": text, "non-ascii str": [t + "/è\0" for t in text],
            "bytes": [t.encode() + b"\0" for t in text],
            "mixed": [[t, t.encode(), v, np.int32(v % 1000), bytearray(b"\0" + t.encode())][i % 5]
                      for i, (t, v) in enumerate(zip(text, values.tolist()))],
            "U array": np.array([t + "x" for t in text], dtype=">U40"),
            "object array": np.array(text + [None], dtype=object)[:-1],
            "generator": (t for t in text)}


def run(name: str, make, size: int, kind: str):
    """A filter after add_many_new, add_many and contains_many of the same batch kind."""
    with backend.use(name):
        f = make()
        new = f.add_many_new(batch_kinds(size, 1)[kind])
        f.add_many(batch_kinds(size, 2)[kind])
        found = f.contains_many(batch_kinds(2 * size, 1)[kind])  # half of it went in
    return f, new, found


@pytest.mark.parametrize("kind", list(batch_kinds(2, 0)))
@pytest.mark.parametrize("filter_name", list(FILTERS))
@pytest.mark.parametrize("size", [0, 1, 7, 8, 9, 37])  # the prefetch runs 8 keys ahead
def test_both_paths_set_the_same_bits_and_answer_the_same(filter_name, size, kind, monkeypatch):
    monkeypatch.setattr(hashing, "CHUNK_KEYS", 5)  # chunk boundaries inside every batch
    monkeypatch.setattr(blocked, "_CHUNK_KEYS", 5)
    make = FILTERS[filter_name]
    (f, new, found), (g, new_native, found_native) = (run(name, make, size, kind) for name in BOTH)
    assert np.array_equal(bits(f), bits(g)) and f == g
    assert new.tolist() == new_native.tolist() and found.tolist() == found_native.tolist()
    assert new.dtype == new_native.dtype == found.dtype == found_native.dtype == bool


@pytest.mark.parametrize("filter_name", ["bloom", "bloom, old hashing", "blocked", "blocked, one block"])
def test_the_native_path_is_the_loop_of_in_then_add(filter_name):
    keys = batch_kinds(300, 3)["mixed"] + ["", b"", "a\0", LONG]
    with backend.use("native"):
        f = FILTERS[filter_name]()
        new = f.add_many_new(keys)
        found = f.contains_many(keys + ["never", 10 ** 12])
    loop, expected = FILTERS[filter_name](), []
    for key in keys:
        expected.append(key not in loop)
        loop.add(key)
    assert f == loop and new.tolist() == expected
    assert found.tolist() == [True] * len(keys) + [k in loop for k in ("never", 10 ** 12)]


def test_a_batch_across_hashing_chunks_of_the_real_size():
    keys = [f"id-{i}" for i in range(hashing.CHUNK_KEYS + 1)] * 2  # repeated across chunks
    answers = {}
    for name in BOTH:
        with backend.use(name):
            f, g = BloomFilter(1 << 20, 7), BlockedBloomFilter(1 << 20)
            answers[name] = (f.add_many_new(keys).tolist(), g.add_many_new(keys).tolist(),
                             bits(f), bits(g))
    assert answers["numpy"][:2] == answers["native"][:2]
    assert all(np.array_equal(a, b) for a, b in zip(answers["numpy"][2:], answers["native"][2:]))
    assert answers["native"][0] == [True] * (len(keys) // 2) + [False] * (len(keys) // 2)


# --- refusals: the same error on both paths, the filter unchanged --------------------------------
BAD_BATCHES = {
    "float in a list": lambda: ["a", 1.5], "None": lambda: [b"a", None],
    "lone surrogate": lambda: ["ok", "\ud800"], "int too large": lambda: [1, 2 ** 64],
    "float array": lambda: np.array([1.0]), "bool array": lambda: np.array([True]),
    "U array ending in NUL": lambda: np.array(["ab", "c"]), "one str": lambda: "abc",
    "one int": lambda: 5, "bad key late": lambda: [f"k{i}" for i in range(40)] + [object()],
}


@pytest.mark.parametrize("bad", list(BAD_BATCHES))
@pytest.mark.parametrize("filter_name", ["bloom", "bloom over 40 Mi bits", "blocked"])
def test_a_refused_batch_reads_the_same_and_changes_nothing(filter_name, bad, monkeypatch):
    monkeypatch.setattr(hashing, "CHUNK_KEYS", 16)
    monkeypatch.setattr(blocked, "_CHUNK_KEYS", 16)
    errors = {}
    for name in BOTH:
        with backend.use(name):
            f = FILTERS[filter_name]()
            f.add_many(["already", "here", 3])
            before = bits(f)
            for call in (f.add_many, f.add_many_new, f.contains_many):
                with pytest.raises((TypeError, ValueError, UnicodeError)) as error:
                    call(BAD_BATCHES[bad]())
                errors.setdefault(name, []).append((type(error.value), str(error.value)))
            assert np.array_equal(bits(f), before)
    assert errors["numpy"] == errors["native"]


# --- the kernels themselves, on plain arrays ----------------------------------------------------
@pytest.mark.parametrize("size", [0, 1, 7, 8, 9, 1000])
@pytest.mark.parametrize("m, k", [(8, 1), (64, 2), (4099, 7), (1 << 20, 13)])
def test_the_native_bloom_kernels_equal_numpys_on_plain_arrays(size, m, k):
    rng = np.random.default_rng(size + m)
    h1 = rng.integers(0, 2 ** 64 - 1, size, dtype=np.uint64, endpoint=True)
    h2 = rng.integers(0, 2 ** 64 - 1, size, dtype=np.uint64, endpoint=True)
    h1[size // 2:] = h1[:size - size // 2]  # repeated keys
    h2[size // 2:] = h2[:size - size // 2]
    outcomes = []
    for kernels in (numpy_bloom, native_bloom):
        data = np.zeros(-(-m // 8), np.uint8)
        new = kernels.add_new(data, [(h1, h2)], num_bits=m, num_hashes=k)
        found = kernels.contains(data, [(h2, h1), (h1, h2)], num_bits=m, num_hashes=k)
        kernels.insert(data, [(h2, h1)], num_bits=m, num_hashes=k)
        outcomes.append((data.tobytes(), new.tolist(), found.tolist()))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("size", [0, 1, 7, 8, 9, 3000])
@pytest.mark.parametrize("num_blocks", [1, 3, 4099])
def test_the_native_blocked_kernels_equal_numpys_on_plain_arrays(size, num_blocks):
    rng = np.random.default_rng(size * num_blocks)
    keys = rng.integers(0, 2 ** 64 - 1, size, dtype=np.uint64, endpoint=True)
    keys[size // 2:] = keys[:size - size // 2]
    h = native_murmur.murmur3_128_uint64(keys)[0]
    words = np.zeros(8 * num_blocks, "<u4")
    present = blocked_kernels.apply(words, blocked_kernels.Batch(
        blocked_kernels.block_index(h, num_blocks), blocked_kernels.masks(h)), report=True)
    native_words, native_present = np.zeros_like(words), np.empty(size, bool)
    blocked_native.add_new(native_words, h, num_blocks, native_present)
    fused_words, fused_present = np.zeros_like(words), np.empty(size, bool)
    blocked_native.add_new_uint64(fused_words, keys, num_blocks, fused_present)
    assert np.array_equal(words, native_words) and np.array_equal(words, fused_words)
    assert present.tolist() == native_present.tolist() == fused_present.tolist()
    found = np.empty(size, bool)
    blocked_native.contains(words, h[::-1].copy(), num_blocks, found)
    assert found.all() and blocked_kernels.contains(
        words, blocked_kernels.block_index(h, num_blocks), blocked_kernels.masks(h)).all()
    plain = np.zeros_like(words)
    blocked_native.add(plain, h, num_blocks)
    assert np.array_equal(plain, words)


@jit.njit
def _block8_both(words, bases, lows, salts, present, held):
    for j in range(bases.size):
        held[j] = jit.block8_holds(words, bases[j], lows[j], salts)
        present[j] = jit.block8_in_then_add(words, bases[j], lows[j], salts)


@pytest.mark.parametrize("salts", ["the split block's", "random"])
def test_the_eight_word_vector_is_the_numpy_block_update(salts):
    """The compiled <8 x i32> update and test against :func:`jit.plain_block8_in_then_add`, one
    key at a time: every low 32 bits (with high bits above them to drop), repeated keys, blocks
    at every offset of a filter holding bits already."""
    rng = np.random.default_rng(8)
    salts = blocked_kernels.SALTS.astype(np.uint32) if salts != "random" else \
        rng.integers(0, 2 ** 32, 8, dtype=np.uint64).astype(np.uint32)
    lows = np.concatenate([rng.integers(0, 2 ** 64 - 1, 3000, dtype=np.uint64, endpoint=True),
                           np.array([0, 1, 2 ** 32 - 1, 2 ** 32, 2 ** 64 - 1], np.uint64)])
    lows[-400:-5] = lows[:395]  # keys seen before: their bits are all set by then
    bases = rng.integers(0, 37, lows.size).astype(np.uint64) * np.uint64(8)
    words = rng.integers(0, 2 ** 32, 8 * 37, dtype=np.uint64).astype(np.uint32) & np.uint32(0x0F0F0F0F)
    expected_words, expected_present, expected_held = words.copy(), [], []
    for base, low in zip(bases, lows):
        expected_held.append(jit.plain_block8_holds(expected_words, base, low, salts))
        expected_present.append(jit.plain_block8_in_then_add(expected_words, base, low, salts))
    present, held = np.empty(lows.size, bool), np.empty(lows.size, bool)
    _block8_both(words, bases, lows, salts, present, held)
    assert np.array_equal(words, expected_words)
    assert present.tolist() == expected_present == held.tolist()
    assert 395 <= sum(expected_present) < lows.size  # both answers occur


# --- the switch -----------------------------------------------------------------------------------
def test_the_variable_picks_the_kernels(monkeypatch):
    for value, expected in [("numpy", "numpy"), ("native", "native"), ("auto", "native"),
                            ("", "native"), (" Native ", "native")]:
        monkeypatch.setenv(backend.VARIABLE, value)
        assert backend.active() == expected
    monkeypatch.delenv(backend.VARIABLE)
    assert backend.active() == "native"
    monkeypatch.setenv(backend.VARIABLE, "fast")
    with pytest.raises(ValueError, match="environment variable BLOOMEDU_KERNELS must be 'auto', "
                                         "'numpy' or 'native', not 'fast'"):
        backend.active()
    with backend.use("numpy"):  # use() wins over the variable
        assert backend.active() == "numpy"


def test_use_nests_and_restores_even_after_an_error(monkeypatch):
    monkeypatch.setenv(backend.VARIABLE, "numpy")
    with backend.use("native"):
        with pytest.raises(KeyError):
            with backend.use("numpy"):
                assert backend.bloom() is numpy_bloom and backend.murmur() is murmur
                raise KeyError
        assert backend.active() == "native"
        assert backend.bloom() is native_bloom and backend.murmur() is native_murmur
    assert backend.active() == "numpy"


def test_without_numba_auto_runs_numpy_and_native_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(backend, "_native_state", False)
    monkeypatch.setattr(jit, "IMPORT_ERROR", "ModuleNotFoundError: No module named 'numba'")
    monkeypatch.setenv(backend.VARIABLE, "auto")
    assert backend.active() == "numpy" and not backend.native_available()
    f = BloomFilter(1024, 3)
    f.add_many(["a"])
    assert "a" in f
    for asked in (lambda: monkeypatch.setenv(backend.VARIABLE, "native"),):
        asked()
        with pytest.raises(RuntimeError, match=r"BLOOMEDU_KERNELS=native .* numba could not be "
                                               r"imported .* pip install 'bloomedu\[fast\]'"):
            f.add_many(["b"])
    with pytest.raises(RuntimeError, match="BLOOMEDU_KERNELS=native"):
        with backend.use("native"):
            pass
    assert "b" not in f


def test_a_process_without_numba_runs_the_numpy_path():
    code = ("import sys; sys.modules['numba'] = None\n"  # import numba now fails
            "import numpy as np\n"
            "from bloomedu import BloomFilter\n"
            "from bloomedu.kernels import backend, jit\n"
            "f = BloomFilter(1024, 3); f.add_many(np.arange(10))\n"
            "print(backend.active(), jit.AVAILABLE, bool(f.contains_many(np.arange(10)).all()))\n"
            "import os; os.environ['BLOOMEDU_KERNELS'] = 'native'\n"
            "f.add_many([1])\n")
    env = {k: v for k, v in os.environ.items() if k != backend.VARIABLE}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                            timeout=120)
    assert result.stdout.split() == ["numpy", "False", "True"]
    assert "RuntimeError: BLOOMEDU_KERNELS=native" in result.stderr


def test_without_a_writable_cache_the_kernels_compile_uncached(monkeypatch):
    real = jit.numba.njit

    def no_locator(*args, cache=False, **kwargs):
        if cache:
            raise RuntimeError("cannot cache function 'f': no locator available for file '<x>'")
        return real(*args, cache=cache, **kwargs)

    monkeypatch.setattr(jit.numba, "njit", no_locator)
    monkeypatch.setattr(jit, "CACHE_NOTE", None)

    def double(x):
        return 2 * x

    assert jit.njit(double)(21) == 42
    assert "no writable cache folder" in jit.CACHE_NOTE and "NUMBA_CACHE_DIR" in jit.CACHE_NOTE


def test_the_reduction_without_division_is_x_mod_m():
    xs = [0, 1, 2 ** 32, 2 ** 63, 2 ** 64 - 1, 2 ** 64 - 2, 0x9E3779B97F4A7C15]
    ms = [1, 2, 3, 7, 1000, 2 ** 20 + 7, 41 << 20, 2 ** 32 + 1, 2 ** 40 - 3, 2 ** 62 + 1]
    reduce_all = jit.njit(lambda x, m, inverse: [native_bloom.reduce(v, m, inverse) for v in x])
    for m in ms:
        got = reduce_all(np.array(xs, np.uint64), np.uint64(m), native_bloom.reciprocal(m))
        assert [int(v) for v in got] == [x % m for x in xs], m


def test_str_keys_are_read_in_place_and_anything_else_is_joined_first():
    assert native_murmur.CPYTHON_STR is not None  # 64-bit CPython: the in-place path runs here

    class Text(str):
        pass

    keys = ["".join(["a", str(i)]) for i in range(20)] + ["città", Text("sub"), "ok"]
    h1, h2 = np.empty(len(keys), np.uint64), np.empty(len(keys), np.uint64)
    items = np.uint64(native_murmur.list_items(keys))
    assert native_murmur.hash_str_list(items, len(keys), *native_murmur.CPYTHON_STR, h1, h2) == 20
    assert list(zip(h1[:20].tolist(), h2[:20].tolist())) == [hash128(k) for k in keys[:20]]
    assert hashes(native_murmur, keys) == [hash128(k) for k in keys]  # the rest: joined
    assert native_murmur.hash_str_list(np.uint64(native_murmur.list_items(["é"])), 1,
                                       *native_murmur.CPYTHON_STR, h1, h2) == 0


def test_a_tail_at_the_end_of_a_memory_page_is_read_byte_by_byte():
    import mmh3
    page = np.zeros(3 * 4096, np.uint8)
    start = -page.ctypes.data % 4096 + 4096  # the second page of the array starts here
    page[:] = np.arange(page.size) % 251 + 1
    for length in range(0, 40):
        for end in range(start - 17, start + 1):  # the key's last byte just before the page
            begin = end - length
            got = native_murmur.hash_at(np.uint64(page.ctypes.data + begin), np.uint64(length))
            assert (int(got[0]), int(got[1])) == mmh3.hash64(page[begin:end].tobytes(), 0,
                                                              signed=False)


def test_the_kernel_reading_python_objects_holds_the_gil_and_the_others_release_it():
    assert native_murmur.hash_str_list.targetoptions["nogil"] is False
    assert native_murmur.hash_joined.targetoptions["nogil"] is True
    assert native_bloom.set_keys.targetoptions["nogil"] is True
    assert blocked_native.add_new.targetoptions["nogil"] is True
