"""Long-term memory's tables: the memories themselves, their change history, the keyword
statistics of their BM25 arm, and the embedding cache.

The embedding column's width is fixed when the schema is created (it follows the embedding
model), so the model declares it without one; `hindsight.db.schema` reads the real width.
"""

from __future__ import annotations

from pgvector.sqlalchemy import HALFVEC, SPARSEVEC
from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Computed,
    Float,
    Identity,
    Index,
    Integer,
    LargeBinary,
    Numeric,
    PrimaryKeyConstraint,
    Table,
    Text,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID

from hindsight import limits
from hindsight.db.models.base import _in, _timestamp, metadata
from hindsight.text.tokenize import KEYWORD_DIMENSIONS

MEMORY_TYPES = limits.MEMORY_TYPES
MEMORY_STATUSES = ("active", "cold", "archived", "quarantined")
# Recalled and holding their key: the statuses the unique index and keyword statistics cover.
LIVE_STATUSES = ("active", "cold")

long_term_memory = Table(
    "long_term_memory",
    metadata,
    Column("id", UUID(as_uuid=True), comment="Stable id of this key's memory."),
    Column("namespace", Text, nullable=False, comment="Agent, user or tenant; nothing crosses it."),
    Column(
        "memory_type",
        Text,
        nullable=False,
        comment="fact, preference, experience, reflection, relation, event or summary.",
    ),
    Column(
        "mem_key",
        Text,
        nullable=False,
        comment="What the claim is about; one active memory per (namespace, key).",
    ),
    Column("mem_value", Text, nullable=False, comment="The claim itself."),
    Column(
        "embedding",
        HALFVEC(),
        nullable=False,
        comment="Unit vector of key and value from "
        "the embedding model recorded in hindsight_meta (half precision).",
    ),
    Column(
        "keywords",
        SPARSEVEC(KEYWORD_DIMENSIONS),
        nullable=False,
        comment="BM25 saturated term frequencies of key and value, indexed by term hash.",
    ),
    Column(
        "keyword_terms",
        ARRAY(Integer),
        nullable=False,
        comment="Sorted term hashes of keywords; feeds the document frequencies in keyword_stats.",
    ),
    Column(
        "confidence",
        Numeric(5, 4),
        nullable=False,
        comment="Belief in the claim, 0..1; "
        "each re-observation of the same value adds the reinforcement step.",
    ),
    Column(
        "importance",
        Float,
        nullable=False,
        server_default=text("0.5"),
        comment="How much the claim matters to the agent, 0..1.",
    ),
    Column(
        "observation_count",
        Integer,
        nullable=False,
        server_default=text("1"),
        comment="Times the current value was observed.",
    ),
    Column("source", Text, comment="Who or what reported the claim last."),
    Column(
        "source_capped",
        Boolean,
        nullable=False,
        server_default=text("false"),
        comment="The source label is a writer's own word: ranking trusts it no more than an agent.",
    ),
    Column(
        "verified",
        Boolean,
        nullable=False,
        server_default=text("false"),
        comment="A human or trusted process confirmed the claim.",
    ),
    Column(
        "permanent",
        Boolean,
        nullable=False,
        server_default=text("false"),
        comment="Exempt from forgetting policies.",
    ),
    Column(
        "status",
        Text,
        nullable=False,
        server_default=text("'active'"),
        comment="active, cold (recalled, ranked lower), archived (kept, never recalled) or "
        "quarantined (waiting for a curator's review; never recalled).",
    ),
    Column(
        "tags",
        ARRAY(Text),
        nullable=False,
        server_default=text("'{}'"),
        comment="Free labels for filtering.",
    ),
    Column(
        "metadata",
        JSONB,
        nullable=False,
        server_default=text("'{}'"),
        comment="Client-defined JSON object.",
    ),
    Column("changed_by", Text, comment="API key name (or psql user) behind the last change."),
    _timestamp("created_at", "When the key was first stored."),
    _timestamp("updated_at", "Last change of value, confidence, type, tags or status."),
    _timestamp("last_observed", "Last time the claim was observed (created or reinforced)."),
    _timestamp(
        "expires_at",
        "Hard expiry: never returned after it, and the purge deletes it.",
        nullable=True,
        default=False,
    ),
    _timestamp(
        "occurred_at",
        "When the thing the claim describes happened (set by the client or by extraction), "
        "as opposed to created_at, when it was recorded; null: unknown, and recall's time "
        "filters and time factor use created_at instead.",
        nullable=True,
        default=False,
    ),
    # The partial indexes name these, never `status`: a column that an index names makes
    # every change of it a non-HOT update, which re-inserts the row into the HNSW index
    # (migration 0020). Cooling and warming change `status` but neither of these.
    Column(
        "live",
        Boolean,
        Computed(_in("status", LIVE_STATUSES), persisted=True),
        nullable=False,
        comment="status is active or cold (computed): the row holds its key and is recalled.",
    ),
    Column(
        "quarantined",
        Boolean,
        Computed("status = 'quarantined'", persisted=True),
        nullable=False,
        comment="status is quarantined (computed): the row waits for a curator's review.",
    ),
    CheckConstraint(_in("memory_type", MEMORY_TYPES), name="memory_type"),
    CheckConstraint(_in("status", MEMORY_STATUSES), name="status"),
    CheckConstraint("confidence >= 0 AND confidence <= 1", name="confidence_range"),
    CheckConstraint("importance >= 0 AND importance <= 1", name="importance_range"),
    PrimaryKeyConstraint("namespace", "id", name="pk_long_term_memory"),
    comment="Long-term memory: one row per key/value claim with confidence and access counts.",
    # room on every page for one more version of a row (~1.3 kB, 1.5 kB at most), so that
    # a tier move can stay on its page (a HOT update)
    postgresql_with={"fillfactor": 80},
)
Index(
    "uq_long_term_memory_active_key",
    long_term_memory.c.namespace,
    long_term_memory.c.mem_key,
    unique=True,
    postgresql_where=text("live"),
)
# the review queue, and the claims waiting on a key (observe checks them for a release)
Index(
    "ix_long_term_memory_quarantined_key",
    long_term_memory.c.namespace,
    long_term_memory.c.mem_key,
    postgresql_where=text("quarantined"),
)
Index(
    "ix_long_term_memory_expires_at",
    long_term_memory.c.expires_at,
    postgresql_where=text("expires_at IS NOT NULL"),
)
Index(
    "ix_long_term_memory_embedding",
    long_term_memory.c.embedding,
    postgresql_using="hnsw",
    postgresql_with={"m": 16, "ef_construction": 64},
    postgresql_ops={"embedding": "halfvec_cosine_ops"},
)
# A selective filter of a large namespace is searched exactly among the rows it admits,
# found through these (migration 0024, stores/narrowing.py): the labels (memory type and
# tags, namespace-prefixed) and the time windows. Not last_observed, confidence or
# importance: reinforcements and the lifecycle change them, and an indexed column's change
# rewrites the HNSW index; memory_facets keeps them with indexes of their own.
Index(
    "ix_long_term_memory_labels",
    func.hindsight_labels(
        long_term_memory.c.namespace, long_term_memory.c.memory_type, long_term_memory.c.tags
    ),
    postgresql_using="gin",
    postgresql_with={"fastupdate": "off"},
    postgresql_where=text("live"),
)
Index(
    "ix_long_term_memory_occurred",
    long_term_memory.c.namespace,
    text("coalesce(occurred_at, created_at)"),
    postgresql_include=["occurred_at", "created_at"],
    postgresql_where=text("live"),
)
Index(
    "ix_long_term_memory_created",
    long_term_memory.c.namespace,
    long_term_memory.c.created_at,
    postgresql_where=text("live"),
)

