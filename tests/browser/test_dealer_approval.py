"""The supervisor's approval on the dealer screen in a real headless Chromium, at the Pi's 800x480 touch display
and at 1280x800: a pending void covers the seats with CALL A SUPERVISOR; once the badge is read, a PIN pad (dots,
never the digits) whose APPROVE sends what was typed to the table; what the table says of a wrong PIN shows; the
panel goes when the approval ends. Every target large enough for a finger, nothing off screen.
Screenshots: ``test-output/dealer-approval-<step>-<width>x<height>.png``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from controller.board.dealer import DealerScreen
from controller.feed.messages import RateLine
from controller.game.wagers import ApprovalView
from tests.board.test_dealer_approval import Table
from tests.browser.conftest import OUTPUT, inside
from tests.browser.test_dealer_screen import open_page, text, wait_version
from tests.displays.money_views import nine_seats

pytestmark = pytest.mark.browser

SIZES = [(800, 480), (1280, 800)]
ASKED = ApprovalView("void", "VOID COUP", 1, 12, "D1", None, "")

TARGETS = """() => [...document.querySelectorAll('[data-testid="approval"] button')].map((b) => {
  const r = b.getBoundingClientRect();
  return {text: b.textContent.trim(), x: r.left, y: r.top, r: r.right, b: r.bottom, w: r.width, h: r.height,
          size: parseFloat(getComputedStyle(b).fontSize)};
})"""


@pytest.fixture
def table() -> Table:
    return Table()


@pytest.fixture
def screen(table: Table) -> Iterator[DealerScreen]:
    s = DealerScreen(("127.0.0.1", 0), table_name="Baccarat 3", seats=9)
    s.send_pin = table.send
    assert s.start()
    s.show(nine_seats())
    try:
        yield s
    finally:
        s.close()


def show(screen: DealerScreen, approval: ApprovalView | None) -> None:
    screen.show(replace(nine_seats(), approval=approval))


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_a_supervisor_approves_on_the_screen(
    browser: Any, screen: DealerScreen, table: Table, width: int, height: int
) -> None:
    page = open_page(browser, screen, width, height)
    try:
        wait_version(page, screen.version)
        assert page.locator('[data-testid="approval"]').is_hidden()
        show(screen, ASKED)
        wait_version(page, screen.version)
        assert page.locator('[data-testid="approval"]').is_visible()
        assert text(page, "approval-title") == "VOID COUP"
        assert text(page, "approval-coup") == "SHOE 1 COUP 12 \u00b7 ASKED BY D1"
        assert text(page, "approval-step") == "CALL A SUPERVISOR: BADGE AT THE DEALER'S READER"
        assert page.locator('[data-testid="approval-pin-entry"]').is_hidden()
        OUTPUT.mkdir(exist_ok=True)
        page.screenshot(path=str(OUTPUT / f"dealer-approval-badge-{width}x{height}.png"))
        show(screen, replace(ASKED, approver="S1"))
        wait_version(page, screen.version)
        assert text(page, "approval-step") == "SUPERVISOR S1: ENTER YOUR PIN"
        assert page.locator('[data-testid="approval-confirm"]').is_disabled()
        for key in "4829130":
            page.locator(f'[data-testid="approval-keypad"] [data-key="{key}"]').click()
        page.locator('[data-testid="approval-keypad"] [data-key="back"]').click()
        assert text(page, "approval-pin") == "\u25cf" * 6  # dots, never the digits
        assert "482913" not in page.content()
        assert text(page, "approval-confirm") == "APPROVE"
        viewport: dict[str, float] = {"x": 0, "y": 0, "r": width, "b": height}
        for target in page.evaluate(TARGETS):
            assert inside(target, viewport), f"{target['text']!r} is off screen: {target}"
            assert target["h"] >= 40 and target["w"] >= 40, f"{target['text']!r} is too small for a finger: {target}"
            assert target["size"] >= 14, f"{target['text']!r} is {target['size']} px"
        page.screenshot(path=str(OUTPUT / f"dealer-approval-pin-{width}x{height}.png"))
        page.locator('[data-testid="approval-confirm"]').click()
        page.wait_for_function("() => document.querySelector('[data-testid=\"approval-problem\"]').textContent !== ''")
        assert table.got == ["482913"]
        assert text(page, "approval-problem") == "PIN SENT TO THE TABLE: CHECKING"
        assert text(page, "approval-pin") == ""  # nothing kept on the page
        show(screen, replace(ASKED, approver="S1", said="WRONG PIN (1 OF 3)"))
        wait_version(page, screen.version)
        assert text(page, "approval-said") == "WRONG PIN (1 OF 3)"
        assert text(page, "approval-problem") == ""  # the table's verdict replaces "checking"
        page.screenshot(path=str(OUTPUT / f"dealer-approval-wrong-{width}x{height}.png"))
        show(screen, None)  # approved: the coup voided
        wait_version(page, screen.version)
        assert page.locator('[data-testid="approval"]').is_hidden()
    finally:
        page.close()


RATE_TARGETS = TARGETS.replace('"approval"', '"rate"')


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_rate_asks_for_the_seat_chosen(browser: Any, width: int, height: int) -> None:
    got: list[int] = []
    s = DealerScreen(("127.0.0.1", 0), table_name="Baccarat 3", seats=9)

    def send(rate: RateLine) -> bool:
        got.append(rate.seat)
        return True

    s.send_rate = send
    assert s.start()
    s.show(nine_seats())
    page = open_page(browser, s, width, height)
    try:
        wait_version(page, s.version)
        page.locator('[data-testid="open-rate"]').click()
        assert page.locator('[data-testid="rate"]').is_visible()
        assert page.locator('[data-testid="rate-confirm"]').is_disabled()
        page.locator('[data-testid="rate-seat-3"]').click()
        assert text(page, "rate-confirm") == "RATE SEAT 3: ASK A SUPERVISOR"
        viewport: dict[str, float] = {"x": 0, "y": 0, "r": width, "b": height}
        for target in page.evaluate(RATE_TARGETS):
            assert inside(target, viewport), f"{target['text']!r} is off screen: {target}"
            assert target["h"] >= 40 and target["w"] >= 40, f"{target['text']!r} is too small for a finger: {target}"
        OUTPUT.mkdir(exist_ok=True)
        page.screenshot(path=str(OUTPUT / f"dealer-rate-{width}x{height}.png"))
        page.locator('[data-testid="rate-confirm"]').click()
        page.wait_for_selector('[data-testid="buy-in-said"]:not([hidden])')
        assert got == [3] and page.locator('[data-testid="rate"]').is_hidden()
        assert text(page, "buy-in-said") == "SEAT 3: RATING ASKED: A SUPERVISOR APPROVES IT"
    finally:
        page.close()
        s.close()


KEY_TARGETS = TARGETS.replace('"approval"', '"key"')


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_key_card_is_offered_for_an_unreadable_card_and_sends_the_card_chosen(
    browser: Any, width: int, height: int
) -> None:
    from controller.feed.messages import KeyLine

    got: list[str] = []
    s = DealerScreen(("127.0.0.1", 0), table_name="Baccarat 3", seats=9)

    def send(key: KeyLine) -> bool:
        got.append(key.card)
        return True

    s.send_key = send
    assert s.start()
    s.show(nine_seats())
    page = open_page(browser, s, width, height)
    try:
        wait_version(page, s.version)
        assert page.locator('[data-testid="open-key"]').is_hidden()  # nothing to key
        s.show(replace(nine_seats(), keyable=True))  # the coup halted by an unreadable card
        wait_version(page, s.version)
        OUTPUT.mkdir(exist_ok=True)
        page.screenshot(path=str(OUTPUT / f"dealer-key-offered-{width}x{height}.png"))
        button = page.locator('[data-testid="open-key"]').bounding_box()
        buy_in = page.locator('[data-testid="open-buy-in"]').bounding_box()
        assert button is not None and buy_in is not None and button["x"] + button["width"] <= width
        assert button["height"] == buy_in["height"]  # as big a target as the header's other buttons
        page.locator('[data-testid="open-key"]').click()
        assert page.locator('[data-testid="key"]').is_visible()
        assert text(page, "key-confirm") == "CHOOSE THE CARD"
        page.locator('[data-testid="key-rank-T"]').click()
        page.locator('[data-testid="key-suit-H"]').click()
        assert text(page, "key-confirm") == "KEY 10\u2665: ASK A SUPERVISOR"
        viewport: dict[str, float] = {"x": 0, "y": 0, "r": width, "b": height}
        for target in page.evaluate(KEY_TARGETS):
            assert inside(target, viewport), f"{target['text']!r} is off screen: {target}"
            assert target["h"] >= 40 and target["w"] >= 40, f"{target['text']!r} is too small for a finger: {target}"
        OUTPUT.mkdir(exist_ok=True)
        page.screenshot(path=str(OUTPUT / f"dealer-key-{width}x{height}.png"))
        page.locator('[data-testid="key-confirm"]').click()
        page.wait_for_selector('[data-testid="buy-in-said"]:not([hidden])')
        assert got == ["TH"] and page.locator('[data-testid="key"]').is_hidden()
        assert text(page, "buy-in-said") == "10\u2665 KEYED: A SUPERVISOR APPROVES IT"
        asked = ApprovalView("key_card", "KEY CARD 10\u2665", 1, 12, "D1", None, "")
        s.show(replace(nine_seats(), keyable=True, approval=asked))
        wait_version(page, s.version)
        assert text(page, "approval-title") == "KEY CARD 10\u2665"
        assert text(page, "approval-foot") == "KEY ANOTHER CARD TO CHANGE IT; HOLD VOID TO VOID THE COUP INSTEAD"
        s.show(nine_seats())  # placed (or voided): nothing to key
        wait_version(page, s.version)
        assert page.locator('[data-testid="open-key"]').is_hidden()
        assert page.locator('[data-testid="approval"]').is_hidden()
    finally:
        page.close()
        s.close()


def test_a_refusal_of_the_tables_is_said_once_when_it_comes(browser: Any, screen: DealerScreen) -> None:
    told = replace(nine_seats(), refusal="RATING REFUSED: SEAT 2 IS CARDED", refusals=3)
    screen.show(told)  # refused before the page opened: not said again
    page = open_page(browser, screen, 800, 480)
    try:
        wait_version(page, screen.version)
        assert page.locator('[data-testid="buy-in-said"]').is_hidden()
        before = page.locator('[data-testid="seats"]').bounding_box()
        assert before is not None
        screen.show(replace(told, refusal="CARD REFUSED: ANOTHER APPROVAL WAITS", refusals=4))
        wait_version(page, screen.version)
        said = page.locator('[data-testid="buy-in-said"]')
        assert said.is_visible() and said.text_content() == "CARD REFUSED: ANOTHER APPROVAL WAITS"
        # whole on the Pi's screen, not cut short, and the header (so every seat box) where it was
        assert said.evaluate("e => e.scrollWidth <= e.clientWidth && e.scrollHeight <= e.clientHeight")
        seats = page.locator('[data-testid="seats"]').bounding_box()
        assert seats is not None and seats["y"] == before["y"]
        assert "refused" in (said.get_attribute("class") or "")
        OUTPUT.mkdir(exist_ok=True)
        page.screenshot(path=str(OUTPUT / "dealer-refused-800x480.png"))
        # while the approval panel covers the page, the table's refusal (a PIN it did not check) is said on it
        busy = replace(told, approval=replace(ASKED, approver="S1"), refusal="PIN REFUSED: CHECKING THE LAST: WAIT",
                       refusals=5)  # fmt: skip
        screen.show(busy)
        wait_version(page, screen.version)
        assert text(page, "approval-problem") == "PIN REFUSED: CHECKING THE LAST: WAIT"
    finally:
        page.close()
