"""What each REST call sends and what it returns, shared by the sync and async clients:
one function per call, building its `Call` (`_call`). The clients only differ in how they
send it; the keyword arguments' types are in `_options`, the sending policy in `_sending`.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any
from urllib.parse import quote

from hindsight.client._call import Call
from hindsight.client._options import (
    ForgetPolicy,
    ListFilters,
    MemoryChanges,
    MemoryFields,
    RecallOptions,
    StepFields,
)
from hindsight.wire.extraction import ExtractOut
from hindsight.wire.feedback import FeedbackOut
from hindsight.wire.memories import (
    EraseReceipt,
    ForgetOut,
    HistoryEntry,
    MemoryOut,
    MemoryPage,
    ObserveResult,
    Rejected,
    Whoami,
)
from hindsight.wire.recall import RecallLogOut, RecallOut
from hindsight.wire.sessions import (
    ContextOut,
    JobOut,
    SessionDeleted,
    SessionEnded,
    SessionOut,
    StepOut,
)

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _ns(namespace: str) -> str:
    return f"/v1/namespaces/{quote(namespace, safe='')}"


def _id(memory_id: str) -> str:
    # quoted, so an id can never be a path such as ../sessions/x
    return quote(memory_id, safe="")


def _session(namespace: str, session_id: str) -> str:
    return f"{_ns(namespace)}/sessions/{quote(session_id, safe='')}"


def _json(value: Any) -> Any:
    """Dates as ISO text; everything else as given."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json(v) for v in value]
    return value


def _model(model: type[Any]) -> Callable[[Any], Any]:
    return model.model_validate  # type: ignore[no-any-return]


def _nothing(_: Any) -> None:
    return None


# --- the calls ---------------------------------------------------------------------------


def observe(namespace: str, key: str, value: str, fields: MemoryFields) -> Call:
    body = _json({"key": key, "value": value, **fields})
    return Call("POST", f"{_ns(namespace)}/memories", _model(ObserveResult), json=body)


def observe_many(
    namespace: str, memories: Iterable[Mapping[str, Any]], *, dedup: bool = True
) -> Call:
    body: dict[str, Any] = {"memories": [_json(dict(m)) for m in memories]}
    if not dedup:
        body["dedup"] = False
    return Call(
        "POST",
        f"{_ns(namespace)}/memories:batch",
        lambda body: [ObserveResult.model_validate(r) for r in body["results"]],
        json=body,
    )


def recall(namespace: str, query: str | None, options: RecallOptions) -> Call:
    body: dict[str, Any] = dict(options) if query is None else {"query": query, **options}
    return Call(
        "POST",
        f"{_ns(namespace)}/recall",
        _model(RecallOut),
        json=_json(body),
        idempotent=True,
    )


def explain(namespace: str, recall_id: str) -> Call:
    return Call(
        "GET",
        f"{_ns(namespace)}/recalls/{recall_id}",
        _model(RecallLogOut),
        idempotent=True,
    )


def get(namespace: str, memory_id: str) -> Call:
    return Call(
        "GET",
        f"{_ns(namespace)}/memories/{_id(memory_id)}",
        _model(MemoryOut),
        idempotent=True,
    )


def list_page(namespace: str, limit: int, cursor: str | None, filters: ListFilters) -> Call:
    params: dict[str, Any] = _json({"limit": limit, **filters})
    if cursor:
        params["cursor"] = cursor
    return Call(
        "GET",
        f"{_ns(namespace)}/memories",
        _model(MemoryPage),
        params=params,
        idempotent=True,
    )


def update(namespace: str, memory_id: str, changes: MemoryChanges) -> Call:
    return Call(
        "PATCH",
        f"{_ns(namespace)}/memories/{_id(memory_id)}",
        _model(MemoryOut),
        json=_json(dict(changes)),
        idempotent=True,
    )


def delete(namespace: str, memory_id: str) -> Call:
    return Call("DELETE", f"{_ns(namespace)}/memories/{_id(memory_id)}", _nothing)


def approve(namespace: str, memory_id: str, reason: str | None) -> Call:
    return Call(
        "POST",
        f"{_ns(namespace)}/memories/{_id(memory_id)}:approve",
        _model(MemoryOut),
        json={"reason": reason} if reason else None,
    )


def reject(namespace: str, memory_id: str, reason: str | None) -> Call:
    return Call(
        "POST",
        f"{_ns(namespace)}/memories/{_id(memory_id)}:reject",
        _model(Rejected),
        json={"reason": reason} if reason else None,
    )


def feedback(namespace: str, recall_id: str, used: list[str], unused: list[str]) -> Call:
    return Call(
        "POST",
        f"{_ns(namespace)}/recalls/{recall_id}/feedback",
        _model(FeedbackOut),
        json={"used": used, "unused": unused},
        idempotent=True,  # a repeated verdict counts once
    )


