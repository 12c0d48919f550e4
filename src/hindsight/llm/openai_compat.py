"""Chat completions from any OpenAI-compatible endpoint, answered as validated JSON.

Retries: the `openai` client retries connection errors, timeouts, 408, 409, 429 and 5xx with
backoff (`max_retries`); nothing else is retried at the HTTP level. An answer that is not
JSON for the schema gets one more try, with the validation error shown to the model, since
models usually fix their own formatting when told what was wrong.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from hindsight import admission, openai_endpoint
from hindsight.errors import ProviderError
from hindsight.llm.base import M
from hindsight.observability import metrics

log = logging.getLogger(__name__)

JsonMode = Literal["json_schema", "json_object", "off"]


def _schema_format(schema: type[BaseModel]) -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema()},
    }


class OpenAICompatibleLLM:
    def __init__(
        self,
        *,
        base_url: str | None,
        model: str,
        api_key: str | None,
        timeout: float = 60.0,
        max_retries: int = 3,
        json_mode: JsonMode = "json_object",
        temperature: float = 0.0,
    ) -> None:
        self._client = openai_endpoint.client(
            base_url, api_key, timeout=timeout, max_retries=max_retries
        )
        self._model = model
        self._json_mode = json_mode
        self._temperature = temperature
        self._where = base_url or "api.openai.com"

    @property
    def name(self) -> str:
        return f"openai:{self._model}"

    async def _chat(self, messages: list[dict[str, str]], schema: type[BaseModel]) -> str:
        extra: dict[str, Any] = {}
        if self._json_mode == "json_object":
            extra["response_format"] = {"type": "json_object"}
        elif self._json_mode == "json_schema":
            extra["response_format"] = _schema_format(schema)
        try:
            async with admission.away():
                with metrics.timed(metrics.PROVIDER_SECONDS, "llm", self._model):
                    response = await self._client.chat.completions.create(
                        model=self._model,
                        messages=messages,  # type: ignore[arg-type]
                        temperature=self._temperature,
                        **extra,
                    )
        except openai_endpoint.ERRORS as exc:
            metrics.PROVIDER_ERRORS.labels("llm", self._model).inc()
            raise openai_endpoint.translate(exc, what="LLM", where=self._where) from exc
        metrics.count_tokens("llm", self._model, response.usage)
        if not response.choices or response.choices[0].message.content is None:
            raise ProviderError(f"LLM endpoint {self._where} returned no message")
        return response.choices[0].message.content

    async def complete_json(self, system: str, user: str, schema: type[M]) -> M:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        content = await self._chat(messages, schema)
        try:
            return schema.model_validate_json(_strip_fences(content))
        except ValidationError as first:
            log.info("LLM answer did not match %s; asking once more", schema.__name__)
            messages += [
                {"role": "assistant", "content": content},
                {
                    "role": "user",
                    "content": (
                        "That answer is not valid for the required JSON schema: "
                        f"{_brief(first)}. Reply again with only the corrected JSON object."
                    ),
                },
            ]
            content = await self._chat(messages, schema)
            try:
                return schema.model_validate_json(_strip_fences(content))
            except ValidationError as second:
                raise ProviderError(
                    f"LLM {self._model} did not return valid JSON for {schema.__name__} "
                    f"after a second try: {_brief(second)}"
                ) from second

    async def aclose(self) -> None:
        await self._client.close()


def _strip_fences(content: str) -> str:
    """Models asked for JSON sometimes wrap it in a ```json fence anyway."""
    text = content.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    return text.strip()


def _brief(error: ValidationError) -> str:
    parts = []
    for e in error.errors()[:3]:
        where = ".".join(str(p) for p in e["loc"]) or "answer"
        parts.append(f"{where}: {e['msg']}")
    return "; ".join(parts)
