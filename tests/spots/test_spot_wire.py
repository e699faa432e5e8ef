"""controller/table/spot_wire.py over bytes: a reader's frames in, the wager book's inputs and the ACKs out."""

from __future__ import annotations

import struct
import zlib

import pytest

from controller.game.chips import ChipRange, ChipRegistry, ChipStatus
from controller.game.seats import SeatCard
from controller.game.table import Due
from controller.game.wagers import ReaderLinkChanged, Spot, SpotSeen, SpotsSnapshot
from controller.table.spot_wire import SPOT_OF_CODE, SpotInput, SpotRecord, SpotWire, SpotWireEvent
from controller.table.wire import BinaryWire, WireDuplicate, WireInput, WireLink, WireNoise, WireReboot
from firmware_protocol import spot_vectors
from firmware_protocol.binary import FrameReceived, cobs_encode, decode_frame, encode
from firmware_protocol.messages import Ack, CardRead, Resend
from firmware_protocol.session import CommandReceived, ControllerSession, ShoeSession
from firmware_protocol.spots import (
    DEALER_POSITION,
    READER,
    CardIn,
    CardOut,
    ReaderFlags,
    ReaderStatus,
    SnapshotBegin,
    SnapshotEnd,
    SpotCode,
    SpotReport,
    Window,
    WindowState,
)

# 0x...1000-0x...10FF are $25 chips in play; 0x...2000 is a retired $100 chip.
REGISTRY = ChipRegistry(
    [
        ChipRange(0xE004000000001000, 0xE0040000000010FF, 2500, ChipStatus.IN_PLAY),
        ChipRange(0xE004000000002000, 0xE004000000002000, 10000, ChipStatus.RETIRED),
    ]
)
C1, C2, C3 = 0xE004000000001001, 0xE004000000001002, 0xE004000000001003
RETIRED, STRANGER = 0xE004000000002000, 0x00000000A1B2C3D4


def reader(session_id: int = 0x5EA7B0A7) -> ShoeSession:
    return ShoeSession(session_id, dialect=READER, firmware_version="2.0.1", serial_number="SR-0042")


def connected(wire: SpotWire, dev: ShoeSession, now: float = 0.0) -> list[SpotWireEvent]:
    """Start ``dev`` and hand its HELLO and heartbeat to ``wire``, acknowledging what needs it."""
    dev.start(now)
    events = wire.receive(dev.poll(now), now)
    commit(wire, dev, events, now)
    return events


def commit(wire: SpotWire, dev: ShoeSession, events: list[SpotWireEvent], now: float) -> None:
    for ev in events:
        if isinstance(ev, SpotInput | SpotRecord) and ev.number is not None:
            dev.receive(wire.acknowledge(ev.number, ev.session), now)


def send(wire: SpotWire, dev: ShoeSession, *messages: object, now: float = 0.1) -> list[SpotWireEvent]:
    for message in messages:
        dev.send(message, now)
    events = wire.receive(dev.poll(now), now)
    commit(wire, dev, events, now)
    return events


def inputs(events: list[SpotWireEvent]) -> list[object]:
    return [e.table_input for e in events if isinstance(e, SpotInput)]


def records(events: list[SpotWireEvent], kind: str) -> list[SpotRecord]:
    return [e for e in events if isinstance(e, SpotRecord) and e.kind == kind]


def test_spot_codes_map_onto_every_table_spot() -> None:
    assert set(SPOT_OF_CODE.values()) == set(Spot)
    assert all(SPOT_OF_CODE[c].name == c.name for c in SpotCode)


def test_hello_and_heartbeat_bring_the_link_up_and_the_hello_is_journaled() -> None:
    wire, dev = SpotWire(REGISTRY), reader()
    events = connected(wire, dev)
    assert inputs(events) == [ReaderLinkChanged(True)]
    [hello] = records(events, "reader_hello")
    assert hello.number == 1 and hello.session == 0x5EA7B0A7
    assert hello.facts["serial_number"] == "SR-0042"
    assert hello.facts["seats"] == list(range(1, 15)) and "commission" in hello.facts["spots"]
    assert dev.unacked == 0  # the ACK went back: the reader released its HELLO
    assert wire.hello is not None and wire.hello.session_id == 0x5EA7B0A7


