"""The debug panel at /ui in a real browser (Debian's chromium, headless, driven by
Playwright; no browser download) against the live service with real stores.

Skipped only when chromium or Playwright is missing on a developer's machine; in CI
(CI=true) their absence is a failure. Screenshots of each page go to test-artifacts/panel/.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import ADMIN_KEY, Api, make_settings
from tests.support.poll import wait_until
from tests.support.servers import ThreadServer
from tests.test_walkthrough import first_call, walkthrough

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts" / "panel"


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
    from playwright.sync_api import expect, sync_playwright

    # the pages' own waits (below) and the assertions' alike: 5 s, expect's default, is
    # not much for a page's first paint with the cores loaded
    expect.set_options(timeout=15_000)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


@contextmanager
def open_page(browser: Any, url: str) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=url)
    context.set_default_timeout(15_000)
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture
def page(browser: Any, server: ThreadServer) -> Iterator[Any]:
    with open_page(browser, server.url) as pg:
        yield pg


def shot(page: Any, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def sign_in(page: Any, key: str = ADMIN_KEY, to: str = "") -> None:
    page.goto("/ui/" + to)
    page.fill("input[name=apikey]", key)
    page.click("#signin button[type=submit]")


def test_sign_in_find_a_memory_and_read_its_history(page: Any, api: Api) -> None:
    from playwright.sync_api import expect

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
    # expect, not wait_for_function: a predicate string is eval'd, which the CSP refuses
    expect(page.locator("tbody tr")).to_have_count(1)
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


def test_edit_and_delete_a_memory_as_admin(page: Any, api: Api) -> None:
    from playwright.sync_api import expect

    (made,) = api.observe({"key": "user.city", "value": "Porto"})
    api.observe({"key": "user.pet", "value": "a cat named Miso"})
    sign_in(page, to=f"#/memory?ns={api.ns}&id={made['id']}")
    expect(page.locator("#memory-value")).to_have_text("Porto")
    assert page.locator("#role-note").count() == 0  # an admin may do everything
    page.fill("#edit textarea[name=value]", "Braga")
    page.click("#edit button[type=submit]")
    expect(page.locator("#memory-value")).to_have_text("Braga")
    expect(page.locator("[role=status]")).to_have_text("Saved.")
    expect(page.locator("#history li")).to_have_count(2)
    assert "Braga" in page.locator("#history li").last.inner_text()
    assert api.get(made["id"])["value"] == "Braga"
    shot(page, "memory-edited")

    page.once("dialog", lambda d: d.accept())
    page.click("button[data-action=delete]")
    expect(page.locator("h1")).to_have_text(f"Memories in {api.ns}")
    expect(page.locator("[role=status]")).to_have_text('Deleted "user.city"; its history is kept.')
    expect(page.locator("tbody tr")).to_have_count(1)
    assert page.locator("a:text-is('user.city')").count() == 0
    assert api.client.get(f"{api.base}/memories/{made['id']}").status_code == 404


def key_with_role(database_url: str, role: str, ns: str) -> str:
    """A new API key with `role`, scoped to namespace `ns`. Made in a thread of its own:
    Playwright's sync API already runs an event loop in this one."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from hindsight.db.pool import open_pool
    from hindsight.services.auth import KeyService
    from hindsight.services.roles import Role

    async def make() -> str:
        pool = await open_pool(make_settings(), database_url)
        try:
            key, _ = await KeyService(pool).create(f"{role}-{ns}", namespaces=[ns], role=Role(role))
        finally:
            await pool.close()
        return key

    with ThreadPoolExecutor(1) as worker:
        return worker.submit(asyncio.run, make()).result()


