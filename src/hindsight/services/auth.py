"""Who is calling, and which namespaces they may touch.

Keys are random tokens (`hs_` + 43 URL-safe characters, 256 bits); only their SHA-256 is
stored, which is enough for tokens of that strength and costs nothing per request.
Lookups are cached for a few seconds, so a revoked key stops working within
`CACHE_SECONDS` on every replica.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from psycopg import errors as pg_errors
from psycopg_pool import AsyncConnectionPool

from hindsight.db.pool import Connection
from hindsight.errors import Conflict, Forbidden, Unauthorized
from hindsight.ids import uuid7
from hindsight.services.roles import Role
from hindsight.stores import api_keys as store

CACHE_SECONDS = 5.0
KEY_PREFIX = "hs_"


@dataclass(frozen=True)
class Principal:
    name: str
    namespaces: frozenset[str] | None  # None: every namespace
    role: Role

    @property
    def is_admin(self) -> bool:
        return self.role is Role.ADMIN

    def allows(self, namespace: str) -> bool:
        return self.is_admin or self.namespaces is None or namespace in self.namespaces

    def require(self, namespace: str) -> None:
        if not self.allows(namespace):
            raise Forbidden(
                f"this API key may not use namespace {namespace!r}; it is scoped to "
                f"{sorted(self.namespaces or [])}"
            )


def hash_key(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


class Authenticator:
    def __init__(self, pool: AsyncConnectionPool[Connection], bootstrap_key: str | None) -> None:
        self._pool = pool
        self._bootstrap = hash_key(bootstrap_key) if bootstrap_key else None
        self._cache: dict[bytes, tuple[float, Principal | None]] = {}

    async def authenticate(self, authorization: str | None) -> Principal:
        if not authorization:
            raise Unauthorized(
                "missing Authorization header; send `Authorization: Bearer <api key>`"
            )
        scheme, _, token = authorization.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise Unauthorized("Authorization must be `Bearer <api key>`")
        digest = hash_key(token)
        if self._bootstrap is not None and hmac.compare_digest(digest, self._bootstrap):
            return Principal(name="bootstrap-admin", namespaces=None, role=Role.ADMIN)
        now = time.monotonic()
        cached = self._cache.get(digest)
        if cached is not None and cached[0] > now:
            principal = cached[1]
        else:
            principal = await self._lookup(digest)
            if len(self._cache) > 10_000:
                self._cache.clear()
            self._cache[digest] = (now + CACHE_SECONDS, principal)
        if principal is None:
            raise Unauthorized("unknown or revoked API key")
        return principal

    async def _lookup(self, digest: bytes) -> Principal | None:
        async with self._pool.connection() as conn:
            row = await store.find_by_hash(conn, digest)
            if row is None or row["revoked_at"] is not None:
                return None
            await store.touch(conn, row["id"])
        namespaces = row["namespaces"]
        return Principal(
            name=row["name"],
            namespaces=None if namespaces is None else frozenset(namespaces),
            role=Role(row["role"]),
        )


class KeyService:
    """Create, list and revoke keys (the CLI's `hindsight keys ...`)."""

    def __init__(self, pool: AsyncConnectionPool[Connection]) -> None:
        self._pool = pool

    async def create(
        self, name: str, *, namespaces: Sequence[str] | None, role: Role
    ) -> tuple[str, dict[str, Any]]:
        """A key for `namespaces` (None: every namespace) with `role`."""
        key = new_key()
        try:
            async with self._pool.connection() as conn:
                row = await store.create(
                    conn,
                    key_id=uuid7(),
                    name=name,
                    key_hash=hash_key(key),
                    key_prefix=key[:10],
                    namespaces=list(namespaces) if namespaces is not None else None,
                    role=role.value,
                )
        except pg_errors.UniqueViolation:
            raise Conflict(f"an API key named {name!r} exists; pick another name") from None
        return key, row

    async def list_keys(self) -> list[dict[str, Any]]:
        async with self._pool.connection() as conn:
            return await store.list_all(conn)

    async def revoke(self, name_or_id: str) -> dict[str, Any] | None:
        async with self._pool.connection() as conn:
            return await store.revoke(conn, name_or_id)

    async def count_active(self) -> int:
        async with self._pool.connection() as conn:
            return await store.count_active(conn)
