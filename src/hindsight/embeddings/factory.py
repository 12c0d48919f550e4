"""Chooses the embedding provider from settings."""

from __future__ import annotations

from hindsight.config import Settings
from hindsight.embeddings.base import Embedder
from hindsight.embeddings.builtin import BuiltinEmbedder
from hindsight.embeddings.openai_compat import OpenAICompatibleEmbedder


async def create_embedder(settings: Settings) -> Embedder:
    """The configured provider, ready to use (an endpoint's width is known on return)."""
    provider = settings.resolved_embedding_provider
    if provider == "builtin":
        return BuiltinEmbedder(settings.schema_embedding_dimensions)
    assert settings.embedding_model is not None
    if provider == "sentence-transformers":
        from hindsight.embeddings.local import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(
            settings.embedding_model, batch_size=min(settings.embedding_batch_size, 256)
        )
    api_key = settings.embedding_api_key
    embedder = OpenAICompatibleEmbedder(
        base_url=settings.embedding_base_url,
        model=settings.embedding_model,
        api_key=api_key.get_secret_value() if api_key else None,
        dimensions=settings.embedding_dimensions,
        batch_size=settings.embedding_batch_size,
        timeout=settings.embedding_timeout_seconds,
        concurrency=settings.embedding_concurrency,
    )
    await embedder.start()
    return embedder


def embedder_name(settings: Settings) -> str:
    """The name `create_embedder(settings).name` will have, known without starting it."""
    provider = settings.resolved_embedding_provider
    if provider == "builtin":
        return BuiltinEmbedder.VERSION
    if provider == "sentence-transformers":
        return f"sentence-transformers:{settings.embedding_model}"
    return OpenAICompatibleEmbedder.name_for(settings.embedding_model or "")
