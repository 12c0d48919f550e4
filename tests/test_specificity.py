"""Specificity: a memory made of words most memories share (small talk) gives way to one
that says something, when the query itself names little more than a person."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from hindsight.config import Settings
from hindsight.db.pool import open_pool
from hindsight.maintenance.purge import PurgeReport, run_once
from tests.conftest import Api, make_settings
from tests.support.lifecycle import sql
from tests.support.poll import wait_until
from tests.support.servers import ThreadServer, separate_database

SMALL_TALK = [
    "that's so cool Mia!",
    "haha Mia, so true",
    "take care Mia, talk soon!",
    "hey Mia! how have you been?",
    "you deserve it Mia",
    "aww Mia that's sweet",
]
SAID = (
    "Mia: so, we adopted a beagle on Saturday and the kids named her Biscuit, "
    "she already chewed a slipper"
)


def dialogue() -> list[dict[str, str]]:
    turns = [
        {"key": f"D{s}:{t}", "value": line}
        for s in range(1, 5)
        for t, line in enumerate(SMALL_TALK, start=1)
    ]
    return [*turns, {"key": "D5:1", "value": SAID}]


def top_keys(api: Api, query: str) -> list[str]:
    return [r["key"] for r in api.recall(query, k=5)["results"]]


@pytest.mark.parametrize("weight", ["1", "0"])
def test_a_vague_question_finds_the_turn_that_says_something(
    fresh_db: str, redis_url: str, ns: str, weight: str
) -> None:
    with ThreadServer(make_settings(specificity_weight=weight), fresh_db, redis_url) as srv:
        api = Api.at(srv.url, ns)
        api.observe(*dialogue())
        results = api.recall("what did Mia do?", k=5)["results"]
        said = next((r for r in results if r["key"] == "D5:1"), None)
        if weight == "0":
            # without it, the short lines that name her win (what this guards against)
            assert said is None or results[0]["key"] != "D5:1"
            assert all(r["components"]["specificity_factor"] == 1 for r in results)
            # and nothing was computed for it
            assert all(r["components"]["specificity"] is None for r in results)
            return
        assert results[0]["key"] == "D5:1", [r["value"] for r in results]
        c = results[0]["components"]
        assert c["specificity"] > max(r["components"]["specificity"] for r in results[1:])
        assert c["specificity_factor"] == pytest.approx(c["specificity"], abs=1e-6)


def test_a_short_fact_stays_specific(api: Api) -> None:
    """A mean, not a sum: a short memory of rare words is not pushed below long ones."""
    api.observe(
        {"key": "user.name", "value": "Ann"},
        *(
            {
                "key": f"note.{i}",
                "value": f"the team meeting about the project notes {i} "
                "ran long and the team agreed to meet again about the project",
            }
            for i in range(8)
        ),
    )
    results = api.recall("what is my name?", k=3)["results"]
    assert results[0]["key"] == "user.name"
    specific = {r["key"]: r["components"]["specificity"] for r in results}
    assert specific["user.name"] == max(specific.values())


def test_recall_keeps_each_specificity_and_reads_it_back_while_it_holds(
    api: Api, migrated: str
) -> None:
    """What recall computed is kept beside the access counts and read back (an operator's
    edit in psql shows through), until the memory changes, an hour has passed or its
    namespace has grown by more than a quarter; then it is computed again."""
    api.observe(*dialogue())
    first = {r["key"]: r for r in api.recall("what did Mia do?", k=25)["results"]}
    said = first["D5:1"]

    def kept(key: str) -> float | None:
        rows = sql(
            migrated,
            "SELECT a.specificity FROM memory_access a JOIN long_term_memory m "
            "ON m.namespace = a.namespace AND m.id = a.memory_id "
            "WHERE m.namespace = %s AND m.mem_key = %s AND m.status = 'active'",
            api.ns,
            key,
        )
        return rows[0][0] if rows else None

    wait_until(lambda: kept("D5:1") is not None, "the specificities to be kept")
    assert kept("D5:1") == pytest.approx(said["components"]["specificity"], abs=1e-6)

    def pretend(key: str, value: float, hours_ago: int = 0) -> None:
        sql(
            migrated,
            "UPDATE memory_access a SET specificity = %s, "
            "specificity_at = now() - make_interval(hours => %s) FROM long_term_memory m "
            "WHERE m.namespace = a.namespace AND m.id = a.memory_id "
            "AND m.namespace = %s AND m.mem_key = %s",
            value,
            hours_ago,
            api.ns,
            key,
        )

    def specificity(key: str) -> float:
        results = api.recall("what did Mia do?", k=40)["results"]
        return float(next(r for r in results if r["key"] == key)["components"]["specificity"])

    pretend("D5:1", 0.01)
    assert specificity("D5:1") == pytest.approx(0.01)

    # the memory changed: computed again from its new words
    api.observe({"key": "D5:1", "value": SAID + " and then dug up the garden"})
    assert specificity("D5:1") != pytest.approx(0.01)

    # computed over an hour ago: computed again
    pretend("D2:1", 0.01, hours_ago=2)
    assert specificity("D2:1") != pytest.approx(0.01)

    # the namespace grew from 25 memories to 35: every IDF moved, so computed again
    pretend("D1:1", 0.01)
    assert specificity("D1:1") == pytest.approx(0.01)
    api.observe(*({"key": f"more.{i}", "value": f"Mia went hiking trip {i}"} for i in range(10)))
    assert specificity("D1:1") != pytest.approx(0.01)


CONVERSATION = [
    {"role": "user", "content": "Mia sent photos from the weekend"},
    {"role": "assistant", "content": "Oh nice, what were they of?"},
]
LATEST = "the beagle they adopted, she chewed a slipper already"


def test_a_conversation_reads_each_memorys_keyword_mass_back_while_it_holds(
    api: Api, migrated: str
) -> None:
    """A conversation's keyword score is the share of the memory's BM25 mass it holds. The
    mass is kept with the specificity, under its rules, and read back: an operator's edit
    shows through until the memory changes, while a question's score never used it."""
    api.observe(*dialogue())

    def keyword(key: str, **asked: object) -> float:
        results = api.recall(LATEST, k=25, **asked)["results"]
        return float(next(r for r in results if r["key"] == key)["components"]["keyword"])

    def mass(key: str) -> float | None:
        rows = sql(
            migrated,
            "SELECT a.keyword_mass FROM memory_access a JOIN long_term_memory m "
            "ON m.namespace = a.namespace AND m.id = a.memory_id "
            "WHERE m.namespace = %s AND m.mem_key = %s AND m.status = 'active'",
            api.ns,
            key,
        )
        return rows[0][0] if rows else None

    computed = keyword("D5:1", context=CONVERSATION)
    assert computed > 0
    wait_until(lambda: mass("D5:1") is not None, "the keyword masses to be kept")
    kept = mass("D5:1")
    assert kept is not None and kept > 0
    assert keyword("D5:1", context=CONVERSATION) == pytest.approx(computed, abs=1e-6)
    question = dict(query="did Mia adopt a beagle?", k=25)
    asked = {r["key"]: r for r in api.recall(**question)["results"]}["D5:1"]

    sql(
        migrated,
        "UPDATE memory_access a SET keyword_mass = keyword_mass * 2 FROM long_term_memory m "
        "WHERE m.namespace = a.namespace AND m.id = a.memory_id "
        "AND m.namespace = %s AND m.mem_key = %s",
        api.ns,
        "D5:1",
    )
    assert keyword("D5:1", context=CONVERSATION) == pytest.approx(computed / 2, abs=1e-6)
    again = {r["key"]: r for r in api.recall(**question)["results"]}["D5:1"]
    assert again["components"]["keyword"] == pytest.approx(asked["components"]["keyword"])

    # the memory changed: computed again, from its new words
    api.observe({"key": "D5:1", "value": SAID + " and then dug up the garden"})
    changed = keyword("D5:1", context=CONVERSATION)
    assert changed != pytest.approx(computed / 2, rel=1e-3)
    wait_until(lambda: mass("D5:1") not in (None, 2 * kept), "the new mass to be kept")


