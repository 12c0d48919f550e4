"""Echo (issue 31): an agent storing back what recall just gave it is not observing the
claim again. The echo changes nothing and says so; real re-observation still reinforces."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from hindsight.services.roles import Role
from tests.conftest import ADMIN_KEY, Api
from tests.support.poll import wait_until
from tests.support.scrape import value
from tests.support.servers import ThreadServer
from tests.test_mcp import call, over_http, run
from tests.test_roles import make_key

ECHOES = "hindsight_observe_outcomes_total"


@pytest.fixture
def agents(server: ThreadServer, migrated: str, ns: str) -> Iterator[dict[str, Api]]:
    made = {
        "one": Api.at(server.url, ns, make_key(migrated, Role.WRITER, [ns])),
        "other": Api.at(server.url, ns, make_key(migrated, Role.WRITER, [ns])),
    }
    yield made
    for a in made.values():
        a.client.close()


def stored(agent: Api, **fields: Any) -> dict[str, Any]:
    (result,) = agent.observe({"key": "user.tea", "value": "oolong", **fields})
    return result


def recalled(agent: Api) -> list[str]:
    return [h["value"] for h in agent.recall("which tea does the user drink")["results"]]


def echo_count(server: ThreadServer) -> float:
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {ADMIN_KEY}"}) as c:
        return value(c.get("/metrics").text, ECHOES, outcome="echoed")


def test_storing_back_what_recall_returned_changes_nothing(
    agents: dict[str, Api], server: ThreadServer
) -> None:
    one = agents["one"]
    first = stored(one)
    assert first["outcome"] == "created"
    before = echo_count(server)
    assert "oolong" in recalled(one)

    echo = stored(one)
    assert echo["outcome"] == "echoed", echo
    assert "recall returned this memory to this API key" in echo["reason"]
    assert (echo["id"], echo["confidence"], echo["observation_count"]) == (
        first["id"],
        first["confidence"],
        1,
    )
    memory = one.get(first["id"])
    assert (memory["confidence"], memory["observation_count"]) == (first["confidence"], 1)
    assert [h["change"] for h in one.history(first["id"])] == ["created"]
    assert echo_count(server) == before + 1


def test_real_re_observation_still_reinforces(agents: dict[str, Api]) -> None:
    one, other = agents["one"], agents["other"]
    first = stored(one)
    # not recalled: the same key saying it again reinforces, as always
    assert stored(one)["outcome"] == "reinforced"
    assert "oolong" in recalled(one)
    # another key saw it too
    assert stored(other)["outcome"] == "reinforced"
    # the recalling key, with a source that saw it for itself
    again = stored(one, source="user")
    assert again["outcome"] == "reinforced"
    assert one.get(first["id"])["observation_count"] == 4


def test_an_echo_names_the_source_it_repeats(agents: dict[str, Api]) -> None:
    """Sending the stored memory's own source label back is no new source."""
    one = agents["one"]
    stored(one, source="notes")
    assert "oolong" in recalled(one)
    assert stored(one, source="notes")["outcome"] == "echoed"


def test_the_window_closes_and_can_be_turned_off(agents: dict[str, Api], api: Api) -> None:
    one = agents["one"]
    r = api.client.put(f"{api.base}/policy", json={"trust": {"echo_window_seconds": 1}})
    assert r.status_code == 200, r.text
    stored(one)
    assert "oolong" in recalled(one)
    assert stored(one)["outcome"] == "echoed"
    # an echo changes nothing, so asking again until the window has passed is harmless
    wait_until(
        lambda: stored(one)["outcome"] == "reinforced",
        "a re-observation after the echo window to reinforce",
        timeout=15,
        interval=0.2,
    )

    r = api.client.put(f"{api.base}/policy", json={"trust": {"echo_window_seconds": 0}})
    assert r.status_code == 200, r.text
    assert "oolong" in recalled(one)
    assert stored(one)["outcome"] == "reinforced"


def test_an_mcp_agent_echoing_recall_is_caught_too(server: ThreadServer, ns: str) -> None:
    async def go() -> None:
        async with over_http(server.url) as client:
            first = await call(client, "observe", key="user.tea", value="oolong", namespace=ns)
            found = await call(client, "recall", query="which tea", namespace=ns)
            assert [h["id"] for h in found["results"]] == [first["id"]]
            echo = await call(client, "observe", key="user.tea", value="oolong", namespace=ns)
            assert echo["outcome"] == "echoed"
            assert echo["observation_count"] == 1

    run(go)
