"""Scripts of CF.* commands, run the same way on the running module and on RedisCuckooFilter.

A script is a seeded list of (command, item): mostly ``CF.ADD``, with ``CF.ADDNX``, ``CF.DEL``
(of items added and of items never added), ``CF.COUNT`` and ``CF.EXISTS`` mixed in, so that
a run goes through evictions, growths, full filters and compactions.  Each answer is written
as the server gives it: an int (1/0 for the yes/no commands, the count for CF.COUNT) or the
error's text.  Used by tests/test_cuckoo_redis.py (against the server) and
tests/test_cuckoo_redis_model.py (recorded runs, tests/data/redisbloom_cuckoo_vectors.json,
written by tools/cuckoo_vectors.py).
"""

from __future__ import annotations

import numpy as np

from bloomedu.compat.redisbloom_cuckoo import RedisBloomError, RedisCuckooFilter
from redis_support import mixed_items

COMMANDS = ("CF.ADD", "CF.ADDNX", "CF.DEL", "CF.COUNT", "CF.EXISTS")
_WEIGHTS = (0.55, 0.15, 0.15, 0.1, 0.05)


def script(count: int, seed: int, deletes: float = 1.0) -> list[tuple[str, object]]:
    """``count`` commands on items of every kind; ``deletes`` scales how many are CF.DEL."""
    rng = np.random.default_rng(seed)
    items = mixed_items(count, seed)
    weights = np.array(_WEIGHTS) * [1, 1, deletes, 1, 1]
    kinds = rng.choice(len(COMMANDS), size=len(items), p=weights / weights.sum())
    ops = []
    for i, (kind, item) in enumerate(zip(kinds, items)):
        if COMMANDS[kind] in ("CF.DEL", "CF.COUNT", "CF.EXISTS") and i and rng.random() < 0.8:
            item = items[int(rng.integers(0, i))]  # an item seen before: most were added
        ops.append((COMMANDS[kind], item))
    return ops


def run_model(model: RedisCuckooFilter, ops) -> list:
    """Every command's answer from the model: an int, or the error's text."""
    calls = {"CF.ADD": model.add, "CF.ADDNX": model.add_nx, "CF.DEL": model.delete,
             "CF.COUNT": model.count, "CF.EXISTS": model.exists}
    answers = []
    for command, item in ops:
        try:  # CF.ADD answers 1 to every item it stores; the model's add returns None
            answer = calls[command](item)
            answers.append(1 if answer is None and command == "CF.ADD" else int(answer))
        except RedisBloomError as error:
            answers.append(str(error))
    return answers


def run_server(client, key: str, ops, chunk: int = 400) -> list:
    """Every command's answer from the server (pipelined): an int, or the error's text."""
    answers = []
    for start in range(0, len(ops), chunk):
        pipe = client.pipeline(transaction=False)
        for command, item in ops[start:start + chunk]:
            pipe.execute_command(command, key, item)
        for reply in pipe.execute(raise_on_error=False):
            answers.append(str(reply) if isinstance(reply, Exception) else int(reply))
    return answers


def server_dump(client, key: str) -> list[tuple[int, bytes]]:
    """CF.SCANDUMP's pairs up to the final (0, None), which is left out."""
    pairs, iterator = [], 0
    while True:
        iterator, data = client.execute_command("CF.SCANDUMP", key, iterator)
        if iterator == 0:
            assert data is None
            return pairs
        pairs.append((iterator, data))


def server_info(client, key: str) -> dict:
    """CF.INFO as {field: value}: redis-py 5.0 gives the flat list, later versions a dict."""
    reply = client.execute_command("CF.INFO", key)
    pairs = reply.items() if isinstance(reply, dict) else zip(reply[::2], reply[1::2])
    return {name.decode() if isinstance(name, bytes) else name: value for name, value in pairs}


def load_into_server(client, key: str, chunks) -> None:
    for iterator, data in chunks:
        assert client.execute_command("CF.LOADCHUNK", key, iterator, data) == b"OK"
