"""The database's functions and triggers as they are at head, read by name from
`functions.sql` (its header says how migrations use them and how to change one)."""

from __future__ import annotations

import hashlib
import re
from functools import cache
from pathlib import Path

FILE = Path(__file__).with_name("functions.sql")
_SECTION = re.compile(r"^-- name: (\S+)\n", re.MULTILINE)
_CREATES = re.compile(r"^CREATE (?:OR REPLACE )?(?:FUNCTION|TRIGGER) (\w+)", re.MULTILINE)


@cache
def definitions() -> dict[str, str]:
    """Each definition of the file by the name of what it creates."""
    return parse(FILE.read_text())


def parse(text: str) -> dict[str, str]:
    """Each section's SQL by the name of what it creates, as it runs: without the notes
    (lines that start with `--`)."""
    parts = _SECTION.split(text)[1:]
    found: dict[str, str] = {}
    for name, section in zip(parts[::2], parts[1::2], strict=True):
        sql = "\n".join(s for s in section.splitlines() if not s.startswith("--")).strip()
        # a section that created something else, or two things, could not be loaded alone
        if _CREATES.findall(sql) != [name] or name in found:
            raise ValueError(f"{FILE.name}: the section {name!r} must create {name} alone")
        found[name] = sql + "\n"
    return found


def pin(sql: str) -> str:
    return hashlib.sha256(sql.encode()).hexdigest()[:12]


def load(**pinned: str) -> str:
    """The SQL that creates each definition named, in the order named, provided each is
    still the text with its pin: the text the calling migration was written against, which
    it must install forever (`load(hindsight_actor="45390ef4f7cb")`)."""
    texts = []
    for name, expected in pinned.items():
        sql = definitions()[name]
        if pin(sql) != expected:
            raise RuntimeError(
                f"{name} in src/hindsight/db/{FILE.name} is not the text this migration was "
                f"written against (pin {expected}; the file's is now {pin(sql)}). A migration "
                "must do the same thing forever: give it the text it loaded as a constant of "
                "its own, and load the new text from a new migration, as the header of "
                f"{FILE.name} says."
            )
        texts.append(sql)
    return "\n".join(texts)


def written_by(revision: str, constant: str) -> str:
    """SQL that an earlier migration holds as a module constant: what a downgrade restores
    when the upgrade replaced a definition that migration wrote. Only inside a migration."""
    from alembic import op

    script = op.get_context().script
    assert script is not None
    return str(getattr(script.get_revision(revision).module, constant))
