"""The MCP tools of working memory: a task's steps as it goes, what happened so far,
and the end of the task, which distils its steps into long-term memory."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context

from hindsight.mcp import args
from hindsight.mcp.registration import Target, Tool
from hindsight.mcp.results import answered, dump, given


def register(tool: Tool, target: Target) -> None:
    @tool(
        "append_step",
        "Record a step of your current task in working memory "
        "(what you did, with what input or output). Steps expire 24 hours after the "
        "session's last step unless the task ends and is consolidated first.",
        former="working_memory_append",
    )
    async def append_step(
        session_id: args.SessionId,
        content: args.StepContent,
        ctx: Context,
        role: args.Role = "assistant",
        metadata: args.Metadata = None,
        occurred_at: args.OccurredAt = None,
        namespace: args.Namespace = None,
    ) -> Any:
        client, ns = await target(ctx, namespace)
        fields = given(role=role, metadata=metadata, occurred_at=occurred_at)
        return dump(await answered(client.append_step(ns, session_id, content, **fields)))

    @tool(
        "working_memory_context",
        "What happened so far in a task: the newest steps in "
        "full and, before them, older steps as short summaries, within max_chars characters "
        "or, when given, max_tokens tokens (estimated: 4 characters a token, 1 for a "
        "Chinese, Japanese or Korean character).",
        read_only=True,
    )
    async def working_memory_context(
        session_id: args.SessionId,
        ctx: Context,
        recent: int = 10,
        max_chars: int = 8000,
        max_tokens: int | None = None,
        namespace: args.Namespace = None,
    ) -> Any:
        client, ns = await target(ctx, namespace)
        return dump(
            await answered(client.context(ns, session_id, recent, max_chars, max_tokens=max_tokens))
        )

    @tool(
        "session_end",
        "Finish a task: its working memory is distilled into long-term "
        "memory in the background (repeated facts reinforce, changed facts replace). "
        "Answers with the consolidation job to check later.",
    )
    async def session_end(
        session_id: args.SessionId, ctx: Context, namespace: args.Namespace = None
    ) -> Any:
        client, ns = await target(ctx, namespace)
        return dump(await answered(client.end_session(ns, session_id)))
