"""Contradictions under different keys: "the user uses Python" (`user.language`) and "the
user mostly uses Go now" (`user.main_language`) cannot both stay true.

A pair is a candidate when the keys name the same attribute of the same subject
(`text.subjects`), the two are at least the policy's `contradiction_similarity` alike, and
they make different claims: by the rules, not the same words (the same words are a
near-duplicate, folded instead); with an LLM configured, when the model says they cannot
both be true. Resolution is by trust, as supersession of a key is: the newer claim
supersedes the older when its source is trusted at least as much and the writer may
supersede it; otherwise the pair goes to the review queue. Used at write time
(`observing`) and by the lifecycle pass's reflection (`reflection`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from hindsight.db.pool import Connection
from hindsight.errors import ProviderError, Unavailable
from hindsight.llm import LLM
from hindsight.llm.prompts import CONTRADICTION_SYSTEM, contradiction_user
from hindsight.services.trust import writer_trust
from hindsight.stores import contradictions as contradiction_store
from hindsight.text.subjects import same_subject
from hindsight.text.twins import same_words
from hindsight.wire.policy import TrustPolicy

log = logging.getLogger(__name__)

# (older memory, newer claim; each with key and value) -> why they contradict, or None
Judge = Callable[[dict[str, Any], dict[str, Any]], Awaitable[str | None]]


async def by_rules(older: dict[str, Any], newer: dict[str, Any]) -> str | None:
    if same_words(older["value"], newer["value"]):
        return None  # the same claim in the same words: a near-duplicate, not a contradiction
    return "the same attribute of the same subject, with another value"


class _Answer(BaseModel):
    contradicts: bool
    reason: str = ""


def by_llm(llm: LLM) -> Judge:
    """The model's judgement; when the model cannot answer, nothing is flagged (a write
    never fails or quarantines because the LLM is down)."""

    async def judge(older: dict[str, Any], newer: dict[str, Any]) -> str | None:
        if same_words(older["value"], newer["value"]):
            return None
        try:
            answer = await llm.complete_json(
                CONTRADICTION_SYSTEM, contradiction_user(older, newer), _Answer
            )
        except (ProviderError, Unavailable) as exc:
            log.warning("contradiction check skipped: %s", exc)
            return None
        if not answer.contradicts:
            return None
        return f"{llm.name}: {answer.reason.strip() or 'they cannot both be true'}"

    return judge


def judge_for(llm: LLM | None) -> Judge:
    return by_llm(llm) if llm is not None else by_rules


async def contradiction(
    judge: Judge, newer: dict[str, Any], candidates: list[dict[str, Any]]
) -> tuple[dict[str, Any], str] | None:
    """The first candidate (closest first) that `newer` contradicts, and why."""
    for older in candidates:
        if not same_subject(newer["key"], older["key"]):
            continue
        why = await judge(older, newer)
        if why is not None:
            return older, f"{why}; similarity {float(older['similarity']):.3f}"
    return None


def stored_trust(policy: TrustPolicy, memory: dict[str, Any]) -> float:
    """The trust of a stored memory's source: a writer's label capped as it was written."""
    if memory.get("source_capped"):
        return writer_trust(policy, memory["source"])
    return policy.of(memory["source"])


Resolution = Literal["supersede", "review", "hold"]


@dataclass(frozen=True)
class Resolved:
    how: Resolution  # supersede: older archived; review: both quarantined; hold: newer only
    reason: str
    why: str = ""  # the judge's reason the two cannot both be true


# What a contradiction did, as each memory's history says it (`link`)
_NEWER = {
    "supersede": "superseded it (archived)",
    "review": "both sent to review",
    "hold": "this one sent to review; the other, vouched for by a curator, stays",
}
_OLDER = {
    "supersede": "superseded by it (archived)",
    "review": "both sent to review",
    "hold": "this one stays (vouched for by a curator); the other was sent to review",
}

CHANGE = "contradiction"


async def link(
    conn: Connection,
    namespace: str,
    *,
    older: dict[str, Any],
    newer: dict[str, Any],
    resolved: Resolved,
    actor: str,
    prefix: str = "",
) -> None:
    """A `contradiction` entry in each memory's history naming the other (id and key) and
    what was done, written before the moves that carry it out (`archived`, `quarantined`
    entries): one label to find every contradiction by, in either memory."""
    why = f": {resolved.why}" if resolved.why else ""
    await contradiction_store.note(
        conn,
        namespace,
        newer["id"],
        change=CHANGE,
        actor=actor,
        reason=f"{prefix}contradicts memory {older['id']} (key {older['key']!r}): "
        f"{_NEWER[resolved.how]}{why}",
    )
    await contradiction_store.note(
        conn,
        namespace,
        older["id"],
        change=CHANGE,
        actor=actor,
        reason=f"{prefix}contradicted by memory {newer['id']} (key {newer['key']!r}): "
        f"{_OLDER[resolved.how]}{why}",
    )


def resolve(
    policy: TrustPolicy,
    *,
    trust: float,
    source: str | None,
    older: dict[str, Any],
    why: str,
    curator: bool,
) -> Resolved:
    held = stored_trust(policy, older)
    name = f"memory {older['id']} (key {older['key']!r}: {older['value']!r})"
    if older.get("permanent") or (older.get("verified") and not curator):
        # a curator vouched for it: it stays, and the claim against it waits, as a
        # writer's new value for a verified key does (`trust.judge`)
        flags = " and ".join(f for f in ("verified", "permanent") if older.get(f))
        return Resolved("hold", f"contradicts {flags} {name}: {why}; waits for a curator", why)
    if trust >= held:
        return Resolved(
            "supersede",
            f"contradicts {name}: {why}; superseded it (trust {trust:g} >= {held:g})",
            why,
        )
    return Resolved(
        "review",
        f"contradicts {name}: {why}; its source is trusted more ({held:g} > {trust:g} of "
        f"{source or 'no source'}): both wait for a curator",
        why,
    )
