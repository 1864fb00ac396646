"""A Redis Cluster of our own on loopback ports: primaries, their replicas, a failover on demand.

:class:`RedisCluster` starts ``nodes`` primaries and ``replicas`` replicas of each
(:class:`~bloomedu.services.redis_server.RedisServer` processes in cluster mode),
splits the 16,384 hash slots among the primaries as ``redis-cli --cluster create``
does (``CLUSTER ADDSLOTSRANGE``), introduces every node to the others
(``CLUSTER MEET``) and makes each replica follow its primary (``CLUSTER REPLICATE``).

What a node keeps when it fails is chosen, not left to chance: with
``persistence="aof"`` every node writes an append-only file with an fsync per
write, so a node killed and started again comes back with every write it
acknowledged; with ``replicas=1`` a primary that dies is replaced by its replica
(:meth:`RedisCluster.fail` kills one and waits for the promotion), and a filter
that waits for its replica (``RedisBackedFilter(..., replicas=1)``, ``WAIT``)
returns from a write only once the replica holds it too.  Without either, a
restarted node comes back empty; a filter notices (its description is gone with
the bits) and raises instead of answering "absent".

Lesson 18 restarts a node and fails one over; tested in ``tests/test_redis_cluster.py``.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from .redis_install import RedisUnavailable, redis_py
from .redis_server import RedisServer

__all__ = ["RedisCluster", "SLOTS"]

SLOTS = 16384
_READY_S = 60.0  # a deadline for a loaded machine, not a speed check


def _text(reply) -> str:
    return reply.decode() if isinstance(reply, bytes) else reply


class RedisCluster:
    """``nodes`` primaries (and ``replicas`` replicas of each) on loopback, joined into one cluster.

    >>> with RedisCluster(3) as cluster:
    ...     [first for first, last in cluster.slot_ranges], cluster.client().set("x", 1)
    ([0, 5461, 10923], True)

    The nodes start at once (one thread each), and a new cluster needs a few seconds before
    every node reports ``cluster_state:ok``; with ``wait=False`` the constructor returns once
    the slots are assigned and the nodes told to meet, and :meth:`wait` (which :meth:`client`
    calls) waits for the rest, so a program can do other work meanwhile.
    """

    def __init__(self, nodes: int = 3, *, replicas: int = 0, module: bool = False,
                 persistence: str | None = None, password: str | None = None,
                 node_timeout_ms: int = 2000, wait: bool = True):
        if not isinstance(nodes, int) or isinstance(nodes, bool) or not 1 <= nodes <= 16:
            raise ValueError(f"nodes must be an int in 1..16, got {nodes!r}")
        if not isinstance(replicas, int) or isinstance(replicas, bool) or not 0 <= replicas <= 2:
            raise ValueError(f"replicas must be an int in 0..2, got {replicas!r}")
        self.nodes, self.replicas, self.password = nodes, replicas, password
        self.servers: list[RedisServer] = []
        self._ready = False
        options = dict(cluster=True, module=module, persistence=persistence, password=password,
                       cluster_node_timeout_ms=node_timeout_ms)
        try:
            total = nodes * (1 + replicas)
            with ThreadPoolExecutor(total) as pool:  # leaving the block waits for every node
                starting = [pool.submit(RedisServer, **options) for _ in range(total)]
            self.servers = [f.result() for f in starting if f.exception() is None]
            failures = [f.exception() for f in starting if f.exception() is not None]
            if failures:
                raise failures[0]
            self._ids = [_text(self._call(s, "CLUSTER", "MYID")) for s in self.servers]
            self._join()
            if wait:
                self.wait()
        except BaseException:
            self.close()
            raise

    # --- which node is which ----------------------------------------------------------------
    @property
    def primaries(self) -> list[RedisServer]:
        """The nodes that were made primaries, in slot-range order (a failover may change roles)."""
        return self.servers[:self.nodes]

    def replicas_of(self, index: int) -> list[RedisServer]:
        """The nodes made replicas of primary ``index``."""
        start = self.nodes + index * self.replicas
        return self.servers[start:start + self.replicas]

    @property
    def slot_ranges(self) -> list[tuple[int, int]]:
        """The (first, last) slot each primary was given, in node order."""
        n = self.nodes
        bounds = [round(i * SLOTS / n) for i in range(n + 1)]
        return [(bounds[i], bounds[i + 1] - 1) for i in range(n)]

    def node_of_slot(self, slot: int) -> int:
        """The index of the slot range (and of the primary first given it) holding ``slot``."""
        return next(i for i, (first, last) in enumerate(self.slot_ranges) if first <= slot <= last)

    def owner(self, slot: int) -> RedisServer:
        """The node serving ``slot`` now, as the live nodes see it (after a failover, the
        replica; a stopped node is not asked)."""
        for server in self._answering():
            try:
                for entry in self._call(server, "CLUSTER", "SLOTS"):
                    first, last, primary = int(entry[0]), int(entry[1]), entry[2]
                    if first <= slot <= last:
                        port = int(primary[1])
                        return next(s for s in self.servers if s.port == port)
            except redis_py().RedisError:
                continue
        raise RedisUnavailable(f"no live node says who serves slot {slot}")

    def _answering(self) -> list[RedisServer]:
        """The nodes running and not stopped by ``pause``."""
        return [server for server in self.servers if server.pid is not None and not server.paused]

    # --- setting up -------------------------------------------------------------------------
    def _call(self, server: RedisServer, *command):
        client = server.client(socket_timeout=5.0)
        try:
            return client.execute_command(*command)
        finally:
            client.close()

    def _join(self) -> None:
        for server, (first, last) in zip(self.primaries, self.slot_ranges):
            self._call(server, "CLUSTER", "ADDSLOTSRANGE", first, last)
        for server in self.servers[1:]:
            self._call(self.servers[0], "CLUSTER", "MEET", "127.0.0.1", server.port)

    def _state(self, server: RedisServer) -> str:
        return _text(self._call(server, "CLUSTER", "INFO"))

    def wait(self) -> "RedisCluster":
        """Wait until every node knows every other, each replica follows its primary, its link
        is up, and every node reports ``cluster_state:ok``."""
        if self._ready:
            return self
        deadline = time.monotonic() + _READY_S
        told: set[int] = set()
        state = ""
        while time.monotonic() < deadline:
            states = [self._state(server) for server in self.servers]
            state = states[0]
            known = all(f"cluster_known_nodes:{len(self.servers)}" in s for s in states)
            if known:
                for index in range(self.nodes):
                    for replica in self.replicas_of(index):
                        if replica.port not in told:
                            self._call(replica, "CLUSTER", "REPLICATE", self._ids[index])
                            told.add(replica.port)
            if known and all("cluster_state:ok" in s for s in states) and self._replicas_linked():
                self._ready = True
                return self
            time.sleep(0.05)
        raise RedisUnavailable(f"the cluster nodes did not agree on cluster_state:ok in "
                               f"{_READY_S:.0f} s: {state}")

    def _replicas_linked(self) -> bool:
        for index in range(self.nodes):
            for replica in self.replicas_of(index):
                info = self._call(replica, "INFO", "replication")
                info = info if isinstance(info, dict) else {}
                if info.get("role") != "slave" or info.get("master_link_status") != "up":
                    return False
        return True

    def wait_until_ok(self, timeout_s: float = _READY_S) -> float:
        """Wait until every live node (not stopped by ``pause``) reports ``cluster_state:ok``;
        the seconds it took."""
        started = time.monotonic()
        while time.monotonic() - started < timeout_s:
            live = self._answering()
            try:
                if all("cluster_state:ok" in self._state(server) for server in live):
                    return time.monotonic() - started
            except redis_py().RedisError:
                pass
            time.sleep(0.05)
        raise RedisUnavailable(f"the cluster did not report cluster_state:ok in {timeout_s:.0f} s")

    def _online_replicas(self, server: RedisServer) -> int:
        info = self._call(server, "INFO", "replication")
        return sum(1 for key, value in info.items() if key.startswith("slave") and
                   isinstance(value, dict) and value.get("state") == "online")

    def wait_for_replicas(self, timeout_s: float = _READY_S) -> float:
        """Wait until every primary serving slots has ``replicas`` replicas online (after a
        failover, once the old primary is back as a replica); the seconds it took."""
        started = time.monotonic()
        while time.monotonic() - started < timeout_s:
            try:
                live = next(server for server in self.servers if server.pid is not None)
                ports = {int(entry[2][1]) for entry in self._call(live, "CLUSTER", "SLOTS")}
                serving = [server for server in self.servers if server.port in ports]
                if all(self._online_replicas(server) >= self.replicas for server in serving):
                    return time.monotonic() - started
            except (redis_py().RedisError, StopIteration):
                pass
            time.sleep(0.05)
        raise RedisUnavailable(f"the primaries did not get {self.replicas} replicas each in "
                               f"{timeout_s:.0f} s")

    # --- faults -----------------------------------------------------------------------------
    def fail(self, slot: int, *, pause: bool = False) -> tuple[RedisServer, RedisServer]:
        """Kill (SIGKILL) the node serving ``slot``, or with ``pause=True`` stop it (SIGSTOP:
        it keeps its port and its clients, and believes itself primary when resumed), and
        wait until a replica serves the slot instead.

        Returns (the stopped node, the promoted one).  Needs ``replicas >= 1``.
        """
        if not self.replicas:
            raise ValueError("a cluster without replicas cannot fail over: make it with replicas=1")
        victim = self.owner(slot)
        victim.pause() if pause else victim.kill()
        deadline = time.monotonic() + _READY_S
        while time.monotonic() < deadline:
            try:
                promoted = self.owner(slot)
                if promoted is not victim:
                    self.wait_until_ok()
                    return victim, promoted
            except RedisUnavailable:
                pass
            time.sleep(0.05)
        raise RedisUnavailable(f"no replica took over slot {slot} in {_READY_S:.0f} s")

    def client(self, **options):
        """A redis-py ``RedisCluster`` client: it routes each key to the node owning its slot."""
        redis_py()  # a clear error if redis-py is missing
        from redis.cluster import RedisCluster as ClusterClient
        self.wait()
        live = self._answering()[0]
        return ClusterClient(host="127.0.0.1", port=live.port, password=self.password, **options)

    def close(self) -> None:
        """Stop every node by its PID and delete their directories."""
        for server in self.servers:
            server.close()

    def __enter__(self) -> "RedisCluster":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"RedisCluster(nodes={self.nodes}, replicas={self.replicas}, "
                f"ports={[s.port for s in self.servers]})")