def test_actions_follow_the_keys_role(page: Any, api: Api, migrated: str) -> None:
    from playwright.sync_api import expect

    (made,) = api.observe({"key": "user.city", "value": "Porto"})
    to = f"#/memory?ns={api.ns}&id={made['id']}"
    sign_in(page, key_with_role(migrated, "reader", api.ns), to=to)
    expect(page.locator("#memory-value")).to_have_text("Porto")
    writer_needed = "Needs the writer role (or higher); this API key has the reader role."
    for action in ("edit", "archive", "delete"):
        button = page.locator(f"button[data-action={action}]")
        expect(button).to_be_disabled()
        expect(button).to_have_attribute("title", writer_needed)
    for action in ("verify", "permanent"):
        button = page.locator(f"button[data-action={action}]")
        expect(button).to_be_disabled()
        expect(button).to_have_attribute(
            "title", "Needs the curator role (or higher); this API key has the reader role."
        )
    expect(page.locator("#edit textarea[name=value]")).to_be_disabled()
    expect(page.locator("#role-note")).to_contain_text("has the reader role")
    shot(page, "memory-reader")

    # a writer edits, archives and deletes, but only a curator vouches for a memory
    page.click("#who button")  # sign out
    sign_in(page, key_with_role(migrated, "writer", api.ns), to=to)
    expect(page.locator("#memory-value")).to_have_text("Porto")
    for action in ("edit", "archive", "delete"):
        expect(page.locator(f"button[data-action={action}]")).to_be_enabled()
    for action in ("verify", "permanent"):
        button = page.locator(f"button[data-action={action}]")
        expect(button).to_be_disabled()
        expect(button).to_have_attribute(
            "title", "Needs the curator role (or higher); this API key has the writer role."
        )
    # what the panel can't foresee, the API refuses, and the panel says so in plain words
    page.fill("#edit input[name=confidence]", "0.95")
    page.click("#edit button[type=submit]")
    expect(page.locator("#error")).to_have_text(
        "This API key may not do that: a confidence above the initial 0.5 needs the curator "
        "role (or higher); this API key has the writer role"
    )
    page.click("button[data-action=archive]")
    expect(page.locator("button[data-action=restore]")).to_be_visible()
    assert api.get(made["id"])["status"] == "archived"
    shot(page, "memory-writer")


def test_review_approves_and_rejects_quarantined_claims(page: Any, api: Api, migrated: str) -> None:
    from playwright.sync_api import expect

    (held,) = api.observe({"key": "user.employer", "value": "works at Initech", "source": "web"})
    assert held["outcome"] == "quarantined", held
    sign_in(page)
    page.wait_for_selector("nav:not([hidden])")
    page.goto(f"/ui/#/review?ns={api.ns}")
    card = page.locator(f".review[data-id='{held['id']}']")
    expect(card).to_contain_text("works at Initech")
    expect(card.locator(".reason")).to_contain_text("under quarantine_below")
    expect(card).to_contain_text("web")
    expect(page.locator("nav a.active")).to_have_text("Review")
    assert "null" not in page.inner_text("main")
    shot(page, "review")

    card.locator("button[data-action=approve]").click()
    expect(page.locator("[role=status]")).to_have_text(
        'Approved "user.employer": it is now the active memory of its key.'
    )
    expect(page.locator("#queue-empty")).to_contain_text("Nothing waits for review.")
    assert api.get(held["id"])["status"] == "active"
    page.click("nav a[data-page=memories]")
    expect(page.locator("tbody tr[data-id='" + held["id"] + "']")).to_contain_text("Initech")

    (bad,) = api.observe({"key": "user.locker", "value": "locker is 4321", "source": "web"})
    assert bad["outcome"] == "quarantined", bad
    page.click("nav a[data-page=review]")
    card = page.locator(f".review[data-id='{bad['id']}']")
    expect(card).to_contain_text("locker is 4321")
    page.once("dialog", lambda d: d.dismiss())  # Reject asks first; cancelling keeps it
    card.locator("button[data-action=reject]").click()
    expect(card).to_be_visible()
    assert api.get(bad["id"])["status"] == "quarantined"
    page.once("dialog", lambda d: d.accept())
    card.locator("button[data-action=reject]").click()
    rejected = 'Rejected "user.locker": its value is erased.'
    expect(page.locator("[role=status]")).to_have_text(rejected)
    expect(page.locator(".review")).to_have_count(0)
    assert api.client.get(f"{api.base}/memories/{bad['id']}").status_code == 404

    # a narrow window: the queue fits its width
    api.observe({"key": "user.bank", "value": "banks with a very long name " * 6, "source": "web"})
    page.set_viewport_size({"width": 390, "height": 800})
    page.reload()
    expect(page.locator(".review")).to_have_count(1)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    shot(page, "review-narrow")

    # a writer sees the queue, but approving and rejecting are a curator's call
    page.set_viewport_size({"width": 1280, "height": 800})
    page.click("#who button")  # sign out
    sign_in(page, key_with_role(migrated, "writer", api.ns), to=f"#/review?ns={api.ns}")
    expect(page.locator(".review")).to_have_count(1)
    for action in ("approve", "reject"):
        button = page.locator(f"button[data-action={action}]")
        expect(button).to_be_disabled()
        expect(button).to_have_attribute(
            "title", "Needs the curator role (or higher); this API key has the writer role."
        )
    expect(page.locator("#role-note")).to_contain_text("has the writer role")
    shot(page, "review-writer")


