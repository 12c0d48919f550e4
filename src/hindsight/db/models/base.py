"""What every table module shares: the one `MetaData` (with the constraint naming
convention the migrations use) and the column and constraint helpers.

The tables register themselves on `metadata` in the modules beside this one; import it
from `hindsight.db.models`, which imports them all, to get the whole schema.
"""

from __future__ import annotations

from sqlalchemy import Column, DateTime, MetaData, text

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING)


def _timestamp(name: str, comment: str, *, nullable: bool = False, default: bool = True) -> Column:  # type: ignore[type-arg]
    return Column(
        name,
        DateTime(timezone=True),
        nullable=nullable,
        server_default=text("now()") if default else None,
        comment=comment,
    )


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"
