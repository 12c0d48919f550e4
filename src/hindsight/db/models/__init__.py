"""The schema as SQLAlchemy metadata: what Alembic's migrations must produce.

The service talks to the database through the SQL in `hindsight.stores`; these tables are
the contract that `alembic check` holds the migrations to, and their comments become the
`COMMENT ON` text an operator reads with `\\d+` in psql.

The tables live by responsibility in the modules of this package (`base` holds the shared
`metadata`, naming convention and helpers; `long_term`, `recall`, `working` and `service`
the tables); importing this package imports them all, so `metadata` here is the whole
schema, and every table is importable from here.
"""

from hindsight.db.models.base import NAMING, metadata
from hindsight.db.models.long_term import (
    LIVE_STATUSES,
    MEMORY_STATUSES,
    MEMORY_TYPES,
    embedding_cache,
    keyword_stats,
    long_term_memory,
    memory_facets,
    memory_history,
    memory_keywords,
)
from hindsight.db.models.recall import memory_access, recall_feedback, recall_log
from hindsight.db.models.service import (
    JOB_STATUSES,
    api_keys,
    bulk_import_lines,
    bulk_imports,
    consolidation_jobs,
    hindsight_meta,
    namespace_erasures,
    namespace_lifecycle,
    namespace_policy,
)
from hindsight.db.models.working import (
    SESSION_STATUSES,
    session_demotions,
    working_memory,
    working_sessions,
)

__all__ = [
    "JOB_STATUSES",
    "LIVE_STATUSES",
    "MEMORY_STATUSES",
    "MEMORY_TYPES",
    "NAMING",
    "SESSION_STATUSES",
    "api_keys",
    "bulk_import_lines",
    "bulk_imports",
    "consolidation_jobs",
    "embedding_cache",
    "hindsight_meta",
    "keyword_stats",
    "long_term_memory",
    "memory_access",
    "memory_facets",
    "memory_history",
    "memory_keywords",
    "metadata",
    "namespace_erasures",
    "namespace_lifecycle",
    "namespace_policy",
    "recall_feedback",
    "recall_log",
    "session_demotions",
    "working_memory",
    "working_sessions",
]
