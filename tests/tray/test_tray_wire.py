"""controller/table/tray_wire.py over bytes: the tray's frames (firmware_protocol.tray_vectors) in, the tray's
table inputs, its record-only facts and the ACKs and COUNT_REQUESTs out."""

from __future__ import annotations

import zlib

from controller.game.chips import ChipRange, ChipRegistry, ChipStatus
from controller.game.tray import TrayLinkChanged, TraySnapshot, TubeSeen
from controller.table.tray_wire import TrayCountOwed, TrayRecord, TrayWire, TrayWireEvent, TrayWireInput
from controller.table.wire import WireNoise
from firmware_protocol import spot_vectors, tray_vectors
from firmware_protocol.binary import FrameReceived, cobs_encode, decode_frame
from firmware_protocol.messages import Ack
from firmware_protocol.session import ShoeSession
from firmware_protocol.tray import (
    TRAY,
    CountRequest,
    TrayFlags,
    TrayHello,
    TraySnapshotBegin,
    TraySnapshotEnd,
    TrayStatus,
    TubeReport,
)

V = tray_vectors.FRAMES
# The vectors' $25 chips in play; the 32 chips of tube 6 retired $5 chips; UID_14443 unknown to the registry.
REGISTRY = ChipRegistry(
    [
        ChipRange(0xE004015025000000, 0xE0040150250000FF, 2500, ChipStatus.IN_PLAY),
        ChipRange(0xE004015012345600, 0xE0040150123456FF, 500, ChipStatus.RETIRED),
    ]
)


def inputs(events: list[TrayWireEvent]) -> list[object]:
    return [e.table_input for e in events if isinstance(e, TrayWireInput)]


def records(events: list[TrayWireEvent], kind: str) -> list[TrayRecord]:
    return [e for e in events if isinstance(e, TrayRecord) and e.kind == kind]


def owed(events: list[TrayWireEvent]) -> list[str]:
    return [e.detail for e in events if isinstance(e, TrayCountOwed)]


def test_every_tray_vector_through_the_codec() -> None:
    wire = TrayWire(REGISTRY)
    events: list[TrayWireEvent] = []
    for vector in V[:12]:  # the tray's frames, in their seq order (HELLO 1 ... STATUS 10, two heartbeats)
        events += wire.receive(vector.data, 0.0)
    hello = records(events, "tray_hello")
    assert [h.facts for h in hello] == [
        {
            "seq": 1,
            "firmware_version": "1.2.0",
            "serial_number": "CT-0007",
            "protocol_version": 1,
            "session_id": tray_vectors.SESSION,
            "tubes": 8,
        }
    ]
    assert wire.hello == V[0].message
    got = inputs(events)
    assert got[0] == TrayLinkChanged(True) and owed(events)[0] == "the link came up"
    seen, empty, snapshot, full = got[1:]
    assert isinstance(seen, TubeSeen) and seen.tube == 3
    assert [(c.uid, c.cents, c.status) for c in seen.chips.chips] == [
        ("E004015012345678", 500, ChipStatus.RETIRED),
        ("00000000A1B2C3D4", 0, ChipStatus.UNKNOWN),  # not in the registry: unknown, 0 cents, as on a spot
    ]
    assert empty == TubeSeen(3, REGISTRY.resolve_all([]))
    assert isinstance(snapshot, TraySnapshot) and [t for t, _ in snapshot.tubes] == [1]
    assert snapshot.tubes[0][1].cents == 3 * 2500
    assert isinstance(full, TubeSeen) and full.tube == 6 and len(full.chips.chips) == 32
    flags = [r.facts["flags"] for r in records(events, "tray_status")]
    assert flags == [["lid_open"], ["antenna_fault", "read_errors"], []]
    numbered = [e.number for e in events if isinstance(e, TrayWireInput | TrayRecord) and e.number is not None]
    assert numbered == [1, 2, 3, 6, 7, 8, 9, 10]  # the snapshot's TUBE frames go with its SNAPSHOT_END
    assert wire.snapshots == 1 and wire.snapshots_refused == 0
    assert not [e for e in events if isinstance(e, WireNoise)]


def test_acknowledge_and_count_request_are_the_trays_frames() -> None:
    wire = TrayWire(REGISTRY)
    events = wire.receive(V[0].data + V[1].data, 0.0)
    last = [e for e in events if isinstance(e, TrayWireInput | TrayRecord) and e.number is not None][-1]
    ack = decode_frame(wire.acknowledge(last.number or 0, last.session), dialect=TRAY)
    assert isinstance(ack, FrameReceived) and ack.message == Ack(2)
    request = decode_frame(wire.count_request(), dialect=TRAY)
    assert isinstance(request, FrameReceived) and request.message == CountRequest()


