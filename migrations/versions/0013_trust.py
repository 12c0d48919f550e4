"""Trust: key roles; deleting a memory erases its values.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01

Keys get a role (reader, writer, curator, admin) in place of the admin flag. Existing keys
keep what they could do: admin keys become admins, every other key a writer (with its
namespaces unchanged, so an unscoped key still reaches every namespace). Downgrading maps
admin back to the flag and every other role to a plain key.

Deleting a memory now leaves a tombstone in its history (id, key, time, actor) with no
value, and clears the values of its earlier history entries: a deletion is an erasure.
The trigger does it, so every way of deleting (the API, forgetting policies, psql) erases.
Values already in the history of memories deleted before this migration are cleared too.

Cost: api_keys is tiny; one pass over memory_history's deleted entries (indexed by
memory id) to clear the values of memories deleted earlier.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ROLES = ("reader", "writer", "curator", "admin")

_DELETED = r"""
CREATE OR REPLACE FUNCTION hindsight_ltm_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  {scrub}
  INSERT INTO memory_history (memory_id, namespace, mem_key, change, memory_type, old_value,
                              new_value, old_confidence, new_confidence, observation_count,
                              source, actor)
  SELECT o.id, o.namespace, o.mem_key, 'deleted', o.memory_type, {old_value}, NULL,
         o.confidence, NULL, o.observation_count, o.source, hindsight_actor()
  FROM old_rows o;

  INSERT INTO keyword_stats (namespace, term, df)
  SELECT t.namespace, t.term, -count(*)
  FROM (SELECT o.namespace, unnest(o.keyword_terms || 0) AS term
        FROM old_rows o WHERE o.status = 'active') t
  GROUP BY t.namespace, t.term;
  DELETE FROM memory_access a USING old_rows o WHERE a.memory_id = o.id;
  RETURN NULL;
END $$;
"""
# a deletion is an erasure: the tombstone has no value, and earlier entries lose theirs
DELETED_ERASING = _DELETED.replace(
    "{scrub}",
    "UPDATE memory_history h SET old_value = NULL, new_value = NULL FROM old_rows o\n"
    "  WHERE h.memory_id = o.id AND (h.old_value IS NOT NULL OR h.new_value IS NOT NULL);",
).replace("{old_value}", "NULL")
DELETED_BEFORE = _DELETED.replace("{scrub}", "").replace("{old_value}", "o.mem_value")

OLD_VALUE = "Value before the change (null when created)."
NEW_VALUE = "Value after the change (null when deleted)."


def upgrade() -> None:
    op.add_column(
        "api_keys",
        sa.Column(
            "role",
            sa.Text(),
            server_default=sa.text("'writer'"),
            nullable=False,
            comment="reader, writer, curator or admin; each may do what the one before may.",
        ),
    )
    op.create_check_constraint(
        op.f("ck_api_keys_role"),
        "api_keys",
        f"role IN ({', '.join(repr(r) for r in ROLES)})",
    )
    op.execute("UPDATE api_keys SET role = 'admin' WHERE is_admin")
    op.drop_column("api_keys", "is_admin")

    op.execute(DELETED_ERASING)
    op.execute(
        "UPDATE memory_history h SET old_value = NULL, new_value = NULL "
        "WHERE h.memory_id IN (SELECT d.memory_id FROM memory_history d "
        "WHERE d.change = 'deleted') AND (h.old_value IS NOT NULL OR h.new_value IS NOT NULL) "
        "AND NOT EXISTS (SELECT 1 FROM long_term_memory m WHERE m.id = h.memory_id)"
    )
    _history_comments(
        OLD_VALUE.rstrip(".") + "; null once the memory is deleted.",
        NEW_VALUE.rstrip(".") + "; null once the memory is deleted.",
    )


def _history_comments(old_value: str, new_value: str) -> None:
    for column, comment in (("old_value", old_value), ("new_value", new_value)):
        op.alter_column(
            "memory_history",
            column,
            existing_type=sa.Text(),
            existing_nullable=True,
            comment=comment,
        )


def downgrade() -> None:
    # erased values stay erased; only new deletions keep their value again
    _history_comments(OLD_VALUE, NEW_VALUE)
    op.execute(DELETED_BEFORE)
    op.add_column(
        "api_keys",
        sa.Column(
            "is_admin",
            sa.Boolean(),
            server_default=sa.text("false"),
            nullable=False,
            comment="May manage keys and use every namespace.",
        ),
    )
    op.execute("UPDATE api_keys SET is_admin = true WHERE role = 'admin'")
    op.drop_constraint(op.f("ck_api_keys_role"), "api_keys", type_="check")
    op.drop_column("api_keys", "role")
