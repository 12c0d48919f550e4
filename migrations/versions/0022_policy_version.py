"""A version number for the namespace policies, bumped by every change to them.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-04

Every recall and write reads its namespace's policy (redaction, trust, ranking). Each
process caches policies, and checked each one again after 5 seconds: with many namespaces
nearly every recall paid a round trip for it (profiled over 1,000 namespaces: about 4% of
the service's CPU, and a round trip before the search). Now a process reads this one
number every 5 seconds instead, and drops its cached policies when it has moved. The
service moves it in the transaction that changes a policy (a PUT, an erasure), so a
reader that sees the new number also sees the change; a change made around the service
(psql) is seen once a cached policy is a minute old. The application moves it, not a
trigger: on Citus, namespace_policy is distributed and hindsight_meta a reference table,
and a trigger on the shards could not write it.

Cost: one row in hindsight_meta.
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


def downgrade() -> None:
    op.execute("DELETE FROM hindsight_meta WHERE name = 'policy_version'")
