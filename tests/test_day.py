"""The day's click stream in chunks (``bloomedu.workloads.day``) and ``make bench-day``'s
arithmetic: counts, order, seeds, and the predicted number of false positives."""

import numpy as np
import pytest

from benchmarks.day import expected_false_positives, rate_after
from bloomedu import BloomFilter
from bloomedu.variants import BlockedBloomFilter
from bloomedu.workloads.day import day_chunks, splitmix64, uuid_ids


def whole(num_messages, **options):
    chunks = list(day_chunks(num_messages, **options))
    return (np.concatenate([ids for ids, _ in chunks]),
            np.concatenate([copy for _, copy in chunks]), chunks)


def test_splitmix64_is_the_reference_generator_and_a_bijection_on_a_sample():
    # the first outputs of splitmix64 seeded with 0, stepped here in plain Python ints
    state, expected = 0, []
    for _ in range(3):
        state = (state + 0x9E3779B97F4A7C15) % 2 ** 64
        z = (state ^ state >> 30) * 0xBF58476D1CE4E5B9 % 2 ** 64
        z = (z ^ z >> 27) * 0x94D049BB133111EB % 2 ** 64
        expected.append(z ^ z >> 31)
    assert splitmix64(np.arange(3, dtype=np.uint64)).tolist() == expected
    assert hex(expected[0]) == "0xe220a8397b1dcdaf"  # the value Vigna's splitmix64.c prints first
    sample = splitmix64(np.arange(200_000, dtype=np.uint64) * np.uint64(7919))
    assert np.unique(sample).size == sample.size


@pytest.mark.parametrize("chunk", [1000, 1 << 20])
def test_the_stream_has_the_right_count_and_every_copy_follows_its_original(chunk):
    ids, copies, chunks = whole(60_000, rate=1000, double_click_rate=0.05, seed=7, chunk=chunk)
    assert ids.size == 60_000 and ids.dtype == np.uint64
    assert np.unique(ids[~copies]).size == int((~copies).sum())  # genuine clicks are distinct
    first_place = {}
    for place, (key, copy) in enumerate(zip(ids.tolist(), copies.tolist())):
        if copy:
            assert first_place[key] < place
        else:
            first_place[key] = place
    # about 5% of genuine clicks doubled; a copy comes 50 to 1,000 messages later
    genuine = int((~copies).sum())
    assert abs(copies.sum() - 0.05 * genuine) < 5 * np.sqrt(0.05 * genuine)


def test_the_stream_is_seeded_and_the_chunk_size_only_changes_the_draws():
    a, a_copies, _ = whole(20_000, seed=3, chunk=5000)
    b, b_copies, _ = whole(20_000, seed=3, chunk=5000)
    c, _, _ = whole(20_000, seed=4, chunk=5000)
    assert np.array_equal(a, b) and np.array_equal(a_copies, b_copies)
    assert not np.array_equal(a[~a_copies][:100], c[:100])


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="num_messages"):
        next(day_chunks(-1))
    with pytest.raises(ValueError, match="double_click_rate"):
        next(day_chunks(10, double_click_rate=1.5))
    with pytest.raises(ValueError, match="chunk"):
        next(day_chunks(10, chunk=0))


def test_uuid_ids_are_uuid4_text_and_follow_the_id():
    texts = uuid_ids(np.array([5, 6, 5], dtype=np.uint64))
    assert texts[0] == texts[2] != texts[1]
    for text in texts:
        assert len(text) == 36 and text[14] == "4" and text[19] in "89ab"
        assert [len(part) for part in text.split("-")] == [8, 4, 4, 4, 12]


@pytest.mark.parametrize("f", [BloomFilter(20_000, 5), BlockedBloomFilter(20_000)])
def test_the_predicted_false_positives_are_the_sum_of_the_rates(f):
    exact = sum(rate_after(f, n) for n in range(3000))
    assert expected_false_positives(f, 3000) == pytest.approx(exact, rel=1e-3)
    assert expected_false_positives(f, 1) == 0.0
