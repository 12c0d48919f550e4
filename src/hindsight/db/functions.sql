-- The database's functions and triggers as they are at the newest migration (head): the
-- one place that says what they do now, and the one place to change them.
--
-- Layout. Each definition is a section that starts with `-- name: <what it creates>`. Lines
-- that start with `--`, like these, are notes for the reader and are left out of what runs;
-- a comment inside a function's body is indented and belongs to the body.
--
-- Who runs this file. Migrations, one definition at a time: the newest migration that wrote
-- a definition loads it from here (`hindsight.db.functions.load(name=pin)`), and older
-- migrations keep the versions they wrote inline, because they are history. A database
-- upgraded from nothing passes through every revision on its way to head, and the triggers
-- fire on the way (migrations and their downgrades rewrite rows), so each revision must
-- install the definitions it always did. The pin holds a migration to that: it is the
-- start of the SHA-256 of the text it loads, and loading fails once the text has changed.
-- tests/test_sql_definitions.py checks that a database at head has exactly the functions
-- and triggers written here, and no others.
--
-- To change a definition:
--   1. Find the migration that loads it now (grep its name in migrations/versions). Put the
--      text it loads into that migration as a constant, and execute the constant instead of
--      the load: that version is history now. (`git show HEAD:src/hindsight/db/functions.sql`
--      has the text.)
--   2. Change the definition here.
--   3. Write a migration whose upgrade loads it (`op.execute(functions.load(name=pin))`: a
--      wrong pin's error tells the right one) and whose downgrade executes the constant of
--      step 1 (`op.execute(functions.written_by(revision, "CONSTANT"))`).
-- A new definition: a section here, loaded by a new migration that drops it on downgrade.
-- Dropping one: a migration that drops it and restores it on downgrade as in step 3, with
-- step 1 done first; then remove its section.

-- name: hindsight_actor
CREATE OR REPLACE FUNCTION hindsight_actor() RETURNS text LANGUAGE sql STABLE AS $$
  SELECT coalesce(nullif(current_setting('hindsight.actor', true), ''), session_user::text)
$$;
COMMENT ON FUNCTION hindsight_actor() IS
  'Who is changing memories: the service sets hindsight.actor, else the database user.';

-- name: hindsight_tag_union
-- The tags a re-observation leaves on a memory: both lists, each tag once, sorted. A
-- function, because observe's upsert computes it in DO UPDATE SET, where Citus allows
-- neither a subquery nor a function that is not IMMUTABLE.
CREATE OR REPLACE FUNCTION hindsight_tag_union(a text[], b text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(DISTINCT t ORDER BY t), '{}') FROM unnest(a || b) AS t
$$;
COMMENT ON FUNCTION hindsight_tag_union(text[], text[]) IS
  'The tags of both lists, each once and sorted: what observing a memory again leaves.';

-- name: hindsight_history_write
-- History and keyword statistics are written by statement-level triggers with transition
-- tables: set-based (one INSERT per statement, not per row), exact under any concurrency,
-- and they record changes an operator makes by hand in psql too. The service sets
-- transaction-local settings before its writing statements: `hindsight.actor` (who),
-- `hindsight.reason` (why) and `hindsight.change` (a change's name where the trigger would
-- infer another). Live memories (active and cold) count in the keyword statistics, so
-- cooling or warming one changes no IDF; term 0 counts a namespace's live memories (BM25's N).
-- Which statuses are live is said once, by the generated column `live` (migration 0020),
-- which the transition tables carry like any other.
--
-- Each trigger first reads its transition tables into a value (a query on them alone), then
-- writes from that value with these two functions. On a Citus cluster the trigger runs on
-- the shard, and a statement that writes a distributed table there is planned by Citus,
-- which cannot see the transition tables ("could not find named tuplestore"); the rows it
-- writes belong to the co-located shards on the same node, which Citus allows a trigger.
-- (PL/pgSQL: Citus cannot plan a statement of a SQL-language function with parameters.)
CREATE OR REPLACE FUNCTION hindsight_history_write(entries jsonb) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO memory_history (memory_id, namespace, mem_key, change, memory_type, old_value,
                              new_value, old_confidence, new_confidence, observation_count,
                              source, actor, reason)
  SELECT e.memory_id, e.namespace, e.mem_key, e.change, e.memory_type, e.old_value,
         e.new_value, e.old_confidence, e.new_confidence, e.observation_count, e.source,
         e.actor, e.reason
  FROM jsonb_populate_recordset(NULL::memory_history, entries) e;
