"""The MCP tools of governance: the review queue of quarantined claims (curator) and a
namespace as a whole, exported or erased (admin). Same REST calls, same roles."""

from __future__ import annotations

import json
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from hindsight.mcp import args
from hindsight.mcp.registration import Target, Tool
from hindsight.mcp.results import answered, checked_id, dump

# A tool result is one message in the agent's context: a bigger export goes by REST or CLI.
EXPORT_MAX_CHARS = 5_000_000


def register(tool: Tool, target: Target) -> None:
    @tool(
        "memory_review_queue",
        "List the memories waiting for review (quarantined): claims from a low-trust "
        "source, claims that contend with a verified memory, or claims carrying prompt-"
        "injection markers. None of them is recalled until a curator approves it.",
        read_only=True,
    )
    async def memory_review_queue(
        ctx: Context,
        limit: int = 50,
        cursor: str | None = None,
        namespace: args.Namespace = None,
    ) -> Any:
        client, ns = await target(ctx, namespace)
        return dump(await answered(client.quarantined(ns, limit=limit, cursor=cursor)))

    @tool(
        "memory_approve",
        "Approve a quarantined memory by id (curator role): it becomes the active memory of "
        "its key, replacing the one it contended with. The reason goes into its history.",
    )
    async def memory_approve(
        memory_id: args.MemoryId,
        ctx: Context,
        reason: str | None = None,
        namespace: args.Namespace = None,
    ) -> Any:
        client, ns = await target(ctx, namespace)
        return dump(await answered(client.approve(ns, checked_id(memory_id), reason)))

    @tool(
        "memory_reject",
        "Reject a quarantined memory by id (curator role): it is erased; its history keeps "
        "a `rejected` tombstone with the reason.",
        destructive=True,
    )
    async def memory_reject(
        memory_id: args.MemoryId,
        ctx: Context,
        reason: str | None = None,
        namespace: args.Namespace = None,
    ) -> Any:
        client, ns = await target(ctx, namespace)
        return dump(await answered(client.reject(ns, checked_id(memory_id), reason)))

    @tool(
        "namespace_policy",
        "The namespace's policy: lifecycle rules, ranking weights, capacity, how far each "
        "memory source is trusted (and below what its claims wait for review), and what "
        "happens to secrets (redaction). Every field is shown, defaults included.",
        read_only=True,
    )
    async def namespace_policy(ctx: Context, namespace: args.Namespace = None) -> Any:
        client, ns = await target(ctx, namespace)
        return await answered(client.policy(ns))

    @tool(
        "namespace_policy_update",
        "Change the namespace's policy (curator role): pass only the fields to change, "
        'e.g. {"trust": {"sources": {"web": 0.2}}} or {"redaction": {"mode": "reject"}}. '
        "An invalid policy is refused naming the field, and nothing changes.",
    )
    async def namespace_policy_update(
        policy: Annotated[dict[str, Any], Field(description="The policy fields to set.")],
        ctx: Context,
        namespace: args.Namespace = None,
    ) -> Any:
        client, ns = await target(ctx, namespace)
        return await answered(client.set_policy(ns, policy))

    @tool(
        "namespace_export",
        "Export a whole namespace (admin role): every memory with its full history, and "
        "with sessions=true the working-memory sessions with their steps, as the lines of "
        "the hindsight-export v2 format (`hindsight import` restores them). Large "
        "namespaces: use `hindsight export` or GET /v1/namespaces/{ns}:export instead.",
        read_only=True,
    )
    async def namespace_export(
        ctx: Context, sessions: bool = False, namespace: args.Namespace = None
    ) -> Any:
        client, ns = await target(ctx, namespace)
        lines = await answered(client.export(ns, sessions=sessions))
        size = sum(len(json.dumps(line)) for line in lines)
        if size > EXPORT_MAX_CHARS:
            raise ToolError(
                f"the export of {ns!r} is {size:,} characters, more than a tool result may "
                f"carry ({EXPORT_MAX_CHARS:,}); run `hindsight export --namespace {ns}` or "
                f"GET /v1/namespaces/{ns}:export"
            )
        return {"namespace": ns, "lines": lines}

    @tool(
        "namespace_erase",
        "Erase a whole namespace for good (admin role): every memory, its history, the "
        "recall log, jobs, working memory and Redis keys. Pass confirm= the namespace's "
        "name. Answers with a receipt counting what was removed from each store.",
        destructive=True,
    )
    async def namespace_erase(
        confirm: Annotated[str, Field(description="The namespace's name, to confirm.")],
        ctx: Context,
        namespace: args.Namespace = None,
    ) -> Any:
        client, ns = await target(ctx, namespace)
        if confirm != ns:
            raise ToolError(
                f"confirm: pass confirm={ns!r} to erase namespace {ns!r}; nothing was erased"
            )
        return dump(await answered(client.erase_namespace(ns)))
