"""Journals in which every record kind the table writes happens, built the same way every time (a fixed
wall clock, fixed inputs): every kind but the money's and the players' over a table without a reader, every
money kind and reader input over a table with one, the players at the seats (version 4) over one, the cash and
the staff at the table, and the chip tray (version 4).
``tests/test_record_schemas.py`` checks them against the schemas; ``tests/test_record_bytes.py`` pins their
bytes (bodies, hashes, the published records)."""

from __future__ import annotations

from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from controller.game.cards import Card
from controller.game.cash import BuyIn, Tender
from controller.game.chips import SpotChips
from controller.game.edges import EdgeWatch
from controller.game.records import InputKind, input_body, record_body
from controller.game.rules import SUPER6
from controller.game.seats import SeatCard
from controller.game.staff import Roster
from controller.game.table import (
    CardDrawn,
    DeclarePressed,
    LineNoise,
    NewShoePressed,
    ShoeRebooted,
    TableInput,
    TableState,
    UnreadableCard,
    VoidPressed,
)
from controller.game.tray import TrayLinkChanged
from controller.game.wagers import ReaderLinkChanged, Spot, SpotSeen, SpotsSnapshot
from controller.journal import Journal
from controller.table.loop import (
    BuyInEntry,
    LoopConfig,
    PanelPress,
    PinVerdict,
    RateEntry,
    ShoePort,
    StaffListIn,
    TableLoop,
)
from controller.table.panel import ButtonAction
from controller.table.staff_list import StaffListKeeper
from controller.table.wire import AsciiWire
from floor_protocol.staff import StaffEntry, StaffList
from tests.game.money import Chips, cards, every_money_kind, money, table_rules
from tests.game.test_records import EVERY_INPUT
from tests.game.tray_coups import tray_rules, tray_shoe

WALL = "2026-11-30T12:00:00+00:00"


def every_kind_journal(path: Path) -> Journal:
    """A journal (open: the caller closes it) with every record kind but the money's."""
    journal = Journal.open(path)
    loop = TableLoop(
        TableState(),
        journal,
        [ShoePort(AsciiWire(), lambda data: None)],
        config=LoopConfig(
            ruleset=SUPER6,  # shoe start records carry it
            edges=EdgeWatch(-1.0, SUPER6, 8),  # every wager flagged at the first betting time ...
            wall=lambda: WALL,
        ),
    )
    for event in [*EVERY_INPUT, NewShoePressed()]:
        facts = {"old_session": 1, "new_session": 2} if isinstance(event, ShoeRebooted) else {"seq": 3}
        loop._apply(event, input_body(event, **facts), None, None)
    for number, token in enumerate(["2S", "3S", "4S", "9H", "KD", "KS", "QS"], start=1):  # burn, a natural
        card = CardDrawn(Card.parse(token))
        loop._apply(card, input_body(card, seq=number), 1, number)
    coup: list[TableInput] = [
        DeclarePressed(),
        CardDrawn(Card.parse("AS")),
        CardDrawn(Card.parse("AH")),
        UnreadableCard(),
    ]
    for event in coup:
        loop._apply(event, input_body(event), None, None)
    loop._apply(VoidPressed(), input_body(VoidPressed(), source="panel"), None, None)
    loop._apply(LineNoise(True), input_body(LineNoise(True), detail="flood"), None, None)
    for body in [
        record_body(InputKind.HELLO, firmware_version="1", serial_number="S", protocol_version=1, session_id=5),
        record_body(InputKind.STATUS, flags=["paper_low"]),
        record_body(InputKind.JOURNAL_FAULT, event="raised", alarm="journal_full", detail="full", fault="full"),
        record_body(InputKind.NOISE, rejected=40, bytes=4096, reasons={"bad_crc": 40}, seconds=10.0),
        record_body(InputKind.MESSAGE, message="reset"),
    ]:
        loop._apply(None, body, None, None)
    loop._apply(NewShoePressed(), input_body(NewShoePressed(), source="panel"), None, None)  # ... cleared
    loop.flush()
    journal.note({"note": "journal_restored", "reason": "test", "head": [1, "0" * 64]}, ts=WALL)
    return journal


