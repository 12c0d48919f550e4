"""Word tokens for keyword matching and the built-in embedder.

Deliberately simple and deterministic: Unicode word characters, case-folded, with English
stop words removed. Keys such as `user.favorite_color` split into their words, so a key
matches a query that spells it out in prose.
"""

from __future__ import annotations

import re
import zlib
from functools import lru_cache

_WORD = re.compile(r"[^\W_]+", re.UNICODE)

STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "aren't",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "cannot",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "don",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "isn",
        "it",
        "its",
        "itself",
        "just",
        "let",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "ought",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "s",
        "t",
        "d",
        "ll",
        "m",
        "re",
        "ve",
    ]
)

# Term ids index a sparsevec; 2**28 dimensions keep hash collisions rare (about 20 colliding
# pairs in a 100k-word vocabulary) while staying far below pgvector's 10**9 limit.
KEYWORD_DIMENSIONS = 1 << 28
# Term id 0 is never produced by `term_id`; the keyword statistics table uses it for the
# document count of a namespace.
DOCUMENT_COUNT_TERM = 0


def words(text: str) -> list[str]:
    """Case-folded word tokens, stop words included (the embedder wants them for bigrams)."""
    return [w.casefold() for w in _WORD.findall(text)]


def keyword_tokens(text: str) -> list[str]:
    """Tokens that carry meaning for keyword matching: no stop words, no single letters."""
    return [w for w in words(text) if w not in STOP_WORDS and (len(w) > 1 or w.isdigit())]


@lru_cache(maxsize=200_000)
def term_id(token: str) -> int:
    """Stable id in [1, KEYWORD_DIMENSIONS) for a token, the same in every process."""
    return zlib.crc32(token.encode("utf-8")) % (KEYWORD_DIMENSIONS - 1) + 1
