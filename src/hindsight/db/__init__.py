"""Database plumbing: schema metadata, connection pool, migrations."""
