"""The redactor on ordinary text: how many of the retrieval evaluation's texts it changes
(false positives; the target is none) and what it costs per write, on every set of the
evaluation (curated claims, conversation turns, Chinese, Japanese).

    python -m benchmarks.redaction [--sets curated,conversations,zh,ja]

A write here is one memory: its key and its value, each passed through the redactor;
the cost is CPU time (process_time), so other load on the machine does not inflate it.
Results: benchmarks/results/redaction.md.
"""

from __future__ import annotations

import argparse
import json
import time

from benchmarks.retrieval_eval import dataset
from hindsight.text.secrets import redactor

SETS = ("curated", "conversations", "zh", "ja")
ROUNDS = 5


def measure(name: str) -> dict[str, dict[str, object]]:
    data = dataset(name)
    writes = [(key, value) for _, key, value, _ in data.observations]
    texts = [t for pair in writes for t in pair] + [q.text for q in data.questions]
    report: dict[str, dict[str, object]] = {}
    for mode, r in (
        ("secrets", redactor()),
        ("secrets+email+phone", redactor(email=True, phone=True)),
    ):
        changed = [t for t in texts if r.redact(t)[0] != t]
        start = time.process_time()
        for _ in range(ROUNDS):
            for k, v in writes:
                r.redact(k)
                r.redact(v)
        per_write = (time.process_time() - start) / (ROUNDS * len(writes)) * 1e6
        report[mode] = {
            "texts": len(texts),
            "changed": len(changed),
            "examples": changed[:5],
            "us_per_write": round(per_write, 1),
        }
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(SETS))
    options = parser.parse_args()
    report = {name: measure(name) for name in options.sets.split(",")}
    print(json.dumps(report, indent=2, ensure_ascii=False))
    print("\n| set | rules | texts | changed (false positives) | µs CPU per write |")
    print("| --- | --- | ---: | ---: | ---: |")
    for name, modes in report.items():
        for mode, row in modes.items():
            print(
                f"| {name} | {mode} | {row['texts']} | {row['changed']} | {row['us_per_write']} |"
            )


if __name__ == "__main__":
    main()
