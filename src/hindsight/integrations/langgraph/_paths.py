"""How LangGraph's items sit in one Hindsight namespace, reversibly.

An item `(("users", "alice"), "prefs") -> {"food": "pizza"}` is the memory with key
`users.alice/prefs` and value `{"food": "pizza"}` (canonical JSON). LangGraph labels never
contain a period, so periods join them; `/` and `%` inside a label are percent-encoded, and
the item's own key is everything after the first `/`. Each memory also carries one tag per
prefix of its namespace (`lg:`, `lg:users`, `lg:users.alice`), so listing, search and recall
filter a namespace prefix with the server's tag filter instead of reading everything.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, unquote

from hindsight import limits

TAG_PREFIX = "lg:"
_HASHED_TAG_PREFIX = "lg#"


def path_text(namespace: tuple[str, ...]) -> str:
    return ".".join(quote(label, safe="") for label in namespace)


def memory_key(namespace: tuple[str, ...], key: str) -> str:
    text = f"{path_text(namespace)}/{key}"
    if len(text) > limits.KEY_MAX_CHARS:
        raise ValueError(
            f"namespace {namespace!r} and key {key!r} make a {len(text)}-character memory key; "
            f"Hindsight keeps at most {limits.KEY_MAX_CHARS}: use shorter labels or keys"
        )
    return text


def parse_key(text: str) -> tuple[tuple[str, ...], str] | None:
    """The namespace and key a memory key stands for; None for a memory not written here."""
    head, slash, key = text.partition("/")
    if not slash or not head:
        return None
    return tuple(unquote(label) for label in head.split(".")), key


def prefix_tag(prefix: tuple[str, ...]) -> str:
    """The tag every item under `prefix` carries. Tags are short (64 characters), so a
    long prefix is named by its hash."""
    tag = TAG_PREFIX + path_text(prefix)
    if len(tag) <= limits.TAG_MAX_CHARS:
        return tag
    return _HASHED_TAG_PREFIX + hashlib.sha256(path_text(prefix).encode()).hexdigest()[:40]


def prefix_tags(namespace: tuple[str, ...]) -> list[str]:
    if len(namespace) >= limits.TAGS_MAX:
        raise ValueError(
            f"namespace {namespace!r} is {len(namespace)} labels deep; "
            f"at most {limits.TAGS_MAX - 1} are supported"
        )
    return [prefix_tag(namespace[:depth]) for depth in range(len(namespace) + 1)]


def encode_value(value: Mapping[str, Any]) -> str:
    try:
        text = json.dumps(dict(value), sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the value must be JSON-serialisable: {exc}") from None
    if len(text) > limits.VALUE_MAX_CHARS:
        raise ValueError(
            f"the value is {len(text)} characters as JSON; "
            f"Hindsight keeps at most {limits.VALUE_MAX_CHARS} per item"
        )
    return text


def decode_value(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


# --- LangGraph's filter and namespace matching, as its own stores apply them ------------


def matches_filter(value: Mapping[str, Any], conditions: Mapping[str, Any] | None) -> bool:
    return all(_compare(value.get(k), v) for k, v in (conditions or {}).items())


def _compare(item: Any, wanted: Any) -> bool:
    if isinstance(wanted, dict):
        if any(str(k).startswith("$") for k in wanted):
            return all(_operator(item, op, operand) for op, operand in wanted.items())
        return isinstance(item, dict) and all(_compare(item.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(item, list | tuple)
            and len(item) == len(wanted)
            and all(_compare(i, w) for i, w in zip(item, wanted, strict=True))
        )
    return bool(item == wanted)


def _operator(item: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(item == operand)
    if op == "$ne":
        return bool(item != operand)
    if op not in ("$gt", "$gte", "$lt", "$lte"):
        raise ValueError(f"unsupported filter operator {op!r}: use $eq, $ne, $gt, $gte, $lt, $lte")
    try:
        left, right = float(item), float(operand)
    except (TypeError, ValueError):
        return False
    return {"$gt": left > right, "$gte": left >= right, "$lt": left < right, "$lte": left <= right}[
        op
    ]


def matches_path(namespace: tuple[str, ...], path: tuple[str, ...], match_type: str) -> bool:
    if len(namespace) < len(path):
        return False
    if match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise ValueError(f"unsupported match type {match_type!r}: use prefix or suffix")
    return all(p == "*" or n == p for n, p in pairs)


def fixed_prefix(path: tuple[str, ...]) -> tuple[str, ...]:
    """The labels before the first wildcard: what a tag can filter on."""
    for position, label in enumerate(path):
        if label == "*":
            return path[:position]
    return path
