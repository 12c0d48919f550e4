"""Hindsight on a real Citus cluster (a coordinator and two workers the tests start): from
an empty cluster to serving with `hindsight db upgrade` and `hindsight db distribute`, a
migration written after distributing, every statement of an observe, a recall and a step
append on one shard, the doctor's Citus checks, a deployment moved from a single
PostgreSQL, and the contract's tests run again against the coordinator (imported below:
the same tests, with this module's fixtures: `server` and `migrated` are a distributed
database, `module_db` another one)."""

from __future__ import annotations

import asyncio
import re
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from hindsight.config import Settings
from hindsight.db import citus
from hindsight.db.urls import psycopg_url
from hindsight.services.roles import Role
from hindsight.stores import specificity
from tests.conftest import Api, make_settings
from tests.support.citus import BIN, Node, PgCluster, log_position, logged, routes
from tests.support.cli import hindsight
from tests.support.copies import copies_drift
from tests.support.labels import label_drift
from tests.support.poll import wait_until
from tests.support.servers import ThreadServer

# The contract, run again here against the coordinator.
from tests.test_concurrency import (  # noqa: F401
    test_concurrent_first_observations_create_one_memory,
    test_overlapping_batches_do_not_deadlock_or_lose_counts,
)
from tests.test_consolidation import (  # noqa: F401
    test_deterministic_consolidation_observes_marked_steps,
    test_running_it_again_changes_nothing,
)
from tests.test_doctor import (  # noqa: F401
    test_a_broken_setup_fails_with_the_fix,
    test_a_good_setup_passes,
)
from tests.test_erasure import (  # noqa: F401
    stack,
    test_a_canary_through_every_path_is_nowhere_after_erase,
    test_erase_from_the_cli,
)
from tests.test_export import (  # noqa: F401
    test_export_then_import_reproduces_the_namespace,
    test_restore_refuses_a_used_namespace_or_a_cut_file,
)
from tests.test_import import test_import_redacts_secrets_like_any_write  # noqa: F401
from tests.test_lifecycle import (  # noqa: F401
    test_capacity_archives_the_lowest_value_down_to_the_cap,
    test_ending_a_session_demotes_its_events_after_the_delay,
    test_hard_expiry_hides_then_purges_and_a_new_observation_starts_over,
    test_memories_cool_archive_and_go_by_policy_and_permanent_ones_never,
    test_retroactive_merge_folds_near_duplicates_under_different_keys,
    test_the_periodic_pass_runs_once_per_interval_across_replicas,
    test_two_schedulers_at_once_do_no_double_work,
)
from tests.test_mcp import (  # noqa: F401
    test_export_and_erase_a_namespace_over_mcp,
    test_http_round_trip_and_every_tool,
)
from tests.test_memories import (  # noqa: F401
    test_changes_made_in_psql_are_in_the_history,
    test_delete_leaves_a_tombstone_without_the_value,
    test_new_value_supersedes_and_history_keeps_the_old_one,
    test_observe_creates_then_reinforces_with_exact_confidence,
    test_patch_updates_and_is_recorded,
)
from tests.test_memory_keywords import (  # noqa: F401
    test_the_copy_follows_a_memory_through_every_state,
    writer,
)
from tests.test_near_duplicates import VALUE
from tests.test_policy import (  # noqa: F401
    test_feedback_is_checked_stored_once_and_auditable,
    test_feedback_over_mcp,
)
from tests.test_recall import (  # noqa: F401
    test_every_result_explains_its_score,
    test_filters,
    test_recall_raises_access_count_and_last_accessed,
)
from tests.test_roles import make_key
from tests.test_working_memory import (  # noqa: F401
    test_appending_extends_the_whole_session,
    test_concurrent_appends_get_distinct_consecutive_indexes,
    test_ended_session_refuses_steps_and_delete_removes_everything,
    test_expired_steps_vanish_and_the_purge_deletes_them,
    test_idempotency_key_makes_retries_harmless,
    test_steps_get_increasing_indexes_and_read_back_in_order,
)

pytestmark = pytest.mark.citus
ROOT = Path(__file__).resolve().parent.parent

# few shards per table: the tests' namespaces still spread over both workers, and
# distributing takes a second instead of ten
SHARDS = 4


