"""The review page in a real browser (Debian's chromium, driven by Playwright), over
``monitor serve`` on PostgreSQL: a whole item reviewed with the keyboard alone, text selected
in the timeline with the mouse, and what anonymous and wrong-token visitors get to see.

Screenshots go to ``tests/review/screenshots/`` (ignored by git).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from monitor.cli import main
from monitor.review.decisions import fold
from monitor.store import review
from monitor.store.db import make_engine, make_sessionmaker
from monitor.store.intake import get_item
from monitor.testing import fill_review_store, review_session, serving

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "schemas" / "fixture.v1.json").read_text(encoding="utf-8"))
SHOTS = Path(__file__).resolve().parent / "screenshots"
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TOKEN = "alice-browser-token-0123456789"
TOKENS = f"alice:{TOKEN},bob:bob-browser-token-0123456789"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing; `make services` installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def site(pg_url: str, tmp_path: Path) -> Iterator[tuple[str, str, list[dict[str, Any]]]]:
    items = fill_review_store(
        pg_url,
        tmp_path,
        [review_session("review-ten", 10, 300), review_session("review-few", 3, 80)],
    )
    with serving(pg_url, TOKENS, tmp_path) as base:
        yield base, pg_url, items


def page_of(browser: Any) -> Any:
    context = browser.new_context(viewport={"width": 1400, "height": 900}, accept_downloads=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors
    return page


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


class Keys:
    """The keyboard, counting what it presses."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.count = 0

    def press(self, key: str, times: int = 1) -> None:
        for _ in range(times):
            self.page.keyboard.press(key)
            self.count += 1

    def type(self, text: str) -> None:
        self.page.keyboard.type(text)


def token_focused(page: Any) -> None:
    """Wait until the login page's autofocus has put the cursor in the token field: typed
    before that, on a loaded machine, the keys go nowhere."""
    page.wait_for_function("document.activeElement && document.activeElement.id === 'token'")


def settled(page: Any) -> None:
    """Wait until the writes sent are answered and their panel is in (the script marks the
    body busy meanwhile)."""
    page.wait_for_selector("body:not([data-busy])", state="attached")


