"""The redactor on ordinary text: how many of the retrieval evaluation's texts it changes
(false positives; the target is none) and what it costs per write.

    python -m benchmarks.redaction

A write here is one memory: its key and its value, each passed through the redactor;
the cost is CPU time (process_time), so other load on the machine does not inflate it.
"""

from __future__ import annotations

import json
import time

from benchmarks.eval_data import build
from hindsight.text.redact import redactor


def main() -> None:
    data = build()
    texts = [t for key, value, _ in data.observations for t in (key, value)]
    texts += [q.text for q in data.questions]
    report = {}
    for name, r in (
        ("secrets", redactor()),
        ("secrets+email+phone", redactor(email=True, phone=True)),
    ):
        changed = [t for t in texts if r.redact(t)[0] != t]
        writes = [(k, v) for k, v, _ in data.observations]
        rounds = 5
        start = time.process_time()
        for _ in range(rounds):
            for k, v in writes:
                r.redact(k)
                r.redact(v)
        per_write = (time.process_time() - start) / (rounds * len(writes)) * 1e6
        report[name] = {
            "texts": len(texts),
            "changed": len(changed),
            "examples": changed[:5],
            "us_per_write": round(per_write, 1),
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