def test_recall_playground_shows_each_component(page: Any, api: Api) -> None:
    from playwright.sync_api import expect

    ids = {
        o["key"]: o["id"]
        for o in api.observe(
            {"key": "user.city", "value": "the user lives in the city of Porto", "tags": ["home"]},
            {"key": "user.drink", "value": "likes green tea", "tags": ["food"]},
            {"key": "user.tea_shop", "value": "buys green tea at the shop", "tags": ["shop"]},
        )
    }
    sign_in(page, to=f"#/recall?ns={api.ns}")
    page.wait_for_selector("input[name=query]")
    page.fill("input[name=query]", "which city does the user live in")
    page.fill("input[name=k]", "2")
    page.click("#recall-form button[type=submit]")
    page.wait_for_selector(".hit")
    first = page.locator(".hit").first
    assert first.get_attribute("data-key") == "user.city"
    shown = {
        el.get_attribute("data-component"): float(el.inner_text())
        for el in first.locator("[data-component]").all()
    }
    assert "vector rank 1" in first.inner_text()
    formula = page.inner_text("#formula")
    assert formula.startswith("Here: score = relevance × confidence × access boost × tier weight")
    assert "recency factor" in formula and "importance factor" in formula
    # a recall without a time expression has no time window: nothing stands in for it
    assert "null" not in page.inner_text("#results")
    # the page's own formula names every factor the results show
    intro = page.inner_text("main")
    for factor in ("specificity factor", "trust factor", "tier weight", "importance factor"):
        assert f"× {factor}" in intro and factor in formula, factor
    shot(page, "recall")

    logged = api.client.get(f"{api.base}/recalls", params={"limit": 1}).json()["recalls"][0]
    assert logged["query"] == "which city does the user live in"
    components = logged["results"][0]["components"]
    # every multiplicative factor the response carries is drawn, with its value
    factors = {"relevance", "confidence", "access_boost", "tier_weight", "recency_factor"}
    assert {"similarity", "keyword", *factors, "importance_factor"} <= set(shown)
    for name, value in shown.items():
        assert value == pytest.approx(components[name], abs=0.0006), name

    # a cold memory's tier weight, and `tags_any` keeping only memories with one of the tags
    r = api.client.patch(f"{api.base}/memories/{ids['user.drink']}", json={"status": "cold"})
    assert r.status_code == 200, r.text
    page.fill("input[name=query]", "green tea")
    page.fill("input[name=k]", "5")
    page.fill("input[name=tags_any]", "food, home")
    page.click("#recall-form button[type=submit]")
    drink = page.locator(".hit[data-key='user.drink']")
    expect(drink).to_be_visible()
    expect(drink.locator("[data-component=tier_weight]")).to_have_text("0.500")
    expect(drink).to_contain_text("tier cold")
    keys = [h.get_attribute("data-key") for h in page.locator(".hit").all()]
    assert "user.tea_shop" not in keys and set(keys) <= {"user.drink", "user.city"}, keys
    sent = api.client.get(f"{api.base}/recalls", params={"limit": 1}).json()["recalls"][0]
    assert sent["filters"] == {"tags_any": ["food", "home"]}, sent
    shot(page, "recall-filtered")

    # a time window: nothing was created before 2000
    page.fill("input[name=created_before]", "2000-01-01T00:00")
    page.click("#recall-form button[type=submit]")
    expect(page.locator("#results")).to_contain_text("Nothing matched.")
    sent = api.client.get(f"{api.base}/recalls", params={"limit": 1}).json()["recalls"][0]
    assert sent["filters"]["created_before"].startswith("2000-01-01") or sent["filters"][
        "created_before"
    ].startswith("1999-12-31"), sent  # the browser's local midnight, as an instant

    # the recall log finds it by the key it returned
    page.goto(f"/ui/#/recalls?ns={api.ns}&key=user.city")
    page.wait_for_selector(".recall")
    assert page.locator(".recall").count() == 1
    page.click(".recall button")
    page.wait_for_selector(".recall .hit")
    assert "city of Porto" in page.inner_text(".recall")
    shot(page, "recall-log")
    page.goto(f"/ui/#/recalls?ns={api.ns}&key=user.nothing")
    expect(page.locator("#recalls-empty")).to_contain_text("No recalls match these filters.")