# The keyword arm reads a posting per memory holding one of the query's terms it chose, and
# scores each from this copy of what it reads (a small namespace: every copy of it): a
# narrow row per memory instead of the memory's own ~1.2 kB row with its embedding
# (migration 0035; benchmarks/README items 35, 47).
memory_keywords = Table(
    "memory_keywords",
    metadata,
    Column("namespace", Text, nullable=False, comment="Namespace of the memory."),
    Column("id", UUID(as_uuid=True), nullable=False, comment="long_term_memory.id."),
    Column("memory_type", Text, nullable=False, comment="The memory's type (copied)."),
    Column("tags", ARRAY(Text), nullable=False, comment="The memory's tags (copied)."),
    Column("live", Boolean, nullable=False, comment="The memory's live (copied)."),
    _timestamp("expires_at", "The memory's hard expiry (copied).", nullable=True, default=False),
    Column(
        "keyword_terms",
        ARRAY(Integer),
        nullable=False,
        comment="The memory's keyword_terms (copied); the posting lists recall reads.",
    ),
    Column(
        "keywords",
        SPARSEVEC(KEYWORD_DIMENSIONS),
        nullable=False,
        comment="The memory's keyword vector (copied), scored for each posting read.",
    ),
    PrimaryKeyConstraint("namespace", "id", name="pk_memory_keywords"),
    comment="A narrow copy of each long-term memory's keyword columns, kept by triggers on "
    "long_term_memory, for recall's keyword arm.",
)
Index(
    "ix_memory_keywords_keyword_terms",
    memory_keywords.c.keyword_terms,
    postgresql_using="gin",
    # no pending list for every search to read (migration 0021)
    postgresql_with={"fastupdate": "off"},
)

