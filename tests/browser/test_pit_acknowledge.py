"""Acknowledging alerts on the pit page as its users do it, in headless Chromium at a pit's screens (1920x1080 and
1280x800): a pit manager signs in, acknowledges an alert, and it shows who and when on their page and on a
surveillance officer's page open beside it, without a reload; the feed filters acknowledged and not; Sign out
ends the session. A viewer sees the tiles and no feed at all (no empty Alerts heading, no Acknowledge button),
and a POST forged in the viewer's page, with or without the session's CSRF token, is refused and counted; an
expired session's page goes to sign-in. Screenshots: test-output/pit-ack-*.png."""

from __future__ import annotations

import json
import re
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from floor.archive import Alert, AlertKind, Archive
from floor.pit import Pit
from tests.browser.conftest import OUTPUT
from tests.browser.test_pit_signin import sign_in
from tests.pitload import demo_journal, journal_records

pytestmark = pytest.mark.browser

TABLES = ("T1", "T2", "T3", "T4")
PASSWORDS = {"pam": "pit manager's password", "sue": "surveillance password", "vic": "viewer's password"}
#: The feed of a busy hour, oldest first.
ALERTS = [
    Alert("T2", 41, AlertKind.PAST_POST, "seat 3 player: $25.00 added after the lock (coup 12)", "s1"),
    Alert("T1", 80, AlertKind.MISPAY, "seat 5 banker: paid $95.00, due $190.00 (coup 18)", "s1"),
    Alert("T3", None, AlertKind.CASH_APPROACHING, "player 04A2B3C4D5E6F708: $8,200.00 cash in today", "s1"),
    Alert("T4", 12, AlertKind.REPEATED_SHOE, "the first 20 cards of shoe 3 were dealt before, in order", "s1"),
    Alert("T1", 95, AlertKind.STOLEN_CHIP, "chip 0A11F3 ($500.00) reported stolen came onto seat 2 banker", "s1"),
]


@pytest.fixture
def pit(tmp_path: Path) -> Iterator[Pit]:
    url = f"sqlite:///{tmp_path}/archive.db"
    journal = demo_journal(tmp_path / "journal.db")
    with Archive(url) as archive:
        for table in TABLES:
            archive.store(journal_records(journal, table))
        archive.alert(ALERTS)
        for name, role in (("pam", "pit_manager"), ("sue", "surveillance"), ("vic", "viewer")):
            archive.people.add_user(name, role, PASSWORDS[name], actor="test")
    pit = Pit(url, heartbeat=0.5)
    pit.start(("127.0.0.1", 0), None)
    try:
        yield pit
    finally:
        pit.close()


def signed_in(browser: Any, base: str, name: str, size: tuple[int, int]) -> Any:
    """A page of its own browser context (its own cookies), signed in as ``name`` on the pit page."""
    page = browser.new_context(viewport={"width": size[0], "height": size[1]}).new_page()
    page.goto(base + "/")
    sign_in(page, name, PASSWORDS[name])
    assert page.url == base + "/"
    page.wait_for_selector('[data-testid="tiles"] .tile')
    return page


def item(page: Any, kind: str) -> Any:
    return page.locator(f'[data-testid="feed"] li[data-kind="{kind}"]')


def refused(base: str) -> dict[str, float]:
    with urllib.request.urlopen(base + "/metrics", timeout=10) as r:
        text = r.read().decode()
    return {m[0]: float(m[1]) for m in re.findall(r'shoe_floor_pit_actions_refused_total\{why="(\w+)"\} (\S+)', text)}


