-- Distribute Hindsight's tables over a Citus cluster by namespace.
--
-- Run once, on the coordinator, on a database at schema revision 0017 or later
-- (`hindsight db upgrade`), after `CREATE EXTENSION citus;` and adding the workers:
--
--   psql "$COORDINATOR_URL" -v ON_ERROR_STOP=1 -f sql/citus/distribute.sql
--
-- Existing rows are copied into the shards (each call locks its table against writes until
-- it is done); stop the API replicas meanwhile. Every statement Hindsight runs on a
-- namespace-scoped table filters on namespace, so each recall, observe and step append
-- is routed to the one shard holding that namespace.

BEGIN;

-- 64 shards a table: several per worker, so the cluster can grow to 64 workers by moving
-- shards (citus_rebalance_start) instead of re-sharding.
SET LOCAL citus.shard_count = 64;
-- The history and keyword-statistics triggers on long_term_memory must travel to its
-- shards (see README, "Moving to Citus": verify them on a staging cluster first).
SET LOCAL citus.enable_unsafe_triggers = on;

-- Small tables that every node reads: one full copy on each node.
SELECT create_reference_table('hindsight_meta');
SELECT create_reference_table('api_keys');
-- The job queue is claimed across namespaces (FOR UPDATE SKIP LOCKED), which Citus runs
-- on a reference table but not across the shards of a distributed one. Jobs are few.
SELECT create_reference_table('consolidation_jobs');
-- `hindsight import`'s progress (which lines of an input are written): an operator's
-- bookkeeping, a row per import and, while one runs, per line written.
SELECT create_reference_table('bulk_imports');
SELECT create_reference_table('bulk_import_lines');
-- The record of each namespace erasure (no values): read by imports, written by erasures;
-- its column is `erased_namespace`, so erasing a namespace never deletes it.
SELECT create_reference_table('namespace_erasures');

-- Namespace-scoped tables: one co-location group, so a namespace's rows of every table
-- sit on the same node and statements joining them on namespace stay on it.
SELECT create_distributed_table('long_term_memory', 'namespace');
SELECT create_distributed_table('memory_access', 'namespace', colocate_with => 'long_term_memory');
SELECT create_distributed_table('memory_history', 'namespace', colocate_with => 'long_term_memory');
SELECT create_distributed_table('keyword_stats', 'namespace', colocate_with => 'long_term_memory');
SELECT create_distributed_table('recall_log', 'namespace', colocate_with => 'long_term_memory');
SELECT create_distributed_table('working_sessions', 'namespace', colocate_with => 'long_term_memory');
-- after working_sessions: its foreign key (namespace, session_id) is co-located
SELECT create_distributed_table('working_memory', 'namespace', colocate_with => 'long_term_memory');
-- the lifecycle's per-namespace policy, scheduler state, pending demotions and feedback
SELECT create_distributed_table('namespace_policy', 'namespace', colocate_with => 'long_term_memory');
SELECT create_distributed_table('namespace_lifecycle', 'namespace', colocate_with => 'long_term_memory');
SELECT create_distributed_table('session_demotions', 'namespace', colocate_with => 'long_term_memory');
SELECT create_distributed_table('recall_feedback', 'namespace', colocate_with => 'long_term_memory');

-- The embedding cache is keyed by content, shared by every namespace: sharded by hash.
SELECT create_distributed_table('embedding_cache', 'content_hash', colocate_with => 'none');

-- alembic_version stays a plain table on the coordinator, where migrations run.

COMMIT;
