"""Past one machine: the article's day of clicks in one filter sharded over a Redis Cluster.

Article 1's day is 864,000,000 click IDs; at p = 0.001 a Bloom filter for it needs
m = -n ln p / (ln 2)^2 = 12.4 Gbit (1.45 GiB), more than one Redis string (2^32 bits)
and more than we may want on one node.  :class:`ShardedFilter` splits it by hash
slot, the way Redis Cluster splits keys: an ID's slot is CRC16(ID) mod 16384, the
slots are cut into as many equal ranges as there are shards (``--cluster create``
cuts them the same way among its nodes), and shard j is a
:class:`~bloomedu.services.redis_filter.RedisBackedFilter` sized for its share
n / shards at the same p, named with a hash tag whose slot lies in range j, so that
with as many shards as nodes each node holds one shard: the shard of the IDs that
node would hold if they were keys.  Each shard is a plain BloomFilter, byte for byte.

A key's slot is CRC16 of the bytes BloomFilter hashes (``key_to_bytes``: a str's UTF-8, an
int's 8-byte value, a ``bytearray``'s or ``memoryview``'s bytes), so ``123`` and ``"123"`` are
two keys here as everywhere; a batch is read as every filter reads one
(:func:`~bloomedu.core.hashing.key_list`: one key passed as a batch, float arrays and
fixed-width arrays whose elements end in NUL are refused before anything is sent).  A shard
whose node cannot answer raises (``ConnectionError`` after its ``retry_s``, or
``FilterLost`` if the node came back without its data), never "absent"; on a cluster with
replicas, ``replicas=1`` makes every write wait until a replica holds it, so a failover
loses nothing, and every read be confirmed by a replica, so a primary deposed by a failover
never answers from its older bits (``notebooks/deeper/18_cluster_failover.ipynb`` shows
both).

Taught in ``notebooks/18_many_consumers.ipynb``; tested on a real 3-node
cluster in ``tests/test_redis_cluster.py``.
"""

from __future__ import annotations

import math
from binascii import crc_hqx
from dataclasses import dataclass

import numpy as np

from ..core.filter import BloomFilter
from ..core.hashing import key_list, key_to_bytes
from .redis_filter import MAX_PART_BITS, RedisBackedFilter, ServerFilter, default_part_bits

__all__ = ["ShardedFilter", "ShardLayout", "day_layout", "key_slot", "slot_ranges"]

SLOTS = 16384


def key_slot(key: bytes) -> int:
    """Redis Cluster's slot of a key: CRC16 (XMODEM) of it, or of its {hash tag}, mod 16384.

    >>> key_slot(b"123"), key_slot(b"{user1000}.following") == key_slot(b"user1000")
    (5970, True)
    """
    start = key.find(b"{")
    if start >= 0:
        end = key.find(b"}", start + 1)
        if end > start + 1:
            key = key[start + 1:end]
    return crc_hqx(key, 0) % SLOTS


def slot_ranges(count: int) -> list[tuple[int, int]]:
    """The 16,384 slots cut into ``count`` ranges, as ``redis-cli --cluster create`` cuts them.

    >>> slot_ranges(3)
    [(0, 5460), (5461, 10922), (10923, 16383)]
    """
    bounds = [round(i * SLOTS / count) for i in range(count + 1)]
    return [(bounds[i], bounds[i + 1] - 1) for i in range(count)]


def _tag_in(first: int, last: int, prefix: str) -> str:
    """The first name ``prefix-N`` whose slot lies in first..last."""
    for number in range(1_000_000):
        name = f"{prefix}-{number}"
        if first <= key_slot(name.encode()) <= last:
            return name
    raise ValueError(f"no name found for slots {first}..{last}")


