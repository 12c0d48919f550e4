-- A memory's life through the tiers: every status change (cooled, warmed, archived,
-- restored, expired, deleted) with its reason and who made it, oldest first, and the
-- feedback and access counts it has now.
-- psql "$URL" -v ns=demo -v key=user.name -f sql/tier_history.sql
SELECT h.changed_at,
       h.change,
       h.reason,
       h.actor,
       h.new_confidence,
       h.memory_id,
       coalesce(a.access_count, 0) AS access_count,
       coalesce(a.used_count, 0) AS used_count,
       coalesce(a.unused_count, 0) AS unused_count
FROM memory_history h
LEFT JOIN memory_access a ON a.memory_id = h.memory_id
WHERE h.namespace = :'ns' AND h.mem_key = :'key'
  AND (h.change IN ('created', 'cooled', 'warmed', 'archived', 'restored', 'expired', 'deleted')
       OR h.reason IS NOT NULL)
ORDER BY h.id;
