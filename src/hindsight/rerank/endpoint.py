"""Reranking by an HTTP endpoint that speaks the TEI protocol or the Cohere / Jina one.

TEI (text-embeddings-inference, and servers that copy it):
    POST {url}/rerank  {"query": q, "texts": [...], "raw_scores": false, "truncate": true}
    -> [{"index": i, "score": s}, ...]
Cohere and Jina:
    POST {url}/v1/rerank  {"model": m, "query": q, "documents": [...], "top_n": n}
    -> {"results": [{"index": i, "relevance_score": s}, ...]}
Both answer best first; the scores are put back in input order here.

Recall waits for this call, so it is not retried with backoff as embedding calls are: a
refused connection is tried once more (httpx's transport retry), and the whole call has one
deadline. A failure becomes Unavailable (transient) or ProviderError naming the endpoint
without its credentials; recall then answers with its own ranking and says so.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Generator
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import httpx

from hindsight import admission, disclose
from hindsight.errors import HindsightError, ProviderError, Unavailable
from hindsight.observability import metrics

Protocol = Literal["tei", "cohere", "jina"]
# what an endpoint may say about a refusal, shown to the operator: enough to act on
DETAIL_MAX_CHARS = 200


class _Bearer(httpx.Auth):
    def __init__(self, key: str) -> None:
        self._header = f"Bearer {key}"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = self._header
        yield request


def endpoint_url(url: str, protocol: Protocol) -> str:
    """The rerank route under `url`; a URL already ending in /rerank is used as given, and
    a versioned base (`…/v1`, `…/v2`) gets only `/rerank`."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    if not path.endswith("/rerank"):
        versioned = re.search(r"/v\d+$", path) is not None
        path += "/rerank" if protocol == "tei" or versioned else "/v1/rerank"
    return urlunsplit(parts._replace(path=path))


class EndpointReranker:
    def __init__(
        self,
        *,
        protocol: Protocol,
        url: str,
        model: str | None,
        api_key: str | None,
        timeout: float,
    ) -> None:
        self._protocol = protocol
        self._url = endpoint_url(url, protocol)
        self._where = disclose.url(self._url)
        self._model = model
        self._api_key = api_key
        self._timeout = timeout
        self._client = httpx.AsyncClient(
            timeout=timeout,
            # a configured key wins over user:password@ in the URL (httpx's Basic auth)
            auth=_Bearer(api_key) if api_key else None,
            transport=httpx.AsyncHTTPTransport(retries=1),
        )

    @property
    def name(self) -> str:
        return f"{self._protocol}:{self._model or 'default'}"

    def _body(self, query: str, texts: list[str]) -> dict[str, Any]:
        if self._protocol == "tei":
            # truncate: TEI refuses an input longer than the model's window unless told
            return {"query": query, "texts": texts, "raw_scores": False, "truncate": True}
        body: dict[str, Any] = {"query": query, "documents": texts, "top_n": len(texts)}
        if self._model:
            body["model"] = self._model
        if self._protocol == "jina":
            body["return_documents"] = False  # Jina echoes every text back unless told
        return body

    async def rerank(self, query: str, texts: list[str]) -> list[float]:
        if not texts:
            return []
        label = self._model or self._protocol
        try:
            with metrics.timed(metrics.PROVIDER_SECONDS, "rerank", label):
                async with admission.away(), asyncio.timeout(self._timeout):
                    response = await self._client.post(self._url, json=self._body(query, texts))
                if response.status_code >= 400:
                    raise self._refusal(response)
                return self._scores(response, len(texts))
        except HindsightError:
            metrics.PROVIDER_ERRORS.labels("rerank", label).inc()
            raise
        except (TimeoutError, httpx.TimeoutException) as exc:
            metrics.PROVIDER_ERRORS.labels("rerank", label).inc()
            raise Unavailable(
                f"rerank endpoint {self._where} timed out after {self._timeout:g} s",
                retry_after=10,
            ) from exc
        except httpx.HTTPError as exc:  # refused, reset, not HTTP at all
            metrics.PROVIDER_ERRORS.labels("rerank", label).inc()
            raise Unavailable(
                f"rerank endpoint {self._where} is unreachable ({type(exc).__name__})",
                retry_after=10,
            ) from exc

    def _refusal(self, response: httpx.Response) -> HindsightError:
        status = response.status_code
        if status in (408, 409, 429) or status >= 500:
            return Unavailable(
                f"rerank endpoint {self._where} is overloaded or failing (HTTP {status})",
                retry_after=10,
            )
        return ProviderError(
            f"rerank endpoint {self._where} refused the request (HTTP {status})"
            f"{self._detail(response)}"
        )

    def _detail(self, response: httpx.Response) -> str:
        try:
            body = response.json()
        except ValueError:
            return ""
        if isinstance(body, dict):
            found = body.get("error", body.get("message", body.get("detail")))
            if isinstance(found, dict):
                found = found.get("message")
            if isinstance(found, str) and found:
                # a gateway may quote the key it refused
                if self._api_key:
                    found = found.replace(self._api_key, "[REDACTED]")
                return f": {found[:DETAIL_MAX_CHARS]}"
        return ""

    def _scores(self, response: httpx.Response, n: int) -> list[float]:
        unreadable = ProviderError(
            f"rerank endpoint {self._where} sent an answer we cannot read (not the "
            f"{self._protocol} rerank protocol)"
        )
        try:
            payload = response.json()
        except ValueError:
            raise unreadable from None
        if self._protocol == "tei":
            items, field = payload, "score"
        else:
            items = payload.get("results") if isinstance(payload, dict) else None
            field = "relevance_score"
        if not isinstance(items, list):
            raise unreadable
        scores: list[float | None] = [None] * n
        for item in items:
            index = item.get("index") if isinstance(item, dict) else None
            score = item.get(field) if isinstance(item, dict) else None
            if (
                not isinstance(index, int)
                or isinstance(index, bool)
                or not 0 <= index < n
                or not isinstance(score, int | float)
                or not math.isfinite(score)
            ):
                raise unreadable
            scores[index] = float(score)
        if any(s is None for s in scores):
            raise ProviderError(
                f"rerank endpoint {self._where} scored {sum(s is not None for s in scores)} "
                f"of {n} texts"
            )
        return [s for s in scores if s is not None]

    async def aclose(self) -> None:
        await self._client.aclose()
