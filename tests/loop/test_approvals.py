"""What needs a supervisor, at the table: VOID held asks instead of voiding, a supervisor's badge at the dealer's
position (over the bet-spot reader's real session) and PIN (checked against its real Argon2 hash on the verified
staff list, on the checker's thread) approve it and the coup is voided; a wrong PIN three times locks the
supervisor out, over a restart too; the PIN is never journaled; a table without a staff list voids as before."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.game.cards import Card
from controller.game.records import input_body
from controller.game.table import Alarm, TableRules, TableState
from controller.journal import Journal
from controller.table.loop import (
    LoopConfig,
    PanelPress,
    PinEntry,
    ReaderPort,
    ShoePort,
    StaffListIn,
    TableLoop,
    WireBytes,
)
from controller.table.loop.resume import locked_out, on_duty
from controller.table.panel import ButtonAction
from controller.table.pin_check import PinChecker, check_pin
from controller.table.spot_wire import SpotWire
from controller.table.staff_list import StaffListKeeper, staff_list_path
from controller.table.wire import AsciiWire
from firmware_protocol.session import ControllerSession, ShoeSession
from firmware_protocol.spots import READER
from floor.passwords import hash_secret
from floor_protocol.staff import StaffEntry, StaffList
from tests.game.money import cards
from tests.loop.test_dealer_badges import D1, FLOOR, REGISTRY, RULES, NoPort, Table

SUP, PIT = 0x0004A1B2C3D4E5A1, 0x0004A1B2C3D4E5A2
PIN, OTHER_PIN = "482913", "111111"
AS_OF = "2026-12-03T06:00:00.000Z"


@pytest.fixture(scope="module")
def pin_hash() -> str:
    return hash_secret(PIN)


def staff_list(pin_hash: str, as_of: str = AS_OF) -> StaffList:
    entries = (
        StaffEntry(id="D1", role="dealer", badge="0004A1B2C3D4E501", pin_hash=pin_hash),
        StaffEntry(id="S1", role="supervisor", badge=f"{SUP:016X}", pin_hash=pin_hash),
        StaffEntry(id="P1", role="pit_manager", badge=f"{PIT:016X}", pin_hash=pin_hash),
    )
    return StaffList.signed(FLOOR, "casino", as_of, entries)


class Checked(PinChecker):
    """The real checker, telling the test when a verdict is in the loop's inbox."""

    def __init__(self) -> None:
        super().__init__(check_pin)
        self.done = threading.Event()

    def submit(self, staff_id, pin_hash, pin, done):  # type: ignore[no-untyped-def]
        def told(staff: str, right: bool) -> None:
            done(staff, right)
            self.done.set()

        self.done.clear()
        return super().submit(staff_id, pin_hash, pin, told)


def open_table(path: Path, rules: TableRules = RULES, **config: object) -> tuple[TableLoop, Journal, Checked]:
    journal = Journal.open(path / "j.db")
    keeper = StaffListKeeper(staff_list_path(path / "j.db"), FLOOR.public_key(), "casino")
    keeper.load()
    reader = ReaderPort(NoPort(), SpotWire(REGISTRY, ControllerSession(dialect=READER)), lambda data: None)
    checker = Checked()
    loop = TableLoop(
        TableState(rules),
        journal,
        [ShoePort(AsciiWire(), lambda data: None), reader],
        config=LoopConfig(
            clock=lambda: 0.0,
            staff=keeper,
            duty=on_duty(journal),
            pin_checker=checker,
            locked_out=locked_out(journal, keeper.roster.as_of),
            **config,  # type: ignore[arg-type]
        ),
    )
    return loop, journal, checker


@contextlib.contextmanager
def listed_table(
    path: Path, pin_hash: str, rules: TableRules = RULES, **config: object
) -> Iterator[tuple[Table, Checked]]:
    """A table (``open_table``) that has verified the staff list, the reader's device session started."""
    loop, journal, checker = open_table(path, rules, **config)
    device = ShoeSession(0xBE7, dialect=READER)
    device.start(0.0)
    loop.handle(StaffListIn(staff_list(pin_hash)))
    try:
        yield Table(loop, journal, device, [0.0]), checker
    finally:
        journal.close()


