"""FastAPI dependencies: the running service, the caller, and checked path parameters."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Path, Request
from starlette.types import Scope

from hindsight import limits
from hindsight.core import Hindsight
from hindsight.errors import InvalidInput
from hindsight.services import roles
from hindsight.services.auth import Principal
from hindsight.services.roles import Role

# Set in the scope of requests the app makes to itself (see hindsight.mcp.http).
INTERNAL = "hindsight.internal"

_NAMESPACE = re.compile(limits.NAMESPACE_PATTERN)
_SESSION = re.compile(limits.SESSION_ID_PATTERN)


# Dependencies are coroutines, even where nothing is awaited: FastAPI runs a plain function
# in its thread pool, a hand-off that cost every request a thread switch (measured in-process
# on 400 recalls: one lock release per request, 1.5 s of 26).
async def get_core(request: Request) -> Hindsight:
    core: Hindsight = request.app.state.hindsight
    return core


CoreDep = Annotated[Hindsight, Depends(get_core)]


async def get_principal(request: Request, core: CoreDep) -> Principal:
    principal = await core.auth.authenticate(
        request.headers.get("authorization"), client_address(request.scope)
    )
    request.state.principal = principal
    return principal


def client_address(scope: Scope) -> str | None:
    """Whom a request's rate limit is counted against; None for the calls MCP tools make to
    the app in-process (the MCP request that caused them was counted already)."""
    if scope.get(INTERNAL):
        return None
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


PrincipalDep = Annotated[Principal, Depends(get_principal)]


def check_namespace(namespace: str) -> str:
    if not _NAMESPACE.match(namespace):
        raise InvalidInput(
            f"namespace: {namespace!r} is not a namespace; use 1-64 characters of letters, "
            "digits, '.', '_' and '-', starting with a letter or digit"
        )
    return namespace


def check_session_id(session_id: str) -> str:
    if not _SESSION.match(session_id):
        raise InvalidInput(
            f"session_id: {session_id!r} is not a session id; use 1-128 characters of "
            "letters, digits, '.', '_', ':' and '-', starting with a letter or digit"
        )
    return session_id


def namespace_for(needed: Role, what: str) -> Callable[..., Awaitable[str]]:
    """The path's namespace, once the caller may use it with at least the `needed` role."""

    async def get_namespace(
        namespace: Annotated[str, Path(description="Agent, user or tenant.")],
        principal: PrincipalDep,
    ) -> str:
        check_namespace(namespace)
        principal.require(namespace)
        roles.require(principal.role, needed, what)
        return namespace

    return get_namespace


# reading (recall included: its log entry is a record of the read, not a change)
NamespaceDep = Annotated[str, Depends(namespace_for(Role.READER, "reading memories"))]
# writing: observe, edit, delete, append steps, extract, end or consolidate sessions
WritableNamespaceDep = Annotated[
    str, Depends(namespace_for(Role.WRITER, "changing memories or working memory"))
]
# the namespace's rules: its policy (what ages, what goes, whom to trust)
CuratorNamespaceDep = Annotated[
    str, Depends(namespace_for(Role.CURATOR, "changing the namespace's policy"))
]
# the whole namespace at once: erase and export
AdminNamespaceDep = Annotated[
    str, Depends(namespace_for(Role.ADMIN, "erasing or exporting a whole namespace"))
]


async def get_session_id(session_id: Annotated[str, Path(description="Client-chosen id.")]) -> str:
    return check_session_id(session_id)


SessionIdDep = Annotated[str, Depends(get_session_id)]
