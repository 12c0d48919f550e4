"""Recall with the conversation so far: hand Hindsight the last turns, not one question.

    HINDSIGHT_URL=http://127.0.0.1:8080 HINDSIGHT_API_KEY=hs_... \
        python examples/conversation_recall.py

The user's latest line ("Who could take him this week?") names nothing to search for; the
turns before it do. Recall weighs each turn (the user's over the assistant's, the latest over
older ones), drops small talk, and says which turns it searched and how much each counted.
"""

from __future__ import annotations

import os

from hindsight.client import Hindsight

NAMESPACE = os.environ.get("HINDSIGHT_NAMESPACE", "example-user")

CONVERSATION = [
    {"role": "user", "content": "Hi!"},
    {"role": "assistant", "content": "Hello! How can I help today?"},
    {"role": "user", "content": "My beagle Rex has been coughing since Sunday"},
    {"role": "assistant", "content": "Poor Rex! A vet should listen to that cough."},
]


def main() -> None:
    url = os.environ.get("HINDSIGHT_URL", "http://127.0.0.1:8080")
    with Hindsight(url, os.environ.get("HINDSIGHT_API_KEY")) as hs:
        hs.observe_many(
            NAMESPACE,
            [
                {"key": "user.pet", "value": "has a beagle named Rex"},
                {"key": "user.vet", "value": "Rex's vet is Dr. Okafor on Elm Street"},
                {"key": "user.trip", "value": "flies to Oslo on Friday"},
            ],
        )
        found = hs.recall(NAMESPACE, "Who could take him this week?", context=CONVERSATION, k=2)
        assert found.conversation is not None
        for turn in found.conversation.turns:
            print(f"searched {turn.role} ({turn.weight:g}): {turn.content}")
        for hit in found.results:
            print(f"recalled {hit.key}: {hit.value}")
        # the same conversation as one transcript in `query` is read the same way
        transcript = "\n".join(f"{t['role']}: {t['content']}" for t in CONVERSATION)
        again = hs.recall(NAMESPACE, transcript + "\nuser: Who could take him this week?", k=2)
        print("from a transcript:", ", ".join(hit.key for hit in again.results))


if __name__ == "__main__":
    main()