# What of each memory recall filters by and reinforcements or the lifecycle change, with the
# indexes long_term_memory cannot have (an index on any of them would make each such change a
# non-HOT update of the memory's row, which enters it into the HNSW graph again): what lets
# recall count and read the few memories a high min_confidence or min_importance, or a narrow
# observed_* window, admits (migrations 0036, 0038).
memory_facets = Table(
    "memory_facets",
    metadata,
    Column("namespace", Text, nullable=False, comment="Namespace of the memory."),
    Column("id", UUID(as_uuid=True), nullable=False, comment="long_term_memory.id."),
    Column("live", Boolean, nullable=False, comment="The memory's live (copied)."),
    Column(
        "confidence", Numeric(5, 4), nullable=False, comment="The memory's confidence (copied)."
    ),
    Column("importance", Float, nullable=False, comment="The memory's importance (copied)."),
    _timestamp("last_observed", "The memory's last_observed (copied).", default=False),
    PrimaryKeyConstraint("namespace", "id", name="pk_memory_facets"),
    comment="What of each long-term memory recall filters by and reinforcements or the "
    "lifecycle change, kept by triggers on long_term_memory, indexed for recall's "
    "min_confidence, min_importance and observed_* filters.",
)
for _name, _column in (
    ("confidence", memory_facets.c.confidence),
    ("importance", memory_facets.c.importance),
    ("observed", memory_facets.c.last_observed),
):
    Index(
        f"ix_memory_facets_{_name}",
        memory_facets.c.namespace,
        _column,
        postgresql_include=["id"],
        postgresql_where=text("live"),
    )

memory_history = Table(
    "memory_history",
    metadata,
    Column("id", BigInteger, Identity(always=True), comment="Order of changes."),
    Column(
        "memory_id",
        UUID(as_uuid=True),
        nullable=False,
        comment="long_term_memory.id (kept after the memory is deleted).",
    ),
    Column("namespace", Text, nullable=False, comment="Namespace of the memory."),
    Column("mem_key", Text, nullable=False, comment="Key of the memory."),
    Column(
        "change",
        Text,
        nullable=False,
        comment="created, reinforced, superseded, updated, archived, restored, deleted, "
        "cooled, warmed, expired, quarantined, approved, released, rejected or contradiction.",
    ),
    Column("memory_type", Text, nullable=False, comment="Type after the change."),
    Column(
        "old_value",
        Text,
        comment="Value before the change (null when created); null once the memory is deleted.",
    ),
    Column(
        "new_value",
        Text,
        comment="Value after the change (null when deleted); null once the memory is deleted.",
    ),
    Column("old_confidence", Numeric(5, 4), comment="Confidence before the change."),
    Column("new_confidence", Numeric(5, 4), comment="Confidence after the change."),
    Column("observation_count", Integer, comment="Observation count after the change."),
    Column("source", Text, comment="Source reported with the change."),
    Column("actor", Text, comment="API key name or database user that made the change."),
    _timestamp("changed_at", "When the change was committed."),
    Column("reason", Text, comment="Why the change was made (lifecycle rules)."),
    CheckConstraint(
        _in(
            "change",
            (
                "created",
                "reinforced",
                "superseded",
                "updated",
                "archived",
                "restored",
                "deleted",
                "cooled",
                "warmed",
                "expired",
                "quarantined",
                "approved",
                "released",
                "rejected",
                "contradiction",
            ),
        ),
        name="change",
    ),
    PrimaryKeyConstraint("namespace", "id", name="pk_memory_history"),
    comment="Every change to a long-term memory, written by triggers on long_term_memory.",
)
Index("ix_memory_history_memory_id_id", memory_history.c.memory_id, memory_history.c.id)
Index(
    "ix_memory_history_namespace_mem_key_id",
    memory_history.c.namespace,
    memory_history.c.mem_key,
    memory_history.c.id,
)

keyword_stats = Table(
    "keyword_stats",
    metadata,
    Column(
        "id",
        BigInteger,
        Identity(always=True),
        comment="Row id; rows are deltas, merged by maintenance.",
    ),
    Column("namespace", Text, nullable=False, comment="Namespace counted."),
    Column(
        "term",
        Integer,
        nullable=False,
        comment="Term hash; 0 counts live memories; negative: a label (memory type or tag), "
        "hindsight_label_term(), or below -2^30 a confidence bucket, hindsight_confidence_term(), "
        "or an importance bucket, hindsight_importance_term().",
    ),
    Column(
        "df",
        BigInteger,
        nullable=False,
        comment="Change in the number of active "
        "memories holding the term; sum per (namespace, term) for the total.",
    ),
    PrimaryKeyConstraint("namespace", "id", name="pk_keyword_stats"),
    comment="Document frequencies for BM25 IDF, kept as append-only deltas so concurrent "
    "writers never wait on one another.",
)
Index("ix_keyword_stats_namespace_term", keyword_stats.c.namespace, keyword_stats.c.term)
# maintenance merges the rows added since its watermark
Index("ix_keyword_stats_id", keyword_stats.c.id)

embedding_cache = Table(
    "embedding_cache",
    metadata,
    Column("model", Text, primary_key=True, comment="Embedding model name and width."),
    Column("content_hash", LargeBinary, primary_key=True, comment="SHA-256 of the text."),
    Column("vector", LargeBinary, nullable=False, comment="float32 vector, little-endian."),
    _timestamp("created_at", "When it was computed."),
    comment="Embeddings by content and model, so the same text is never embedded twice.",
)
