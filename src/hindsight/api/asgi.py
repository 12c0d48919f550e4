"""App factory for worker processes (`uvicorn --factory hindsight.api.asgi:app_from_env`).

`hindsight serve --workers N` starts any embedded servers once, then hands their URLs to
the workers through HINDSIGHT_DATABASE_URL and HINDSIGHT_REDIS_URL.
"""

from __future__ import annotations

from fastapi import FastAPI

from hindsight.api.app import create_app
from hindsight.config import Settings
from hindsight.errors import ConfigurationError
from hindsight.observability import logs


def app_from_env() -> FastAPI:
    settings = Settings()
    logs.configure(settings)
    if not settings.database_url:
        raise ConfigurationError("worker started without HINDSIGHT_DATABASE_URL")
    return create_app(settings, database_url=settings.database_url, redis_url=settings.redis_url)
