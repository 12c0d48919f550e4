"""The baselines Hindsight is measured against, on the same texts and the same embedder:
plain BM25 (`bm25s`, English stop words, no stemming), plain dense retrieval (exact cosine
over the embedder's vectors), and their reciprocal-rank fusion (k = 60, as in Cormack et
al.), each run per namespace over exactly the text Hindsight indexes for a memory.

BM25 tokenizes one of three ways: `words` (the default: English words, CJK runs as
overlapping character pairs), `pairs` (the same function, so named where the text is
Chinese) and `jieba` (Chinese words from jieba's dictionary segmenter, precise mode; the
baseline a Chinese search engine would be). With several, each is a row, and each is fused
with dense retrieval."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from functools import cache

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


_WORD = re.compile(r"[^\W_]", re.UNICODE)
_EN_STOP = frozenset(bm25s.stopwords.STOPWORDS_EN)


@cache
def _jieba() -> Callable[[str], list[str]]:
    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba.lcut  # type: ignore[no-any-return]


def jieba_tokens(texts: list[str]) -> list[list[str]]:
    """Chinese words by jieba (precise mode), case-folded; punctuation, whitespace and
    English stop words dropped. No Chinese stop list: BM25's IDF weighs 的 and 了 down."""
    cut = _jieba()
    return [
        [w for w in (t.strip().lower() for t in cut(text)) if _WORD.search(w) and w not in _EN_STOP]
        for text in texts
    ]


TOKENIZERS: dict[str, tuple[str, Callable[[list[str]], list[list[str]]]]] = {
    "words": ("words", plain_tokens),
    "pairs": ("character pairs", plain_tokens),
    "jieba": ("jieba words", jieba_tokens),
}


class Baselines:
    """One namespace's memories, searchable three ways; each search returns keys."""

    def __init__(
        self,
        keys: list[str],
        texts: list[str],
        vectors: np.ndarray,
        tokenizers: Sequence[str] = ("words",),
    ) -> None:
        self._keys = keys
        self._tokenizers = list(tokenizers)
        self._bm25: dict[str, bm25s.BM25] = {}
        for name in self._tokenizers:
            self._bm25[name] = bm25s.BM25()
            self._bm25[name].index(TOKENIZERS[name][1](texts), show_progress=False)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        self._vectors = vectors / np.where(norms == 0, 1, norms)

    @classmethod
    async def build(
        cls,
        keys: list[str],
        texts: list[str],
        embedder: Embedder,
        tokenizers: Sequence[str] = ("words",),
    ) -> Baselines:
        vectors: list[np.ndarray] = []
        for start in range(0, len(texts), 256):
            vectors += [
                np.asarray(v, dtype=np.float32)
                for v in await embedder.embed(texts[start : start + 256])
            ]
        return cls(keys, texts, np.vstack(vectors), tokenizers)

    def bm25(self, query: str, k: int, tokenizer: str | None = None) -> list[str]:
        name = tokenizer or self._tokenizers[0]
        k = min(k, len(self._keys))
        docs, scores = self._bm25[name].retrieve(
            TOKENIZERS[name][1]([query]), k=k, show_progress=False
        )
        return [self._keys[d] for d, s in zip(docs[0], scores[0], strict=True) if s > 0]

    def dense(self, query_vector: np.ndarray, k: int) -> list[str]:
        sims = self._vectors @ (query_vector / (np.linalg.norm(query_vector) or 1.0))
        top = np.argsort(-sims, kind="stable")[:k]
        return [self._keys[i] for i in top]

    def rrf(
        self, query: str, query_vector: np.ndarray, k: int, tokenizer: str | None = None
    ) -> list[str]:
        score: dict[str, float] = {}
        for ranked in (self.bm25(query, DEPTH, tokenizer), self.dense(query_vector, DEPTH)):
            for rank, key in enumerate(ranked, start=1):
                score[key] = score.get(key, 0.0) + 1.0 / (RRF_K + rank)
        return sorted(score, key=lambda key: -score[key])[:k]

    def search(self, query: str, query_vector: np.ndarray, k: int) -> dict[str, list[str]]:
        """Each ranking's keys: `BM25`, `dense` and `BM25+dense (rrf)` with one
        tokenization; with several, `BM25 (<tokenization>)` and its fusion for each."""
        out = {"dense": self.dense(query_vector, k)}
        for name in self._tokenizers:
            label = "BM25" if self._tokenizers == ["words"] else f"BM25 ({TOKENIZERS[name][0]})"
            out[label] = self.bm25(query, k, name)
            out[f"{label}+dense (rrf)"] = self.rrf(query, query_vector, k, name)
        return dict(sorted(out.items(), key=lambda item: _order(item[0])))


def _order(name: str) -> tuple[int, str]:
    """BM25 rows first, then dense, then the fusions (the order the tables had)."""
    return (1 if name == "dense" else 2 if "rrf" in name else 0, name)


Search = Callable[[str, np.ndarray, int], dict[str, list[str]]]
