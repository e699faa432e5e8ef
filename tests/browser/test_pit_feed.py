"""The pit's alert feed and game recall as a pit boss reads them, in headless Chromium (1280x800 and 800x480).

Two shoes of the demo (seed 1: its live edge flags wagers and clears them) dealt at four tables (the same journal
under four names, as the floor of tests/browser/test_pit_page.py deals it), archived through the real
surveillance step: its alerts (each advantage raised and cleared, the repeated shoes) are the feed a real
:class:`floor.pit.Pit` serves. Measured: no alert names a wager by its record name (``dragon_bonus_banker``),
each says it in notation's words; a raised and a cleared alert differ in their words and their style; the feed
filters by table and by kind (and both), its count saying how many of how many; a recalled coup's *previous*
and *next* lead through every coup of the table, across the shoes' end, and stop at either end. Screenshots go
to test-output/pit-feed-*.png and pit-recall-*.png.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.game.notation import WAGER_WORDS
from floor.archive import Archive, FeedItem
from floor.pit import FEED_SIZE, Pit
from floor.surveillance import Surveillance
from tests.browser.conftest import OUTPUT, recall_on_page
from tests.floor.feeding import archive_in_steps
from tests.pitload import demo_journal, journal_records

pytestmark = pytest.mark.browser

TABLES = ("T1", "T2", "T3", "T4")
SIZES = [(1280, 800), (800, 480)]


class Setup:
    def __init__(self, tmp: Path) -> None:
        journal = demo_journal(tmp / "journal.db", shoes=2, seed=1)
        self.url = f"sqlite:///{tmp}/archive.db"
        self.coups: list[tuple[int, int]] = []  # T1's coups in the order dealt: (shoe, coup), a number once
        with Archive(self.url) as archive:
            surveillance = Surveillance(archive)
            for table in TABLES:
                archive_in_steps(archive, surveillance, journal_records(journal, table), 400)
            self.feed: list[FeedItem] = archive.feed(FEED_SIZE)
            for shoe in archive.shoes("T1"):
                for c in archive.shoe_coups("T1", shoe):
                    if isinstance(c["coup"], int) and (shoe, c["coup"]) not in self.coups:
                        self.coups.append((shoe, c["coup"]))
        self.pit = Pit(self.url)
        self.pit.start(("127.0.0.1", 0), None)
        host, port = self.pit.address
        self.base = f"http://{host}:{port}"


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    s = Setup(tmp_path_factory.mktemp("pit-feed"))
    try:
        yield s
    finally:
        s.pit.close()


FEED = """() => [...document.querySelectorAll('[data-testid="feed"] li')].map((li) => {
  const style = getComputedStyle(li), kind = li.querySelector('.kind'), status = li.querySelector('.status');
  return {kind: li.dataset.kind, table: li.dataset.table, status: li.dataset.status, hidden: li.hidden,
          shown: li.getClientRects().length > 0, text: li.querySelector('.head').textContent + ' ' +
          li.querySelector('.detail').textContent, word: kind.textContent, said: status ? status.textContent : '',
          border: style.borderLeftColor + ' ' + style.borderLeftWidth, colour: getComputedStyle(kind).color,
          detail: getComputedStyle(li.querySelector('.detail')).color};
})"""


def feed(setup: Setup) -> list[dict[str, Any]]:
    """The feed the pit serves now (newest first): the archive's, and any alert a test has sent it since."""
    return list(setup.pit.snapshot()["feed"])