def test_a_whole_item_reviewed_with_the_keyboard(
    browser: Any, site: tuple[str, str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    base, url, items = site
    ten = next(i for i in items if i["session_id"] == "review-ten")
    page = page_of(browser)
    keys = Keys(page)

    page.goto(base + "/")
    assert page.url.startswith(base + "/login")
    token_focused(page)
    keys.type(TOKEN)  # the token field has the focus
    keys.press("Enter")
    page.wait_for_url(base + "/")
    assert page.locator("#items tbody tr").count() == 2
    keys.press("j", [i["id"] for i in items].index(ten["id"]))
    shot(page, "queue")
    keys.press("c")  # claim the selected item and open it
    page.wait_for_url(f"{base}/items/{ten['id']}")
    page.wait_for_selector("#panel[data-mine='1']")
    assert page.locator("#cands .cand").count() == 10
    keys.press("?")  # the help overlay lists the keys
    assert page.locator("#help[open]").is_visible()
    assert "confirm, then the next undecided" in page.locator("#help").inner_text()
    keys.press("Escape")
    assert not page.locator("#help[open]").count()

    for _ in range(3):
        keys.press("y")
        settled(page)
    keys.press("n")
    settled(page)
    assert page.locator("#cands .cand.confirmed").count() == 3
    assert page.locator("#cands .cand.rejected").count() == 1
    edited = page.locator("#cands .cand.selected").get_attribute("data-entry")
    keys.press("e")  # class, turn, literal, probe: the probe is three tabs away
    keys.press("Tab", 3)
    keys.press("Control+a")
    keys.type("Which branch does the work stay on?")
    keys.press("Control+Enter")
    settled(page)
    assert page.locator("#cands .cand.confirmed").count() == 4

    keys.press("t")  # to the timeline: walk to the first assistant message
    for _ in range(40):
        if page.locator("#timeline .ev.cursor").get_attribute("data-kind") == "assistant_message":
            break
        keys.press("j")
    cursor = page.locator("#timeline .ev.cursor")
    said = cursor.locator(".text").inner_text().strip()
    assert cursor.get_attribute("data-kind") == "assistant_message"
    keys.press("a")
    assert page.locator("#add-form [name=literal]").input_value() == said
    assert page.locator("#add-form [name=class]").input_value() == "commitment"
    keys.press("Control+Enter")
    settled(page)
    assert page.locator("#cands .cand").count() == 11
    shot(page, "item-reviewed")

    keys.press("r")
    page.wait_for_selector("#resolve[open]")
    assert page.locator("#resolve [name=verdict]:checked").get_attribute("value") == "accept"
    keys.type("Reviewed in the browser.")
    keys.press("Control+Enter")
    page.wait_for_selector("#panel[data-status='accepted']")
    with page.expect_download() as download:
        keys.press("d")
    saved = tmp_path / "download.json"
    download.value.save_as(saved)
    shot(page, "item-accepted")
    assert page.errors == []

    doc = json.loads(saved.read_text(encoding="utf-8"))
    jsonschema.validate(doc, SCHEMA, format_checker=jsonschema.FormatChecker())
    engine = make_engine(url)
    try:
        with make_sessionmaker(engine)() as s:
            item = get_item(s, ten["id"])
            actions = review.actions(s, ten["id"])
    finally:
        engine.dispose()
    assert item is not None
    assert (item["status"], item["resolved_by"], item["note"]) == (
        "accepted",
        "alice",
        "Reviewed in the browser.",
    )
    assert [a.action for a in actions] == ["claim"] + ["confirm"] * 3 + [
        "reject",
        "edit",
        "add",
        "resolve",
    ]
    assert {a.reviewer for a in actions} == {"alice"}
    entries = {e.id: e for e in fold(item["draft"], actions)}
    confirmed = {eid for eid, e in entries.items() if e.verdict == "confirmed"}
    assert {e["id"] for e in doc["must_survive"]} == confirmed and len(confirmed) == 5
    exported = {e["id"]: e for e in doc["must_survive"]}
    assert exported[str(edited)]["probe"] == "Which branch does the work stay on?"
    added = next(e for eid, e in exported.items() if eid.startswith("added-"))
    assert (added["class"], added["literal"]) == ("commitment", said)
    assert all("candidate" not in e and "evidence" not in e for e in doc["must_survive"])
    assert doc["review"]["reviewed_by"] == "alice" and len(doc["transcript"]["events"]) == 300
    assert (
        main(
            [
                "intake",
                "export",
                str(ten["id"]),
                "--fixture",
                "--out",
                str(tmp_path / "cli"),
                "--db",
                url,
            ]
        )
        == 0
    )
    assert (tmp_path / "cli" / download.value.suggested_filename).read_bytes() == saved.read_bytes()
    # 2 to log in (the token typed, Enter), then every decision one key or a chord.
    assert keys.count <= 60, keys.count


def test_an_item_added_by_selecting_text_in_the_timeline(
    browser: Any, site: tuple[str, str, list[dict[str, Any]]]
) -> None:
    base, url, items = site
    few = next(i for i in items if i["session_id"] == "review-few")
    page = page_of(browser)
    page.goto(base + "/login")
    token_focused(page)
    page.keyboard.type(TOKEN)
    page.keyboard.press("Enter")
    page.wait_for_url(base + "/")
    page.goto(f"{base}/items/{few['id']}")
    page.keyboard.press("c")
    page.wait_for_selector("#panel[data-mine='1']")
    text = page.locator("#turn-0 .ev.user_message .text")
    box = text.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + 1, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + 120, box["y"] + box["height"] / 2, steps=5)
    page.mouse.up()
    chosen = page.evaluate("window.getSelection().toString()").strip()
    assert chosen and page.locator("#add-selection").is_visible()
    page.locator("#add-selection").click()
    assert page.locator("#add-form [name=literal]").input_value() == chosen
    assert page.locator("#add-form [name=turn]").input_value() == "0"
    page.keyboard.press("Control+Enter")
    settled(page)
    engine = make_engine(url)
    try:
        with make_sessionmaker(engine)() as s:
            (added,) = [a for a in review.actions(s, few["id"]) if a.action == "add"]
    finally:
        engine.dispose()
    assert added.detail["literal"] == chosen and added.detail["turn"] == 0
    assert added.detail["from"]["selection"] is True
    assert page.errors == []


def test_anonymous_and_wrong_token_visitors_see_nothing(
    browser: Any, site: tuple[str, str, list[dict[str, Any]]]
) -> None:
    base, _, items = site
    sids = [i["session_id"] for i in items]
    page = page_of(browser)

    def nothing_shown() -> None:
        html = page.content()
        assert not any(sid in html for sid in sids), page.url

    item = items[0]["id"]
    for path in (
        "/",
        f"/items/{item}",
        f"/items/{item}/panel",
        "/api/items",
        f"/api/items/{item}",
        f"/items/{item}/fixture.json",
    ):
        page.goto(base + path)
        assert page.url.startswith(base + "/login?next="), path
        nothing_shown()
    # A script's request (no HTML wanted) is refused outright.
    refused = page.request.get(base + "/api/items", headers={"Accept": "application/json"})
    assert refused.status == 401 and not any(sid in refused.text() for sid in sids)
    wrong = page.request.get(base + "/", headers={"Authorization": "Bearer not-a-token"})
    assert wrong.status == 401 and not any(sid in wrong.text() for sid in sids)
    page.goto(base + "/login")
    token_focused(page)
    page.keyboard.type("not-a-reviewer-token")
    page.keyboard.press("Enter")
    page.wait_for_selector(".error")
    assert "not a reviewer" in page.locator(".error").inner_text()
    nothing_shown()
    page.context.add_cookies(
        [{"name": "monitor_session", "value": "YWxpY2U.9999999999.bm9uY2U.forged", "url": base}]
    )
    page.goto(base + "/")
    assert page.url.startswith(base + "/login")
    nothing_shown()
    shot(page, "login-refused")
