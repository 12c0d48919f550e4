"""Tool argument types. Each advertises the REST limits in its JSON schema but leaves the
checking to the REST call behind the tool, so a bad argument gets exactly REST's message."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import WithJsonSchema

from hindsight import limits


def _text(description: str, max_length: int, min_length: int = 1) -> Any:
    return WithJsonSchema(
        {
            "type": "string",
            "minLength": min_length,
            "maxLength": max_length,
            "description": description,
        }
    )


def _optional(schema: dict[str, Any]) -> Any:
    return WithJsonSchema(
        {
            "anyOf": [schema, {"type": "null"}],
            "default": None,
            "description": schema.get("description", ""),
        }
    )


TYPES = list(limits.MEMORY_TYPES)

Namespace = Annotated[
    str | None,
    _optional(
        {
            "type": "string",
            "pattern": limits.NAMESPACE_PATTERN,
            "description": "Whose memory: an agent, user or tenant. Leave out when your key is "
            "limited to one namespace.",
        }
    ),
]
Key = Annotated[
    str,
    _text(
        "What the memory is about, as a short dotted path, e.g. user.favorite_color. The same "
        "key and value again reinforces the memory; a new value for the key replaces it "
        "(the old one is kept in its history).",
        limits.KEY_MAX_CHARS,
    ),
]
Value = Annotated[
    str, _text("The claim itself, one self-contained sentence or phrase.", limits.VALUE_MAX_CHARS)
]
MemoryType = Annotated[
    Literal["fact", "preference", "experience", "reflection", "relation", "event", "summary"],
    WithJsonSchema(
        {
            "type": "string",
            "enum": TYPES,
            "default": "fact",
            "description": "fact, preference, experience (what happened and how it "
            "went), reflection (a lesson), relation, event (something that happened at a "
            "time) or summary.",
        }
    ),
]
OptionalType = Annotated[str | None, _optional({"type": "string", "enum": TYPES})]
Source = Annotated[
    str | None,
    _optional(
        {
            "type": "string",
            "maxLength": limits.SOURCE_MAX_CHARS,
            "description": "Where the claim came from (a conversation, a document ...).",
        }
    ),
]
Confidence = Annotated[
    float | None,
    _optional(
        {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "description": "How sure you are, 0..1 (only used when the key is new or its value "
            "changes; storing it again raises it).",
        }
    ),
]
Importance = Annotated[
    float | None,
    _optional(
        {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "description": "How much it would matter to get this wrong later, 0..1.",
        }
    ),
]
MinConfidence = Annotated[
    float | None,
    _optional(
        {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "description": "Only memories at least this confident.",
        }
    ),
]
MaxConfidence = Annotated[
    float | None,
    _optional(
        {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "description": "Memories at most this confident.",
        }
    ),
]
MinImportance = Annotated[
    float | None,
    _optional(
        {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "description": "Only memories at least this important.",
        }
    ),
]
MaxImportance = Annotated[
    float | None,
    _optional(
        {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "description": "Memories at most this important.",
        }
    ),
]
ForgetLimit = Annotated[
    int | None,
    _optional(
        {
            "type": "integer",
            "minimum": 1,
            "maximum": limits.FORGET_LIMIT_MAX,
            "description": "At most this many, least valuable first (default 1000).",
        }
    ),
]
Tags = Annotated[
    list[str] | None,
    _optional(
        {
            "type": "array",
            "maxItems": limits.TAGS_MAX,
            "items": {"type": "string", "minLength": 1, "maxLength": limits.TAG_MAX_CHARS},
            "description": "Labels to filter by later.",
        }
    ),
]
Metadata = Annotated[
    dict[str, Any] | None,
    _optional(
        {
            "type": "object",
            "description": f"Any JSON object, at most {limits.METADATA_MAX_BYTES} bytes.",
        }
    ),
]
MemoryId = Annotated[
    str, WithJsonSchema({"type": "string", "format": "uuid", "description": "The memory's id."})
]
Query = Annotated[str, _text("What to look for, in plain words.", limits.QUERY_MAX_CHARS)]
K = Annotated[
    int,
    WithJsonSchema(
        {
            "type": "integer",
            "minimum": 1,
            "maximum": limits.K_MAX,
            "default": 10,
            "description": "How many memories.",
        }
    ),
]
TypeList = Annotated[
    list[str] | None,
    _optional(
        {
            "type": "array",
            "items": {"type": "string", "enum": TYPES},
            "description": "Only these memory types.",
        }
    ),
]
Hops = Annotated[
    int | None,
    _optional(
        {
            "type": "integer",
            "minimum": 1,
            "maximum": 2,
            "description": "2 for questions that need two memories (e.g. where does my sister "
            "live: first the sister, then where she lives).",
        }
    ),
]
SessionId = Annotated[
    str,
    WithJsonSchema(
        {
            "type": "string",
            "pattern": limits.SESSION_ID_PATTERN,
            "description": "Your task's session id (you choose it; keep it for the whole task).",
        }
    ),
]
StepContent = Annotated[
    str, _text("What was done or said in this step.", limits.STEP_CONTENT_MAX_CHARS)
]
Role = Annotated[
    str,
    WithJsonSchema(
        {
            "type": "string",
            "pattern": limits.ROLE_PATTERN,
            "default": "assistant",
            "description": "Who produced the step: user, assistant, tool, system ...",
        }
    ),
]
Messages = Annotated[
    list[dict[str, str]],
    WithJsonSchema(
        {
            "type": "array",
            "minItems": 1,
            "maxItems": limits.EXTRACT_MESSAGES_MAX,
            "items": {
                "type": "object",
                "required": ["role", "content"],
                "properties": {
                    "role": {"type": "string", "pattern": limits.ROLE_PATTERN},
                    "content": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": limits.STEP_CONTENT_MAX_CHARS,
                    },
                    "occurred_at": {
                        "type": "string",
                        "format": "date-time",
                        "description": "When it was said (ISO 8601 with a timezone), so "
                        "that 'yesterday' in it can be dated.",
                    },
                },
            },
            "description": "The conversation, oldest first, as role/content messages.",
        }
    ),
]


def _time(description: str) -> Any:
    return _optional({"type": "string", "format": "date-time", "description": description})


OccurredAt = Annotated[
    str | None,
    _time(
        "When the thing happened (not when you store it), ISO 8601 with a timezone, e.g. "
        "2024-05-03T14:00:00Z. Leave out when unknown."
    ),
]
OccurredAfter = Annotated[
    str | None, _time("Only memories that happened at or after this (ISO 8601, with a timezone).")
]
OccurredBefore = Annotated[
    str | None, _time("Only memories that happened before this (ISO 8601, with a timezone).")
]
ReferenceTime = Annotated[
    str | None,
    _time(
        "When the question is asked (ISO 8601 with a timezone; default now): words like "
        '"last May" or "two weeks ago" in the query are read against it.'
    ),
]
Days = Annotated[
    float | None,
    _optional({"type": "number", "exclusiveMinimum": 0, "description": "A number of days."}),
]
Context = Annotated[
    list[dict[str, str]] | None,
    _optional(
        {
            "type": "array",
            "maxItems": limits.CONTEXT_TURNS_MAX,
            "items": {
                "type": "object",
                "required": ["role", "content"],
                "properties": {
                    "role": {"type": "string", "pattern": limits.ROLE_PATTERN},
                    "content": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": limits.QUERY_MAX_CHARS,
                    },
                },
            },
            "description": "The conversation's recent turns, oldest first, as role/content "
            "messages; the query is the latest. Searched turn by turn: the user's over the "
            "assistant's, the latest over older ones.",
        }
    ),
]
