"""The README matches the code: commands, settings, limits."""

from __future__ import annotations

import re
from pathlib import Path

from hindsight import limits
from hindsight.config import Settings

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def test_first_lines_are_the_two_commands() -> None:
    block = README.split("```sh\n", 1)[1].split("```", 1)[0].strip().splitlines()
    assert block[0].endswith("hindsight serve")
    assert block[1].endswith("pytest")
    ci = (ROOT / ".ci" / "run").read_text()
    assert "README.md" in ci  # CI runs exactly that line


def test_every_setting_is_documented() -> None:
    documented = set(re.findall(r"HINDSIGHT_[A-Z_]+", README))
    missing = {f"HINDSIGHT_{name.upper()}" for name in Settings.model_fields} - documented
    assert not missing


def test_limits_in_the_readme_are_the_enforced_ones() -> None:
    table = README.split("### Limits", 1)[1].split("##", 1)[0]
    for value in (
        limits.KEY_MAX_CHARS,
        limits.TAGS_MAX,
        limits.TAG_MAX_CHARS,
        limits.METADATA_MAX_BYTES,
        limits.K_MAX,
        limits.STEP_SUMMARY_MAX_CHARS,
        limits.JSON_MAX_DEPTH,
    ):
        assert f"{value:,}" in table or str(value) in table, value
    assert f"1–{limits.VALUE_MAX_CHARS:,} characters" in table
    assert f"1–{limits.BATCH_MAX:,} memories" in table
    assert f"1–{limits.STEP_CONTENT_MAX_CHARS:,} characters" in table
