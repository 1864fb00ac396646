"""contains_many pools the keys that survive its first rounds across chunks: the answers
must still be those of ``in``, key by key, whichever chunk and pool a key went through."""

import numpy as np
import pytest

import bloomedu.filter as filter_module
from bloomedu import BloomFilter


@pytest.mark.parametrize("num_hashes", [1, 2, 3, 6])
def test_pooled_rounds_answer_what_in_answers(num_hashes, monkeypatch):
    monkeypatch.setattr(filter_module, "_CHUNK_KEYS", 512)  # many chunks, several pools
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
