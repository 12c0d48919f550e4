"""Database URL spellings: one URL from the operator, two drivers' dialects."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg", "postgresql+psycopg2")


def _split(url: str) -> tuple[str, str]:
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in _SCHEMES:
        raise ValueError(
            f"HINDSIGHT_DATABASE_URL must start with postgresql:// (got {scheme or url!r})"
        )
    return scheme, rest


def psycopg_url(url: str) -> str:
    """The URL psycopg accepts (libpq does not know SQLAlchemy's `+driver` suffix)."""
    _, rest = _split(url)
    return "postgresql://" + rest


def sqlalchemy_url(url: str) -> str:
    """The URL SQLAlchemy and Alembic use, always with the psycopg 3 driver."""
    _, rest = _split(url)
    return "postgresql+psycopg://" + rest


def redacted(url: str) -> str:
    """The URL with any password replaced, for logs and messages."""
    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.replace(":" + parts.password + "@", ":***@")
        parts = parts._replace(netloc=netloc)
    return urlunsplit(parts)
