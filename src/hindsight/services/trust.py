"""Source trust: how far a claim's confidence may start, and when a claim waits for review.

Pure: the policy, the claim and the live memory of its key in, a verdict out. The rules:

- A claim's initial confidence is at most its source's trust. A writer's requested
  confidence above it is lowered to it (and the result says so) rather than refused: the
  claim itself is welcome, only how sure the server is of it is the server's call. A
  curator's explicit confidence is a curator's vouching and stands.
- A claim is quarantined when (c) it carries prompt-injection markers (`text.injection`),
  or a caller marks it suspect (extraction: drawn from a tool step that carried them); (a)
  its source's trust is under `quarantine_below`; or (b) it would supersede a verified
  memory from a source trusted more, or, from a writer, any verified or permanent memory.
  A claim a curator verifies skips (a) and (b), never (c).
- A writer's source label is capped at the trust of `agent` (`writer_trust`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hindsight.text.injection import describe, markers
from hindsight.wire.policy import WRITER_SOURCE_CAP, TrustPolicy

# the source whose trust caps a writer's self-declared one (`writer_trust`)
# How far a writer's reinforcement lifts a confidence. The same key repeating a claim is not
# independent evidence, and the server cannot tell one agent's repetition from several
# agents behind one key, so no writer's repetition reaches certainty: 1.0 is a curator's
# (an explicit confidence, or vouching), and a writer's reinforcement never lowers it.
WRITER_CONFIDENCE_MAX = 0.9


@dataclass(frozen=True)
class Verdict:
    trust: float
    confidence: float
    capped: bool  # the requested (or default) confidence was lowered to the trust
    reason: str | None  # why the claim is quarantined; None: it is not


def _name(source: str | None) -> str:
    return "no source" if source is None else f"source {source!r}"


def judge(
    policy: TrustPolicy,
    *,
    key: str,
    value: str,
    source: str | None,
    confidence: float,
    explicit: bool,
    curator: bool,
    verified: bool,
    live: dict[str, Any] | None,
    suspect: str | None = None,
) -> Verdict:
    """The verdict on one claim; `explicit`: the client asked for `confidence`."""
    trust = policy.of(source) if curator else writer_trust(policy, source)
    capped = confidence > trust and not (curator and explicit)
    start = trust if capped else confidence
    threshold = policy.quarantine_below
    assert threshold is not None
    found = markers(key, value)
    reason: str | None = None
    if found:
        reason = describe(found)
    elif suspect is not None:
        reason = suspect
    elif verified:
        reason = None
    elif trust < threshold:
        reason = f"{_name(source)} has trust {trust:g}, under quarantine_below {threshold:g}"
    elif (
        not curator
        and live is not None
        and (live["verified"] or live.get("permanent"))
        and live["value"] != value
    ):
        # a curator vouched for the live value: a writer's other value is a claim for a
        # curator to weigh, whatever source it names (`permissions`: supersede → review)
        flags = " and ".join(f for f in ("verified", "permanent") if live.get(f))
        reason = (
            f"would supersede {flags} memory {live['id']}: a writer's new value for it "
            "waits for a curator"
        )
    elif live is not None and live["verified"] and live["value"] != value:
        held = policy.of(live["source"])
        if trust < held:
            reason = (
                f"would supersede verified memory {live['id']} ({_name(live['source'])}, "
                f"trust {held:g}) from {_name(source)} with trust {trust:g}"
            )
    return Verdict(trust=trust, confidence=start, capped=capped, reason=reason)


def writer_trust(policy: TrustPolicy, source: str | None) -> float:
    """The trust of a claim a writer sends: its source's, capped at an agent's. The label
    is the client's word, so a writer naming `user` is trusted no more than the agents
    that hold writer keys; only a curator's source is taken at its word."""
    return min(policy.of(source), policy.of(WRITER_SOURCE_CAP))


def releases(
    policy: TrustPolicy,
    source: str | None,
    held_source: str | None,
    *,
    actor: str,
    held_by: Sequence[str],
    curator: bool,
) -> bool:
    """Whether a claim from `source` (itself not quarantined) independently confirms the
    same claim held from `held_source`: another source, trusted at or above the threshold,
    sent by a key that has not sent this claim before (a key re-posting its own claim with
    another label is not independent evidence)."""
    assert policy.quarantine_below is not None
    trust = policy.of(source) if curator else writer_trust(policy, source)
    return source != held_source and actor not in held_by and trust >= policy.quarantine_below
