"""Prometheus metrics, one module-level object per metric.

With several worker processes each worker writes its values to files in
`PROMETHEUS_MULTIPROC_DIR` (set by `hindsight serve --workers N` before the workers start),
and a scrape of any worker reads them all, so counts are summed over the workers.
Gauges written by the maintenance pass keep the most recent value, whichever worker wrote it.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

# prometheus_client's own variable: it picks its storage from it when first imported
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
CONTENT_TYPE = CONTENT_TYPE_LATEST
# namespaces with the most memories get a series each; the rest are summed as OTHER
TOP_NAMESPACES = 20
OTHER = "(other)"

_FAST = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_SLOW = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
_COUNTS = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)

HTTP_SECONDS = Histogram(
    "hindsight_http_request_duration_seconds",
    "HTTP requests by route template, method and status.",
    ["method", "route", "status"],
    buckets=_FAST,
)
RECALL_SECONDS = Histogram(
    "hindsight_recall_duration_seconds", "Recall, embedding to ranked results.", buckets=_FAST
)
RECALL_ARM_SECONDS = Histogram(
    "hindsight_recall_arm_duration_seconds",
    "One candidate arm's query (vector or keyword).",
    ["arm"],
    buckets=_FAST,
)
RECALL_CANDIDATES = Histogram(
    "hindsight_recall_candidates", "Candidates an arm returned.", ["arm"], buckets=_COUNTS
)
RECALL_RESULTS = Histogram(
    "hindsight_recall_results", "Results a recall returned.", buckets=_COUNTS
)
RECALL_VECTOR_SKIPPED = Counter(
    "hindsight_recall_vector_skipped_total",
    "Recalls ranked by keywords alone: the query could not be embedded.",
)
RECALL_RERANK_SKIPPED = Counter(
    "hindsight_recall_rerank_skipped_total",
    "Recalls answered without reranking: the reranker failed or timed out.",
)
OBSERVE_OUTCOMES = Counter(
    "hindsight_observe_outcomes_total",
    "Observed memories by outcome (created, reinforced, superseded, deduplicated).",
    ["outcome"],
)
IMPORTANCE_RATINGS = Counter(
    "hindsight_write_importance_ratings_total",
    "Direct writes' unrated items rated at write time, by who rated them (llm, or "
    "builtin_fallback when the configured LLM failed or was too slow).",
    ["by"],
)
STEP_SUMMARIES = Counter(
    "hindsight_step_summaries_total",
    "Long steps summarized by the LLM after they were written, by outcome (llm; builtin: "
    "the LLM failed or was busy, the first sentence stands; kept: a summary set since "
    "then, by the client, stands).",
    ["outcome"],
)
WORKING_MEMORY_READS = Counter(
    "hindsight_working_memory_reads_total",
    "Reads of a session's recent steps, by where they came from (redis: cache hit; "
    "postgres: fallback).",
    ["source"],
)
SHED_REQUESTS = Counter(
    "hindsight_shed_requests_total",
    "Requests refused with 503 overloaded: no slot came free within the queue wait.",
)
QUEUED_REQUESTS = Gauge(
    "hindsight_queued_requests",
    "Requests waiting for a slot (HINDSIGHT_MAX_IN_FLIGHT) now.",
    multiprocess_mode="livesum",
)
STORE_ERRORS = Counter(
    "hindsight_store_errors_total",
    "Failed calls to a store (redis, postgres), by operation.",
    ["store", "operation"],
)
JOBS = Gauge(
    "hindsight_jobs",
    "Consolidation jobs by status (pending, running), as of the last maintenance pass.",
    ["status"],
    multiprocess_mode="mostrecent",
)
JOB_SECONDS = Histogram(
    "hindsight_job_duration_seconds",
    "Consolidation job runs by outcome (succeeded, retry, failed).",
    ["outcome"],
    buckets=_SLOW,
)
PROVIDER_SECONDS = Histogram(
    "hindsight_provider_request_duration_seconds",
    "Calls to the embedding or LLM endpoint.",
    ["provider", "model"],
    buckets=_SLOW,
)
PROVIDER_ERRORS = Counter(
    "hindsight_provider_errors_total",
    "Failed calls to the embedding or LLM endpoint.",
    ["provider", "model"],
)
PROVIDER_TOKENS = Counter(
    "hindsight_provider_tokens_total",
    "Tokens the endpoint reported using (kind: prompt, completion).",
    ["provider", "model", "kind"],
)
READ_ROUTES = Counter(
    "hindsight_read_routes_total",
    "Reads that may use the read replica, by where they went (target: replica, primary) "
    "and why (reason: caught_up; own_write, lagging, down for the primary).",
    ["target", "reason"],
)
READ_REPLICA_LAG = Gauge(
    "hindsight_read_replica_lag_seconds",
    "How far behind the read replica was at most, as of the last probe (NaN: down).",
    multiprocess_mode="mostrecent",
)
MEMORIES = Gauge(
    "hindsight_memories",
    f"Long-term memories by status for the {TOP_NAMESPACES} largest namespaces "
    f"(the rest as namespace={OTHER!r}), as of the last maintenance pass.",
    ["namespace", "status"],
    multiprocess_mode="mostrecent",
)


def multiprocess_dir() -> str | None:
    return os.environ.get(MULTIPROC_ENV) or None


def prepare_multiprocess_dir(path: Path) -> None:
    """Clear the directory the workers will write to (prometheus_client needs a clean one
    per run: a previous run's files would be counted again) and point the workers at it."""
    path.mkdir(parents=True, exist_ok=True)
    for stale in path.glob("*.db"):
        stale.unlink()
    os.environ[MULTIPROC_ENV] = str(path)


def worker_stopped() -> None:
    if multiprocess_dir() is not None:
        multiprocess.mark_process_dead(os.getpid())  # type: ignore[no-untyped-call]


def exposition() -> bytes:
    """Every metric in the text format, summed over worker processes when there are several."""
    if multiprocess_dir() is None:
        return generate_latest(REGISTRY)
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    return generate_latest(registry)


@contextmanager
def timed(histogram: Histogram, *labels: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        child = histogram.labels(*labels) if labels else histogram
        child.observe(time.perf_counter() - started)


def count_tokens(provider: str, model: str, usage: object) -> None:
    """Add the token counts an OpenAI-protocol response reported (some servers send none)."""
    for kind in ("prompt", "completion"):
        tokens = getattr(usage, f"{kind}_tokens", None)
        if isinstance(tokens, int) and tokens > 0:
            PROVIDER_TOKENS.labels(provider, model, kind).inc(tokens)


_reported: set[tuple[str, str]] = set()


def set_memory_counts(rows: Iterable[tuple[str, str, int]]) -> None:
    """Publish (namespace, status, count) rows: the largest namespaces by total, the rest
    summed, and zero for series reported before that are gone now."""
    totals: dict[str, int] = {}
    by_key: dict[tuple[str, str], int] = {}
    for namespace, status, count in rows:
        totals[namespace] = totals.get(namespace, 0) + count
        by_key[(namespace, status)] = count
    top = set(sorted(totals, key=lambda ns: (-totals[ns], ns))[:TOP_NAMESPACES])
    values: dict[tuple[str, str], int] = {}
    for (namespace, status), count in by_key.items():
        label = namespace if namespace in top else OTHER
        values[(label, status)] = values.get((label, status), 0) + count
    for gone in _reported - values.keys():
        MEMORIES.labels(*gone).set(0)
    for labels, count in values.items():
        MEMORIES.labels(*labels).set(count)
    _reported.update(values)


def set_job_counts(counts: dict[str, int]) -> None:
    for status in ("pending", "running"):
        JOBS.labels(status).set(counts.get(status, 0))


def forget_namespace(namespace: str) -> None:
    """Drop an erased namespace's series: its name is the erased tenant's, and a series
    set to 0 would keep showing it on every scrape. In multi-worker mode the other
    workers' files keep their last value until the next maintenance pass rewrites them."""
    for labels in [labels for labels in _reported if labels[0] == namespace]:
        with contextlib.suppress(KeyError):
            MEMORIES.remove(*labels)
        _reported.discard(labels)
