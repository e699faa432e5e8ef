"""The supervisor's approval on the dealer screen (controller/board/dealer.py): the money view's pending approval
in the page's snapshot, and ``POST /api/approve``'s PIN handed to the table only while a PIN is due, refused in
one line (never the PIN) and counted otherwise. Drawn and tried in Chromium in tests/browser/test_dealer_approval.py."""

from __future__ import annotations

from http import HTTPStatus

from controller.board.dealer import DealerScreen
from controller.feed.messages import PinLine, RateLine, encode_pin, encode_rate
from controller.game.wagers import ApprovalView, MoneyView, Phase


def pending(approver: str | None) -> MoneyView:
    return MoneyView(Phase.LOCKED, approval=ApprovalView("void", "VOID COUP", 1, 4, "D1", approver, ""))


class Table:
    def __init__(self, up: bool = True) -> None:
        self.up = up
        self.got: list[str] = []

    def send(self, pin: PinLine) -> bool:
        if self.up:
            self.got.append(pin.pin)
        return self.up


def screen(table: Table) -> DealerScreen:
    s = DealerScreen(("127.0.0.1", 0), table_name="Baccarat 3", seats=7)
    s.send_pin = table.send
    return s


def test_the_snapshot_carries_the_pending_approval() -> None:
    s = screen(Table())
    s.show(pending(None))
    assert s.snapshot()["approval"] == {"action": "void", "text": "VOID COUP", "shoe": 1, "coup": 4,
                                        "dealer": "D1", "approver": None, "said": ""}  # fmt: skip
    s.show(MoneyView(Phase.LOCKED))
    assert s.snapshot()["approval"] is None


def test_a_pin_goes_to_the_table_only_while_one_is_due() -> None:
    table = Table()
    s = screen(table)
    assert s.enter_pin(encode_pin(PinLine("482913"))) == (
        HTTPStatus.CONFLICT,
        "PIN refused: no approval waits for a PIN",
    )
    s.show(pending(None))  # a badge is due, not a PIN
    assert s.enter_pin(encode_pin(PinLine("482913")))[0] == HTTPStatus.CONFLICT
    s.show(pending("S1"))
    assert s.enter_pin(encode_pin(PinLine("482913"))) == (HTTPStatus.ACCEPTED, "PIN sent to the table: checking")
    assert table.got == ["482913"]
    status, said = s.enter_pin(b'{"t":"approve","pin":"48x913"}')
    assert status == HTTPStatus.BAD_REQUEST and "48x913" not in said
    status, said = s.enter_pin(b'{"t":"buy_in","seat":3,"cents":100,"tender":"cash"}')
    assert status == HTTPStatus.BAD_REQUEST
    table.up = False
    assert s.enter_pin(encode_pin(PinLine("482913")))[0] == HTTPStatus.SERVICE_UNAVAILABLE
    assert s.stats["pins_sent"] == 1 and s.stats["pins_refused"] == 5 and table.got == ["482913"]


def test_a_rating_goes_to_the_table_and_a_seat_off_the_table_is_refused() -> None:
    got: list[int] = []
    s = DealerScreen(("127.0.0.1", 0), table_name="Baccarat 3", seats=7)

    def send(rate: RateLine) -> bool:
        got.append(rate.seat)
        return True

    s.send_rate = send
    assert s.enter_rate(encode_rate(RateLine(3))) == (
        HTTPStatus.ACCEPTED,
        "seat 3: rating asked: a supervisor approves it",
    )
    assert s.enter_rate(encode_rate(RateLine(8))) == (
        HTTPStatus.BAD_REQUEST,
        "rating refused: seat 8 is not on this table (seats 1-7)",
    )
    assert s.enter_rate(b'{"t":"rate","seat":0}')[0] == HTTPStatus.BAD_REQUEST
    assert got == [3] and s.stats["rates_sent"] == 1 and s.stats["rates_refused"] == 2


def test_a_card_keyed_goes_to_the_table_only_while_an_unreadable_card_can_be_keyed() -> None:
    from controller.feed.messages import KeyLine, encode_key

    got: list[str] = []
    s = DealerScreen(("127.0.0.1", 0), table_name="Baccarat 3", seats=7)

    def send(key: KeyLine) -> bool:
        got.append(key.card)
        return True

    s.send_key = send
    s.show(MoneyView(Phase.LOCKED))
    assert s.snapshot()["keyable"] is False
    assert s.enter_key(encode_key(KeyLine("5S"))) == (
        HTTPStatus.CONFLICT,
        "card refused: no coup waits for an unreadable card",
    )
    s.show(MoneyView(Phase.LOCKED, keyable=True))
    assert s.snapshot()["keyable"] is True
    assert s.enter_key(encode_key(KeyLine("5S"))) == (HTTPStatus.ACCEPTED, "5♠ keyed: a supervisor approves it")
    for bad in (b'{"t":"key","card":"1S"}', b'{"t":"key","card":"5s"}', b'{"t":"key","card":"5S","x":1}'):
        status, said = s.enter_key(bad)
        assert status == HTTPStatus.BAD_REQUEST and said.startswith("card refused:"), said
    assert got == ["5S"] and s.stats["keys_sent"] == 1 and s.stats["keys_refused"] == 4


def test_the_snapshot_carries_what_the_table_refused() -> None:
    s = screen(Table())
    s.show(MoneyView(Phase.LOCKED))
    assert s.snapshot()["refusal"] is None
    s.show(MoneyView(Phase.LOCKED, refusal="RATING REFUSED: SEAT 12 IS NOT ON THIS TABLE", refusals=2))
    assert s.snapshot()["refusal"] == {"n": 2, "text": "RATING REFUSED: SEAT 12 IS NOT ON THIS TABLE"}