def upgrade_and_distribute(url: str, revision: str = "head") -> None:
    """What an operator runs on the coordinator, with the CLI."""
    done = hindsight("db", "upgrade", revision, database_url=url)
    assert done.returncode == 0, done.stderr
    done = hindsight("db", "distribute", "--shard-count", str(SHARDS), database_url=url)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def migrated(citus_cluster: PgCluster) -> Iterator[str]:
    with citus_cluster.database() as url:
        upgrade_and_distribute(url)
        yield url


@pytest.fixture(scope="module")
def module_db(citus_cluster: PgCluster) -> Iterator[str]:
    """A second distributed database, for a module server whose embedder differs (the
    erasure suite's `stack`)."""
    with citus_cluster.database() as url:
        upgrade_and_distribute(url)
        yield url


@pytest.fixture
def fresh_db(migrated: str) -> str:
    """The shared distributed database, for the doctor's suite (what it breaks, it
    repairs) and the lifecycle's pass over every namespace."""
    return migrated


@pytest.fixture(scope="module")
def server(migrated: str, redis_url: str) -> Iterator[ThreadServer]:
    with ThreadServer(make_settings(), migrated, redis_url) as srv:
        yield srv


@pytest.fixture(scope="module")
def settings() -> Settings:
    return make_settings()