def test_recall_playground_shows_the_hop_path(page: Any, api: Api) -> None:
    from playwright.sync_api import expect

    api.observe(
        {"key": "user.sister", "value": "Alex's sister is Maria Lopez", "memory_type": "relation"},
        {"key": "person.maria_lopez.city", "value": "Maria Lopez lives in Lyon"},
        *(
            {"key": f"person.p{i}.city", "value": f"Person {i} lives in city number {i}"}
            for i in range(30)
        ),
    )
    sign_in(page, to=f"#/recall?ns={api.ns}")
    page.fill("input[name=query]", "which city does my sister live in")
    page.fill("input[name=k]", "3")
    page.select_option("select[name=hops]", "2")
    page.click("#recall-form button[type=submit]")
    second = page.locator(".hit[data-key='person.maria_lopez.city']")
    expect(second.locator(".hop")).to_have_text("hop 2: found by following user.sister")
    expect(second.locator("[data-component=hop_discount]")).to_have_text("0.900")
    assert "second-hop hit" in page.inner_text("#formula")
    assert page.locator(".hit").first.get_attribute("data-key") == "user.sister"
    shot(page, "recall-hops")

    # a narrow window: the form and the charts fit its width
    page.set_viewport_size({"width": 390, "height": 800})
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    shot(page, "recall-narrow")


def test_a_step_appears_in_a_live_session(page: Any, api: Api) -> None:
    from playwright.sync_api import expect

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
    expect(page.locator("[role=status]")).to_contain_text("not refreshing")
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


def test_a_slow_page_never_replaces_the_page_the_user_went_on_to(page: Any, api: Api) -> None:
    """Sign-in opens the namespace list; the user goes on before it has loaded. When its
    data arrives at last, the page they are on stays (CI saw the list replace Review)."""
    from playwright.sync_api import expect

    (held,) = api.observe({"key": "user.employer", "value": "works at Initech", "source": "web"})
    waiting: list[Any] = []
    page.route("**/v1/namespaces", lambda route: waiting.append(route))
    sign_in(page)
    wait_until(  # the list's request, held by the route handler
        lambda: waiting,
        "the namespace list to be requested",
        10,
        sleep=lambda seconds: page.wait_for_timeout(seconds * 1000),
    )
    page.goto(f"/ui/#/review?ns={api.ns}")
    card = page.locator(f".review[data-id='{held['id']}']")
    expect(card.locator(".reason")).to_contain_text("under quarantine_below")
    with page.expect_response("**/v1/namespaces"):
        waiting[0].continue_()
    page.wait_for_load_state("networkidle")
    expect(card.locator(".reason")).to_contain_text("under quarantine_below")
    expect(page.locator("main h1")).to_have_text(f"Review in {api.ns}")


def test_the_panel_is_served_under_a_content_security_policy(server: ThreadServer) -> None:
    """A page that shows memory values must not run or load what a value smuggles in, and no
    other site may frame it."""
    for path in ("/ui/", "/ui/js/app.js", "/ui/style.css"):
        r = httpx.get(f"{server.url}{path}")
        assert r.status_code == 200, path
        csp = r.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp, csp
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp, csp
        assert r.headers["x-frame-options"] == "DENY"
        assert r.headers["x-content-type-options"] == "nosniff"


def test_the_panel_works_within_its_policy(page: Any, api: Api) -> None:
    """Nothing the panel does is refused by its own policy: the score bars keep their width."""
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text) if "Content Security" in m.text else None)
    api.observe({"key": "user.city", "value": "the user lives in the city of Porto"})
    sign_in(page, to=f"#/recall?ns={api.ns}")
    page.wait_for_selector("input[name=query]")
    page.fill("input[name=query]", "which city does the user live in")
    page.click("#recall-form button[type=submit]")
    page.wait_for_selector(".hit .bar span")
    width = page.locator(".hit .bar.relevance span").first.evaluate("e => e.style.width")
    assert width.endswith("%") and float(width[:-1]) > 0, width
    assert not refused, refused


