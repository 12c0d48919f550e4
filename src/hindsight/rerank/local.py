"""Reranking by a local sentence-transformers cross-encoder (pip extra `hindsight[local]`).

HINDSIGHT_RERANK_MODEL names the model: a directory on disk, or a Hugging Face name already
in the local cache (nothing is downloaded at run time when HF_HUB_OFFLINE=1). Scoring runs
in a worker thread, so requests keep being served while it runs.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from hindsight import local_models
from hindsight.errors import ConfigurationError, ProviderError, Unavailable
from hindsight.observability import metrics


class CrossEncoderReranker:
    def __init__(self, model: str, *, timeout: float = 5.0, batch_size: int = 32) -> None:
        self._model: Any = local_models.load(
            "CrossEncoder", model, setting="HINDSIGHT_RERANK_PROVIDER=local", what="cross-encoder"
        )
        import torch  # installed with sentence-transformers

        labels = getattr(self._model, "num_labels", 1)
        if labels != 1:
            raise ConfigurationError(
                f"cross-encoder {model!r} has {labels} output labels; a reranker has one "
                "(a relevance score)"
            )
        # models differ in the activation they declare (some none: raw logits); a sigmoid
        # always puts the score on 0..1, which recall's combination expects
        self._activation = torch.nn.Sigmoid()
        # sentence-transformers 4 renamed predict's `activation_fct` to `activation_fn`
        params = inspect.signature(self._model.predict).parameters
        self._activation_arg = "activation_fn" if "activation_fn" in params else "activation_fct"
        self._name = model
        self._timeout = timeout
        self._batch_size = batch_size
        self._lock = asyncio.Lock()

    @property
    def name(self) -> str:
        return f"local:{self._name}"

    def _predict(self, query: str, texts: list[str]) -> list[float]:
        scores = self._model.predict(
            [(query, t) for t in texts],
            batch_size=self._batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
            **{self._activation_arg: self._activation},
        )
        return [float(s) for s in scores]

    async def _scored(self, query: str, texts: list[str], deadline: float) -> list[float]:
        # one prediction at a time: the model is already parallel inside, and not re-entrant
        async with self._lock:
            if asyncio.get_running_loop().time() >= deadline:
                # its recall went on without it: do not spend the model on nobody
                raise Unavailable(f"cross-encoder {self._name} was busy past the deadline")
            try:
                with metrics.timed(metrics.PROVIDER_SECONDS, "rerank", self._name):
                    return await asyncio.to_thread(self._predict, query, texts)
            except Exception as exc:  # a model failing on an input should not fail recall
                metrics.PROVIDER_ERRORS.labels("rerank", self._name).inc()
                raise ProviderError(
                    f"cross-encoder {self._name} failed: {type(exc).__name__}"
                ) from exc

    async def rerank(self, query: str, texts: list[str]) -> list[float]:
        if not texts:
            return []
        # A prediction cannot be stopped once its thread runs: past the deadline recall goes
        # on without it, and the prediction keeps the lock until it ends, so a backlog makes
        # later recalls skip reranking rather than queue behind it.
        deadline = asyncio.get_running_loop().time() + self._timeout
        task = asyncio.ensure_future(self._scored(query, texts, deadline))
        task.add_done_callback(_retrieved)
        try:
            return await asyncio.wait_for(asyncio.shield(task), self._timeout)
        except TimeoutError:
            metrics.PROVIDER_ERRORS.labels("rerank", self._name).inc()
            raise Unavailable(
                f"cross-encoder {self._name} did not answer within {self._timeout:g} s"
            ) from None

    async def aclose(self) -> None:
        return None


def _retrieved(task: asyncio.Future[list[float]]) -> None:
    """Collects the outcome of a prediction nobody waited for (it outlasted its deadline)."""
    if not task.cancelled():
        task.exception()