END $$;
COMMENT ON FUNCTION hindsight_history_write(jsonb) IS
  'Appends history entries (a JSON array of memory_history rows) for the triggers.';

-- name: hindsight_keyword_deltas
CREATE OR REPLACE FUNCTION hindsight_keyword_deltas(deltas jsonb) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO keyword_stats (namespace, term, df)
  SELECT d.namespace, d.term, d.df FROM jsonb_populate_recordset(NULL::keyword_stats, deltas) d;
END $$;
COMMENT ON FUNCTION hindsight_keyword_deltas(jsonb) IS
  'Appends keyword and label document-frequency deltas (a JSON array) for the triggers.';

-- name: hindsight_ltm_inserted
CREATE OR REPLACE FUNCTION hindsight_ltm_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  entries jsonb;
  deltas jsonb;
BEGIN
  SELECT jsonb_agg(e) INTO entries FROM (
    SELECT n.id AS memory_id, n.namespace, n.mem_key,
           CASE WHEN n.status = 'quarantined' THEN 'quarantined' ELSE 'created' END AS change,
           n.memory_type, NULL AS old_value, n.mem_value AS new_value, NULL AS old_confidence,
           n.confidence AS new_confidence, n.observation_count, n.source,
           hindsight_actor() AS actor,
           nullif(current_setting('hindsight.reason', true), '') AS reason
    FROM new_rows n) e;

  SELECT jsonb_agg(d) INTO deltas FROM (
    SELECT t.namespace, t.term, count(*) AS df
    FROM (SELECT n.namespace, unnest(n.keyword_terms || 0) AS term
          FROM new_rows n WHERE n.live) t
    GROUP BY t.namespace, t.term) d;
  PERFORM hindsight_history_write(entries), hindsight_keyword_deltas(deltas);
  RETURN NULL;
END $$;
COMMENT ON FUNCTION hindsight_ltm_inserted() IS
  'Writes created history entries and keyword document-frequency deltas.';

-- name: hindsight_ltm_updated
-- A live memory sent to review (a contradiction the source may not settle) is a
-- `quarantined` entry, as a claim stored for review is; before 0034 it read `updated`.
CREATE OR REPLACE FUNCTION hindsight_ltm_updated() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  entries jsonb;
  deltas jsonb;
