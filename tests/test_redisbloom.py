"""RedisBloomFilter against the RUNNING RedisBloom module (2.8.2, loaded into a real Redis).

For each parameter set the same commands go to the server and to the Python model: every
BF.ADD/BF.MADD answer, every BF.SCANDUMP pair (header and bits, through several growths),
BF.INFO, BF.CARD and BF.MEXISTS must be equal; a Python dump replayed with BF.LOADCHUNK
must answer as the Python filter does.  Recorded vectors (tests/data/redisbloom_vectors.json,
written by these same runs) are checked in tests/test_redisbloom_model.py, without a server.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bloomedu.compat.redisbloom import RedisBloomError, RedisBloomFilter, encode_item, info_reply
from redis_support import bloom_client, bloom_server, mixed_items  # noqa: F401  (fixtures)

# (error rate, capacity, expansion, nonscaling): defaults, tiny and huge rates, tiny
# capacities (a growth every item or two), expansion 1 and large, NONSCALING.
PARAMS = [
    (0.01, 100, 2, False), (0.001, 1000, 4, False), (0.1, 10, 1, False), (0.5, 1, 2, False),
    (0.5, 1, 1, False), (0.9999, 3, 3, False), (0.999999999, 2, 2, False), (1e-9, 50, 2, False),
    (1e-300, 5, 2, False), (0.05, 7, 1, False), (0.25, 2, 7, False), (0.01, 64, 2, False),
    (0.01, 1000, 2, True), (0.3, 20, 2, True), (0.999999, 1, 2, True), (5e-324, 3, 2, True),
    (0.0625, 33, 5, False), (1 / 3, 9, 2, False),
]


def server_reply(client, key, *args):
    return client.execute_command(*args[:1], key, *args[1:])


def reserve(client, key, model):
    args = model.reserve_args(key)
    if args[-2:] == ["EXPANSION", 2]:
        args = args[:-2]  # the default, as most users write it
    assert client.execute_command(*args) == b"OK"


def server_dump(client, key) -> list[tuple[int, bytes]]:
    pairs, iterator = [], 0
    while True:
        iterator, data = client.execute_command("BF.SCANDUMP", key, iterator)
        if iterator == 0:
            assert data == b""
            return pairs
        pairs.append((iterator, data))


def server_info(client, key) -> dict:
    return info_reply(client.execute_command("BF.INFO", key))  # a dict or a list, by redis-py


def madd(client, key, items, chunk=500) -> list[int]:
    pipe = client.pipeline(transaction=False)
    for start in range(0, len(items), chunk):
        pipe.execute_command("BF.MADD", key, *items[start:start + chunk])
    return [answer for reply in pipe.execute() for answer in reply]


def mexists(client, key, items, chunk=500) -> list[int]:
    pipe = client.pipeline(transaction=False)
    for start in range(0, len(items), chunk):
        pipe.execute_command("BF.MEXISTS", key, *items[start:start + chunk])
    return [answer for reply in pipe.execute() for answer in reply]


def assert_same(client, key, model):
    assert server_dump(client, key) == model.scandump()
    assert server_info(client, key) == model.info()
    assert client.execute_command("BF.CARD", key) == len(model)


def items_for(capacity, expansion, nonscaling, seed):
    """Enough items to fill the first sub-filter and open three more (or fill a NONSCALING one)."""
    if nonscaling:
        count = capacity
    else:
        count = capacity * sum(expansion ** i for i in range(4)) + 5
    count = min(count, 6000)
    items = mixed_items(count, seed)
    return items + items[:: 7]  # and some again: those must answer 0


@pytest.mark.parametrize("error, capacity, expansion, nonscaling", PARAMS)
def test_bulk_adds_dump_the_servers_bytes_through_growths(bloom_client, error, capacity,
                                                          expansion, nonscaling):
    model = RedisBloomFilter(error, capacity, expansion=expansion, nonscaling=nonscaling)
    reserve(bloom_client, "f", model)
    assert_same(bloom_client, "f", model)
    items = items_for(capacity, expansion, nonscaling, seed=capacity + expansion)
    if nonscaling:
        items = items[:capacity]  # BF.MADD past a NONSCALING filter's capacity errs
    answers = model.add_many(items)
    assert madd(bloom_client, "f", items) == answers.astype(int).tolist()
    assert_same(bloom_client, "f", model)
    if not nonscaling:
        assert model.info()["Number of filters"] >= (2 if capacity < len(items) else 1)
    probes = mixed_items(300, seed=99) + items[:100]
    assert mexists(bloom_client, "f", probes) == model.exists_many(probes).astype(int).tolist()


@pytest.mark.parametrize("error, capacity, expansion, nonscaling", PARAMS[::3])
def test_one_add_at_a_time_answers_as_bf_add(bloom_client, error, capacity, expansion, nonscaling):
    model = RedisBloomFilter(error, capacity, expansion=expansion, nonscaling=nonscaling)
    reserve(bloom_client, "one", model)
    items = items_for(capacity, expansion, nonscaling, seed=7)[:400]
    pipe = bloom_client.pipeline(transaction=False)
    for item in items:
        pipe.execute_command("BF.ADD", "one", item)
    replies = pipe.execute(raise_on_error=False)
    for item, reply in zip(items, replies):
        if isinstance(reply, Exception):
            with pytest.raises(RedisBloomError, match=str(reply).removeprefix("ERR ")):
                model.add(item)
        else:
            assert model.add(item) is bool(reply)
            assert model.exists(item)
    assert_same(bloom_client, "one", model)


@pytest.mark.parametrize("error, capacity, expansion, nonscaling", PARAMS)
def test_a_python_dump_loaded_with_loadchunk_answers_as_python(bloom_client, error, capacity,
                                                               expansion, nonscaling):
    model = RedisBloomFilter(error, capacity, expansion=expansion, nonscaling=nonscaling)
    items = items_for(capacity, expansion, nonscaling, seed=3)
    model.add_many(items[:capacity] if nonscaling else items)
    for iterator, data in model.scandump():
        assert bloom_client.execute_command("BF.LOADCHUNK", "loaded", iterator, data) == b"OK"
    probes = items + mixed_items(500, seed=11)
    assert mexists(bloom_client, "loaded", probes) == model.exists_many(probes).astype(int).tolist()
    assert_same(bloom_client, "loaded", model)
    # and the server's dump read back in Python is the same filter
    assert RedisBloomFilter.loadchunks(server_dump(bloom_client, "loaded")) == model


def test_bf_add_without_reserve_is_the_default_filter(bloom_client):
    model = RedisBloomFilter(0.01, 100)
    items = mixed_items(450, seed=5)
    for item in items:
        assert bloom_client.execute_command("BF.ADD", "auto", item) == model.add(item)
    assert_same(bloom_client, "auto", model)
    assert model.info()["Number of filters"] == 3


def test_a_full_nonscaling_filter_errs_as_the_server_does_and_keeps_what_came_before(bloom_client):
    model = RedisBloomFilter(0.01, 5, nonscaling=True)
    reserve(bloom_client, "full", model)
    items = [f"id-{i}" for i in range(8)]
    reply = bloom_client.execute_command("BF.MADD", "full", *items)
    assert reply[:5] == [1] * 5 and len(reply) == 6 and "non scaling filter is full" in str(reply[5])
    with pytest.raises(RedisBloomError, match="non scaling filter is full") as raised:
        model.add_many(items)
    assert raised.value.answers.tolist() == [True] * 5
    assert_same(bloom_client, "full", model)


def test_where_the_module_breaks_the_model_refuses(bloom_client):
    """The module keeps EXPANSION in 32 bits (2**32 + 1 is 1, 2**32 is 0 and breaks the first
    growth, leaving an empty link that answers present for everything); the model takes
    1 .. 2**32 - 1 only (tests/test_redisbloom_model.py: a chain whose next sub-filter cannot
    be sized is full, and the model refuses, whole)."""
    bloom_client.execute_command("BF.RESERVE", "wrapped", "0.01", 10, "EXPANSION", 2 ** 32 + 1)
    assert server_info(bloom_client, "wrapped")["Expansion rate"] == 1
    bloom_client.execute_command("BF.RESERVE", "broken", "0.01", 2, "EXPANSION", 2 ** 32)
    for item in ["a", "b"]:
        bloom_client.execute_command("BF.ADD", "broken", item)
    reply = bloom_client.pipeline(transaction=False).execute_command("BF.ADD", "broken", "c") \
        .execute(raise_on_error=False)[0]
    assert "problem inserting into filter" in str(reply)
    assert bloom_client.execute_command("BF.EXISTS", "broken", "never added") == 1  # the server's
    for expansion in (2 ** 32, 2 ** 32 + 1, 0):
        with pytest.raises(ValueError, match="expansion"):
            RedisBloomFilter(0.01, 2, expansion=expansion)


def test_an_error_rate_that_halves_to_zero_cannot_be_created(bloom_client):
    reply = bloom_client.pipeline(transaction=False) \
        .execute_command("BF.RESERVE", "zero", "5e-324", 10).execute(raise_on_error=False)[0]
    assert "could not create filter" in str(reply)
    with pytest.raises(ValueError, match="could not create filter"):
        RedisBloomFilter(5e-324, 10)


def test_a_sub_filter_over_16_mib_is_dumped_in_16_mib_pieces(bloom_client):
    model = RedisBloomFilter(0.01, 15_000_000, nonscaling=True)  # 143.8 Mbit = 18 MiB
    reserve(bloom_client, "big", model)
    items = np.arange(20_000, dtype=np.uint64) * np.uint64(2 ** 40)
    assert madd(bloom_client, "big", items.tolist(), chunk=5000) == \
        model.add_many(items).astype(int).tolist()
    dump = server_dump(bloom_client, "big")
    assert [len(data) for _, data in dump[1:]] == [16 << 20, model.links[0].nbytes - (16 << 20)]
    assert dump == model.scandump()


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=st.lists(st.one_of(st.binary(max_size=40), st.text(max_size=12),
                                st.integers(-2 ** 63, 2 ** 64 - 1)), max_size=40),
       capacity=st.integers(1, 12), error=st.floats(1e-12, 0.999, allow_nan=False),
       expansion=st.integers(1, 4))
def test_any_items_agree_with_the_server(bloom_client, items, capacity, error, expansion):
    items = [item for item in items if not isinstance(item, str) or _encodable(item)]
    bloom_client.delete("h")
    model = RedisBloomFilter(error, capacity, expansion=expansion)
    reserve(bloom_client, "h", model)
    if items:
        assert bloom_client.execute_command("BF.MADD", "h", *items) == \
            model.add_many(items).astype(int).tolist()
    assert server_dump(bloom_client, "h") == model.scandump()


def _encodable(text: str) -> bool:
    try:
        encode_item(text)
        return True
    except ValueError:
        return False
