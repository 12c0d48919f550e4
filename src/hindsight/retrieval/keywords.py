"""BM25 as sparse vectors: the keyword arm of recall.

A memory's keyword vector holds, for each of its terms, BM25's saturated term frequency
    w(t, d) = tf * (K1 + 1) / (tf + K1 * (1 - B + B * |d| / AVG_DOC_TERMS))
with a fixed average length, so a stored vector never needs re-weighting as the corpus
grows. The query side carries the inverse document frequency, computed per namespace at
query time from exact document frequencies (see `stores.memories`):
    idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))
The inner product of the two is the BM25 score. Recall scores the memories the posting
lists of the query's terms name, those that weigh most for their postings first
(`stores.search`), and each candidate of the other arm, with it.

Terms are the keyword tokens (`text.tokenize`) with English words stemmed (`text.stem`),
so "adopted" finds "adopting" (migration 0028 re-indexed the memories stored before).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pgvector import SparseVector

from hindsight.limits import KEY_MAX_CHARS
from hindsight.text.stem import stem
from hindsight.text.tokenize import KEYWORD_DIMENSIONS, keyword_tokens, term_id, words
from hindsight.text.twins import MIN_WORD_OVERLAP

K1 = 1.2
B = 0.75
AVG_DOC_TERMS = 10.0
# pgvector's HNSW index takes sparse vectors of at most 1,000 non-zero entries. Migration
# 0040 dropped that index; the cap stays so that its downgrade can build it again.
MAX_TERMS = 1000


def document_terms(text: str) -> Counter[int]:
    return Counter(term_id(stem(t)) for t in keyword_tokens(text))


def document_vector(text: str) -> tuple[SparseVector, list[int]]:
    """The BM25 document vector and the sorted ids of its terms (for df statistics)."""
    counts = document_terms(text)
    if len(counts) > MAX_TERMS:
        counts = Counter(dict(counts.most_common(MAX_TERMS)))
    length = sum(counts.values())
    norm = K1 * (1 - B + B * length / AVG_DOC_TERMS)
    weights = {term: tf * (K1 + 1) / (tf + norm) for term, tf in counts.items()}
    return SparseVector(weights, KEYWORD_DIMENSIONS), sorted(weights)


# A memory's text holds at most this many distinct tokens from its key (a CJK key: each
# character and each pair).
_KEY_MAX_TOKENS = 2 * KEY_MAX_CHARS


def twin_term_groups(value: str) -> list[list[int]] | None:
    """Groups of the term ids of `value` such that every memory whose value says the same
    in the same words (`text.twins.same_words`) holds all the terms of at least one group
    in its `keyword_terms`; None when no such groups can be given (a value without keyword
    tokens, or one so long that a twin's terms could be cut at MAX_TERMS).

    A twin shares at least MIN_WORD_OVERLAP of the distinct words of the two values (their
    Jaccard overlap), so it lacks at most `d` of the value's words, `d` the most that
    leaves the overlap at the bar with nothing added: 0 below 20 words. Split into `d + 1`
    groups, the words it lacks leave at least one group whole. Its terms are its key's and
    value's stemmed tokens, so the group's terms are among them."""
    tokens = sorted(set(keyword_tokens(value)))
    n = len(tokens)
    if n == 0 or n / MIN_WORD_OVERLAP + _KEY_MAX_TOKENS >= MAX_TERMS:
        return None
    missing = 0
    while (n - missing - 1) / n >= MIN_WORD_OVERLAP:
        missing += 1
    groups = [tokens[i :: missing + 1] for i in range(missing + 1)]
    return [sorted({term_id(stem(t)) for t in group}) for group in groups]


FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "我", "私", "僕"})


def query_terms(text: str) -> tuple[list[int], list[float]]:
    """Term ids of a query and how often each occurs (the query-side tf).

    A question in the first person ("where does my sister live?") is about the user, whose
    memories carry `user.` keys by convention: it also looks for the term "user"."""
    return weighted_query_terms([(text, 1.0)])


def weighted_query_terms(parts: Sequence[tuple[str, float]]) -> tuple[list[int], list[float]]:
    """Term ids of a query made of weighted parts (a conversation's turns), each term's
    count the weighted sum of its counts in the parts."""
    counts: dict[int, float] = {}
    first_person = False
    for text, weight in parts:
        for term, n in document_terms(text).items():
            counts[term] = counts.get(term, 0.0) + weight * n
        first_person = first_person or bool(FIRST_PERSON.intersection(words(text)))
    if first_person:
        # half weight: a hint towards the user's own memories, not a topic of its own
        # (measured: built-in embedder R@20 0.680 -> 0.758, MiniLM MRR 0.764 -> 0.776)
        user = term_id("user")
        counts[user] = counts.get(user, 0.0) + 0.5
    terms = sorted(counts)
    return terms, [counts[t] for t in terms]
