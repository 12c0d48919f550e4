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
    if _NAMESPACE.fullmatch(namespace):
        return None
    return (
        f"namespace: {namespace!r} is not a namespace; use 1-64 characters of letters, "
        "digits, '.', '_' and '-', starting with a letter or digit"
    )


def session_id_problem(session_id: str) -> str | None:
    if _SESSION.fullmatch(session_id):
        return None
    return (
        f"session_id: {session_id!r} is not a session id; use 1-128 characters of "
        "letters, digits, '.', '_', ':' and '-', starting with a letter or digit"
    )