def every_money_journal(path: Path) -> Journal:
    """A journal (open: the caller closes it) with every money kind and every reader input."""
    journal = Journal.open(path)
    loop = TableLoop(
        TableState(table_rules(money(leave_after_coups=1))),
        journal,
        [ShoePort(AsciiWire(), lambda data: None)],
        config=LoopConfig(wall=lambda: WALL),
    )
    for event in [*every_money_kind(), ReaderLinkChanged(up=False), SpotsSnapshot(())]:
        loop._apply(event, input_body(event), None, None)
    seen = SpotSeen(2, Spot.PLAYER, SpotChips())
    loop._apply(seen, input_body(seen, seq=9, uids=["E004000000000001"]), None, None)
    snap = SpotsSnapshot(())
    loop._apply(snap, input_body(snap, seq=10, snapshot=4, reported=0, uids={"2:player": []}), None, None)
    for body in [
        record_body(InputKind.READER_HELLO, firmware_version="1", serial_number="R", protocol_version=1, session_id=9),
        record_body(InputKind.READER_STATUS, flags=["antenna_fault"]),
        # the facts controller/table/spot_wire.py gives them
        record_body(
            InputKind.READER_HELLO,
            seq=1,
            firmware_version="2",
            serial_number="R2",
            protocol_version=1,
            session_id=3,
            seats=[1, 2],
            spots=["banker", "player", "commission"],
        ),
        record_body(InputKind.READER_MESSAGE, seq=4, message="resend"),
        record_body(InputKind.SNAPSHOT_REFUSED, snapshot=7, detail="SNAPSHOT_END counts 3 spots, 2 were received"),
    ]:
        loop._apply(None, body, None, None)
    loop.flush()
    return journal


#: Three players' cards (a 4-byte, a 7-byte and an 8-byte UID, padded to 8 bytes).
CARD_A, CARD_B, CARD_C = "00000000A1B2C3D4", "0004A1B2C3D4E5F6", "E004015012345678"


def every_player_journal(path: Path) -> Journal:
    """A journal (open: the caller closes it) with every player record kind and reason and both card inputs:
    seat 3's player bets and leaves (card out); seat 6's card is left in its reader (no wager at one lock:
    seat_empty); seat 7's card is replaced by another (card_replaced); the dealer's badge comes and goes."""
    journal = Journal.open(path)
    loop = TableLoop(
        TableState(table_rules(money(leave_after_coups=1))),
        journal,
        [ShoePort(AsciiWire(), lambda data: None)],
        config=LoopConfig(wall=lambda: WALL),
    )
    chips = Chips()
    events: list[TableInput] = [
        NewShoePressed(),
        SeatCard(3, CARD_A, True),
        SeatCard(6, CARD_B, True),
        SeatCard(7, CARD_C, True),
        SpotSeen(3, Spot.PLAYER, chips(2500)),
        SpotSeen(7, Spot.BANKER, chips(2500)),
        *cards(("9H", "KD", "KS", "QS")),  # the lock: seat 6 has no wager
        DeclarePressed(),
        SeatCard(7, CARD_B.replace("A1", "B1"), True),
        SeatCard(3, CARD_A, False),
    ]
    for number, event in enumerate(events, start=1):
        facts = {"seq": number} if isinstance(event, SeatCard) else {}
        loop._apply(event, input_body(event, **facts), None, None)
    for present in (True, False):
        loop._apply(None, record_body(InputKind.DEALER_CARD, seq=20, uid=CARD_C, present=present), None, None)
    loop.flush()
    return journal


