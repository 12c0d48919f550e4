"""Recognises greetings and filler, which never become memories.

The LLM is told the same; this is the safety net for when it forgets.
"""

from __future__ import annotations

import re

_FILLER = re.compile(
    r"^(hi|hello|hey|hiya|yo|thanks?|thank you( (so|very) much)?|thx|ok(ay)?|k|sure|cool|"
    r"great|nice|awesome|perfect|got it|sounds good|no problem|np|you'?re welcome|bye|goodbye|"
    r"see you( (soon|later|tomorrow))?|cheers|good (morning|afternoon|evening|night)|"
    r"how are you( doing)?( today)?|how can i help( you)?( today)?|"
    r"what can i do for you( today)?|nice to meet you|have a (nice|good|great) (day|one)|"
    r"you too|my pleasure|any ?time|glad (i could|to) help|lol|haha|yes|no|yep|nope|"
    r"hmm+|um+|uh+|i see|right|alright|will do)"
    r"( (there|again|all|everyone|so much|a lot|friend))?$",
    re.IGNORECASE,
)


def is_filler(text: str) -> bool:
    """True for greetings, thanks, small talk and acknowledgements with nothing else in
    them: every clause of the text must be filler."""
    clauses = [c.strip() for c in re.split(r"[,.!?;:\n]+", text)]
    clauses = [re.sub(r"\s+", " ", c) for c in clauses if c]
    return not clauses or all(len(c) < 2 or _FILLER.match(c) for c in clauses)


def first_sentence_summary(text: str, limit: int = 200) -> str:
    """The deterministic summary: the first sentence, cut at a word boundary to `limit`
    characters with an ellipsis. Used for older steps when no LLM is configured."""
    flat = re.sub(r"\s+", " ", text).strip()
    match = re.match(r"(.+?[.!?])(\s|$)", flat)
    sentence = match.group(1) if match else flat
    if len(sentence) <= limit:
        return sentence
    cut = sentence[:limit].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + "…"
