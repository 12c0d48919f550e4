"""`hindsight doctor`: check a deployment and say what is wrong and how to fix it.

Each check is independent where it can be, so one broken store still lets the others be
reported; checks that need the database schema are skipped while it is unreachable.
"""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg.rows import dict_row

from hindsight.config import Settings
from hindsight.db import citus, migrate, schema
from hindsight.db.pool import Connection
from hindsight.embeddings import create_embedder
from hindsight.errors import HindsightError
from hindsight.stores import diagnostics

PGVECTOR_MIN = (0, 7, 0)
DISK_MIN_BYTES = 1 << 30  # 1 GiB
DISK_MIN_SHARE = 0.05


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    warning: bool = False  # worth knowing, not wrong


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".") if p.isdigit())


def configuration(settings: Settings) -> Check:
    where = (
        "PostgreSQL at HINDSIGHT_DATABASE_URL"
        if settings.database_url
        else f"embedded PostgreSQL in {settings.data_dir / 'postgres'}"
    )
    redis = "Redis at HINDSIGHT_REDIS_URL" if settings.redis_url else "embedded Redis"
    embedder = settings.resolved_embedding_provider
    if settings.embedding_model:
        embedder += f" ({settings.embedding_model})"
    llm = (
        f"LLM {settings.llm_model}"
        if settings.llm_model
        else "no LLM (deterministic consolidation)"
    )
    return Check("configuration", True, f"{where}; {redis}; embedder {embedder}; {llm}")


def disk(settings: Settings) -> Check:
    path: Path = settings.data_dir
    while not path.exists() and path != path.parent:
        path = path.parent
    usage = shutil.disk_usage(path)
    free_gib = usage.free / (1 << 30)
    detail = f"{free_gib:.1f} GiB free of {usage.total / (1 << 30):.1f} GiB at {path}"
    if usage.free < DISK_MIN_BYTES or usage.free < usage.total * DISK_MIN_SHARE:
        return Check(
            "disk",
            False,
            detail,
            "free space on that disk, or move HINDSIGHT_DATA_DIR to a larger one "
            "(embedded PostgreSQL and Redis's append-only file grow there)",
        )
    return Check("disk", True, detail)


def server_version(number: int) -> str:
    """libpq's server_version is an integer (180004 for 18.4, 90624 for 9.6.24); as people
    write it."""
    major, minor = number // 10000, number % 10000
    if major >= 10:
        return f"{major}.{minor}"
    return f"{major}.{minor // 100}.{minor % 100}"


async def redis(settings: Settings) -> Check:
    url = settings.redis_url
    if url is None:
        url_file = settings.data_dir / "redis" / "url"
        url = url_file.read_text().strip() if url_file.exists() else None
        if not url:
            return Check(
                "redis",
                True,
                "embedded; not running now (`hindsight serve` starts it with appendonly yes)",
            )
    try:
        config = await diagnostics.redis_persistence(url)
    except Exception as exc:
        return Check(
            "redis",
            False,
            f"unreachable: {type(exc).__name__}: {exc}",
            "start Redis or correct HINDSIGHT_REDIS_URL; meanwhile working memory is read "
            "from PostgreSQL (slower, nothing is lost)",
        )
    if not config:
        return Check(
            "redis",
            True,
            "reachable; its CONFIG command is disabled, so AOF settings are unknown",
            "make sure the server runs with appendonly yes and appendfsync everysec",
            warning=True,
        )
    appendonly, fsync = config.get("appendonly"), config.get("appendfsync")
    if appendonly != "yes":
        return Check(
            "redis",
            False,
            f"appendonly is {appendonly!r}: a Redis restart loses the hot copy of working "
            "memory and sessions fall back to PostgreSQL until refilled",
            "redis-cli CONFIG SET appendonly yes && redis-cli CONFIG REWRITE "
            "(or `appendonly yes` in redis.conf)",
        )
    if fsync not in ("everysec", "always"):
        return Check(
            "redis",
            False,
            f"appendfsync is {fsync!r}: up to the OS's flush interval of writes can be lost",
            "redis-cli CONFIG SET appendfsync everysec && redis-cli CONFIG REWRITE",
        )
    return Check("redis", True, f"reachable; appendonly yes, appendfsync {fsync}")


def _index_fixes() -> dict[str, str]:
    return {
        schema.EMBEDDING_INDEX: schema.embedding_index_sql(),
        schema.KEYWORD_TERMS_INDEX: schema.keyword_terms_index_sql(),
        "uq_long_term_memory_active_key": "CREATE UNIQUE INDEX uq_long_term_memory_active_key "
        "ON long_term_memory (namespace, mem_key) WHERE live",
    }


