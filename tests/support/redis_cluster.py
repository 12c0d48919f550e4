"""A real Redis Cluster on loopback for tests: three masters, three replicas, each a
`redis-server --cluster-enabled yes` child process, joined by `redis-cli --cluster create`."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
from pathlib import Path
from typing import Any

import redis

from hindsight.runtime.embedded_redis import redis_server_binary
from tests.support.poll import wait_until

NODE_TIMEOUT_MS = 1000  # how long a silent master has before its replica takes over


def _port_pair() -> int:
    """A free port whose cluster bus port (port + 10000) is free and valid too."""
    while True:
        with socket.socket() as a, socket.socket() as b:
            a.bind(("127.0.0.1", 0))
            port = int(a.getsockname()[1])
            if port + 10000 > 65535:
                continue
            try:
                b.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
            return port


class RedisCluster:
    def __init__(self, directory: Path, *, masters: int = 3) -> None:
        self.directory = directory
        self.size = masters * 2
        self.ports: list[int] = []
        self.procs: dict[int, subprocess.Popen[bytes]] = {}

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.ports[0]}"

    def _client(self, port: int) -> redis.Redis:
        return redis.Redis(port=port, socket_timeout=1, socket_connect_timeout=1)

    def _start_node(self, port: int) -> None:
        node_dir = self.directory / str(port)
        node_dir.mkdir(parents=True, exist_ok=True)
        self.procs[port] = subprocess.Popen(
            [
                redis_server_binary(),
                "--port", str(port),
                "--bind", "127.0.0.1",
                "--dir", str(node_dir),
                "--cluster-enabled", "yes",
                "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", str(NODE_TIMEOUT_MS),
                "--cluster-replica-validity-factor", "0",
                "--repl-ping-replica-period", "1",
                "--appendonly", "yes",
                "--appendfsync", "everysec",
                "--save", "",
                "--loglevel", "notice",
                "--logfile", "redis.log",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip

    def start(self, timeout: float = 30.0) -> RedisCluster:
        cli = shutil.which("redis-cli")
        if cli is None:
            raise RuntimeError("redis-cli is needed to create a Redis Cluster")
        self.ports = []
        while len(self.ports) < self.size:
            port = _port_pair()
            if port not in self.ports:
                self.ports.append(port)
        for port in self.ports:
            self._start_node(port)
        self._wait(lambda: all(self._answers(p) for p in self.ports), "nodes to start", timeout)
        subprocess.run(
            [cli, "--cluster", "create", *(f"127.0.0.1:{p}" for p in self.ports),
             "--cluster-replicas", "1", "--cluster-yes"],
            check=True,
            capture_output=True,
            timeout=timeout,
        )  # fmt: skip
        self._wait(self._healthy, "the cluster to be ok with every replica in sync", timeout)
        return self

    def _answers(self, port: int) -> bool:
        try:
            with self._client(port) as c:
                return bool(c.ping())
        except (redis.RedisError, OSError):
            return False

    def _info(self, port: int, section: str) -> dict[str, Any]:
        with self._client(port) as c:
            info: dict[str, Any] = c.info(section)
            return info

    def _healthy(self) -> bool:
        """Every node sees the cluster ok, and every master has a replica in sync."""
        try:
            for port in self.ports:
                with self._client(port) as c:
                    if c.execute_command("CLUSTER INFO").get("cluster_state") != "ok":
                        return False
            roles = {p: self._info(p, "replication") for p in self.ports}
            masters = [info for info in roles.values() if info["role"] == "master"]
            return len(masters) == self.size // 2 and all(
                info.get("slave0", {}).get("state") == "online" for info in masters
            )
        except (redis.RedisError, OSError):
            return False

    @staticmethod
    def _wait(check: Any, what: str, timeout: float) -> None:
        wait_until(check, f"Redis Cluster: {what}", timeout, interval=0.1)

    def master_of(self, key: str) -> int:
        """The port of the master serving `key`'s slot."""
        live = next(p for p in self.ports if self.procs[p].poll() is None)
        with self._client(live) as c:
            slot = int(c.execute_command("CLUSTER KEYSLOT", key))
            for start, end, master, *_ in c.execute_command("CLUSTER SLOTS"):
                if int(start) <= slot <= int(end):
                    return int(master[1])
        raise LookupError(slot)

    def replica_of(self, master_port: int) -> int:
        info = self._info(master_port, "replication")
        return int(info["slave0"]["port"])

    def kill(self, port: int) -> None:
        self.procs[port].send_signal(signal.SIGKILL)
        self.procs[port].wait()

    def wait_promoted(self, port: int, timeout: float = 15.0) -> None:
        self._wait(
            lambda: self._answers(port) and self._info(port, "replication").get("role") == "master",
            f"the replica on port {port} to take over",
            timeout,
        )

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
