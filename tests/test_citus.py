"""Hindsight on a real Citus cluster (a coordinator and two workers the tests start): from
an empty cluster to serving with `hindsight db upgrade` and `hindsight db distribute`, a
migration written after distributing, and the contract's tests run again against the
coordinator (imported below: the same tests, with this module's fixtures: `server` and
`migrated` are a distributed database, `module_db` another one)."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from hindsight.config import Settings
from hindsight.db import citus
from tests.conftest import Api, make_settings
from tests.support.citus import PgCluster
from tests.support.cli import hindsight
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
from tests.test_policy import (  # noqa: F401
    test_feedback_is_checked_stored_once_and_auditable,
    test_feedback_over_mcp,
)
from tests.test_recall import (  # noqa: F401
    test_every_result_explains_its_score,
    test_filters,
    test_recall_raises_access_count_and_last_accessed,
)
from tests.test_working_memory import (  # noqa: F401
    test_concurrent_appends_get_distinct_consecutive_indexes,
    test_ended_session_refuses_steps_and_delete_removes_everything,
    test_steps_get_increasing_indexes_and_read_back_in_order,
)

pytestmark = pytest.mark.citus

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
    """The doctor's suite checks the shared distributed database (what it breaks, it
    repairs)."""
    return migrated


@pytest.fixture(scope="module")
def server(migrated: str, redis_url: str) -> Iterator[ThreadServer]:
    with ThreadServer(make_settings(), migrated, redis_url) as srv:
        yield srv


@pytest.fixture(scope="module")
def settings() -> Settings:
    return make_settings()


def test_every_table_is_placed_and_a_second_run_changes_nothing(migrated: str) -> None:
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


def test_a_migration_written_after_distributing_applies(
    citus_cluster: PgCluster, redis_url: str
) -> None:
    """Distributed at 0027, then upgraded: 0028 replaces the trigger functions on every
    node, and the triggers then write history (with who) and keyword statistics on the
    shards."""
    with citus_cluster.database() as url:
        upgrade_and_distribute(url, "0027")
        done = hindsight("db", "upgrade", database_url=url)
        assert done.returncode == 0, done.stderr
        with ThreadServer(make_settings(), url, redis_url) as srv:
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
