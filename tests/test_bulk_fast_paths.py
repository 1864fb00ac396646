"""The bulk path's shortcuts give the per-key answers: contains_many pools the keys that
survive its first rounds across chunks; lists of ASCII str are hashed without a check pass,
and any other key sends its piece (or the rest of the list) the careful way."""

import numpy as np
import pytest

import bloomedu.core.hashing as hashing
import bloomedu.kernels.bloom as bloom_kernels
import bloomedu.kernels.murmur as murmur_kernels
from bloomedu import BloomFilter
from bloomedu.core.hashing import hash128, hashed_batches


@pytest.mark.parametrize("num_hashes", [1, 2, 3, 6])
def test_pooled_rounds_answer_what_in_answers(num_hashes, monkeypatch):
    monkeypatch.setattr(hashing, "CHUNK_KEYS", 512)  # many chunks,
    monkeypatch.setattr(bloom_kernels, "POOL_KEYS", 512)  # several pools
    rng = np.random.default_rng(num_hashes)
    inserted = rng.integers(0, 2 ** 64, 3000, dtype=np.uint64)
    queried = np.concatenate([inserted[:2000], rng.integers(0, 2 ** 64, 9000, dtype=np.uint64)])
    rng.shuffle(queried)
    f = BloomFilter(3000 * num_hashes * 2, num_hashes)  # about half the bits set
    f.add_many(inserted)
    answers = f.contains_many(queried)
    assert answers.tolist() == [int(key) in f for key in queried]
    assert answers.sum() > 2000  # the inserted keys, and some false positives


def test_a_single_str_key_in_a_batch():  # its hashes are a one-element chunk
    f = BloomFilter(1000, 3)
    f.add_many(["x"])
    assert f.contains_many(["x", "y"]).tolist() == ["x" in f, "y" in f] == [True, False]


@pytest.mark.parametrize("odd_keys", [{5: "città"}, {700: b"raw"}, {300: "città", 900: 7},
                                      {0: bytearray(b"x")}, {1023: "\U0001F600"}])
def test_a_few_other_keys_among_ascii_str(odd_keys, monkeypatch):
    monkeypatch.setattr(murmur_kernels, "PIECE_KEYS", 128)  # many pieces
    keys = [f"https://example.com/{i}" for i in range(1030)]
    for index, key in odd_keys.items():
        keys[index] = key
    hashes = [(h1.tolist(), h2.tolist()) for h1, h2 in hashed_batches(keys, None, chunk_keys=256)]
    h1s = [v for h1, _ in hashes for v in h1]
    h2s = [v for _, h2 in hashes for v in h2]
    assert list(zip(h1s, h2s)) == [hash128(key) for key in keys]


def test_a_lone_surrogate_among_ascii_str_is_refused_not_hashed(monkeypatch):
    monkeypatch.setattr(murmur_kernels, "PIECE_KEYS", 128)
    keys = [f"k{i}" for i in range(500)]
    keys[260] = "bad\ud800"
    f = BloomFilter(1000, 3)
    with pytest.raises(ValueError):  # UnicodeEncodeError, as from add
        f.add_many(keys)
    assert f.bits_set() == 0