@dataclass(frozen=True)
class ShardLayout:
    """How a filter for n items at rate p lies on a cluster of ``nodes`` nodes."""

    n: int
    p: float
    shards: int
    nodes: int
    bits_per_shard: int
    num_hashes: int

    @property
    def keys_per_shard(self) -> int:
        """Redis strings of bits per shard (its description is one key more)."""
        return -(-self.bits_per_shard // default_part_bits(self.bits_per_shard))

    @property
    def bytes_per_shard(self) -> int:
        return 8 * -(-self.bits_per_shard // 64)

    @property
    def shards_per_node(self) -> int:
        return -(-self.shards // self.nodes)

    @property
    def bit_strings_per_node(self) -> int:
        """Redis strings of bits per node."""
        return self.keys_per_shard * self.shards_per_node

    @property
    def keys_per_node(self) -> int:
        """Keys per node: its shards' strings of bits, and each shard's description."""
        return (self.keys_per_shard + 1) * self.shards_per_node

    @property
    def bytes_per_node(self) -> int:
        return self.bytes_per_shard * self.shards_per_node


def day_layout(*, n: int = 864_000_000, p: float = 0.001, nodes: int = 3) -> ShardLayout:
    """The fewest shards (a multiple of ``nodes``) whose filters each fit one Redis string.

    >>> layout = day_layout()
    >>> layout.shards, layout.bits_per_shard, layout.num_hashes
    (3, 4140745220, 10)
    >>> layout.bit_strings_per_node, layout.keys_per_node   # and the shard's description
    (1, 2)
    """
    shards = nodes
    while True:
        shape = BloomFilter.from_capacity(math.ceil(n / shards), p)
        if shape.nbytes * 8 <= MAX_PART_BITS:
            return ShardLayout(n, p, shards, nodes, shape.num_bits, shape.num_hashes)
        shards += nodes


class ShardedFilter(ServerFilter):
    """One filter for n items at rate p, as ``shards`` BloomFilters on a (cluster) client.

    >>> from bloomedu.services.redis_cluster import RedisCluster
    >>> with RedisCluster(3) as cluster:
    ...     f = ShardedFilter.create(cluster.client(), "day", expected_items=30_000, fpp=0.001)
    ...     f.add_many(["123", "456", "123"]).tolist(), [cluster.node_of_slot(s) for s in f.shard_slots]
    ([True, True, False], [0, 1, 2])
    """

    def __init__(self, shards: list[RedisBackedFilter]):
        self.shards = shards
        self.starts = np.array([first for first, _ in slot_ranges(len(shards))])

    @classmethod
    def create(cls, client, name: str, expected_items: int, fpp: float, shards: int = 3,
               part_bits: int | None = None, **options) -> "ShardedFilter":
        """Shards sized as ``BloomFilter.from_capacity(ceil(n / shards), p)``, shard j in slot
        range j; ``options`` (``replicas``, ``retry_s``) go to each shard."""
        n = math.ceil(expected_items / shards)
        return cls([RedisBackedFilter.from_capacity(client, _tag_in(first, last, f"{name}-shard{j}"),
                                                    n, fpp, part_bits, **options)
                    for j, (first, last) in enumerate(slot_ranges(shards))])

    @classmethod
    def open(cls, client, name: str, shards: int = 3, **options) -> "ShardedFilter":
        """The sharded filter another process created under ``name`` with ``shards`` shards."""
        return cls([RedisBackedFilter.open(client, _tag_in(first, last, f"{name}-shard{j}"),
                                           **options)
                    for j, (first, last) in enumerate(slot_ranges(shards))])

    @property
    def shard_slots(self) -> list[int]:
        """The slot of each shard's keys (all of a shard's keys share its hash tag)."""
        return [key_slot(shard.meta_key.encode()) for shard in self.shards]

    def shard_of(self, keys: list) -> np.ndarray:
        """Each key's shard: the slot range the CRC16 slot of its bytes falls in.

        >>> from bloomedu.services.redis_server import RedisServer
        >>> with RedisServer() as server:  # one node can hold every shard too
        ...     f = ShardedFilter.create(server.client(), "s", expected_items=300, fpp=0.01)
        ...     f.shard_of(["8", b"8", 8]).tolist()   # slots 14171, 14171 and 7898
        [2, 2, 1]
        """
        slots = np.fromiter((key_slot(key_to_bytes(k)) for k in keys),
                            dtype=np.int64, count=len(keys))
        return np.searchsorted(self.starts, slots, side="right") - 1

    def _by_shard(self, method: str, keys) -> np.ndarray:
        keys = key_list(keys)  # checked as every filter checks a batch, ints as their values
        which = self.shard_of(keys)
        answers = np.zeros(len(keys), dtype=bool)
        for j, shard in enumerate(self.shards):
            mine = np.flatnonzero(which == j)
            if mine.size:
                answers[mine] = getattr(shard, method)([keys[i] for i in mine])
        return answers

    def add_many(self, keys) -> np.ndarray:
        """Add keys, each to its shard; for each, True if it was new."""
        return self._by_shard("add_many", keys)

    def contains_many(self, keys) -> np.ndarray:
        """For each key, whether its shard might contain it."""
        return self._by_shard("contains_many", keys)

    def add(self, key) -> bool:
        """Add one key to its shard; True if it was new."""
        return bool(self.add_many([key])[0])

    def __contains__(self, key) -> bool:
        return bool(self.contains_many([key])[0])
