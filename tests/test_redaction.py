"""Secrets never reach storage or a provider: redacted (default), refused, or left alone."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.conftest import Api, make_settings
from tests.support.fake_openai import FakeOpenAI
from tests.support.servers import ThreadServer

SECRET = "sk-proj-" + "Zq7XwV3uT9sR1pO5nM2lK8jH4gF6dS0a"
CARD = "4111 1111 1111 1111"


def test_memories_are_stored_redacted_and_counted(api: Api) -> None:
    (m,) = api.observe(
        {"key": "user.openai_key", "value": f"use {SECRET} for the bot, card {CARD}"}
    )
    assert m["redactions"] == {"openai_key": 1, "card_number": 1}
    stored = api.get(m["id"])["value"]
    assert stored == "use [REDACTED:openai_key] for the bot, card [REDACTED:card_number]"
    (created,) = api.history(m["id"])
    assert created["redactions"] == {"openai_key": 1, "card_number": 1}
    # an edit is cleaned the same way
    r = api.client.patch(f"{api.base}/memories/{m['id']}", json={"value": f"password: {SECRET}"})
    assert r.status_code == 200 and SECRET not in r.text
    # a clean write counts nothing
    (clean,) = api.observe({"key": "user.city", "value": "Oslo"})
    assert clean["redactions"] == {}


def test_steps_and_recall_queries_are_redacted(api: Api) -> None:
    step = api.append("s1", f"the deploy token is {SECRET}", summary=f"token {SECRET}")
    assert step["redactions"] == {"openai_key": 2}
    assert SECRET not in json.dumps(api.steps("s1"))
    body = api.recall(f"what is {SECRET}")
    logged = api.client.get(f"{api.base}/recalls/{body['recall_id']}").json()
    assert SECRET not in json.dumps(logged) and "[REDACTED:openai_key]" in logged["query"]
    # so are the turns of a conversation, in the log and in the answer
    turns = [
        {"role": "user", "content": f"my key is {SECRET}"},
        {"role": "assistant", "content": "noted"},
        {"role": "user", "content": "which deploy token was that?"},
    ]
    r = api.client.post(f"{api.base}/recall", json={"context": turns})
    assert r.status_code == 200 and SECRET not in r.text, r.text
    logged = api.client.get(f"{api.base}/recalls/{r.json()['recall_id']}").json()
    assert SECRET not in json.dumps(logged) and "[REDACTED:openai_key]" in logged["query"]


@pytest.fixture(scope="module")
def strict(module_db: str, redis_url: str) -> Iterator[ThreadServer]:
    with ThreadServer(make_settings(redaction="reject"), module_db, redis_url) as srv:
        yield srv


def test_reject_mode_refuses_naming_field_and_kind(strict: ThreadServer, ns: str) -> None:
    api = Api.at(strict.url, ns)
    r = api.client.post(
        f"{api.base}/memories:batch",
        json={
            "memories": [
                {"key": "ok", "value": "fine"},
                {"key": "db", "value": "postgres://app:pw123@db/prod"},
            ]
        },
    )
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert "memories[1].value" in error["message"] and "url_password" in error["message"]
    assert "pw123" not in r.text
    assert api.client.get(f"{api.base}/memories").json()["memories"] == []
    r = api.client.post(f"{api.base}/sessions/s/steps", json={"content": f"key {SECRET}"})
    assert r.status_code == 422 and "content" in r.json()["error"]["message"]
    assert api.client.get(f"{api.base}/sessions/s/steps").json()["steps"] == []
    r = api.client.post(f"{api.base}/recall", json={"query": f"find {SECRET}"})
    assert r.status_code == 422 and "query" in r.json()["error"]["message"]
    r = api.client.post(
        f"{api.base}/recall", json={"context": [{"role": "user", "content": f"key {SECRET}"}]}
    )
    assert r.status_code == 422 and "context" in r.json()["error"]["message"]


def test_off_mode_keeps_text(module_db: str, redis_url: str, ns: str) -> None:
    with ThreadServer(make_settings(redaction="off"), module_db, redis_url) as srv:
        api = Api.at(srv.url, ns)
        (m,) = api.observe({"key": "k", "value": f"raw {SECRET}"})
        assert m["redactions"] == {} and SECRET in api.get(m["id"])["value"]


def test_each_namespace_sets_its_own_mode(api: Api, ns: str) -> None:
    """The policy's redaction section overrides the server's mode for one namespace only."""
    policy = api.client.get(f"{api.base}/policy").json()
    assert policy["redaction"] == {"mode": "redact", "email": False, "phone": False}

    r = api.client.put(f"{api.base}/policy", json={"redaction": {"mode": "refuse"}})
    assert r.status_code == 422 and "redaction.mode" in r.json()["error"]["message"]

    r = api.client.put(f"{api.base}/policy", json={"redaction": {"mode": "reject"}})
    assert r.status_code == 200, r.text
    r = api.client.post(f"{api.base}/memories", json={"key": "k", "value": f"raw {SECRET}"})
    assert r.status_code == 422 and "value" in r.json()["error"]["message"]
    assert SECRET not in r.text
    assert api.client.get(f"{api.base}/memories").json()["memories"] == []
    r = api.client.post(f"{api.base}/sessions/s/steps", json={"content": f"key {SECRET}"})
    assert r.status_code == 422

    api.client.put(f"{api.base}/policy", json={"redaction": {"mode": "off"}})
    (kept,) = api.observe({"key": "k", "value": f"raw {SECRET}"})
    assert kept["redactions"] == {} and SECRET in api.get(kept["id"])["value"]

    # e-mail addresses are personal data only where the namespace says so
    api.client.put(f"{api.base}/policy", json={"redaction": {"mode": "redact", "email": True}})
    (mail,) = api.observe({"key": "user.email", "value": "write to ada@example.org"})
    assert mail["redactions"] == {"email": 1}
    assert api.get(mail["id"])["value"] == "write to [REDACTED:email]"

    # a neighbour keeps the server's default
    other = Api(api.client, ns + "-other")
    (m,) = other.observe({"key": "k", "value": f"raw {SECRET}"})
    assert m["redactions"] == {"openai_key": 1}
    (mail,) = other.observe({"key": "user.email", "value": "write to ada@example.org"})
    assert mail["redactions"] == {}


def test_providers_never_see_a_secret(fresh_db: str, redis_url: str, ns: str) -> None:
    with FakeOpenAI() as fake:
        # the importance rating of the direct write, then the extraction
        fake.reply(json.dumps({"ratings": []}), json.dumps({"memories": []}))
        settings = make_settings(
            embedding_base_url=fake.url,
            embedding_model="fake-embed",
            embedding_dimensions=48,
            llm_base_url=fake.url,
            llm_model="fake-chat",
        )
        with ThreadServer(settings, fresh_db, redis_url) as srv:
            api = Api.at(srv.url, ns)
            api.observe({"key": "user.note", "value": f"token {SECRET}"})
            api.recall(f"token {SECRET}")
            r = api.client.post(
                f"{api.base}/memories:extract",
                json={"messages": [{"role": "user", "content": f"my key is {SECRET}"}]},
            )
            assert r.status_code == 200, r.text
        sent = json.dumps([req["body"] for req in fake.requests])
        assert fake.count("embeddings") >= 2 and fake.count("chat") == 2
        assert SECRET not in sent and "[REDACTED:openai_key]" in sent
