"""The MADial-Bench dev half as the retrieval evaluation reads it (benchmarks/madial.py):
a namespace per user, the query the published retrievers embedded, every answer among its
user's memories, and the published retrievers' rows, scored by the evaluation's own
formula, equal to the data README's table (pure: no servers, no network; skipped where the
data is not beside the repository)."""

from __future__ import annotations

from pathlib import Path

import pytest
from benchmarks import madial

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "madial-dev"

pytestmark = pytest.mark.skipif(
    not madial.available(DATA), reason=f"no MADial-Bench dev half in {DATA}"
)


@pytest.fixture(scope="module", params=madial.LANGUAGES)
def built(request: pytest.FixtureRequest) -> madial.MadialSet:
    return madial.build(request.param, DATA)


def test_a_namespace_per_user_and_every_answer_in_it(built: madial.MadialSet) -> None:
    observed = {(ns, key) for ns, key, _, _ in built.observations}
    assert len(observed) == len(built.observations)  # one observation per memory
    assert len(built.observations) == {"zh": 171, "en": 160}[built.language]
    assert {ns for ns, *_ in built.observations} == {
        madial.namespace(built.language, 1),
        madial.namespace(built.language, 2),
    }
    assert len(built.questions) == 80
    for q in built.questions:
        assert q.gold and all((q.namespace, key) in observed for key in q.gold)
        assert q.asked_at is None  # the dialogues carry no date
    assert all(key in built.occurred and key in built.metadata for key in observed)


def test_english_memories_take_the_chinese_user() -> None:
    zh = {key: ns for ns, key, _, _ in madial.build("zh", DATA).observations}
    en = {key: ns for ns, key, _, _ in madial.build("en", DATA).observations}
    assert set(en) <= set(zh)
    assert all(ns.replace("-en-", "-zh-") == zh[key] for key, ns in en.items())


def test_the_query_is_the_dialogue_before_the_test_turn(built: madial.MadialSet) -> None:
    rows = madial.dialogues(built.language, DATA)
    for q, row in zip(built.questions, rows, strict=True):
        turn = row["test-turn"][0]
        assert q.text == "".join(row["dialogue"][:turn])
        assert row["dialogue"][0].strip() == "<BOD>" and 0 < turn < len(row["dialogue"])


def test_the_value_is_the_event_and_the_labels_are_metadata(built: madial.MadialSet) -> None:
    memories = madial.memories(built.language, DATA)
    for ns, key, value, memory_type in built.observations:
        m = memories[key.removeprefix("m")]
        assert (value, memory_type) == (m["event"], "event")
        assert built.occurred[(ns, key)] == f"{m['time']}T12:00:00+00:00"
        assert built.metadata[(ns, key)] == {"scene": m["scene"], "emotion": m["emotion"]}


def test_published_rows_match_the_readme(built: madial.MadialSet) -> None:
    """The README prints three decimals; two of its values lie exactly half-way (0.8275,
    0.6225 as fractions), which it rounds one way and the float mean the other."""
    pytest.importorskip("bm25s", reason="the evaluation's extra: pip install -e '.[eval]'")
    from benchmarks.retrieval_eval import metrics

    readme = madial.readme_table(DATA)[built.language]
    assert set(built.published) == set(readme)
    for name, ranked in built.published.items():
        rows = [metrics(keys, q.gold) for keys, q in zip(ranked, built.questions, strict=True)]
        for k, expected in readme[name].items():
            got = sum(r[k] for r in rows) / len(rows)
            assert abs(got - expected) <= 0.0005 + 1e-9, (name, k, got, expected)
