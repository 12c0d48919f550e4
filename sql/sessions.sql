-- A namespace's working-memory sessions: status, steps, expiry.
-- psql "$URL" -v ns=demo -f sql/sessions.sql
SELECT s.session_id,
       s.status,
       s.next_step AS steps_written,
       (SELECT count(*) FROM working_memory w
        WHERE w.namespace = s.namespace AND w.session_id = s.session_id
          AND w.expires_at > now()) AS live_steps,
       s.created_at,
       s.updated_at,
       s.ended_at,
       s.expires_at,
       s.expires_at <= now() AS expired
FROM working_sessions s
WHERE s.namespace = :'ns'
ORDER BY s.updated_at DESC;
