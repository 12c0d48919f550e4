-- The latest recalls in a namespace; set query to '' for all of them.
-- psql "$URL" -v ns=demo -v query=color -f sql/recent_recalls.sql
SELECT r.created_at,
       r.id AS recall_id,
       r.query,
       r.k,
       cardinality(r.result_ids) AS returned,
       round(r.duration_ms::numeric, 2) AS ms,
       r.actor
FROM recall_log r
WHERE r.namespace = :'ns' AND r.query ILIKE '%' || :'query' || '%'
ORDER BY r.created_at DESC
LIMIT 50;
