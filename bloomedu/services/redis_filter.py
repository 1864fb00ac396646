"""A bloomedu filter whose bits live in Redis, for servers without the RedisBloom module.

Article 1's deduplicator shared by several consumers needs one filter that all of them see
and change.  :class:`RedisBackedFilter` keeps the bits of ``BloomFilter(m, k)`` in Redis
strings, byte for byte: the positions come from :mod:`bloomedu.core.hashing`, the one
place every filter gets them from, so a Redis-backed filter and a local ``BloomFilter`` of
the same m and k hold the same bits for the same keys (:meth:`to_filter`, :meth:`from_filter`).

- **Keys.** What ``BloomFilter`` takes, hashed as it hashes them: a str is its UTF-8
  bytes, bytes are themselves, an int is its 8-byte value.  So ``123`` and ``"123"`` are
  two different keys, on this path and every other of lesson 18 (the sharded filter, the
  stream's consumers).  A bytes-like value (``bytearray``, ``memoryview``) is one key, and
  a batch must be an iterable of keys: ``add_many(bytearray(b"ab"))`` is refused, as
  ``BloomFilter.add_many`` refuses it.
- **Layout.** Parts of ``part_bits`` bits, each its own key ``{name}:bits:J``: by default
  2^20 bits (128 KiB, cheap to read and OR whole) for a filter of up to 2^27 bits, else
  2^32 - 512, the most one Redis string holds with the part's stamp (a chunk's bits are then
  too few for a part to be worth reading whole, and fewer parts mean fewer commands); all of
  a filter's keys share one hash tag, so in a cluster they live in one slot, on one node.
  BloomFilter's bit b of a part is Redis bit offset (b & ~7) | (7 - (b & 7)): the first
  ``part_sizes[J]`` bytes of part J are that part of BloomFilter's storage, and the
  ``STAMP_BYTES`` after them its stamp (:func:`part_stamp`: the part's number and the
  filter's ``uid``).  :meth:`create` writes every part whole, zero bits and stamp, in the
  same atomic step as the description: the server holds m/8 bytes from the start.
- **One atomic step per chunk.**  :meth:`RedisBackedFilter.add_many` sends each chunk of keys as one
  ``MULTI``/``EXEC`` transaction of cheap commands (:mod:`bloomedu.services.redis_bits`: a
  ``BITFIELD`` or a ``GETRANGE``/``SET``/``BITOP OR`` per part, no interpreter loop); it
  answers for each key whether it was new, as if the keys went in one after another,
  whichever other clients add at the same time.
- **Retries that cannot lie.**  No command is re-sent blindly: each chunk's transaction
  also sets a bit of a call marker.  If the connection drops, the client looks at the
  marker (under ``WATCH``): not set, the chunk was never applied and is sent again; set,
  it was applied and its answers were lost with the reply, and :class:`AnswersLost` says
  so, rather than answering "seen" for keys this very call made new.  The marker lives ten
  minutes past the last retry the call may make (``retry_s``, at most a day, and one read's
  wait), so no retry finds it expired.
- **A filter that is gone is an error, never "absent".**  The description
  (``{name}:meta``: m, k, part size, hashing scheme, a random ``uid``) is created in one
  atomic step with the filter and lives on the node of its bits; every transaction and
  every lookup reads its ``uid`` too.  A node that came back empty, or a filter deleted or
  made again by someone else, raises :class:`FilterLost`.  A node that does not answer
  raises ``ConnectionError`` after ``retry_s`` seconds of trying.  A command the server
  refuses (``NOPERM`` for a user whose ACL lacks it, ``OOM``) raises the server's error as
  redis-py names it (``NoPermissionError``), saying what of the call was applied.
- **Bits that disappear are an error, never "absent".**  Every transaction and every lookup
  reads, after the bits, the stamp of each part it touched (:meth:`to_filter` of every
  part): a part evicted (any ``maxmemory-policy`` but ``noeviction`` may evict it while the
  description, touched by every call, stays), deleted, cut short or written over by
  another program has no stamp where its bits end, and the call raises :class:`FilterLost`
  (a write that touched it was applied to what was left, which stays unreadable).  So an
  evicting server is not refused but watched: the loss is detected on the first call that
  touches a lost part (the server's ``CONFIG`` may be closed to clients, and a part deleted
  by hand must be caught as well).  A key whose parts all survive is answered as before.
- **Writes lost by the node are an error for whoever saw them.**  Every transaction adds 1
  to the description's write count (``writes``) and every handle keeps the highest count it
  read or wrote (``writes_seen``); a call that finds a count below what its handle knew
  when the call was sent raises :class:`FilterLost`.  So a node restarted from an older
  snapshot (``save`` without an append-only file, or an AOF whose last second was not
  synced), or failed over to a replica that lacked acknowledged writes, is an error for
  every handle that saw a later count, never "absent".  What cannot be told apart: a handle
  opened only after such a restart finds a whole, older filter and answers from it; the
  keys of the lost writes are then absent for it.  Only persistence that keeps every
  acknowledged write prevents that (``appendfsync always``, or ``replicas=R``).
- **Replacing and deleting are one step for readers.**  :meth:`from_filter` writes the new
  parts aside and switches them in with one script at the end (a reader sees the old bits or
  the new ones; a call that dies first changes nothing, and what it wrote aside expires);
  :meth:`delete` removes the description and every part in one command.
- **Foreign keys are refused.**  :meth:`create` refuses a name whose keys hold anything
  not made by this class (a string another application keeps at ``{name}:bits:0``, a
  description without this class's format), and changes nothing.
- **Reads work when the server is full.**  Lookups use only ``HGET``, ``GETRANGE`` and
  ``BITFIELD_RO``, which a server at ``maxmemory`` with ``noeviction`` still serves (a
  filter's parts, allocated whole at :meth:`create`, never grow).
- **Replicas.**  With ``replicas=R`` every transaction is followed by ``WAIT R``: a write
  returns only once R replicas hold it, so a failover to one of them loses nothing
  (:class:`NotReplicated` otherwise).  Every read is confirmed the same way (a write that
  changes nothing, then ``WAIT R``): a primary deposed by a failover, stopped and resumed
  still believing it serves the filter, has no replica to confirm it, so its answers, which
  may lack keys acknowledged since by the new primary, are never used; the lookup asks the
  cluster again, or raises :class:`NotReplicated`.  So with R replicas asked, reads too need
  R replicas up: a promoted primary answers once a replica follows it.  A primary with more
  replicas than R could keep R that have not learnt of the failover yet: ask R as large as
  each primary's replicas where reads must be exact.  R and the wait's timeout are kept in the description:
  every handle that opens the filter (:meth:`open`, a ``ShardedFilter``'s shards, a
  second process) waits for as many replicas as its creator asked, or more if it asks.

Taught in ``notebooks/18_many_consumers.ipynb``; tested against real servers in
``tests/test_redis_filter.py`` and ``tests/test_redis_faults.py``.
"""

