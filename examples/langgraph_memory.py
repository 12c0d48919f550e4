"""A LangGraph agent with long-term memory in Hindsight: what a user tells it in one run
(one thread) it still knows in the next, in another process.

    export HINDSIGHT_URL=http://127.0.0.1:8080 HINDSIGHT_API_KEY=hs_...
    python examples/langgraph_memory.py alice "I live in Oslo"
    python examples/langgraph_memory.py alice "I like sailing"
    python examples/langgraph_memory.py alice "Where do I live?"

The graph is remember -> respond; both nodes use `runtime.store`, a `HindsightStore`. The
"model" is a few rules so the example runs anywhere; a real agent asks its LLM to pick
what to remember and puts the recalled memories into its prompt.
Needs `pip install 'hindsight[langgraph]'`.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from hindsight.integrations.langgraph import HindsightStore

FACTS = {  # what the rules keep: pattern -> memory key
    r"^I live in (?P<v>.+)$": "home",
    r"^I like (?P<v>.+)$": "likes",
    r"^I work (?:at|for) (?P<v>.+)$": "employer",
}


class State(TypedDict, total=False):
    message: str
    reply: str


@dataclass
class User:
    user_id: str


def remember(state: State, runtime: Runtime[User]) -> State:
    assert runtime.store is not None
    for pattern, key in FACTS.items():
        if m := re.match(pattern, state["message"].strip().rstrip(".")):
            runtime.store.put(
                ("users", runtime.context.user_id, "facts"),
                key,
                {"fact": state["message"].strip(), key: m.group("v")},
            )
            return {"reply": f"Noted: {key} = {m.group('v')}."}
    return {}


def respond(state: State, runtime: Runtime[User]) -> State:
    if state.get("reply"):
        return {}
    assert runtime.store is not None
    hits = runtime.store.search(
        ("users", runtime.context.user_id, "facts"), query=state["message"], limit=1
    )
    if not hits:
        return {"reply": "I don't know that yet."}
    return {"reply": f'From memory: "{hits[0].value["fact"]}" (score {hits[0].score:.2f}).'}


def build(store: HindsightStore):
    graph = StateGraph(State, context_schema=User)
    graph.add_node("remember", remember)
    graph.add_node("respond", respond)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "respond")
    graph.add_edge("respond", END)
    return graph.compile(store=store)


def main(user_id: str, message: str) -> None:
    with HindsightStore(
        os.environ.get("HINDSIGHT_URL", "http://127.0.0.1:8080"),
        api_key=os.environ.get("HINDSIGHT_API_KEY"),
        namespace=os.environ.get("HINDSIGHT_NAMESPACE", "langgraph"),
    ) as store:
        out = build(store).invoke({"message": message}, context=User(user_id))
        print(out["reply"])
        known = store.search(("users", user_id, "facts"), limit=100)
        print(f"{len(known)} facts about {user_id}: {', '.join(sorted(i.key for i in known))}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: langgraph_memory.py USER_ID MESSAGE")
    main(sys.argv[1], sys.argv[2])
