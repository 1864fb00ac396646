"""A bloomedu filter whose bits live in Redis, for servers without the RedisBloom module.

Article 1's deduplicator shared by several consumers needs one filter that all of
them see and change.  :class:`RedisBackedFilter` keeps the bits of a
:class:`bloomedu.BloomFilter` (the same m, k and positions, computed by
BloomFilter's own code) in Redis strings, byte for byte: GET of its key is the
bit storage of ``BloomFilter.to_bytes``, so a filter moves between Python and
Redis unchanged (:meth:`to_filter`, :meth:`from_filter`).

- **Layout.** BloomFilter bit b sits in byte b >> 3 under mask 1 << (b & 7);
  Redis numbers the bits of a byte from the top (SETBIT offset 0 is mask 0x80),
  so bit b is SETBIT offset (b & ~7) | (7 - (b & 7)).
- **More than one string.** A Redis string holds at most 2^32 bits (512 MiB), so
  a larger filter is split into parts of ``part_bits`` bits, each its own key.
  All of a filter's keys share one hash tag (``{name}``): in a cluster they live
  in one slot, on one node.
- **Atomic add-if-absent: one script call per chunk.**  A key's k bits may fall in
  several parts, and two consumers adding the same key at once must not both be
  told it is new.  ``BITFIELD`` is atomic on one key only; a script runs alone
  on the server whatever keys it touches.  :meth:`add_many` sends one script call
  per chunk of keys: the chunk's offsets travel as one binary string per part
  (little-endian uint32), and the script sets them with as few ``BITFIELD ...
  SET u1`` calls as Lua's argument limit allows (1,000 bits a call), returning
  each bit's old value; the client reads, key by key, whether one of its bits
  was 0 (the key was new).  ``BITFIELD`` applies its operations in order, so the
  answers are those of adding the chunk's keys one after another.  The chunks
  are pipelined: one round trip for them all.

Taught in ``notebooks/11_one_filter_many_consumers.ipynb``; tested against a real
Redis in ``tests/test_redis_filter.py``.
"""

from __future__ import annotations

import numpy as np

from ..core.checks import is_int
from ..core.filter import BloomFilter

__all__ = ["RedisBackedFilter", "positions_of", "redis_offsets", "MAX_PART_BITS"]

MAX_PART_BITS = 2 ** 32       # the most bits one Redis string holds
_CHUNK_KEYS = 2048            # keys per script call
_READ_BYTES = 16 << 20        # GETRANGE/SETRANGE piece

# KEYS: the part keys.  ARGV[1]: 'SET' (add) or 'GET' (ask); ARGV[1 + J]: the bit offsets in part J,
# little-endian uint32, in key order.  Answers one string per part: each bit's old value, '0' or '1'.
BITS_SCRIPT = """
local op, per_call = ARGV[1], 1000
local width = (op == 'SET') and 4 or 3
local replies = {}
for j = 1, #KEYS do
  local blob, olds = ARGV[j + 1], {}
  local total = #blob / 4
  for first = 0, total - 1, per_call do
    local count = math.min(per_call, total - first)
    local offsets = {struct.unpack('<' .. string.rep('I4', count), blob, first * 4 + 1)}
    local args = {}
    for i = 1, count do
      local at = (i - 1) * width
      args[at + 1], args[at + 2], args[at + 3] = op, 'u1', offsets[i]
      if width == 4 then args[at + 4] = '1' end
    end
    local got = redis.call('BITFIELD', KEYS[j], unpack(args))
    olds[#olds + 1] = table.concat(got)
  end
  replies[j] = table.concat(olds)
end
return replies
"""


def positions_of(bloom: BloomFilter, keys) -> np.ndarray:
    """Every key's k positions, as BloomFilter's own bulk code computes them: an (n, k) array.

    >>> f = BloomFilter(1024, 3)
    >>> positions_of(f, ["123", 42]).tolist() == [f.bit_indices("123"), f.bit_indices(42)]
    True
    """
    columns = [positions.copy() for positions in bloom._chunk_positions(keys)]
    k = bloom.num_hashes
    rows = [np.stack(columns[i:i + k], axis=1) for i in range(0, len(columns), k)]
    return np.concatenate(rows) if rows else np.zeros((0, k), dtype=np.int64)


def redis_offsets(positions: np.ndarray) -> np.ndarray:
    """BloomFilter bit positions as Redis SETBIT offsets (counted over all the parts: a part
    holds whole bytes, so part J's offset o is J * part_bits + o).

    Within a byte Redis counts from the top bit, BloomFilter from the bottom.

    >>> redis_offsets(np.array([0, 7, 8, 9])).tolist()
    [7, 0, 15, 14]
    """
    positions = np.asarray(positions, dtype=np.int64)
    return (positions & ~7) | (7 - (positions & 7))


