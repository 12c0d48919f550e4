"""The baselines Hindsight is measured against, on the same texts and the same embedder:
plain BM25 (`bm25s`, English stop words, no stemming), plain dense retrieval (exact cosine
over the embedder's vectors), and their reciprocal-rank fusion (k = 60, as in Cormack et
al.), each run per namespace over exactly the text Hindsight indexes for a memory."""

from __future__ import annotations

import re
from collections.abc import Callable

import bm25s
import numpy as np

from hindsight.embeddings.base import Embedder

RRF_K = 60
DEPTH = 100  # candidates per arm that the fusion sees

# Ideographs and kana carry no spaces: a plain tokenizer sees a whole sentence as one
# word. The CJK sets give the baselines overlapping character pairs (as search engines
# index such text), so they are not strawmen there.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def plain_tokens(texts: list[str]) -> list[list[str]]:
    out: list[list[str]] = []
    for text in texts:
        pairs: list[str] = []
        for run in _CJK.findall(text):
            pairs += [run[i : i + 2] for i in range(max(len(run) - 1, 1))]
        rest = _CJK.sub(" ", text)
        words = bm25s.tokenize(rest, stopwords="en", return_ids=False, show_progress=False)
        out.append(list(words[0]) + pairs)
    return out


class Baselines:
    """One namespace's memories, searchable three ways; each search returns keys."""

    def __init__(self, keys: list[str], texts: list[str], vectors: np.ndarray) -> None:
        self._keys = keys
        self._bm25 = bm25s.BM25()
        self._bm25.index(plain_tokens(texts), show_progress=False)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        self._vectors = vectors / np.where(norms == 0, 1, norms)

    @classmethod
    async def build(cls, keys: list[str], texts: list[str], embedder: Embedder) -> Baselines:
        vectors: list[np.ndarray] = []
        for start in range(0, len(texts), 256):
            vectors += [
                np.asarray(v, dtype=np.float32)
                for v in await embedder.embed(texts[start : start + 256])
            ]
        return cls(keys, texts, np.vstack(vectors))

    def bm25(self, query: str, k: int) -> list[str]:
        k = min(k, len(self._keys))
        docs, scores = self._bm25.retrieve(plain_tokens([query]), k=k, show_progress=False)
        return [self._keys[d] for d, s in zip(docs[0], scores[0], strict=True) if s > 0]

    def dense(self, query_vector: np.ndarray, k: int) -> list[str]:
        sims = self._vectors @ (query_vector / (np.linalg.norm(query_vector) or 1.0))
        top = np.argsort(-sims, kind="stable")[:k]
        return [self._keys[i] for i in top]

    def rrf(self, query: str, query_vector: np.ndarray, k: int) -> list[str]:
        score: dict[str, float] = {}
        for ranked in (self.bm25(query, DEPTH), self.dense(query_vector, DEPTH)):
            for rank, key in enumerate(ranked, start=1):
                score[key] = score.get(key, 0.0) + 1.0 / (RRF_K + rank)
        return sorted(score, key=lambda key: -score[key])[:k]

    def search(self, query: str, query_vector: np.ndarray, k: int) -> dict[str, list[str]]:
        return {
            "BM25": self.bm25(query, k),
            "dense": self.dense(query_vector, k),
            "BM25+dense (rrf)": self.rrf(query, query_vector, k),
        }


Search = Callable[[str, np.ndarray, int], dict[str, list[str]]]
