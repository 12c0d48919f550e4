"""Reusable field types that refuse what PostgreSQL cannot store or we will not index."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, PlainSerializer, StringConstraints

from hindsight import limits


def clean_text(value: str) -> str:
    if "\x00" in value:
        raise ValueError("must not contain NUL (\\u0000) characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("is not valid Unicode (it holds a lone surrogate escape)") from None
    return value


def _clean_json(value: Any, depth: int = 1) -> None:
    if isinstance(value, str):
        clean_text(value)
        return
    if not isinstance(value, dict | list):
        return
    if depth > limits.JSON_MAX_DEPTH:
        # stop here, before anything recurses as deep as the input goes
        raise ValueError(
            f"is nested more than {limits.JSON_MAX_DEPTH} levels deep; at most "
            f"{limits.JSON_MAX_DEPTH} levels of objects and arrays are accepted"
        )
    if isinstance(value, dict):
        for k, v in value.items():
            clean_text(k)
            _clean_json(v, depth + 1)
    else:
        for v in value:
            _clean_json(v, depth + 1)


def clean_metadata(value: dict[str, Any]) -> dict[str, Any]:
    _clean_json(value)
    size = len(json.dumps(value, ensure_ascii=False).encode("utf-8"))
    if size > limits.METADATA_MAX_BYTES:
        raise ValueError(
            f"is {size} bytes as JSON; at most {limits.METADATA_MAX_BYTES} bytes are accepted"
        )
    return value


def shown_json(value: Any, depth: int = 1) -> Any:
    """Stored JSON as a response carries it. Whatever lies deeper than the input limit
    (stored before the limit existed, or written with psql) is shown as its JSON text, so
    no encoder meets more nesting than it can handle and a read never fails over it."""
    if isinstance(value, dict):
        if depth > limits.JSON_MAX_DEPTH:
            return _as_text(value)
        return {k: shown_json(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        if depth > limits.JSON_MAX_DEPTH:
            return _as_text(value)
        return [shown_json(v, depth + 1) for v in value]
    return value


def _as_text(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except RecursionError:
        return "(nested too deeply to show)"


_CLEAN = AfterValidator(clean_text)

Key = Annotated[str, StringConstraints(min_length=1, max_length=limits.KEY_MAX_CHARS), _CLEAN]
Value = Annotated[str, StringConstraints(min_length=1, max_length=limits.VALUE_MAX_CHARS), _CLEAN]
Source = Annotated[str, StringConstraints(min_length=1, max_length=limits.SOURCE_MAX_CHARS), _CLEAN]
Tag = Annotated[str, StringConstraints(min_length=1, max_length=limits.TAG_MAX_CHARS), _CLEAN]
Query = Annotated[str, StringConstraints(min_length=1, max_length=limits.QUERY_MAX_CHARS), _CLEAN]
StepContent = Annotated[
    str, StringConstraints(min_length=1, max_length=limits.STEP_CONTENT_MAX_CHARS), _CLEAN
]
StepSummary = Annotated[str, StringConstraints(max_length=limits.STEP_SUMMARY_MAX_CHARS), _CLEAN]
Role = Annotated[str, StringConstraints(pattern=limits.ROLE_PATTERN), _CLEAN]
IdempotencyKey = Annotated[
    str, StringConstraints(min_length=1, max_length=limits.IDEMPOTENCY_KEY_MAX_CHARS), _CLEAN
]
Metadata = Annotated[dict[str, Any], AfterValidator(clean_metadata)]
# Stored JSON in a response (metadata of memories, steps and sessions).
StoredJson = Annotated[dict[str, Any], PlainSerializer(shown_json)]


class Strict(BaseModel):
    """Unknown fields are refused, so a misspelt field is an error rather than ignored."""

    model_config = ConfigDict(extra="forbid")


MemoryType = Literal[
    "fact", "preference", "experience", "reflection", "relation", "event", "summary"
]
Status = Literal["active", "cold", "archived", "quarantined"]
# what a PATCH may set: a quarantined memory leaves quarantine only by a curator's review
SettableStatus = Literal["active", "cold", "archived"]
