"""The shared test: every dedup stage of article 1 on the same click stream.

"Filtro di Bloom: un elemento appartiene all'insieme?" replaces a dict of seen
IDs (step 1) with their hashes (step 2), a bit vector (step 3) and Bloom
filters (steps 4-5).  Each stage may take a new ID for a seen one (a genuine
click dropped) but none may ever forget an ID it has seen: here every stage
runs on one stream and is held to that, and to the theory's count of genuine
clicks dropped.
"""

import math

import mmh3
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bloomedu import (AgePartitionedBloomFilter, BitVector, BloomFilter, CountingBloomFilter,
                      HashedIds, RotatingBloomFilter, SaltedBloomFilter, ScalableBloomFilter,
                      SeenIds, click_stream, deduplicate, score)
from bloomedu.core.theory import exact_false_positive_rate
from bloomedu.variants.theory import (apbf_slice_bits, compound_false_positive_rate,
                                      run_probability)
from bloomedu.core.hashing import murmur3_32, murmurhash2, n_bit_hash_function
from bloomedu.core.theory import (bit_vector_false_positive_rate, exact_false_positive_rate,
                             expected_collisions, false_positive_rate, num_bits_for)
from bloomedu.workloads.clicks import uuid4_strings

NUM_MESSAGES = 20_000
SIGMAS = 5
STEP = 20


def _bloom_rate(stage, inserted):
    return false_positive_rate(num_bits=stage.num_bits, num_hashes=stage.num_hashes, n=inserted)


# name -> (make a fresh stage for n messages, chance that a new key is taken as
# seen once `inserted` distinct keys went in).  The same list serves every test.
STAGES = {
    "SeenIds": (lambda n: SeenIds(), lambda stage, inserted: 0.0),
    "HashedIds": (lambda n: HashedIds(),
                  lambda stage, inserted: bit_vector_false_positive_rate(num_bits=2**32, n=inserted)),
    "BitVector(24)": (lambda n: BitVector(hash_bits=24),
                      lambda stage, inserted: bit_vector_false_positive_rate(num_bits=2**24, n=inserted)),
    "SaltedBloomFilter(3, 20)": (lambda n: SaltedBloomFilter(3, 20), _bloom_rate),
    "BloomFilter(n, 0.001)": (lambda n: BloomFilter.from_capacity(n, 0.001), _bloom_rate),
}


def _rotating_rate(stage, inserted):
    # the newest generation holds what is left after full ones of `capacity` keys
    full, rest = divmod(inserted, stage.capacity)
    loads = [stage.capacity] * min(full, stage.generations - 1) + [rest]
    return compound_false_positive_rate(
        exact_false_positive_rate(num_bits=stage.num_bits, num_hashes=stage.num_hashes, n=n)
        for n in loads)


def _scalable_rate(stage, inserted):
    rates, i = [], 0
    while inserted > 0:
        n = min(inserted, stage.capacity(i))
        m = stage.tables[i].num_bits if i < len(stage.tables) else None
        if m is None:
            return rates and compound_false_positive_rate(rates)
        rates.append(exact_false_positive_rate(num_bits=m, num_hashes=stage.tables[i].num_hashes, n=n))
        inserted, i = inserted - n, i + 1
    return compound_false_positive_rate(rates)


