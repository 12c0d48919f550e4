"""Whether two memories say the same thing in the same words: the second test a
near-duplicate must pass before it is folded into its twin (the first is the embedder's
similarity).

Similarity alone is the embedder's judgement, and an embedder can be blind to what tells two
texts apart: an English model reading Chinese sees mostly punctuation and digits, and put
"跑步对我来说太难了" beside "我懂！这周太疯狂了" at 0.96 (measured: 232 of the 5,845 turns of
the Chinese conversation set folded, evidence among them). Folding keeps the twin's
value and drops the new one, so a wrong fold loses what the user said. Requiring most of
the words to be shared keeps a fold to what it is for — the same claim under another key.
"""

from __future__ import annotations

from hindsight.text.tokenize import keyword_tokens

# share of distinct words (characters and character pairs in CJK text) the two values
# must have in common: all but about one in twenty. Looser lets distinct turns through —
# the same line from another speaker shares 0.83–0.86 of its words ("[18 Jan] Kazuya: me
# too" / "[18 Jan] Daiki: me too"), the same line on another day 0.88–0.91.
MIN_WORD_OVERLAP = 0.95


def word_overlap(a: str, b: str) -> float:
    """Jaccard overlap of the two texts' keyword tokens; texts without any compare whole."""
    x, y = set(keyword_tokens(a)), set(keyword_tokens(b))
    if not x and not y:
        return 1.0 if a.strip().casefold() == b.strip().casefold() else 0.0
    return len(x & y) / len(x | y)


def same_words(a: str, b: str) -> bool:
    return word_overlap(a, b) >= MIN_WORD_OVERLAP
