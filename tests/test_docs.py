"""The docs match the code: the README's two commands, the generated configuration page,
the limits, the MCP tool list."""

from __future__ import annotations

import re
from pathlib import Path

from hindsight import config_page, limits
from hindsight.config import Settings

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
DOCS = ROOT / "docs"


def test_first_lines_are_the_two_commands() -> None:
    block = README.split("```sh\n", 1)[1].split("```", 1)[0].strip().splitlines()
    assert block[0].endswith("hindsight serve")
    assert block[1].endswith("pytest")
    ci = (ROOT / ".ci" / "run").read_text()
    assert "README.md" in ci  # CI runs exactly that line
    assert "mkdocs build --strict" in ci


def test_the_readme_fits_on_a_page_or_two() -> None:
    assert len(README.splitlines()) <= 200


def test_the_configuration_page_is_generated_from_settings() -> None:
    page = (DOCS / "configuration.md").read_text()
    assert page == config_page.render(), (
        "docs/configuration.md is stale: run `python -m hindsight.config_page`"
    )


def test_every_setting_is_documented_with_default_and_description() -> None:
    page = (DOCS / "configuration.md").read_text()
    rows = {
        m.group(1): (m.group(2).strip(), m.group(3).strip())
        for m in re.finditer(r"^\| `(HINDSIGHT_[A-Z_]+)` \|([^|]*)\|(.*)\|$", page, re.M)
    }
    expected = {f"HINDSIGHT_{name.upper()}" for name in Settings.model_fields}
    assert set(rows) == expected
    undescribed = [name for name, (default, meaning) in rows.items() if not (default and meaning)]
    assert not undescribed


def test_limits_in_the_docs_are_the_enforced_ones() -> None:
    table = (DOCS / "api.md").read_text().split("## Limits", 1)[1].split("##", 1)[0]
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


def test_every_page_is_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = {p.name for p in DOCS.glob("*.md")}
    assert pages == set(re.findall(r"^  - [^:]+: ([\w-]+\.md)$", nav, re.M))
