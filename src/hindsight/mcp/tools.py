"""The MCP tools. Each is a thin adapter over one REST call made with the caller's own API
key, so MCP has the same auth, namespace scoping, limits and error messages as REST.

Over HTTP (`/mcp` in the app) the REST call goes to the app in-process; over stdio
(`hindsight mcp`) it goes to a Hindsight service by URL.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Protocol

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from hindsight import __version__
from hindsight.client import AsyncHindsight
from hindsight.mcp import args, governance
from hindsight.mcp.results import checked_id, dump, given, rest

INSTRUCTIONS = """Hindsight is your memory.
- Long-term memory holds claims as key/value pairs (user.favorite_color = blue) with a
  confidence that grows each time the same claim is stored again. Before acting, call
  memory_search; when you learn something worth keeping, call memory_store.
- Working memory holds the steps of your current task: call working_memory_append as you
  work, working_memory_context to see what you did, and session_end when the task is done,
  which distils the task's steps into long-term memory.
Scores come with their reasons (similarity, keyword match, confidence, how often recalled)."""


class Backend(Protocol):
    """Where a tool's REST call goes, on whose behalf."""

    async def client(self, ctx: Context) -> AsyncHindsight: ...

    def identity(self, ctx: Context) -> bytes:
        """Who is calling (a digest of their key), for what is remembered per caller."""
        ...

    def default_namespace(self, ctx: Context) -> str | None: ...

    def pinned_namespace(self, ctx: Context) -> str | None:
        """The only namespace this call may use (the endpoint names it), if any."""
        ...


# Callers whose namespaces are remembered; the least recently seen go first.
NAMESPACE_CACHE_ENTRIES = 1000


class Namespaces:
    """Which namespace a call means when it names none: the only one the key may use."""

    def __init__(self) -> None:
        self._cache: OrderedDict[bytes, tuple[float, list[str] | None]] = OrderedDict()

    async def resolve(
        self, client: AsyncHindsight, who: bytes, given: str | None, backend: Backend, ctx: Context
    ) -> str:
        pinned = backend.pinned_namespace(ctx)
        if pinned and given and given != pinned:
            raise ToolError(
                f"namespace: this endpoint serves namespace {pinned!r} only; leave namespace "
                f"out, or connect to /mcp/{given} for {given!r}"
            )
        if given:
            return given
        default = backend.default_namespace(ctx)
        if default:
            return default
        now = time.monotonic()
        cached = self._cache.get(who)
        if cached is None or cached[0] < now:
            me = await rest(client.whoami())
            scope = None if me.is_admin else me.namespaces
            cached = (now + 30, scope)
            self._cache[who] = cached
            while len(self._cache) > NAMESPACE_CACHE_ENTRIES:
                self._cache.popitem(last=False)
        self._cache.move_to_end(who)
        scope = cached[1]
        if scope is not None and len(scope) == 1:
            return scope[0]
        raise ToolError(
            "namespace is required: this API key may use "
            + ("every namespace" if scope is None else f"several namespaces ({', '.join(scope)})")
            + "; pass namespace=..."
        )


