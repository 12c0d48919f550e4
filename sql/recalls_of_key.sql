-- "Why did the agent say that?": the recalls that returned a key, newest first.
-- psql "$URL" -v ns=demo -v key=user.name -f sql/recalls_of_key.sql
SELECT r.created_at,
       r.id AS recall_id,
       r.query,
       r.actor,
       x.rank,
       round((x.item ->> 'score')::numeric, 4) AS score,
       x.item ->> 'value'                      AS value_returned
FROM recall_log r
CROSS JOIN LATERAL jsonb_array_elements(r.results) WITH ORDINALITY AS x(item, rank)
WHERE r.namespace = :'ns' AND x.item ->> 'key' = :'key'
ORDER BY r.created_at DESC
LIMIT 50;
