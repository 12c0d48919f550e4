"""Text as a detector should read it: NFKC, without invisible characters, confusable letters
folded to Latin.

Writers hide a secret or an instruction from a pattern with characters a reader does not
see (a zero-width space, soft hyphen or ZWNJ inside `ghp_…`), full-width forms (`ＡＫＩＡ…`)
or look-alike letters (a Cyrillic "о" in "ignore"). Detectors run on the folded text; the
stored text is never rewritten except where a finding is replaced, so a finding's span is
mapped back onto the original string (`fold` keeps, per folded character, the index of the
original one it came from). Invisible characters inside a finding go with it.

The common case costs one `isascii` or one C-level `is_normalized` plus one regex search;
the per-character walk runs only for text that needs it.
"""

from __future__ import annotations

import re
import unicodedata

# format characters with no glyph: soft hyphen, combining grapheme joiner, Mongolian vowel
# separator, zero-width space/(non-)joiner, direction marks, word joiner and invisible
# operators, BOM. For detection only: ZWJ/ZWNJ stay in stored text that holds no finding.
INVISIBLE = "\u00ad\u034f\u180e\u200b-\u200f\u2060-\u2064\ufeff"
_INVISIBLE = re.compile(f"[{INVISIBLE}]")

# Cyrillic and Greek letters drawn like Latin ones (the Unicode confusables a writer reaches
# for first); folded only for the injection markers, whose patterns are English words
CONFUSABLES = str.maketrans(
    "аеорсухіјѕԁԛԝһӏАВЕКМНОРСТХІЈЅУ"  # Cyrillic
    "αβεικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",  # Greek
    "aeopcyxijsdqwhlABEKMHOPCTXIJSYabeikvoptuxABEZHIKMNOPTYX",
)


def plain(text: str) -> bool:
    """True when folding would not change the text (the fast path)."""
    if text.isascii():
        return True
    return unicodedata.is_normalized("NFKC", text) and not _INVISIBLE.search(text)


def quick(text: str) -> str:
    """The folded text, without a map back (for a yes/no answer)."""
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))


def fold(text: str) -> tuple[str, list[int]]:
    """The folded text and, per folded character, the index in `text` it came from.

    NFKC is applied per character, so a finding never straddles a composition; the few
    sequences that compose differently (a base letter and a separate accent) do not occur in
    the ASCII-shaped tokens the detectors look for."""
    out: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        if ch < "\x80":
            out.append(ch)
            origin.append(i)
            continue
        if _INVISIBLE.match(ch):
            continue
        for c in unicodedata.normalize("NFKC", ch):
            out.append(c)
            origin.append(i)
    return "".join(out), origin
