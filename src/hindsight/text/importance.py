"""The built-in importance estimate of a claim a client stores without rating it.

Deliberately cheap and narrow: it only tells the trivial from the rest. Greetings, thanks,
acknowledgements and other filler (`filler.is_small_talk`, English, Chinese and Japanese) rate
`TRIVIAL`; anything else keeps the neutral `NEUTRAL` a client's unrated write always had,
since a short value ("blue", "对青霉素过敏") is as likely to matter as a long one.
"""

from __future__ import annotations

from hindsight.text.filler import is_small_talk

TRIVIAL = 0.1
NEUTRAL = 0.5


def estimate_importance(value: str) -> float:
    """How much the claim `value` would matter later, 0..1, without a model."""
    return TRIVIAL if is_small_talk(value) else NEUTRAL
