-- On a Citus coordinator, after `hindsight db distribute`: how each table is placed, and
-- how evenly the namespaces' rows spread over the workers (`hindsight doctor` checks the
-- placement against Hindsight's plan; this shows the sizes).
--   psql "$COORDINATOR_URL" -f sql/citus/check.sql
SELECT table_name, citus_table_type, distribution_column, colocation_id, shard_count,
       table_size
FROM citus_tables ORDER BY colocation_id, table_name;

SELECT nodename, nodeport, count(*) AS shards,
       pg_size_pretty(sum(shard_size)) AS size
FROM citus_shards WHERE table_name = 'long_term_memory'::regclass
GROUP BY nodename, nodeport ORDER BY nodename, nodeport;
