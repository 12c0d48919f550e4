"""Secrets and personal data never reach storage or a provider.

One redactor (`hindsight.text.secrets`) is applied to every stored text field: memory keys,
values, sources, tags and metadata (keys and string values, nested), step contents, summaries
and metadata, recall queries and tag filters, restored exports, and every text sent to an
embedding, rerank or LLM endpoint. An idempotency key is refused rather than redacted
(two different keys must not become one), in every mode but `off`.

The mode is per namespace (the policy's `redaction` section, defaulting to
HINDSIGHT_REDACTION): `redact` replaces each finding with `[REDACTED:kind]`, `reject`
refuses the write with 422 naming the field and the kind (nothing is stored), `off` leaves
text alone. Text bound for a provider is redacted again by the server's own setting, as a
last line that a namespace cannot lower.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from hindsight.config import Settings
from hindsight.embeddings.base import Embedder, Vector
from hindsight.errors import InvalidInput
from hindsight.llm.base import LLM
from hindsight.rerank.base import Reranker
from hindsight.services.observing import Observation
from hindsight.services.policy import PolicyService
from hindsight.text.injection import describe, markers
from hindsight.text.secrets import Redactor, redactor
from hindsight.wire.policy import RedactionPolicy

M = TypeVar("M", bound=BaseModel)


def redactor_for(settings: Settings) -> Redactor:
    return redactor(email=settings.redact_email, phone=settings.redact_phone)


async def scrubber(policies: PolicyService, namespace: str) -> Scrubber:
    """A scrubber with the namespace's redaction policy (cached, see PolicyService)."""
    policy = (await policies.get(namespace)).redaction
    assert policy is not None
    return Scrubber(policy)


class Scrubber:
    """Cleans the text fields of one write, adding up what it redacted."""

    def __init__(self, policy: RedactionPolicy) -> None:
        self.mode = policy.mode or "redact"
        self._redactor = redactor(email=bool(policy.email), phone=bool(policy.phone))
        self.counts: Counter[str] = Counter()

    def __call__(self, field: str, text: str) -> str:
        if self.mode == "off" or not text:
            return text
        if self.mode == "reject":
            findings = self._redactor.find(text)
            if findings:
                kinds = sorted({f.kind for f in findings})
                raise InvalidInput(
                    f"{field}: holds what looks like {' and '.join(kinds)}; remove it and "
                    "send again (this namespace refuses secrets rather than storing them; "
                    "nothing was stored)",
                    details={"field": field, "kinds": kinds},
                )
            return text
        cleaned, counts = self._redactor.redact(text)
        self.counts.update(counts)
        return cleaned

    def optional(self, field: str, text: str | None) -> str | None:
        return None if text is None else self(field, text)

    def strings(self, field: str, texts: Sequence[str]) -> list[str]:
        return [self(f"{field}[{i}]", t) for i, t in enumerate(texts)]

    def json(self, field: str, value: Any) -> Any:
        """Metadata: every string in it, keys included, at any depth. Numbers and flags
        cannot hold a secret the redactor would recognise, so they pass untouched."""
        if self.mode == "off":
            return value
        if isinstance(value, str):
            return self(field, value)
        if isinstance(value, dict):
            cleaned: dict[str, Any] = {}
            for k, v in value.items():
                # the error names the field: a key that is a secret must not name itself
                key = self(f"{field} (a key)", k)
                cleaned[key] = self.json(f"{field}.{key}", v)
            return cleaned
        if isinstance(value, list):
            return [self.json(f"{field}[{i}]", v) for i, v in enumerate(value)]
        return value

    def refuse(self, field: str, text: str | None) -> str | None:
        """For a field whose identity matters (an idempotency key): a secret in it is refused
        in redact mode too, since two keys redacted alike would replay each other's step."""
        if self.mode == "off" or not text:
            return text
        findings = self._redactor.find(text)
        if findings:
            kinds = sorted({f.kind for f in findings})
            raise InvalidInput(
                f"{field}: holds what looks like {' and '.join(kinds)}; send a key without it "
                "(nothing was stored)",
                details={"field": field, "kinds": kinds},
            )
        return text

    def observations(
        self, items: Sequence[Observation], *, single: bool = False
    ) -> tuple[list[Observation], list[dict[str, int]]]:
        """Observations with every text field cleaned (key, value, source, tags, metadata),
        and what was redacted from each (or 422 in reject mode, naming the item's field)."""
        cleaned: list[Observation] = []
        counts: list[dict[str, int]] = []
        for i, o in enumerate(items):
            before = Counter(self.counts)
            at = "" if single else f"memories[{i}]."
            # the trust check reads key and value; an instruction planted in a tag or in
            # metadata reaches an agent's prompt as well (MCP hands them over), so it makes
            # the claim a suspect and it waits for review like one from a marked message
            found = markers(o.source or "", *o.tags, *_strings(o.metadata))
            suspect = o.suspect
            if found and suspect is None:
                suspect = describe(found) + " in its source, tags or metadata"
            cleaned.append(
                dataclasses.replace(
                    o,
                    suspect=suspect,
                    key=self(f"{at}key", o.key),
                    value=self(f"{at}value", o.value),
                    source=self.optional(f"{at}source", o.source),
                    tags=self.strings(f"{at}tags", o.tags),
                    metadata=self.json(f"{at}metadata", o.metadata),
                )
            )
            counts.append(dict(self.counts - before))
        return cleaned, counts

    def quietly(self, text: str) -> str:
        """For what the service writes itself (summaries a job made): redacted unless the
        mode is off, never refused — there is no caller to tell."""
        if self.mode == "off":
            return text
        cleaned, counts = self._redactor.redact(text)
        self.counts.update(counts)
        return cleaned

    def claims(
        self, claims: Sequence[tuple[str, str]]
    ) -> tuple[list[tuple[str, str]], list[dict[str, int]]]:
        """(key, value) pairs of a batch cleaned, and what was redacted from each (or 422
        in reject mode, naming the item)."""
        cleaned: list[tuple[str, str]] = []
        counts: list[dict[str, int]] = []
        for i, (key, value) in enumerate(claims):
            before = Counter(self.counts)
            cleaned.append((self(f"memories[{i}].key", key), self(f"memories[{i}].value", value)))
            counts.append(dict(self.counts - before))
        return cleaned, counts


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


