"""Whether two keys name the same thing about the same subject: the first test a candidate
contradiction must pass (the others: the embedder's similarity, and a different claim).

A key is a path (`user.language`, `person.ella.city`): what comes before its last segment is
the subject, the last segment the attribute. Two keys are about the same attribute of the
same subject when the subject is the same and the attributes share a word
(`user.language` / `user.main_language`). A key without a subject (`m1`, `D1:1` has subject
`D1` but a numeric attribute) is never a candidate: without one, similar text is as likely
two different events as one claim changing.
"""

from __future__ import annotations

import re

_SEGMENTS = re.compile(r"[.:/]")
_WORDS = re.compile(r"[_\-\s]+")


def _parts(key: str) -> tuple[str, frozenset[str]]:
    segments = _SEGMENTS.split(key.strip().casefold())
    if len(segments) < 2:
        return "", frozenset()
    words = {w for w in _WORDS.split(segments[-1]) if len(w) > 1 and not w.isdigit()}
    return ".".join(segments[:-1]), frozenset(words)


def comparable(key: str) -> bool:
    """Whether `key` has a subject and an attribute with words (`D1:5`, `m1` have none):
    only such a key can contradict another."""
    subject_path, words = _parts(key)
    return bool(subject_path and words)


def subject(key: str) -> str:
    """The subject path of `key` ('' when it has none)."""
    return _parts(key)[0]


def same_subject(a: str, b: str) -> bool:
    """Two different keys naming the same attribute of the same subject."""
    if a == b:
        return False
    (pa, wa), (pb, wb) = _parts(a), _parts(b)
    return bool(pa) and pa == pb and bool(wa & wb)


def prefix(key: str) -> str:
    """`key` up to and including its last separator: what every key about the same subject
    starts with ('' when it has no subject)."""
    at = max(key.rfind(s) for s in ".:/")
    return key[: at + 1] if at > 0 else ""
