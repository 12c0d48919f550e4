"""A Citus cluster on loopback for the tests and the benchmark: a coordinator and workers,
each an ordinary PostgreSQL 15 data directory in a temporary directory, from the binaries
`../shared/citus/build.sh` installs (Debian's PostgreSQL 15 with Citus and pgvector built
for it). Also a plain PostgreSQL 15 from the same binaries, to compare against."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from tests.support.servers import free_port

BIN = Path("/usr/lib/postgresql/15/bin")
LIB = Path("/usr/lib/postgresql/15/lib")
BUILD = "bash ../shared/citus/build.sh (as root; about 3 minutes)"


def missing() -> str | None:
    """Why a cluster cannot start here, or None when it can."""
    for needed in (BIN / "pg_ctl", LIB / "citus.so", LIB / "vector.so"):
        if not needed.exists():
            return f"{needed} is missing: build Citus and pgvector for PostgreSQL 15 with {BUILD}"
    return None


@dataclass
class Node:
    name: str
    port: int
    data: Path


@dataclass
class PgCluster:
    """PostgreSQL 15 servers under one temporary directory. With `workers`, the first node is
    a Citus coordinator and the others its workers; with none, a plain server (Citus not
    loaded) holding the same extensions' builds."""

    workers: int = 2
    citus: bool = True
    # more server settings for every node ("name = value" lines of postgresql.conf)
    conf: tuple[str, ...] = ()
    base: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="hs-citus-")))
    nodes: list[Node] = field(default_factory=list)

    def __post_init__(self) -> None:
        names = ["coord", *(f"w{i}" for i in range(1, self.workers + 1))] if self.citus else ["pg"]
        self.nodes = [Node(n, free_port(), self.base / n) for n in names]
        self._user = "postgres" if os.geteuid() == 0 else None  # initdb refuses root

    @property
    def coordinator(self) -> Node:
        return self.nodes[0]

    @property
    def workers_(self) -> list[Node]:
        return self.nodes[1:]

    def url(self, database: str = "postgres", node: Node | None = None) -> str:
        port = (node or self.coordinator).port
        return f"postgresql://postgres@127.0.0.1:{port}/{database}"

    def _run(self, command: str, *args: str) -> None:
        done = subprocess.run(
            [str(BIN / command), *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            user=self._user,
            timeout=120,
            check=False,
        )
        if done.returncode:
            raise RuntimeError(f"{command} failed: {done.stderr.decode(errors='replace')}")

    def start(self) -> PgCluster:
        if self._user:
            shutil.chown(self.base, self._user, self._user)
        for node in self.nodes:
            self._run(
                "initdb", "-D", str(node.data), "-A", "trust", "-U", "postgres", "-E", "UTF8",
                "--locale=C.UTF-8",
            )  # fmt: skip
            conf = [
                f"port = {node.port}",
                "listen_addresses = '127.0.0.1'",
                f"unix_socket_directories = '{self.base}'",
                "max_connections = 300",
                "max_prepared_transactions = 300",
                # Citus starts a maintenance daemon per database: the tests make many
                "max_worker_processes = 64",
                "shared_buffers = '256MB'",
                "jit = off",
                # thrown away after the run and never crashed on purpose: the disk's
                # durability buys nothing here (a node's start-up and loads are faster)
                "fsync = off",
                "synchronous_commit = off",
                "full_page_writes = off",
                # a JSON log beside the text one: tests read the statements a server ran
                # (with their parameters) from it, see `statements`
                "logging_collector = on",
                "log_destination = 'stderr,jsonlog'",
                "log_directory = 'log'",
                "log_filename = 'postgresql'",
            ]
            if self.citus:
                conf += [
                    "shared_preload_libraries = 'citus'",
                    "wal_level = logical",
                    # loopback: no TLS between nodes (libpq would look for a client
                    # certificate in the HOME of whoever started the test run)
                    "citus.node_conninfo = 'sslmode=disable'",
                ]
            with open(node.data / "postgresql.conf", "a") as f:
                f.write("\n".join([*conf, *self.conf]) + "\n")
            self._run(
                "pg_ctl", "-D", str(node.data), "-l", str(self.base / f"{node.name}.log"),
                "-w", "-t", "60", "start",
            )  # fmt: skip
        return self

    def create_database(self, name: str | None = None) -> str:
        """A new database (on every node, Citus in it, the workers added): its URL on the
        coordinator. Citus keeps its metadata per database, so each one is a cluster of
        its own."""
        name = name or "hs_" + uuid.uuid4().hex[:12]
        for node in self.nodes:
            with psycopg.connect(self.url(node=node), autocommit=True) as conn:
                conn.execute(f"CREATE DATABASE {name}")
            if self.citus:
                with psycopg.connect(self.url(name, node), autocommit=True) as conn:
                    conn.execute("CREATE EXTENSION citus")
        if self.citus:
            with psycopg.connect(self.url(name), autocommit=True) as conn:
                conn.execute(
                    "SELECT citus_set_coordinator_host('127.0.0.1', %s)", (self.coordinator.port,)
                )
                for worker in self.workers_:
                    conn.execute("SELECT citus_add_node('127.0.0.1', %s)", (worker.port,))
        return self.url(name)

    def drop_database(self, name: str) -> None:
        for node in reversed(self.nodes):
            with psycopg.connect(self.url(node=node), autocommit=True) as conn:
                conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    @contextlib.contextmanager
    def database(self) -> Iterator[str]:
        name = "hs_" + uuid.uuid4().hex[:12]
        try:
            yield self.create_database(name)
        finally:
            self.drop_database(name)

    def stop(self) -> None:
        for node in reversed(self.nodes):
            if (node.data / "postmaster.pid").exists():
                with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
                    self._run("pg_ctl", "-D", str(node.data), "-m", "fast", "-w", "stop")
        shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> PgCluster:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()


# --- what a server ran, from a node's JSON log -------------------------------------------


@dataclass(frozen=True)
class Logged:
    """A statement a node's log recorded (`log_statement = 'all'`), with its parameters as
    the log prints them (text, or None for NULL)."""

    session: str
    text: str
    params: tuple[str | None, ...]

    def with_literals(self) -> str:
        """The statement with each parameter written in as a literal, to EXPLAIN it."""

        def literal(match: re.Match[str]) -> str:
            value = self.params[int(match.group(1)) - 1]
            return "NULL" if value is None else "'" + value.replace("'", "''") + "'"

        return re.sub(r"\$(\d+)\b", literal, self.text)


_PARAM = re.compile(r"\$(\d+) = (NULL|'((?:[^']|'')*)')")


def log_position(node: Node) -> int:
    path = node.data / "log" / "postgresql.json"
    return path.stat().st_size if path.exists() else 0


def logged(node: Node, user: str, since: int = 0) -> list[Logged]:
    """The statements `user` ran on `node` since the log was `since` bytes long, in order."""
    found = []
    with open(node.data / "log" / "postgresql.json", "rb") as f:
        f.seek(since)
        for line in f:
            entry = json.loads(line)
            message = entry.get("message", "")
            if entry.get("user") != user or entry.get("error_severity") != "LOG":
                continue
            if message.startswith("statement: "):
                text = message.removeprefix("statement: ")
            elif message.startswith("execute "):
                text = message.split(": ", 1)[1]
            else:
                continue
            params: dict[int, str | None] = {}
            detail = entry.get("detail") or ""
            if detail.startswith("parameters: "):
                for match in _PARAM.finditer(detail):
                    value = match.group(3)
                    params[int(match.group(1))] = (
                        None if match.group(2) == "NULL" else value.replace("''", "'")
                    )
            ordered = tuple(params[i] for i in range(1, len(params) + 1))
            found.append(Logged(entry["session_id"], text, ordered))
    return found


@dataclass(frozen=True)
class Route:
    """Where Citus runs one distributed part of a statement (one Custom Scan of its plan)."""

    provider: str  # "Citus Adaptive", "Citus INSERT ... SELECT", ...
    tasks: int
    nodes: frozenset[str]  # "host:port" of the tasks shown
    subplans: int  # parts run first, their rows collected on the coordinator


def routes(plan: Any) -> list[Route]:
    """Every Citus scan in an EXPLAIN (FORMAT JSON) plan."""
    found: list[Route] = []
    if isinstance(plan, list):
        for item in plan:
            found += routes(item)
    elif isinstance(plan, dict):
        provider = plan.get("Custom Plan Provider", "")
        if provider.startswith("Citus"):
            query = plan.get("Distributed Query", {})
            job = query.get("Job", {})
            nodes = frozenset(
                ":".join(
                    part.split("=", 1)[1]
                    for part in task.get("Node", "").split()
                    if part.startswith(("host=", "port="))
                )
                for task in job.get("Tasks", [])
            )
            found.append(
                Route(
                    provider, int(job.get("Task Count", 0)), nodes, len(query.get("Subplans", []))
                )
            )
        for value in plan.values():
            found += routes(value)
    return found
