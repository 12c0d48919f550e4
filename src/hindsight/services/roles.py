"""What a key's role lets it do.

Roles are ordered: each can do everything the one before it can.
- reader: recall, get, list, history, working-memory reads.
- writer (the default for new keys): also observe, append, extract, end sessions, edit
  and delete memories.
- curator: also vouch for a memory — set `verified` or `permanent`, or a confidence above
  the initial confidence — and approve or reject quarantined memories. Without this, any
  writer could plant a claim that ranks as certain and can never be forgotten, or let a
  poisoned one out of quarantine.
- admin: every namespace, key management, namespace erase and export.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from hindsight.errors import Forbidden


class Role(StrEnum):
    READER = "reader"
    WRITER = "writer"
    CURATOR = "curator"
    ADMIN = "admin"

    @property
    def rank(self) -> int:
        return _ORDER.index(self)

    def at_least(self, needed: Role) -> bool:
        return self.rank >= needed.rank


_ORDER = (Role.READER, Role.WRITER, Role.CURATOR, Role.ADMIN)
ROLES = tuple(r.value for r in _ORDER)


def require(role: Role, needed: Role, what: str) -> None:
    """Raise 403 naming the role `what` needs when `role` falls short."""
    if not role.at_least(needed):
        raise Forbidden(
            f"{what} needs the {needed.value} role (or higher); this API key has the "
            f"{role.value} role"
        )


@dataclass(frozen=True)
class Access:
    """What a call does to a namespace, and the least role that may do it."""

    needed: Role
    what: str  # for the 403: "<what> needs the writer role"


# recall included: its log entry is a record of the read, not a change
READING = Access(Role.READER, "reading memories")
# observe, edit, delete, append steps, extract, end or consolidate sessions, feedback
WRITING = Access(Role.WRITER, "changing memories or working memory")
# the namespace's rules: its policy (what ages, what goes, whom to trust)
CURATING = Access(Role.CURATOR, "changing the namespace's policy")
# the whole namespace at once: erase and export
WHOLE_NAMESPACE = Access(Role.ADMIN, "erasing or exporting a whole namespace")


def vouching(
    verified: bool | None, permanent: bool | None, confidence: float | None, initial: float
) -> str | None:
    """What in a write vouches for a memory beyond what the caller observed (curator's
    call), or None."""
    if verified is not None:
        return "setting verified"
    if permanent is not None:
        return "setting permanent"
    if confidence is not None and confidence > initial:
        return f"a confidence above the initial {initial:g}"
    return None