BEGIN
  SELECT jsonb_agg(e) INTO entries FROM (
    SELECT n.id AS memory_id, n.namespace, n.mem_key,
           CASE
             WHEN o.status = 'quarantined' AND n.status <> 'quarantined'
               THEN coalesce(nullif(current_setting('hindsight.change', true), ''),
                             'approved')
             WHEN o.status = n.status
                  OR (o.status = 'cold' AND n.status = 'active'
                      AND o.mem_value IS DISTINCT FROM n.mem_value) THEN
               CASE
                 WHEN o.mem_value IS DISTINCT FROM n.mem_value
                   THEN coalesce(nullif(current_setting('hindsight.change', true), ''),
                                 'superseded')
                 WHEN n.observation_count > o.observation_count THEN 'reinforced'
                 ELSE 'updated'
               END
             WHEN n.status = 'quarantined' THEN 'quarantined'
             WHEN n.status = 'cold' THEN 'cooled'
             WHEN n.status = 'archived' THEN 'archived'
             WHEN o.status = 'cold' AND n.status = 'active' THEN 'warmed'
             WHEN n.status = 'active' THEN 'restored'
             ELSE 'updated'
           END AS change,
           n.memory_type, o.mem_value AS old_value, n.mem_value AS new_value,
           o.confidence AS old_confidence, n.confidence AS new_confidence,
           n.observation_count, n.source, hindsight_actor() AS actor,
           coalesce(nullif(current_setting('hindsight.reason', true), ''),
                    CASE WHEN o.status = 'cold' AND n.status = 'active'
                              AND n.last_observed > o.last_observed THEN 'observed again'
                    END) AS reason
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE (o.mem_key, o.mem_value, o.memory_type, o.confidence, o.observation_count, o.status,
           o.importance, o.tags, o.metadata, o.verified, o.permanent, o.source, o.expires_at,
           o.occurred_at)
          IS DISTINCT FROM
          (n.mem_key, n.mem_value, n.memory_type, n.confidence, n.observation_count, n.status,
           n.importance, n.tags, n.metadata, n.verified, n.permanent, n.source, n.expires_at,
           n.occurred_at)) e;

  SELECT jsonb_agg(x) INTO deltas FROM (
    SELECT d.namespace, d.term, sum(d.delta) AS df
    FROM (
      SELECT o.namespace, unnest(o.keyword_terms || 0) AS term, -1 AS delta
      FROM old_rows o JOIN new_rows n ON n.id = o.id
      WHERE o.live
        AND (NOT n.live OR n.keyword_terms IS DISTINCT FROM o.keyword_terms
             OR n.namespace <> o.namespace)
      UNION ALL
      SELECT n.namespace, unnest(n.keyword_terms || 0), 1
      FROM new_rows n JOIN old_rows o ON o.id = n.id
      WHERE n.live
        AND (NOT o.live OR n.keyword_terms IS DISTINCT FROM o.keyword_terms
             OR n.namespace <> o.namespace)
    ) d
    GROUP BY d.namespace, d.term
    HAVING sum(d.delta) <> 0) x;
  PERFORM hindsight_history_write(entries), hindsight_keyword_deltas(deltas);
  RETURN NULL;
END $$;
COMMENT ON FUNCTION hindsight_ltm_updated() IS
  'Writes history entries for real changes (not access counts) and keyword deltas.';

-- name: hindsight_ltm_deleted
-- A deletion erases: the memory's values and its source (a label that may name a person or
-- a conversation) leave every history entry; the tombstone keeps id, key, type, time, actor.
-- Memory ids are unique across namespaces, so matching ids within the namespaces deleted
-- from is matching (namespace, id) pairs, in a form Citus routes to the shard.
CREATE OR REPLACE FUNCTION hindsight_ltm_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ids uuid[];
  namespaces text[];
  entries jsonb;
  deltas jsonb;
BEGIN
  SELECT array_agg(o.id), array_agg(DISTINCT o.namespace) INTO ids, namespaces FROM old_rows o;
  IF ids IS NULL THEN  -- nothing deleted: ANY(NULL) would leave Citus no shard to route to
    RETURN NULL;
  END IF;
  UPDATE memory_history h SET old_value = NULL, new_value = NULL, source = NULL
  WHERE h.namespace = ANY(namespaces) AND h.memory_id = ANY(ids)
    AND (h.old_value IS NOT NULL OR h.new_value IS NOT NULL OR h.source IS NOT NULL);
  SELECT jsonb_agg(e) INTO entries FROM (
    SELECT o.id AS memory_id, o.namespace, o.mem_key,
           CASE WHEN current_setting('hindsight.change', true) IN ('expired', 'rejected')
                THEN current_setting('hindsight.change', true) ELSE 'deleted' END AS change,
           o.memory_type, NULL AS old_value, NULL AS new_value, o.confidence AS old_confidence,
           NULL AS new_confidence, o.observation_count, NULL AS source,
           hindsight_actor() AS actor,
           nullif(current_setting('hindsight.reason', true), '') AS reason
    FROM old_rows o) e;

  SELECT jsonb_agg(d) INTO deltas FROM (
    SELECT t.namespace, t.term, -count(*) AS df
    FROM (SELECT o.namespace, unnest(o.keyword_terms || 0) AS term
          FROM old_rows o WHERE o.live) t
    GROUP BY t.namespace, t.term) d;
  PERFORM hindsight_history_write(entries), hindsight_keyword_deltas(deltas);
  DELETE FROM memory_access a WHERE a.namespace = ANY(namespaces) AND a.memory_id = ANY(ids);
  RETURN NULL;
