"""MADial-Bench's memory-recall task, dev half: real dialogues with memories annotated by
people, in Chinese and English (`../shared/data/madial-dev`, read its README; the data is
never copied into this repository). Written by others, unlike every other set here.

Each dialogue row is a question: the query is `"".join(dialogue[:test-turn[0]])` (the
`<BOD>` line and every line before the test turn), exactly what the published retrievers
embedded; its answers are the row's `relevant-id`, searched among that user's memories
only, so each user is a namespace. English memories carry no user, and take the one of the
Chinese memory with the same id.

How a memory is observed (decided before any run, not tuned to the 80 rows):
- key `m<id>`: an opaque id, whose single token never occurs in a dialogue, so the key
  adds nothing to either arm (the other sets' keys, `D3:5`, are the same kind);
- value: the `event` sentence alone, which is the memory as an agent would write it. The
  `scene` (one of five categories) and `emotion` (one of ~10 words, restated in the event
  itself in about 64% of the English and 74% of the Chinese rows) are the annotators'
  labels from closed lists, not text an agent writes; they go into `metadata`, which
  nothing ranks.
  (The published retrievers embedded `str({"scene": …, "emotion": …, "event": …})`, the
  date dropped: MADial-Bench's `Embedding.py`.)
- memory type `event`; `occurred_at` the memory's `time` at noon UTC, as the conversation
  sets date their turns;
- the query is asked without `reference_time`: the dialogues carry no date, so the service
  reads any time it names against its own clock, as it would for a client that knows none.

Scoring (the data README's): recall@k = share of the row's relevant ids in the top k,
averaged over rows; MRR from the top 10 (the published lists are cut to 10 for it, so every
row of a table has the same cut-off).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.eval_set import Dataset, Question

# the data sits beside the repositories, in ../shared/data/madial-dev
DATA = Path(
    os.environ.get(
        "MADIAL_DEV_DIR",
        Path(__file__).resolve().parents[2] / "shared" / "data" / "madial-dev",
    )
)
LANGUAGES = ("zh", "en")

# published/<file>.top20.dev.jsonl -> the retriever's name in the data README's table
PUBLISHED: dict[str, dict[str, str]] = {
    "zh": {
        "openai_zh": "OpenAI text-embedding",
        "BGE_M3_dense_zh": "BGE-M3 dense",
        "BGE_M3_colbert_zh": "BGE-M3 ColBERT",
        "Stella_zh": "Stella",
        "Acge_zh": "Acge",
        "Dmeta_zh": "Dmeta",
    },
    "en": {
        "openai_en": "OpenAI text-embedding",
        "bge_m3_en": "BGE-M3 dense",
        "gte_en": "gte",
        "jina_en": "jina",
    },
}


@dataclass
class MadialSet(Dataset):
    language: str = ""
    # (namespace, key) -> the annotators' labels, stored as metadata (ranked by nothing)
    metadata: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    # the keyword baselines' tokenizations (benchmarks/baselines.py), the first one fused
    # with dense retrieval
    bm25_tokenizers: tuple[str, ...] = ("words",)
    # published retriever -> its ranked keys per question (top 20, in question order)
    published: dict[str, list[list[str]]] = field(default_factory=dict)


def available(root: Path = DATA) -> bool:
    return all(
        (root / name).is_file()
        for lang in LANGUAGES
        for name in (f"{lang}-memory.jsonl", f"{lang}-dialogue.dev.jsonl")
    )


def key(memory_id: int | str) -> str:
    return f"m{memory_id}"


def namespace(language: str, user_id: int) -> str:
    return f"madial-{language}-user{user_id}"


def query(row: dict[str, Any]) -> str:
    """The dialogue so far, as the published retrievers embedded it."""
    return "".join(row["dialogue"][: row["test-turn"][0]])


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def memories(language: str, root: Path = DATA) -> dict[str, dict[str, Any]]:
    """id -> the memory, with its `user-id` (English rows take the Chinese row's)."""

    def read(lang: str) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for line in _jsonl(root / f"{lang}-memory.jsonl"):
            ((memory_id, memory),) = line.items()
            out[str(memory_id)] = memory
        return out

    zh = read("zh")
    mine = zh if language == "zh" else read(language)
    return {i: {**m, "user-id": zh[i]["user-id"]} for i, m in mine.items()}


def dialogues(language: str, root: Path = DATA) -> list[dict[str, Any]]:
    return _jsonl(root / f"{language}-dialogue.dev.jsonl")


def published(
    language: str, rows: list[dict[str, Any]], root: Path = DATA
) -> dict[str, list[list[str]]]:
    """Each published retriever's top 20 per dev row, checked against the row it claims."""
    out: dict[str, list[list[str]]] = {}
    for stem, name in PUBLISHED[language].items():
        path = root / "published" / f"{stem}.top20.dev.jsonl"
        if not path.is_file():
            continue
        lines = _jsonl(path)
        if len(lines) != len(rows):
            raise ValueError(f"{path.name}: {len(lines)} rows, the dev half has {len(rows)}")
        for i, (line, row) in enumerate(zip(lines, rows, strict=True)):
            if (
                line["row"] != 2 * i
                or line["user-id"] != row["user-id"]
                or line["relevant-id"] != row["relevant-id"]
            ):
                raise ValueError(f"{path.name}: line {i} is not dev row {i} (row {2 * i})")
        out[name] = [[key(m) for m in line["top-20-ids"]] for line in lines]
    return out


def build(language: str, root: Path = DATA) -> MadialSet:
    found = memories(language, root)
    rows = dialogues(language, root)
    data = MadialSet(
        name=f"madial-{language}",
        language=language,
        bm25_tokenizers=("jieba", "pairs") if language == "zh" else ("words",),
    )
    for memory_id, m in sorted(found.items(), key=lambda item: int(item[0])):
        ns = namespace(language, m["user-id"])
        data.observations.append((ns, key(memory_id), m["event"], "event"))
        data.occurred[(ns, key(memory_id))] = f"{m['time']}T12:00:00+00:00"
        data.metadata[(ns, key(memory_id))] = {"scene": m["scene"], "emotion": m["emotion"]}
    for i, row in enumerate(rows):
        ns = namespace(language, row["user-id"])
        gold = [key(m) for m in row["relevant-id"]]
        for m in row["relevant-id"]:
            if found[str(m)]["user-id"] != row["user-id"]:
                raise ValueError(f"row {i}: memory {m} belongs to another user")
        data.questions.append(Question(ns, query(row), "dialogue", gold))
    data.published = published(language, rows, root)
    return data


def readme_table(root: Path = DATA) -> dict[str, dict[str, dict[str, float]]]:
    """The data README's table of published retrievers: language -> name -> r@1/r@5/r@10."""
    out: dict[str, dict[str, dict[str, float]]] = {"zh": {}, "en": {}}
    for line in (root / "README.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 7 or not any(cells[0] in names.values() for names in PUBLISHED.values()):
            continue
        for lang, values in (("zh", cells[1:4]), ("en", cells[4:7])):
            if "–" not in values:
                out[lang][cells[0]] = dict(
                    zip(("r@1", "r@5", "r@10"), map(float, values), strict=True)
                )
    return out


if __name__ == "__main__":
    for lang in LANGUAGES:
        built = build(lang)
        users = sorted({ns for ns, *_ in built.observations})
        print(
            built.name,
            len(built.observations),
            "memories in",
            users,
            len(built.questions),
            "questions;",
            "published:",
            ", ".join(built.published),
        )