def test_a_spot_change_becomes_a_spot_seen_with_its_chips_resolved() -> None:
    wire, dev = SpotWire(REGISTRY), reader()
    connected(wire, dev)
    events = send(wire, dev, SpotReport(3, SpotCode.BANKER, (C1, C2, RETIRED, STRANGER)))
    [seen] = inputs(events)
    assert isinstance(seen, SpotSeen)
    assert (seen.seat, seen.spot) == (3, Spot.BANKER)
    assert seen.chips.cents == 5000
    assert [(c.uid, c.status) for c in seen.chips.foreign] == [
        ("E004000000002000", ChipStatus.RETIRED),
        ("00000000A1B2C3D4", ChipStatus.UNKNOWN),
    ]
    [event] = [e for e in events if isinstance(e, SpotInput)]
    assert event.number == 2 and event.facts["uids"][0] == "E004000000001001"
    assert dev.unacked == 0


def test_the_ack_waits_for_the_commit() -> None:
    wire, dev = SpotWire(REGISTRY), reader()
    connected(wire, dev)
    dev.send(SpotReport(1, SpotCode.TIE, (C1,)), 0.1)
    [event] = [e for e in wire.receive(dev.poll(0.1), 0.1) if isinstance(e, SpotInput)]
    assert dev.unacked == 1
    _events, out = wire.poll(0.2)
    dev.receive(out, 0.2)
    assert dev.unacked == 1  # nothing was committed: nothing acknowledged
    assert event.number is not None
    ack = decode_frame(wire.acknowledge(event.number, event.session), dialect=READER)
    assert isinstance(ack, FrameReceived) and ack.message == Ack(2)


def test_a_snapshot_is_assembled_between_its_begin_and_end() -> None:
    wire, dev = SpotWire(REGISTRY), reader()
    connected(wire, dev)
    events = send(
        wire,
        dev,
        SnapshotBegin(7),
        SpotReport(5, SpotCode.PLAYER, (C3,)),
        SpotReport(2, SpotCode.COMMISSION, (C1,)),
        SpotReport(2, SpotCode.BANKER, ()),
        SpotReport(2, SpotCode.BANKER_PAIR, (C2,)),
        SnapshotEnd(7, 4),
    )
    [snapshot] = inputs(events)
    assert snapshot == SpotsSnapshot(
        (
            (2, Spot.BANKER_PAIR, REGISTRY.resolve_all([C2])),
            (2, Spot.COMMISSION, REGISTRY.resolve_all([C1])),
            (5, Spot.PLAYER, REGISTRY.resolve_all([C3])),
        )
    )
    [event] = [e for e in events if isinstance(e, SpotInput)]
    assert event.number == 7  # the SNAPSHOT_END's: acknowledging it acknowledges the reports before it
    assert dev.unacked == 0
    assert (wire.snapshots, wire.snapshots_refused) == (1, 0)


@pytest.mark.parametrize(
    ("messages", "detail"),
    [
        ((SnapshotBegin(7), SpotReport(1, SpotCode.BANKER, (C1,)), SnapshotEnd(7, 2)), "counts 2 spots, 1 were"),
        ((SnapshotBegin(7), SpotReport(1, SpotCode.BANKER, (C1,)), SnapshotEnd(8, 1)), "begun as 7"),
        ((SnapshotEnd(7, 0),), "without its SNAPSHOT_BEGIN"),
        (
            (
                SnapshotBegin(7),
                SpotReport(1, SpotCode.BANKER, (C1,)),
                SpotReport(1, SpotCode.BANKER, (C2,)),
                SnapshotEnd(7, 2),
            ),
            "reported twice",
        ),
    ],
)
def test_a_snapshot_that_disagrees_with_its_end_is_refused_and_counted(
    messages: tuple[object, ...], detail: str
) -> None:
    wire, dev = SpotWire(REGISTRY), reader()
    connected(wire, dev)
    events = send(wire, dev, *messages)
    assert inputs(events) == []
    [refused] = records(events, "snapshot_refused")
    assert detail in refused.facts["detail"]
    assert wire.snapshots_refused == 1
    assert dev.unacked == 0  # refused, journaled and acknowledged: the reader's next snapshot corrects it


