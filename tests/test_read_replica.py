"""Recall, lists and history from a physical streaming replica (made with `pg_basebackup
-R` on loopback): served there while it keeps up, from the primary when the caller must
see its own write (an erasure too), when the replica lags too far, and when it is down;
each choice counted on /metrics."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator

import psycopg
import pytest

from tests.conftest import Api, make_settings
from tests.support.pg_replica import StreamingPair
from tests.support.poll import wait_until
from tests.support.scrape import value
from tests.support.servers import ThreadServer, create_database

pytestmark = pytest.mark.timeout(180)
MAX_LAG = 3.0
# A bound no test comes near, for a reader whose reads never go to the primary for lag: on
# a busy machine more than MAX_LAG can pass between a write and the reads after it, and a
# read meant to go to the primary as the caller's own write went there as `lagging`
PATIENT_LAG = 600.0
ROUTES = "hindsight_read_routes_total"
LAG = "hindsight_read_replica_lag_seconds"


@pytest.fixture(scope="module")
def pair() -> Iterator[StreamingPair]:
    made = StreamingPair().start()
    try:
        yield made
    finally:
        made.stop()


@pytest.fixture(scope="module")
def primary_db(pair: StreamingPair) -> str:
    url = create_database(pair.primary_url, "hs_read")
    pair.wait_caught_up()
    return url


@pytest.fixture(scope="module")
def reader(pair: StreamingPair, primary_db: str, redis_url: str) -> Iterator[ThreadServer]:
    settings = make_settings(
        database_read_url=pair.url(pair.replica_port, "hs_read"),
        read_replica_max_lag_seconds=MAX_LAG,
        read_replica_probe_interval_seconds=0.1,
    )
    with ThreadServer(settings, primary_db, redis_url) as srv:
        yield srv


@pytest.fixture
def patient(pair: StreamingPair, primary_db: str, redis_url: str) -> Iterator[ThreadServer]:
    """A reader with the bound PATIENT_LAG; only for as long as a test (this process's
    replica lag gauge is set by the probe of every reader alive: both measure the same lag,
    though, while the replica answers)."""
    settings = make_settings(
        database_read_url=pair.url(pair.replica_port, "hs_read"),
        read_replica_max_lag_seconds=PATIENT_LAG,
        read_replica_probe_interval_seconds=0.1,
    )
    with ThreadServer(settings, primary_db, redis_url) as srv:
        # until its first probe it knows no lag, and reads from the primary (as `down`)
        wait_until(lambda: srv.core.reads.lag_seconds is not None, "a first probe")
        yield srv


@pytest.fixture(scope="module")
def writer(primary_db: str, redis_url: str) -> Iterator[ThreadServer]:
    """Another API process on the same primary: its writes are not the reader's own."""
    with ThreadServer(make_settings(), primary_db, redis_url) as srv:
        yield srv


@pytest.fixture
def apis(reader: ThreadServer, writer: ThreadServer, ns: str) -> Iterator[tuple[Api, Api]]:
    pair = (Api.at(reader.url, ns), Api.at(writer.url, ns))
    yield pair
    for api in pair:
        api.client.close()


def counts(server: ThreadServer) -> dict[str, int]:
    c: dict[str, int] = server.core.reads.counters()
    return c


def scrape(api: Api) -> str:
    r = api.client.get("/metrics")
    assert r.status_code == 200, r.text
    return r.text


def routed(text: str, reason: str) -> float:
    """The metric's count for a counters() key (`replica`: served by the replica)."""
    if reason == "replica":
        return value(text, ROUTES, target="replica", reason="caught_up")
    return value(text, ROUTES, target="primary", reason=reason)


def keys(api: Api, query: str) -> set[str]:
    return {r["key"] for r in api.recall(query, k=5)["results"]}


def listed(api: Api) -> set[str]:
    r = api.client.get(f"{api.base}/memories")
    assert r.status_code == 200, r.text
    return {m["key"] for m in r.json()["memories"]}


@pytest.fixture
def paused(pair: StreamingPair) -> Iterator[float]:
    """Replay stopped on the replica (it still answers, with what it had): the marker that
    tells a read served by the replica from one served by the primary."""
    pair.wait_caught_up()
    pair.replica_sql("SELECT pg_wal_replay_pause()")
    try:
        yield time.monotonic()
    finally:
        pair.replica_sql("SELECT pg_wal_replay_resume()")


