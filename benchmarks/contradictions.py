"""False positives of the write-time contradiction check on ordinary memories: the
retrieval sets (curated, conversations, madial-en, madial-zh) hold no contradiction, so
every pair the check would flag there is a false positive.

The check's rules (`services.contradictions`), applied to each memory against every
earlier memory of the same namespace and type: the same attribute of the same subject
(`text.subjects.same_subject`), another claim (`by_rules`), similarity at least the
threshold (the built-in embedder at its default width, on what the service embeds). Every
earlier memory is compared, not only the nearest three the write path reads, so the counts
are an upper bound of what the service flags. For contrast, the same count without the key
rule (similarity and another claim alone).

    python -m benchmarks.contradictions  ->  results/contradictions.md
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from pathlib import Path

import numpy as np

from benchmarks.retrieval_eval import dataset
from hindsight.config import BUILTIN_EMBEDDING_DIMENSIONS
from hindsight.embeddings.builtin import BuiltinEmbedder
from hindsight.services.contradictions import by_rules
from hindsight.text import memory_text
from hindsight.text.subjects import same_subject

SETS = ("curated", "conversations", "madial-en", "madial-zh")
THRESHOLDS = (0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
OUT = Path(__file__).resolve().parent / "results" / "contradictions.md"


def flagged(name: str, embedder: BuiltinEmbedder) -> tuple[int, dict[float, int], dict[float, int]]:
    """Memories, and how many would be flagged at each threshold with and without the
    key rule (a memory counts once, at its most similar contender)."""
    by_ns: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for ns, key, value, memory_type in dataset(name).observations:
        by_ns[ns].append((key, value, memory_type))
    keyed: list[float] = []
    loose: list[float] = []
    for items in by_ns.values():
        x = np.array([embedder.embed_one(memory_text(k, v)) for k, v, _ in items], dtype=float)
        x /= np.linalg.norm(x, axis=1, keepdims=True) + 1e-12
        sims = x @ x.T
        for i, (key, value, memory_type) in enumerate(items):
            best = best_loose = 0.0
            for j in np.nonzero(sims[i, :i] >= THRESHOLDS[0])[0]:
                k, v, t = items[j]
                if t != memory_type or k == key:
                    continue
                if asyncio.run(by_rules({"value": v}, {"value": value})) is None:
                    continue
                best_loose = max(best_loose, float(sims[i, j]))
                if same_subject(key, k):
                    best = max(best, float(sims[i, j]))
            keyed.append(best)
            loose.append(best_loose)
    return (
        len(keyed),
        {t: sum(s >= t for s in keyed) for t in THRESHOLDS},
        {t: sum(s >= t for s in loose) for t in THRESHOLDS},
    )


def main() -> None:
    embedder = BuiltinEmbedder(BUILTIN_EMBEDDING_DIMENSIONS)
    head = " | ".join(f"≥ {t}" for t in THRESHOLDS)
    lines = [
        "# Contradiction check: false positives on the retrieval sets",
        "",
        "`python -m benchmarks.contradictions` (built-in embedder, "
        f"{BUILTIN_EMBEDDING_DIMENSIONS} dimensions). Memories flagged as contradicting an "
        "earlier one, per similarity threshold; every one is a false positive (the sets hold "
        "none). Default `trust.contradiction_similarity`: 0.6.",
        "",
        f"| set | memories | rule | {head} |",
        "| --- | ---: | --- | " + " | ".join("---:" for _ in THRESHOLDS) + " |",
    ]
    for name in SETS:
        n, keyed, loose = flagged(name, embedder)
        for rule, counts in (("same subject (the check)", keyed), ("similarity alone", loose)):
            cells = " | ".join(f"{counts[t]} ({counts[t] / n:.1%})" for t in THRESHOLDS)
            lines.append(f"| {name} | {n} | {rule} | {cells} |")
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