@pytest.fixture
def table(tmp_path: Path, pin_hash: str) -> Iterator[tuple[Table, Checked]]:
    with listed_table(tmp_path, pin_hash) as made:
        yield made


def deal(loop: TableLoop, *tokens: str) -> None:
    for event in cards(tokens):
        loop._apply(event, input_body(event), None, None)
    loop.flush()


def hold_void(loop: TableLoop) -> None:
    loop.handle(PanelPress(ButtonAction.VOID))
    loop.flush()


def enter_pin(loop: TableLoop, checker: Checked, pin: str) -> None:
    """A PIN from the dealer screen, as the feed hands it on; the verdict handled when the checker gives it."""
    loop.handle(PinEntry(pin))
    assert checker.done.wait(10), "the PIN checker gave no verdict"
    event = loop.inbox.take()
    assert event is not None
    loop.handle(event)
    loop.flush()


def coups(t: Table) -> list[dict[str, object]]:
    return t.records("coup")


def test_a_void_waits_for_a_supervisor_and_is_voided_once_approved(table: tuple[Table, Checked]) -> None:
    t, checker = table
    t.badge(D1, True)
    deal(t.loop, "9H", "KD")
    hold_void(t.loop)
    assert coups(t) == []  # asked, not voided
    assert t.records("approval_asked") == [{"shoe": 1, "coup": 1, "action": "void", "dealer": "D1"}]
    assert Alarm.SUPERVISOR_CALLED in t.loop.view().alarms
    money = t.loop.view().money
    assert money is not None and money.approval is not None and money.approval.approver is None
    t.badge(SUP, True)  # the supervisor's badge at the dealer's position: not a swap
    assert t.loop.duty.on_duty == "D1"
    assert t.records("dealer_in") == [t.records("dealer_in")[0]]  # D1's only
    assert Alarm.SUPERVISOR_PIN in t.loop.view().alarms
    enter_pin(t.loop, checker, PIN)
    [approval] = t.records("approval")
    assert approval == {"shoe": 1, "coup": 1, "action": "void", "approver": "S1", "role": "supervisor",
                        "dealer": "D1", "staff_as_of": AS_OF}  # fmt: skip
    [voided] = coups(t)
    assert voided["void"] is True and voided["cards"] == ["9H", "KD"]
    view = t.loop.view()
    assert Alarm.SUPERVISOR_PIN not in view.alarms and Alarm.SUPERVISOR_CALLED not in view.alarms
    assert view.money is not None and view.money.approval is None


def test_three_wrong_pins_lock_the_supervisor_out_and_a_pit_manager_approves(
    table: tuple[Table, Checked], tmp_path: Path
) -> None:
    t, checker = table
    t.badge(D1, True)
    deal(t.loop, "9H", "KD")
    hold_void(t.loop)
    t.badge(SUP, True)
    for _ in range(3):
        enter_pin(t.loop, checker, OTHER_PIN)
    refused = t.records("approval_refused")
    assert [(b["why"], b["wrong_pins"]) for b in refused] == [("wrong_pin", 1), ("wrong_pin", 2), ("locked_out", 3)]
    money = t.loop.view().money
    assert money is not None and money.approval is not None
    assert money.approval.approver is None and money.approval.said == "WRONG PIN: LOCKED OUT"
    t.badge(SUP, False)
    t.badge(SUP, True)  # locked: even with the right PIN now
    assert t.records("approval_refused")[-1]["why"] == "locked"
    assert coups(t) == []
    t.badge(PIT, True)
    enter_pin(t.loop, checker, PIN)
    assert [b["approver"] for b in t.records("approval")] == ["P1"]
    assert coups(t)[0]["void"] is True
    # The PIN is nowhere in the journal: not the right one, not the wrong ones.
    t.journal.close()
    data = (tmp_path / "j.db").read_bytes()
    assert PIN.encode() not in data and OTHER_PIN.encode() not in data
    # After a restart the lock stands under the same staff list ...
    loop, journal, _checker = open_table(tmp_path)
    try:
        assert loop.approvals.desk.locked == {"S1"}
    finally:
        journal.close()


