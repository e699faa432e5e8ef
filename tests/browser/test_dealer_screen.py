"""The dealer screen in a real headless Chromium, at the Pi's 800x480 touch display and at 1280x800.

The server is a real :class:`DealerScreen`; its money is a 9-seat :class:`MoneyView` built by hand (tests/
displays/money_views.py: PAY with the commission deducted, TAKE, a push, side bets, a mispay, a past-post,
commission boxes and the commission spot asked for). At each size: every seat on screen, no two seats
overlapping, no text cut off by its seat or overlapping another text, the digits large enough to read at arm's
length (every word of nine seats 14 px or more at 800x480), each PAY and TAKE amount and each alarm as the
money says, in words and colour; which shoe and coup and the last result in the header; each seat's box where
it was when other seats empty. Screenshots are saved as ``test-output/dealer-<state>-<width>x<height>.png``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from controller.board.dealer import DealerScreen
from controller.game.wagers import MAX_SEATS, MoneyView, Phase, SeatView, Spot, SpotState
from tests.browser.conftest import OUTPUT, inside, overlap
from tests.displays.money_views import betting, nine_seats, spot

pytestmark = pytest.mark.browser

SIZES = [(800, 480), (1280, 800)]

MEASURE = """() => {
  const box = (e) => { const r = e.getBoundingClientRect();
    return {x: r.left, y: r.top, w: r.width, h: r.height, r: r.right, b: r.bottom}; };
  const seats = {};
  for (const s of document.querySelectorAll(".seat")) seats[s.dataset.seat] = box(s);
  const texts = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode, e = node.parentElement;
    if (!node.textContent.trim() || !e.getClientRects().length) continue;
    const range = document.createRange(); range.selectNodeContents(node);
    const r = range.getBoundingClientRect();
    const seat = e.closest(".seat");
    const own = e.getBoundingClientRect(), style = getComputedStyle(e);
    texts.push({text: node.textContent.trim(), size: parseFloat(style.fontSize),
                cls: e.className, seat: seat ? seat.dataset.seat : null, ellipsis: style.textOverflow === "ellipsis",
                own: {x: own.left, y: own.top, r: own.right, b: own.bottom},
                tx: {x: r.left, y: r.top, r: r.right, b: r.bottom}});
  }
  const de = document.documentElement;
  return {vw: innerWidth, vh: innerHeight, sw: de.scrollWidth, sh: de.scrollHeight, seats, texts,
          header: box(document.querySelector("header.top"))};
}"""


@pytest.fixture
def screen() -> Iterator[DealerScreen]:
    s = DealerScreen(("127.0.0.1", 0), table_name="Baccarat 3")
    assert s.start()
    try:
        yield s
    finally:
        s.close()


def open_page(browser: Any, screen: DealerScreen, width: int, height: int) -> Any:
    host, port = screen.address
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(f"http://{host}:{port}/")
    return page


def wait_version(page: Any, version: int) -> None:
    page.wait_for_function("v => Number(document.body.dataset.version) >= v", arg=version)
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def text(page: Any, testid: str) -> str:
    return str(page.locator(f'[data-testid="{testid}"]').inner_text()).strip()


def check_layout(
    m: dict[str, Any], width: int, height: int, seats: int, *, min_action: float, min_text: float = 12
) -> None:
    viewport: dict[str, float] = {"x": 0, "y": 0, "r": width, "b": height}
    assert (m["vw"], m["vh"]) == (width, height)
    assert m["sw"] <= width and m["sh"] <= height, "the page scrolls"
    assert sorted(m["seats"], key=int) == [str(n) for n in range(1, seats + 1)]
    boxes = list(m["seats"].items())
    for name, rect in boxes:
        assert inside(rect, viewport), f"seat {name} {rect} is off screen"
        assert not overlap(rect, m["header"]), f"seat {name} is under the header"
    for i, (a, ra) in enumerate(boxes):
        for b, rb in boxes[i + 1 :]:
            assert not overlap(ra, rb), f"seat {a} {ra} overlaps seat {b} {rb}"
    texts = m["texts"]
    for t in texts:
        assert inside(t["tx"], viewport), f"{t['text']!r} is off screen"
        if t["seat"] is not None:
            assert inside(t["tx"], m["seats"][t["seat"]], slack=1), f"{t['text']!r} is cut off by seat {t['seat']}"
        assert t["size"] >= min_text, f"{t['text']!r} is {t['size']} px"
        if not t["ellipsis"]:
            cut = t["tx"]["x"] < t["own"]["x"] - 1 or t["tx"]["r"] > t["own"]["r"] + 1
            assert not cut, f"{t['text']!r} is cut off by its own box"
        if "action" in t["cls"] or "seat-no" in t["cls"]:
            assert t["size"] >= min_action, f"{t['text']!r} is only {t['size']} px: too small at arm's length"
    for i, a in enumerate(texts):
        for b in texts[i + 1 :]:
            assert not overlap(a["tx"], b["tx"]), f"{a['text']!r} overlaps {b['text']!r}"


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_nine_seats_at_payout_are_readable_and_right(
    browser: Any, screen: DealerScreen, width: int, height: int
) -> None:
    screen.show(nine_seats())
    page = open_page(browser, screen, width, height)
    try:
        wait_version(page, screen.version)
        m = page.evaluate(MEASURE)
        OUTPUT.mkdir(exist_ok=True)
        page.screenshot(path=str(OUTPUT / f"dealer-payout-{width}x{height}.png"))
        check_layout(m, width, height, 9, min_action=18 if width == 800 else 24)
        assert text(page, "phase") == "PAYOUT"
        assert page.locator('[data-testid="reader-down"]').is_hidden()
        assert page.locator('[data-testid="notice"]').is_hidden()
        # PAY: stake + win less the 5% deducted; TAKE: the whole stake.
        expected = {
            "action-1-banker": "PAY $95",
            "action-2-player": "TAKE $25",
            "action-2-tie": "TAKE $5",
            "action-3-banker": "PAY $1,425",
            "action-3-banker_pair": "PAY $275",
            "action-3-dragon_bonus_banker": "PAY $10",
            "action-4-banker": "PAY $15",  # the row stays what to do now; the mispay beside it
            "flag-4-banker": "MISPAY",
            "action-5-player": "TAKE $50",
            "action-6-banker": "PAST POST",
            "action-7-banker": "PAID $190",  # what was paid stays in view
            "action-7-commission": "COLLECT $12.50",
            "action-8-player": "TAKE $5,000",
            "action-8-panda_8": "TAKE $5",
            "action-9-banker": "PUSH",
            "box-3": "BOX $12.50",
            "box-9": "BOX $3.75",
            "alarm-4": "BANKER: UNDERPAID (EXPECTED $195, SEEN $180)",  # whole, without its SEAT 4
            "text-4-banker": "UNDERPAID $15",
            "alarm-6": "PAST POST BANKER",
        }
        assert {k: text(page, k) for k in expected} == expected
        # Colour plus words: PAY green, TAKE red, an alarm white on red; the seat with an alarm is framed.
        bg = 'id => getComputedStyle(document.querySelector(`[data-testid="${id}"]`)).backgroundColor'
        assert page.evaluate(bg, "action-1-banker") == "rgb(0, 200, 83)"
        assert page.evaluate(bg, "action-2-player") == "rgb(255, 59, 48)"
        assert page.evaluate(bg, "flag-4-banker") == "rgb(213, 0, 0)"
        assert page.evaluate(bg, "alarm-6") == "rgb(213, 0, 0)"
        assert "urgent-alarm" in str(page.locator('[data-testid="seat-4"]').get_attribute("class"))
    finally:
        page.close()


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_largest_table_still_fits(browser: Any, screen: DealerScreen, width: int, height: int) -> None:
    """Fourteen seats, each with a main wager and two side bets, all locked."""
    seats = tuple(
        SeatView(
            n,
            tuple(
                spot(n, s, SpotState.LOCKED, 2500 * n, wager_cents=2500 * n)
                for s in (Spot.BANKER, Spot.TIE, Spot.DRAGON_BONUS_BANKER)
            ),
            box_cents=125 * n,
        )
        for n in range(1, MAX_SEATS + 1)
    )
    screen.show(MoneyView(Phase.LOCKED, seats))
    page = open_page(browser, screen, width, height)
    try:
        wait_version(page, screen.version)
        m = page.evaluate(MEASURE)
        page.screenshot(path=str(OUTPUT / f"dealer-14-seats-{width}x{height}.png"))
        check_layout(m, width, height, MAX_SEATS, min_action=14, min_text=10)
        assert text(page, "phase") == "NO MORE BETS"
        assert text(page, "box-14") == "BOX $17.50"
        assert text(page, "action-14-tie") == "$350"  # the locked wager, large
    finally:
        page.close()


def test_each_state_of_the_screen(browser: Any, screen: DealerScreen) -> None:
    """Starting, no bet-spot reader, betting with a violation, READER DOWN, table offline: each in words."""
    page = open_page(browser, screen, 800, 480)
    try:
        wait_version(page, screen.version)
        assert text(page, "notice") == "TABLE OFFLINE"  # nothing heard from the table yet
        screen.connected()
        wait_version(page, screen.version)
        assert text(page, "notice") == "NO BET-SPOT READER"
        assert page.locator(".seat").count() == 0
        page.screenshot(path=str(OUTPUT / "dealer-no-reader-800x480.png"))
        screen.show(betting())
        wait_version(page, screen.version)
        assert text(page, "phase") == "BETS OPEN"
        assert text(page, "action-2-banker") == "$50" and text(page, "action-3-tie") == "CHECK"
        assert text(page, "text-3-tie") == "TIE BELOW MINIMUM"
        assert page.locator('[data-testid="notice"]').is_hidden()
        page.screenshot(path=str(OUTPUT / "dealer-betting-800x480.png"))
        screen.show(nine_seats(Phase.COLLECTION, reader_up=False))
        wait_version(page, screen.version)
        assert text(page, "phase") == "COLLECT COMMISSION"
        assert text(page, "reader-down") == "READER DOWN"
        page.screenshot(path=str(OUTPUT / "dealer-reader-down-800x480.png"))
        hostile = MoneyView(Phase.BETTING, (SeatView(5, (), alarms=('<img src=x onerror="document.title=1">',)),))
        screen.show(hostile)
        wait_version(page, screen.version)
        assert text(page, "alarm-5") == '<img src=x onerror="document.title=1">'  # text, never markup
        assert page.locator("img").count() == 0
        screen.offline()
        wait_version(page, screen.version)
        assert text(page, "connection") == "TABLE OFFLINE"
        assert page.locator(".seat").count() == 1  # the last money stays, marked
    finally:
        page.close()


def test_a_change_redraws_the_page_without_reloading(browser: Any, screen: DealerScreen) -> None:
    screen.show(nine_seats())
    page = open_page(browser, screen, 800, 480)
    try:
        wait_version(page, screen.version)
        page.evaluate("() => { window.sameDocument = true; }")
        screen.show(nine_seats(bump=500))
        wait_version(page, screen.version)
        assert text(page, "action-1-banker") == "PAY $100"
        assert page.evaluate("() => window.sameDocument") is True
    finally:
        page.close()


#: The shoe's last coup as the board's public feed gives it: coup 12 of shoe 3, Banker 7 over Player 3.
LAST_COUP = {
    "shoe": 3, "coup": 12, "declared": True, "void": False, "misdraw": False, "dummy_hand": [], "winner": "banker",
    "player": ["9H", "QS", "4C"], "banker": ["KD", "7C"], "player_total": 3, "banker_total": 7, "natural": False,
    "natural_hand": None, "player_pair": False, "banker_pair": False, "player_three_cards": True,
    "banker_three_cards": False, "margin": 4,
}  # fmt: skip


@pytest.fixture
def table_screen() -> Iterator[DealerScreen]:
    """A dealer screen as the board runs it: the table's nine seats, and the shoe's coups heard."""
    s = DealerScreen(("127.0.0.1", 0), table_name="Baccarat 3", seats=9)
    assert s.start()
    try:
        yield s
    finally:
        s.close()


def test_labels_stay_legible_with_nine_seats_at_800x480(browser: Any, table_screen: DealerScreen) -> None:
    """Every word in a seat's box (the wager's name, its amount, the seat's number, its alarms) is 14 px or more
    on the Pi's display with nine seats paying; the actions 18 px or more."""
    table_screen.game(3, 13, LAST_COUP)
    table_screen.show(nine_seats())
    page = open_page(browser, table_screen, 800, 480)
    try:
        wait_version(page, table_screen.version)
        m = page.evaluate(MEASURE)
        page.screenshot(path=str(OUTPUT / "dealer-nine-legible-800x480.png"))
        check_layout(m, 800, 480, 9, min_action=18, min_text=14)
        labels = [t for t in m["texts"] if t["cls"] == "label"]
        assert len(labels) == 17 and min(t["size"] for t in labels) >= 14, sorted(t["size"] for t in labels)[
            :3
        ]  # each spot
    finally:
        page.close()


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_header_says_which_coup_and_who_won(
    browser: Any, table_screen: DealerScreen, width: int, height: int
) -> None:
    table_screen.game(3, 13, LAST_COUP)  # coup 12 declared: the table's next coup is 13
    table_screen.show(nine_seats())
    page = open_page(browser, table_screen, width, height)
    try:
        wait_version(page, table_screen.version)
        page.screenshot(path=str(OUTPUT / f"dealer-header-{width}x{height}.png"))
        # paying coup 12: its number and its own result, in the notation's words and the winner's colour
        assert (text(page, "phase"), text(page, "coup")) == ("PAYOUT", "SHOE 3 · COUP 12")
        assert text(page, "result") == "Banker wins · P 3 – B 7"
        colour = 'id => getComputedStyle(document.querySelector(`[data-testid="${id}"]`)).color'
        assert page.evaluate(colour, "result") == "rgb(255, 107, 96)"  # Banker red
        check_layout(page.evaluate(MEASURE), width, height, 9, min_action=18)  # the header fits with the seats
        table_screen.show(betting())  # the next coup's bets
        wait_version(page, table_screen.version)
        assert (text(page, "phase"), text(page, "coup")) == ("BETS OPEN", "SHOE 3 · COUP 13")
        assert text(page, "result") == "LAST: Banker wins · P 3 – B 7"
        table_screen.game(4, 1, None)  # a new shoe
        wait_version(page, table_screen.version)
        assert (text(page, "coup"), text(page, "result")) == ("SHOE 4 · COUP 1", "NO RESULT YET")
    finally:
        page.close()