def build_server(backend: Backend) -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("hindsight", instructions=INSTRUCTIONS, version=__version__)
    namespaces = Namespaces()

    async def target(ctx: Context, namespace: str | None) -> tuple[AsyncHindsight, str]:
        client = await backend.client(ctx)
        who = backend.identity(ctx)
        return client, await namespaces.resolve(client, who, namespace, backend, ctx)

    def tool(
        name: str, description: str, *, read_only: bool = False, destructive: bool = False
    ) -> Callable[[Callable[..., Any]], Any]:
        # MCP's default for a tool that writes is "destructive": say which ones are not
        hints = ToolAnnotations(
            read_only_hint=read_only,
            destructive_hint=None if read_only else destructive,
            open_world_hint=False,
        )
        return server.tool(name=name, description=description, annotations=hints)

    @tool(
        "memory_store",
        "Remember a claim in long-term memory. Storing the same key and "
        "value again raises its confidence; a new value for a known key replaces the old "
        "one, which stays in the memory's history. Answers with the memory's id, what "
        "happened (created, reinforced, superseded, or quarantined for review, with the "
        "reason) and its confidence.",
    )
    async def memory_store(
        key: args.Key,
        value: args.Value,
        ctx: Context,
        memory_type: args.MemoryType = "fact",
        source: args.Source = None,
        confidence: args.Confidence = None,
        importance: args.Importance = None,
        tags: args.Tags = None,
        metadata: args.Metadata = None,
        occurred_at: args.OccurredAt = None,
        namespace: args.Namespace = None,
    ) -> Any:
        client, ns = await target(ctx, namespace)
        fields = given(
            memory_type=memory_type,
            source=source,
            confidence=confidence,
            importance=importance,
            tags=tags,
            metadata=metadata,
            occurred_at=occurred_at,
        )
        return dump(await rest(client.observe(ns, key, value, **fields)))

    @tool(
        "memory_search",
        "Find the memories most relevant to a question, best first. Each "
        "result has a score = relevance × confidence × access boost, with every component "
        'shown. A time in the query ("last May", "two weeks ago") ranks what happened '
        "then first; pass reference_time when the question is not asked now. Use it before "
        "acting, to recall what you know.",
        read_only=True,
    )
    async def memory_search(
        query: args.Query,
        ctx: Context,
        k: args.K = 10,
        memory_types: args.TypeList = None,
        tags: args.Tags = None,
        min_confidence: args.MinConfidence = None,
        hops: args.Hops = None,
        occurred_after: args.OccurredAfter = None,
        occurred_before: args.OccurredBefore = None,
        reference_time: args.ReferenceTime = None,
        namespace: args.Namespace = None,
    ) -> Any:
        client, ns = await target(ctx, namespace)
        options = given(
            k=k,
            memory_types=memory_types,
            tags=tags,
            min_confidence=min_confidence,
            hops=hops,
            occurred_after=occurred_after,
            occurred_before=occurred_before,
            reference_time=reference_time,
        )
        return dump(await rest(client.recall(ns, query, **options)))

    @tool(
        "memory_update",
        "Correct a memory by id: its value, key, type, confidence, "
        "importance, tags, metadata or when it happened (occurred_at), or archive it (status "
        "archived). The change is kept in its history.",
    )
    async def memory_update(
        memory_id: args.MemoryId,
        ctx: Context,
        value: args.Value | None = None,
        key: args.Key | None = None,
        memory_type: args.OptionalType = None,
        confidence: args.Confidence = None,
        importance: args.Importance = None,
        tags: args.Tags = None,
        metadata: args.Metadata = None,
        status: str | None = None,
        occurred_at: args.OccurredAt = None,
        namespace: args.Namespace = None,
    ) -> Any:
        client, ns = await target(ctx, namespace)
        changes = given(
            value=value,
            key=key,
            memory_type=memory_type,
            confidence=confidence,
            importance=importance,
            tags=tags,
            metadata=metadata,
            status=status,
            occurred_at=occurred_at,
        )
        return dump(await rest(client.update(ns, checked_id(memory_id), **changes)))

    @tool(
        "memory_delete",
        "Erase a memory by id: its values go everywhere; its history keeps a tombstone.",
        destructive=True,
    )
    async def memory_delete(
        memory_id: args.MemoryId, ctx: Context, namespace: args.Namespace = None
    ) -> Any:
        client, ns = await target(ctx, namespace)
        await rest(client.delete(ns, checked_id(memory_id)))
        return {"deleted": memory_id}

    @tool(
        "memory_history",
        "Every change to a memory, oldest first: each value and "
        "confidence it had, who changed it and when.",
        read_only=True,
    )
    async def memory_history(
        memory_id: args.MemoryId, ctx: Context, namespace: args.Namespace = None
    ) -> Any:
        client, ns = await target(ctx, namespace)
        return {"history": dump(await rest(client.history(ns, checked_id(memory_id))))}

    @tool(
        "memory_extract",
        "Read a conversation and store what is worth remembering from it "
        "(greetings and trivia are dropped). Repeated facts reinforce existing memories. "
        "Set dry_run to only see what would be kept. Needs an LLM configured on the "
        "server.",
    )
    async def memory_extract(
        messages: args.Messages,
        ctx: Context,
        dry_run: bool = False,
        min_importance: args.Importance = None,
        namespace: args.Namespace = None,
    ) -> Any:
        client, ns = await target(ctx, namespace)
        return dump(
            await rest(client.extract(ns, messages, dry_run=dry_run, min_importance=min_importance))
        )

    @tool(
        "memory_forget",
        "Let go of memories by policy: those at or below max_confidence "
        "and/or not recalled for not_accessed_days and/or not observed again for "
        "not_observed_days. Archives them (reversible) unless action is delete; permanent "
        "memories are never forgotten. Use dry_run first to see what would go.",
        destructive=True,
    )
    async def memory_forget(
        ctx: Context,
        max_confidence: args.MaxConfidence = None,
        not_accessed_days: args.Days = None,
        not_observed_days: args.Days = None,
        memory_types: args.TypeList = None,
        action: str = "archive",
        dry_run: bool = True,
        namespace: args.Namespace = None,
    ) -> Any:
        client, ns = await target(ctx, namespace)
        policy = given(
            max_confidence=max_confidence,
            not_accessed_days=not_accessed_days,
            not_observed_days=not_observed_days,
            memory_types=memory_types,
            action=action,
            dry_run=dry_run,
        )
        return dump(await rest(client.forget(ns, **policy)))

    @tool(
        "memory_feedback",
        "After using the results of memory_search, say which memories you actually used "
        "(used) and which you did not (unused), by id, with the search's recall_id. "
        "Memories that help get ranked by use rather than by mere retrieval.",
    )
    async def memory_feedback(
        recall_id: args.MemoryId,
        ctx: Context,
        used: list[str] | None = None,
        unused: list[str] | None = None,
        namespace: args.Namespace = None,
    ) -> Any:
        client, ns = await target(ctx, namespace)
        return dump(await rest(client.feedback(ns, recall_id, used, unused)))

    governance.register(tool, target)

    @tool(
        "working_memory_append",
        "Record a step of your current task in working memory "
        "(what you did, with what input or output). Steps expire 24 hours after the "
        "session's last step unless the task ends and is consolidated first.",
    )
    async def working_memory_append(
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
        return dump(await rest(client.append(ns, session_id, content, **fields)))

    @tool(
        "working_memory_context",
        "What happened so far in a task: the newest steps in "
        "full and, before them, older steps as short summaries.",
        read_only=True,
    )
    async def working_memory_context(
        session_id: args.SessionId,
        ctx: Context,
        recent: int = 10,
        max_chars: int = 8000,
        namespace: args.Namespace = None,
    ) -> Any:
        client, ns = await target(ctx, namespace)
        return dump(await rest(client.context(ns, session_id, recent, max_chars)))

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
        return dump(await rest(client.end_session(ns, session_id)))

    return server
