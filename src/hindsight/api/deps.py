"""FastAPI dependencies: the running service, the caller, and checked path parameters."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Path, Request

from hindsight.callers import client_address
from hindsight.core import Hindsight
from hindsight.services import roles
from hindsight.services.auth import Principal
from hindsight.services.names import check_session_id


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


PrincipalDep = Annotated[Principal, Depends(get_principal)]


def namespace_for(access: roles.Access) -> Callable[..., Awaitable[str]]:
    """The path's namespace, once the caller may use it for `access`."""

    async def get_namespace(
        namespace: Annotated[str, Path(description="Agent, user or tenant.")],
        principal: PrincipalDep,
    ) -> str:
        return principal.enter(namespace, access)

    return get_namespace


NamespaceDep = Annotated[str, Depends(namespace_for(roles.READING))]
WritableNamespaceDep = Annotated[str, Depends(namespace_for(roles.WRITING))]
CuratorNamespaceDep = Annotated[str, Depends(namespace_for(roles.CURATING))]
AdminNamespaceDep = Annotated[str, Depends(namespace_for(roles.WHOLE_NAMESPACE))]


async def get_session_id(session_id: Annotated[str, Path(description="Client-chosen id.")]) -> str:
    return check_session_id(session_id)


SessionIdDep = Annotated[str, Depends(get_session_id)]
