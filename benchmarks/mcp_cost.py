"""What an MCP tool call costs over the REST call it stands for.

The service in its own process, 1,000 memories in one namespace; then, on one keep-alive
connection, the same recall and observe made as REST calls and as MCP tool calls
(streamable HTTP, stateless, JSON answers), in turns. Prints p50/p99 of each and the MCP/REST ratio.

    python -m benchmarks.mcp_cost [--calls 300]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from benchmarks.stack import LightClient, service, stores

NS = "mcp-cost"
WORDS = "tea coffee river mountain violin garden lisbon berlin cat dog paper orange".split()


def _quantiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def _timed(calls: int, a: Callable[[int], None], b: Callable[[int], None]) -> list[list[float]]:
    """Both ways interleaved, in turns of order, so a busy machine slows both alike."""
    for i in range(20):  # warm up
        a(i)
        b(i)
    out: list[list[float]] = [[], []]
    for i in range(calls):
        pair = ((0, a), (1, b)) if i % 2 else ((1, b), (0, a))
        for slot, one in pair:
            started = time.perf_counter()
            one(i)
            out[slot].append((time.perf_counter() - started) * 1000)
    return out


def _tool(client: LightClient, name: str, arguments: dict[str, Any]) -> Any:
    client._headers["Accept"] = "application/json, text/event-stream"
    reply = client.post(
        "/mcp",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        },
    )
    assert reply.status_code == 200, reply.text
    result = reply.json()["result"]
    assert not result.get("isError"), result
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    with stores() as s, s.database() as url, service(url, s.redis_url) as svc:
        with svc.client() as http:
            memories = [
                {"key": f"fact.{i}", "value": f"{WORDS[i % 12]} {WORDS[i * 7 % 12]} {i}"}
                for i in range(1000)
            ]
            r = http.post(f"/v1/namespaces/{NS}/memories:batch", json={"memories": memories})
            assert r.status_code in (200, 201), r.text
        base = f"/v1/namespaces/{NS}"
        rows: list[tuple[str, list[float]]] = []
        with svc.light_client() as c:

            def rest_recall(i: int) -> None:
                assert (
                    c.post(f"{base}/recall", {"query": f"{WORDS[i % 12]} river"}).status_code == 200
                )

            def mcp_recall(i: int) -> None:
                _tool(c, "recall", {"query": f"{WORDS[i % 12]} river", "namespace": NS})

            def rest_observe(i: int) -> None:
                body = {"key": f"rest.{i % 50}", "value": f"value {i % 50}"}
                assert c.post(f"{base}/memories", body).status_code in (200, 201)

            def mcp_observe(i: int) -> None:
                _tool(
                    c,
                    "observe",
                    {"key": f"mcp.{i % 50}", "value": f"value {i % 50}", "namespace": NS},
                )

            for op, rest, mcp in (
                ("recall", rest_recall, mcp_recall),
                ("observe", rest_observe, mcp_observe),
            ):
                by_rest, by_mcp = _timed(args.calls, rest, mcp)
                rows += [(f"{op}, REST", by_rest), (f"{op}, MCP", by_mcp)]
    print(f"{'call':<16} {'p50 ms':>8} {'p99 ms':>8}")
    p50 = {}
    for label, samples in rows:
        a, b = _quantiles(samples)
        p50[label] = a
        print(f"{label:<16} {a:8.2f} {b:8.2f}")
    for op in ("recall", "observe"):
        ratio = p50[f"{op}, MCP"] / p50[f"{op}, REST"]
        print(f"{op}: MCP/REST p50 = {ratio:.2f}")
    print(json.dumps({k: round(v, 2) for k, v in p50.items()}))


if __name__ == "__main__":
    main()