@pytest.mark.skipif(not (shutil.which("jq") and shutil.which("curl")), reason="needs curl, jq")
def test_a_fresh_service_opens_on_the_walkthroughs_first_call(
    browser: Any, fresh_server: ThreadServer, tmp_path: Path
) -> None:
    """Signed in to a service that holds nothing, the panel shows the README walk-through's
    first call with this service's address; pasted into a shell, it runs as shown, and the
    page turns into the namespace list by itself."""
    from playwright.sync_api import expect

    readme = first_call(walkthrough((ROOT / "README.md").read_text()))
    expected = readme.replace("http://127.0.0.1:${HINDSIGHT_PORT:-8080}", fresh_server.url)
    assert expected != readme
    with open_page(browser, fresh_server.url) as page:
        page.context.grant_permissions(["clipboard-read", "clipboard-write"])
        refused: list[str] = []
        page.on(
            "console", lambda m: refused.append(m.text) if "Content Security" in m.text else None
        )
        sign_in(page)
        expect(page.locator("#first-run h1")).to_contain_text("nothing is stored yet")
        assert page.locator("#first-call").text_content() == expected
        assert page.locator(".key-note").count() == 0  # the admin key may write to alice
        expect(page.locator("#next-steps li")).to_have_count(4)
        page.click("#copy-first-call")
        expect(page.locator("#first-run [role=status]")).to_have_text(
            "Copied: paste it into a terminal."
        )
        assert page.evaluate("navigator.clipboard.readText()") == expected
        shot(page, "first-run")
        page.set_viewport_size({"width": 390, "height": 800})  # the call scrolls in its box
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
        shot(page, "first-run-narrow")

        # the key file the service writes on its first start, where the call reads it
        (tmp_path / "admin-api-key").write_text(ADMIN_KEY + "\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT_")}
        run = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", expected],
            env={**env, "HINDSIGHT_DATA_DIR": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert run.returncode == 0, run.stderr
        printed = [ln[3:] for ln in expected.splitlines() if ln.startswith("#> ")]
        assert run.stdout.splitlines() == printed, run.stdout

        # no reload: the page watches for the first memory
        expect(page.locator("a:text-is('alice')")).to_be_visible()
        expect(page.locator("#first-run")).to_have_count(0)
        row = page.locator("tr", has=page.locator("a:text-is('alice')"))
        assert row.locator("td").nth(1).inner_text() == "2"  # active memories
        page.reload()
        expect(page.locator("a:text-is('alice')")).to_be_visible()
        assert page.locator("#first-run").count() == 0
        assert not refused, refused  # all within the panel's Content-Security-Policy


def test_every_list_says_why_it_is_empty_until_it_is_filled(
    page: Any, api: Api, migrated: str
) -> None:
    """A key whose namespace holds nothing: the first-run page, and on every list a sentence
    saying why it is empty and how to fill it, in place of a blank table; each goes away
    once there is something to list."""
    from playwright.sync_api import expect

    ns = api.ns
    sign_in(page, key_with_role(migrated, "writer", ns))
    expect(page.locator("#first-run")).to_be_visible()
    # the walk-through writes to alice, which this key does not see: the page says so
    expect(page.locator(".key-note")).to_have_text(
        f"This key sees only {ns}: to see the call's memories here, put one of these in place "
        "of alice in B=… and this key in KEY=…."
    )

    def empty_state(route: str, box: str, why: str, how: str) -> None:
        page.goto(f"/ui/#/{route}")
        expect(page.locator(f"{box} .why")).to_have_text(why)
        expect(page.locator(box)).to_contain_text(how)
        assert page.locator("main table").count() == 0
        assert "null" not in page.inner_text("main")
        shot(page, f"empty-{route.split('?')[0]}")

    empty_state(
        f"memories?ns={ns}",
        "#memories-empty",
        f"No memories in {ns} yet.",
        f"POST /v1/namespaces/{ns}/memories:batch",
    )
    empty_state(f"recalls?ns={ns}", "#recalls-empty", f"No recalls in {ns} yet.", f"/{ns}/recall")
    empty_state(f"sessions?ns={ns}", "#sessions-empty", f"No sessions in {ns} yet.", "append_step")
    empty_state(f"review?ns={ns}", "#queue-empty", "Nothing waits for review.", '"source": "web"')

    # the first claim, held for review: the first-run page turns into the list by itself
    page.goto("/ui/#/namespaces")
    expect(page.locator("#first-run")).to_be_visible()
    (held,) = api.observe({"key": "user.employer", "value": "works at Initech", "source": "web"})
    assert held["outcome"] == "quarantined", held
    expect(page.locator(f"a:text-is('{ns}')")).to_be_visible()
    expect(page.locator("#first-run")).to_have_count(0)

    # nothing to recall yet (a recall makes the namespace show in the list too)
    page.goto(f"/ui/#/recall?ns={ns}")
    page.fill("input[name=query]", "which city does the user live in")
    page.click("#recall-form button[type=submit]")
    expect(page.locator("#recall-empty .why")).to_have_text(
        f"Nothing matched: {ns} holds no active memories yet."
    )

    # nothing active yet, and the memory list says what the namespace does hold
    page.goto(f"/ui/#/memories?ns={ns}")
    expect(page.locator("#memories-empty .why")).to_have_text(f"{ns} holds no active memories.")
    expect(page.locator("#memories-empty")).to_contain_text(f"{ns} holds 1 quarantined")
    page.click("#memories-empty a:text-is('Review')")
    expect(page.locator(f".review[data-id='{held['id']}']")).to_be_visible()
    assert page.locator("#queue-empty").count() == 0

    api.observe({"key": "user.city", "value": "the user lives in the city of Porto"})
    page.goto(f"/ui/#/memories?ns={ns}")
    expect(page.locator("tbody tr")).to_have_count(1)
    assert page.locator("#memories-empty").count() == 0
    page.goto(f"/ui/#/memories?ns={ns}&prefix=nothing.")
    expect(page.locator("#memories-empty .why")).to_have_text(
        f"No active memory in {ns} matches these filters."
    )
    page.click("#memories-empty a:text-is('Clear the filters')")
    expect(page.locator("tbody tr")).to_have_count(1)

    page.goto(f"/ui/#/recall?ns={ns}")
    page.fill("input[name=query]", "which city does the user live in")
    page.click("#recall-form button[type=submit]")
    expect(page.locator(".hit[data-key='user.city']")).to_be_visible()
    assert page.locator("#recall-empty").count() == 0
    page.goto(f"/ui/#/recalls?ns={ns}")
    expect(page.locator(".recall")).to_have_count(2)  # the one that found nothing too
    assert page.locator("#recalls-empty").count() == 0

    # a session: its steps, then its consolidation job once it ends
    api.append("task-1", "searched flights to Oslo", role="assistant")
    page.goto(f"/ui/#/sessions?ns={ns}")
    expect(page.locator("tr[data-session=task-1]")).to_be_visible()
    assert page.locator("#sessions-empty").count() == 0
    page.click("a:text-is('task-1')")
    expect(page.locator("[data-step='0']")).to_be_visible()
    assert page.locator("#steps-empty").count() == 0
    expect(page.locator("#jobs-empty .why")).to_have_text("No consolidation jobs yet.")
    expect(page.locator("#jobs-empty")).to_contain_text(
        f"POST /v1/namespaces/{ns}/sessions/task-1:end"
    )
    shot(page, "empty-jobs")
    r = api.client.post(f"{api.base}/sessions/task-1:end")
    assert r.status_code == 200, r.text
    expect(page.locator(".job")).to_have_count(1)  # the page refreshes while the session runs
    assert page.locator("#jobs-empty").count() == 0

    # a session whose only step has expired
    api.append("brief", "gone in a second", ttl_seconds=1)
    wait_until(lambda: not api.steps("brief"), "the step to expire", 10)
    page.goto(f"/ui/#/session?ns={ns}&id=brief")
    expect(page.locator("#steps-empty .why")).to_have_text("None of its 1 step is live any more.")
    expect(page.locator("#steps-empty")).to_contain_text("ttl_seconds")
    shot(page, "empty-steps")