def test_specificities_kept_before_the_keyword_mass_still_serve_questions(
    api: Api, migrated: str
) -> None:
    """Specificities kept before migration 0041 carry no keyword mass: a question reads
    them as it did (no recall computes them all again after the upgrade), a conversation
    computes both and keeps them."""
    api.observe(*dialogue())
    computed = {r["key"]: r for r in api.recall(LATEST, context=CONVERSATION, k=25)["results"]}

    def kept() -> list[tuple[float | None, float | None]]:
        return sql(
            migrated,
            "SELECT a.specificity, a.keyword_mass FROM memory_access a "
            "JOIN long_term_memory m ON m.namespace = a.namespace AND m.id = a.memory_id "
            "WHERE m.namespace = %s AND m.mem_key = 'D5:1'",
            api.ns,
        )

    wait_until(lambda: kept() and kept()[0][1] is not None, "the masses to be kept")
    sql(
        migrated,
        "UPDATE memory_access SET specificity = 0.01, keyword_mass = NULL WHERE namespace = %s",
        api.ns,
    )
    asked = {r["key"]: r for r in api.recall("what did Mia do?", k=25)["results"]}
    assert asked["D5:1"]["components"]["specificity"] == pytest.approx(0.01)
    again = {r["key"]: r for r in api.recall(LATEST, context=CONVERSATION, k=25)["results"]}
    assert again["D5:1"]["components"]["keyword"] == pytest.approx(
        computed["D5:1"]["components"]["keyword"], abs=1e-6
    )
    assert again["D5:1"]["components"]["specificity"] == pytest.approx(
        computed["D5:1"]["components"]["specificity"], abs=1e-6
    )
    wait_until(lambda: kept()[0][1] is not None, "the conversation's masses to be kept")