def _apbf_rate(stage, inserted):
    # slice a (newest first) holds the keys of the generations it was among the k newest for
    k, h, g, m = stage.num_hashes, stage.num_slices, stage.generation_size, stage.num_bits
    gens = [g] * (inserted // g) + ([inserted % g] if inserted % g else [])
    gens = gens or [0]
    fills = []
    for a in range(h):
        start = len(gens) - 1 - a  # the generation in which slice a was the newest
        keys = sum(gens[j] for j in range(max(start, 0), min(start + k, len(gens)))) if start >= 0 else 0
        fills.append(1 - (1 - 1 / m) ** keys)
    return run_probability(fills, k)


STAGES.update({
    "CountingBloomFilter": (lambda n: CountingBloomFilter(num_bits_for(n=n, p=0.001), 10),
                            lambda stage, i: exact_false_positive_rate(num_bits=stage.num_cells, num_hashes=10, n=i)),
    "ScalableBloomFilter": (lambda n: ScalableBloomFilter(max(1, n // 8), 0.001), _scalable_rate),
    "RotatingBloomFilter": (lambda n: RotatingBloomFilter(max(1, n // 3), 0.001, 4), _rotating_rate),
    "AgePartitionedBloomFilter": (lambda n: AgePartitionedBloomFilter(10, 7, max(1, n // 7) + 1),
                                  _apbf_rate),
})
EXACT = {"SeenIds"}


@pytest.fixture(scope="module")
def stream():
    """Two seconds of clicks at the article's 10,000 per second, 5% of them doubled."""
    return click_stream(NUM_MESSAGES, rate=10_000, double_click_rate=0.05, seed=2024)


@pytest.fixture(scope="module")
def results(stream):
    """Each stage's score on the stream, and the theory's expected genuine clicks dropped."""
    out = {}
    for name, (make, rate) in STAGES.items():
        stage = make(len(stream))
        kept = deduplicate(stream, stage)
        genuine = len(stream) - sum(c.duplicate for c in stream)
        # The i-th genuine click meets at most i distinct keys already inserted.  The sum
        # over i by the midpoint rule, one i in STEP (the rates are smooth in i; the error
        # is far below the sigma bound, and each exact rate costs a sum of its own).
        expected = STEP * math.fsum(rate(stage, i) for i in range(STEP // 2, genuine, STEP))
        out[name] = (stage, kept, score(stream, kept), expected)
    return out


def test_the_stream_has_double_clicks(stream):
    assert sum(c.duplicate for c in stream) > 500


@pytest.mark.parametrize("name", STAGES)
def test_every_duplicate_is_dropped(results, name):
    _, _, result, _ = results[name]
    assert result.duplicates > 0
    assert result.duplicates_dropped == result.duplicates
    assert result.duplicates_missed == 0


@pytest.mark.parametrize("name", STAGES)
def test_no_id_seen_before_is_ever_reported_absent(stream, results, name):
    stage = results[name][0]
    assert all(click.id in stage for click in stream)


@pytest.mark.parametrize("name", STAGES)
def test_genuine_clicks_dropped_within_theory(results, name):
    _, _, result, expected = results[name]
    if name in EXACT:
        assert expected == 0.0
    # A sum of independent rare events: variance at most its mean.
    assert result.genuine_dropped <= expected + SIGMAS * math.sqrt(expected)


def test_seen_ids_keeps_exactly_the_genuine_clicks(stream, results):
    kept = results["SeenIds"][1]
    assert kept == [c for c in stream if not c.duplicate]


@pytest.mark.parametrize("hash_bits", [12, 16])
def test_a_short_hash_drops_as_many_genuine_clicks_as_the_birthday_bound(stream, hash_bits):
    # Truncated to b bits, HashedIds takes a genuine click for a duplicate exactly
    # when its hash was taken: n - distinct hashes, expected_collisions(n, 2**b).
    stage = HashedIds(hash_function=n_bit_hash_function(hash_bits, "", murmur3_32))
    result = score(stream, deduplicate(stream, stage))
    expected = expected_collisions(result.genuine, 2**hash_bits)
    assert abs(result.genuine_dropped - expected) <= SIGMAS * math.sqrt(expected)
    assert result.duplicates_missed == 0


def test_a_bit_vector_is_a_set_of_short_hashes(stream):
    # Step 3 keeps one bit per possible n-bit hash; step 2 truncated to n bits keeps
    # the same information as a set: both keep exactly the same clicks.
    as_set = HashedIds(hash_function=n_bit_hash_function(16, "", murmurhash2))
    as_bits = BitVector(hash_bits=16)
    assert deduplicate(stream, as_set) == deduplicate(stream, as_bits)


def test_hashed_ids_store_the_32_bit_murmur3_hash_only():
    stage = HashedIds()
    for key in ["123", "456", "città"]:
        stage.add(key)
    expected = {mmh3.hash(k.encode(), 0, signed=False) for k in ["123", "456", "città"]}
    assert stage.hashes == expected
    assert len(stage) == 3


ARTICLE_MESSAGES = [{"id": "123"}, {"id": "456"}, {"id": "123"}, {"id": "789"}]
# The article's own configurations: a JavaScript object, murmurhash.v2 hashes,
# 2**8 bits, and BloomFilter(3, 8); then this project's stages.
ARTICLE_STAGES = {
    "object of IDs": lambda: SeenIds(),
    "murmurhash.v2 hashes": lambda: HashedIds(hash_function=murmurhash2),
    "8-bit vector": lambda: BitVector(hash_bits=8),
    "BloomFilter(3, 8)": lambda: SaltedBloomFilter(3, 8),
    **{name: (lambda make=make: make(4)) for name, (make, _) in STAGES.items()},
}


@pytest.mark.parametrize("name", ARTICLE_STAGES)
def test_the_articles_four_messages_become_three(name):
    kept = deduplicate(ARTICLE_MESSAGES, ARTICLE_STAGES[name](), key=lambda m: m["id"])
    assert kept == [{"id": "123"}, {"id": "456"}, {"id": "789"}]
    assert kept[0] is ARTICLE_MESSAGES[0] and kept[2] is ARTICLE_MESSAGES[3]


def test_deduplicate_uses_the_key_function_and_keeps_order():
    messages = [("b", 1), ("a", 2), ("b", 3), ("c", 4), ("a", 5)]
    assert deduplicate(messages, SeenIds(), key=lambda m: m[0]) == [("b", 1), ("a", 2), ("c", 4)]
    assert deduplicate([], SeenIds()) == []


def test_a_first_message_with_an_empty_id_is_kept_like_any_new_id():
    # The empty ID hashed to (0, 0): all k positions were bit 0, set in about half of the
    # filters at their design rate, so about half of the first empty-ID messages were dropped.
    runs, n, p = 40, 1000, 0.001
    dropped = 0
    for run in range(runs):
        ids = uuid4_strings(n, np.random.default_rng(run))
        messages = [{"id": i} for i in ids] + [{"id": ""}]
        stage = BloomFilter.from_capacity(n, p)
        kept = deduplicate(messages, stage, key=lambda m: m["id"])
        dropped += kept[-1] is not messages[-1]
        assert "" in stage
    rate = exact_false_positive_rate(num_bits=stage.num_bits, num_hashes=stage.num_hashes, n=n)
    assert dropped <= runs * rate + SIGMAS * math.sqrt(runs * rate), dropped


@pytest.mark.parametrize("name", STAGES)
@settings(deadline=None)
@given(keys=st.lists(st.text(max_size=40), max_size=60))
def test_no_inserted_key_is_ever_reported_absent(name, keys):
    stage = STAGES[name][0](64)
    for key in keys:
        stage.add(key)
    assert all(key in stage for key in keys)