END $$;
COMMENT ON FUNCTION hindsight_ltm_deleted() IS
  'Writes deleted history entries and keyword deltas.';

-- name: long_term_memory_inserted
CREATE TRIGGER long_term_memory_inserted AFTER INSERT ON long_term_memory
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION hindsight_ltm_inserted();

-- name: long_term_memory_updated
CREATE TRIGGER long_term_memory_updated AFTER UPDATE ON long_term_memory
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION hindsight_ltm_updated();

-- name: long_term_memory_deleted
CREATE TRIGGER long_term_memory_deleted AFTER DELETE ON long_term_memory
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION hindsight_ltm_deleted();

-- name: hindsight_ltm_keyword_rows
-- memory_keywords holds, for every memory, what the keyword arm's posting lists and the
-- write path's twin check read of it (migration 0035): rows of ~0.1 kB, where a memory's
-- own row is ~1.2 kB with its embedding. A statement's rows whose copied columns changed
-- are deleted and written again: a change of terms, type, tags, expiry or status is rare, and a
-- reinforcement or an access changes none of them. Memory ids are unique across
-- namespaces, so matching ids within the namespaces changed is matching (namespace, id)
-- pairs, in a form Citus routes to the shard. (The transition tables are read first, as
-- above.)
CREATE OR REPLACE FUNCTION hindsight_ltm_keyword_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ids uuid[];
  namespaces text[];
  copies jsonb;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT jsonb_agg(c) INTO copies FROM (
      SELECT n.namespace, n.id, n.memory_type, n.tags, n.live, n.expires_at,
             n.keyword_terms, n.keywords
      FROM new_rows n) c;
  ELSIF TG_OP = 'UPDATE' THEN
    SELECT array_agg(o.id), array_agg(DISTINCT o.namespace) INTO ids, namespaces
    FROM old_rows o JOIN new_rows n ON n.id = o.id
    WHERE (o.namespace, o.memory_type, o.tags, o.live, o.expires_at, o.keyword_terms,
           o.keywords)
          IS DISTINCT FROM
          (n.namespace, n.memory_type, n.tags, n.live, n.expires_at, n.keyword_terms,
           n.keywords);
    IF ids IS NULL THEN  -- a reinforcement, an access: nothing the copy holds changed
      RETURN NULL;
    END IF;
    SELECT jsonb_agg(c) INTO copies FROM (
      SELECT n.namespace, n.id, n.memory_type, n.tags, n.live, n.expires_at,
             n.keyword_terms, n.keywords
      FROM new_rows n WHERE n.id = ANY(ids)) c;
  ELSE
    SELECT array_agg(o.id), array_agg(DISTINCT o.namespace) INTO ids, namespaces
    FROM old_rows o;
  END IF;
  IF ids IS NOT NULL THEN  -- ANY(NULL) would leave Citus no shard to route to
    DELETE FROM memory_keywords k WHERE k.namespace = ANY(namespaces) AND k.id = ANY(ids);
  END IF;
  IF copies IS NOT NULL THEN
    INSERT INTO memory_keywords (namespace, id, memory_type, tags, live, expires_at,
                                 keyword_terms, keywords)
    SELECT c.namespace, c.id, c.memory_type, c.tags, c.live, c.expires_at, c.keyword_terms,
           c.keywords
    FROM jsonb_populate_recordset(NULL::memory_keywords, copies) c;
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION hindsight_ltm_keyword_rows() IS
  'Keeps memory_keywords a copy of each memory''s terms, keyword vector, type, tags, '
  'expiry and liveness.';