def test_recall_lists_and_history_come_from_the_replica(
    apis: tuple[Api, Api], reader: ThreadServer, patient: ThreadServer, pair: StreamingPair
) -> None:
    mine, other = apis
    # reads what the replica has however long the reads take (mine falls back after MAX_LAG)
    steady = Api.at(patient.url, mine.ns)
    (city,) = other.observe({"key": "user.city", "value": "Tromsø in the north"})
    pair.wait_caught_up()
    wait_until(lambda: "user.city" in keys(mine, "Tromsø"), "the replica to serve user.city")
    wait_until(lambda: 0 <= value(scrape(mine), LAG) < MAX_LAG, "a lag measured within the bound")
    # the lag runs from the last commit the replica replayed, before the pause: the bound is
    # measured from here, not from after the writes below (CI took 0.7 s over them)
    paused_at = time.monotonic()
    pair.replica_sql("SELECT pg_wal_replay_pause()")
    try:
        other.observe({"key": "user.dog", "value": "a beagle called Rex"})
        # reinforced (by a source: the same key recalled it, so a bare repeat is an echo)
        other.observe({"key": "user.city", "value": "Tromsø in the north", "source": "user"})
        before, scraped_before = counts(patient), scrape(mine)

        def from_the_replica() -> tuple[set[str], set[str], int] | None:
            served = counts(patient)["replica"]
            dog, listing = keys(steady, "beagle called Rex"), listed(steady)
            history = len(steady.history(city["id"]))
            # two recall arms, list, history; on a busy machine a probe of the replica can
            # fail, and reads go to the primary (as down) until the next: ask again then
            return (dog, listing, history) if counts(patient)["replica"] - served >= 4 else None

        # the replica has neither the dog nor the reinforcement; the primary has both
        dog, listing, history = wait_until(from_the_replica, "four reads from the replica")
        assert "user.dog" not in dog
        assert "user.dog" in keys(other, "beagle called Rex")
        assert listing == {"user.city"}
        assert listed(other) == {"user.city", "user.dog"}
        assert history == 1
        assert len(other.history(city["id"])) == 2
        after, scraped_after = counts(patient), scrape(mine)
        # the metric counts what the router did (no other router read meanwhile)
        for reason in after:
            moved = routed(scraped_after, reason) - routed(scraped_before, reason)
            assert moved == after[reason] - before[reason], reason
        # once the replica is further behind than the bound, reads go to the primary
        lagging = counts(reader)["lagging"]
        wait_until(lambda: "user.dog" in keys(mine, "beagle called Rex"), "falling back", 15)
        assert time.monotonic() - paused_at >= MAX_LAG - 0.5
        assert counts(reader)["lagging"] > lagging
        assert routed(scrape(mine), "lagging") > routed(scraped_after, "lagging")
        wait_until(lambda: value(scrape(mine), LAG) > MAX_LAG, "the lag gauge to pass the bound")
    finally:
        pair.replica_sql("SELECT pg_wal_replay_resume()")
        steady.client.close()


def test_a_caller_reads_its_own_write(patient: ThreadServer, paused: float, ns: str) -> None:
    mine = Api.at(patient.url, ns)
    elsewhere = Api.at(patient.url, ns + "-elsewhere")
    mine.observe({"key": "user.tea", "value": "green tea without sugar"})
    before = counts(patient)
    # the replica cannot have it (replay is paused): these reads went to the primary
    assert "user.tea" in keys(mine, "green tea")
    assert listed(mine) == {"user.tea"}
    moved = {k: v - before[k] for k, v in counts(patient).items()}
    # as the caller's own write (or as down, if a probe of the replica failed meanwhile on
    # a busy machine): never to the replica
    assert moved["replica"] == 0 and moved["own_write"] + moved["down"] >= 3, moved
    assert time.monotonic() - paused < PATIENT_LAG

    # another namespace, not written, still reads from the replica
    def elsewhere_from_the_replica() -> bool:
        served = counts(patient)["replica"]
        elsewhere.recall("green tea")
        return counts(patient)["replica"] - served == 2

    wait_until(elsewhere_from_the_replica, "another namespace to read from the replica")
    mine.client.close()
    elsewhere.client.close()


def test_recall_works_with_the_replica_down(
    apis: tuple[Api, Api], reader: ThreadServer, pair: StreamingPair
) -> None:
    mine, other = apis
    other.observe({"key": "user.bike", "value": "a red gravel bike"})
    pair.wait_caught_up()
    wait_until(lambda: "user.bike" in keys(mine, "gravel bike"), "the replica to serve user.bike")
    before, scraped_before = counts(reader), scrape(mine)
    pair.stop_replica()
    try:
        for _ in range(5):
            assert "user.bike" in keys(mine, "gravel bike")
            assert listed(mine) == {"user.bike"}
        after = counts(reader)
        assert after["down"] > before["down"]
        scraped = scrape(mine)
        assert routed(scraped, "down") - routed(scraped_before, "down") == (
            after["down"] - before["down"]
        )
        wait_until(lambda: math.isnan(value(scrape(mine), LAG)), "the lag gauge to say down")
    finally:
        pair.start_replica()
    # and it is read again once it is back
    back = counts(reader)["replica"]
    wait_until(
        lambda: "user.bike" in keys(mine, "gravel bike") and counts(reader)["replica"] > back,
        "the replica to be read again after its restart",
    )


def test_an_erased_namespace_is_not_read_from_the_replica(
    apis: tuple[Api, Api], patient: ThreadServer, pair: StreamingPair
) -> None:
    _, other = apis
    mine = Api.at(patient.url, other.ns)
    other.observe({"key": "user.boat", "value": "a wooden sailing boat"})
    pair.wait_caught_up()
    wait_until(lambda: listed(mine) == {"user.boat"}, "the replica to serve user.boat")
    pair.replica_sql("SELECT pg_wal_replay_pause()")
    try:
        started = time.monotonic()
        r = mine.client.delete(mine.base)
        assert r.status_code == 200, r.text
        before = counts(patient)
        assert listed(mine) == set()
        assert keys(mine, "wooden sailing boat") == set()
        assert time.monotonic() - started < PATIENT_LAG, "too slow to tell replica from primary"
        moved = {k: v - before[k] for k, v in counts(patient).items()}
        # list and two recall arms, from the primary: as the caller's own write (or as down,
        # if a probe of the replica failed meanwhile on a busy machine), never the replica
        assert moved["replica"] == 0 and moved["own_write"] + moved["down"] == 3, moved
        # and the replica does still hold it: only the routing kept it out of the answers
        with psycopg.connect(pair.url(pair.replica_port, "hs_read")) as conn:
            row = conn.execute(
                "SELECT count(*) FROM long_term_memory WHERE namespace = %s", (mine.ns,)
            ).fetchone()
        assert row == (1,)
    finally:
        pair.replica_sql("SELECT pg_wal_replay_resume()")
        mine.client.close()