class RedactingEmbedder:
    """Redacts every text before it goes to a remote embedding endpoint (and its cache)."""

    def __init__(self, inner: Embedder, redact: Redactor) -> None:
        self._inner = inner
        self._redact = redact

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def dimensions(self) -> int:
        return self._inner.dimensions

    async def embed(self, texts: list[str]) -> list[Vector]:
        return await self._inner.embed([self._redact.redact(t)[0] for t in texts])

    async def aclose(self) -> None:
        await self._inner.aclose()


class RedactingLLM:
    """Redacts the prompt before it goes to the LLM endpoint."""

    def __init__(self, inner: LLM, redact: Redactor) -> None:
        self._inner = inner
        self._redact = redact

    @property
    def name(self) -> str:
        return self._inner.name

    async def complete_json(self, system: str, user: str, schema: type[M]) -> M:
        return await self._inner.complete_json(system, self._redact.redact(user)[0], schema)

    async def aclose(self) -> None:
        await self._inner.aclose()


class RedactingReranker:
    """Redacts the query and every text before they go to a remote rerank endpoint."""

    def __init__(self, inner: Reranker, redact: Redactor) -> None:
        self._inner = inner
        self._redact = redact

    @property
    def name(self) -> str:
        return self._inner.name

    async def rerank(self, query: str, texts: list[str]) -> list[float]:
        return await self._inner.rerank(
            self._redact.redact(query)[0], [self._redact.redact(t)[0] for t in texts]
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


def guard_embedder(settings: Settings, embedder: Embedder) -> Embedder:
    return (
        embedder
        if settings.redaction == "off"
        else RedactingEmbedder(embedder, redactor_for(settings))
    )


def guard_reranker(settings: Settings, reranker: Reranker | None) -> Reranker | None:
    if reranker is None or settings.redaction == "off":
        return reranker
    return RedactingReranker(reranker, redactor_for(settings))


def guard_llm(settings: Settings, llm: LLM | None) -> LLM | None:
    if llm is None or settings.redaction == "off":
        return llm
    return RedactingLLM(llm, redactor_for(settings))