-- name: long_term_memory_keywords_inserted
CREATE TRIGGER long_term_memory_keywords_inserted AFTER INSERT ON long_term_memory
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION hindsight_ltm_keyword_rows();

-- name: long_term_memory_keywords_updated
CREATE TRIGGER long_term_memory_keywords_updated AFTER UPDATE ON long_term_memory
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION hindsight_ltm_keyword_rows();

-- name: long_term_memory_keywords_deleted
CREATE TRIGGER long_term_memory_keywords_deleted AFTER DELETE ON long_term_memory
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION hindsight_ltm_keyword_rows();

-- name: hindsight_ltm_facet_rows
-- memory_facets holds what of each memory recall filters by and a reinforcement or the
-- lifecycle changes after it is written: its confidence, importance and last observation,
-- with its liveness, each with an index (migration 0038; 0036 began it as memory_confidence).
-- Through them recall counts and reads the few memories a high min_confidence or
-- min_importance, or a narrow observed_* window, admits, instead of walking the HNSW graph
-- until it meets them. The memory's own row has no such indexes: one would make every
-- reinforcement (the confidence and last observation), session demotion and consolidation
-- (the importance) a non-HOT update that enters the row into the HNSW graph again. Here
-- such a change rewrites a row of a few dozen bytes and its four b-tree entries, and, when
-- the confidence or importance moves to another bucket of 0.05, appends keyword_stats
-- deltas; a change of anything else (an access, a tier move, new tags) writes nothing. (The
-- transition tables are read first, as above.) The buckets count the live memories per
-- confidence (migration 0037) and importance (0038) as the labels are counted: recall
-- decides from them whether a bound admits few enough to narrow by, without reading index
-- entries.
-- The rows travel as jsonb, whose float8 text follows extra_float_digits: set here, as
-- PostgreSQL 12+ defaults it, so that a server or role configured lower (0: 15 digits)
-- cannot round the importance on its way into the copy.
CREATE OR REPLACE FUNCTION hindsight_ltm_facet_rows() RETURNS trigger
LANGUAGE plpgsql SET extra_float_digits = 1 AS $$
DECLARE
  ids uuid[];
  namespaces text[];
  copies jsonb;
  deltas jsonb;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT jsonb_agg(c) INTO copies FROM (
      SELECT n.namespace, n.id, n.live, n.confidence, n.importance, n.last_observed
      FROM new_rows n) c;
    SELECT jsonb_agg(d) INTO deltas FROM (
      SELECT n.namespace, t.term, count(*) AS df
      FROM new_rows n, unnest(hindsight_facet_terms(n.confidence, n.importance)) t(term)
      WHERE n.live GROUP BY 1, 2) d;
  ELSIF TG_OP = 'UPDATE' THEN
    SELECT array_agg(o.id), array_agg(DISTINCT o.namespace) INTO ids, namespaces
    FROM old_rows o JOIN new_rows n ON n.id = o.id
    WHERE (o.namespace, o.live, o.confidence, o.importance, o.last_observed) IS DISTINCT FROM
          (n.namespace, n.live, n.confidence, n.importance, n.last_observed);
    IF ids IS NULL THEN
      RETURN NULL;
    END IF;
    SELECT jsonb_agg(c) INTO copies FROM (
      SELECT n.namespace, n.id, n.live, n.confidence, n.importance, n.last_observed
      FROM new_rows n WHERE n.id = ANY(ids)) c;
    SELECT jsonb_agg(d) INTO deltas FROM (
      SELECT b.namespace, b.term, sum(b.delta) AS df FROM (
        SELECT o.namespace, t.term, -1 AS delta
        FROM old_rows o, unnest(hindsight_facet_terms(o.confidence, o.importance)) t(term)
        WHERE o.live AND o.id = ANY(ids)
        UNION ALL
        SELECT n.namespace, t.term, 1
        FROM new_rows n, unnest(hindsight_facet_terms(n.confidence, n.importance)) t(term)
        WHERE n.live AND n.id = ANY(ids)) b
      GROUP BY b.namespace, b.term HAVING sum(b.delta) <> 0) d;
  ELSE
    SELECT array_agg(o.id), array_agg(DISTINCT o.namespace) INTO ids, namespaces
    FROM old_rows o;
    SELECT jsonb_agg(d) INTO deltas FROM (
      SELECT o.namespace, t.term, -count(*) AS df
      FROM old_rows o, unnest(hindsight_facet_terms(o.confidence, o.importance)) t(term)
      WHERE o.live GROUP BY 1, 2) d;
  END IF;
  IF ids IS NOT NULL THEN  -- ANY(NULL) would leave Citus no shard to route to
    DELETE FROM memory_facets c WHERE c.namespace = ANY(namespaces) AND c.id = ANY(ids);
  END IF;
  IF copies IS NOT NULL THEN
    INSERT INTO memory_facets (namespace, id, live, confidence, importance, last_observed)
    SELECT c.namespace, c.id, c.live, c.confidence, c.importance, c.last_observed
    FROM jsonb_populate_recordset(NULL::memory_facets, copies) c;
  END IF;
  IF deltas IS NOT NULL THEN
    PERFORM hindsight_keyword_deltas(deltas);
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION hindsight_ltm_facet_rows() IS
  'Keeps memory_facets a copy of each memory''s confidence, importance, last observation and '
  'liveness, and the live memories'' counts per confidence and importance bucket in '
  'keyword_stats.';