def device() -> ShoeSession:
    return ShoeSession(0x1234, dialect=TRAY, hello=lambda sid: TrayHello("1.0", "CT-1", 1, sid, 4))


def start(wire: TrayWire, dev: ShoeSession) -> None:
    dev.start(0.0)
    for ev in wire.receive(dev.poll(0.0), 0.0):
        if isinstance(ev, TrayWireInput | TrayRecord) and ev.number is not None:
            dev.receive(wire.acknowledge(ev.number, ev.session), 0.0)


def send(wire: TrayWire, dev: ShoeSession, *messages: object) -> list[TrayWireEvent]:
    for m in messages:
        dev.send(m, 0.1)
    return wire.receive(dev.poll(0.1), 0.1)


def test_snapshots_that_do_not_hold_together_are_refused_and_a_count_owed() -> None:
    wire, dev = TrayWire(REGISTRY), device()
    start(wire, dev)
    one = (0xE004015025000001,)
    cases = [
        (TraySnapshotBegin(1), TubeReport(1, one), TraySnapshotEnd(2, 1)),  # another number
        (TraySnapshotBegin(3), TubeReport(1, one), TraySnapshotEnd(3, 2)),  # another count
        (TraySnapshotBegin(4), TubeReport(1, one), TubeReport(1, one), TraySnapshotEnd(4, 2)),  # a tube twice
        (TraySnapshotBegin(5), TubeReport(4, one), TubeReport(2, one), TraySnapshotEnd(5, 2)),  # fine
        (TraySnapshotEnd(6, 0),),  # no SNAPSHOT_BEGIN
        (TraySnapshotBegin(7), TubeReport(4, one), TraySnapshotBegin(8), TraySnapshotEnd(8, 0)),  # begun twice
        (TraySnapshotBegin(9), TubeReport(5, one), TraySnapshotEnd(9, 1)),  # tube 5 of a 4-tube tray
    ]
    outcomes = []
    for messages in cases:
        events = send(wire, dev, *messages)
        refused = records(events, "snapshot_refused")
        outcomes.append((len(refused), [type(i).__name__ for i in inputs(events)], len(owed(events))))
    assert outcomes == [
        (1, [], 1),
        (1, [], 1),
        (1, [], 1),
        (0, ["TraySnapshot"], 0),
        (1, [], 1),
        (1, ["TraySnapshot"], 1),  # the first is refused, the second (empty) stands
        (1, [], 1),
    ]
    assert wire.snapshots_refused == 6 and wire.snapshots == 2


def test_a_tube_beyond_the_hellos_is_journaled_not_applied() -> None:
    wire, dev = TrayWire(REGISTRY), device()
    start(wire, dev)
    events = send(wire, dev, TubeReport(7, (0xE004015025000001,)))
    assert inputs(events) == []
    assert [r.facts["message"] for r in records(events, "tray_message")] == ["tubereport"]


def test_noise_is_counted_and_a_lost_tray_event_owes_a_count() -> None:
    wire, dev = TrayWire(REGISTRY), device()
    start(wire, dev)
    # "TUBE with the same UID twice" (tray_vectors.SINGLE) as the tray's next event, seq 2: intact but
    # undeliverable, so it takes its number and the report is lost
    uid = (0xE004015012345678).to_bytes(8, "big")
    body = bytes([1, 0x22, 0, 2, 3, 2]) + uid + uid
    events = wire.receive(cobs_encode(body + zlib.crc32(body).to_bytes(4, "big")) + b"\x00", 0.2)
    assert [e.reason for e in events if isinstance(e, WireNoise)] == ["bad_payload"]
    assert len(owed(events)) == 1
    reader_frame = spot_vectors.FRAMES[0].data  # a bet-spot reader's HELLO on the tray's port
    events = wire.receive(reader_frame + b"\x01\x02\x03\x00" + bytes(range(1, 40)) + b"\x00", 0.3)
    reasons = [e.reason for e in events if isinstance(e, WireNoise)]
    assert reasons[0] == "unknown_type" and len(reasons) == 3 and owed(events) == []
    assert wire.noise.rejected_total == 4


def test_the_link_goes_down_without_a_frame_for_the_timeout() -> None:
    wire, dev = TrayWire(REGISTRY), device()
    start(wire, dev)
    events, _ = wire.poll(2.9)
    assert TrayLinkChanged(False) not in inputs(events)
    events, _ = wire.poll(3.1)
    assert inputs(events) == [TrayLinkChanged(False)]


def test_flags_named_as_the_records_say() -> None:
    wire, dev = TrayWire(REGISTRY), device()
    start(wire, dev)
    events = send(wire, dev, TrayStatus(TrayFlags.TAMPER | TrayFlags.LID_OPEN))
    assert [r.facts["flags"] for r in records(events, "tray_status")] == [["tamper", "lid_open"]]
