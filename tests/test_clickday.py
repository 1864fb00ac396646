"""A day of clicks: the dedup losses computed in bulk equal the message-by-message stage's, and
their expected count is the integral of the rate as the filter fills."""

import math

import numpy as np
import pytest

from bloomedu import BloomFilter, click_stream, deduplicate, score
from bloomedu.teaching.clickday import IDS_PER_DAY, dropped_messages, expected_drops
from bloomedu.teaching.experiments import double_hash_positions
from bloomedu.workloads.clicks import uuid4_strings


@pytest.mark.parametrize("m, k, n", [(1000, 3, 300), (256, 3, 200), (64, 1, 500), (5000, 7, 900),
                                     (2**16, 10, 100), (100, 4, 2000)])
def test_the_closed_form_is_the_sum_of_the_rates(m, k, n):
    by_sum = sum((1 - math.exp(-k * i / m)) ** k for i in range(n))
    # an integral against a left sum: they differ by about half the last term, never a whole one
    assert abs(expected_drops(num_bits=m, num_hashes=k, n=n) - by_sum) <= (1 - math.exp(-k * n / m)) ** k + 1e-9


def test_one_hash_gives_the_collisions_of_lesson_02():
    n, size = IDS_PER_DAY, 2**32
    collisions = n - size * (1 - (1 - 1 / size) ** n)
    assert IDS_PER_DAY == 864_000_000
    assert abs(expected_drops(num_bits=size, num_hashes=1, n=n) - collisions) / collisions < 1e-6


def test_bad_arguments_get_a_clear_error():
    with pytest.raises(ValueError, match=r"num_bits must be an int in 1\.\.2\*\*63-1"):
        expected_drops(num_bits=0, num_hashes=3, n=10)
    with pytest.raises(ValueError, match="2-d integer array"):
        dropped_messages(np.array([1, 2]), 8)
    with pytest.raises(ValueError, match=r"0\.\.num_bits-1 = 7"):
        dropped_messages(np.array([[1, 8]]), 8)


def test_the_bulk_count_is_what_the_stage_drops_message_by_message():
    clicks = click_stream(3000, double_click_rate=0.05, seed=11)
    m, k = 4096, 3
    kept = deduplicate(clicks, BloomFilter(m, k))
    dropped = dropped_messages(double_hash_positions([c.id for c in clicks], num_bits=m, num_hashes=k), m)
    assert [c for c, gone in zip(clicks, dropped) if not gone] == kept
    result = score(clicks, kept)
    assert result.duplicates_missed == 0 and result.genuine_dropped > 20  # a real loss to count


def test_the_measured_losses_follow_the_expected_count():
    m, k, n = 2**16, 3, 15_000
    ids = uuid4_strings(n, np.random.default_rng(3))
    lost = int(dropped_messages(double_hash_positions(ids, num_bits=m, num_hashes=k), m).sum())
    expected = expected_drops(num_bits=m, num_hashes=k, n=n)
    assert expected > 400
    assert abs(lost - expected) < 5 * math.sqrt(expected)