from __future__ import annotations

import secrets

import numpy as np

from ..core.checks import MAX_HASHES, MAX_NUM_BITS, is_int, probability, whole_number
from ..core.contract import Filter
from ..core.filter import BloomFilter
from ..core.filter import positions
from ..core.hashing import hashed_batches
from ..core.theory import LN2, num_bits_for
from .redis_bits import ChunkPlan, redis_offsets
from .redis_calls import (AnswersLost, FilterLost, NotReplicated, check, check_whole,
                          check_writes, confirm, node_of, read_chunk, write_chunk)

__all__ = ["RedisBackedFilter", "FilterLost", "AnswersLost", "NotReplicated", "positions_of",
           "redis_offsets", "default_part_bits", "part_stamp", "MAX_PART_BITS", "DEFAULT_PART_BITS",
           "STAMP_BYTES", "FORMAT"]

STAMP_BYTES = 64              # each part's stamp, after its bits in the same string
MAX_PART_BITS = 2 ** 32 - 8 * STAMP_BYTES  # the most bits one Redis string holds, and a stamp
DEFAULT_PART_BITS = 2 ** 20   # 128 KiB a part: cheap to read and OR whole (redis_bits' dense way)
SMALL_FILTER_BITS = 2 ** 27   # up to here parts of DEFAULT_PART_BITS, past it of MAX_PART_BITS
FORMAT = "bloomedu.RedisBackedFilter/2"
MAX_RETRY_S = 86_400          # the longest retry_s: a day
_CHUNK_KEYS = 4096            # keys per transaction
_READ_BYTES = 16 << 20        # GETRANGE/SETRANGE piece

