"""RedisCuckooFilter against the RUNNING RedisBloom module (2.8.2, loaded into a real Redis).

For each configuration the same script of CF.ADD, CF.ADDNX, CF.DEL, CF.COUNT and CF.EXISTS
goes to the server and to the Python model: every answer (errors included), every CF.SCANDUMP
byte, CF.INFO and CF.MEXISTS must be equal, through evictions, growths, full filters,
"Maximum expansions reached" and the compaction that deletes start.  Dumps are loaded both
ways: the model's with CF.LOADCHUNK into the server, the server's with
``RedisCuckooFilter.loadchunks`` into Python, and both go on answering alike.  Recorded runs
(tests/data/redisbloom_cuckoo_vectors.json) are checked without a server in
tests/test_cuckoo_redis_model.py.
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bloomedu.compat.redisbloom_cuckoo import RedisBloomError, RedisCuckooFilter
from cuckoo_support import (load_into_server, run_model, run_server, script, server_dump,
                            server_info)
from redis_support import bloom_client, bloom_server, mixed_items  # noqa: F401  (fixtures)

# (capacity, bucket size, max iterations, expansion): the defaults; bucket sizes 1 to 8 and
# large; one eviction, many, the most; no growth (a full filter), growth by 1, 2, 4, and
# expansions the module rounds up (3 -> 4, 5 -> 8, 1000 -> 1024); filters that reach 32
# sub-filters; capacities that are not a multiple of the bucket size.
CONFIGS = [
    (1024, 2, 20, 1), (100, 1, 20, 1), (100, 2, 20, 2), (100, 3, 5, 3), (100, 4, 500, 4),
    (64, 5, 20, 5), (50, 6, 1, 1), (200, 7, 20, 2), (64, 8, 20, 0), (600, 16, 20, 2),
    (255 * 2, 255, 20, 1), (2, 1, 1, 1), (4, 2, 65535, 1), (6, 3, 2, 0), (1000, 4, 20, 0),
    (10, 1, 20, 1000), (17, 2, 3, 2), (4096, 2, 20, 1), (5, 1, 100, 2), (33, 4, 1, 2),
]


def ops_for(capacity, bucket_size):
    """Enough commands to fill the first sub-filter several times over (at most 3,000)."""
    return script(min(3000, max(600, 12 * capacity)), seed=capacity + bucket_size)


def reserve(client, key, model):
    assert client.execute_command(*model.reserve_args(key)) == b"OK"


def assert_same(client, key, model):
    assert server_dump(client, key) == model.scandump()
    assert server_info(client, key) == model.info()


def mexists(client, key, items, chunk=500) -> list[int]:
    pipe = client.pipeline(transaction=False)
    for start in range(0, len(items), chunk):
        pipe.execute_command("CF.MEXISTS", key, *items[start:start + chunk])
    return [int(answer) for reply in pipe.execute() for answer in reply]


def probe(client, key, model, seed):
    items = mixed_items(400, seed)
    assert mexists(client, key, items) == model.exists_many(items).astype(int).tolist()


@pytest.mark.parametrize("capacity, bucket_size, max_iterations, expansion", CONFIGS)
def test_every_answer_and_every_dump_byte_equal_the_servers(bloom_client, capacity, bucket_size,
                                                           max_iterations, expansion):
    model = RedisCuckooFilter(capacity, bucket_size, max_iterations, expansion)
    reserve(bloom_client, "f", model)
    assert_same(bloom_client, "f", model)  # empty: no dump at all, on both
    ops = ops_for(capacity, bucket_size)
    assert run_server(bloom_client, "f", ops) == run_model(model, ops)
    assert_same(bloom_client, "f", model)
    probe(bloom_client, "f", model, seed=1)


def test_the_configurations_reach_what_they_are_meant_to():
    """Growth, full filters, the 32-sub-filter limit and compaction all happen somewhere."""
    seen = set()
    for capacity, bucket_size, max_iterations, expansion in CONFIGS:
        model = RedisCuckooFilter(capacity, bucket_size, max_iterations, expansion)
        ops = ops_for(capacity, bucket_size)
        answers = run_model(model, ops)
        seen |= {answer for answer in answers if isinstance(answer, str)}
        if len(model.filters) > 1:
            seen.add("grew")
        deleted = sum(answer == 1 for (command, _), answer in zip(ops, answers) if command == "CF.DEL")
        if model.num_deletes < deleted:  # the count of deletes was reset by a compaction
            seen.add("compacted")
    assert seen >= {"Filter is full", "Maximum expansions reached", "grew", "compacted"}


@pytest.mark.parametrize("capacity, bucket_size, max_iterations, expansion", CONFIGS[::2])
def test_a_python_dump_loaded_with_loadchunk_answers_as_python(bloom_client, capacity,
                                                               bucket_size, max_iterations,
                                                               expansion):
    model = RedisCuckooFilter(capacity, bucket_size, max_iterations, expansion)
    run_model(model, script(min(2000, 8 * capacity + 20), seed=3))
    load_into_server(bloom_client, "loaded", model.scandump())
    assert_same(bloom_client, "loaded", model)
    probe(bloom_client, "loaded", model, seed=2)
    more = script(300, seed=4)  # the loaded filter goes on exactly as the model does
    assert run_server(bloom_client, "loaded", more) == run_model(model, more)
    assert_same(bloom_client, "loaded", model)


@pytest.mark.parametrize("capacity, bucket_size, max_iterations, expansion", CONFIGS[1::2])
def test_a_server_dump_read_by_loadchunks_answers_as_the_server(bloom_client, capacity,
                                                                bucket_size, max_iterations,
                                                                expansion):
    bloom_client.execute_command("CF.RESERVE", "real", capacity, "BUCKETSIZE", bucket_size,
                                 "MAXITERATIONS", max_iterations, "EXPANSION", expansion)
    run_server(bloom_client, "real", script(min(2000, 8 * capacity + 20), seed=5))
    model = RedisCuckooFilter.loadchunks(server_dump(bloom_client, "real"))
    assert_same(bloom_client, "real", model)
    probe(bloom_client, "real", model, seed=6)
    more = script(300, seed=7)
    assert run_server(bloom_client, "real", more) == run_model(model, more)
    assert_same(bloom_client, "real", model)


def test_cf_add_without_reserve_is_the_default_filter(bloom_client):
    model = RedisCuckooFilter(1024)  # CF.ADD creates capacity 1024, bucket size 2, 20, 1
    ops = [("CF.ADD", item) for item in mixed_items(2500, seed=8)]
    assert run_server(bloom_client, "auto", ops) == run_model(model, ops)
    assert_same(bloom_client, "auto", model)
    assert model.info()["Number of filters"] >= 2


def test_a_full_filter_errs_as_the_server_does_and_is_unchanged(bloom_client):
    model = RedisCuckooFilter(16, 2, 30, expansion=0)
    reserve(bloom_client, "full", model)
    items = [f"id-{i}" for i in range(40)]
    answers = run_server(bloom_client, "full", [("CF.ADD", item) for item in items])
    assert "Filter is full" in answers
    first_full = answers.index("Filter is full")
    for item, answer in zip(items, answers):
        before = model.scandump()
        if answer == "Filter is full":
            with pytest.raises(RedisBloomError, match="Filter is full"):
                model.add(item)
            assert model.scandump() == before  # the evictions were undone
        else:
            assert model.add(item) is None  # stored: CF.ADD answered 1
    assert first_full < len(items) - 1 and model.num_items == answers.count(1)
    assert_same(bloom_client, "full", model)


def test_32_sub_filters_refuse_every_add(bloom_client):
    model = RedisCuckooFilter(2, 1, 1, expansion=1)
    reserve(bloom_client, "many", model)
    ops = [("CF.ADD", f"x{i}") for i in range(200)] + [("CF.ADDNX", "x0"), ("CF.ADD", "x0")]
    answers = run_server(bloom_client, "many", ops)
    assert answers == run_model(model, ops)
    assert answers[-2:] == ["Maximum expansions reached"] * 2 and len(model.filters) == 32
    assert_same(bloom_client, "many", model)


def test_deletes_compact_the_sub_filters_as_the_server_does(bloom_client):
    model = RedisCuckooFilter(20, 2, 5, expansion=2)
    reserve(bloom_client, "compact", model)
    items = [f"item-{i}" for i in range(300)]
    adds = [("CF.ADD", item) for item in items]
    assert run_server(bloom_client, "compact", adds) == run_model(model, adds)
    grown = len(model.filters)
    deletes = [("CF.DEL", item) for item in items[::-1][:250]]
    assert run_server(bloom_client, "compact", deletes) == run_model(model, deletes)
    assert len(model.filters) < grown  # emptied sub-filters were freed
    assert_same(bloom_client, "compact", model)
    more = adds[:60] + [("CF.DEL", item) for item in items[:30]]
    assert run_server(bloom_client, "compact", more) == run_model(model, more)
    assert bloom_client.execute_command("CF.COMPACT", "compact") == b"OK"
    model.compact()
    assert_same(bloom_client, "compact", model)


def test_a_sub_filter_over_16_mib_is_dumped_in_16_mib_pieces(bloom_client):
    model = RedisCuckooFilter(20 << 20, 1, expansion=0)  # 32 Mi buckets of one byte
    reserve(bloom_client, "big", model)
    ops = [("CF.ADD", item) for item in mixed_items(2000, seed=9)]
    assert run_server(bloom_client, "big", ops) == run_model(model, ops)
    dump = server_dump(bloom_client, "big")
    assert [len(data) for _, data in dump] == [38, 16 << 20, 16 << 20]
    assert dump == model.scandump()


def test_a_loaded_header_with_an_expansion_the_module_never_makes_is_modelled_too(bloom_client):
    """CF.LOADCHUNK takes any expansion: 3 gives a second sub-filter of 3x the buckets, not a
    power of two, where the second bucket is no longer the first one's mirror."""
    header = struct.pack("<QQQQHHH", 0, 8, 0, 2, 2, 20, 3)
    chunks = [(1, header), (17, bytes(16)), (65, bytes(48))]
    load_into_server(bloom_client, "odd", chunks)
    model = RedisCuckooFilter.loadchunks(chunks)
    ops = script(400, seed=10)
    assert run_server(bloom_client, "odd", ops) == run_model(model, ops)
    assert_same(bloom_client, "odd", model)


