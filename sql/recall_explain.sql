-- What one recall returned and why: rank, score and each component of the score.
-- psql "$URL" -v ns=demo -v recall_id=<recall_id from the API> -f sql/recall_explain.sql
SELECT r.created_at,
       r.query,
       r.actor,
       r.filters,
       x.rank,
       x.item ->> 'key'                                      AS key,
       x.item ->> 'value'                                    AS value,
       round((x.item ->> 'score')::numeric, 4)               AS score,
       round((x.item -> 'components' ->> 'relevance')::numeric, 4)  AS relevance,
       round((x.item -> 'components' ->> 'similarity')::numeric, 4) AS similarity,
       round((x.item -> 'components' ->> 'keyword')::numeric, 4)    AS keyword,
       (x.item -> 'components' ->> 'confidence')::numeric    AS confidence,
       (x.item -> 'components' ->> 'access_count')::bigint   AS access_count
FROM recall_log r
CROSS JOIN LATERAL jsonb_array_elements(r.results) WITH ORDINALITY AS x(item, rank)
WHERE r.namespace = :'ns' AND r.id = :'recall_id'::uuid
ORDER BY x.rank;