def every_cash_journal(path: Path) -> Journal:
    """A journal (open: the caller closes it) with the cash at the table (version 4): a buy-in of each tender,
    carded and not, between coups and in a coup, over a table with a bet-spot reader."""
    journal = Journal.open(path)
    loop = TableLoop(
        TableState(table_rules(money())),
        journal,
        [ShoePort(AsciiWire(), lambda data: None)],
        config=LoopConfig(wall=lambda: WALL),
    )
    events: list[TableInput | BuyIn] = [
        NewShoePressed(),
        BuyIn(3, 500_000, Tender.CASH, "E0040150C0001001"),
        BuyIn(7, 2_500, Tender.CHIPS, None),
        *(CardDrawn(Card.parse(t)) for t in ["2S", "3S"]),  # no burn: coup 1's first two cards
        BuyIn(1, 100_000, Tender.MARKER, None),
        BuyIn(3, 300_001, Tender.CASH, "E0040150C0001001"),
    ]
    for event in events:
        if isinstance(event, BuyIn):
            loop.handle(BuyInEntry(event))  # as the feed hands it to the loop
        else:
            loop._apply(event, input_body(event), None, None)
    loop.flush()
    return journal


#: The staff list of :func:`every_staff_journal`: two dealers, a supervisor and a pit manager (who does not deal).
STAFF_AS_OF = "2026-11-30T11:00:00.000Z"
BADGE_D1, BADGE_D2, BADGE_SUP, BADGE_PIT = "0004A1B2C3D4E501", "0004A1B2C3D4E502", "0004A1B2C3D4E503", "04A1B2C3D4E504"
BADGE_UNKNOWN = "0004A1B2C3D4E5FF"


def every_staff_journal(path: Path) -> Journal:
    """A journal (open: the caller closes it) with the staff at the table (version 4): a dealer signed in, swapped
    for another mid-coup, a badge not on the list and a pit manager's badge refused, the dealer signed out."""
    journal = Journal.open(path)
    loop = TableLoop(
        TableState(table_rules(money())),
        journal,
        [ShoePort(AsciiWire(), lambda data: None)],
        config=LoopConfig(wall=lambda: WALL),
    )
    loop.staff.roster = Roster.of(
        [
            ("D1", "dealer", BADGE_D1),
            ("D2", "dealer", BADGE_D2),
            ("S1", "supervisor", BADGE_SUP),
            ("P1", "pit_manager", BADGE_PIT),
        ],
        STAFF_AS_OF,
    )
    seq = iter(range(100, 200))

    def badge(uid: str, present: bool) -> None:
        notices = loop.badge(uid, present)
        body = record_body(InputKind.DEALER_CARD, seq=next(seq), uid=uid, present=present)
        loop._apply(None, body, None, None, notices=notices)

    loop._apply(NewShoePressed(), input_body(NewShoePressed()), None, None)
    badge(BADGE_D1, True)
    for event in cards(("9H", "KD")):
        loop._apply(event, input_body(event), None, None)
    badge(BADGE_D1, False)
    badge(BADGE_D2, True)  # the swap, mid-coup: the coup goes on
    for event in cards(("KS", "QS")):
        loop._apply(event, input_body(event), None, None)
    loop._apply(DeclarePressed(), input_body(DeclarePressed()), None, None)
    badge(BADGE_UNKNOWN, True)
    badge(BADGE_PIT.rjust(16, "0"), True)
    badge(BADGE_SUP, True)  # a supervisor deals: D2 out (replaced)
    badge(BADGE_SUP, False)
    loop.flush()
    return journal


#: The staff list of :func:`every_approval_journal`, signed by a fixed floor key (the same bytes every time): the
#: PIN hashes are placeholders of the right shape, as the verdicts are handed to the loop (the real check is
#: tests/loop/test_approvals.py's).
APPROVAL_FLOOR_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
PIN_HASH = "$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHRzb21lc2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaA"
BADGE_SUP2 = "0004A1B2C3D4E506"


def approval_staff_list() -> StaffList:
    entries = (
        StaffEntry(id="D1", role="dealer", badge=BADGE_D1, pin_hash=PIN_HASH),
        StaffEntry(id="D2", role="dealer", badge=BADGE_D2, pin_hash=PIN_HASH),
        StaffEntry(id="S1", role="supervisor", badge=BADGE_SUP, pin_hash=PIN_HASH),
        StaffEntry(id="S2", role="supervisor", badge=BADGE_SUP2, pin_hash=PIN_HASH),
        StaffEntry(id="P1", role="pit_manager", badge=BADGE_PIT, pin_hash=PIN_HASH),
    )
    return StaffList.signed(APPROVAL_FLOOR_KEY, "casino", STAFF_AS_OF, entries)


