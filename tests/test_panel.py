"""The debug panel at /ui in a real browser (Debian's chromium, headless, driven by
Playwright; no browser download) against the live service with real stores.

Skipped only when chromium or Playwright is missing on a developer's machine; in CI
(CI=true) their absence is a failure. Screenshots of each page go to test-artifacts/panel/.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ADMIN_KEY, Api
from tests.support.servers import ThreadServer

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "panel"


def _missing() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"{CHROMIUM} is missing (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is missing (pip install -e '.[browser]')"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    missing = _missing()
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"browser tests must run in CI: {missing}")
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Any, server: ThreadServer) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=server.url)
    context.set_default_timeout(15_000)
    pg = context.new_page()
    yield pg
    context.close()


def shot(page: Any, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def sign_in(page: Any, key: str = ADMIN_KEY, to: str = "") -> None:
    page.goto("/ui/" + to)
    page.fill("input[name=apikey]", key)
    page.click("#signin button[type=submit]")


def test_sign_in_find_a_memory_and_read_its_history(page: Any, api: Api) -> None:
    api.observe({"key": "user.city", "value": "Lisbon", "source": "chat"})
    api.observe({"key": "user.city", "value": "Porto", "source": "chat"})  # supersedes
    api.observe({"key": "user.pet", "value": "a cat named Miso", "tags": ["home"]})
    api.append("s-1", "planned the trip")

    sign_in(page)
    page.wait_for_selector("nav:not([hidden])")
    page.wait_for_selector(f"a:text-is('{api.ns}')")
    row = page.locator("tr", has=page.locator(f"a:text-is('{api.ns}')"))
    assert row.locator("td").nth(1).inner_text() == "2"  # active memories
    assert row.locator("td").last.inner_text() == "<1% of 100,000"  # capacity use
    shot(page, "namespaces")

    page.click(f"a:text-is('{api.ns}')")
    page.wait_for_selector("h1:has-text('Memories in')")
    page.fill("input[name=prefix]", "user.c")
    page.click("form.filters button[type=submit]")
    page.wait_for_function("document.querySelectorAll('tbody tr').length === 1")
    assert "Porto" in page.inner_text("tbody")
    shot(page, "memories")

    page.click("a:text-is('user.city')")
    page.wait_for_selector("#history li >> nth=1")
    assert page.inner_text("#memory-value") == "Porto"
    history = page.locator("#history li").all_inner_texts()
    assert history[0].startswith("created") and "Lisbon" in history[0]
    assert history[1].startswith("superseded") and "Porto" in history[1]
    shot(page, "memory")

    # archive it from the page; the list of active memories no longer has it
    page.click("button:text-is('Archive')")
    page.wait_for_selector("button:text-is('Restore')")
    assert api.get(page.url.split("id=")[1])["status"] == "archived"

    # a narrow window: the page fits its width (tables scroll inside their box)
    page.set_viewport_size({"width": 390, "height": 800})
    page.goto(f"/ui/#/memories?ns={api.ns}&status=all")
    page.wait_for_selector("tbody tr")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    shot(page, "memories-narrow")


def test_recall_playground_shows_each_component(page: Any, api: Api) -> None:
    api.observe(
        {"key": "user.city", "value": "the user lives in the city of Porto"},
        {"key": "user.drink", "value": "likes green tea"},
    )
    sign_in(page, to=f"#/recall?ns={api.ns}")
    page.wait_for_selector("input[name=query]")
    page.fill("input[name=query]", "which city does the user live in")
    page.fill("input[name=k]", "2")
    page.click("form.card button[type=submit]")
    page.wait_for_selector(".hit")
    first = page.locator(".hit").first
    assert first.get_attribute("data-key") == "user.city"
    shown = {
        name: float(first.locator(f"[data-component={name}]").inner_text())
        for name in ("similarity", "keyword", "relevance", "confidence", "access_boost")
    }
    assert "vector rank 1" in first.inner_text()
    shot(page, "recall")

    logged = api.client.get(f"{api.base}/recalls", params={"limit": 1}).json()["recalls"][0]
    assert logged["query"] == "which city does the user live in"
    components = logged["results"][0]["components"]
    for name, value in shown.items():
        assert value == pytest.approx(components[name], abs=0.0006), name

    # the recall log finds it by the key it returned
    page.goto(f"/ui/#/recalls?ns={api.ns}&key=user.city")
    page.wait_for_selector(".recall")
    assert page.locator(".recall").count() == 1
    page.click(".recall button")
    page.wait_for_selector(".recall .hit")
    assert "city of Porto" in page.inner_text(".recall")
    shot(page, "recall-log")
    page.goto(f"/ui/#/recalls?ns={api.ns}&key=user.nothing")
    page.wait_for_selector("text=No recalls match.")


def test_a_step_appears_in_a_live_session(page: Any, api: Api) -> None:
    api.append("live", "opened the ticket")
    sign_in(page, to=f"#/session?ns={api.ns}&id=live")
    page.wait_for_selector("[data-step='0']")
    assert "Refreshing" in page.inner_text("[role=status]")
    api.append("live", "read the logs", role="assistant")
    # the page polls every 2 s; the new step shows without a reload
    page.wait_for_selector("[data-step='1']", timeout=15_000)
    assert "read the logs" in page.inner_text("#steps")
    shot(page, "session")

    r = api.client.post(f"{api.base}/sessions/live:end")
    assert r.status_code == 200, r.text
    page.wait_for_selector(".job")
    page.wait_for_function(
        "document.querySelector('[role=status]').textContent.includes('not refreshing')"
    )
    page.goto(f"/ui/#/sessions?ns={api.ns}")
    page.wait_for_selector("tr[data-session=live]")
    shot(page, "sessions")


def test_a_wrong_key_is_shown_as_an_error(page: Any) -> None:
    sign_in(page, key="hs_not-a-real-key")
    page.wait_for_selector("#error:not([hidden])")
    assert page.inner_text("#error") == ("The API key was refused: unknown or revoked API key")
    assert page.locator("input[name=apikey]").is_visible()  # still on the sign-in form
    assert page.evaluate("sessionStorage.length") == 0
    assert page.context.cookies() == []
    shot(page, "wrong-key")


def test_docs_render_offline(page: Any, server: ThreadServer) -> None:
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    page.goto("/docs")
    page.wait_for_selector(".swagger-ui .info .title")
    assert "Hindsight" in page.inner_text(".swagger-ui .info .title")
    page.get_by_text("/v1/namespaces/{namespace}/recall", exact=True).first.wait_for()
    assert requested and all(u.startswith(server.url) for u in requested), requested
    shot(page, "docs")