def test_a_dealer_cannot_approve_and_a_supervisor_dealing_cannot_approve_their_own(
    table: tuple[Table, Checked],
) -> None:
    t, _checker = table
    t.badge(SUP, True)  # a supervisor deals
    assert t.loop.duty.on_duty == "S1"
    deal(t.loop, "9H", "KD")
    hold_void(t.loop)
    t.badge(SUP, True)  # their own badge again: the reader repeats it, and it is theirs
    t.badge(D1, True)  # a dealer
    assert [b["why"] for b in t.records("approval_refused")] == ["own_correction", "not_supervisor"]
    hold_void(t.loop)  # VOID held again: withdrawn
    assert t.records("approval_refused")[-1]["why"] == "withdrawn"
    assert coups(t) == [] and t.loop.view().money is not None and t.loop.view().money.approval is None  # type: ignore[union-attr]


def test_a_pin_with_no_approval_waiting_is_refused_and_counted(table: tuple[Table, Checked]) -> None:
    t, _checker = table
    t.loop.handle(PinEntry(PIN))
    assert t.loop.approvals.pins_refused["none_due"] == 1
    assert t.records("approval_refused") == [] and t.records("approval") == []


def test_a_declare_ends_the_pending_void_without_a_record(table: tuple[Table, Checked]) -> None:
    t, _checker = table
    deal(t.loop, "9H", "KD", "KS", "QS")  # a natural: complete
    hold_void(t.loop)
    assert t.loop.approvals.desk.pending is not None
    from controller.game.table import DeclarePressed

    t.loop._apply(DeclarePressed(), input_body(DeclarePressed()), None, None)
    t.loop.flush()
    assert t.loop.approvals.desk.pending is None
    assert Alarm.SUPERVISOR_CALLED not in t.loop.view().alarms
    assert [c["declared"] for c in coups(t)] == [True]


@pytest.mark.parametrize("how", ["no staff list", "approvals off"])
def test_without_a_staff_list_or_with_approvals_off_the_dealer_voids_alone(
    tmp_path: Path, pin_hash: str, how: str
) -> None:
    config: dict[str, object] = {"approve": frozenset()} if how == "approvals off" else {}
    loop, journal, _checker = open_table(tmp_path, RULES, **config)
    try:
        if how == "approvals off":
            loop.handle(StaffListIn(staff_list(pin_hash)))
        deal(loop, "9H", "KD")
        hold_void(loop)
        records = [(r.kind, json.loads(r.body)) for r in journal.records()]
        assert [b["void"] for k, b in records if k == "coup"] == [True]
        assert not [k for k, _ in records if k.startswith("approval")]
    finally:
        journal.close()


def test_a_new_staff_list_lifts_the_lock(table: tuple[Table, Checked], pin_hash: str) -> None:
    t, checker = table
    deal(t.loop, "9H", "KD")
    hold_void(t.loop)
    t.badge(SUP, True)
    for _ in range(3):
        enter_pin(t.loop, checker, OTHER_PIN)
    assert t.loop.approvals.desk.locked == {"S1"}
    t.loop.handle(StaffListIn(staff_list(pin_hash, as_of="2026-12-03T07:00:00.000Z")))  # the PIN reset
    assert t.loop.approvals.desk.locked == set()
    t.badge(SUP, False)
    t.badge(SUP, True)
    enter_pin(t.loop, checker, PIN)
    assert [b["approver"] for b in t.records("approval")] == ["S1"]