def forged(page: Any, token: str | None) -> dict[str, Any]:
    """A POST made in the page's own script (its cookies, its origin), as a user at the console would."""
    result: dict[str, Any] = page.evaluate(
        """async ([token]) => {
             const headers = {"Content-Type": "application/json"};
             if (token !== null) headers["X-CSRF-Token"] = token;
             const r = await fetch("/api/feed/ack", {method: "POST", headers: headers, body: JSON.stringify({id: 1})});
             return {status: r.status, body: await r.text()};
           }""",
        [token],
    )
    return result


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 800)])
def test_a_pit_manager_acknowledges_an_alert_and_every_open_page_shows_it(
    browser: Any, pit: Pit, size: tuple[int, int]
) -> None:
    host, port = pit.address
    base = f"http://{host}:{port}"
    manager = signed_in(browser, base, "pam", size)
    watcher = signed_in(browser, base, "sue", size)  # surveillance, open beside it
    manager.wait_for_selector('[data-testid="ack"]')
    assert manager.get_by_test_id("who").inner_text() == "pam \u00b7 pit manager"
    assert manager.get_by_test_id("signout").is_visible()
    assert manager.locator('[data-testid="ack"]').count() == len(ALERTS)  # one on each open alert
    assert watcher.locator('[data-testid="ack"]').count() == 0  # surveillance reads, and does not acknowledge
    assert watcher.get_by_test_id("feed").locator("li").count() == len(ALERTS)
    # Acknowledge the mispay: on the manager's page at once, on surveillance's page by the stream, no reload.
    mispay = item(manager, "mispay")
    mispay.get_by_test_id("ack").click()
    mispay.get_by_test_id("acked").wait_for()
    said = mispay.get_by_test_id("acked").inner_text()
    assert said.startswith("\u2713 Acknowledged by pam "), said
    assert re.search(r"\d{2}:\d{2}", said), said
    assert mispay.get_by_test_id("ack").count() == 0
    item(watcher, "mispay").get_by_test_id("acked").wait_for(timeout=10_000)
    assert item(watcher, "mispay").get_by_test_id("acked").inner_text() == said
    assert item(watcher, "past_post").get_by_test_id("acked").count() == 0
    with Archive(pit.archive.url, create=False) as archive:
        mispay_item = next(i for i in archive.feed() if i.kind == "mispay")
        assert mispay_item.acked_by == "pam"
        assert [(e.actor, e.action) for e in archive.people.audit_log() if e.subject.startswith("alert:")] == [
            ("pam", "alert_acknowledged")]  # fmt: skip
    # The count says how many are open; the filter shows the open ones, or the acknowledged ones.
    count = manager.get_by_test_id("feed-count").inner_text()
    assert count == f"({len(ALERTS)}) \u00b7 {len(ALERTS) - 1} unacknowledged"
    OUTPUT.mkdir(exist_ok=True)
    manager.screenshot(path=str(OUTPUT / f"pit-ack-manager-{size[0]}x{size[1]}.png"))
    watcher.screenshot(path=str(OUTPUT / f"pit-ack-surveillance-{size[0]}x{size[1]}.png"))
    manager.get_by_test_id("feed-ack").select_option("open")
    assert manager.locator('[data-testid="feed"] li:not([hidden])').count() == len(ALERTS) - 1
    assert not item(manager, "mispay").is_visible()
    manager.get_by_test_id("feed-ack").select_option("acked")
    assert [li.get_attribute("data-kind") for li in manager.locator('[data-testid="feed"] li:not([hidden])').all()] == [
        "mispay"]  # fmt: skip
    assert manager.get_by_test_id("feed-count").inner_text().startswith(f"(1 of {len(ALERTS)})")
    manager.get_by_test_id("feed-ack").select_option("")
    # Every button and line is inside the feed's column: nothing cut off at the right edge.
    feed_box = manager.get_by_test_id("feed-panel").bounding_box()
    for button in manager.locator('[data-testid="ack"]').all():
        box = button.bounding_box()
        assert box["x"] + box["width"] <= feed_box["x"] + feed_box["width"] + 0.5 and box["height"] >= 24
    # Without the CSRF token, even in the pit manager's own page: refused, and counted.
    got = forged(manager, None)
    assert got["status"] == 403 and "CSRF" in json.loads(got["body"])["error"]
    assert refused(base)["csrf"] == 1
    # Sign out: back to the sign-in page, and the session is gone.
    manager.get_by_test_id("signout").click()
    manager.wait_for_url(base + "/signin")
    assert manager.request.get(base + "/api/pit").status == 401
    # An expired session: the open page goes to sign-in.
    pit.gate.clock = lambda: time.monotonic() + 24 * 3600
    watcher.wait_for_url(base + "/signin?next=%2F", timeout=20_000)
    pit.gate.clock = time.monotonic


def test_a_viewer_sees_the_tiles_no_feed_and_cannot_acknowledge(browser: Any, pit: Pit) -> None:
    host, port = pit.address
    base = f"http://{host}:{port}"
    viewer = signed_in(browser, base, "vic", (1280, 800))
    viewer.wait_for_function("document.body.dataset.role === 'viewer'")
    assert viewer.get_by_test_id("who").inner_text() == "vic \u00b7 viewer"
    # No feed at all: no Alerts heading, no filter, no button; the tiles take the screen's width.
    assert not viewer.get_by_test_id("feed-panel").is_visible()
    assert not viewer.get_by_role("heading", name="Alerts").is_visible()
    assert not viewer.get_by_test_id("feed-filter").is_visible()
    assert viewer.locator('[data-testid="ack"]').count() == 0
    tiles = viewer.get_by_test_id("tiles").bounding_box()
    assert tiles["width"] >= 1280 - 20
    OUTPUT.mkdir(exist_ok=True)
    viewer.screenshot(path=str(OUTPUT / "pit-ack-viewer-1280x800.png"))
    # A POST forged in the viewer's own page: with the session's token, not for the role; without it, refused.
    token = viewer.evaluate("fetch('/api/session').then((r) => r.json()).then((s) => s.csrf)")
    got = forged(viewer, token)
    assert got["status"] == 403 and "not for your role" in json.loads(got["body"])["error"]
    assert forged(viewer, None)["status"] == 403
    counts = refused(base)
    assert (counts["role"], counts["csrf"]) == (1, 1)
    with Archive(pit.archive.url, create=False) as archive:
        assert all(i.acked_by is None for i in archive.feed())
