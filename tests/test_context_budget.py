"""The context read stops at its `max_chars` budget in the database: a long session's older
steps are walked newest first only until the budget is spent, and the count of what was
left out is exact however many there are."""

from __future__ import annotations

import psycopg

from tests.conftest import Api


def test_a_long_sessions_context_stops_at_the_budget_and_counts_the_rest(
    api: Api, migrated: str
) -> None:
    api.append("long", "first")
    with psycopg.connect(migrated, autocommit=True) as conn:
        # 10,050 more steps of 100 characters, written as the append path writes them
        conn.execute(
            "INSERT INTO working_memory (namespace, session_id, step_index, role, content, "
            "expires_at) SELECT %s, 'long', i, 'user', repeat('x', 100), now() + interval '1 "
            "hour' FROM generate_series(1, 10050) AS i",
            (api.ns,),
        )
        conn.execute(
            "UPDATE working_sessions SET next_step = 10051 WHERE namespace = %s "
            "AND session_id = 'long'",
            (api.ns,),
        )
    assert api.append("long", "newest")["step_index"] == 10051
    r = api.client.get(f"{api.base}/sessions/long/context", params={"recent": 1, "max_chars": 1000})
    assert r.status_code == 200, r.text
    ctx = r.json()
    assert [s["content"] for s in ctx["recent"]] == ["newest"]
    assert [e["step_index"] for e in ctx["earlier"]] == list(range(10041, 10051))
    assert all(e["text"] == "x" * 100 and not e["summarized"] for e in ctx["earlier"])
    assert ctx["omitted_steps"] == 10051 - 10  # steps 0..10040, every one of them
    # a budget that ends inside a step leaves that step out whole
    r = api.client.get(f"{api.base}/sessions/long/context", params={"recent": 1, "max_chars": 1099})
    assert [e["step_index"] for e in r.json()["earlier"]] == list(range(10041, 10051))


def test_the_context_budget_in_tokens_counts_a_cjk_character_as_one(api: Api) -> None:
    for content in ("first", "x" * 40, "中" * 10, "newest"):
        api.append("tok", content)

    def earlier(**params: int) -> list[int]:
        r = api.client.get(f"{api.base}/sessions/tok/context", params={"recent": 1, **params})
        assert r.status_code == 200, r.text
        return [e["step_index"] for e in r.json()["earlier"]]

    # 10 CJK characters are 10 tokens; 40 Latin ones, 10 (4 characters a token)
    assert earlier(max_tokens=20) == [1, 2]
    assert earlier(max_tokens=15) == [2]
    assert earlier(max_chars=80) == [0, 1, 2]
    r = api.client.get(
        f"{api.base}/sessions/tok/context", params={"max_tokens": 10, "max_chars": 10}
    )
    assert r.status_code == 422 and "not both" in r.json()["error"]["message"]
