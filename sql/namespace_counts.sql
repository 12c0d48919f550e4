-- Per namespace: memories by status, average confidence, sessions, live steps, recalls.
-- psql "$URL" -f sql/namespace_counts.sql
WITH memories AS (
    SELECT m.namespace,
           count(*) FILTER (WHERE status = 'active')   AS active,
           count(*) FILTER (WHERE status = 'archived') AS archived,
           round(avg(confidence) FILTER (WHERE status = 'active'), 3) AS avg_confidence,
           sum(a.access_count) AS accesses
    FROM long_term_memory m
    LEFT JOIN memory_access a ON a.namespace = m.namespace AND a.memory_id = m.id
    GROUP BY m.namespace
),
sessions AS (
    SELECT namespace, count(*) AS sessions,
           count(*) FILTER (WHERE status = 'active' AND expires_at > now()) AS active_sessions
    FROM working_sessions GROUP BY namespace
),
steps AS (
    SELECT namespace, count(*) AS live_steps
    FROM working_memory WHERE expires_at > now() GROUP BY namespace
),
recalls AS (
    SELECT namespace, count(*) AS recalls_last_day
    FROM recall_log WHERE created_at > now() - interval '1 day' GROUP BY namespace
)
SELECT n.namespace,
       coalesce(m.active, 0)            AS active_memories,
       coalesce(m.archived, 0)          AS archived_memories,
       m.avg_confidence,
       coalesce(m.accesses, 0)          AS accesses,
       coalesce(s.sessions, 0)          AS sessions,
       coalesce(s.active_sessions, 0)   AS active_sessions,
       coalesce(w.live_steps, 0)        AS live_steps,
       coalesce(r.recalls_last_day, 0)  AS recalls_last_day
FROM (SELECT namespace FROM memories UNION SELECT namespace FROM sessions
      UNION SELECT namespace FROM recalls) n
LEFT JOIN memories m USING (namespace)
LEFT JOIN sessions s USING (namespace)
LEFT JOIN steps w USING (namespace)
LEFT JOIN recalls r USING (namespace)
ORDER BY n.namespace;