def test_the_shoes_own_void_button_asks_too_and_is_acknowledged(table: tuple[Table, Checked]) -> None:
    """VOID held on the shoe (its BUTTON event, over the wire) is the panel's: it asks, and the approval input takes
    the press's source, sequence number and acknowledgement."""
    from controller.game.table import VoidPressed

    t, _checker = table
    deal(t.loop, "9H", "KD")
    t.loop._apply(VoidPressed(), input_body(VoidPressed(), source="shoe", seq=17), 1, 17)
    t.loop.flush()
    assert coups(t) == []
    [ask] = [b for _id, b in t.journal.inputs() if b["kind"] == "approval"]
    assert ask == {"kind": "approval", "step": "ask", "action": "void", "source": "shoe", "seq": 17}
    assert t.journal.last_event(1) == (1, 17)  # its place in the shoe's sequence: acknowledged once committed


def test_an_uncarded_player_is_rated_as_an_anonymous_player_once_a_supervisor_approves(
    table: tuple[Table, Checked],
) -> None:
    from controller.game.seats import ANONYMOUS_PREFIX
    from controller.table.loop import RateEntry
    from firmware_protocol.spots import CardIn

    t, checker = table
    t.device.send(CardIn(2, 0x0004A1B2C3D4E777), 0.0)  # a carded player at seat 2
    t.loop.handle(WireBytes(t.device.poll(0.0), 0.0, device="reader"))
    t.loop.flush()
    t.loop.handle(RateEntry(2))  # carded: the card rates them
    t.loop.handle(RateEntry(12))  # no such seat
    assert t.loop.approvals.rates_refused == 2 and t.records("approval_asked") == []
    t.loop.handle(RateEntry(3))
    t.loop.flush()
    assert t.records("approval_asked") == [{"shoe": 1, "coup": 1, "action": "rate_uncarded", "dealer": None,
                                            "seat": 3}]  # fmt: skip
    money = t.loop.view().money
    assert money is not None and money.approval is not None and money.approval.text == "RATE SEAT 3"
    assert [b["seat"] for b in t.records("player_in")] == [2]  # nothing yet
    t.badge(SUP, True)
    enter_pin(t.loop, checker, PIN)
    [approval] = t.records("approval")
    assert (approval["action"], approval["seat"], approval["approver"]) == ("rate_uncarded", 3, "S1")
    rated = [b for b in t.records("player_in") if b["seat"] == 3]
    assert len(rated) == 1 and rated[0]["player_ref"].startswith(ANONYMOUS_PREFIX)
    assert t.loop.state.seats is not None and 3 in t.loop.state.seats.players()  # a visit: rated from now on


# -- NEW SHOE: a void by another button, and the commission boxes closed uncollected --------------------------


@pytest.fixture
def box_table(tmp_path: Path, pin_hash: str) -> Iterator[tuple[Table, Checked]]:
    """A table whose Banker commission goes into the seats' boxes (collected at the shoe's end)."""
    from tests.game.money import table_rules

    with listed_table(tmp_path, pin_hash, table_rules()) as made:
        yield made


def starts(t: Table) -> list[dict[str, object]]:
    return [b for b in t.records("shoe") if b["event"] == "start"]


def new_shoe(loop: TableLoop) -> None:
    loop.handle(PanelPress(ButtonAction.NEW_SHOE))
    loop.flush()


def banker_wins_seat_1(t: Table) -> None:
    """Seat 1 wins $100 on Banker: $5 commission into its box."""
    from controller.game.table import DeclarePressed
    from controller.game.wagers import Spot, SpotSeen
    from tests.game.money import BANKER_NATURAL, Chips

    t.loop._apply(SpotSeen(1, Spot.BANKER, Chips()(2500, 2500, 2500, 2500)), {"kind": "spot"}, None, None)
    deal(t.loop, *BANKER_NATURAL)
    t.loop._apply(DeclarePressed(), input_body(DeclarePressed()), None, None)
    t.loop.flush()


