"""Arrays passed to PostgreSQL as literals (`'{1,2,3}'`) instead of Python lists.

psycopg dumps a list by inspecting its elements to pick an array type, which costs
30-40 µs per list (measured: the three term arrays of a recall statement 31 µs, a recall
log entry's ids and scores 40 µs; as literals 1-2 µs). The SQL casts the literal
(`%(terms)s::int[]`). unnest() also flattens multi-dimensional arrays, so arrays that
belong to one row of many travel as literals too.
"""

from __future__ import annotations

from typing import Any


def array_literal(values: list[Any]) -> str:
    """A PostgreSQL array literal of ints, floats or strings (and anything whose str() is
    its input form, such as UUIDs)."""
    if not values:
        return "{}"
    parts = []
    for v in values:
        if v is None or isinstance(v, bool):
            raise TypeError(f"no array literal for {v!r}")
        if isinstance(v, int):
            parts.append(int.__repr__(v))
        elif isinstance(v, float):  # float's own repr, not a subclass's (numpy)
            parts.append(float.__repr__(v))
        else:
            s = str(v).replace("\\", "\\\\").replace('"', '\\"')
            parts.append(f'"{s}"')
    return "{" + ",".join(parts) + "}"