def test_every_table_is_placed_and_a_second_run_changes_nothing(
    citus_cluster: PgCluster, migrated: str
) -> None:
    cluster, problems = citus.status(migrated)
    assert problems == []
    assert len(cluster.workers) == 2
    for p in citus.PLAN:
        assert cluster.placed[p.table] == p
    again = hindsight("db", "distribute", database_url=migrated)
    assert again.returncode == 0, again.stderr
    assert "every table was placed already" in again.stdout
    with psycopg.connect(migrated) as conn:
        nodes = conn.execute(
            "SELECT count(DISTINCT nodename || nodeport) FROM citus_shards "
            "WHERE table_name = 'long_term_memory'::regclass"
        ).fetchone()
    assert nodes == (2,)  # the namespaces' shards are spread over both workers
    # the operator's view of it (sql/citus/check.sql): every table, the shards per worker
    shown = subprocess.run(
        [
            str(BIN / "psql"),
            migrated,
            "-X",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
            "-f",
            "sql/citus/check.sql",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert {p.table for p in citus.PLAN} <= {line.split("|")[0] for line in shown.splitlines()}
    per_worker = {tuple(line.split("|")[:3]) for line in shown.splitlines() if line.count("|") == 3}
    assert {(host, int(port), int(n)) for host, port, n in per_worker} == {
        ("127.0.0.1", w.port, SHARDS // 2) for w in citus_cluster.workers_
    }


def test_a_migration_written_after_distributing_applies(
    citus_cluster: PgCluster, redis_url: str
) -> None:
    """Distributed at 0027, then upgraded: 0028 replaces the trigger functions on every
    node, and the triggers then write history (with who) and keyword statistics on the
    shards; 0035 distributes the table it creates, which its triggers write on the shards
    and the keyword arm of a large namespace reads."""
    with citus_cluster.database() as url:
        upgrade_and_distribute(url, "0027")
        done = hindsight("db", "upgrade", database_url=url)
        assert done.returncode == 0, done.stderr
        assert citus.status(url)[1] == []
        with ThreadServer(make_settings(exact_search_max_rows=0), url, redis_url) as srv:
            api = Api.at(srv.url, "after-0028")
            made = api.observe({"key": "user.city", "value": "Lisbon", "tags": ["home"]})
            api.observe({"key": "user.city", "value": "Porto"})
            history = api.history(made[0]["id"])
            found = api.recall("Porto", k=3, tags=["home"])["results"]
            api.client.close()
        assert [h["change"] for h in history] == ["created", "superseded"]
        assert {h["actor"] for h in history} == {"bootstrap-admin"}
        assert [r["value"] for r in found] == ["Porto"]
        with psycopg.connect(url) as conn:
            terms = conn.execute(
                "SELECT count(*) FROM keyword_stats WHERE namespace = 'after-0028'"
            ).fetchone()
        assert terms is not None and terms[0] > 0
        assert copies_drift(url, "after-0028") == []
        # and back down past it and up again on the cluster: the copy is made anew
        for step in (("downgrade", "0034"), ("upgrade",)):
            done = hindsight("db", *step, database_url=url)
            assert done.returncode == 0, done.stderr
        assert copies_drift(url, "after-0028") == []
        assert label_drift(url, "after-0028") == []  # the confidence buckets counted anew
        assert citus.status(url)[1] == []
        # at 0038 memory_confidence is back (0039 drops it), placed and known to the plan
        done = hindsight("db", "downgrade", "0038", database_url=url)
        assert done.returncode == 0, done.stderr
        assert citus.status(url)[1] == []
        again = hindsight("db", "distribute", database_url=url)
        assert again.returncode == 0, again.stderr
        done = hindsight("db", "upgrade", database_url=url)
        assert done.returncode == 0, done.stderr
        assert citus.status(url)[1] == []


def test_distribute_without_citus_says_what_to_do(empty_db: str) -> None:
    done = hindsight("db", "distribute", database_url=empty_db)
    assert done.returncode == 1
    assert "Citus is not installed in this database" in done.stderr
    assert "CREATE EXTENSION citus" in done.stderr


def test_distribute_before_the_schema_says_to_upgrade(citus_cluster: PgCluster) -> None:
    with citus_cluster.database() as url:
        done = hindsight("db", "distribute", database_url=url)
    assert done.returncode == 1
    assert "run `hindsight db upgrade` first" in done.stderr


# Statements that are not plans: the transaction's bounds, settings, and what psycopg asks
# the catalog when it connects
_NOT_PLANNED = re.compile(
    r"^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|SET|SHOW|select pg_catalog|select "
    r"current_schema)\b",
    re.IGNORECASE,
)
# a shard by its name: Citus running a part of a statement logged already, on the
# coordinator's own placement of a reference table
_SHARD = re.compile(r"\bpublic\.\w+_\d+\b")
ROUTED = ("Citus Adaptive", 1, 0)
_SET_LOCAL = re.compile(r"SET LOCAL ([\w.]+) = ([^;]+)")


def shard_settings_of_searches(
    node: Node, user: str, since: int
) -> dict[str, list[dict[str, str]]]:
    """On a worker: the SET LOCAL settings in force (sent earlier in the same transaction)
    when each search of a long_term_memory shard ran, by the search's kind: `recall` (an arm
    of recall) or `write` (observe's near-duplicate check)."""
    found: dict[str, list[dict[str, str]]] = {"recall": [], "write": []}
    in_force: dict[str, dict[str, str]] = {}  # worker session -> its transaction's settings
    for s in logged(node, user, since):
        if s.text.startswith("BEGIN"):
            in_force[s.session] = {}
        in_force.setdefault(s.session, {}).update(
            (name, value.strip()) for name, value in _SET_LOCAL.findall(s.text)
        )
        if "long_term_memory_" in s.text and "<=>" in s.text:
            kind = "write" if s.text.startswith("WITH size AS") else "recall"
            found[kind].append(dict(in_force[s.session]))
        if s.text.startswith(("COMMIT", "ROLLBACK", "PREPARE TRANSACTION")):
            in_force[s.session] = {}
    return found


def test_each_statement_of_an_observe_a_recall_and_an_append_runs_on_one_shard(
    citus_cluster: PgCluster, migrated: str, redis_url: str
) -> None:
    """The coordinator's log (log_statement = all, for a role of this test's server) gives
    every statement the requests ran, with its parameters; each is EXPLAINed on the
    coordinator: one Citus task on the namespace's worker, nothing run first and collected
    on the coordinator. The workers' logs show the search settings reached the shard."""
    role = "plans_" + uuid.uuid4().hex[:8]
    with psycopg.connect(migrated, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN SUPERUSER")
        conn.execute(f"ALTER ROLE {role} SET log_statement = 'all'")  # Citus: every node
    ns = "plans-" + uuid.uuid4().hex[:8]
    coordinator = citus_cluster.coordinator
    # every namespace searched as a large one: observe's near-duplicate check reads the
    # claims' word groups from the keyword postings, then walks the embedding's graph
    settings = make_settings(dedup_threshold=0.9, exact_search_max_rows=0)
    url = migrated.replace("postgres@", f"{role}@")
    try:
        with ThreadServer(settings, url, redis_url) as srv:
            since = {n.name: log_position(n) for n in citus_cluster.nodes}
            api = Api.at(srv.url, ns)
            api.observe(
                {"key": "user.commute", "value": VALUE, "tags": ["travel"]},
                {"key": "user.city", "value": "lives in Oslo"},
            )
            (twin,) = api.observe({"key": "user.commutes", "value": VALUE})  # near-identical
            # an expired key observed again: its old claim is deleted first
            (pin,) = api.observe({"key": "user.pin", "value": "1234", "ttl_seconds": 60})
            with psycopg.connect(migrated, autocommit=True) as conn:  # not the logged role
                conn.execute(
                    "UPDATE long_term_memory SET expires_at = now() - interval '1 second' "
                    "WHERE namespace = %s AND id = %s",
                    (ns, pin["id"]),
                )
            assert api.observe({"key": "user.pin", "value": "1234"})[0]["outcome"] == "created"
            assert twin["outcome"] == "reinforced" and twin["key"] == "user.commute"
            found = api.recall("which train does the user take", k=3)["results"]
            assert found[0]["key"] == "user.commute"
            assert api.recall("train", k=3, tags=["travel"])["results"]  # narrowed by label
            # a filter memory_keywords does not hold: its postings probe the memories' rows
            probed = api.recall("which train", k=3, min_confidence=0.1)["results"]
            assert probed[0]["key"] == "user.commute"
            # admitting none (no more than the exact-search limit of 0): the statements
            # that count them per bucket (keyword_stats, migrations 0037, 0038) or through
            # memory_facets' indexes, and read what they admit from there, run on one
            # shard too
            assert api.recall("which train", k=3, min_confidence=0.99)["results"] == []
            assert api.recall("which train", k=3, min_importance=0.99)["results"] == []
            long_ago = {"observed_before": "2001-01-01T00:00:00Z"}
            assert api.recall("which train", k=3, **long_ago)["results"] == []
            # a conversation: its keyword scores are shares of each memory's kept mass
            said = [
                {"role": "user", "content": "I commute every day"},
                {"role": "assistant", "content": "By train or by bus?"},
            ]
            talked = api.recall("which train?", k=3, context=said)["results"]
            assert talked[0]["key"] == "user.commute"
            api.append("s", "one")
            api.append("s", "two")
            wait_until(
                lambda: api.get(found[0]["id"])["access_count"] == 4, "the recalls are counted"
            )
            api.client.close()
        # what the maintenance pass runs to compute specificities and masses ahead, for
        # the namespace's memories (the walk that picks them spans namespaces)
        ids = [uuid.UUID(m["id"]) for m in (found[0], pin, twin)]
        asyncio.run(refresh_namespace(url, ns, ids))
        statements = logged(coordinator, role, since[coordinator.name])
        with psycopg.connect(migrated, autocommit=True) as conn:
            (home,) = conn.execute(
                "SELECT nodename || ':' || nodeport FROM citus_shards WHERE shardid = "
                "get_shard_id_for_distribution_column('long_term_memory', %s::text)",
                (ns,),
            ).fetchone() or (None,)
            planned, wrong = [], []
            for s in statements:
                if _NOT_PLANNED.match(s.text) or _SHARD.search(s.text) or "pg_type" in s.text:
                    continue
                plan = conn.execute(f"EXPLAIN (FORMAT JSON) {s.with_literals()}").fetchone()
                found_routes = routes(plan[0] if plan else None)
                if not found_routes:
                    continue  # the coordinator's own catalog
                shown = " ".join(s.text.split())[:100]
                planned.append(shown)
                # one scan, one task, nothing run before it
                if [(r.provider, r.tasks, r.subplans) for r in found_routes] != [ROUTED]:
                    wrong.append(f"{found_routes}: {shown}")
                elif (ns in s.text or ns in s.params) and found_routes[0].nodes != {home}:
                    wrong.append(f"on {set(found_routes[0].nodes)}, not {home}: {shown}")
        workers = {
            w.name: shard_settings_of_searches(w, role, since[w.name])
            for w in citus_cluster.workers_
        }
        # the postings lookup ran on the shard, within the namespace
        postings = [
            s.text
            for w in citus_cluster.workers_
            for s in logged(w, role, since[w.name])
            if "keyword_terms" in s.text and "@>" in s.text and s.text.startswith("WITH size AS")
        ]
    finally:
        with psycopg.connect(migrated, autocommit=True) as conn:
            conn.execute(f"DROP ROLE {role}")
    assert wrong == []
    # what each request runs was seen: observe (deletion of an expired key, the near-duplicate
    # search, the twin's lock, the upsert), recall (both arms, the log, the access counts)
    # and the step append (session, steps)
    for start in (
        "DELETE FROM long_term_memory",
        "WITH size AS",
        "SELECT id, mem_key AS key, mem_value AS value FROM long_term_memory",
        "INSERT INTO long_term_memory",
        "WITH stats AS",
        "WITH corpus AS",
        "INSERT INTO recall_log",
        "INSERT INTO memory_access",
        "INSERT INTO working_sessions",
        "INSERT INTO working_memory",
    ):
        assert any(p.startswith(start) for p in planned), (start, planned)
    searches = [w for worker in workers.values() for w in worker["recall"]]
    assert len(searches) == 14  # seven recalls, two arms each
    for applied in searches:
        assert applied["hnsw.ef_search"] == str(settings.hnsw_ef_search)
        assert applied["hnsw.iterative_scan"] == "relaxed_order"
        assert applied["enable_sort"] == "off"
    assert postings
    writes = [w for worker in workers.values() for w in worker["write"]]
    assert writes and all(w["hnsw.iterative_scan"] == "relaxed_order" for w in writes)


def test_doctor_reports_a_healthy_cluster(migrated: str, redis_url: str, tmp_path: Path) -> None:
    done = hindsight("doctor", database_url=migrated, redis_url=redis_url, data_dir=str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    (line,) = [x for x in done.stdout.splitlines() if x.split()[1:2] == ["citus"]]
    assert line.startswith("ok "), line
    assert "2 workers; every table placed as planned; citus 13.2" in line
    assert "on all 3 nodes" in line


def test_doctor_names_what_is_wrong_with_the_cluster_and_its_fix_mends_it(
    migrated: str, redis_url: str, tmp_path: Path
) -> None:
    def doctor() -> subprocess.CompletedProcess[str]:
        return hindsight(
            "doctor", database_url=migrated, redis_url=redis_url, data_dir=str(tmp_path)
        )

    with psycopg.connect(migrated, autocommit=True) as conn:
        conn.execute("SELECT undistribute_table('namespace_lifecycle')")
        name = conn.execute("SELECT current_database()").fetchone()[0]  # type: ignore[index]
        conn.execute(f"ALTER DATABASE {name} RESET citus.enable_unsafe_triggers")
    broken = doctor()
    assert broken.returncode == 1, broken.stdout
    out = broken.stdout
    assert "FAIL  citus          namespace_lifecycle is not distributed" in out, out
    assert "citus.enable_unsafe_triggers is 'off' for the database, not 'on'" in out
    assert "2 problem(s) found" in out
    fixes = {line.split("fix: ", 1)[1] for line in out.splitlines() if "fix: " in line}
    assert fixes == {
        "hindsight db distribute",
        "hindsight db distribute (it sets it for the database)",
    }
    mended = hindsight("db", "distribute", database_url=migrated)
    assert mended.returncode == 0, mended.stderr
    assert "placed namespace_lifecycle: distributed by namespace" in mended.stdout
    assert doctor().returncode == 0


def _snapshot(url: str) -> dict[str, int]:
    """Rows of every table of the plan."""
    with psycopg.connect(url) as conn:
        return {
            p.table: conn.execute(f"SELECT count(*) FROM {p.table}").fetchone()[0]  # type: ignore[index]
            for p in citus.PLAN
        }


def _hindsight_functions(url: str) -> dict[str, str]:
    """Hindsight's functions on each node of the database (a sorted list of names)."""
    listed = (
        "SELECT string_agg(proname, ',' ORDER BY proname) FROM pg_proc "
        "WHERE proname LIKE 'hindsight%'"
    )
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT nodename || ':' || nodeport, result "
            f"FROM run_command_on_all_nodes($${listed}$$) JOIN pg_dist_node USING (nodeid)"
        ).fetchall()
    return dict(rows)


def _use(api: Api) -> dict[str, Any]:
    """A policy, memories with history, steps, a recall with feedback: what the namespace
    looks like afterwards."""
    policy = {"capacity": {"max_active_memories": 50}}
    assert api.client.put(f"{api.base}/policy", json=policy).status_code == 200
    city, _ = api.observe(
        {"key": "user.city", "value": "lives in Lisbon", "tags": ["home"]},
        {"key": "user.food", "value": "likes grilled sardines"},
    )
    api.observe({"key": "user.city", "value": "lives in Porto"})  # history
    for step in ("booked the train", "packed the bags"):
        api.append("trip", step)
    found = api.recall("where does the user live", k=2)
    used = {"used": [found["results"][0]["id"]]}
    feedback = f"{api.base}/recalls/{found['recall_id']}/feedback"
    assert api.client.post(feedback, json=used).json()["recorded"] == 1
    wait_until(lambda: api.get(city["id"])["access_count"] == 1, "the recall to be counted")
    return _seen(api, city["id"])


def _seen(api: Api, memory_id: str) -> dict[str, Any]:
    hits = api.recall("sardines", k=1)["results"]
    return {
        "memory": api.get(memory_id),
        "history": api.history(memory_id),
        "steps": api.steps("trip"),
        "recall": [(h["key"], h["value"]) for h in hits],
    }


async def refresh_namespace(url: str, ns: str, ids: list[uuid.UUID]) -> None:
    conn = await psycopg.AsyncConnection.connect(
        psycopg_url(url), autocommit=True, row_factory=dict_row
    )
    async with conn:
        await specificity.refresh_namespace(conn, ns, ids)


def test_a_deployment_moves_from_postgresql_to_the_cluster_and_loses_nothing(
    citus_cluster: PgCluster, redis_url: str, tmp_path: Path
) -> None:
    """docs/citus.md's move, step by step: served on a single PostgreSQL 15, dumped,
    restored into the coordinator, distributed, served from the coordinator."""
    namespaces = [f"move-{i}-{uuid.uuid4().hex[:6]}" for i in range(3)]
    with PgCluster(workers=0, citus=False) as single:
        old = single.create_database("hindsight")
        assert hindsight("db", "upgrade", database_url=old).returncode == 0
        writer = make_key(old, Role.WRITER, namespaces[:1])
        before: dict[str, dict[str, Any]] = {}
        with ThreadServer(make_settings(), old, redis_url) as srv:
            for ns in namespaces:
                api = Api.at(srv.url, ns)
                before[ns] = _use(api)
                api.client.close()
        counts = _snapshot(old)
        dump = tmp_path / "hindsight.dump"
        subprocess.run([str(BIN / "pg_dump"), "-Fc", "-f", str(dump), old], check=True)

    with citus_cluster.database() as new:
        restored = subprocess.run(
            [str(BIN / "pg_restore"), "--no-owner", "--exit-on-error", "-d", new, str(dump)],
            capture_output=True,
            text=True,
        )
        assert restored.returncode == 0, restored.stderr
        done = hindsight("db", "distribute", "--shard-count", str(SHARDS), database_url=new)
        assert done.returncode == 0, done.stderr
        assert citus.status(new)[1] == []
        # the rows were copied into the shards, not written again by the triggers
        assert _snapshot(new) == counts
        functions = _hindsight_functions(new)
        assert len(functions) == 3 and len(set(functions.values())) == 1, functions
        with ThreadServer(make_settings(), new, redis_url) as srv:
            for ns in namespaces:
                api = Api.at(srv.url, ns)
                assert _seen(api, before[ns]["memory"]["id"]) == before[ns]
                api.client.close()
            # a key made before the move still works, and a change is recorded on the shard
            api = Api.at(srv.url, namespaces[0], writer)
            (moved,) = api.observe({"key": "user.city", "value": "lives in Braga"})
            assert moved["outcome"] == "superseded"
            last = api.history(moved["id"])[-1]
            assert (last["change"], last["value"]) == ("superseded", "lives in Braga")
            assert last["actor"].startswith("writer-")  # the key's name
            api.client.close()
