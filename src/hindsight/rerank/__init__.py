"""Optional reranking of recall's top candidates: a rerank endpoint (TEI, Cohere, Jina
protocols) or a local sentence-transformers cross-encoder. Importing this package needs
neither sentence-transformers nor torch."""

from hindsight.rerank.base import Reranker
from hindsight.rerank.factory import create_reranker

__all__ = ["Reranker", "create_reranker"]
