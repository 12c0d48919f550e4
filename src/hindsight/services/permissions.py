"""Who may change a memory, as one table: role × action × the memory's state → a decision.

The services ask `decide` before they change anything, and the README's table is
`markdown()` of the same data (a test checks they agree), so the rules are written once.

A memory may be in several states at once (verified and permanent, say, or archived and
verified): the strictest decision of its states applies, so a flag a curator set keeps
its protection whatever else is true of the memory.

Why a writer is held back on verified and permanent memories: a curator vouched for them.
If a writer could edit, expire, archive, delete or lower them, or supersede them by
observing the key, anything a curator vouched for would last only until the next writer
disagreed, and a writer could turn its own value into a vouched one by editing in place.
A writer's different value for such a key is welcome as a claim, so it waits for review
(quarantine) instead of being refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from hindsight.errors import Conflict, Forbidden
from hindsight.services.roles import Role


class State(StrEnum):
    ACTIVE = "active"  # live (active or cold), no flag set
    VERIFIED = "verified"
    PERMANENT = "permanent"
    QUARANTINED = "quarantined"
    ARCHIVED = "archived"
    EXPIRING = "expiring"  # has an expiry (expires_at or a TTL)


class Action(StrEnum):
    # Observing a key, as another API key than the one that sent its memory. A quarantined
    # claim's key has no live memory: the same value again releases the claim when it is
    # independent evidence (another source and another API key; the key that sent it joins
    # the queue instead), another value becomes the key's live memory beside the claim.
    REINFORCE = "reinforce"  # observe the memory's value again
    SUPERSEDE = "supersede"  # observe another value for its key
    EDIT = "edit"  # PATCH key, value, memory_type, source, importance, occurred_at
    ANNOTATE = "annotate"  # PATCH tags, metadata
    LOWER_CONFIDENCE = "lower_confidence"  # PATCH confidence at or under the initial one
    EXPIRE = "expire"  # PATCH expires_at or ttl_seconds
    ARCHIVE = "archive"  # PATCH status archived or cold
    RESTORE = "restore"  # PATCH status active
    DELETE = "delete"
    FORGET = "forget"  # selected by POST /memories:forget
    VOUCH = "vouch"  # PATCH verified, permanent, or a confidence above the initial one
    REVIEW = "review"  # approve or reject


class Decision(StrEnum):
    ALLOW = "allowed"
    REVIEW = "review"  # stored as a quarantined claim that waits for a curator
    REFUSE = "refused"  # 403: the role falls short
    CONFLICT = "conflict"  # 409 for every role: not something this state can do


# stricter last: the strictest decision of a memory's states applies
_STRICTNESS = (Decision.ALLOW, Decision.REVIEW, Decision.CONFLICT, Decision.REFUSE)

A, V, X, C = Decision.ALLOW, Decision.REVIEW, Decision.REFUSE, Decision.CONFLICT
_STATES = tuple(State)


def _row(*decisions: Decision) -> dict[State, Decision]:
    assert len(decisions) == len(_STATES)
    return dict(zip(_STATES, decisions, strict=True))


#                           active verified permanent quarantined archived expiring
_WRITER: dict[Action, dict[State, Decision]] = {
    Action.REINFORCE: _row(A, A, A, A, A, A),
    Action.SUPERSEDE: _row(A, V, V, A, A, A),
    Action.EDIT: _row(A, X, X, X, A, A),
    Action.ANNOTATE: _row(A, A, A, A, A, A),
    Action.LOWER_CONFIDENCE: _row(A, X, X, X, A, A),
    Action.EXPIRE: _row(A, X, X, X, A, A),
    Action.ARCHIVE: _row(A, X, X, C, A, A),
    Action.RESTORE: _row(A, X, X, C, A, A),
    Action.DELETE: _row(A, X, X, A, A, A),
    Action.FORGET: _row(A, X, X, X, X, A),
    Action.VOUCH: _row(X, X, X, X, X, X),
    Action.REVIEW: _row(X, X, X, X, X, X),
}

# A curator (and an admin) may do everything to every state, except what no role can:
# move a quarantined claim by its status (approve or reject it), review what waits for no
# review, or have a forgetting policy select a permanent, quarantined or archived memory.
_CURATOR: dict[Action, dict[State, Decision]] = {
    **{action: _row(A, A, A, A, A, A) for action in Action},
    Action.ARCHIVE: _row(A, A, A, C, A, A),
    Action.RESTORE: _row(A, A, A, C, A, A),
    Action.FORGET: _row(A, A, X, X, X, A),
    Action.REVIEW: _row(C, C, C, A, C, C),
}

TABLE: dict[Role, dict[Action, dict[State, Decision]]] = {
    Role.READER: {action: _row(X, X, X, X, X, X) for action in Action},
    Role.WRITER: _WRITER,
    Role.CURATOR: _CURATOR,
    Role.ADMIN: _CURATOR,
}

# which role a refusal names, per action: the least role the table lets do it on some state
_ACTION_WORDS: dict[Action, str] = {
    Action.REINFORCE: "observing this claim again",
    Action.SUPERSEDE: "observing another value for this key",
    Action.EDIT: "editing key, value, type, source, importance or occurred_at",
    Action.ANNOTATE: "editing tags or metadata",
    Action.LOWER_CONFIDENCE: "lowering the confidence",
    Action.EXPIRE: "setting an expiry (expires_at, ttl_seconds)",
    Action.ARCHIVE: "archiving (status archived or cold)",
    Action.RESTORE: "restoring (status active)",
    Action.DELETE: "deleting",
    Action.FORGET: "a forgetting policy selecting it",
    Action.VOUCH: "vouching (verified, permanent, or a confidence above the initial one)",
    Action.REVIEW: "approving or rejecting",
}


def states(row: Mapping[str, Any], now: datetime | None = None) -> set[State]:
    """The states a memory (a row as the API shows it) is in."""
    out: set[State] = set()
    status = row["status"]
    if status == "quarantined":
        out.add(State.QUARANTINED)
    elif status == "archived":
        out.add(State.ARCHIVED)
    if row.get("verified"):
        out.add(State.VERIFIED)
    if row.get("permanent"):
        out.add(State.PERMANENT)
    expires = row.get("expires_at")
    if expires is not None and expires > (now or datetime.now(UTC)):
        out.add(State.EXPIRING)
    if not out or out == {State.EXPIRING}:
        out.add(State.ACTIVE)
    return out


def decide(role: Role, action: Action, memory_states: Iterable[State]) -> Decision:
    """The strictest decision of the memory's states for this role and action."""
    row = TABLE[role][action]
    found = [row[s] for s in memory_states] or [row[State.ACTIVE]]
    return max(found, key=_STRICTNESS.index)


