"""Loading a sentence-transformers model (pip extra `hindsight[local]`) for the local
embedder and the local reranker: a directory on disk, or a Hugging Face name already in the
local cache (nothing is downloaded at run time when HF_HUB_OFFLINE=1)."""

from __future__ import annotations

from typing import Any

from hindsight.errors import ConfigurationError


def load(kind: str, model: str, *, setting: str, what: str) -> Any:
    """`kind` (SentenceTransformer, CrossEncoder) loaded from `model` on the CPU. A missing
    extra or a model that cannot be loaded is a configuration error naming `setting`."""
    try:
        import sentence_transformers
    except ImportError:
        raise ConfigurationError(
            f"{setting} needs the optional dependency: pip install 'hindsight[local]'"
        ) from None
    try:
        return getattr(sentence_transformers, kind)(model, device="cpu")
    except Exception as exc:  # the library raises OSError, ValueError, HF errors ...
        raise ConfigurationError(
            f"cannot load {what} {model!r}: {exc}; give a local directory or a model "
            "already in the Hugging Face cache"
        ) from exc
