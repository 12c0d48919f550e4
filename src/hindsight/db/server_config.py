"""Server configuration written over SQL, for the embedded PostgreSQL this process owns."""

from __future__ import annotations


def apply(url: str, settings: dict[str, str]) -> bool:
    """`ALTER SYSTEM` each setting and reload; True when some only a restart applies."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for name, value in settings.items():
            conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
        conn.execute("SELECT pg_reload_conf()")
        row = conn.execute("SELECT count(*) FROM pg_settings WHERE pending_restart").fetchone()
    return bool(row and row[0])