def which(memory_states: Iterable[State]) -> str:
    return " and ".join(s.value for s in sorted(memory_states, key=_STATES.index))


def require(role: Role, action: Action, memory_states: set[State], memory: str) -> Decision:
    """The decision, raising 403 (refused) or 409 (conflict) with what is needed; ALLOW
    or REVIEW come back for the caller to act on."""
    decision = decide(role, action, memory_states)
    what = _ACTION_WORDS[action]
    if decision is Decision.REFUSE:
        needed = next(
            (r for r in Role if decide(r, action, memory_states) is not Decision.REFUSE),
            Role.ADMIN,
        )
        raise Forbidden(
            f"{what} of memory {memory} ({which(memory_states)}) needs the {needed.value} "
            f"role (or higher); this API key has the {role.value} role"
            + (
                ": a curator vouched for it, so a curator decides"
                if memory_states & {State.VERIFIED, State.PERMANENT}
                else ""
            )
        )
    if decision is Decision.CONFLICT:
        raise Conflict(
            f"{what} of memory {memory}: not possible while it is {which(memory_states)}"
        )
    return decision


def patch_actions(changes: Mapping[str, Any], initial: float) -> list[Action]:
    """The actions a PATCH's fields amount to (`changes` as the wire gives them)."""
    out: list[Action] = []
    for name, value in changes.items():
        if name in ("verified", "permanent"):
            out.append(Action.VOUCH)
        elif name == "confidence":
            out.append(Action.VOUCH if value > initial else Action.LOWER_CONFIDENCE)
        elif name in ("tags", "metadata"):
            out.append(Action.ANNOTATE)
        elif name == "expires_at":
            out.append(Action.EXPIRE)
        elif name == "status":
            out.append(Action.RESTORE if value == "active" else Action.ARCHIVE)
        else:
            out.append(Action.EDIT)
    return sorted(set(out), key=list(Action).index)


def markdown() -> str:
    """The table as the README prints it: one line per role and action."""
    head = "| role | action | " + " | ".join(s.value for s in _STATES) + " |"
    lines = [head, "| --- | --- |" + " --- |" * len(_STATES)]
    for role in Role:
        for action in Action:
            cells = " | ".join(TABLE[role][action][s].value for s in _STATES)
            lines.append(f"| {role.value} | {action.value} | {cells} |")
    return "\n".join(lines)
