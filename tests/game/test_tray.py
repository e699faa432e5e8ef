"""The chip tray coup by coup (controller.game.tray through controller.game.table): the flows each coup moves, the
count made only once the payout is over and the tray still, a variance confirmed by a recount, a flicker that is
not one, and the book replayed from the journal's inputs (across a shoe's start) equal to the live one."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.game.cash import BuyIn, Tender
from controller.game.chips import SpotChips
from controller.game.records import derived_records, input_body
from controller.game.replay import ShoeStart, replay
from controller.game.table import DeclarePressed, NewShoePressed, TableInput, TableRules, TableState
from controller.game.tray import (
    TrayBook,
    TrayCounted,
    TrayLinkChanged,
    TraySnapshot,
    TrayStill,
    TrayVarianceFound,
    TubeSeen,
)
from controller.game.wagers import Spot, SpotSeen
from tests.game.money import BANKER_NATURAL, NATURAL_TIE, PLAYER_NATURAL, Chips, cards, money, plus, table_rules
from tests.game.tray_coups import FLOAT_CENTS, tray_rules, tray_shoe


def run(events: list[TableInput], rules: TableRules | None = None) -> tuple[TableState, list[object]]:
    state = TableState(rules or tray_rules())
    notices: list[object] = []
    for event in events:
        notices += state.apply(event)
    return state, notices


def counted(notices: list[object]) -> list[TrayCounted]:
    return [n for n in notices if isinstance(n, TrayCounted)]


def test_a_coup_paid_from_the_tray_reconciles_and_a_palmed_chip_is_a_variance_in_its_coup() -> None:
    state, notices = run(tray_shoe())
    counts = counted(notices)
    assert [(c.coup, c.expected_cents, c.counted_cents, c.flow_cents, c.variance_cents) for c in counts] == [
        (1, FLOAT_CENTS, FLOAT_CENTS, 0, 0),  # the anchor: the tray's first count
        (1, FLOAT_CENTS - 2500, FLOAT_CENTS - 2500, -2500, 0),  # the loser's $25 in, the winner's $50 out
        (2, FLOAT_CENTS - 2500, FLOAT_CENTS - 3000, 0, -500),  # $5 palmed
    ]
    assert counts[0].anchored and not counts[1].anchored
    [variance] = [n for n in notices if isinstance(n, TrayVarianceFound)]
    assert (variance.coup, variance.variance_cents, variance.text) == (2, -500, "TRAY SHORT $5 (COUP 2)")
    assert [(d.cents, d.count) for d in variance.changed] == [(500, -1)]
    view = state.view().tray
    assert view is not None and view.alarm == "TRAY SHORT $5 (COUP 2)" and view.misreads == 0


def test_the_variances_add_up_to_the_discrepancy_and_a_theft_is_not_counted_again() -> None:
    chips = Chips()
    events = tray_shoe()
    tube1 = [e for e in events if isinstance(e, TubeSeen) and e.tube == 1][-1]
    tube2 = next(e for e in events if isinstance(e, TubeSeen) and e.tube == 2)
    extra = chips(10000)
    events += [*cards(BANKER_NATURAL), DeclarePressed(), TrayStill()]  # coup 3: nothing moves, nothing new
    events += [TubeSeen(3, extra), *cards(BANKER_NATURAL), DeclarePressed(), TrayStill()]  # coup 4: $100 too many
    events += [TraySnapshot(((1, tube1.chips), (2, tube2.chips), (3, extra))), TrayStill()]  # ... recounted
    _, notices = run(events)
    by_coup = {c.coup: c.variance_cents for c in counted(notices) if not c.anchored}
    assert by_coup == {1: 0, 2: -500, 3: 0, 4: 10000}
    last = counted(notices)[-1]
    assert sum(by_coup.values()) == last.counted_cents - last.expected_cents == 9500


def test_a_still_tray_is_not_counted_while_the_dealer_is_still_paying() -> None:
    events = tray_shoe()
    paid = next(i for i, e in enumerate(events) if isinstance(e, SpotSeen) and e.seat == 1 and len(e.chips.chips) == 4)
    before = events[:paid]  # the loser taken, the payout out of the tray, not yet on the winner's spot
    state, notices = run([*before, TrayStill()])
    assert len(counted(notices)) == 1  # the anchor only: the payout is not over
    assert not state.payout_over and state.tray is not None and state.tray.due == (1, 1)
    later = state.apply(events[paid])  # the payout reaches the spot: its check passes
    assert state.payout_over and not [n for n in later if isinstance(n, TrayCounted)]
    [count] = [n for n in state.apply(TrayStill()) if isinstance(n, TrayCounted)]
    assert count.variance_cents == 0


def test_a_flicker_gone_by_the_recount_is_a_misread_not_a_variance() -> None:
    events = tray_shoe()
    end = events.index(next(e for e in events if isinstance(e, TubeSeen) and e.tube == 2))
    head = events[:end]  # through coup 1's count: the tray reconciled, nothing palmed
    snapshot = head[1]
    assert isinstance(snapshot, TraySnapshot)
    tube1_now = head[end - 4]
    assert isinstance(tube1_now, TubeSeen) and tube1_now.tube == 1
    flicker = TubeSeen(1, SpotChips(tube1_now.chips.chips[1:]))  # a chip missed at the still moment
    recount = TraySnapshot(((1, tube1_now.chips), snapshot.tubes[1]))
    state, notices = run([*head, flicker, *cards(PLAYER_NATURAL), DeclarePressed(), TrayStill(), recount, TrayStill()])
    assert [c.variance_cents for c in counted(notices)][-1] == 0
    assert not [n for n in notices if isinstance(n, TrayVarianceFound)]
    assert state.tray is not None and state.tray.misreads == 1 and not state.tray.recount_wanted


def test_a_still_moment_before_the_recount_comes_counts_nothing() -> None:
    events = tray_shoe()
    state, _ = run(events[:-2])  # the variance seen, the recount asked for
    assert state.tray is not None and state.tray.recount_wanted
    assert state.apply(TrayStill()) == []  # no full count yet: still waiting for it
    assert state.tray.recount_wanted


def test_buy_ins_for_cash_or_a_marker_take_chips_from_the_tray_and_chips_tendered_do_not() -> None:
    state, _ = run(tray_shoe()[:3])  # anchored
    for tender in Tender:
        state.buy_in(BuyIn(4, 10000, tender))
    assert state.tray is not None and state.tray.flow == -20000
    view = state.view().tray
    assert view is not None and view.expected_cents == FLOAT_CENTS - 20000


def test_commission_collected_from_a_box_goes_into_the_tray() -> None:
    rules = TableRules(decks=8, burn_rule=table_rules().burn_rule, money=money(leave_after_coups=1), tray=True)
    chips = Chips()
    bet = chips(10000)
    events: list[TableInput] = [NewShoePressed(), TraySnapshot(((1, chips(*[2500] * 8)),)), TrayStill()]
    events += [SpotSeen(1, Spot.BANKER, bet), *cards(BANKER_NATURAL), DeclarePressed()]  # $100 Banker wins: $5 owed
    events += [SpotSeen(1, Spot.BANKER, plus(bet, chips(10000))), SpotSeen(1, Spot.BANKER, SpotChips())]
    events += [*cards(PLAYER_NATURAL)]  # the seat's spots empty at the next lock: it has left, its box is due
    state, _ = run(events, rules)
    assert state.tray is not None and state.tray.flow == -10000
    state.apply(SpotSeen(1, Spot.COMMISSION, chips(500)))
    state.apply(SpotSeen(1, Spot.COMMISSION, SpotChips()))  # the dealer takes the $5
    assert state.tray.flow == -10000 + 500


def test_the_tray_link_down_forgets_the_count_until_the_next_full_one() -> None:
    state, _ = run(tray_shoe()[:3])
    assert state.tray is not None and state.tray.ready(True) is False  # anchored, nothing due
    state.apply(TrayLinkChanged(up=False))
    view = state.view().tray
    assert view is not None and not view.up and not view.counted
    state.apply(TrayLinkChanged(up=True))
    state.apply(DeclarePressed())  # nothing to declare: no coup, nothing due
    assert not state.tray.ready(True)


def test_a_table_without_a_tray_reader_keeps_no_tray() -> None:
    state, notices = run(tray_shoe(), table_rules())
    assert state.tray is None and state.view().tray is None
    assert not [n for n in notices if isinstance(n, TrayCounted | TrayVarianceFound)]
    assert "tray" not in state.view().to_dict()


def test_the_book_a_shoe_carries_is_the_book_after_it() -> None:
    state, _ = run(tray_shoe())
    assert state.tray is not None
    again = TrayBook.at_shoe_start(state.tray.carried())
    assert again == state.tray
    assert TrayBook.at_shoe_start(None) == TrayBook()


def _replayed(events: list[TableInput], rules: TableRules) -> TableState:
    """The journal's inputs replayed from the newest shoe's start, as a restart does (the start record's tray)."""
    live = TableState(rules)
    start_at, start = 0, None
    for i, event in enumerate(events):
        for kind, body in derived_records(live.apply(event)):
            if kind == "shoe" and body["event"] == "start":
                start_at = i + 1
                start = ShoeStart(
                    body["shoe"], spots=tuple(body.get("spots", ())), players=tuple(body.get("players", ()))
                )
                start = replace(start, tray=body.get("tray"))
    return replay(rules, [input_body(e) for e in events[start_at:]], start).state


@settings(max_examples=30, deadline=None)
@given(st.integers(min_value=0, max_value=len(tray_shoe())), st.booleans())
def test_the_tray_replayed_from_the_journal_equals_the_live_one(cut: int, new_shoe: bool) -> None:
    events = tray_shoe()
    events = [*events[:cut], *([NewShoePressed()] if new_shoe else []), *events[cut:]]
    rules = tray_rules()
    live, _ = run(events, rules)
    assert _replayed(events, rules).view() == live.view()
    again = _replayed(events, rules).tray
    assert again is not None and live.tray is not None and again.carried() == live.tray.carried()


def test_a_push_taken_back_waits_for_nobody_the_tray_is_counted() -> None:
    chips = Chips()
    events = tray_shoe()[:3]  # anchored
    bet = chips(2500)
    events += [SpotSeen(1, Spot.PLAYER, bet), *cards(NATURAL_TIE), DeclarePressed()]
    events += [SpotSeen(1, Spot.PLAYER, SpotChips())]  # the player takes the push back
    state, _ = run(events)
    assert state.payout_over
    [count] = [n for n in state.apply(TrayStill()) if isinstance(n, TrayCounted)]
    assert (count.coup, count.flow_cents, count.variance_cents) == (1, 0, 0)
