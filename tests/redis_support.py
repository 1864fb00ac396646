"""Real Redis servers for the tests: started on free loopback ports, stopped by PID.

Under `make test` (BLOOMEDU_REQUIRE_REDIS=1) a server that cannot be started FAILS the test
that needs it; elsewhere (an environment without the `bloomedu[redis]` extra) it skips, with
the reason and how to get one.  Every server comes from bloomedu.services.redis_server, the
helper lesson 17 uses too.
"""

from __future__ import annotations

import numpy as np
import pytest

from bloomedu.services.redis_cluster import RedisCluster
from bloomedu.services.redis_install import RedisUnavailable, required
from bloomedu.services.redis_server import RedisServer


def start(kind=RedisServer, **options):
    """A server (or cluster) of our own, or a failure/skip that says why there is none."""
    try:
        return kind(**options)
    except RedisUnavailable as missing:
        if required():
            pytest.fail(f"no Redis server under `make test`: {missing}")
        pytest.skip(str(missing))


def _running(kind=RedisServer, **options):
    server = start(kind, **options)
    yield server
    server.close()


def _fresh_client(server):
    client = server.client()
    client.flushall()
    yield client
    client.close()


@pytest.fixture(scope="module")
def bloom_server():
    """One Redis with the RedisBloom module for a test module."""
    yield from _running(module=True)


@pytest.fixture
def bloom_client(bloom_server):
    """A client of that server, on an empty database."""
    yield from _fresh_client(bloom_server)


@pytest.fixture(scope="module")
def plain_server():
    """One Redis without any module."""
    yield from _running()


@pytest.fixture
def plain_client(plain_server):
    """A client of that server, on an empty database."""
    yield from _fresh_client(plain_server)


@pytest.fixture(scope="module")
def cluster():
    """A 3-node Redis Cluster on loopback ports."""
    yield from _running(RedisCluster, nodes=3)


def mixed_items(count: int, seed: int) -> list:
    """Items of every kind redis-py sends: UUID str, unicode, bytes of 0..300 bytes (NULs
    included), the empty str and bytes, a long item, ints (negative, 64-bit)."""
    rng = np.random.default_rng(seed)
    items: list = ["", b"", "città", "😀 emoji", "日本語テキスト", b"\x00", b"\x00" * 9,
                   "x" * 10_000, bytes(range(256)) * 8, 0, -1, 2 ** 63 - 1, -2 ** 63, 2 ** 64 - 1]
    kinds = rng.integers(0, 4, size=count)
    for i, kind in enumerate(kinds):
        if kind == 0:
            items.append(f"{rng.integers(0, 2**62):016x}-{i}")
        elif kind == 1:
            items.append(rng.integers(0, 256, size=int(rng.integers(0, 300)), dtype=np.uint8).tobytes())
        elif kind == 2:
            items.append("".join(chr(int(c)) for c in rng.integers(0x20, 0x3000, size=int(rng.integers(1, 20))))
                         .encode("utf-8", "ignore").decode("utf-8", "ignore"))
        else:
            items.append(int(rng.integers(-2**63, 2**63 - 1)))
    return items


def covered_by_others(positions: np.ndarray) -> np.ndarray:
    """For each key (a row of its bit positions, keys distinct): whether every one of its bits
    is also a bit of another key.

    A key that is not covered can never be a false positive, whatever order the keys go in;
    tests that demand "each key new exactly once" check first that no key is covered.
    """
    owners = np.repeat(np.arange(len(positions)), positions.shape[1])
    bits, owners = np.unique(np.stack([positions.ravel(), owners]), axis=1)  # (bit, key) once
    holders = dict(zip(*np.unique(bits, return_counts=True)))
    return np.array([all(holders[p] >= 2 for p in row) for row in positions.tolist()], dtype=bool)


class DroppingProxy:
    """A loopback TCP proxy in front of a server that can drop one connection mid-call.

    ``arm("after_request", when=b"MULTI")``: the next time a client sends bytes holding
    ``when``, they (and what follows) reach the server, and
    the connection is closed before the server's reply comes back (the server did the work,
    the client never hears of it).  ``arm("before_request")``: the bytes are dropped with the
    connection (the server never sees them).  Either way the proxy disarms itself, so a
    client that reconnects gets through.  Stopped by :meth:`close`; it sends only to loopback.
    """

    def __init__(self, port: int):
        import socket
        import threading

        self.target, self.mode, self.when, self.dropped = port, None, b"", 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._lock, self._closing, self._sockets = threading.Lock(), False, []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def arm(self, mode: str, when: bytes = b"") -> None:
        assert mode in ("after_request", "before_request")
        with self._lock:
            self.mode, self.when = mode, when

    def _accept(self):
        import socket
        import threading

        while not self._closing:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.target))
            self._sockets += [client, server]
            pair = {"drop_reply": False}
            threading.Thread(target=self._up, args=(client, server, pair), daemon=True).start()
            threading.Thread(target=self._down, args=(server, client, pair), daemon=True).start()

    def _up(self, client, server, pair):
        while True:
            try:
                data = client.recv(1 << 16)
            except OSError:
                return self._shut(client, server)
            if not data:
                return self._shut(client, server)
            with self._lock:
                mode = self.mode if self.when in data else None
                if mode:
                    self.mode = None
            if mode == "before_request":
                self.dropped += 1
                return self._shut(client, server)
            if mode == "after_request":
                pair["drop_reply"] = True
            server.sendall(data)

    def _down(self, server, client, pair):
        while True:
            try:
                data = server.recv(1 << 16)
            except OSError:
                return self._shut(client, server)
            if not data:
                return self._shut(client, server)
            if pair["drop_reply"]:  # the server got the request: swallow its replies, then drop
                server.settimeout(0.5)
                try:
                    while server.recv(1 << 16):
                        pass
                except OSError:
                    pass
                self.dropped += 1
                return self._shut(client, server)
            try:
                client.sendall(data)
            except OSError:
                return self._shut(client, server)

    @staticmethod
    def _shut(*sockets):
        import socket

        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def close(self):
        self._closing = True
        self._listener.close()
        self._shut(*self._sockets)
