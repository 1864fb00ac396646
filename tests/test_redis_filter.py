"""RedisBackedFilter on a real Redis (no module): BloomFilter's bits, byte for byte, in Redis strings.

The split over several keys is tested with small parts (the logic) and once for real past 2^32
bits: a filter of 2^32 + 2^24 bits, whose part 0 is a full 512 MiB Redis string (2^32 - 512
bits and the part's 64-byte stamp; it costs about 640 MiB of server memory for under a second:
jemalloc's size class) and whose part 1 holds the bits past them, which one Redis string cannot.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bloomedu import BloomFilter
from bloomedu.services import redis_bits, redis_filter as redis_filter_module
from bloomedu.services.redis_load import run_load
from bloomedu.services.redis_filter import (MAX_PART_BITS, STAMP_BYTES, RedisBackedFilter, part_stamp,
                                            positions_of, redis_offsets)
from redis_support import covered_by_others, mixed_items, plain_client, plain_server  # noqa: F401


def keys_of_every_kind(count, seed):
    return [k for k in mixed_items(count, seed) if not isinstance(k, int) or -2**63 <= k < 2**64]


def sequential_answers(bloom, keys):
    """What 'was it new?' answers, key after key, in a plain BloomFilter."""
    answers = []
    for key in keys:
        answers.append(key not in bloom)
        bloom.add(key)
    return answers


@pytest.mark.parametrize("num_bits, num_hashes, part_bits", [
    (1000, 3, MAX_PART_BITS), (1000, 3, 256), (100_003, 7, 64 * 97), (64, 1, 64), (5000, 20, 512)])
def test_the_same_bits_as_bloomfilter_byte_for_byte(plain_client, num_bits, num_hashes, part_bits):
    keys = keys_of_every_kind(800, seed=num_bits) + list(np.arange(300, dtype=np.uint64))
    shared = RedisBackedFilter.create(plain_client, "f", num_bits, num_hashes, part_bits)
    assert shared.num_parts == -(-BloomFilter(num_bits, num_hashes).nbytes * 8 // part_bits)
    bloom = BloomFilter(num_bits, num_hashes)
    expected = sequential_answers(bloom, keys)
    assert shared.add_many(keys).tolist() == expected
    assert shared.to_bytes() == bloom.to_bytes()
    assert BloomFilter.from_bytes(shared.to_bytes()) == bloom
    probes = keys_of_every_kind(500, seed=1) + keys[:50]
    assert shared.contains_many(probes).tolist() == bloom.contains_many(probes).tolist()
    for j, key in enumerate(shared.keys):  # every part is one Redis string: its bits, its stamp
        size = min(part_bits // 8, bloom.nbytes - j * part_bits // 8)
        assert plain_client.strlen(key) == size + STAMP_BYTES
        assert plain_client.getrange(key, size, -1) == part_stamp(shared.uid, j)
    # GET of the parts, each but its stamp, is BloomFilter's storage
    raw = b"".join(plain_client.get(key)[:-STAMP_BYTES] for key in shared.keys)
    assert raw == bloom.bits.data.tobytes()


def test_many_chunks_and_many_bitfield_calls_answer_as_keys_one_after_another(plain_client, monkeypatch):
    """Chunks of 300 keys at k = 7 are 2,100 bits: each script call makes several BITFIELD calls
    (1,000 bits each) per part; duplicates fall inside a call, across calls and across chunks."""
    monkeypatch.setattr(redis_filter_module, "_CHUNK_KEYS", 300)
    base = keys_of_every_kind(1500, seed=21)
    keys = base + base[::7] + base[:40] + base[100:140]
    for part_bits in (MAX_PART_BITS, 64 * 40):
        plain_client.flushall()
        shared = RedisBackedFilter.create(plain_client, "chunks", 9000, 7, part_bits)
        bloom = BloomFilter(9000, 7)
        assert shared.add_many(keys).tolist() == sequential_answers(bloom, keys)
        assert shared.to_bytes() == bloom.to_bytes()
        probes = keys_of_every_kind(1200, seed=22)
        assert shared.contains_many(probes).tolist() == bloom.contains_many(probes).tolist()


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(keys=st.lists(st.one_of(st.binary(max_size=30), st.text(max_size=10),
                               st.integers(-2 ** 63, 2 ** 64 - 1)), max_size=60),
       num_hashes=st.integers(1, 12), parts=st.integers(1, 5))
def test_an_added_key_is_never_absent_property(plain_client, keys, num_hashes, parts):
    plain_client.flushall()
    shared = RedisBackedFilter.create(plain_client, "prop", 64 * 5 * parts, num_hashes, 64 * 5)
    bloom = BloomFilter(64 * 5 * parts, num_hashes)
    assert shared.add_many(keys).tolist() == sequential_answers(bloom, keys)
    assert shared.contains_many(keys).all()
    assert shared.to_bytes() == bloom.to_bytes()


def test_a_bloomfilter_moves_to_redis_and_back(plain_client):
    bloom = BloomFilter.from_capacity(20_000, 0.01)
    bloom.add_many(keys_of_every_kind(20_000, seed=4))
    shared = RedisBackedFilter.from_filter(plain_client, "moved", bloom, part_bits=64 * 1000)
    assert shared.num_parts == 3
    assert shared.to_filter() == bloom
    other = RedisBackedFilter.open(plain_client, "moved")  # as another process finds it
    assert (other.num_bits, other.num_hashes, other.part_bits) == (bloom.num_bits, bloom.num_hashes, 64_000)
    probes = keys_of_every_kind(2000, seed=5)
    assert other.contains_many(probes).tolist() == bloom.contains_many(probes).tolist()


def test_single_key_methods_and_names(plain_client):
    shared = RedisBackedFilter.create(plain_client, "one", 1024, 3)
    assert shared.add("123") is True and shared.add("123") is False
    assert "123" in shared and "456" not in shared
    assert shared.keys == ["{one}:bits:0"] and shared.meta_key == "{one}:meta"
    assert RedisBackedFilter.create(plain_client, "one", 1024, 3).add("123") is False
    with pytest.raises(ValueError, match="exists with num_bits=1024, num_hashes=3"):
        RedisBackedFilter.create(plain_client, "one", 2048, 3)
    with pytest.raises(KeyError, match="no filter named 'nothing'"):
        RedisBackedFilter.open(plain_client, "nothing")
    for bad in ["", "a{b}", 3]:
        with pytest.raises(ValueError, match="name must be"):
            RedisBackedFilter(plain_client, bad, 64, 1, uid="u")
    with pytest.raises(ValueError, match="part_bits must be a multiple of 64"):
        RedisBackedFilter(plain_client, "p", 64, 1, part_bits=100, uid="u")
    with pytest.raises(ValueError, match="part_bits must be a multiple of 64"):
        RedisBackedFilter(plain_client, "p", 64, 1, part_bits=2**32, uid="u")
    shared.delete()
    assert not plain_client.exists("{one}:bits:0", "{one}:meta")


def test_a_bad_key_changes_nothing(plain_client):
    shared = RedisBackedFilter.create(plain_client, "bad", 4096, 4, part_bits=1024)
    shared.add_many(["a", "b"])
    before = shared.to_bytes()
    for keys, error in [(["c", 3.5], TypeError), (["d", 2**70], ValueError), ("abc", TypeError)]:
        with pytest.raises(error):
            shared.add_many(keys)
        assert shared.to_bytes() == before


def test_offsets_put_bloomfilter_bytes_in_redis_byte_order(plain_client):
    positions = np.array([0, 1, 7, 8, 15, 63, 64])
    offsets = redis_offsets(positions)
    for offset in offsets.tolist():
        plain_client.setbit("layout", offset, 1)
    bloom = BloomFilter(128, 1)
    bloom.bits.set_many(positions)
    assert plain_client.get("layout") == bloom.bits.data.tobytes()[:9]


def test_concurrent_clients_see_each_key_new_exactly_once(plain_server):
    """Four clients add the same 4,000 keys at once, each in its own order, into a filter split
    over 4 parts: every key is answered 'new' by exactly one of them (none of these keys is a
    possible false positive: no key's bits are all bits of other keys)."""
    keys = [f"click-{i:05d}" for i in range(4000)]
    shape = BloomFilter.from_capacity(4000, 1e-4)
    assert not covered_by_others(positions_of(shape, keys)).any()
    client = plain_server.client()
    client.flushall()
    part_bits = 64 * -(-shape.num_bits // 256)
    RedisBackedFilter.create(client, "race", shape.num_bits, shape.num_hashes, part_bits)
    results = {}

    def worker(seed):
        mine = RedisBackedFilter.open(plain_server.client(), "race")
        order = np.random.default_rng(seed).permutation(len(keys))
        answers = np.zeros(len(keys), dtype=int)
        for start in range(0, len(keys), 250):
            chunk = order[start:start + 250]
            answers[chunk] = mine.add_many([keys[i] for i in chunk])
        results[seed] = answers

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert RedisBackedFilter.open(client, "race").num_parts == 4
    assert (sum(results.values()) == 1).all()
    client.close()


def test_past_two_to_the_32_bits_the_filter_spans_two_redis_strings(plain_client):
    """A real filter of 2^32 + 2^24 bits: bits at and past 2^32 - 512 go to a second key (one
    Redis string refuses offset 2^32, and each part keeps its stamp after its bits); part 0 is
    allocated whole by create (512 MiB)."""
    num_bits = 2 ** 32 + 2 ** 24
    shared = RedisBackedFilter.create(plain_client, "big", num_bits, 2, part_bits=MAX_PART_BITS)
    assert shared.num_parts == 2
    bloom = BloomFilter(num_bits, 2)
    candidates = np.arange(1_500_000, dtype=np.uint64)
    positions = positions_of(bloom, candidates)
    low = positions < 2 ** 24
    high = positions >= 2 ** 32
    last = (positions[:, 0] >= 2 ** 32 - 2 ** 20) & (positions[:, 0] < MAX_PART_BITS)  # end of part 0
    chosen = np.flatnonzero((low[:, 0] & high[:, 1]) | (high[:, 0] & low[:, 1]))[:20]
    chosen = np.append(chosen, np.flatnonzero(last & low[:, 1] & ~np.isin(
        np.arange(len(candidates)), chosen))[:1])
    assert chosen.size == 21
    keys = candidates[chosen]
    assert shared.add_many(keys).all()
    bloom.add_many(keys)
    assert shared.contains_many(keys).all() and not shared.contains_many(candidates[:5000][
        ~bloom.contains_many(candidates[:5000])]).any()
    assert plain_client.strlen(shared.keys[0]) == 2 ** 29  # 512 MiB: its bits and its stamp
    assert plain_client.strlen(shared.keys[1]) == shared.part_sizes[1] + STAMP_BYTES <= 2 ** 21 + 128
    for position in positions[chosen].ravel().tolist():
        byte = position >> 3
        part, offset = divmod(byte, MAX_PART_BITS // 8)
        assert plain_client.getrange(shared.keys[part], offset, offset) == \
            bloom.bits.data[byte:byte + 1].tobytes()
    with pytest.raises(Exception, match="bit offset is not an integer or out of range"):
        plain_client.setbit("one-string", 2 ** 32, 1)
    shared.delete()


@pytest.mark.parametrize("way", ["dense", "sparse", "chosen"])
def test_both_ways_of_touching_a_part_answer_as_keys_one_after_another(plain_client, monkeypatch, way):
    """Each part is read and ORed whole (dense) or touched bit by bit with BITFIELD (sparse);
    forced either way, and mixed as the cost model picks, the answers, the bits and the
    lookups are BloomFilter's, duplicates inside a chunk and across chunks included."""
    if way != "chosen":
        monkeypatch.setattr(redis_bits, "dense", lambda bits, size, write: way == "dense")
    monkeypatch.setattr(redis_filter_module, "_CHUNK_KEYS", 500)
    base = keys_of_every_kind(1200, seed=31)
    keys = base + base[::5] + base[:30]
    shared = RedisBackedFilter.create(plain_client, f"ways-{way}", 50_000, 6, part_bits=64 * 100)
    bloom = BloomFilter(50_000, 6)
    assert shared.add_many(keys).tolist() == sequential_answers(bloom, keys)
    assert shared.to_bytes() == bloom.to_bytes()
    probes = keys_of_every_kind(1500, seed=32) + keys[:100]
    assert shared.contains_many(probes).tolist() == bloom.contains_many(probes).tolist()


def test_the_load_runner_counts_every_key_and_the_servers_cpu(plain_server):
    client = plain_server.client()
    shared = RedisBackedFilter.create(client, "load", 100_000, 7)
    keys = [f"load-{i}" for i in range(3000)]
    result = run_load(plain_server.url, client, "add_many", "load", keys, clients=2)
    assert (result.path, result.clients, result.keys) == ("add_many", 2, 3000)
    assert result.server_cpu_s > 0 and result.keys_per_s > 0 and result.server_us_per_key > 0
    assert shared.contains_many(keys).all()
    with pytest.raises(ValueError, match="path must be one of"):
        run_load(plain_server.url, client, "SETBIT", "load", keys)
    client.close()
