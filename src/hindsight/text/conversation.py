"""A recall query that is a conversation: its turns, and how much each says about what to
recall.

Agents recall with what they have, often the last turns of a dialogue with speaker tags,
greetings and chatter. Searched as one bag of words, every line counts alike and the
assistant's long replies outweigh the user's short lines. Here the conversation becomes
weighted turns (measured on MADial-Bench's dialogues, where the query is the dialogue so
far; benchmarks/README.md, issue 30):

- the user's lines count twice the assistant's (the user's memories are wanted, and the
  assistant mostly restates or asks): R@5 0.636 -> 0.658 (MiniLM), 0.447 -> 0.484 (built-in),
  English; 0.425 -> 0.452 Chinese;
- each older turn counts 0.9 of the next: a mild lean towards the latest lines (0.8 and
  0.7 lost the English built-in set, 1.0 the Chinese one);
- greetings, thanks and acknowledgements with nothing else in them are dropped
  (`text.filler`), and markup lines (`<BOD>`, `<|im_start|>`) and speaker tags are never
  searched.

`parse` finds the turns of a transcript in a query string ("<Bart>: ...", "User: ...",
"[assistant] ..."); recall's `context` gives them directly.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from hindsight.text.filler import is_filler

# The weight of an assistant's (or the system's, or a tool's) turn against a user's.
OTHER_ROLE_WEIGHT = 0.5
# Each turn counts this much of the one after it.
RECENCY = 0.9
# At most this many of the latest turns, and this many characters of them, are searched.
MAX_TURNS = 16
MAX_CHARS = 4_000

# Speakers whose lines are not the user's own words.
NOT_USER = frozenset(
    {"assistant", "ai", "bot", "agent", "model", "system", "tool", "function", "developer"}
    | {"gpt", "chatgpt", "claude", "gemini", "chatbot", "助手", "アシスタント"}
)

# Speakers a transcript names by role.
KNOWN_ROLES = NOT_USER | {"user", "human", "me", "customer", "client", "用户", "ユーザー"}

# A speaker tag opening a line: <Name>:, [Name]:, [Name], **Name**:, Name: (a name of at
# most four words, starting with a letter). "https://..." is no speaker.
_TAG = re.compile(
    r"^\s*(?:<(?P<angle>[^<>\n]{1,40})>\s*[:：]?|\[(?P<square>[^\[\]\n]{1,40})\]\s*[:：]?"
    r"|\*\*(?P<bold>[^*\n]{1,40})\*\*\s*[:：]|(?P<plain>[^\W\d_][^\W_]*(?:[ .'-][^\W_]+){0,3})"
    r"\s*[:：])(?!//)\s*"
)
# A line that is only markup: <BOD>, </s>, <|im_end|>, <EOD>
_MARKUP = re.compile(r"^\s*<\|?/?[\w-]{0,20}\|?>\s*$")
_QUOTES = "\"'“”「」『』"


@dataclass(frozen=True)
class Turn:
    role: str
    content: str


@dataclass(frozen=True)
class WeightedTurn:
    role: str
    content: str
    weight: float


def _speaker(match: re.Match[str]) -> str:
    name = next(g for g in match.group("angle", "square", "bold", "plain") if g)
    return name.strip()


def parse(text: str) -> list[Turn] | None:
    """The turns of a transcript, or None when the text is not one. At least two lines
    must open with a speaker tag, and the tags must look like a dialogue's: a known role
    (user, assistant ...), a name in brackets (<Bart>:, [user]), or a speaker who talks
    twice ("Note: ...\nTodo: ..." is no dialogue). A line without a tag continues the
    turn before it; markup lines are dropped, and so are quotes around a line."""
    turns: list[tuple[str, list[str]]] = []
    seen: dict[str, int] = {}
    bracketed = False
    for line in text.splitlines():
        if not line.strip() or _MARKUP.match(line):
            continue
        match = _TAG.match(line)
        if match:
            speaker = _speaker(match)
            seen[speaker.casefold()] = seen.get(speaker.casefold(), 0) + 1
            bracketed = bracketed or not match.group("plain")
            turns.append((speaker, [line[match.end() :]]))
        elif turns:
            turns[-1][1].append(line)
        else:
            turns.append(("user", [line]))
    dialogue = bracketed or bool(KNOWN_ROLES & set(seen)) or any(n > 1 for n in seen.values())
    if sum(seen.values()) < 2 or not dialogue:
        return None
    out = []
    for speaker, lines in turns:
        content = " ".join(x.strip().strip(_QUOTES).strip() for x in lines).strip()
        if content:
            out.append(Turn(speaker, content))
    return out if len(out) >= 2 else None


def is_user(role: str) -> bool:
    return role.strip().casefold() not in NOT_USER


def weighted(turns: Sequence[Turn]) -> list[WeightedTurn]:
    """The turns to search, oldest first, each with its weight: filler dropped, then the
    latest MAX_TURNS (and MAX_CHARS), the latest counting 1 (a user's) or
    OTHER_ROLE_WEIGHT, each older one RECENCY of the one after it."""
    kept = [t for t in turns if t.content.strip() and not is_filler(t.content)]
    chosen: list[Turn] = []
    chars = 0
    for turn in reversed(kept[-MAX_TURNS:]):
        if chosen and chars + len(turn.content) > MAX_CHARS:
            break
        chosen.append(turn)
        chars += len(turn.content)
    out = []
    for age, turn in enumerate(chosen):
        role = 1.0 if is_user(turn.role) else OTHER_ROLE_WEIGHT
        out.append(WeightedTurn(turn.role, turn.content[:MAX_CHARS], round(role * RECENCY**age, 6)))
    return out[::-1]
