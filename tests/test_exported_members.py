"""The public surface is what `__all__` says, and every name in it exists."""

from __future__ import annotations

import importlib

import pytest

# an adapter needs its framework, an optional extra (hindsight[langgraph], [openai-agents])
FRAMEWORKS = {
    "hindsight.integrations.langgraph": "langgraph",
    "hindsight.integrations.openai_agents": "agents",
}


@pytest.mark.parametrize(
    "module",
    [
        "hindsight",
        "hindsight.client",
        "hindsight.embeddings",
        "hindsight.llm",
        "hindsight.integrations.langgraph",
        "hindsight.integrations.openai_agents",
    ],
)
def test_all_names_exist_and_nothing_private_leaks(module: str) -> None:
    if module in FRAMEWORKS:
        pytest.importorskip(FRAMEWORKS[module], reason=f"{module} needs its framework's extra")
    mod = importlib.import_module(module)
    exported = mod.__all__
    assert len(set(exported)) == len(exported)
    for name in exported:
        assert not name.startswith("_") or name == "__version__"
        assert hasattr(mod, name), f"{module}.{name}"


def test_the_sdk_is_importable_on_its_own() -> None:
    client = importlib.import_module("hindsight.client")
    assert {"Hindsight", "AsyncHindsight", "APIError", "TransportError"} <= set(client.__all__)
