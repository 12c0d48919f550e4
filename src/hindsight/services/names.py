"""A namespace or session id the service is given must be a name it can store: else a 400
that says what a name may be (the rules are the wire's, so clients can check first)."""

from __future__ import annotations

from hindsight.errors import InvalidInput
from hindsight.wire import names


def check_namespace(namespace: str) -> str:
    if problem := names.namespace_problem(namespace):
        raise InvalidInput(problem)
    return namespace


def check_session_id(session_id: str) -> str:
    if problem := names.session_id_problem(session_id):
        raise InvalidInput(problem)
    return session_id
