"""Word tokens for keyword matching and the built-in embedder.

Deliberately simple and deterministic: Unicode word characters, case-folded, with English
stop words removed. Keys such as `user.favorite_color` split into their words, so a key
matches a query that spells it out in prose.

Chinese, Japanese and Korean text has no spaces between words, so a run of ideographs,
kana or Hangul becomes its single characters and its overlapping character pairs, as
search engines index it (Lucene's CJK bigrams): "用户住在上海" holds 用户, 住在 and 上海, and a
question "用户住在哪个城市" shares 用户, 住在 and 住 with it. Pairs find words without a
dictionary; single characters let a one-character word (猫, 住) match inside a longer run.
"""

from __future__ import annotations

import re
import zlib

from hindsight.text.memo import memo

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Hiragana, katakana, CJK ideographs (with extension A and compatibility forms), Hangul.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")
_HIRAGANA = re.compile(r"[\u3040-\u309f]")

# Single characters that are grammar, not topic: Chinese particles and pronouns, and every
# lone hiragana (Japanese particles and endings). Pairs that hold them are kept.
CJK_STOP_CHARACTERS = frozenset(
    "的了是在吗呢吧啊么个这那和与也都就之而着把被让给从对于为以及哪什谁我你他她它们ー"
)

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


def is_cjk(token: str) -> bool:
    return bool(_CJK.match(token))


def _cjk_pieces(run: str) -> list[str]:
    """A run of CJK characters as its characters and overlapping pairs, in text order."""
    out = [run[0]]
    for i in range(1, len(run)):
        out += [run[i - 1 : i + 1], run[i]]
    return out


def words(text: str) -> list[str]:
    """Case-folded word tokens, stop words included (the embedder wants them for bigrams);
    CJK runs as characters and character pairs."""
    out: list[str] = []
    for word in _WORD.findall(text):
        if not _CJK.search(word):
            out.append(word.casefold())
            continue
        last = 0
        for run in _CJK.finditer(word):
            if run.start() > last:
                out.append(word[last : run.start()].casefold())
            out += _cjk_pieces(run.group())
            last = run.end()
        if last < len(word):
            out.append(word[last:].casefold())
    return out


def is_stop(token: str) -> bool:
    """An English stop word, or a lone CJK character that is grammar."""
    if token in STOP_WORDS:
        return True
    return len(token) == 1 and (token in CJK_STOP_CHARACTERS or bool(_HIRAGANA.match(token)))


def keyword_tokens(text: str) -> list[str]:
    """Tokens that carry meaning for keyword matching: no stop words, no single letters
    (lone CJK characters that are not grammar stay: 猫 is a word)."""
    return [w for w in words(text) if not is_stop(w) and (len(w) > 1 or w.isdigit() or is_cjk(w))]


@memo(maxsize=200_000)
def term_id(token: str) -> int:
    """Stable id in [1, KEYWORD_DIMENSIONS) for a token, the same in every process."""
    return zlib.crc32(token.encode("utf-8")) % (KEYWORD_DIMENSIONS - 1) + 1