def test_a_begin_inside_a_snapshot_refuses_the_unfinished_one_and_starts_anew() -> None:
    wire, dev = SpotWire(REGISTRY), reader()
    connected(wire, dev)
    events = send(
        wire,
        dev,
        SnapshotBegin(1),
        SpotReport(1, SpotCode.BANKER, (C1,)),
        SnapshotBegin(2),
        SpotReport(4, SpotCode.TIE, (C2,)),
        SnapshotEnd(2, 1),
    )
    assert inputs(events) == [SpotsSnapshot(((4, Spot.TIE, REGISTRY.resolve_all([C2])),))]
    assert [r.facts["snapshot"] for r in records(events, "snapshot_refused")] == [1]


def test_a_resent_report_is_a_duplicate_never_a_second_input() -> None:
    wire, dev = SpotWire(REGISTRY), reader()
    connected(wire, dev)
    dev.send(SpotReport(3, SpotCode.TIE, (C1,)), 0.1)
    frames = dev.poll(0.1)
    first = wire.receive(frames, 0.1)
    again = wire.receive(frames, 0.2)
    assert len(inputs(first)) == 1
    assert inputs(again) == [] and any(isinstance(e, WireDuplicate) for e in again)


def test_status_is_a_record_with_the_flags_by_name() -> None:
    wire, dev = SpotWire(REGISTRY), reader()
    connected(wire, dev)
    events = send(wire, dev, ReaderStatus(ReaderFlags.ANTENNA_FAULT | ReaderFlags.TAMPER))
    [status] = records(events, "reader_status")
    assert status.facts["flags"] == ["antenna_fault", "tamper"]
    assert status.number == 2


def test_the_link_goes_down_after_three_silent_seconds() -> None:
    wire, dev = SpotWire(REGISTRY), reader()
    connected(wire, dev)
    events, _ = wire.poll(2.9)
    assert inputs(events) == []
    events, _ = wire.poll(3.0)
    assert inputs(events) == [ReaderLinkChanged(False)]
    events = wire.receive(dev.poll(3.5), 3.5)  # the heartbeat comes back
    assert inputs(events) == [ReaderLinkChanged(True)]


def test_a_reboot_mid_snapshot_drops_the_unfinished_snapshot() -> None:
    wire, dev = SpotWire(REGISTRY), reader(1)
    connected(wire, dev)
    send(wire, dev, SnapshotBegin(1), SpotReport(1, SpotCode.BANKER, (C1,)))
    dev2 = reader(2)
    events = connected(wire, dev2, 0.5)
    assert any(isinstance(e, WireReboot) for e in events)
    events = send(wire, dev2, SpotReport(4, SpotCode.TIE, (C2,)), SnapshotEnd(1, 1), now=0.6)
    assert inputs(events) == [SpotSeen(4, Spot.TIE, REGISTRY.resolve_all([C2]))]
    assert records(events, "snapshot_refused")[0].facts["detail"] == "SNAPSHOT_END without its SNAPSHOT_BEGIN"


def test_the_window_reaches_the_reader_and_nothing_else() -> None:
    wire, dev = SpotWire(REGISTRY), reader()
    connected(wire, dev)
    frame = wire.window(WindowState.LOCKED)
    assert dev.receive(frame, 0.2) == [CommandReceived(Window(WindowState.LOCKED))]
    assert wire.prompt(Due.DEAL) == b""
    with pytest.raises(ValueError, match="not a bet-spot reader command"):
        wire.session.command(Ack(1))


def test_a_shoe_on_the_reader_port_is_noise_never_a_link() -> None:
    wire = SpotWire(REGISTRY)
    shoe = ShoeSession(0x1234)
    shoe.start(0.0)
    shoe.send(CardRead(10, "H"), 0.0)
    events = wire.receive(shoe.poll(0.0), 0.0)
    events += wire.receive(shoe.poll(1.0), 1.0)
    assert events and all(isinstance(e, WireNoise) and e.reason == "unknown_type" for e in events)
    assert not wire.session.link_up and wire.noise.rejected_total == len(events)


