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
# Chinese and Japanese: greetings, thanks, acknowledgements and farewells, with the polite
# endings and particles that follow them
_FILLER_CJK = re.compile(
    r"^(你好|您好|大家好|嗨|哈喽|早上好|早安|午安|下午好|晚上好|晚安|谢谢|谢谢你|谢谢您|多谢|"
    r"感谢|非常感谢|不客气|不用谢|没关系|没问题|好的|好|好吧|行|可以|嗯+|哦+|噢|啊|哈+|对|"
    r"是的|是|明白了?|知道了|了解了?|收到|再见|拜拜|回头见|明天见|辛苦了|"
    r"こんにちは|こんばんは|おはよう(ございます)?|ありがとう(ございます|ございました)?|"
    r"どうも(ありがとう(ございます)?)?|すみません|はい|いいえ|うん|ええ|そう(です)?(ね)?|"
    r"なるほど|了解(です|しました)?|わかりました|分かりました|承知(しました|いたしました)|"
    r"さようなら|またね|じゃあね|おやすみ(なさい)?|よろしく(お願い(します|いたします))?|"
    r"お疲れ様(です|でした)?|どういたしまして|いいよ|オッケー|ok)"
    r"(啦|了|呀|啊|哦|呢|吧|ね|よ|な|〜|~)*$",
    re.IGNORECASE,
)
# clause ends: ASCII and the full-width CJK marks
_CLAUSE_END = r"[,.!?;:\n，。！？、；：…]+"


def _clauses(text: str) -> list[str]:
    clauses = [c.strip() for c in re.split(_CLAUSE_END, text)]
    return [re.sub(r"\s+", " ", c) for c in clauses if c]


def _filler_clause(clause: str) -> bool:
    return bool(_FILLER.match(clause) or _FILLER_CJK.match(clause.replace(" ", "")))


def is_filler(text: str) -> bool:
    """True for greetings, thanks, small talk and acknowledgements with nothing else in
    them: every clause of the text must be filler (or a stray character)."""
    return all(len(c) < 2 or _filler_clause(c) for c in _clauses(text))


def is_small_talk(text: str) -> bool:
    """True when the text is made of greetings, thanks and acknowledgements only: unlike
    `is_filler`, a stray character ("b", "5") is not small talk, since as a stored value it
    may well be the answer to something."""
    clauses = _clauses(text)
    return bool(clauses) and all(_filler_clause(c) for c in clauses)


def first_sentence_summary(text: str, limit: int = 200) -> str:
    """The deterministic summary: the first sentence, cut at a word boundary to `limit`
    characters with an ellipsis. Used for older steps when no LLM is configured."""
    flat = re.sub(r"\s+", " ", text).strip()
    # a Chinese or Japanese sentence ends at its full-width mark, with no space after it
    match = re.match(r"(.+?(?:[.!?](?=\s|$)|[。！？]))", flat)
    sentence = match.group(1) if match else flat
    if len(sentence) <= limit:
        return sentence
    cut = sentence[:limit].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + "…"
