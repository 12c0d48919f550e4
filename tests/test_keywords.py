"""Tokens, term ids and BM25 weights for the keyword arm."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hindsight.retrieval.keywords import (
    AVG_DOC_TERMS,
    K1,
    MAX_TERMS,
    B,
    document_vector,
    query_terms,
)
from hindsight.text.tokenize import KEYWORD_DIMENSIONS, keyword_tokens, term_id


def test_tokens_split_keys_and_drop_stop_words() -> None:
    assert keyword_tokens("user.favorite_color") == ["user", "favorite", "color"]
    assert keyword_tokens("What is the user's name?") == ["user", "name"]
    assert keyword_tokens("Straße CAFÉ 42 x") == ["strasse", "café", "42"]


def test_term_ids_are_stable_across_processes() -> None:
    here = term_id("zyxel")
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "from hindsight.text.tokenize import term_id; print(term_id('zyxel'))",
        ],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345", "PATH": ""},
    )
    assert int(out.stdout) == here
    assert 0 < here < KEYWORD_DIMENSIONS


def test_document_weights_saturate_with_term_frequency_and_length() -> None:
    vector, terms = document_vector("alpha alpha alpha beta")
    weights = dict(zip(vector.indices(), vector.values(), strict=True))
    norm = K1 * (1 - B + B * 4 / AVG_DOC_TERMS)
    assert weights[term_id("alpha")] == pytest.approx(3 * (K1 + 1) / (3 + norm), rel=1e-6)
    assert weights[term_id("beta")] == pytest.approx(1 * (K1 + 1) / (1 + norm), rel=1e-6)
    assert terms == sorted({term_id("alpha"), term_id("beta")})
    assert vector.dimensions() == KEYWORD_DIMENSIONS


def test_long_documents_keep_their_most_frequent_terms() -> None:
    text = " ".join(f"word{i}" for i in range(MAX_TERMS + 200)) + " common" * 5
    _, terms = document_vector(text)
    assert len(terms) == MAX_TERMS and term_id("common") in terms


def test_query_terms_count_repeats() -> None:
    terms, counts = query_terms("red red blue")
    assert dict(zip(terms, counts, strict=True)) == {term_id("red"): 2.0, term_id("blue"): 1.0}
    assert query_terms("the of and") == ([], [])


def test_word_forms_meet_on_their_stem() -> None:
    """A question in one form of a word finds a memory in another ("adopted" / "adopting",
    "puppies" / "puppy"); words that are not plain Latin letters are left as written."""
    _, memory = document_vector("Dave is adopting a puppy")
    asked, _ = query_terms("who adopted puppies?")
    assert set(asked) == {term_id("adopt"), term_id("puppi")} <= set(memory)
    _, other = document_vector("café 3rd 用户")
    assert set(other) >= {term_id("café"), term_id("3rd"), term_id("用户")}