def open_pit(browser: Any, setup: Setup, width: int, height: int) -> Any:
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(setup.base + "/")
    page.wait_for_function(
        "n => document.querySelectorAll('[data-testid=\"feed\"] li').length === n", arg=len(feed(setup))
    )
    return page


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_feed_says_the_wagers_in_words_and_tells_raised_from_cleared(
    browser: Any, setup: Setup, width: int, height: int
) -> None:
    kinds = {f.kind for f in setup.feed}
    assert {"advantage", "advantage_cleared", "repeated_shoe"} <= kinds, kinds
    assert {f.table for f in setup.feed} == set(TABLES)
    page = open_pit(browser, setup, width, height)
    try:
        served = feed(setup)
        items = page.evaluate(FEED)
        page.screenshot(path=str(OUTPUT / f"pit-feed-{width}x{height}.png"), full_page=width < 1100)
        bets = {str(f["extra"]["bet"]) for f in served if "bet" in f["extra"]}
        assert bets, "the demo's advantages name their wagers"
        for item in items:
            for name in WAGER_WORDS:
                if "_" in name:
                    assert name not in item["text"], f"an internal name in the feed: {item['text']!r}"
        for f, item in zip(served, items, strict=True):
            if "bet" in f["extra"]:
                assert WAGER_WORDS[str(f["extra"]["bet"])] in item["text"], item["text"]
        raised = [i for i in items if i["kind"] == "advantage"]
        cleared = [i for i in items if i["kind"] == "advantage_cleared"]
        assert raised and cleared
        assert {(i["status"], i["word"], i["said"]) for i in raised} == {("raised", "Advantage", "▲ raised")}
        assert {(i["status"], i["word"], i["said"]) for i in cleared} == {("cleared", "Advantage cleared", "✓ cleared")}
        # a style each: the frame's colour, the kind's colour, the words dimmed once cleared
        assert {i["border"] for i in raised} == {"rgb(255, 176, 32) 4px"}
        assert {i["border"] for i in cleared} == {"rgb(53, 196, 107) 4px"}
        assert raised[0]["colour"] != cleared[0]["colour"] and raised[0]["detail"] != cleared[0]["detail"]
        other = [i for i in items if i["kind"] not in ("advantage", "advantage_cleared")]
        assert other and all(i["status"] == "" and i["said"] == "" for i in other)
    finally:
        page.close()


def _pick(page: Any, testid: str, value: str) -> None:
    page.select_option(f'[data-testid="{testid}"]', value)


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_feed_filters_by_table_and_by_kind(browser: Any, setup: Setup, width: int, height: int) -> None:
    page = open_pit(browser, setup, width, height)
    try:
        served = feed(setup)
        total = len(served)
        count = "document.querySelector('[data-testid=\"feed-count\"]').textContent"
        assert page.evaluate(f"() => {count}") == f"({total})"
        tables = page.locator('[data-testid="feed-table"] option').evaluate_all("os => os.map(o => o.value)")
        assert tables == ["", *TABLES]
        kinds = page.locator('[data-testid="feed-kind"] option').evaluate_all(
            "os => os.map(o => [o.value, o.textContent])"
        )
        assert [k for k, _ in kinds[1:]] and {k for k, _ in kinds[1:]} == {f["kind"] for f in served}
        assert kinds[0] == ["", "All kinds"] and ["advantage_cleared", "Advantage cleared"] in kinds
        for table, kind in (("T3", ""), ("", "advantage_cleared"), ("T2", "advantage"), ("", "")):
            _pick(page, "feed-table", table)
            _pick(page, "feed-kind", kind)
            want = [
                (f["table"], f["kind"])
                for f in served
                if (not table or f["table"] == table) and (not kind or f["kind"] == kind)
            ]
            assert want, (table, kind)
            items = page.evaluate(FEED)
            assert [(i["table"], i["kind"]) for i in items if i["shown"]] == want
            assert all(i["hidden"] for i in items if not i["shown"])
            said = f"({total})" if len(want) == total else f"({len(want)} of {total})"
            assert page.evaluate(f"() => {count}") == said
            if (table, kind) == ("T2", "advantage"):
                page.screenshot(path=str(OUTPUT / f"pit-feed-filtered-{width}x{height}.png"), full_page=width < 1100)
        # the filter is the page's own: it stays while a new alert redraws the feed (one of T1: not shown)
        _pick(page, "feed-table", "T4")
        fours = sum(1 for f in feed(setup) if f["table"] == "T4")
        alert = {"v": 1, "id": 10**6 + width, "at": "2026-12-02T12:00:00.000Z", "site": "s1", "table": "T1",
                 "seq": None, "kind": "dealer_errors", "detail": "5 misdraws in the last hour", "record": None,
                 "extra": {}}  # fmt: skip
        setup.pit.on_message("baccarat/s1/floor/alert", json.dumps(alert).encode())
        page.wait_for_function("id => document.querySelector('[data-testid=\"feed\"] li').dataset.id === id",
                               arg=str(alert["id"]))  # fmt: skip
        assert page.locator('[data-testid="feed-table"]').input_value() == "T4"
        items = page.evaluate(FEED)
        assert items[0]["table"] == "T1" and items[0]["hidden"]
        assert sum(1 for i in items if i["shown"]) == fours
    finally:
        page.close()