-- name: hindsight_confidence_term
-- The keyword_stats term that counts a namespace's live memories in one confidence bucket
-- of 0.05 (migration 0037): bucket 0 holds 0-0.05, bucket 19 0.95-1.0, bucket 20 1.0 alone.
-- The terms lie below every label's (hindsight_label_term: -1 to -2^30), so no tag or
-- memory type can share one, whatever its name.
CREATE OR REPLACE FUNCTION hindsight_confidence_term(confidence numeric) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT -1073741825 - least(greatest(floor(confidence * 20), 0), 20)::integer $$;
COMMENT ON FUNCTION hindsight_confidence_term(numeric) IS
  'The keyword_stats term (below -2^30) counting live memories in a confidence''s bucket.';

-- name: hindsight_confidence_terms
-- The terms of the buckets at and above `bound`'s, its own first: a min_confidence admits
-- all of every bucket but its own, and some of that one.
CREATE OR REPLACE FUNCTION hindsight_confidence_terms(bound numeric) RETURNS integer[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT ARRAY(SELECT hindsight_confidence_term(b::numeric / 20)
               FROM generate_series(greatest(floor(bound * 20), 0)::integer, 20) b ORDER BY b)
$$;
COMMENT ON FUNCTION hindsight_confidence_terms(numeric) IS
  'The keyword_stats terms counting live memories in the confidence buckets a bound reaches, '
  'its own bucket first.';

-- name: hindsight_importance_bucket
-- The bucket of 0.05 an importance falls in, 0-20 (20: 1.0 alone), against the edges as
-- float8, the importance's own type, so that a bucket holds exactly the values at or above
-- its edge and below the next. (Through numeric, 0.29999999999999993, below 0.3, would
-- land in 0.3's bucket: the cast keeps 15 digits.)
CREATE OR REPLACE FUNCTION hindsight_importance_bucket(importance double precision)
RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT greatest(width_bucket(importance, '{0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4,
    0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1}'::float8[]) - 1, 0)
$$;
COMMENT ON FUNCTION hindsight_importance_bucket(double precision) IS
  'The bucket of 0.05 (0-20) an importance falls in, edges compared as float8.';

-- name: hindsight_importance_term
-- The keyword_stats term that counts a namespace's live memories in one importance bucket
-- (migration 0038): 21 terms below the confidence's, which end at -1073741845.
CREATE OR REPLACE FUNCTION hindsight_importance_term(importance double precision)
RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT -1073741846 - hindsight_importance_bucket(importance) $$;
COMMENT ON FUNCTION hindsight_importance_term(double precision) IS
  'The keyword_stats term (below -2^30) counting live memories in an importance''s bucket.';

-- name: hindsight_importance_terms
-- The terms of the buckets at and above `bound`'s, its own first, as for the confidence.
CREATE OR REPLACE FUNCTION hindsight_importance_terms(bound double precision)
RETURNS integer[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT ARRAY(SELECT -1073741846 - b
               FROM generate_series(hindsight_importance_bucket(bound), 20) b ORDER BY b)
$$;
COMMENT ON FUNCTION hindsight_importance_terms(double precision) IS
  'The keyword_stats terms counting live memories in the importance buckets a bound reaches, '
  'its own bucket first.';

-- name: hindsight_facet_terms
-- The two bucket terms a live memory counts under.
CREATE OR REPLACE FUNCTION hindsight_facet_terms(confidence numeric, importance double precision)
RETURNS integer[] LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ARRAY[hindsight_confidence_term(confidence), hindsight_importance_term(importance)] $$;
COMMENT ON FUNCTION hindsight_facet_terms(numeric, double precision) IS
  'The keyword_stats terms of a memory''s confidence bucket and importance bucket.';

-- name: long_term_memory_facets_inserted
CREATE TRIGGER long_term_memory_facets_inserted AFTER INSERT ON long_term_memory
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION hindsight_ltm_facet_rows();

-- name: long_term_memory_facets_updated
CREATE TRIGGER long_term_memory_facets_updated AFTER UPDATE ON long_term_memory
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION hindsight_ltm_facet_rows();

-- name: long_term_memory_facets_deleted
CREATE TRIGGER long_term_memory_facets_deleted AFTER DELETE ON long_term_memory
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION hindsight_ltm_facet_rows();

-- name: hindsight_session_ended
-- An ended session's event and experience memories are demoted a policy delay later; the
-- lifecycle pass reads this queue. (The transition tables are read first, as above.)
CREATE OR REPLACE FUNCTION hindsight_session_ended() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ended jsonb;
BEGIN
  SELECT jsonb_agg(e) INTO ended FROM (
    SELECT n.namespace, n.session_id, coalesce(n.ended_at, now()) AS ended_at
    FROM new_rows n
    JOIN old_rows o ON o.namespace = n.namespace AND o.session_id = n.session_id
    WHERE o.status <> 'ended' AND n.status = 'ended') e;
  INSERT INTO session_demotions (namespace, session_id, ended_at)
  SELECT e.namespace, e.session_id, e.ended_at
  FROM jsonb_populate_recordset(NULL::session_demotions, ended) e
  ON CONFLICT (namespace, session_id) DO NOTHING;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION hindsight_session_ended() IS
  'Queues an ended session for the demotion of the event memories it produced.';

-- name: working_sessions_ended
CREATE TRIGGER working_sessions_ended AFTER UPDATE ON working_sessions
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION hindsight_session_ended();

-- name: hindsight_labels
-- Recall narrows a selective filter through a GIN index over these labels (migration 0024,
-- stores/narrowing.py), and knows how long a label's posting list is from keyword_stats,
-- where hindsight_ltm_label_stats() counts live memories per label under a negative term.
CREATE OR REPLACE FUNCTION hindsight_labels(namespace text, memory_type text, tags text[])
RETURNS text[] LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  labels text[] := ARRAY[namespace || '/type:' || memory_type];
  tag text;
BEGIN
  FOREACH tag IN ARRAY coalesce(tags, '{}') LOOP
    labels := labels || (namespace || '/tag:' || tag);
  END LOOP;
  RETURN labels;
END $$;
COMMENT ON FUNCTION hindsight_labels(text, text, text[]) IS
  'A memory''s labels for the GIN index recall narrows filters with: namespace/type:T and '
  'namespace/tag:T for each tag (a namespace holds no slash).';

-- name: hindsight_label_term
-- hashtextextended, as hash partitioning uses it: stable across PostgreSQL versions
CREATE OR REPLACE FUNCTION hindsight_label_term(label text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT (-1 - (hashtextextended(label, 0) & 1073741823))::integer $$;
COMMENT ON FUNCTION hindsight_label_term(text) IS
  'The keyword_stats term (negative) counting a label: type:T or tag:T.';


-- name: hindsight_label_terms
CREATE OR REPLACE FUNCTION hindsight_label_terms(memory_type text, tags text[]) RETURNS integer[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT ARRAY(SELECT DISTINCT hindsight_label_term(l)
               FROM unnest(array_prepend('type:' || memory_type,
                                         ARRAY(SELECT 'tag:' || t FROM unnest(tags) t))) l)
$$;

-- name: hindsight_ltm_label_stats
CREATE OR REPLACE FUNCTION hindsight_ltm_label_stats() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  deltas jsonb;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT jsonb_agg(x) INTO deltas FROM (
      SELECT n.namespace, t.term, count(*) AS df
      FROM new_rows n, unnest(hindsight_label_terms(n.memory_type, n.tags)) t(term)
      WHERE n.live
      GROUP BY n.namespace, t.term) x;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT jsonb_agg(x) INTO deltas FROM (
      SELECT o.namespace, t.term, -count(*) AS df
      FROM old_rows o, unnest(hindsight_label_terms(o.memory_type, o.tags)) t(term)
      WHERE o.live
      GROUP BY o.namespace, t.term) x;
  ELSE
    SELECT jsonb_agg(x) INTO deltas FROM (
      SELECT d.namespace, d.term, sum(d.delta) AS df
      FROM (
        SELECT o.namespace, unnest(hindsight_label_terms(o.memory_type, o.tags)) AS term,
               -1 AS delta
        FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE o.live
          AND (NOT n.live OR n.memory_type <> o.memory_type
               OR n.tags IS DISTINCT FROM o.tags OR n.namespace <> o.namespace)
        UNION ALL
        SELECT n.namespace, unnest(hindsight_label_terms(n.memory_type, n.tags)), 1
        FROM new_rows n JOIN old_rows o ON o.id = n.id
        WHERE n.live
          AND (NOT o.live OR n.memory_type <> o.memory_type
               OR n.tags IS DISTINCT FROM o.tags OR n.namespace <> o.namespace)
      ) d
      GROUP BY d.namespace, d.term
      HAVING sum(d.delta) <> 0) x;
  END IF;
  PERFORM hindsight_keyword_deltas(deltas);
  RETURN NULL;
END $$;

-- name: long_term_memory_labels_inserted
CREATE TRIGGER long_term_memory_labels_inserted AFTER INSERT ON long_term_memory
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION hindsight_ltm_label_stats();

-- name: long_term_memory_labels_updated
CREATE TRIGGER long_term_memory_labels_updated AFTER UPDATE ON long_term_memory
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION hindsight_ltm_label_stats();

-- name: long_term_memory_labels_deleted
CREATE TRIGGER long_term_memory_labels_deleted AFTER DELETE ON long_term_memory
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION hindsight_ltm_label_stats();
