"""What a namespace and a session id may be called, for the server and its clients alike.

Each check returns what is wrong with a name, or None: the caller raises its own kind of
error (a 400 in the service, a usage error in the CLI).
"""

from __future__ import annotations

import re

from hindsight import limits

# fullmatch: `$` alone also matches before a trailing newline, so "ns\n" passed as "ns"
_NAMESPACE = re.compile(limits.NAMESPACE_PATTERN)
_SESSION = re.compile(limits.SESSION_ID_PATTERN)


def namespace_problem(namespace: str) -> str | None:
    return _problem(_NAMESPACE, namespace, "namespace", "a namespace", "1-64", "'.', '_' and '-'")


def session_id_problem(session_id: str) -> str | None:
    return _problem(
        _SESSION, session_id, "session_id", "a session id", "1-128", "'.', '_', ':' and '-'"
    )


def _problem(
    pattern: re.Pattern[str], name: str, field: str, what: str, length: str, marks: str
) -> str | None:
    if pattern.fullmatch(name):
        return None
    return (
        f"{field}: {name!r} is not {what}; use {length} characters of letters, digits, "
        f"{marks}, starting with a letter or digit"
    )
