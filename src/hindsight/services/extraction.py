"""Extraction: a conversation in, the memories worth keeping out (and observed)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from hindsight.config import Settings
from hindsight.errors import NotConfigured
from hindsight.llm import LLM
from hindsight.llm.prompts import trusted
from hindsight.services.distill import Distilled, Distiller
from hindsight.services.observe import Observer
from hindsight.services.observing import Observation, Outcome
from hindsight.text.injection import KINDS, describe, markers


@dataclass(frozen=True)
class Extraction:
    model: str
    distilled: Distilled
    outcomes: list[Outcome] | None  # None on a dry run


class ExtractionService:
    def __init__(
        self,
        settings: Settings,
        observer: Observer,
        llm: LLM | None,
        distiller: Distiller | None,
    ) -> None:
        self._settings = settings
        self._observer = observer
        self._llm = llm
        self._distiller = distiller

    async def extract(
        self,
        namespace: str,
        messages: list[dict[str, Any]],
        *,
        dry_run: bool,
        min_importance: float | None,
        source: str | None,
        actor: str,
    ) -> Extraction:
        if self._llm is None or self._distiller is None:
            raise NotConfigured(
                "extraction needs an LLM: set HINDSIGHT_LLM_MODEL (and HINDSIGHT_LLM_BASE_URL "
                "for a server other than OpenAI, HINDSIGHT_LLM_API_KEY if it needs one). "
                "Everything else works without one."
            )
        threshold = (
            self._settings.extraction_min_importance if min_importance is None else min_importance
        )
        # when each message was said, for the model to date what it mentions
        transcript = [
            {**m, "at": m["occurred_at"].isoformat()} if m.get("occurred_at") else m
            for m in messages
        ]
        distilled = await self._distiller.distill(
            namespace, transcript, min_importance=threshold, source=source or "extraction"
        )
        if dry_run:
            return Extraction(self._llm.name, distilled, None)
        outcomes = await self._observer.observe(
            namespace, suspect(messages, [k.observation for k in distilled.kept]), actor=actor
        )
        return Extraction(self._llm.name, distilled, outcomes)


def suspect(messages: list[dict[str, Any]], observations: list[Observation]) -> list[Observation]:
    """Memories drawn from an untrusted message (their source is its role) that carries
    prompt-injection markers are marked suspect, so they wait for review: the claim itself
    may read innocently ("user.bank = ...") while the text it came from was an attack."""
    tainted: dict[str, list[str]] = {}
    for m in messages:
        role = str(m.get("role", "")).lower()
        if not trusted(role):
            found = markers(str(m.get("content", "")))
            if found:
                seen = {*tainted.get(role, []), *found}
                tainted[role] = [k for k in KINDS if k in seen]
    return [
        dataclasses.replace(
            o, suspect=f"drawn from a {o.source} message carrying {describe(tainted[o.source])}"
        )
        if o.source in tainted
        else o
        for o in observations
    ]
