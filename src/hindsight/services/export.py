"""Export a namespace as JSON lines, and restore an export into an empty namespace.

Format `hindsight-export`, version 2 (README, "Export format"): a header line, then one
line per memory (every status, with its full history), then, when asked for, one line per
working-memory session with its steps, and an `end` line with the counts, so a truncated
file is refused instead of half-restored. Version 2 added `occurred_at` to memories and
steps; version 1 files (without it) are still restored, their times unknown. An older
server refuses a version 2 file rather than dropping the times it cannot store.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterable
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from pgvector import HalfVector
from psycopg_pool import AsyncConnectionPool

from hindsight import __version__
from hindsight.db.pool import Connection
from hindsight.embeddings.base import Embedder
from hindsight.errors import Conflict, InvalidInput
from hindsight.ids import uuid7
from hindsight.retrieval.keywords import document_vector
from hindsight.services.policy import PolicyService
from hindsight.services.redaction import Scrubber, scrubber
from hindsight.stores import export as store
from hindsight.text import memory_text

FORMAT = "hindsight-export"
VERSION = 2
READABLE = (1, 2)
PAGE = 500
_MEMORY_FIELDS = (
    "key",
    "value",
    "memory_type",
    "confidence",
    "importance",
    "observation_count",
    "source",
    "tags",
    "metadata",
    "verified",
    "permanent",
    "status",
    "created_at",
    "updated_at",
    "last_observed",
)


def _json(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, Decimal):
        return float(value)
    raise TypeError(f"cannot export {type(value).__name__}")


def line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, default=_json, ensure_ascii=False, separators=(",", ":")) + "\n"


def is_export(first_line: str) -> bool:
    """Whether a file starting with this line is an export (and not a bulk-import file)."""
    try:
        head = json.loads(first_line)
    except json.JSONDecodeError:
        return False
    return isinstance(head, dict) and head.get("format") == FORMAT


class ExportService:
    def __init__(
        self, pool: AsyncConnectionPool[Connection], embedder: Embedder, policies: PolicyService
    ) -> None:
        self._pool = pool
        self._embedder = embedder
        self._policies = policies

    async def lines(self, namespace: str, *, sessions: bool = False) -> AsyncIterator[str]:
        """The export, line by line; memories page by page, so memory use stays flat."""
        yield line(
            {
                "format": FORMAT,
                "version": VERSION,
                "namespace": namespace,
                "exported_at": datetime.now(UTC),
                "hindsight": __version__,
                "embedding_model": self._embedder.name,
                "sessions": sessions,
            }
        )
        counts = {"memories": 0, "sessions": 0, "steps": 0}
        after: uuid.UUID | None = None
        while True:
            async with self._pool.connection() as conn:
                page = await store.memory_page(conn, namespace, after=after, limit=PAGE)
                history = (
                    await store.histories(conn, namespace, [m["id"] for m in page]) if page else []
                )
            by_memory: dict[uuid.UUID, list[dict[str, Any]]] = {}
            for h in history:
                by_memory.setdefault(h.pop("memory_id"), []).append(h)
            for m in page:
                counts["memories"] += 1
                yield line({"type": "memory", **m, "history": by_memory.get(m["id"], [])})
            if len(page) < PAGE:
                break
            after = page[-1]["id"]
        if sessions:
            async with self._pool.connection() as conn:
                rows = await store.sessions(conn, namespace)
            for s in rows:
                async with self._pool.connection() as conn:
                    steps = await store.steps(conn, namespace, s["session_id"])
                counts["sessions"] += 1
                counts["steps"] += len(steps)
                yield line({"type": "session", **s, "steps": steps})
        yield line({"type": "end", **counts})

    async def restore(self, namespace: str, lines: Iterable[str], *, actor: str) -> dict[str, Any]:
        """Load an export into `namespace`, which must hold nothing yet. All or nothing:
        a malformed or truncated file changes nothing. The target namespace's redaction
        policy applies to every text restored, as to any other write: an export from a
        namespace with redaction off may hold secrets."""
        scrub = await scrubber(self._policies, namespace)
        parsed = [_scrubbed(p, scrub) for p in _parse(lines)]
        memories = [p for p in parsed if p["type"] == "memory"]
        vectors = []
        for start in range(0, len(memories), 256):
            part = memories[start : start + 256]
            vectors += await self._embedder.embed([memory_text(m["key"], m["value"]) for m in part])
        async with self._pool.connection() as conn, conn.transaction():
            if await store.has_data(conn, namespace):
                raise Conflict(
                    f"namespace {namespace!r} is not empty; restore into a new namespace "
                    "(or erase this one first)"
                )
            for m, vector in zip(memories, vectors, strict=True):
                keywords, terms = document_vector(memory_text(m["key"], m["value"]))
                await store.restore_memory(
                    conn,
                    namespace,
                    m,
                    memory_id=uuid7(),
                    embedding=HalfVector(vector),
                    keywords=keywords,
                    keyword_terms=terms,
                    actor=actor,
                )
            steps = 0
            for s in (p for p in parsed if p["type"] == "session"):
                session_steps = s.pop("steps")
                await store.restore_session(conn, namespace, s)
                await store.restore_steps(conn, namespace, session_steps)
                steps += len(session_steps)
        return {
            "memories": len(memories),
            "sessions": sum(1 for p in parsed if p["type"] == "session"),
            "steps": steps,
            "redacted": dict(scrub.counts),
        }


def _scrubbed(item: dict[str, Any], scrub: Scrubber) -> dict[str, Any]:
    """An exported memory or session with its texts passed through the redactor (the
    history's values too: a secret must not come back through an old value)."""
    item = dict(item)
    if item["type"] == "memory":
        item["key"] = scrub("key", item["key"])
        item["value"] = scrub("value", item["value"])
        if item.get("source") is not None:
            item["source"] = scrub("source", item["source"])
        if item.get("tags"):
            item["tags"] = scrub.strings("tags", item["tags"])
        if item.get("metadata"):
            item["metadata"] = scrub.json("metadata", item["metadata"])
        item["history"] = [
            {
                **h,
                "key": scrub.optional("history.key", h.get("key")),
                "old_value": scrub.optional("history.old_value", h.get("old_value")),
                "new_value": scrub.optional("history.new_value", h.get("new_value")),
            }
            for h in item.get("history") or []
        ]
    elif item["type"] == "session":
        item["steps"] = [
            {
                **s,
                "content": scrub("steps.content", s.get("content") or ""),
                "summary": scrub.optional("steps.summary", s.get("summary")),
                **(
                    {"metadata": scrub.json("steps.metadata", s["metadata"])}
                    if s.get("metadata")
                    else {}
                ),
            }
            for s in item["steps"]
        ]
        if item.get("metadata"):
            item["metadata"] = scrub.json("metadata", item["metadata"])
    return item


def _parse(lines: Iterable[str]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    header: dict[str, Any] | None = None
    end: dict[str, Any] | None = None
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"line {number}: not JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise InvalidInput(f"line {number}: expected a JSON object")
        if header is None:
            if obj.get("format") != FORMAT:
                raise InvalidInput(f"line {number}: not a {FORMAT} header")
            if obj.get("version") not in READABLE:
                raise InvalidInput(
                    f"line {number}: export format version {obj.get('version')!r}; this "
                    f"server reads versions {' and '.join(str(v) for v in READABLE)}"
                )
            header = obj
            continue
        if end is not None:
            raise InvalidInput(f"line {number}: data after the end line")
        kind = obj.get("type")
        if kind == "end":
            end = obj
        elif kind == "memory":
            missing = [f for f in _MEMORY_FIELDS if f not in obj]
            if missing:
                raise InvalidInput(f"line {number}: memory without {', '.join(missing)}")
            items.append(obj)
        elif kind == "session":
            if not isinstance(obj.get("steps"), list) or "session_id" not in obj:
                raise InvalidInput(f"line {number}: session without session_id or steps")
            items.append(obj)
        else:
            raise InvalidInput(f"line {number}: unknown line type {kind!r}")
    if header is None:
        raise InvalidInput("empty file: no export header")
    if end is None:
        raise InvalidInput("the export has no end line: it was cut short; export again")
    found = sum(1 for i in items if i["type"] == "memory")
    if end.get("memories") != found:
        raise InvalidInput(f"the end line counts {end.get('memories')} memories; found {found}")
    return items