@pytest.mark.parametrize("args, message", [
    ((3, "BUCKETSIZE", 2), "Capacity must be at least"), ((10, "BUCKETSIZE", 0), "BUCKETSIZE"),
    ((1000, "BUCKETSIZE", 256), "BUCKETSIZE"), ((10, "MAXITERATIONS", 0), "MAXITERATIONS"),
    ((10, "MAXITERATIONS", 65536), "MAXITERATIONS"), ((10, "EXPANSION", 32769), "EXPANSION"),
    ((10, "EXPANSION", -1), "EXPANSION"),
])
def test_what_cf_reserve_refuses_the_model_refuses(bloom_client, args, message):
    reply = bloom_client.pipeline(transaction=False) \
        .execute_command("CF.RESERVE", "bad", *args).execute(raise_on_error=False)[0]
    assert isinstance(reply, Exception) and message in str(reply)
    options = dict(zip(args[1::2], args[2::2]))
    with pytest.raises(ValueError):
        RedisCuckooFilter(args[0], options.get("BUCKETSIZE", 2),
                          options.get("MAXITERATIONS", 20), options.get("EXPANSION", 1))


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), bucket_size=st.integers(1, 9), max_iterations=st.integers(1, 40),
       expansion=st.integers(0, 9), extra=st.integers(0, 60))
def test_any_small_configuration_and_commands_equal_the_server(bloom_client, data, bucket_size,
                                                               max_iterations, expansion, extra):
    capacity = 2 * bucket_size + extra
    item = st.one_of(st.binary(max_size=12), st.text(max_size=6), st.integers(-2 ** 63, 2 ** 64 - 1))
    ops = data.draw(st.lists(st.tuples(st.sampled_from(["CF.ADD", "CF.ADD", "CF.ADDNX", "CF.DEL",
                                                        "CF.COUNT"]), item), max_size=120))
    bloom_client.delete("h")
    model = RedisCuckooFilter(capacity, bucket_size, max_iterations, expansion)
    reserve(bloom_client, "h", model)
    assert run_server(bloom_client, "h", ops) == run_model(model, ops)
    assert_same(bloom_client, "h", model)