async def database(settings: Settings, url: str) -> list[Check]:
    """Reachability, pgvector, schema revision, embedding model and width, indexes."""
    try:
        conn = await psycopg.AsyncConnection.connect(
            url, connect_timeout=5, autocommit=True, row_factory=dict_row
        )
    except psycopg.Error as exc:
        return [
            Check(
                "postgres",
                False,
                f"unreachable: {str(exc).strip().splitlines()[0]}",
                "start PostgreSQL or correct HINDSIGHT_DATABASE_URL (host, port, user, "
                "password, database)",
            )
        ]
    checks = [
        Check(
            "postgres", True, f"reachable (PostgreSQL {server_version(conn.info.server_version)})"
        )
    ]
    async with conn:
        version = await diagnostics.pgvector_version(conn)
        if version is None:
            checks.append(
                Check(
                    "pgvector",
                    False,
                    "the vector extension is not installed in this database",
                    "install pgvector ≥ 0.7 on the server, then `hindsight db upgrade` "
                    "(it runs CREATE EXTENSION vector)",
                )
            )
        elif _version(version) < PGVECTOR_MIN:
            checks.append(
                Check(
                    "pgvector",
                    False,
                    f"version {version}; halfvec and sparsevec need 0.7 or newer",
                    "upgrade the pgvector package, then ALTER EXTENSION vector UPDATE",
                )
            )
        else:
            checks.append(Check("pgvector", True, f"version {version}"))
        head = migrate.head_revision()
        current = migrate.current_revision(url)
        if current != head:
            checks.append(
                Check(
                    "schema",
                    False,
                    f"at revision {current or 'none'}, this version needs {head}",
                    "hindsight db upgrade",
                )
            )
            return checks
        checks.append(Check("schema", True, f"at revision {head} (current)"))
        checks.append(await _embedding(settings, conn))
        found = await diagnostics.indexes(conn, list(_index_fixes()))
        for name, create in _index_fixes().items():
            if name not in found:
                checks.append(
                    Check(f"index {name}", False, "missing: recall reads every row", create)
                )
            elif not found[name]:
                checks.append(
                    Check(
                        f"index {name}",
                        False,
                        "invalid (an interrupted build); queries ignore it",
                        f"DROP INDEX {name}; {create}",
                    )
                )
        if all(found.get(n) for n in _index_fixes()):
            checks.append(Check("indexes", True, f"{len(found)} search indexes present"))
    return checks + await citus_cluster(url)


async def citus_cluster(url: str) -> list[Check]:
    """On a Citus coordinator: every table placed as `hindsight db distribute` places it,
    the same extension versions on every node, the database's settings; a check for each
    problem. Nothing on a PostgreSQL without Citus."""
    cluster, problems = await asyncio.to_thread(citus.status, url)
    if cluster.version is None:
        return []
    if not cluster.distributed:
        return [
            Check(
                "citus",
                True,
                f"Citus {cluster.version} is installed, but Hindsight's tables are not "
                "distributed: they all stay on this node",
                "add the workers (SELECT citus_add_node('host', port)), then "
                "hindsight db distribute",
                warning=True,
            )
        ]
    if not problems:
        versions = ", ".join(
            f"{name} {version}"
            for name, version in sorted(next(iter(cluster.extensions.values()), {}).items())
        )
        return [
            Check(
                "citus",
                True,
                f"{len(cluster.workers)} workers; every table placed as planned; {versions} "
                f"on all {len(cluster.extensions)} nodes",
            )
        ]
    return [Check("citus", False, p.what, p.fix) for p in problems]


async def _embedding(settings: Settings, conn: Connection) -> Check:
    try:
        embedder = await create_embedder(settings)
    except HindsightError as exc:
        return Check(
            "embedding",
            False,
            exc.message,
            "check HINDSIGHT_EMBEDDING_BASE_URL, _MODEL and _API_KEY",
        )
    try:
        name, dims = embedder.name, embedder.dimensions
    finally:
        await embedder.aclose()
    stored_name, width = await schema.stored_embedding(conn)
    if (stored_name, width) == (name, dims):
        return Check("embedding", True, f"{name}, {dims} dimensions, as stored")
    if not await diagnostics.has_memories(conn):
        return Check(
            "embedding",
            True,
            f"{name} ({dims}); the empty store adopts it at the next start",
        )
    return Check(
        "embedding",
        False,
        f"configured {name} ({dims} dimensions) but the stored vectors are from "
        f"{stored_name} ({width} dimensions); the service refuses to start",
        "hindsight reembed (re-embeds every memory), or restore the previous "
        "HINDSIGHT_EMBEDDING_* settings",
    )
