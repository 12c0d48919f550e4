"""Chooses the reranker from settings."""

from __future__ import annotations

from hindsight.config import Settings
from hindsight.errors import ConfigurationError
from hindsight.rerank.base import Reranker
from hindsight.rerank.endpoint import EndpointReranker


def create_reranker(settings: Settings) -> Reranker | None:
    """The configured reranker, or None (HINDSIGHT_RERANK_PROVIDER=none, the default)."""
    provider = settings.rerank_provider
    if provider == "none":
        return None
    if provider == "local":
        if not settings.rerank_model:
            raise ConfigurationError(
                "HINDSIGHT_RERANK_PROVIDER=local needs HINDSIGHT_RERANK_MODEL (a cross-encoder "
                "directory, or a model already in the Hugging Face cache)"
            )
        from hindsight.rerank.local import CrossEncoderReranker

        return CrossEncoderReranker(settings.rerank_model, timeout=settings.rerank_timeout_seconds)
    # Settings checks this too; a copy made with model_copy(update=...) is not re-checked
    if not settings.rerank_url:
        raise ConfigurationError(
            f"HINDSIGHT_RERANK_PROVIDER={provider} needs HINDSIGHT_RERANK_URL (the rerank "
            "endpoint's base URL)"
        )
    key = settings.rerank_api_key
    return EndpointReranker(
        protocol=provider,
        url=settings.rerank_url,
        model=settings.rerank_model,
        api_key=key.get_secret_value() if key else None,
        timeout=settings.rerank_timeout_seconds,
    )
