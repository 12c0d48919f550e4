"""Chooses the LLM from settings; without one configured there is none."""

from __future__ import annotations

from hindsight.config import Settings
from hindsight.llm.base import LLM
from hindsight.llm.openai_compat import OpenAICompatibleLLM


def create_llm(settings: Settings) -> LLM | None:
    if not settings.llm_model:
        return None
    key = settings.llm_api_key
    return OpenAICompatibleLLM(
        base_url=settings.llm_base_url,
        model=settings.llm_model,
        api_key=key.get_secret_value() if key else None,
        timeout=settings.llm_timeout_seconds,
        json_mode=settings.llm_json_mode,
    )
