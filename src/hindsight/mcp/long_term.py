"""The MCP tools of long-term memory: observe, recall, correct, delete, history, extract
from a conversation, forget by policy, and feedback on a recall."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context

from hindsight.mcp import args
from hindsight.mcp.registration import Target, Tool
from hindsight.mcp.results import answered, checked_id, dump, given


def register(tool: Tool, target: Target) -> None:
    @tool(
        "observe",
        "Remember a claim in long-term memory. Storing the same key and "
        "value again raises its confidence; a new value for a known key replaces the old "
        "one, which stays in the memory's history. Answers with the memory's id, what "
        "happened (created, reinforced, superseded, or quarantined for review, with the "
        "reason) and its confidence. Leave importance out and it is rated for you (by "
        "the service's LLM when one is configured, else greetings, thanks and other filler "
        "0.1, anything else 0.5; importance_by says which); one rated as trivial is "
        "stored cold (outcome stored_cold) or, by the namespace's policy, dropped.",
        former="memory_store",
    )
    async def observe(
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
        return dump(await answered(client.observe(ns, key, value, **fields)))

    @tool(
        "recall",
        "Find the memories most relevant to a question, best first. Each "
        "result has a score = relevance × confidence × access boost, with every component "
        'shown. A time in the query ("last May", "two weeks ago") ranks what happened '
        "then first; pass reference_time when the question is not asked now. Use it before "
        "acting, to recall what you know.",
        read_only=True,
        former="memory_search",
    )
    async def recall(
        query: args.Query,
        ctx: Context,
        k: args.K = 10,
        memory_types: args.TypeList = None,
        tags: args.Tags = None,
        min_confidence: args.MinConfidence = None,
        min_importance: args.MinImportance = None,
        hops: args.Hops = None,
        occurred_after: args.OccurredAfter = None,
        occurred_before: args.OccurredBefore = None,
        reference_time: args.ReferenceTime = None,
        namespace: args.Namespace = None,
        context: args.Context = None,
    ) -> Any:
        client, ns = await target(ctx, namespace)
        options = given(
            context=context,
            k=k,
            memory_types=memory_types,
            tags=tags,
            min_confidence=min_confidence,
            min_importance=min_importance,
            hops=hops,
            occurred_after=occurred_after,
            occurred_before=occurred_before,
            reference_time=reference_time,
        )
        return dump(await answered(client.recall(ns, query, **options)))

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
        return dump(await answered(client.update(ns, checked_id(memory_id), **changes)))

    @tool(
        "memory_delete",
        "Erase a memory by id: its values go everywhere; its history keeps a tombstone.",
        destructive=True,
    )
    async def memory_delete(
        memory_id: args.MemoryId, ctx: Context, namespace: args.Namespace = None
    ) -> Any:
        client, ns = await target(ctx, namespace)
        await answered(client.delete(ns, checked_id(memory_id)))
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
        return {"history": dump(await answered(client.history(ns, checked_id(memory_id))))}

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
            await answered(
                client.extract(ns, messages, dry_run=dry_run, min_importance=min_importance)
            )
        )

    @tool(
        "memory_forget",
        "Let go of memories by policy: those at or below max_confidence "
        "and/or at or below max_importance and/or not recalled for not_accessed_days and/or "
        "not observed again for not_observed_days, narrowed to memory_types and to what "
        "occurred between occurred_after and occurred_before, at most limit of them, least "
        "valuable first. Archives them (reversible) unless action is delete; permanent "
        "memories are never forgotten. Use dry_run first to see what would go.",
        destructive=True,
    )
    async def memory_forget(
        ctx: Context,
        max_confidence: args.MaxConfidence = None,
        max_importance: args.MaxImportance = None,
        not_accessed_days: args.Days = None,
        not_observed_days: args.Days = None,
        memory_types: args.TypeList = None,
        occurred_after: args.OccurredAfter = None,
        occurred_before: args.OccurredBefore = None,
        limit: args.ForgetLimit = None,
        action: str = "archive",
        dry_run: bool = True,
        namespace: args.Namespace = None,
    ) -> Any:
        client, ns = await target(ctx, namespace)
        policy = given(
            max_confidence=max_confidence,
            max_importance=max_importance,
            occurred_after=occurred_after,
            occurred_before=occurred_before,
            limit=limit,
            not_accessed_days=not_accessed_days,
            not_observed_days=not_observed_days,
            memory_types=memory_types,
            action=action,
            dry_run=dry_run,
        )
        return dump(await answered(client.forget(ns, **policy)))

    @tool(
        "memory_feedback",
        "After using the results of recall, say which memories you actually used "
        "(used) and which you did not (unused), by id, with the recall's recall_id. "
        "Each verdict is counted on the memory (used_count, unused_count) and kept with the "
        "recall, for the people who curate this memory to see; ranking does not read these "
        "counts (it counts how often a memory was recalled).",
    )
    async def memory_feedback(
        recall_id: args.MemoryId,
        ctx: Context,
        used: list[str] | None = None,
        unused: list[str] | None = None,
        namespace: args.Namespace = None,
    ) -> Any:
        client, ns = await target(ctx, namespace)
        return dump(await answered(client.feedback(ns, recall_id, used, unused)))
