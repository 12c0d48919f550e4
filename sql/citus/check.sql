-- After distribute.sql: how each table is distributed, and how evenly the namespaces'
-- rows spread over the nodes.
--   psql "$COORDINATOR_URL" -f sql/citus/check.sql
SELECT table_name, citus_table_type, distribution_column, colocation_id, shard_count,
       table_size
FROM citus_tables ORDER BY colocation_id, table_name;

SELECT nodename, nodeport, count(*) AS shards,
       pg_size_pretty(sum(shard_size)) AS size
FROM citus_shards WHERE table_name = 'long_term_memory'::regclass
GROUP BY nodename, nodeport ORDER BY nodename, nodeport;
