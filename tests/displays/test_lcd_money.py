"""The LCD's short form of the money: the most urgent item first (READER DOWN, a seat's alarm, then PAY, TAKE,
and the commission box asked for), on the fourth line of a 20x4 and the second line of a 16x2 (under a table
alarm, which stays). Through the pure :func:`render` and through the sink on the LCD test double."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from controller.game.rules import COMMISSION
from controller.game.table import Alarm, LinkChanged, NewShoePressed, TableState
from controller.game.wagers import MAX_SEATS, MoneyView, Phase, SeatView, Spot, SpotState, SpotView
from controller.table.lcd import money_line, render
from tests.displays.money_views import betting, nine_seats, spot, table_view, with_money
from tests.displays.test_lcd import GEOMETRIES, ROM_SAFE, fake_sink

B, P = Spot.BANKER, Spot.PLAYER


def one(*seats: SeatView, reader_up: bool = True) -> MoneyView:
    return MoneyView(Phase.PAYOUT, seats, reader_up=reader_up)


def pay(seat: int, cents: int) -> SeatView:
    return SeatView(seat, (spot(seat, B, SpotState.PAY, 10000, wager_cents=10000, pay_cents=cents),))


def take(seat: int, cents: int) -> SeatView:
    return SeatView(seat, (spot(seat, P, SpotState.TAKE, cents, wager_cents=cents, take_cents=cents),))


def collect(seat: int, cents: int) -> SeatView:
    return SeatView(seat, (spot(seat, Spot.COMMISSION, SpotState.COLLECT, 0, take_cents=cents),), box_cents=cents)


def test_the_short_forms() -> None:
    assert money_line(one(pay(3, 9500)), 16) == "S3 PAY 95"
    assert money_line(one(pay(3, 142500)), 16) == "S3 PAY 1,425"
    assert money_line(one(take(5, 2500)), 16) == "S5 TAKE 25"
    assert money_line(one(collect(4, 1250)), 16) == "S4 BOX 12.50"
    mispaid = SeatView(2, (spot(2, B, SpotState.MISPAID, 18000, wager_cents=10000, text="UNDERPAID $15"),))
    assert money_line(one(mispaid), 16) == "S2 MISPAY"
    past = SeatView(6, (spot(6, B, SpotState.CHANGED, 20000, wager_cents=10000),))
    pulled = SeatView(6, (spot(6, B, SpotState.CHANGED, 5000, wager_cents=10000),))
    assert money_line(one(past), 16) == "S6 PAST POST"
    assert money_line(one(pulled), 16) == "S6 PULLED BET"
    refused = SeatView(3, (spot(3, Spot.TIE, SpotState.REFUSED, 100),))
    assert money_line(one(refused), 16) == "S3 RETURN"


def test_an_amount_too_wide_drops_to_the_words() -> None:
    assert money_line(one(take(14, 99_999_999)), 16) == "S14 TAKE"  # "S14 TAKE 999,999.99" is 19
    assert money_line(one(take(14, 99_999_999)), 20) == "S14 TAKE 999,999.99"


def counted(words: str, more: int, cols: int = 16) -> str:
    return words + f"+{more}".rjust(cols - len(words))


def test_the_most_urgent_comes_first_with_the_rest_counted() -> None:
    mispaid = SeatView(7, (spot(7, B, SpotState.MISPAID, 100, wager_cents=100),))
    money = one(collect(1, 500), take(2, 500), pay(3, 950), mispaid)
    assert money_line(money, 16) == counted("S7 MISPAY", 3)
    assert money_line(one(collect(1, 500), take(2, 500), pay(3, 950)), 16) == counted("S3 PAY 9.50", 2)
    assert money_line(one(collect(1, 500), take(2, 500)), 16) == counted("S2 TAKE 5", 1)
    assert money_line(one(pay(3, 950), pay(1, 950)), 16) == counted("S1 PAY 9.50", 1)  # seat order within a kind
    assert money_line(one(pay(3, 950), reader_up=False), 16) == counted("READER DOWN", 1)
    alarmed = SeatView(4, (), alarms=("UNKNOWN CHIP",))
    assert money_line(one(pay(3, 950), alarmed), 20) == counted("S4 UNKNOWN CHIP", 1, 20)


def test_nothing_for_the_dealer_is_no_line() -> None:
    locked = SeatView(2, (spot(2, B, SpotState.LOCKED, 5000, wager_cents=5000),))
    assert money_line(MoneyView(Phase.LOCKED, (locked,)), 16) is None
    assert money_line(MoneyView(Phase.BETTING), 16) is None


def test_a_20x4_shows_the_money_on_line_4_and_a_16x2_on_line_2() -> None:
    view = table_view(one(pay(3, 9500)))
    assert render(view, COMMISSION, 20, 4)[3] == "S3 PAY 95".ljust(20)
    assert render(view, COMMISSION, 16, 2)[1] == "S3 PAY 95".ljust(16)
    plain = table_view(None)
    assert render(plain, COMMISSION, 20, 4)[3] == render(TableState().view(), COMMISSION, 20, 4)[3]
    assert render(plain, COMMISSION, 16, 2) == render(TableState().view(), COMMISSION, 16, 2)


def test_a_table_alarm_keeps_line_2_of_a_16x2_and_the_money_keeps_line_4_of_a_20x4() -> None:
    state = TableState()
    state.apply(NewShoePressed())
    state.apply(LinkChanged(up=False))
    assert Alarm.LINK_DOWN in state.view().alarms
    view = with_money(state.view(), nine_seats())
    assert render(view, COMMISSION, 16, 2)[1].startswith("LINK DOWN")
    four = render(view, COMMISSION, 20, 4)
    assert four[1].startswith("LINK DOWN") and four[3].startswith("S4 MISPAY")


def test_the_sink_shows_the_money_on_the_lcd_double() -> None:
    for cols, rows in GEOMETRIES:
        sink, fake = fake_sink(cols, rows)
        sink.update(table_view(betting()), [])
        assert fake.text()[rows - 1 if rows == 4 else 1].startswith("S3 TIE BELOW")
        sink.update(table_view(one(pay(3, 9500), take(5, 2500))), [])
        assert fake.text()[3 if rows == 4 else 1] == counted("S3 PAY 95", 1, cols)
        sink.update(table_view(one(take(5, 2500))), [])
        assert fake.text()[3 if rows == 4 else 1] == "S5 TAKE 25".ljust(cols)
        sink.update(table_view(None), [])
        assert fake.text() == render(TableState().view(), COMMISSION, cols, rows)


_spots = st.builds(
    SpotView,
    st.integers(1, MAX_SEATS),
    st.sampled_from(Spot),
    st.sampled_from(SpotState),
    st.integers(0, 10**9),
    wager_cents=st.none() | st.integers(0, 10**9),
    target_cents=st.none() | st.integers(0, 10**9),
    pay_cents=st.integers(0, 10**9),
    take_cents=st.integers(0, 10**9),
    text=st.text(max_size=80),
)
_seats = st.builds(
    SeatView,
    st.integers(1, MAX_SEATS),
    st.lists(_spots, max_size=10).map(tuple),
    box_cents=st.integers(0, 10**9),
    alarms=st.lists(st.text(max_size=80), max_size=4).map(tuple),
)
_money = st.builds(
    MoneyView, st.sampled_from(Phase), st.lists(_seats, max_size=MAX_SEATS).map(tuple), reader_up=st.booleans()
)


@given(_money)
def test_any_money_gives_exact_rom_safe_lines(money: MoneyView) -> None:
    view = table_view(money)
    for cols, rows in GEOMETRIES:
        lines = render(view, COMMISSION, cols, rows)
        assert len(lines) == rows
        for text in lines:
            assert len(text) == cols and set(text) <= ROM_SAFE
        line = money_line(money, cols)
        assert line is None or len(line) <= cols
