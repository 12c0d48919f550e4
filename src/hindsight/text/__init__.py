"""Text processing shared by the keyword arm, the built-in embedder and erasure."""

from __future__ import annotations


def memory_text(key: str, value: str) -> str:
    """What is embedded and keyword-indexed for a memory: its key words and its value."""
    return f"{key}: {value}"
