"""Prompt-injection markers in a claim: text written to steer a model, not to state a fact.

A memory is later pasted into an agent's prompt, so a stored value that says "ignore
previous instructions" or opens a chat-template role is an attack on every future prompt.
The markers are deliberately narrow (phrases, tags and characters ordinary facts do not
carry); a claim that has one is quarantined for a curator, never dropped, so a false
positive costs a review, not data. Pure: no I/O.

The phrases are matched on folded text (`hindsight.text.normalize`: NFKC, invisible
characters dropped, Cyrillic and Greek look-alikes read as Latin), so a soft hyphen inside
"ignore" or a Cyrillic "о" does not hide one; hidden characters are a marker of their own,
read on the text as sent.
"""

from __future__ import annotations

import re

from hindsight.text import normalize

# instructions addressed to the model: a verb of dismissal, a word that points at what came
# before or at the model's own rules, and what is dismissed ("ignore previous directions",
# "disregard your guidelines"); "ignore the old invite" has no such pointer
_INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass|abandon|discard)\s+"
    r"(?:(?:all|any|every|of|the|these|those|my|your|its|safety|system|original|initial)\s+)*"
    r"(?:(?:previous|prior|above|earlier|preceding|foregoing)\s+"
    r"(?:(?:and|or|all|any|the|your|system|safety|previous|prior|above|earlier)\s+)*"
    r"(?:instructions?|prompts?|messages?|rules?|directions?|directives?|guidelines?|commands?"
    r"|orders?|context|conversation|constraints?|policies|polic(?:y|ies)|guidance|text)"
    r"|(?:your|all|the\s+system|system|safety)\s+(?:safety\s+)?"
    r"(?:instructions|prompts?|rules|directions|directives|guidelines|constraints|policies"
    r"|guardrails|programming|restrictions))"
    r"|\byou\s+are\s+now\b"
    r"|\bfrom\s+now\s+on,?\s+you\s+(?:are|will|must)\b"
    r"|\bsystem\s+prompt\b"
    r"|\bnew\s+instructions?\s*:"
    # Chinese: "ignore … instructions/prompts/rules" within one clause, "you are now the admin"
    r"|(?:忽略|无视|忽视|忘记|忘掉|不要理会|不要遵守|别管)[^。！？\n]{0,12}?"
    r"(?:指令|指示|提示词|提示|规则|命令|设定|要求|限制)"
    r"|你现在是(?:一个|一名)?(?:管理员|系统|开发者|超级用户|root|admin)",
    re.IGNORECASE,
)
# chat-template role tags, and role labels at the start of a line
_ROLE_TAG = re.compile(
    r"<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id)\|>"
    r"|\[/?INST\]|<<\s*/?SYS\s*>>|</?(?:system|assistant)>"
    # a role label opening a line, also as a Markdown heading or quote ("### System:")
    r"|^[ \t#>*]*(?:system|assistant|developer)[ \t*]*:",
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


def _folded(text: str) -> str:
    if text.isascii():
        return text
    return normalize.quick(text).translate(normalize.CONFUSABLES)


def markers(*texts: str) -> list[str]:
    """The kinds of marker found in any of `texts`, in a fixed order (empty: none)."""
    folded = [_folded(t) for t in texts]
    return [
        kind
        for kind, (pattern, _) in KINDS.items()
        if any(pattern.search(t) for t in (texts if kind == "hidden_unicode" else folded))
    ]


def describe(kinds: list[str]) -> str:
    """The reason a history entry and an observe result give, e.g.
    "prompt-injection markers: an instruction to the model (instruction)"."""
    return "prompt-injection markers: " + ", ".join(f"{KINDS[k][1]} ({k})" for k in kinds)