def _shown(page: Any) -> tuple[int, int]:
    head = page.locator(".recall-head span").first.text_content()
    shoe, coup = head.removeprefix("Shoe ").split(", coup ")
    return int(shoe), int(coup)


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_recall_s_previous_and_next_walk_the_table_s_coups(browser: Any, setup: Setup, width: int, height: int) -> None:
    coups = setup.coups
    shoes = sorted({s for s, _ in coups})
    assert len(shoes) == 2, "two shoes: previous and next cross a shoe's end"
    page = browser.new_page(viewport={"width": width, "height": height})
    try:
        page.goto(setup.base + "/table/T1")
        prev, nxt = page.locator('[data-testid="recall-prev"]'), page.locator('[data-testid="recall-next"]')
        assert prev.is_disabled() and nxt.is_disabled()  # nothing recalled yet
        assert recall_on_page(page, *coups[0]) is not None
        assert prev.is_disabled() and nxt.is_enabled()  # the first coup the archive holds
        end = next(i for i, (s, _c) in enumerate(coups) if s == shoes[1]) - 1  # the first shoe's last coup
        for i in range(1, end + 3):  # through the first shoe's end into the second
            _step(page, nxt)
            assert _shown(page) == coups[i]
            assert page.locator('[data-testid="recall-coup"]').input_value() == str(coups[i][1])
            assert page.locator('[data-testid="recall-shoe"]').input_value() == str(coups[i][0])
        page.screenshot(path=str(OUTPUT / f"pit-recall-{width}x{height}.png"))
        for i in range(end + 1, end - 2, -1):  # and back across it, from the keyboard too
            if i % 2:
                _step(page, prev)
            else:
                page.evaluate("() => document.activeElement && document.activeElement.blur()")
                _step(page, None)
            assert _shown(page) == coups[i]
        assert recall_on_page(page, *coups[-1]) is not None
        assert nxt.is_disabled() and prev.is_enabled()  # the last coup the archive holds
    finally:
        page.close()


def _step(page: Any, button: Any) -> None:
    """Click ``button`` (None: press Alt+Left) and wait for the coup it shows."""
    page.evaluate("() => { document.querySelector('[data-testid=\"recall\"]').dataset.found = ''; }")
    if button is None:
        page.keyboard.press("Alt+ArrowLeft")
    else:
        button.click()
    page.wait_for_function("() => document.querySelector('[data-testid=\"recall\"]').dataset.found === '1'")


def test_the_table_page_s_alarm_log_tells_raised_from_cleared(browser: Any, setup: Setup) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        page.goto(setup.base + "/table/T1")
        page.wait_for_function("() => Number(document.body.dataset.loads) >= 1")
        lines = page.locator('[data-testid="alarm-log"] li[data-kind]').evaluate_all(
            "es => es.map(e => [e.dataset.kind, e.dataset.status, e.textContent, getComputedStyle(e).color])"
        )
        raised = [x for x in lines if x[0] == "advantage"]
        cleared = [x for x in lines if x[0] == "advantage_cleared"]
        assert raised and cleared
        assert all(x[1] == "raised" and x[2].startswith("Advantage (▲ raised) at ") for x in raised)
        assert all(x[1] == "cleared" and x[2].startswith("Advantage cleared (✓ cleared) at ") for x in cleared)
        assert {x[3] for x in raised}.isdisjoint({x[3] for x in cleared})
        assert not any("_" in name and name in x[2] for x in lines for name in WAGER_WORDS)
    finally:
        page.close()
