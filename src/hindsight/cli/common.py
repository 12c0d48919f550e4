"""What every `hindsight` command shares: settings from the environment, our errors as one
line, logging, and a short-lived service over the stores.

Commands live in sibling modules and are added to the group in `main`; they import these
from here, never from `main`, which `python -m hindsight.cli.main` loads as `__main__`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import wraps
from typing import Any, TypeVar

import click
from pydantic import ValidationError

from hindsight import core
from hindsight.config import Settings
from hindsight.errors import HindsightError

F = TypeVar("F", bound=Callable[..., Any])


def load_settings(**overrides: Any) -> Settings:
    try:
        settings = Settings()
    except ValidationError as exc:
        lines = [
            f"  HINDSIGHT_{'_'.join(str(p) for p in e['loc']).upper() or '?'}: {e['msg']}"
            for e in exc.errors()
        ]
        raise click.ClickException("invalid configuration:\n" + "\n".join(lines)) from None
    overrides = {k: v for k, v in overrides.items() if v is not None}
    return settings.model_copy(update=overrides) if overrides else settings


def friendly(func: F) -> F:
    """Turn our errors into one clear line and exit status 1, not a traceback."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except HindsightError as exc:
            raise click.ClickException(exc.message) from None

    return wrapper  # type: ignore[return-value]


def configure_logging(settings: Settings) -> None:
    from hindsight.observability import logs

    logs.configure(settings)


@asynccontextmanager
async def service(settings: Settings, url: str) -> AsyncIterator[core.Hindsight]:
    hindsight = await core.start(settings, database_url=url, redis_url=None, background=False)
    try:
        yield hindsight
    finally:
        await hindsight.aclose()
