"""Removing a session's newest step (`DELETE .../steps:last`), and paging back with
`before`: Postgres and the Redis hot copy agree afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from hindsight.runtime.embedded_redis import RedisProcess
from hindsight.stores.hot_steps_scripts import session_key
from tests.conftest import Api, make_settings
from tests.support.servers import ThreadServer


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisProcess]:
    server = RedisProcess(tmp_path / "redis")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def wm_server(migrated: str, own_redis: RedisProcess) -> Iterator[ThreadServer]:
    with ThreadServer(make_settings(), migrated, own_redis.url) as srv:
        yield srv


def contents(api: Api, session: str, recent: int = 20) -> list[str]:
    return [s["content"] for s in api.steps(session, recent=recent)]


def test_pop_removes_the_newest_step_and_the_next_append_takes_its_index(
    wm_server: ThreadServer, own_redis: RedisProcess, ns: str
) -> None:
    api = Api.at(wm_server.url, ns)
    for i in range(3):
        api.append("s", f"step {i}")
    assert contents(api, "s") == ["step 0", "step 1", "step 2"]  # now cached in Redis

    r = api.client.delete(f"{api.base}/sessions/s/steps:last")
    assert r.status_code == 200, r.text
    assert (r.json()["step_index"], r.json()["content"]) == (2, "step 2")
    assert contents(api, "s") == ["step 0", "step 1"]
    assert contents(api, "s", recent=2) == ["step 0", "step 1"]
    cache = redis.Redis.from_url(own_redis.url)
    assert b"step 2" not in b"".join(cache.zrange(session_key(ns, "s"), 0, -1))

    again = api.append("s", "step 2, take two")
    assert again["step_index"] == 2
    assert contents(api, "s") == ["step 0", "step 1", "step 2, take two"]
    session = api.client.get(f"{api.base}/sessions/s").json()
    assert session["step_count"] == 3 and session["live_steps"] == 3


def test_pop_until_empty_then_404_and_an_ended_session_refuses(api: Api) -> None:
    api.append("p", "only")
    assert api.client.delete(f"{api.base}/sessions/p/steps:last").json()["content"] == "only"
    empty = api.client.delete(f"{api.base}/sessions/p/steps:last")
    assert empty.status_code == 404 and "no live step" in empty.json()["error"]["message"]
    unknown = api.client.delete(f"{api.base}/sessions/nobody/steps:last")
    assert unknown.status_code == 404

    api.append("e", "kept")
    assert api.client.post(f"{api.base}/sessions/e:end").status_code == 200
    ended = api.client.delete(f"{api.base}/sessions/e/steps:last")
    assert ended.status_code == 409 and "ended" in ended.json()["error"]["message"]
    assert contents(api, "e") == ["kept"]


def test_before_pages_back_through_a_session(api: Api) -> None:
    for i in range(5):
        api.append("long", f"s{i}")
    page = api.client.get(f"{api.base}/sessions/long/steps", params={"recent": 2, "before": 3})
    assert [s["content"] for s in page.json()["steps"]] == ["s1", "s2"]
    first = api.client.get(f"{api.base}/sessions/long/steps", params={"recent": 9, "before": 1})
    assert [s["content"] for s in first.json()["steps"]] == ["s0"]
    bad = api.client.get(f"{api.base}/sessions/long/steps", params={"before": -1})
    assert bad.status_code == 422