def test_new_shoe_with_a_coup_in_progress_asks_as_void_does(table: tuple[Table, Checked]) -> None:
    """NEW SHOE voids the coup in progress: it is no way round the void's supervisor."""
    t, checker = table
    t.badge(D1, True)
    new_shoe(t.loop)  # the first shoe: nothing to void, no box: it starts
    assert len(starts(t)) == 1
    deal(t.loop, "9H", "KD")
    new_shoe(t.loop)
    assert coups(t) == [] and len(starts(t)) == 1  # asked, nothing done
    assert t.records("approval_asked") == [
        {"shoe": 1, "coup": 1, "action": "new_shoe", "dealer": "D1", "uncollected_cents": 0}
    ]
    money = t.loop.view().money
    assert money is not None and money.approval is not None and money.approval.text == "NEW SHOE: VOID COUP"
    t.badge(SUP, True)
    enter_pin(t.loop, checker, PIN)
    assert [b["action"] for b in t.records("approval")] == ["new_shoe"]
    [voided] = coups(t)
    assert voided["void"] is True and voided["cards"] == ["9H", "KD"]
    assert [s["shoe"] for s in starts(t)] == [1, 2]
    assert t.loop.state.shoe_number == 2 and t.loop.view().money.approval is None  # type: ignore[union-attr]


def test_new_shoe_with_a_box_owing_asks_and_closes_it_uncollected_once_approved(
    box_table: tuple[Table, Checked],
) -> None:
    t, checker = box_table
    t.badge(D1, True)
    new_shoe(t.loop)
    banker_wins_seat_1(t)
    assert t.loop.state.uncollected_cents == 500
    new_shoe(t.loop)
    [asked] = t.records("approval_asked")
    assert (asked["action"], asked["uncollected_cents"]) == ("new_shoe", 500)
    assert t.records("commission") == [] and len(starts(t)) == 1
    money = t.loop.view().money
    assert money is not None and money.approval is not None and money.approval.text == "NEW SHOE: $5 UNCOLLECTED"
    assert Alarm.SUPERVISOR_CALLED in t.loop.view().alarms
    t.badge(SUP, True)
    enter_pin(t.loop, checker, PIN)
    [box] = t.records("commission")
    assert (box["seat"], box["owed"], box["collected"], box["uncollected"]) == (1, 500, 0, 500)
    assert [s["shoe"] for s in starts(t)] == [1, 2]
    inputs = [b["kind"] for _id, b in t.journal.inputs()]
    assert inputs.count("new_shoe") == 2  # the approved press journaled once, as an unapproved one is


def test_chips_on_a_box_not_asked_for_are_no_collection_and_new_shoe_again_withdraws(
    box_table: tuple[Table, Checked],
) -> None:
    from controller.game.wagers import Spot, SpotSeen
    from tests.game.money import Chips

    t, _checker = box_table
    new_shoe(t.loop)
    banker_wins_seat_1(t)
    new_shoe(t.loop)  # asked: $5 owing
    assert t.loop.approvals.desk.pending is not None
    fee = Chips(0xE005_0000_0000_0000)(500)
    for chips in (fee, Chips(0xE006_0000_0000_0000)()):  # the box paid on its spot, and taken
        t.loop._apply(SpotSeen(1, Spot.COMMISSION, chips), {"kind": "spot"}, None, None)
    t.loop.flush()
    # The shoe has not ended, so the box was not asked for: the chips on its spot are no collection.
    assert t.loop.approvals.desk.pending is not None
    new_shoe(t.loop)  # pressed again: withdrawn
    assert t.records("approval_refused")[-1]["why"] == "withdrawn"


