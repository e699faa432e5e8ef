"""The dealer screen's buy-in in a real headless Chromium, at the Pi's 800x480 touch display and at 1280x800: the
header's BUY-IN opens a dialog over the seats (every seat of the table, the tender, a keypad in whole dollars,
one confirm that says what will be recorded), every target large enough for a finger and nothing off screen;
what the dealer typed reaches the table as typed; a table not reached keeps the dialog open and says so.
Screenshots: ``test-output/dealer-buy-in-<width>x<height>.png``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from controller.board.dealer import DealerScreen
from controller.game.cash import BuyIn, Tender
from tests.board.test_dealer_buy_in import Table
from tests.browser.conftest import OUTPUT, inside
from tests.browser.test_dealer_screen import open_page, text, wait_version
from tests.displays.money_views import nine_seats

pytestmark = pytest.mark.browser

SIZES = [(800, 480), (1280, 800)]

TARGETS = """() => [...document.querySelectorAll('[data-testid="buy-in"] button')].map((b) => {
  const r = b.getBoundingClientRect();
  return {text: b.textContent.trim(), x: r.left, y: r.top, r: r.right, b: r.bottom, w: r.width, h: r.height,
          size: parseFloat(getComputedStyle(b).fontSize)};
})"""


SEAT_BOXES = """() => [...document.querySelectorAll('[data-testid="seats"] > section')].map((c) => {
  const r = c.getBoundingClientRect();
  return [c.dataset.seat, Math.round(r.left), Math.round(r.top), Math.round(r.width), Math.round(r.height)];
})"""


@pytest.fixture
def table() -> Table:
    return Table()


def serve(seats: int, table: Table) -> DealerScreen:
    s = DealerScreen(("127.0.0.1", 0), table_name="Baccarat 3", seats=seats)
    s.send_buy_in = table.send
    assert s.start()
    s.show(nine_seats())
    return s


@pytest.fixture
def screen(table: Table) -> Iterator[DealerScreen]:
    s = serve(9, table)
    try:
        yield s
    finally:
        s.close()


def tap(page: Any, testid: str) -> None:
    page.locator(f'[data-testid="{testid}"]').click()


def type_dollars(page: Any, digits: str) -> None:
    for key in digits:
        page.locator(f'[data-testid="buy-in-keypad"] [data-key="{key}"]').click()


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_a_buy_in_typed_on_the_screen_reaches_the_table_as_typed(
    browser: Any, screen: DealerScreen, table: Table, width: int, height: int
) -> None:
    page = open_page(browser, screen, width, height)
    try:
        wait_version(page, screen.version)
        assert page.locator('[data-testid="buy-in"]').is_hidden()
        boxes = page.evaluate(SEAT_BOXES)
        tap(page, "open-buy-in")
        assert page.locator('[data-testid="buy-in"]').is_visible()
        assert text(page, "buy-in-confirm") == "CHOOSE THE SEAT"
        assert page.locator('[data-testid="buy-in-confirm"]').is_disabled()
        seats = page.locator('[data-testid="buy-in-seats"] button')
        assert [seats.nth(i).inner_text() for i in range(seats.count())] == [str(n) for n in range(1, 10)]
        tap(page, "buy-in-seat-3")
        assert text(page, "buy-in-confirm") == "TYPE THE AMOUNT"
        type_dollars(page, "5001")
        page.locator('[data-testid="buy-in-keypad"] [data-key="back"]').click()
        type_dollars(page, "0")
        page.locator('[data-testid="buy-in-tenders"] [data-tender="chips"]').click()
        assert text(page, "buy-in-amount") == "$5,000"
        assert text(page, "buy-in-confirm") == "RECORD $5,000 CHIPS AT SEAT 3"
        viewport: dict[str, float] = {"x": 0, "y": 0, "r": width, "b": height}
        for target in page.evaluate(TARGETS):
            assert inside(target, viewport), f"{target['text']!r} is off screen: {target}"
            assert target["h"] >= 40 and target["w"] >= 40, f"{target['text']!r} is too small for a finger: {target}"
            assert target["size"] >= 14, f"{target['text']!r} is {target['size']} px"
        scroll = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
        assert scroll[0] <= width and scroll[1] <= height, "the page scrolls"
        OUTPUT.mkdir(exist_ok=True)
        page.screenshot(path=str(OUTPUT / f"dealer-buy-in-{width}x{height}.png"))
        tap(page, "buy-in-confirm")
        page.wait_for_selector('[data-testid="buy-in-said"]:not([hidden])')
        assert table.got == [BuyIn(3, 500_000, Tender.CHIPS)]
        assert text(page, "buy-in-said") == "SEAT 3: BUY-IN $5,000 CHIPS SENT TO THE TABLE"
        assert page.locator('[data-testid="buy-in"]').is_hidden()
        assert page.evaluate(SEAT_BOXES) == boxes  # the answer takes the table name's place: no seat box moves
        page.screenshot(path=str(OUTPUT / f"dealer-buy-in-sent-{width}x{height}.png"))
    finally:
        page.close()


def test_a_table_not_reached_keeps_the_entry_and_says_so(browser: Any, screen: DealerScreen, table: Table) -> None:
    table.up = False
    page = open_page(browser, screen, 800, 480)
    try:
        wait_version(page, screen.version)
        tap(page, "open-buy-in")
        tap(page, "buy-in-seat-7")
        type_dollars(page, "250")
        tap(page, "buy-in-confirm")
        page.wait_for_function("() => document.querySelector('[data-testid=\"buy-in-problem\"]').textContent !== ''")
        assert text(page, "buy-in-problem") == "BUY-IN NOT SENT: THE TABLE IS NOT REACHED; ENTER IT AGAIN"
        assert page.locator('[data-testid="buy-in"]').is_visible()
        assert text(page, "buy-in-confirm") == "RECORD $250 CASH AT SEAT 7"  # as typed: confirm again
        table.up = True
        tap(page, "buy-in-confirm")
        page.wait_for_selector('[data-testid="buy-in-said"]:not([hidden])')
        assert table.got == [BuyIn(7, 25_000, Tender.CASH)]
    finally:
        page.close()


def test_the_largest_table_offers_every_seat_on_the_pis_display(browser: Any, table: Table) -> None:
    s = serve(14, table)
    page = open_page(browser, s, 800, 480)
    try:
        wait_version(page, s.version)
        tap(page, "open-buy-in")
        seats = page.locator('[data-testid="buy-in-seats"] button')
        assert seats.count() == 14
        viewport: dict[str, float] = {"x": 0, "y": 0, "r": 800, "b": 480}
        for target in page.evaluate(TARGETS):
            assert inside(target, viewport) and target["h"] >= 40, target
        page.screenshot(path=str(OUTPUT / "dealer-buy-in-14-seats-800x480.png"))
    finally:
        page.close()
        s.close()
