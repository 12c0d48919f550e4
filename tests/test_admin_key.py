"""The admin key `serve` makes when no key is active: shown once on a fresh install, never
printed again once every key was revoked, and written without following a planted link."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from hindsight.cli.serve import _bootstrap_key
from tests.conftest import make_settings
from tests.support.cli import hindsight


def test_a_new_admin_key_after_every_key_was_revoked_is_saved_not_printed(
    fresh_db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = tmp_path / "data"
    settings = make_settings(api_key=None, data_dir=data_dir)
    asyncio.run(_bootstrap_key(settings, fresh_db))
    path = data_dir / "admin-api-key"
    first = path.read_text().strip()
    assert first in capsys.readouterr().err  # a fresh install shows it once

    # someone plants a link where the key goes; then every key is revoked
    target = tmp_path / "not-yours"
    target.write_text("precious\n")
    path.unlink()
    path.symlink_to(target)
    revoked = hindsight("keys", "revoke", "admin", database_url=fresh_db)
    assert revoked.returncode == 0, revoked.stderr

    asyncio.run(_bootstrap_key(settings, fresh_db))
    second = path.read_text().strip()
    err = capsys.readouterr().err
    assert second and second != first
    assert second not in err and str(path) in err  # says where, not what
    assert target.read_text() == "precious\n"  # the link was replaced, not written through
    assert not path.is_symlink() and oct(path.stat().st_mode & 0o777) == "0o600"
    assert sorted(p.name for p in data_dir.iterdir()) == ["admin-api-key"]