# KEYS[1]: the description, KEYS[2..]: the parts.  ARGV[1]: the number n of the description's
# fields and values, ARGV[2..n+1]: they, then each part's length in bytes and its stamp.
CREATE_SCRIPT = """
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind == 'hash' then return {'exists', redis.call('HGETALL', KEYS[1])} end
if kind ~= 'none' then return {'foreign', KEYS[1], kind} end
for i = 2, #KEYS do
  local part = redis.call('TYPE', KEYS[i])['ok']
  if part ~= 'none' then return {'foreign', KEYS[i], part} end
end
local n = tonumber(ARGV[1])
for i = 2, #KEYS do
  redis.call('SETRANGE', KEYS[i], ARGV[n + 2 * i - 2], ARGV[n + 2 * i - 1])
end
redis.call('HSET', KEYS[1], unpack(ARGV, 2, n + 1))
return {'created'}
"""

# KEYS[1]: the description, KEYS[2..n+1]: the parts, KEYS[n+2..2n+1]: the new parts written
# aside.  ARGV[1]: the uid, ARGV[2..n+1]: each part's full length.  Nothing is changed unless
# the filter is still the one written for and every new part is whole.
SWITCH_SCRIPT = """
if redis.call('HGET', KEYS[1], 'uid') ~= ARGV[1] then return {'lost'} end
local n = (#KEYS - 1) / 2
for i = 1, n do
  if redis.call('STRLEN', KEYS[n + 1 + i]) ~= tonumber(ARGV[i + 1]) then
    return {'short', KEYS[n + 1 + i]}
  end
end
for i = 1, n do
  redis.call('RENAME', KEYS[n + 1 + i], KEYS[i + 1])
  redis.call('PERSIST', KEYS[i + 1])
end
return {'switched', redis.call('HINCRBY', KEYS[1], 'writes', 1)}
"""
_ASIDE_MS = 3_600_000         # new parts written aside vanish if their writer dies first


def part_stamp(uid: str, j: int) -> bytes:
    """The ``STAMP_BYTES`` bytes that follow part ``j``'s bits in its Redis string, for the
    filter of that ``uid``: only :meth:`RedisBackedFilter.create` writes them.

    >>> part_stamp("0123abcd", 2)[:27], len(part_stamp("0123abcd", 2)) == STAMP_BYTES
    (b'bloomedu part 2 of 0123abcd', True)
    """
    return f"bloomedu part {j} of {uid}".encode().ljust(STAMP_BYTES, b"\0")


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def default_part_bits(num_bits: int) -> int:
    """The part size :meth:`RedisBackedFilter.create` picks for m = ``num_bits``.

    >>> default_part_bits(2_875_518), default_part_bits(4_140_745_220)
    (1048576, 4294966784)
    """
    return DEFAULT_PART_BITS if num_bits <= SMALL_FILTER_BITS else MAX_PART_BITS


def positions_of(shape, keys) -> np.ndarray:
    """Every key's k positions in a filter of ``shape.num_bits`` bits and ``shape.num_hashes``
    hashes (a BloomFilter or a RedisBackedFilter): an (n, k) array, from bloomedu.core.filter.positions.

    >>> f = BloomFilter(1024, 3)
    >>> positions_of(f, ["123", 42]).tolist() == [f.bit_indices("123"), f.bit_indices(42)]
    True
    """
    k, m = shape.num_hashes, shape.num_bits
    rows = [positions(h1, h2, num_bits=m, num_hashes=k).T for h1, h2 in hashed_batches(keys, k, _CHUNK_KEYS)]
    return np.concatenate(rows) if rows else np.zeros((0, k), dtype=np.int64)


def _forget(node, keys: list[str]) -> None:
    """Delete keys written aside, if the server answers (else they expire)."""
    import redis

    try:
        node.delete(*keys)
    except redis.RedisError:
        pass


class ServerFilter(Filter):
    """A handle to a filter whose state a server holds: it has no copy of its own and is not
    pickled (another process opens the same filter by its name)."""

    def copy(self):
        raise TypeError(f"a {type(self).__name__} is a handle to a filter held in Redis: "
                        "it has no copy of its own (open the same filter by its name)")

    __reduce__ = copy