def test_maintenance_computes_specificities_ahead_of_recall(
    pg_url: str, template: str, redis_url: str, ns: str
) -> None:
    """A memory a query meets for the first time has its specificity ready: the maintenance
    pass computes it (a batch of memories a pass, from where the last one stopped) as
    recall would, and leaves alone what is still fresh."""
    settings = make_settings(specificity_refresh_batch=10)
    with (
        separate_database(pg_url, template=template) as fresh_db,
        ThreadServer(settings, fresh_db, redis_url) as srv,
    ):
        api = Api.at(srv.url, ns)
        api.observe(*dialogue())

        def kept() -> dict[str, float | None]:
            rows = sql(
                fresh_db,
                "SELECT m.mem_key, a.specificity FROM long_term_memory m "
                "LEFT JOIN memory_access a ON a.namespace = m.namespace AND a.memory_id = m.id "
                "WHERE m.namespace = %s AND m.status = 'active'",
                ns,
            )
            return {key: value for key, value in rows}

        assert set(kept().values()) == {None}
        passes = [asyncio.run(maintenance_pass(settings, fresh_db)) for _ in range(4)]
        # 25 memories, 10 a pass: three passes cover them, the fourth starts again
        assert [p.specificities_kept for p in passes] == [10, 10, 5, 0]
        ahead = kept()
        assert None not in ahead.values()
        masses = sql(
            fresh_db,
            "SELECT count(*) FROM memory_access WHERE namespace = %s AND keyword_mass > 0",
            ns,
        )
        assert masses[0][0] == 25
        # a conversation reads them (none computed): the same scores as computing them
        ahead_scores = keywords(api.recall(LATEST, context=CONVERSATION, k=25)["results"])
        sql(
            fresh_db,
            "UPDATE memory_access SET keyword_mass = 2 * keyword_mass WHERE namespace = %s",
            ns,
        )
        doubled = keywords(api.recall(LATEST, context=CONVERSATION, k=25)["results"])
        assert doubled == pytest.approx({k: v / 2 for k, v in ahead_scores.items()}, abs=1e-6)

        # what recall computes itself, once the kept values are too old to use
        sql(
            fresh_db,
            "UPDATE memory_access SET specificity_at = now() - interval '2 hours' "
            "WHERE namespace = %s",
            ns,
        )
        results = api.recall("what did Mia do?", k=25)["results"]
        assert len(results) == 25
        for r in results:
            assert r["components"]["specificity"] == pytest.approx(ahead[r["key"]], abs=1e-6)
        computed = keywords(api.recall(LATEST, context=CONVERSATION, k=25)["results"])
        assert computed == pytest.approx(ahead_scores, abs=1e-6)


def keywords(results: list[dict[str, Any]]) -> dict[str, float]:
    return {r["key"]: r["components"]["keyword"] for r in results}


async def maintenance_pass(settings: Settings, url: str) -> PurgeReport:
    pool = await open_pool(settings, url)
    try:
        return await run_once(pool, settings)
    finally:
        await pool.close()
