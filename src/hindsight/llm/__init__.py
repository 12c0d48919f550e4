"""LLM providers: a small protocol, an OpenAI-compatible client, prompts, a factory."""

from hindsight.llm.base import LLM
from hindsight.llm.factory import create_llm

__all__ = ["LLM", "create_llm"]
