"""The built-in embedder: feature hashing, no model download, no network.

Each text becomes a bag of features — words, word bigrams and character trigrams of each
word — hashed into a fixed number of dimensions with a sign bit (the "hashing trick"), then
L2-normalised. Chinese, Japanese and Korean runs arrive as characters and character pairs
(see `text.tokenize`), which are word pieces already: they get no trigrams or pairs of their
own. Texts that share words, word pairs or word pieces point the same way, so it
is a lexical embedder: it finds "favourite colours" for "favorite color", not "hue" for
"color". It is deterministic across processes and machines, which makes tests exact, and
fast enough (tens of microseconds per short text) that it never dominates a request.
"""

from __future__ import annotations

import zlib
from itertools import pairwise

import numpy as np

from hindsight.embeddings.base import Vector
from hindsight.text.memo import memo
from hindsight.text.tokenize import is_cjk, is_stop, words

WORD_WEIGHT = 1.0
BIGRAM_WEIGHT = 0.5
TRIGRAM_WEIGHT = 0.25


@memo(maxsize=500_000)
def _feature(feature: str, dimensions: int) -> tuple[int, float]:
    h = zlib.crc32(feature.encode("utf-8"))
    return h % dimensions, (1.0 if h & 0x80000000 else -1.0)


# A word's own features (itself and, outside CJK, its character trigrams) are the same in
# every text, and Zipf-like vocabularies repeat words: cached whole, per word, a text costs
# one lookup per word instead of one per feature (measured on 6-24-word texts: see
# benchmarks/results/write_cost.md). The features come out in the same order, so the sums
# (and the vectors) are bit-identical to computing each feature afresh.
@memo(maxsize=200_000)
def _word_features(token: str, dimensions: int) -> tuple[tuple[int, ...], tuple[float, ...]]:
    index, sign = _feature("w:" + token, dimensions)
    indexes, weights = [index], [sign * WORD_WEIGHT]
    if not is_cjk(token):
        padded = f"<{token}>"
        for i in range(len(padded) - 2):
            index, sign = _feature("c:" + padded[i : i + 3], dimensions)
            indexes.append(index)
            weights.append(sign * TRIGRAM_WEIGHT)
    return tuple(indexes), tuple(weights)


class BuiltinEmbedder:
    # v2: CJK text as characters and character pairs (v1 saw a sentence as one word)
    VERSION = "builtin-hash-v2"

    def __init__(self, dimensions: int = 384) -> None:
        if dimensions < 16:
            raise ValueError("the built-in embedder needs at least 16 dimensions")
        self._dimensions = dimensions

    @property
    def name(self) -> str:
        return self.VERSION

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed_one(self, text: str) -> Vector:
        dims = self._dimensions
        indexes: list[int] = []
        weights: list[float] = []

        def add(feature: str, weight: float) -> None:
            index, sign = _feature(feature, dims)
            indexes.append(index)
            weights.append(sign * weight)

        tokens = words(text)
        content = [t for t in tokens if not is_stop(t)]
        for token in content:
            token_indexes, token_weights = _word_features(token, dims)
            indexes += token_indexes
            weights += token_weights
        for first, second in pairwise(content):
            if not (is_cjk(first) or is_cjk(second)):
                add(f"b:{first} {second}", BIGRAM_WEIGHT)
        if not indexes:  # only stop words or punctuation: fall back to whatever is there
            for token in tokens or [text.strip().casefold() or "<empty>"]:
                add("w:" + token, WORD_WEIGHT)

        vector = np.bincount(indexes, weights=weights, minlength=dims).astype(np.float32)
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:  # features cancelled out exactly; any fixed unit vector will do
            vector[0] = 1.0
            return vector
        vector /= norm
        return vector

    async def embed(self, texts: list[str]) -> list[Vector]:
        return [self.embed_one(t) for t in texts]

    async def aclose(self) -> None:
        return None
