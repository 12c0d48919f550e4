"""Chinese, Japanese and Korean memories re-indexed as characters and character pairs.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01

The keyword arm and the built-in embedder used to read a run of CJK text as one word, so a
Chinese memory matched only a query that repeated it exactly. They now read characters and
overlapping character pairs (see `hindsight.text.tokenize`). Memories without CJK text
index exactly as before, so only rows holding CJK characters are rewritten: their keyword
vectors, and — when the store holds built-in embeddings (`builtin-hash-v1`, whose vectors
for other text are unchanged in `builtin-hash-v2`) — their embeddings, after which the
store is recorded as `builtin-hash-v2`. Vectors of other models are left alone.

Cost: one scan of long_term_memory for CJK text, then a rewrite of the rows that hold it
(their HNSW entries included). Downgrade re-indexes the same rows the old way.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import Any

import numpy as np
import sqlalchemy as sa
from alembic import op

from hindsight.embeddings.builtin import BuiltinEmbedder
from hindsight.retrieval.keywords import document_terms
from hindsight.text.tokenize import KEYWORD_DIMENSIONS, STOP_WORDS, term_id

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CJK_ROWS = (
    "SELECT id, mem_key, mem_value FROM long_term_memory "
    r"WHERE mem_key || mem_value ~ '[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    r"\uac00-\ud7af]'"
)
# BM25 document side, as in hindsight.retrieval.keywords (fixed here: it defines the index)
K1, B, AVG_DOC_TERMS, MAX_TERMS = 1.2, 0.75, 10.0, 1000


def _v1_terms(text: str) -> Counter[int]:
    """How revision 0004's code tokenized: a CJK run was one word."""
    words = [w.casefold() for w in re.findall(r"[^\W_]+", text)]
    return Counter(term_id(w) for w in words if w not in STOP_WORDS and (len(w) > 1 or w.isdigit()))


def _v1_embedding(text: str, dims: int) -> np.ndarray:
    """builtin-hash-v1: words, word pairs and character trigrams, hashed."""
    vector = np.zeros(dims, dtype=np.float32)

    def add(feature: str, weight: float) -> None:
        h = zlib.crc32(feature.encode("utf-8"))
        vector[h % dims] += weight if h & 0x80000000 else -weight

    tokens = [w.casefold() for w in re.findall(r"[^\W_]+", text)]
    content = [t for t in tokens if t not in STOP_WORDS]
    for token in content:
        add("w:" + token, 1.0)
        padded = f"<{token}>"
        for i in range(len(padded) - 2):
            add("c:" + padded[i : i + 3], 0.25)
    for first, second in pairwise(content):
        add(f"b:{first} {second}", 0.5)
    if not content:
        for token in tokens or [text.strip().casefold() or "<empty>"]:
            add("w:" + token, 1.0)
    norm = float(np.linalg.norm(vector))
    if norm == 0.0:
        vector[0] = 1.0
        return vector
    return vector / norm


def _sparse(counts: Counter[int]) -> tuple[str, list[int]]:
    if len(counts) > MAX_TERMS:
        counts = Counter(dict(counts.most_common(MAX_TERMS)))
    norm = K1 * (1 - B + B * sum(counts.values()) / AVG_DOC_TERMS)
    weights = {t: tf * (K1 + 1) / (tf + norm) for t, tf in sorted(counts.items())}
    text = ",".join(f"{t + 1}:{w}" for t, w in weights.items())
    return "{" + text + "}/" + str(KEYWORD_DIMENSIONS), sorted(weights)


def _reindex(
    terms: Callable[[str], Counter[int]],
    embed: Callable[[str, int], np.ndarray],
    from_model: str,
    to_model: str,
) -> None:
    conn = op.get_bind()
    meta = conn.execute(
        sa.text("SELECT value FROM hindsight_meta WHERE name = 'embedding_model'")
    ).scalar()
    dims = conn.execute(
        sa.text("SELECT value FROM hindsight_meta WHERE name = 'embedding_dimensions'")
    ).scalar()
    reembed = meta == from_model and dims is not None
    rows: list[Any] = list(conn.execute(sa.text(CJK_ROWS)))
    for row in rows:
        text = f"{row.mem_key}: {row.mem_value}"
        keywords, ids = _sparse(terms(text))
        params: dict[str, Any] = {"id": row.id, "k": keywords, "t": ids}
        sets = "keywords = CAST(:k AS sparsevec), keyword_terms = :t"
        if reembed:
            vector = embed(text, int(dims))
            params["e"] = "[" + ",".join(f"{x:.6f}" for x in vector) + "]"
            sets += ", embedding = CAST(:e AS halfvec)"
        conn.execute(sa.text(f"UPDATE long_term_memory SET {sets} WHERE id = :id"), params)
    if reembed:
        conn.execute(
            sa.text("UPDATE hindsight_meta SET value = :m WHERE name = 'embedding_model'"),
            {"m": to_model},
        )


def upgrade() -> None:
    _reindex(
        document_terms,
        lambda text, dims: BuiltinEmbedder(dims).embed_one(text),
        "builtin-hash-v1",
        "builtin-hash-v2",
    )


def downgrade() -> None:
    _reindex(_v1_terms, _v1_embedding, "builtin-hash-v2", "builtin-hash-v1")
