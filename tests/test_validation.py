"""Bad input gets a 4xx that names the field and the limit, and changes nothing."""

from __future__ import annotations

import httpx
import pytest

from hindsight import limits
from tests.conftest import Api


def post_batch(api: Api, memories: list[dict[str, object]]) -> httpx.Response:
    return api.client.post(f"{api.base}/memories:batch", json={"memories": memories})


def assert_nothing_stored(api: Api) -> None:
    assert api.client.get(f"{api.base}/memories").json()["memories"] == []


@pytest.mark.parametrize(
    ("item", "field", "words"),
    [
        ({"key": "k" * 257, "value": "v"}, "memories[1].key", "256"),
        ({"key": "", "value": "v"}, "memories[1].key", "at least 1"),
        ({"key": "k", "value": "v" * 8001}, "memories[1].value", "8000"),
        ({"key": "k"}, "memories[1].value", "required"),
        ({"key": "k", "value": "v", "memory_type": "gossip"}, "memories[1].memory_type", "'fact'"),
        ({"key": "k", "value": "v", "tags": ["t"] * 33}, "memories[1].tags", "32"),
        ({"key": "k", "value": "v", "tags": ["x" * 65]}, "memories[1].tags[0]", "64"),
        ({"key": "k", "value": "v", "confidence": 1.5}, "memories[1].confidence", "1"),
        (
            {"key": "k", "value": "v", "metadata": {"x": "y" * 20_000}},
            "memories[1].metadata",
            "16384",
        ),
        ({"key": "nul\u0000", "value": "v"}, "memories[1].key", "NUL"),
        ({"key": "k", "value": "v", "metadata": {"a": "\u0000"}}, "memories[1].metadata", "NUL"),
        ({"key": "k", "value": "v", "vlaue": "typo"}, "memories[1].vlaue", "unknown field"),
    ],
)
def test_bad_items_are_refused_whole(
    api: Api, item: dict[str, object], field: str, words: str
) -> None:
    r = post_batch(api, [{"key": "good", "value": "fine"}, item])
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "invalid_input"
    assert error["message"].startswith(field), error
    assert words in error["message"], error
    assert_nothing_stored(api)


def test_batch_size_limits(api: Api) -> None:
    r = post_batch(api, [])
    assert r.status_code == 422 and r.json()["error"]["message"].startswith("memories")
    too_many = [{"key": f"k{i}", "value": "v"} for i in range(limits.BATCH_MAX + 1)]
    r = post_batch(api, too_many)
    assert r.status_code == 422 and "1000" in r.json()["error"]["message"]
    assert_nothing_stored(api)
    results = api.observe(*too_many[: limits.BATCH_MAX])
    assert len(results) == limits.BATCH_MAX