def every_approval_journal(path: Path) -> Journal:
    """A journal (open: the caller closes it) with every step of a supervisor's approval (version 4): a void asked,
    a dealer's and an unknown badge refused, a supervisor's three wrong PINs (locked out), refused again, a pit
    manager's right PIN (approved: the coup voided); a void asked and withdrawn; a supervisor dealing who cannot
    approve their own void; an uncarded player rated (an anonymous player's visit at seat 3)."""
    journal = Journal.open(path)
    keeper = StaffListKeeper(None, APPROVAL_FLOOR_KEY.public_key(), "casino")
    loop = TableLoop(
        TableState(table_rules(money())),
        journal,
        [ShoePort(AsciiWire(), lambda data: None)],
        config=LoopConfig(wall=lambda: WALL, staff=keeper),
    )
    loop.handle(StaffListIn(approval_staff_list()))
    seq = iter(range(100, 200))

    def badge(uid: str, present: bool) -> None:
        notices = loop.badge(uid, present)
        body = record_body(InputKind.DEALER_CARD, seq=next(seq), uid=uid, present=present)
        loop._apply(None, body, None, None, notices=notices)

    def deal(*tokens: str) -> None:
        for event in cards(tokens):
            loop._apply(event, input_body(event), None, None)

    loop._apply(NewShoePressed(), input_body(NewShoePressed()), None, None)
    badge(BADGE_D1, True)
    deal("9H", "KD")
    loop.handle(PanelPress(ButtonAction.VOID))  # asked
    badge(BADGE_D2, True)  # a dealer: not_supervisor
    badge(BADGE_UNKNOWN, True)  # unknown_badge
    badge(BADGE_SUP, True)  # the PIN is due
    for _ in range(3):
        loop.handle(PinVerdict("S1", False))  # wrong_pin, wrong_pin, locked_out
    badge(BADGE_SUP, True)  # locked
    badge(BADGE_PIT.rjust(16, "0"), True)  # a pit manager may approve
    loop.handle(PinVerdict("P1", True))  # approval, then the void
    deal("2S", "3D")
    loop.handle(PanelPress(ButtonAction.VOID))  # asked ...
    loop.handle(PanelPress(ButtonAction.VOID))  # ... and withdrawn
    badge(BADGE_SUP2, True)  # no approval pending: a supervisor signs in to deal (D1 replaced)
    loop.handle(PanelPress(ButtonAction.VOID))  # asked by S2
    badge(BADGE_SUP2, True)  # own_correction
    loop.handle(PanelPress(ButtonAction.VOID))  # withdrawn
    loop.handle(RateEntry(3))  # the uncarded player at seat 3 rated ...
    badge(BADGE_PIT.rjust(16, "0"), True)
    loop.handle(PinVerdict("P1", True))  # ... approved: an anonymous player's visit at seat 3
    loop.flush()
    return journal


def every_tray_journal(path: Path) -> Journal:
    """A journal (open: the caller closes it) with the chip tray's record kinds and inputs (version 4): a shoe of
    tests/game/tray_coups.py (the tray anchored, a coup paid from it, a chip palmed and the variance recounted
    and confirmed), the tray's link down and up, its HELLO, STATUS and another message, and the next shoe's
    start carrying the tray's book."""
    journal = Journal.open(path)
    loop = TableLoop(
        TableState(tray_rules()),
        journal,
        [ShoePort(AsciiWire(), lambda data: None)],
        config=LoopConfig(wall=lambda: WALL),
    )
    events: list[TableInput] = [*tray_shoe(), TrayLinkChanged(up=False), TrayLinkChanged(up=True), NewShoePressed()]
    for event in events:
        loop._apply(event, input_body(event), None, None)
    for body in [
        record_body(
            InputKind.TRAY_HELLO, firmware_version="1", serial_number="T1", protocol_version=1, session_id=7, tubes=8
        ),
        record_body(InputKind.TRAY_STATUS, flags=["lid_open"]),
        record_body(InputKind.TRAY_MESSAGE, seq=3, message="count_request"),
    ]:
        loop._apply(None, body, None, None)
    loop.flush()
    return journal