def test_a_box_collected_while_the_new_shoe_waits_lets_the_request_lapse(box_table: tuple[Table, Checked]) -> None:
    from controller.game.shoe import ShoePhase
    from controller.game.table import CutCardOut, DeclarePressed
    from controller.game.wagers import Spot, SpotSeen
    from tests.game.money import PLAYER_NATURAL, Chips

    t, _checker = box_table
    new_shoe(t.loop)
    t.loop._apply(CutCardOut(), input_body(CutCardOut()), None, None)  # the last coups of the shoe
    banker_wins_seat_1(t)
    deal(t.loop, *PLAYER_NATURAL)  # the one more coup after the cut card's
    t.loop._apply(DeclarePressed(), input_body(DeclarePressed()), None, None)
    t.loop.flush()
    assert t.loop.state.shoe.phase is ShoePhase.CLOSED  # the shoe ended: the box is asked for (COLLECT)
    new_shoe(t.loop)
    assert t.loop.approvals.desk.pending is not None
    chips = Chips(0xE007_0000_0000_0000)
    t.loop._apply(SpotSeen(1, Spot.COMMISSION, chips(500)), {"kind": "spot"}, None, None)
    t.loop._apply(SpotSeen(1, Spot.COMMISSION, chips()), {"kind": "spot"}, None, None)
    t.loop.flush()
    assert t.loop.state.uncollected_cents == 0
    assert t.loop.approvals.desk.pending is None  # nothing left to approve: lapsed, no record
    assert Alarm.SUPERVISOR_CALLED not in t.loop.view().alarms
    new_shoe(t.loop)  # and NEW SHOE now starts the shoe
    [box] = t.records("commission")
    assert (box["owed"], box["collected"], box["uncollected"]) == (500, 500, 0)
    assert [s["shoe"] for s in starts(t)] == [1, 2]


@pytest.mark.parametrize(("approve", "asks"), [({"void"}, False), ({"close_box"}, True), (set(), False)])
def test_what_the_table_is_configured_to_ask_for(tmp_path: Path, pin_hash: str, approve: set[str], asks: bool) -> None:
    from controller.game.approvals import Approvable
    from tests.game.money import table_rules

    asked = frozenset(Approvable(a) for a in approve)
    with listed_table(tmp_path, pin_hash, table_rules(), approve=asked) as (t, _checker):
        new_shoe(t.loop)
        banker_wins_seat_1(t)
        new_shoe(t.loop)  # a box owes $5
        assert (t.loop.approvals.desk.pending is not None) is asks
        assert len(starts(t)) == (1 if asks else 2)


# -- an unreadable coup card keyed: the misread's correction ------------------------------------------------


def test_an_unreadable_card_keyed_waits_for_a_supervisor_and_is_placed_once_approved(
    table: tuple[Table, Checked], tmp_path: Path
) -> None:
    from controller.game.table import Due, UnreadableCard
    from controller.table.loop import KeyEntry

    t, checker = table
    t.badge(D1, True)
    deal(t.loop, "9H", "KD")
    t.loop.handle(KeyEntry("5S"))  # nothing is halted: refused, one line and a count
    assert t.loop.approvals.keys_refused == 1 and t.records("approval_asked") == []
    t.loop._apply(UnreadableCard(), input_body(UnreadableCard()), None, None)
    t.loop.flush()
    t.loop.handle(KeyEntry("4C"))
    t.loop.handle(KeyEntry("5S"))  # keyed afresh: the first withdrawn
    t.loop.flush()
    asked = t.records("approval_asked")
    assert [(b["action"], b["card"]) for b in asked] == [("key_card", "4C"), ("key_card", "5S")]
    assert [(b["why"], b["staff_id"]) for b in t.records("approval_refused")] == [("withdrawn", "D1")]
    money = t.loop.view().money
    assert money is not None and money.approval is not None and money.approval.text == "KEY CARD 5♠"
    t.badge(D1, False)
    t.badge(D1, True)  # the dealer's own badge back: no news, and a dealer may not approve
    assert t.loop.state.view().player == (Card.parse("9H"),)  # nothing placed yet
    t.badge(SUP, True)
    enter_pin(t.loop, checker, PIN)
    [approval] = t.records("approval")
    assert (approval["action"], approval["card"], approval["approver"]) == ("key_card", "5S", "S1")
    view = t.loop.state.view()
    assert view.player == (Card.parse("9H"), Card.parse("5S")) and view.due is Due.DEAL  # Banker's second
    assert Alarm.UNREADABLE not in t.loop.view().alarms
    [keyed] = [b for _id, b in t.journal.inputs() if b["kind"] == "card_keyed"]
    assert keyed == {"kind": "card_keyed", "card": "5S", "source": "panel"}
    # A restart replays the keyed card as any card: the coup stands where it was.
    t.journal.close()
    loop, journal, _checker = open_table(tmp_path)
    try:
        assert loop.replay() > 0
        assert loop.state.view().player == (Card.parse("9H"), Card.parse("5S")) and loop.state.due is Due.DEAL
    finally:
        journal.close()


