"""Prompt-injection markers in a claim: text written to steer a model, not to state a fact.

A memory is later pasted into an agent's prompt, so a stored value that says "ignore
previous instructions" or opens a chat-template role is an attack on every future prompt.
The markers are deliberately narrow (phrases, tags and characters ordinary facts do not
carry); a claim that has one is quarantined for a curator, never dropped, so a false
positive costs a review, not data. Pure: no I/O.
"""

from __future__ import annotations

import re

# instructions addressed to the model
_INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+)*"
    r"(?:previous|prior|above|earlier|preceding)\s+(?:instructions?|prompts?|messages?|rules?)"
    r"|\byou\s+are\s+now\b"
    r"|\bsystem\s+prompt\b"
    r"|\bnew\s+instructions?\s*:",
    re.IGNORECASE,
)
# chat-template role tags, and role labels at the start of a line
_ROLE_TAG = re.compile(
    r"<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id)\|>"
    r"|\[/?INST\]|<<\s*/?SYS\s*>>|</?(?:system|assistant)>"
    r"|^[ \t]*(?:system|assistant)[ \t]*:",
    re.IGNORECASE | re.MULTILINE,
)
# a tool or function call spelled out as JSON
_TOOL_CALL = re.compile(
    r"[{,]\s*\"(?:tool_calls?|function_call|tool_use)\"\s*:",
    re.IGNORECASE,
)
# characters a reader does not see: zero-width, bidirectional controls, Unicode tags. The
# zero-width (non-)joiners U+200C/U+200D are spared: Indic and Persian scripts and emoji
# sequences need them.
_HIDDEN = re.compile(
    "[\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)

KINDS = {
    "instruction": (_INSTRUCTION, "an instruction to the model"),
    "role_tag": (_ROLE_TAG, "a chat role tag"),
    "tool_call": (_TOOL_CALL, "tool-call JSON"),
    "hidden_unicode": (_HIDDEN, "hidden Unicode characters"),
}


def markers(*texts: str) -> list[str]:
    """The kinds of marker found in any of `texts`, in a fixed order (empty: none)."""
    return [kind for kind, (pattern, _) in KINDS.items() if any(pattern.search(t) for t in texts)]


def describe(kinds: list[str]) -> str:
    """The reason a history entry and an observe result give, e.g.
    "prompt-injection markers: an instruction to the model (instruction)"."""
    return "prompt-injection markers: " + ", ".join(f"{KINDS[k][1]} ({k})" for k in kinds)
