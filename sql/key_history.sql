-- What changed for a key: every value and confidence it had, oldest first.
-- psql "$URL" -v ns=demo -v key=user.name -f sql/key_history.sql
SELECT h.changed_at,
       h.change,
       h.old_value,
       h.new_value,
       h.old_confidence,
       h.new_confidence,
       h.observation_count,
       h.source,
       h.actor,
       h.memory_id
FROM memory_history h
WHERE h.namespace = :'ns' AND h.mem_key = :'key'
ORDER BY h.id;