BOXES = """() => Object.fromEntries([...document.querySelectorAll('.seat')].map((s) => {
  const r = s.getBoundingClientRect();
  return [s.dataset.seat, [Math.round(r.left), Math.round(r.top), Math.round(r.width), Math.round(r.height),
                           s.classList.contains('empty')]];
}))"""


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_seat_boxes_stay_in_place_as_seats_empty(
    browser: Any, table_screen: DealerScreen, width: int, height: int
) -> None:
    table_screen.show(nine_seats())
    page = open_page(browser, table_screen, width, height)
    try:
        wait_version(page, table_screen.version)
        before = page.evaluate(BOXES)
        assert sorted(before, key=int) == [str(n) for n in range(1, 10)] and not any(b[4] for b in before.values())
        # seats 2, 5 and 8 lost and were taken; then seat 1 alone is left betting
        emptied = MoneyView(Phase.PAYOUT, tuple(seat for seat in nine_seats().seats if seat.seat not in (2, 5, 8)))
        for view, empty in ((emptied, {"2", "5", "8"}), (betting(), {"1", "4", "5", "6", "7", "8", "9"})):
            table_screen.show(view)
            wait_version(page, table_screen.version)
            after = page.evaluate(BOXES)
            page.screenshot(path=str(OUTPUT / f"dealer-emptied-{len(empty)}-{width}x{height}.png"))
            assert {k: v[:4] for k, v in after.items()} == {k: v[:4] for k, v in before.items()}, "a seat's box moved"
            assert {k for k, v in after.items() if v[4]} == empty
            assert text(page, "seat-5").startswith("SEAT 5")  # an empty seat still says which it is
    finally:
        page.close()


def test_a_mispay_stays_beside_its_wager_s_row(browser: Any, table_screen: DealerScreen) -> None:
    """The mispaid spot's row (its name, its wager, what to do now) stays on screen, the MISPAY right under it."""
    table_screen.show(nine_seats())
    page = open_page(browser, table_screen, 800, 480)
    try:
        wait_version(page, table_screen.version)
        rect = 'id => { const r = document.querySelector(`[data-testid="${id}"]`).getBoundingClientRect();' \
               " return [r.left, r.top, r.right, r.bottom]; }"  # fmt: skip
        row, flag = page.evaluate(rect, "spot-4-banker"), page.evaluate(rect, "flag-4-banker")
        assert text(page, "spot-4-banker").split() == ["BANKER", "$100", "PAY", "$15"]
        assert 0 <= flag[1] - row[3] <= 4, f"the MISPAY {flag} is not right under its row {row}"
        assert text(page, "text-4-banker") == "UNDERPAID $15"
    finally:
        page.close()
