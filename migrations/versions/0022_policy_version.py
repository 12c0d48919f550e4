"""A version number for the namespace policies, bumped by every change to them.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-04

Every recall and write reads its namespace's policy (redaction, trust, ranking). Each
process caches policies, and checked each one again after 5 seconds: with many namespaces
nearly every recall paid a round trip for it (profiled over 1,000 namespaces: about 4% of
the service's CPU, and a round trip before the search). Now a process reads this one
number every 5 seconds instead, and drops its cached policies when it has moved. A
statement-level trigger bumps it in the transaction that changes a policy, however the
change is made (the API, an erasure, an operator in psql), so a reader that sees the new
number also sees the change.

Cost: one row in hindsight_meta and a trigger on a small table; no rewrite.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "INSERT INTO hindsight_meta (name, value) VALUES ('policy_version', '0') "
        "ON CONFLICT (name) DO NOTHING"
    )
    op.execute(
        """
        CREATE FUNCTION hindsight_policy_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE hindsight_meta SET value = (value::bigint + 1)::text
            WHERE name = 'policy_version';
            RETURN NULL;
        END $$
        """
    )
    op.execute(
        "CREATE TRIGGER namespace_policy_changed "
        "AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON namespace_policy "
        "FOR EACH STATEMENT EXECUTE FUNCTION hindsight_policy_changed()"
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER namespace_policy_changed ON namespace_policy")
    op.execute("DROP FUNCTION hindsight_policy_changed()")
    op.execute("DELETE FROM hindsight_meta WHERE name = 'policy_version'")
