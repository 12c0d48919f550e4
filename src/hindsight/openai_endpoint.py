"""OpenAI-compatible endpoints: the client every provider uses, and its errors translated
once for all of them."""

from __future__ import annotations

import json
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import openai

from hindsight import disclose
from hindsight.errors import HindsightError, ProviderError, Unavailable


def client(
    base_url: str | None, api_key: str | None, *, timeout: float, max_retries: int
) -> openai.AsyncOpenAI:
    """The `openai` client retries connection errors, timeouts, 408, 409, 429 and 5xx with
    backoff (`max_retries`); nothing else is retried. A query in the base URL (Azure's
    `?api-version=…`, a gateway's `?key=…`) is sent with every request: the client would
    otherwise append the path after it (`/v1?key=xembeddings`) and miss every route."""
    query: dict[str, object] | None = None
    if base_url:
        parts = urlsplit(base_url)
        if parts.query:
            query = dict(parse_qsl(parts.query, keep_blank_values=True))
            base_url = urlunsplit(parts._replace(query="", fragment=""))
    return openai.AsyncOpenAI(
        base_url=base_url,
        # Local servers (Ollama, vLLM, TEI) need no key, but the client insists on one.
        api_key=api_key or "not-needed",
        timeout=timeout,
        max_retries=max_retries,
        default_query=query,
    )


def _message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and "message" in error:
            return str(error["message"])
    return str(exc.message)


def translate(exc: Exception, *, what: str, where: str) -> HindsightError:
    """What the caller should see. Transient trouble (the client has already retried it)
    becomes Unavailable (503 with Retry-After); the rest a ProviderError (502). The
    endpoint is named without userinfo or query, where credentials may hide."""
    where = disclose.url(where)
    if isinstance(exc, openai.APIStatusError):
        if exc.status_code in (408, 409, 429) or exc.status_code >= 500:
            return Unavailable(
                f"{what} endpoint {where} is overloaded or failing (HTTP {exc.status_code}) "
                "after retries; try again later",
                retry_after=10,
            )
        return ProviderError(
            f"{what} endpoint {where} refused the request (HTTP {exc.status_code}): {_message(exc)}"
        )
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return Unavailable(
            f"{what} endpoint {where} is unreachable or timed out after retries", retry_after=10
        )
    if isinstance(exc, json.JSONDecodeError | ValueError):
        return ProviderError(f"{what} endpoint {where} sent an answer we cannot read (not JSON)")
    return ProviderError(
        f"{what} endpoint {where} sent an answer we cannot read: {disclose.failure(exc)}"
    )


# What a provider call may raise that `translate` knows how to explain.
ERRORS = (openai.OpenAIError, json.JSONDecodeError, ValueError)