def test_a_void_held_while_a_card_keyed_waits_withdraws_it_and_asks(table: tuple[Table, Checked]) -> None:
    from controller.game.table import UnreadableCard
    from controller.table.loop import KeyEntry

    t, _checker = table
    deal(t.loop, "9H")
    t.loop._apply(UnreadableCard(), input_body(UnreadableCard()), None, None)
    t.loop.handle(KeyEntry("5S"))
    t.loop.flush()
    assert t.loop.approvals.desk.pending is not None
    t.loop.handle(KeyEntry("5S"))  # the same card again: it waits already (no withdrawal, no count)
    assert t.loop.approvals.keys_refused == 0 and t.records("approval_refused") == []
    hold_void(t.loop)  # the void asks instead: the card keyed is withdrawn (a pending approval is no way round)
    assert [b["action"] for b in t.records("approval_asked")] == ["key_card", "void"]
    assert [(b["action"], b["why"]) for b in t.records("approval_refused")] == [("key_card", "withdrawn")]
    assert coups(t) == []
    t.loop.approvals.actions = frozenset()  # the dealer voids alone now
    hold_void(t.loop)  # VOID again: its request withdrawn, and (asked for nothing now) no void either
    hold_void(t.loop)
    assert t.loop.approvals.desk.pending is None and coups(t)[0]["void"] is True


def test_every_step_and_every_request_refused_is_in_the_tables_metrics(tmp_path: Path, pin_hash: str) -> None:
    from controller.metrics import TableMetrics

    metrics = TableMetrics()
    with listed_table(tmp_path, pin_hash, metrics=metrics) as (t, checker):
        t.badge(D1, True)
        t.loop.handle(PinEntry(PIN))  # none due
        deal(t.loop, "9H", "KD")
        hold_void(t.loop)
        t.badge(D1, False)
        t.badge(SUP, True)
        enter_pin(t.loop, checker, OTHER_PIN)
        enter_pin(t.loop, checker, PIN)
    text = metrics.exposition()
    for action, outcome, n in (("void", "asked", 1), ("void", "wrong_pin", 1), ("void", "approved", 1)):
        assert f'shoe_approval_steps_total{{action="{action}",outcome="{outcome}"}} {n}.0' in text, text
    assert 'shoe_approval_requests_refused_total{what="pin_none_due"} 1.0' in text
    assert 'shoe_approval_requests_refused_total{what="key"} 0.0' in text  # at 0 from the start


def test_what_the_table_refuses_of_the_dealer_screen_is_told_on_the_money_view(table: tuple[Table, Checked]) -> None:
    from controller.table.loop import KeyEntry, RateEntry

    t, _checker = table
    assert t.loop.view().money is not None and t.loop.view().money.refusals == 0  # type: ignore[union-attr]
    t.loop.handle(KeyEntry("5S"))  # nothing halted
    money = t.loop.view().money
    assert money is not None and money.refusals == 1
    assert money.refusal == "CARD REFUSED: NO CARD TO KEY"
    t.loop.handle(RateEntry(12))
    t.loop.handle(PinEntry(PIN))
    money = t.loop.view().money
    assert money is not None and (money.refusals, money.refusal) == (3, "PIN REFUSED: NO PIN DUE")
    assert money.to_dict()["refusals"] == 3  # on the money line to the dealer screen