class RedisBackedFilter(ServerFilter):
    """A ``BloomFilter(num_bits, num_hashes)`` whose bits are Redis strings ``{name}:bits:J``.

    Made with :meth:`create` (or :meth:`from_capacity`, :meth:`from_filter`) and found by
    another process with :meth:`open`; ``client`` is a redis-py ``Redis`` or ``RedisCluster``.

    >>> from bloomedu.services.redis_server import RedisServer
    >>> with RedisServer() as server:
    ...     shared = RedisBackedFilter.create(server.client(), "clicks", 1024, 3)
    ...     shared.add_many(["123", "456", "123"]).tolist(), "123" in shared, 123 in shared
    ([True, True, False], True, False)
    """

    def __init__(self, client, name: str, num_bits: int, num_hashes: int,
                 part_bits: int | None = None, *, uid: str, replicas: int = 0,
                 replica_timeout_ms: int = 2000, retry_s: float = 15.0):
        if not isinstance(name, str) or not name or "{" in name or "}" in name:
            raise ValueError(f"name must be a non-empty str without braces, got {name!r}")
        self.num_bits = whole_number(num_bits, "num_bits", 1, MAX_NUM_BITS)
        if part_bits is None:
            part_bits = default_part_bits(self.num_bits)
        if not is_int(part_bits) or not 64 <= part_bits <= MAX_PART_BITS or part_bits % 64:
            raise ValueError(f"part_bits must be a multiple of 64 in 64..{MAX_PART_BITS} "
                             f"(2**32 - 512), got {part_bits!r}")
        self.num_hashes = whole_number(num_hashes, "num_hashes", 1, MAX_HASHES)
        self.replicas = whole_number(replicas, "replicas", 0, 16)
        self.replica_timeout_ms = whole_number(replica_timeout_ms, "replica_timeout_ms", 1)
        self.client, self.name, self.part_bits, self.uid = client, name, int(part_bits), uid
        if isinstance(retry_s, bool) or not isinstance(retry_s, (int, float)) or \
                not 0 <= retry_s <= MAX_RETRY_S:
            raise ValueError(f"retry_s must be a number of seconds in 0..{MAX_RETRY_S}, "
                             f"got {retry_s!r}")
        self.retry_s = float(retry_s)
        self.io_timeout_s = max(1.0, min(self.retry_s, 10.0))  # the longest one read may wait
        self.nbytes = 8 * -(-self.num_bits // 64)  # BloomFilter's storage: whole 64-bit words
        self.num_parts = -(-self.nbytes * 8 // self.part_bits)
        self.keys = [f"{{{name}}}:bits:{j}" for j in range(self.num_parts)]
        self.meta_key, self.scratch_key = f"{{{name}}}:meta", f"{{{name}}}:scratch"
        self.part_sizes = [self._part_bytes(j) for j in range(self.num_parts)]
        self.stamps = [part_stamp(uid, j) for j in range(self.num_parts)]
        self.writes_seen = 0  # the description's write count, as this handle last saw it

    def note_writes(self, count: int) -> None:
        """Remember that the description counted ``count`` writes (the highest count seen)."""
        with self._lock:
            self.writes_seen = max(self.writes_seen, count)

    # --- making, finding and dropping a filter ------------------------------------------
    @classmethod
    def create(cls, client, name: str, num_bits: int, num_hashes: int,
               part_bits: int | None = None, **options) -> "RedisBackedFilter":
        """A new filter, made in one atomic step; or the one of that name if it has the same
        m, k and part size.  Keys under the name that this class did not make are refused
        (ValueError), and nothing is changed."""
        new = cls(client, name, num_bits, num_hashes, part_bits, uid=secrets.token_hex(16),
                  **options)
        fields = {"format": FORMAT, "uid": new.uid, "num_bits": new.num_bits,
                  "num_hashes": new.num_hashes, "part_bits": new.part_bits,
                  "hashing": BloomFilter.HASHING, "writes": 0, "replicas": new.replicas,
                  "replica_timeout_ms": new.replica_timeout_ms}
        script = node_of(new).register_script(CREATE_SCRIPT)
        described = [x for pair in fields.items() for x in pair]
        stamped = [x for j in range(new.num_parts) for x in (new.part_sizes[j], new.stamps[j])]
        reply = script(keys=[new.meta_key, *new.keys], args=[len(described), *described, *stamped])
        outcome = _text(reply[0])
        if outcome == "created":
            return new
        if outcome == "foreign":
            raise ValueError(f"{_text(reply[1])} holds a {_text(reply[2])} that is not this "
                             f"filter's: a name whose keys another program uses is refused "
                             f"(nothing was changed)")
        existing = cls._from_meta(client, name, dict(zip(reply[1][::2], reply[1][1::2])), options)
        if (existing.num_bits, existing.num_hashes, existing.part_bits) != \
                (new.num_bits, new.num_hashes, new.part_bits):
            raise ValueError(f"a filter named {name!r} exists with num_bits={existing.num_bits}, "
                             f"num_hashes={existing.num_hashes}, part_bits={existing.part_bits}")
        return existing

    @classmethod
    def from_capacity(cls, client, name: str, expected_items: int, fpp: float,
                      part_bits: int | None = None, **options) -> "RedisBackedFilter":
        """Sized as ``BloomFilter.from_capacity(n, p)`` sizes a filter (lesson 08)."""
        n = whole_number(expected_items, "expected_items", 1, MAX_NUM_BITS)
        m = num_bits_for(n=n, p=probability(fpp, "fpp"))
        return cls.create(client, name, m, max(1, round(m / n * LN2)), part_bits, **options)

    @classmethod
    def open(cls, client, name: str, **options) -> "RedisBackedFilter":
        """The filter another process created under ``name``, writing as its creator did:
        with the ``replicas`` and ``replica_timeout_ms`` kept in its description (``replicas``
        given here may ask for more, never for fewer; ``retry_s`` is this handle's own)."""
        import redis

        try:
            meta = client.hgetall(f"{{{name}}}:meta")
        except redis.ResponseError as error:
            if not str(error).startswith("WRONGTYPE"):
                raise  # the server's own error (NOPERM, ...), as it named it
            raise ValueError(f"{{{name}}}:meta is not a filter's description: {error}") from None
        if not meta:
            raise KeyError(f"no filter named {name!r} on this server")
        return cls._from_meta(client, name, meta, options)

    @classmethod
    def _from_meta(cls, client, name: str, meta: dict, options: dict) -> "RedisBackedFilter":
        meta = {_text(k): _text(v) for k, v in meta.items()}
        if meta.get("format") != FORMAT:
            raise ValueError(f"{{{name}}}:meta is not a {FORMAT} description (its fields: "
                             f"{sorted(meta)}): refused, nothing was changed")
        if int(meta["hashing"]) != BloomFilter.HASHING:
            raise ValueError(f"filter {name!r} uses hashing {meta['hashing']}, "
                             f"not this library's {BloomFilter.HASHING}")
        stored = {"replicas": int(meta.get("replicas", 0)),
                  "replica_timeout_ms": int(meta.get("replica_timeout_ms", 2000))}
        handle = cls(client, name, int(meta["num_bits"]), int(meta["num_hashes"]),
                     int(meta["part_bits"]), uid=meta["uid"], **{**stored, **options})
        handle.replicas = max(handle.replicas, stored["replicas"])  # never fewer than the creator's
        return handle

    def delete(self) -> None:
        """Remove the filter's keys from Redis, all in one command (the description first):
        a reader sees the whole filter or none, which is :class:`FilterLost`."""
        node_of(self).delete(self.meta_key, *self.keys, self.scratch_key)

    # --- adding and asking ----------------------------------------------------------------
    def _plans(self, keys, write: bool) -> list[ChunkPlan]:
        """Every chunk's plan, made before anything is sent: a bad key changes nothing."""
        found = positions_of(self, keys)
        return [ChunkPlan(found[start:start + _CHUNK_KEYS], self.part_bits, self.part_sizes,
                          self.keys, write=write, scratch=self.scratch_key)
                for start in range(0, found.shape[0], _CHUNK_KEYS)]

    def add_many(self, keys) -> np.ndarray:
        """Insert keys (as ``BloomFilter.add_many`` takes them); for each, True if it was new.

        Atomic chunk by chunk (4,096 keys): a key is new for exactly one of several clients
        adding it at once.  Every key is checked before anything is sent.
        """
        plans = self._plans(keys, write=True)
        marker = f"{{{self.name}}}:call:{secrets.token_hex(8)}"
        answers = [write_chunk(self, plan, marker, index) for index, plan in enumerate(plans)]
        if plans:  # every reply arrived: no retry needs the marker (it expires anyway)
            import redis

            try:
                node_of(self).delete(marker)
            except redis.RedisError:
                pass
        return np.concatenate(answers) if answers else np.zeros(0, dtype=bool)

    def contains_many(self, keys) -> np.ndarray:
        """For each key, whether the filter might contain it (as ``BloomFilter.contains_many``)."""
        answers = [read_chunk(self, plan) for plan in self._plans(keys, write=False)]
        return np.concatenate(answers) if answers else np.zeros(0, dtype=bool)

    def add(self, key) -> bool:
        """Insert one key; True if it was new (one of its bits was 0)."""
        return bool(self.add_many([key])[0])

    def __contains__(self, key) -> bool:
        return bool(self.contains_many([key])[0])

    # --- to and from bloomedu's BloomFilter -------------------------------------------------
    def _part_bytes(self, j: int) -> int:
        return min(self.part_bits // 8, self.nbytes - j * (self.part_bits // 8))

    def to_filter(self) -> BloomFilter:
        """The same filter in Python: a BloomFilter with these m, k and bits."""
        bloom = BloomFilter(self.num_bits, self.num_hashes)
        node, start, floor = node_of(self), 0, self.writes_seen
        uid, writes = node.hmget(self.meta_key, ["uid", "writes"])
        check(self, uid, [])
        check_writes(self, writes, floor, wrote=False)
        for j, key in enumerate(self.keys):
            size = self.part_sizes[j]
            for offset in range(0, size, _READ_BYTES):
                piece = node.getrange(key, offset, min(size, offset + _READ_BYTES) - 1)
                bloom.bits.data[start + offset:start + offset + len(piece)] = \
                    np.frombuffer(piece, dtype=np.uint8)
            check_whole(self, [j], [node.getrange(key, size, size + STAMP_BYTES - 1)])
            start += size
        if self.replicas:
            confirm(self, node)
        return bloom

    def to_bytes(self) -> bytes:
        """``BloomFilter.to_bytes`` of the same filter."""
        return self.to_filter().to_bytes()

    @classmethod
    def from_filter(cls, client, name: str, bloom: BloomFilter,
                    part_bits: int | None = None, **options) -> "RedisBackedFilter":
        """Put a BloomFilter's bits into Redis under ``name`` (replacing the bits of a filter
        of this class and shape already there).

        Replacing is one step for readers: the new parts are written aside (keys that expire
        in an hour if this call dies) and switched in at the end by one script that checks
        the filter is still the one written for and every new part is whole, then renames
        them all.  A reader sees the old bits or the new, never a mix; a call that fails
        before the switch changes nothing.

        Only a plain BloomFilter of this library's hashing scheme: a KeyedBloomFilter places
        keys by its secret, and a filter read from scheme-1 bytes by its old rule, so this
        class could not find their keys.
        """
        if type(bloom) is not BloomFilter or bloom.HASHING != BloomFilter.HASHING:
            what = type(bloom).__name__ if type(bloom) is not BloomFilter else \
                f"a BloomFilter of hashing scheme {bloom.HASHING}"
            raise TypeError(f"bloom must be a BloomFilter of hashing scheme {BloomFilter.HASHING} "
                            f"(its positions are this class's), not {what}: add its keys to a "
                            "new filter instead")
        new = cls.create(client, name, bloom.num_bits, bloom.num_hashes, part_bits, **options)
        node, start, floor = node_of(new), 0, new.writes_seen
        aside = [f"{{{name}}}:next:{secrets.token_hex(8)}:{j}" for j in range(new.num_parts)]
        try:
            for j, key in enumerate(aside):
                size = new.part_sizes[j]
                for offset in range(0, size, _READ_BYTES):
                    piece = bloom.bits.data[start + offset:start + min(size, offset + _READ_BYTES)]
                    node.setrange(key, offset, piece.tobytes())
                    node.pexpire(key, _ASIDE_MS)
                node.setrange(key, size, new.stamps[j])
                start += size
            script = node.register_script(SWITCH_SCRIPT)
            reply = script(keys=[new.meta_key, *new.keys, *aside],
                           args=[new.uid, *(size + STAMP_BYTES for size in new.part_sizes)])
        except BaseException:
            _forget(node, aside)
            raise
        if _text(reply[0]) != "switched":
            _forget(node, aside)
            why = "was deleted or made again" if _text(reply[0]) == "lost" else \
                f"lost {_text(reply[1])} (evicted or deleted) before the switch"
            raise FilterLost(f"filter {name!r}: the bits were not replaced, nothing was "
                             f"changed: the filter {why}")
        check_writes(new, reply[1], floor, wrote=True)
        if new.replicas:
            acknowledged = node.wait(new.replicas, new.replica_timeout_ms)
            if acknowledged < new.replicas:
                raise NotReplicated(f"filter {name!r}: its new bits are in place on the primary, "
                                    f"but {acknowledged} of {new.replicas} replicas acknowledged "
                                    f"them in {new.replica_timeout_ms} ms")
        return new

    def __repr__(self) -> str:
        return (f"RedisBackedFilter(name={self.name!r}, num_bits={self.num_bits}, "
                f"num_hashes={self.num_hashes}, parts={self.num_parts})")
