"""Input limits, enforced on every interface and listed in the README.

They keep one request from monopolising the service and keep every value indexable
(pgvector indexes at most 1,000 distinct keyword terms per memory).
"""

from __future__ import annotations

NAMESPACE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
SESSION_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"
ROLE_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]{0,31}$"

# Every type a memory may have: the schema's CHECK, the API's and MCP's enums, and what
# extraction may answer (anything else it answers is stored as a fact).
MEMORY_TYPES = ("fact", "preference", "experience", "reflection", "relation", "event", "summary")

KEY_MAX_CHARS = 256
VALUE_MAX_CHARS = 8_000
SOURCE_MAX_CHARS = 256
TAG_MAX_CHARS = 64
TAGS_MAX = 32
METADATA_MAX_BYTES = 16_384
# Objects and arrays nested deeper than this are refused: JSON encoders (pydantic's stops at
# 255 levels, Python's at its recursion limit) fail on what PostgreSQL stores happily.
JSON_MAX_DEPTH = 32
BATCH_MAX = 1_000
QUERY_MAX_CHARS = 4_000
CONTEXT_TURNS_MAX = 100  # recall's `context`; the newest 16 are searched
K_MAX = 100
LIST_LIMIT_MAX = 1_000
STEP_CONTENT_MAX_CHARS = 65_536
STEP_SUMMARY_MAX_CHARS = 8_000
STEPS_RECENT_MAX = 1_000
CONTEXT_MAX_CHARS = 200_000
IDEMPOTENCY_KEY_MAX_CHARS = 128
TTL_MAX_SECONDS = 365 * 24 * 3600
EXTRACT_MESSAGES_MAX = 500
FORGET_LIMIT_MAX = 10_000