def history(namespace: str, memory_id: str) -> Call:
    return Call(
        "GET",
        f"{_ns(namespace)}/memories/{_id(memory_id)}/history",
        lambda body: [HistoryEntry.model_validate(h) for h in body["history"]],
        idempotent=True,
    )


def forget(namespace: str, policy: ForgetPolicy) -> Call:
    return Call(
        "POST",
        f"{_ns(namespace)}/memories:forget",
        _model(ForgetOut),
        json=_json(dict(policy)),
        idempotent=bool(policy.get("dry_run")),
    )


def extract(
    namespace: str,
    messages: Iterable[Mapping[str, Any]],
    *,
    dry_run: bool,
    min_importance: float | None,
    source: str | None,
) -> Call:
    body: dict[str, Any] = {"messages": [_json(dict(m)) for m in messages], "dry_run": dry_run}
    if min_importance is not None:
        body["min_importance"] = min_importance
    if source is not None:
        body["source"] = source
    return Call(
        "POST",
        f"{_ns(namespace)}/memories:extract",
        _model(ExtractOut),
        json=body,
        idempotent=dry_run,
    )


def append_step(namespace: str, session_id: str, content: str, fields: StepFields) -> Call:
    # Every append carries an idempotency key (one is made up if the caller gave none), so
    # a retry after a timeout can never add the step twice.
    body = _json({"content": content, **fields})
    # Letters only: a run of 13+ digits in a hex key can pass the Luhn check, and the server
    # refuses an idempotency key that looks like a card number (32 letters: 150 bits).
    body.setdefault("idempotency_key", "sdk-" + "".join(random.choices(_LETTERS, k=32)))
    return Call(
        "POST",
        f"{_session(namespace, session_id)}/steps",
        _model(StepOut),
        json=body,
        idempotent=True,
    )


def steps(namespace: str, session_id: str, recent: int, before: int | None = None) -> Call:
    params: dict[str, Any] = {"recent": recent}
    if before is not None:
        params["before"] = before
    return Call(
        "GET",
        f"{_session(namespace, session_id)}/steps",
        lambda body: [StepOut.model_validate(s) for s in body["steps"]],
        params=params,
        idempotent=True,
    )


def pop_step(namespace: str, session_id: str) -> Call:
    # Not idempotent: a repeat after an unknown outcome would remove a second step.
    return Call("DELETE", f"{_session(namespace, session_id)}/steps:last", _model(StepOut))


def context(
    namespace: str, session_id: str, recent: int, max_chars: int, max_tokens: int | None = None
) -> Call:
    budget = {"max_chars": max_chars} if max_tokens is None else {"max_tokens": max_tokens}
    return Call(
        "GET",
        f"{_session(namespace, session_id)}/context",
        _model(ContextOut),
        params={"recent": recent, **budget},
        idempotent=True,
    )


def session(namespace: str, session_id: str) -> Call:
    return Call("GET", _session(namespace, session_id), _model(SessionOut), idempotent=True)


def end_session(namespace: str, session_id: str) -> Call:
    return Call(
        "POST",
        f"{_session(namespace, session_id)}:end",
        _model(SessionEnded),
        idempotent=True,
    )


def consolidate(namespace: str, session_id: str) -> Call:
    return Call(
        "POST",
        f"{_session(namespace, session_id)}:consolidate",
        _model(JobOut),
        idempotent=True,
    )


def delete_session(namespace: str, session_id: str) -> Call:
    return Call("DELETE", _session(namespace, session_id), _model(SessionDeleted))


def job(namespace: str, job_id: str) -> Call:
    return Call("GET", f"{_ns(namespace)}/jobs/{job_id}", _model(JobOut), idempotent=True)


def whoami() -> Call:
    return Call("GET", "/v1/whoami", _model(Whoami), idempotent=True)


# --- a namespace as a whole ---


def _as_is(body: Any) -> Any:
    return body


def policy(namespace: str) -> Call:
    return Call("GET", f"{_ns(namespace)}/policy", _as_is, idempotent=True)


def set_policy(namespace: str, document: Mapping[str, Any]) -> Call:
    return Call("PUT", f"{_ns(namespace)}/policy", _as_is, json=dict(document), idempotent=True)


def erase_namespace(namespace: str) -> Call:
    return Call("DELETE", _ns(namespace), _model(EraseReceipt))


def _json_lines(text: str | None) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (text or "").splitlines() if line.strip()]


def export(namespace: str, sessions: bool) -> Call:
    return Call(
        "GET",
        f"{_ns(namespace)}:export",
        _json_lines,
        params={"sessions": str(sessions).lower()},
        idempotent=True,
        lines=True,
    )
