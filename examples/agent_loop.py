"""An agent loop with Hindsight memory: recall before acting, append steps while working,
end the session so what was learned is consolidated into long-term memory.

    HINDSIGHT_URL=http://127.0.0.1:8080 HINDSIGHT_API_KEY=hs_... python examples/agent_loop.py

The "agent" here is a stand-in that books a train; with a real LLM you would put the
recalled memories and the working-memory context into its prompt.
"""

from __future__ import annotations

import os
import uuid

from hindsight.client import Hindsight

NAMESPACE = os.environ.get("HINDSIGHT_NAMESPACE", "example-user")


def act(task: str, memories: list[str], context: list[str]) -> tuple[str, dict[str, object]]:
    """Decide the next step from what memory says (a real agent asks its LLM here)."""
    if not any("07:42" in m for m in memories + context):
        # something learned: the step carries it as a memory for consolidation
        return (
            "asked the user: they always take the 07:42 train",
            {
                "memory": {
                    "key": "user.usual_train",
                    "value": "takes the 07:42 train",
                    "memory_type": "preference",
                }
            },
        )
    source = "long-term memory" if any("07:42" in m for m in memories) else "this task's steps"
    return f"booked the 07:42 for '{task}' (known from {source})", {}


def run(hs: Hindsight, task: str) -> list[str]:
    session = f"task-{uuid.uuid4().hex[:8]}"
    done: list[str] = []
    for _ in range(2):
        recalled = hs.recall(NAMESPACE, f"{task}: which train?", k=3)  # 1. recall before acting
        memories = [f"{r.key} = {r.value}" for r in recalled.results]
        context = [s.content for s in hs.context(NAMESPACE, session).recent]
        step, metadata = act(task, memories, context)
        hs.append_step(NAMESPACE, session, step, role="assistant", metadata=metadata)  # 2. record
        done.append(step)
        if "booked" in step:
            break
    ended = hs.end_session(NAMESPACE, session)  # 3. consolidate what was learned
    job = hs.wait_for_job(NAMESPACE, str(ended.consolidation.job_id))
    done.append(
        f"consolidation {job.status}: {len((job.result or {}).get('observed', []))} "
        "memories observed"
    )
    return done


def main() -> None:
    url = os.environ.get("HINDSIGHT_URL", "http://127.0.0.1:8080")
    with Hindsight(url, os.environ.get("HINDSIGHT_API_KEY")) as hs:
        for task in ("commute to Oslo on Monday", "commute to Oslo on Tuesday"):
            print(f"# {task}")
            for line in run(hs, task):
                print(" -", line)


if __name__ == "__main__":
    main()
