"""English words reduced to their stems for the keyword arm: "adopted", "adopts" and
"adopting" all index and search as `adopt`, "parties" and "party" as `parti`.

Porter's algorithm (Snowball's implementation, `snowballstemmer`), the one search engines
have long used for English (Lucene's PorterStemFilter). Only words in plain Latin letters are
stemmed; digits, CJK text and words with accents pass through unchanged. The built-in
embedder does not stem: its character trigrams already bring word forms together.

Measured on every retrieval set (benchmarks/README.md, issue 30): on MADial-Bench's English
dialogues R@5 0.489 -> 0.532 (built-in embedder) and 0.671 -> 0.681 (MiniLM); on our
generated conversations 0.737 -> 0.770 (built-in). An earlier measurement that rejected it
(item 2 there) was taken before specificity and time ranking existed.
"""

from __future__ import annotations

import snowballstemmer

from hindsight.text.memo import memo

_PORTER = snowballstemmer.stemmer("porter")


@memo(maxsize=200_000)
def stem(token: str) -> str:
    """The Porter stem of a case-folded Latin-letter word, else the token unchanged."""
    if len(token) < 3 or not (token.isascii() and token.isalpha()):
        return token
    return str(_PORTER.stemWord(token))
