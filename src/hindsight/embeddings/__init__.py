"""Embedding providers: a small protocol, the built-in offline embedder, an
OpenAI-compatible client, and the factory that picks one from settings."""

from hindsight.embeddings.base import Embedder
from hindsight.embeddings.factory import create_embedder

__all__ = ["Embedder", "create_embedder"]
