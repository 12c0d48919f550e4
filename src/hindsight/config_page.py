"""The configuration page of the docs (`docs/configuration.md`), written from `Settings`.

The page is generated so that it cannot drift from the code: every `HINDSIGHT_*` variable
with its default and the description its field carries. `tests/test_docs.py` fails
while the committed page differs from what this renders; after changing a setting, run
`python -m hindsight.config_page` from the repository root.
"""

from __future__ import annotations

import json
import sys
import typing
from pathlib import Path
from typing import Any, Literal

from pydantic.fields import FieldInfo

from hindsight.config import POLICY_SETTINGS, Settings

PAGE = Path("docs") / "configuration.md"

# the first setting of each group, in the order `Settings` declares them
SECTIONS: dict[str, str] = {
    "database_url": "Stores",
    "host": "HTTP",
    "embedding_provider": "Embeddings",
    "rerank_provider": "Reranking",
    "llm_base_url": "LLM",
    "extraction_min_importance": "Extraction and consolidation",
    "redaction": "Data protection",
    "initial_confidence": "Confidence and ranking",
    "resolve_time": "Time in recall queries",
    "recall_hops": "Recall search",
    "cold_after_days": "Lifecycle",
    "source_trust": "Source trust",
    "lifecycle_interval_seconds": "Lifecycle jobs",
    "working_memory_ttl_seconds": "Working memory",
}

INTRO = """\
<!-- Generated from hindsight.config.Settings by `python -m hindsight.config_page`: edit the
     settings' descriptions there, not this file (a test fails while they differ). -->

# Configuration

Every setting is an environment variable, read and checked once at start-up: a bad value
stops the service with the variable named. An empty value (`VAR=`, as docker compose passes
an unset variable) counts as unset. Settings marked *policy* are the defaults of every
namespace's policy, which `PUT /v1/namespaces/{ns}/policy` overrides per namespace (see
[lifecycle](concepts.md#lifecycle)).

Which endpoint to point the embedding and LLM settings at, with examples for OpenAI, Ollama
and vLLM: [operating](operating.md#llm-and-embedding-endpoints). The embedding model and
width are recorded with the schema: `serve` refuses to start when the stored vectors come
from another model or have another width (an empty store adopts the configured model);
`hindsight reembed` re-embeds everything.
"""


def _default(name: str, field: FieldInfo) -> str:
    if name == "data_dir":
        return "`~/.local/share/hindsight` (the platform's per-user data dir)"
    value: Any = field.get_default(call_default_factory=True)
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, dict):
        return f"`{json.dumps(value, separators=(',', ':'))}`"
    return f"`{value}`"


def _choices(field: FieldInfo) -> list[str]:
    for arg in (field.annotation, *typing.get_args(field.annotation)):
        if typing.get_origin(arg) is Literal:
            return [str(a) for a in typing.get_args(arg)]
    return []


def _meaning(name: str, field: FieldInfo) -> str:
    text = (field.description or "").strip()
    choices = _choices(field)
    if choices:
        text += " One of " + ", ".join(f"`{c}`" for c in choices) + "."
    if name in POLICY_SETTINGS:
        text += f" *Policy* `{POLICY_SETTINGS[name]}`."
    return text.replace("|", "\\|").replace("\n", " ").strip()


def render() -> str:
    out = [INTRO]
    for name, field in Settings.model_fields.items():
        if name in SECTIONS:
            out.append(
                f"\n## {SECTIONS[name]}\n\n| variable | default | meaning |\n| --- | --- | --- |"
            )
        out.append(
            f"| `HINDSIGHT_{name.upper()}` | {_default(name, field)} | {_meaning(name, field)} |"
        )
    return "\n".join(out) + "\n"


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else PAGE
    path.write_text(render())
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
