"""Who is calling, and which namespaces they may touch.

Keys are random tokens (`hs_` + 43 URL-safe characters, 256 bits); only their SHA-256 is
stored, which is enough for tokens of that strength and costs nothing per request.
Lookups are cached for a few seconds, so a revoked key stops working within
`CACHE_SECONDS` on every replica. A token that cannot be a key is refused before any
lookup, and requests are rate limited per key and per client address.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from psycopg import errors as pg_errors
from psycopg_pool import AsyncConnectionPool

from hindsight.db.pool import Connection
from hindsight.errors import Conflict, Forbidden, InvalidInput, Unauthorized
from hindsight.ids import uuid7
from hindsight.services import roles
from hindsight.services.names import check_namespace
from hindsight.services.rate_limit import TokenBuckets
from hindsight.services.roles import Role
from hindsight.stores import api_keys as store

CACHE_SECONDS = 5.0
# Keys remembered (known and unknown apart, so a flood of unknown tokens never pushes out
# the keys in use); the least recently used go first.
CACHE_ENTRIES = 10_000
KEY_PREFIX = "hs_"
# What `new_key` makes: nothing else can be a stored key, so it is refused without a lookup.
_STORED_KEY = re.compile(r"^hs_[A-Za-z0-9_-]{20,128}$")
# RFC 6750's b64token, bounded: any other Authorization value is malformed.
_TOKEN = re.compile(r"^[A-Za-z0-9._~+/-]+=*$")
TOKEN_MAX_CHARS = 512


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

    def enter(self, namespace: str, access: roles.Access) -> str:
        """The namespace, once its name is valid and this key may use it for `access`."""
        check_namespace(namespace)
        self.require(namespace)
        roles.require(self.role, access.needed, access.what)
        return namespace


def hash_key(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def bearer_token(authorization: str | None) -> str:
    """The key in an Authorization header, or Unauthorized saying what is wrong with it."""
    if not authorization:
        raise Unauthorized("missing Authorization header; send `Authorization: Bearer <api key>`")
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise Unauthorized("Authorization must be `Bearer <api key>`")
    if len(token) > TOKEN_MAX_CHARS:
        raise Unauthorized(f"malformed API key: longer than {TOKEN_MAX_CHARS} characters")
    return token


class Authenticator:
    def __init__(
        self,
        pool: AsyncConnectionPool[Connection],
        bootstrap_key: str | None,
        *,
        per_key: float = 0,
        per_client: float = 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._pool = pool
        self._bootstrap = hash_key(bootstrap_key) if bootstrap_key else None
        self._clock = clock
        self._known: OrderedDict[bytes, tuple[float, Principal]] = OrderedDict()
        self._unknown: OrderedDict[bytes, float] = OrderedDict()
        self._per_key = TokenBuckets(per_key, what="with this API key", clock=clock)
        self._per_client = TokenBuckets(per_client, what="from this address", clock=clock)

    def count_client(self, client: str | None) -> None:
        """Count a request that needs no key against its address's limit (None: not)."""
        if client is not None:
            self._per_client.take(client)

    async def authenticate(self, authorization: str | None, client: str | None = None) -> Principal:
        """Who sent the request. `client`, the caller's address, is rate limited before the
        key is even looked at; None (a call the service makes to itself) is not limited."""
        self.count_client(client)
        token = bearer_token(authorization)
        digest = hash_key(token)
        if self._bootstrap is not None and hmac.compare_digest(digest, self._bootstrap):
            principal = Principal(name="bootstrap-admin", namespaces=None, role=Role.ADMIN)
        elif not _TOKEN.fullmatch(token):
            raise Unauthorized(
                "malformed API key: a key is ASCII letters, digits and - . _ ~ + / = only"
            )
        elif not _STORED_KEY.fullmatch(token):
            raise Unauthorized("unknown or revoked API key")
        else:
            principal = await self._cached(digest)
        if client is not None:
            self._per_key.take(digest)
        return principal

    async def _cached(self, digest: bytes) -> Principal:
        now = self._clock()
        known = self._known.get(digest)
        if known is not None and known[0] > now:
            self._known.move_to_end(digest)
            return known[1]
        unknown_until = self._unknown.get(digest)
        if unknown_until is not None and unknown_until > now:
            raise Unauthorized("unknown or revoked API key")
        principal = await self._lookup(digest)
        if principal is None:
            self._known.pop(digest, None)
            _remember(self._unknown, digest, now + CACHE_SECONDS)
            raise Unauthorized("unknown or revoked API key")
        self._unknown.pop(digest, None)
        _remember(self._known, digest, (now + CACHE_SECONDS, principal))
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


def _remember(cache: OrderedDict[bytes, Any], digest: bytes, entry: Any) -> None:
    cache[digest] = entry
    cache.move_to_end(digest)
    while len(cache) > CACHE_ENTRIES:
        cache.popitem(last=False)


class KeyService:
    """Create, list and revoke keys (the CLI's `hindsight keys ...`)."""

    def __init__(self, pool: AsyncConnectionPool[Connection]) -> None:
        self._pool = pool

    async def create(
        self, name: str, *, namespaces: Sequence[str] | None, role: Role
    ) -> tuple[str, dict[str, Any]]:
        """A key for `namespaces` (None: every namespace) with `role`."""
        if role is Role.ADMIN and namespaces is not None:
            # an admin acts across namespaces (keys, metrics, every namespace's data): a key
            # that said otherwise would mislead whoever reads `keys list`
            raise InvalidInput(
                "an admin key reaches every namespace: create it with --all-namespaces, or "
                "give a key for these namespaces the curator role"
            )
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