def test_a_reader_on_the_shoe_port_is_noise_never_a_link() -> None:
    wire = BinaryWire(ControllerSession())
    dev = reader()
    dev.start(0.0)
    dev.send(SpotReport(1, SpotCode.BANKER, (C1,)), 0.0)
    events = wire.receive(dev.poll(0.0), 0.0) + wire.receive(dev.poll(1.0), 1.0)
    assert events and all(isinstance(e, WireNoise) and e.reason == "unknown_type" for e in events)
    assert not any(isinstance(e, WireInput | WireLink) for e in events)


def test_a_spot_wire_needs_the_reader_dialect() -> None:
    with pytest.raises(ValueError, match="reader's dialect"):
        SpotWire(REGISTRY, ControllerSession())


def test_an_unknown_reader_event_takes_its_number_and_the_next_comes_through() -> None:
    """A newer firmware's event type (0x18) with a good CRC: noise, but numbered, so what follows is delivered."""
    wire, dev = SpotWire(REGISTRY), reader()
    connected(wire, dev)

    head = struct.pack(">BBH", 1, 0x18, 2)
    unknown = cobs_encode(head + struct.pack(">I", zlib.crc32(head))) + b"\x00"
    report = encode(3, SpotReport(2, SpotCode.PLAYER, (C1,)), dialect=READER)
    events = wire.receive(unknown + report, 0.2)
    assert [e.reason for e in events if isinstance(e, WireNoise)] == ["unknown_type"]
    assert inputs(events) == [SpotSeen(2, Spot.PLAYER, REGISTRY.resolve_all([C1]))]


def test_the_worked_example_of_the_spec_is_what_the_wire_does() -> None:
    """docs/spots.md's example session, step by step: the reader's frames in, and exactly the table's frames
    of the example out (same bytes, same running seq)."""
    wire = SpotWire(REGISTRY)
    now = 0.0
    seen: list[object] = []
    for step in spot_vectors.EXAMPLE:
        now += 0.01
        message = step.frame.message
        if step.sender == "reader":
            if not step.lost:
                seen += inputs(wire.receive(step.frame.data, now))
            continue
        if isinstance(message, Ack):
            out = wire.acknowledge(message.up_to, wire.session.session_key)
        elif isinstance(message, Resend):
            _events, out = wire.poll(now)
        else:
            assert isinstance(message, Window)
            out = wire.window(message.state)
        assert out == step.frame.data, step.frame.name
    assert seen == [
        ReaderLinkChanged(True),
        SpotsSnapshot(((3, Spot.BANKER, REGISTRY.resolve_all([spot_vectors.UID_15693, spot_vectors.UID_14443])),)),
        SpotSeen(5, Spot.TIE, REGISTRY.resolve_all([0xE004015012340001])),
        SpotSeen(5, Spot.PLAYER, REGISTRY.resolve_all([0xE004015012340002])),
    ]


def test_a_card_at_a_seat_is_a_seat_input_and_a_badge_at_the_dealers_position_a_record_only() -> None:
    wire, dev = SpotWire(REGISTRY), reader()
    connected(wire, dev)
    events = send(wire, dev, CardIn(4, STRANGER), CardOut(4, STRANGER), CardIn(DEALER_POSITION, C1))
    assert inputs(events) == [SeatCard(4, "00000000A1B2C3D4", True), SeatCard(4, "00000000A1B2C3D4", False)]
    assert [e.number for e in events if isinstance(e, SpotInput)] == [2, 3]  # each journaled, then acknowledged
    [badge] = records(events, "dealer_card")
    assert badge.facts == {"seq": 4, "uid": "E004000000001001", "present": True} and badge.number == 4


def test_a_card_message_naming_no_position_is_noise_and_the_next_comes_through() -> None:
    wire, dev = SpotWire(REGISTRY), reader()
    connected(wire, dev)
    head = struct.pack(">BBHB", 1, 0x19, 2, 15) + struct.pack(">Q", STRANGER)  # CARD_IN at position 15
    bad = cobs_encode(head + struct.pack(">I", zlib.crc32(head))) + b"\x00"
    good = encode(3, CardIn(14, STRANGER), dialect=READER)
    events = wire.receive(bad + good, 0.2)
    assert [e.reason for e in events if isinstance(e, WireNoise)] == ["bad_payload"]
    assert inputs(events) == [SeatCard(14, "00000000A1B2C3D4", True)]