def _node_client(client, key: str):
    """The plain client of the node that holds ``key``: the client itself unless a cluster's."""
    if not hasattr(client, "get_node_from_key"):
        return client
    return client.get_redis_connection(client.get_node_from_key(key))


class RedisBackedFilter:
    """A BloomFilter(num_bits, num_hashes) whose bits are Redis strings named ``{name}:bits:J``.

    ``client``: a redis-py ``Redis`` or ``RedisCluster``.  The filter's m, k and part size are
    kept beside the bits (``{name}:meta``), so another process can :meth:`open` it by name.

    >>> from bloomedu.services.redis_server import RedisServer
    >>> with RedisServer() as server:
    ...     shared = RedisBackedFilter.create(server.client(), "clicks", 1024, 3)
    ...     shared.add_many(["123", "456", "123"]).tolist(), "123" in shared
    ([True, True, False], True)
    """

    def __init__(self, client, name: str, num_bits: int, num_hashes: int,
                 part_bits: int = MAX_PART_BITS):
        if not isinstance(name, str) or not name or "{" in name or "}" in name:
            raise ValueError(f"name must be a non-empty str without braces, got {name!r}")
        if not is_int(part_bits) or not 64 <= part_bits <= MAX_PART_BITS or part_bits % 64:
            raise ValueError(f"part_bits must be a multiple of 64 in 64..2**32, got {part_bits!r}")
        self.shape = BloomFilter(num_bits, num_hashes)  # m, k and the positions: BloomFilter's own
        self.client, self.name, self.part_bits = client, name, int(part_bits)
        self.num_bits, self.num_hashes = self.shape.num_bits, self.shape.num_hashes
        self.num_parts = -(-self.shape.nbytes * 8 // self.part_bits)
        self.keys = [f"{{{name}}}:bits:{j}" for j in range(self.num_parts)]
        self.meta_key = f"{{{name}}}:meta"
        # In a cluster every key of the filter is in one slot: scripts go, pipelined, to its node
        # (redis-py's cluster pipelines refuse scripts).
        self.node = _node_client(client, self.meta_key)
        self._bits = self.node.register_script(BITS_SCRIPT)

    # --- making, finding and dropping a filter ------------------------------------------
    @classmethod
    def create(cls, client, name: str, num_bits: int, num_hashes: int,
               part_bits: int = MAX_PART_BITS) -> "RedisBackedFilter":
        """A new filter, or the one of that name if it has the same m, k and part size."""
        new = cls(client, name, num_bits, num_hashes, part_bits)
        meta = {"num_bits": new.num_bits, "num_hashes": new.num_hashes,
                "part_bits": new.part_bits, "hashing": BloomFilter.HASHING}
        if not client.hsetnx(new.meta_key, "num_bits", new.num_bits):
            existing = cls.open(client, name)
            if (existing.num_bits, existing.num_hashes, existing.part_bits) != \
                    (new.num_bits, new.num_hashes, new.part_bits):
                raise ValueError(f"a filter named {name!r} exists with num_bits="
                                 f"{existing.num_bits}, num_hashes={existing.num_hashes}, "
                                 f"part_bits={existing.part_bits}")
            return existing
        client.hset(new.meta_key, mapping=meta)
        return new

    @classmethod
    def from_capacity(cls, client, name: str, expected_items: int, fpp: float,
                      part_bits: int = MAX_PART_BITS) -> "RedisBackedFilter":
        """Sized as ``BloomFilter.from_capacity(n, p)`` sizes a filter (lesson 07)."""
        shape = BloomFilter.from_capacity(expected_items, fpp)
        return cls.create(client, name, shape.num_bits, shape.num_hashes, part_bits)

    @classmethod
    def open(cls, client, name: str) -> "RedisBackedFilter":
        """The filter another process created under ``name``."""
        meta = client.hgetall(f"{{{name}}}:meta")
        if not meta or b"part_bits" not in meta:
            raise KeyError(f"no filter named {name!r} on this server")
        if int(meta[b"hashing"]) != BloomFilter.HASHING:
            raise ValueError(f"filter {name!r} uses hashing {int(meta[b'hashing'])}, "
                             f"not this library's {BloomFilter.HASHING}")
        return cls(client, name, int(meta[b"num_bits"]), int(meta[b"num_hashes"]),
                   int(meta[b"part_bits"]))

    def delete(self) -> None:
        """Remove the filter's keys from Redis."""
        for key in self.keys + [self.meta_key]:
            self.client.delete(key)

    # --- adding and asking ----------------------------------------------------------------
    def _chunk_args(self, offsets: np.ndarray) -> tuple[list, list]:
        """For a chunk's (keys, k) Redis offsets: each part's offsets as little-endian uint32
        bytes (in key order), and where in the flattened chunk each part's bits sit."""
        flat = offsets.ravel()
        if self.num_parts == 1:
            return [flat.astype("<u4").tobytes()], [slice(None)]
        part = flat // self.part_bits
        blobs, places = [], []
        for j in range(self.num_parts):
            place = np.flatnonzero(part == j)
            blobs.append((flat[place] - j * self.part_bits).astype("<u4").tobytes())
            places.append(place)
        return blobs, places

    def _old_bits(self, op: str, keys) -> np.ndarray:
        """Run the bit script (``op`` 'SET' or 'GET') over every key: a (keys, k) array of the
        bits' values before the call, as if the keys went in one after another."""
        if isinstance(keys, (str, bytes, int)):
            raise TypeError("keys must be an iterable of keys (use add/in for a single key)")
        keys = keys if isinstance(keys, (list, tuple, np.ndarray)) else list(keys)
        offsets = redis_offsets(positions_of(self.shape, keys))  # every key checked before a bit is set
        chunks = [self._chunk_args(offsets[start:start + _CHUNK_KEYS])
                  for start in range(0, offsets.shape[0], _CHUNK_KEYS)]
        pipe = self.node.pipeline(transaction=False)
        for blobs, _ in chunks:
            self._bits(keys=self.keys, args=[op, *blobs], client=pipe)
        old = np.empty(offsets.size, dtype=np.uint8)
        done = 0
        for (blobs, places), replies in zip(chunks, pipe.execute()):
            size = sum(len(blob) for blob in blobs) // 4
            window = old[done:done + size]
            for place, reply in zip(places, replies):
                window[place] = np.frombuffer(reply, dtype=np.uint8) - ord("0")
            done += size
        return old.reshape(offsets.shape)

    def add_many(self, keys) -> np.ndarray:
        """Insert keys (as ``BloomFilter.add_many`` takes them); for each, True if it was new.

        Atomic key by key: a key is new for exactly one of several clients adding it at once.
        """
        return (self._old_bits("SET", keys) == 0).any(axis=1)

    def contains_many(self, keys) -> np.ndarray:
        """For each key, whether the filter might contain it (as ``BloomFilter.contains_many``)."""
        return self._old_bits("GET", keys).all(axis=1)

    def add(self, key) -> bool:
        """Insert one key; True if it was new (one of its bits was 0)."""
        return bool(self.add_many([key])[0])

    def __contains__(self, key) -> bool:
        return bool(self.contains_many([key])[0])

    # --- to and from bloomedu's BloomFilter -------------------------------------------------
    def _part_bytes(self, j: int) -> int:
        return min(self.part_bits // 8, self.shape.nbytes - j * (self.part_bits // 8))

    def to_filter(self) -> BloomFilter:
        """The same filter in Python: a BloomFilter with these m, k and bits."""
        bloom = BloomFilter(self.num_bits, self.num_hashes)
        start = 0
        for j, key in enumerate(self.keys):
            size = self._part_bytes(j)
            for offset in range(0, size, _READ_BYTES):
                piece = self.client.getrange(key, offset, min(size, offset + _READ_BYTES) - 1)
                bloom.bits.data[start + offset:start + offset + len(piece)] = \
                    np.frombuffer(piece, dtype=np.uint8)
            start += size
        return bloom

    def to_bytes(self) -> bytes:
        """``BloomFilter.to_bytes`` of the same filter."""
        return self.to_filter().to_bytes()

    @classmethod
    def from_filter(cls, client, name: str, bloom: BloomFilter,
                    part_bits: int = MAX_PART_BITS) -> "RedisBackedFilter":
        """Put a BloomFilter's bits into Redis under ``name`` (replacing what was there)."""
        new = cls.create(client, name, bloom.num_bits, bloom.num_hashes, part_bits)
        start = 0
        for j, key in enumerate(new.keys):
            client.delete(key)
            size = new._part_bytes(j)
            for offset in range(0, size, _READ_BYTES):
                piece = bloom.bits.data[start + offset:start + min(size, offset + _READ_BYTES)]
                client.setrange(key, offset, piece.tobytes())
            start += size
        return new

    def __repr__(self) -> str:
        return (f"RedisBackedFilter(name={self.name!r}, num_bits={self.num_bits}, "
                f"num_hashes={self.num_hashes}, parts={self.num_parts})")