def test_lone_surrogates_and_invalid_utf8_are_refused(api: Api) -> None:
    raw = b'{"memories": [{"key": "k", "value": "\\ud800"}]}'
    r = api.client.post(
        f"{api.base}/memories:batch", content=raw, headers={"content-type": "application/json"}
    )
    assert r.status_code == 422 and "memories[0].value" in r.json()["error"]["message"]
    bad_utf8 = b'{"memories": [{"key": "k", "value": "\xff\xfe"}]}'
    r = api.client.post(
        f"{api.base}/memories:batch", content=bad_utf8, headers={"content-type": "application/json"}
    )
    assert r.status_code == 422, r.text
    assert "UTF-8" in r.json()["error"]["message"] or "JSON" in r.json()["error"]["message"]
    r = api.client.post(
        f"{api.base}/memories:batch",
        content=b"{not json",
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 422 and "JSON" in r.json()["error"]["message"]
    assert_nothing_stored(api)


def test_oversized_body_is_413(api: Api) -> None:
    huge = b'{"memories": [{"key": "k", "value": "' + b"v" * (17 * 1024 * 1024) + b'"}]}'
    r = api.client.post(
        f"{api.base}/memories:batch", content=huge, headers={"content-type": "application/json"}
    )
    assert r.status_code == 413
    assert "too large" in r.json()["error"]["message"]
    assert_nothing_stored(api)


@pytest.mark.parametrize("namespace", ["has space", "-leading", "x" * 65, "ünï"])
def test_bad_namespaces(client: httpx.Client, namespace: str) -> None:
    r = client.get(f"/v1/namespaces/{namespace}/memories")
    assert r.status_code == 422, r.text
    message = r.json()["error"]["message"]
    assert message.startswith(f"namespace: {namespace!r} is not a namespace"), message
    assert "1-64 characters" in message


def test_a_slash_in_a_namespace_makes_a_path_no_endpoint_has(client: httpx.Client) -> None:
    # /v1/namespaces/a/b/memories is not a bad namespace but another path: no route has it
    r = client.get("/v1/namespaces/a/b/memories")
    assert r.status_code == 404, r.text
    assert r.json()["error"]["code"] == "not_found"
    assert "/docs" in r.json()["error"]["message"]


def test_list_parameters_are_checked(api: Api) -> None:
    for params, field in [
        ({"limit": 0}, "limit"),
        ({"limit": 1001}, "limit"),
        ({"cursor": "garbage!"}, "cursor"),
        ({"memory_type": "gossip"}, "memory_type"),
    ]:
        r = api.client.get(f"{api.base}/memories", params=params)
        assert r.status_code == 422, (params, r.text)
        assert r.json()["error"]["message"].startswith(field), r.json()


def test_unknown_endpoint_says_so(client: httpx.Client) -> None:
    r = client.get("/v1/nothing-here")
    assert r.status_code == 404 and "/docs" in r.json()["error"]["message"]


def test_oversized_chunked_body_is_413(api: Api) -> None:
    def chunks():  # type: ignore[no-untyped-def]
        yield b'{"memories": [{"key": "k", "value": "'
        for _ in range(17):
            yield b"v" * (1024 * 1024)
        yield b'"}]}'

    r = api.client.post(
        f"{api.base}/memories:batch", content=chunks(), headers={"content-type": "application/json"}
    )
    assert r.status_code == 413, r.text
    assert "too large" in r.json()["error"]["message"]


def nested(depth: int) -> dict[str, object]:
    """A JSON object `depth` levels deep ({"a": {"a": ... {"x": 1}}})."""
    value: dict[str, object] = {"x": 1}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def test_json_nested_deeper_than_the_limit_is_refused_everywhere(api: Api) -> None:
    deep = nested(limits.JSON_MAX_DEPTH + 1)
    words = f"at most {limits.JSON_MAX_DEPTH} levels"
    for path, body, field in [
        (
            "/memories:batch",
            {"memories": [{"key": "k", "value": "v", "metadata": deep}]},
            "memories[0].metadata",
        ),
        ("/memories", {"key": "k", "value": "v", "metadata": {"list": [deep]}}, "metadata"),
        ("/sessions/s1/steps", {"content": "c", "metadata": deep}, "metadata"),
    ]:
        r = api.client.post(api.base + path, json=body)
        assert r.status_code == 422, (path, r.text)
        assert r.json()["error"]["message"].startswith(field), r.json()
        assert words in r.json()["error"]["message"], r.json()
    assert_nothing_stored(api)
    assert api.client.get(f"{api.base}/sessions/s1/steps").json()["steps"] == []

    (m,) = api.observe({"key": "k", "value": "v"})
    r = api.client.patch(f"{api.base}/memories/{m['id']}", json={"metadata": deep})
    assert r.status_code == 422 and r.json()["error"]["message"].startswith("metadata"), r.text
    assert api.get(m["id"])["metadata"] == {}

    # the limit itself is fine, and comes back whole
    ok = nested(limits.JSON_MAX_DEPTH)
    (m2,) = api.observe({"key": "k2", "value": "v", "metadata": ok})
    assert api.get(m2["id"])["metadata"] == ok


def test_a_body_nested_past_what_a_parser_can_read_is_422(api: Api) -> None:
    depth = 100_000
    raw = '{"memories": [{"key": "k", "value": "v", "metadata": ' + '{"a": ' * depth
    raw += "1" + "}" * depth + "}]}"
    r = api.client.post(
        f"{api.base}/memories:batch", content=raw, headers={"content-type": "application/json"}
    )
    assert r.status_code == 422, r.text[:300]
    assert "nested too deeply" in r.json()["error"]["message"]
    assert_nothing_stored(api)


def test_deep_json_stored_before_the_limit_never_breaks_a_read(
    api: Api, migrated: str, redis_url: str
) -> None:
    """Metadata 256 levels deep (what was once accepted, or what psql writes) is read back
    with everything below the limit as JSON text, by every read that shows it."""
    import json

    import psycopg
    import redis

    from hindsight.stores.hot_steps_scripts import expiry_key, session_key

    deep = nested(256)
    (m,) = api.observe({"key": "deep.key", "value": "deeply nested value"})
    api.append("s1", "first step")
    with psycopg.connect(migrated) as conn:
        text = json.dumps(deep)
        conn.execute(
            "UPDATE long_term_memory SET metadata = %s::jsonb WHERE id = %s", (text, m["id"])
        )
        conn.execute(
            "UPDATE working_memory SET metadata = %s::jsonb WHERE namespace = %s", (text, api.ns)
        )
        conn.execute(
            "UPDATE working_sessions SET metadata = %s::jsonb WHERE namespace = %s",
            (text, api.ns),
        )
    # drop the cached copy of the session, so reads go to PostgreSQL (and refill Redis)
    redis.Redis.from_url(redis_url).delete(session_key(api.ns, "s1"), expiry_key(api.ns, "s1"))

    shown = api.get(m["id"])["metadata"]
    level = shown
    for _ in range(limits.JSON_MAX_DEPTH - 1):
        level = level["a"]
    assert isinstance(level["a"], str) and json.loads(level["a"]) == nested(256 - 32)
    listed = api.client.get(f"{api.base}/memories")
    assert listed.status_code == 200 and listed.json()["memories"][0]["metadata"] == shown
    assert api.recall("deeply nested")["results"][0]["metadata"] == shown
    for _ in range(2):  # from PostgreSQL, then from the refilled Redis copy
        assert api.steps("s1")[0]["metadata"] == shown
    for path in ("/sessions/s1", "/sessions/s1/context"):
        r = api.client.get(api.base + path)
        assert r.status_code == 200, (path, r.text)
    assert api.client.get(f"{api.base}/memories/{m['id']}/history").status_code == 200


def test_a_trailing_newline_makes_no_name(api: Api, client: httpx.Client) -> None:
    """`nsA\\n` and `s1\\n` once passed the name checks and made a namespace and a session
    that look like `nsA` and `s1`, and that erasing `nsA` left behind."""
    r = client.post(f"/v1/namespaces/{api.ns}%0A/memories", json={"key": "k", "value": "v"})
    assert r.status_code == 422, r.text
    assert "is not a namespace" in r.json()["error"]["message"]
    r = api.client.post(f"{api.base}/sessions/s1%0A/steps", json={"content": "a step"})
    assert r.status_code == 422, r.text
    assert "is not a session id" in r.json()["error"]["message"]
    assert api.client.get(f"{api.base}/memories").json()["memories"] == []


def test_a_nul_anywhere_is_422_and_changes_nothing(api: Api) -> None:
    """A NUL in a query parameter was a 500, and one in a policy's source name closed the
    connection: PostgreSQL cannot hold a NUL in text."""
    for path in [
        f"{api.base}/recalls?actor=%00x",
        f"{api.base}/memories?key=a%00b",
        f"{api.base}/sessions/s1/steps?recent=1&x=%00",
        f"{api.base}/memories/%00",
    ]:
        r = api.client.get(path)
        assert r.status_code == 422, (path, r.text)
        assert "NUL" in r.json()["error"]["message"], r.text
    before = api.client.get(f"{api.base}/policy").json()
    r = api.client.put(f"{api.base}/policy", json={"trust": {"sources": {"s\u0000": 0.5}}})
    assert r.status_code == 422, r.text
    assert "NUL" in r.json()["error"]["message"], r.text
    assert api.client.get(f"{api.base}/policy").json() == before
