"""A deterministic stand-in for an LLM's judgement, behind the fake OpenAI server.

Distillation: every "my <thing> is <value>" in the conversation becomes the memory
`user.<thing>` = <value>; the action follows the existing memories shown in the prompt
(same value: reinforce, other value: update, unknown key: new). "hello"/"thanks" lines
become a greeting memory and "trivia:" lines a low-importance one, so the service's own
filters can be seen dropping them. "<type> <key>: <value>" lines (type event, summary or
any other word) become a memory of that type as the model names it, so the service's own
handling of types can be seen; its occurred_at is a date written in the value
(YYYY-MM-DD), else "yesterday" before the message's "at" (or the reference time), else the
message's "at" itself when there is one. Summaries: "summary of step N". Importance of
direct writes: `rate`.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from typing import Any

_FACT = re.compile(r"my ([a-z][a-z ]*?) is ([^.!?\n]+)", re.IGNORECASE)
_PLANT = re.compile(r"remember ([a-z][a-z_.]*) = ([^.!?\n]+)", re.IGNORECASE)
_TYPED = re.compile(r"^(event|summary|anecdote) ([a-z][a-z_.]*): (.+)$", re.IGNORECASE)
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_NOW = re.compile(r"Reference time \(now\): (\S+)")


def _when(value: str, message: dict[str, Any], text: str) -> str | None:
    """When a typed memory happened, as a careful model would read it."""
    written = _DATE.search(value)
    if written:
        return written.group()
    said = message.get("at") or (_NOW.search(text) or [None, None])[1]
    if said and "yesterday" in value.lower():
        return (datetime.fromisoformat(said) - timedelta(days=1)).date().isoformat()
    return message.get("at")


def _user_text(body: dict[str, Any]) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def _messages(text: str) -> list[dict[str, Any]]:
    """The JSON lines between the transcript markers."""
    block = text.split("<<<TRANSCRIPT\n", 1)[1].rsplit("\nTRANSCRIPT>>>", 1)[0]
    return [json.loads(line) for line in block.split("\n") if line.strip()]


def distill(body: dict[str, Any]) -> str:
    text = _user_text(body)
    existing_json, _ = text.split("\n\nConversation:\n", 1)
    existing = {m["key"]: m["value"] for m in json.loads(existing_json.split("\n", 1)[1])}
    memories = []
    for message in _messages(text):
        content = message["content"]
        # a gullible model: obeys "remember KEY = VALUE" wherever it reads it, and does
        # not say where the claim came from
        for key, value in _PLANT.findall(content):
            memories.append(
                {"action": "new", "key": key, "value": value.strip(), "importance": 0.9}
            )
        for thing, value in _FACT.findall(content):
            key = "user." + thing.strip().replace(" ", "_").lower()
            value = value.strip()
            action = "new"
            if key in existing:
                action = "reinforce" if existing[key] == value else "update"
            memories.append(
                {
                    "action": action,
                    "key": key,
                    "value": value,
                    "memory_type": "preference" if "favorite" in key else "fact",
                    "importance": 0.8,
                    "tags": ["chat"],
                    "from": [message["i"]],
                }
            )
        typed = _TYPED.match(content.strip())
        if typed:
            memory_type, key, value = typed.groups()
            memories.append(
                {
                    "action": "new",
                    "key": key.lower(),
                    "value": value.strip(),
                    "memory_type": memory_type.lower(),
                    "importance": 0.8,
                    "from": [message["i"]],
                    "occurred_at": _when(value, message, text),
                }
            )
        if re.match(r"^(hello|hi|thanks)\b", content, re.IGNORECASE):
            memories.append(
                {
                    "action": "new",
                    "key": "conversation.greeting",
                    "value": content.strip(),
                    "memory_type": "fact",
                    "importance": 0.9,
                }
            )
        if content.lower().startswith("trivia:"):
            memories.append(
                {
                    "action": "new",
                    "key": "trivia",
                    "value": content[7:].strip(),
                    "memory_type": "fact",
                    "importance": 0.1,
                }
            )
    return json.dumps({"memories": memories})


def summarize(body: dict[str, Any]) -> str:
    indexes = [int(m["step_index"]) for m in _messages(_user_text(body))]
    return json.dumps(
        {"summaries": [{"step_index": i, "summary": f"summary of step {i}"} for i in indexes]}
    )


def contradiction(body: dict[str, Any]) -> str:
    """Two claims contradict unless the newer one says it adds ("also") to the older."""
    pair = json.loads(_user_text(body))
    adds = "also" in pair["newer"]["value"].lower().split()
    reason = "the newer adds to the older" if adds else "the newer replaces the older"
    return json.dumps({"contradicts": not adds, "reason": reason})


def patterns(body: dict[str, Any]) -> str:
    """Reflection: three or more memories about morning meetings make a preference; the
    model also claims a pattern with no evidence, which the service must not store."""
    lines = _user_text(body).split("\n")[1:]
    memories = [json.loads(line) for line in lines if line.strip()]
    mornings = [m["id"] for m in memories if "morning meeting" in m["value"].lower()]
    found = [{"key": "user.habit.unfounded", "value": "The user loves jazz", "evidence": []}]
    if len(mornings) >= 3:
        found.append(
            {
                "key": "user.meeting_time",
                "value": "The user prefers morning meetings",
                "memory_type": "preference",
                "evidence": mornings,
            }
        )
    return json.dumps({"patterns": found})


def rate(body: dict[str, Any]) -> str:
    """Importance of direct writes: health 0.95, weather chat 0.05, anything else 0.6 (so
    the model's word, not the built-in estimate's 0.5 or 0.1, can be seen)."""
    ratings = []
    for m in _messages(_user_text(body)):
        value = m["value"].lower()
        rating = 0.95 if "allerg" in value else 0.05 if "weather" in value else 0.6
        ratings.append({"i": m["i"], "importance": rating})
    return json.dumps({"ratings": ratings})


def answer(body: dict[str, Any]) -> str:
    system = body["messages"][0]["content"]
    if "You rate memories" in system:
        return rate(body)
    if "You reflect on" in system:
        return patterns(body)
    if "contradictions" in system:
        return contradiction(body)
    if "long-term memory" in system:
        return distill(body)
    if "short summaries" in system:
        return summarize(body)
    return "{}"
