"""The chip tray's messages and dialect: checks, round trips, decoder rules, the wall between the devices, and
the reliability rules run over the tray's dialect."""

from __future__ import annotations

import itertools
import random
import struct
import zlib
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_protocol import spot_vectors, tray_vectors, vectors
from firmware_protocol.binary import SHOE
from firmware_protocol.framing import (
    MAX_SEQ,
    BadPayload,
    Dialect,
    EncodeError,
    FrameDecoder,
    FrameEvent,
    FrameReceived,
    FrameRejected,
    RejectReason,
    cobs_decode,
    decode_frame,
    encode,
    encode_body,
    frame_body,
)
from firmware_protocol.messages import Ack, CardRead, MessageType, Resend, Reset
from firmware_protocol.session import (
    CommandReceived,
    ControllerSession,
    DuplicateDropped,
    GapDetected,
    LinkEvent,
    NotReliable,
    ResetRequested,
    SessionJoined,
    ShoeEvent,
    ShoeRebooted,
    ShoeSession,
)
from firmware_protocol.spots import READER, ReaderType, SpotCode, SpotReport, Window, WindowState
from firmware_protocol.tray import (
    MAX_BODY,
    MAX_TEXT,
    MAX_TUBE_CHIPS,
    MAX_TUBES,
    TRAY,
    TRAY_RELIABLE,
    CountRequest,
    TrayFlags,
    TrayHeartbeat,
    TrayHello,
    TraySnapshotBegin,
    TraySnapshotEnd,
    TrayStatus,
    TrayType,
    TrayWire,
    TubeReport,
)
from firmware_protocol.vectors import FrameVector, Outcome, StreamVector, accounted

from .tray_strategies import messages, reliable_messages

SESSION = 0x7A7B0A70


def _frame(code: int, payload: bytes, seq: int = 5, version: int = 1) -> bytes:
    """A frame with a good CRC around any payload (what a tray with a bug, or a newer one, might send)."""
    head = struct.pack(">BBH", version, code, seq) + payload
    return frame_body(head + struct.pack(">I", zlib.crc32(head)))


def _outcomes(events: list[FrameEvent]) -> tuple[Outcome, ...]:
    return tuple((e.seq, e.message) if isinstance(e, FrameReceived) else e.reason for e in events)


def _feed_all(decoder: FrameDecoder, chunks: list[bytes]) -> list[FrameEvent]:
    return [event for chunk in chunks for event in decoder.feed(chunk)]


# ------------------------------------------------------------------------------------ the dialect


def test_tray_codes_are_its_own_ranges_and_meet_no_other_devices() -> None:
    codes = {int(c) for c in TrayType}
    assert not codes & {int(c) for c in MessageType}
    assert not codes & {int(c) for c in ReaderType}
    assert TRAY.device_codes == range(0x21, 0x30)
    assert set(TRAY.codes.values()) == codes
    for cls, code in TRAY.codes.items():
        if cls in TRAY.to_device:
            assert 0xA1 <= code <= 0xAF, cls
        else:
            assert code in TRAY.device_codes, cls
    assert set(TRAY.decoders) == codes


def test_the_reliable_events_are_every_tray_event_but_the_heartbeat() -> None:
    device = {cls for cls in TRAY.codes if cls not in TRAY.to_device}
    assert set(TRAY_RELIABLE) == device - {TrayHeartbeat}
    assert TRAY.reliable == TRAY_RELIABLE
    assert set(TRAY.to_device) == {Ack, Resend, CountRequest, Reset}
    assert (TRAY.hello, TRAY.heartbeat, TRAY.heartbeat_code) == (TrayHello, TrayHeartbeat, 0x27)


def test_the_flags_the_doc_names_are_distinct_bits_of_one_byte() -> None:
    named = [f for f in TrayFlags if f is not TrayFlags.NONE]
    assert {f.name for f in named} == {"ANTENNA_FAULT", "LID_OPEN", "TAMPER", "READ_ERRORS", "OVERHEAT", "LOW_POWER"}
    assert all(int(f).bit_count() == 1 and int(f) < 0x40 for f in named)  # bits 6-7 reserved
    assert len({int(f) for f in named}) == len(named)


# ------------------------------------------------------------------------------------ round trips


@given(messages, st.integers(0, MAX_SEQ))
def test_every_tray_message_round_trips(message: TrayWire, seq: int) -> None:
    frame = encode(seq, message, dialect=TRAY)
    assert frame.endswith(b"\x00") and b"\x00" not in frame[:-1]
    assert len(cobs_decode(frame[:-1]) or b"") <= TRAY.max_body
    assert FrameDecoder(dialect=TRAY).feed(frame) == [FrameReceived(seq, message, frame)]


@given(messages, st.binary(min_size=1, max_size=24))
def test_extra_payload_bytes_are_ignored_on_every_message(message: TrayWire, extra: bytes) -> None:
    head = encode_body(3, message, dialect=TRAY)[:-4] + extra
    frame = frame_body(head + struct.pack(">I", zlib.crc32(head)))
    assert FrameDecoder(dialect=TRAY).feed(frame) == [FrameReceived(3, message, frame)]


def test_a_full_tube_fits_the_decoder_buffer_with_the_worst_cobs_overhead() -> None:
    assert MAX_BODY == TRAY.max_body == 810
    worst_cobs = MAX_BODY + MAX_BODY // 254 + 1  # one code byte per 254-byte run, and the first
    assert worst_cobs + 1 <= FrameDecoder(dialect=TRAY).max_buffer  # and the delimiter
    # UIDs and a header without a 0x00 byte: COBS cannot use a zero as a code byte, the most it ever adds
    full = TubeReport(MAX_TUBES, tuple(0xE004015012340101 + i for i in range(MAX_TUBE_CHIPS)))
    frame = encode(0xFFFF, full, dialect=TRAY)
    body = cobs_decode(frame[:-1]) or b""
    assert len(body) == MAX_BODY and body.count(0) <= 1  # at most the CRC may hold a zero
    assert len(frame) - 1 <= worst_cobs
    assert FrameDecoder(dialect=TRAY).feed(frame) == [FrameReceived(0xFFFF, full, frame)]
    longest_hello = TrayHello("v" * MAX_TEXT, "s" * MAX_TEXT, 255, 0xFFFFFFFF, MAX_TUBES)
    assert len(encode_body(1, longest_hello, dialect=TRAY)) < MAX_BODY


def test_reserved_status_bits_are_kept() -> None:
    frame = _frame(TrayType.STATUS, b"\xc1")
    [event] = FrameDecoder(dialect=TRAY).feed(frame)
    assert isinstance(event, FrameReceived) and isinstance(event.message, TrayStatus)
    assert int(event.message.flags) == 0xC1 and TrayFlags.ANTENNA_FAULT in event.message.flags
    assert encode(5, event.message, dialect=TRAY) == frame


def test_uids_keep_the_trays_order_and_their_full_eight_bytes() -> None:
    report = TubeReport(2, (0xFFFFFFFFFFFFFFFF, 0, 0xA1B2C3D4))
    body = encode_body(1, report, dialect=TRAY)
    assert body[4:6] == b"\x02\x03"
    assert body[6:30] == bytes.fromhex("ffffffffffffffff000000000000000000000000a1b2c3d4")
    [event] = FrameDecoder(dialect=TRAY).feed(frame_body(body))
    assert isinstance(event, FrameReceived) and event.message == report


# ------------------------------------------------------------------------- the messages' own checks


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: TrayHello("1", "T", 1, -1), "session_id -1 outside 32 bits"),
        (lambda: TrayHello("1", "T", 1, 1 << 32), "session_id 4294967296 outside 32 bits"),
        (lambda: TrayHello("1", "T", 256, 1), "protocol_version 256 outside a byte"),
        (lambda: TrayHello("1" * 33, "T", 1, 1), "firmware_version longer than 32 bytes"),
        (lambda: TrayHello("1", "T" * 33, 1, 1), "serial_number longer than 32 bytes"),
        (lambda: TrayHello("1", "CT-0007\x00", 1, 1), "serial_number is not printable ASCII"),
        (lambda: TrayHello("1.0\u00e9", "T", 1, 1), "firmware_version is not printable ASCII"),
        (lambda: TrayHello("1", "T", 1, 1, tubes=0), "tubes 0 outside 1-16"),
        (lambda: TrayHello("1", "T", 1, 1, tubes=17), "tubes 17 outside 1-16"),
        (lambda: TubeReport(0), "tube 0 outside 1-16"),
        (lambda: TubeReport(17), "tube 17 outside 1-16"),
        (lambda: TubeReport(1, tuple(range(MAX_TUBE_CHIPS + 1))), "101 chips in one tube, at most 100"),
        (lambda: TubeReport(1, (1 << 64,)), "outside 8 bytes"),
        (lambda: TubeReport(1, (-1,)), "outside 8 bytes"),
        (lambda: TubeReport(1, (5, 6, 5)), "a UID reported twice in one tube"),
        (lambda: TraySnapshotBegin(-1), "snapshot -1 outside 16 bits"),
        (lambda: TraySnapshotBegin(0x10000), "snapshot 65536 outside 16 bits"),
        (lambda: TraySnapshotEnd(0x10000, 1), "snapshot 65536 outside 16 bits"),
        (lambda: TraySnapshotEnd(1, -1), "reports -1 outside 16 bits"),
        (lambda: TrayStatus(TrayFlags(0x100)), "status flags 0x100 outside a byte"),
        (lambda: TrayHeartbeat(-1), "session_id -1 outside 32 bits"),
        (lambda: TrayHeartbeat(1 << 32), "session_id 4294967296 outside 32 bits"),
    ],
)
def test_a_message_refuses_what_no_tray_sends(build: Callable[[], object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        build()


def test_the_checks_accept_the_limits() -> None:
    assert TrayHello("v" * MAX_TEXT, "", 0, 0xFFFFFFFF, tubes=1).tubes == 1
    assert TrayHello("1", "T", 1, 0).tubes == MAX_TUBES  # a session's generic HELLO builder
    assert len(TubeReport(MAX_TUBES, tuple(range(MAX_TUBE_CHIPS))).uids) == MAX_TUBE_CHIPS
    assert TubeReport(1, ((1 << 64) - 1, 0)).tube == 1
    assert TraySnapshotEnd(0xFFFF, 0xFFFF).reports == 0xFFFF
    assert int(TrayStatus(TrayFlags(0xFF)).flags) == 0xFF


# ------------------------------------------------------------------------- the decoders' refusals

_HEAD = bytes([1]) + SESSION.to_bytes(4, "big")


def _text(raw: bytes) -> bytes:
    return bytes([len(raw)]) + raw


_UID = bytes.fromhex("e004015012345678")
BAD_PAYLOADS = [
    (TrayType.HELLO, b"\x01\x00\x00", "HELLO payload needs 5 bytes, got 3"),
    (TrayType.HELLO, _HEAD, "HELLO firmware version length byte missing"),
    (TrayType.HELLO, _HEAD + b"\x05abc", "HELLO firmware version declares 5 bytes, only 3 present"),
    (
        TrayType.HELLO,
        _HEAD + _text(b"1" * 33) + _text(b"T") + b"\x08",
        "HELLO firmware version of 33 bytes, at most 32",
    ),
    (TrayType.HELLO, _HEAD + _text(b"1.0") + _text(b"T\x07") + b"\x08", "HELLO serial number is not printable text"),
    (TrayType.HELLO, _HEAD + _text(b"1.0") + _text(b"T" * 33) + b"\x08", "HELLO serial number of 33 bytes, at most 32"),
    (TrayType.HELLO, _HEAD + _text(b"1.0"), "HELLO serial number length byte missing"),
    (TrayType.HELLO, _HEAD + _text(b"1.0") + _text(b"T"), "HELLO tubes byte missing"),
    (TrayType.HELLO, _HEAD + _text(b"1.0") + _text(b"T") + b"\x00", "HELLO tubes 0: a tray has 1-16"),
    (TrayType.HELLO, _HEAD + _text(b"1.0") + _text(b"T") + b"\x11", "HELLO tubes 17: a tray has 1-16"),
    (TrayType.TUBE, b"", "TUBE payload needs 2 bytes, got 0"),
    (TrayType.TUBE, b"\x03", "TUBE payload needs 2 bytes, got 1"),
    (TrayType.TUBE, b"\x00\x00", "TUBE tube 0: tubes are 1-16"),
    (TrayType.TUBE, b"\x11\x01" + _UID, "TUBE tube 17: tubes are 1-16"),
    (TrayType.TUBE, b"\xff\x00", "TUBE tube 255: tubes are 1-16"),
    (TrayType.TUBE, b"\x01\x65" + bytes(range(101)) * 8, "TUBE with 101 chips, at most 100"),
    (TrayType.TUBE, b"\x01\xff", "TUBE with 255 chips, at most 100"),
    (TrayType.TUBE, b"\x01\x02" + _UID, "TUBE declares 2 UIDs (16 bytes), only 8 bytes follow"),
    (TrayType.TUBE, b"\x01\x01" + _UID[:4], "TUBE declares 1 UIDs (8 bytes), only 4 bytes follow"),
    (TrayType.TUBE, b"\x04\x03" + _UID + bytes(8) + _UID, "TUBE tube 4 names a UID twice"),
    (TrayType.SNAPSHOT_BEGIN, b"\x01", "SNAPSHOT_BEGIN payload needs 2 bytes, got 1"),
    (TrayType.SNAPSHOT_END, b"\x00\x01\x00", "SNAPSHOT_END payload needs 4 bytes, got 3"),
    (TrayType.STATUS, b"", "STATUS payload needs 1 bytes, got 0"),
    (TrayType.HEARTBEAT, b"\x7a\x7b\x0a", "HEARTBEAT payload needs 4 bytes, got 3"),
    (TrayType.ACK, b"\x07", "ACK payload needs 2 bytes, got 1"),
    (TrayType.RESEND, b"", "RESEND payload needs 2 bytes, got 0"),
]


@pytest.mark.parametrize(("code", "payload", "detail"), BAD_PAYLOADS, ids=[d for _, _, d in BAD_PAYLOADS])
def test_each_malformed_payload_is_a_bad_payload_with_its_one_line_reason(
    code: TrayType, payload: bytes, detail: str
) -> None:
    with pytest.raises(BadPayload) as info:
        TRAY.decoders[code](payload)
    assert info.value.detail.startswith(detail) and "\n" not in info.value.detail
    event = decode_frame(_frame(code, payload, seq=9), dialect=TRAY)
    assert isinstance(event, FrameRejected)
    assert (event.reason, event.detail, event.seq, event.message_type) == (
        RejectReason.BAD_PAYLOAD,
        info.value.detail,
        9,
        code,
    )


@settings(max_examples=400)
@given(code=st.sampled_from(sorted(TrayType)), payload=st.binary(max_size=60))
def test_a_decoder_raises_nothing_but_bad_payload_whatever_the_payload(code: TrayType, payload: bytes) -> None:
    refused: BadPayload | None = None
    try:
        message = TRAY.decoders[code](payload)
    except BadPayload as exc:
        refused = exc
    if refused is not None:
        assert refused.detail and "\n" not in refused.detail
        return
    # what a decoder accepts re-encodes to the payload it read (less any additive bytes after it)
    body = encode_body(1, message, dialect=TRAY)
    assert payload.startswith(body[4:-4])


@settings(max_examples=200)
@given(
    tube=st.integers(0, 255),
    count=st.integers(0, 255),
    uids=st.lists(st.integers(0, 3), max_size=110).map(lambda xs: b"".join(x.to_bytes(8, "big") for x in xs)),
)
def test_a_tube_payload_is_a_report_or_a_bad_payload(tube: int, count: int, uids: bytes) -> None:
    """UIDs drawn from four values, so duplicates, short runs and over-long counts all come up."""
    event = decode_frame(_frame(TrayType.TUBE, bytes([tube, count]) + uids), dialect=TRAY)
    ok = 1 <= tube <= MAX_TUBES and count <= MAX_TUBE_CHIPS and len(uids) >= 8 * count
    ok = ok and len(set(uids[i : i + 8] for i in range(0, 8 * count, 8))) == count
    if ok:
        assert isinstance(event, FrameReceived) and isinstance(event.message, TubeReport)
        assert len(event.message.uids) == count
    else:
        assert isinstance(event, FrameRejected) and event.reason is RejectReason.BAD_PAYLOAD


# ---------------------------------------------------------------------------------------- vectors

vector_ids = [v.name for v in tray_vectors.FRAMES]


@pytest.mark.parametrize("vector", tray_vectors.FRAMES, ids=vector_ids)
def test_tray_vector_encodes_to_the_spec_bytes(vector: FrameVector) -> None:
    assert encode(vector.seq, vector.message, dialect=TRAY) == vector.data


@pytest.mark.parametrize("vector", tray_vectors.FRAMES, ids=vector_ids)
def test_tray_vector_decodes_whole_and_byte_by_byte(vector: FrameVector) -> None:
    expected = [FrameReceived(vector.seq, vector.message, vector.data)]
    assert FrameDecoder(dialect=TRAY).feed(vector.data) == expected
    assert _feed_all(FrameDecoder(dialect=TRAY), [bytes([b]) for b in vector.data]) == expected
    assert decode_frame(vector.data, dialect=TRAY) == expected[0]


def test_the_vectors_cover_every_tray_message_and_the_cobs_ff_block() -> None:
    assert {type(v.message) for v in tray_vectors.FRAMES} == set(TRAY.codes)
    [run] = [v for v in tray_vectors.FRAMES if "0xFF" in v.name]
    assert run.data[3] == 0xFF  # the code byte of a 254-byte block without an implied zero


@pytest.mark.parametrize("vector", tray_vectors.SINGLE, ids=[v.name for v in tray_vectors.SINGLE])
def test_tray_rule_vectors(vector: StreamVector) -> None:
    data = vector.data
    assert _outcomes(FrameDecoder(dialect=TRAY).feed(data)) == vector.outcomes
    for cut in range(len(data) + 1):
        assert _outcomes(_feed_all(FrameDecoder(dialect=TRAY), [data[:cut], data[cut:]])) == vector.outcomes


def test_the_too_many_chips_vector_really_holds_101_distinct_uids() -> None:
    """The reject must be for the count alone: the same frame with 100 of its chips would be a good report."""
    [vector] = [v for v in tray_vectors.SINGLE if "101 chips" in v.name]
    body = cobs_decode(vector.data[:-1]) or b""
    assert body[4:6] == bytes([2, 101]) and len(body) == 4 + 2 + 101 * 8 + 4
    assert len({body[6 + 8 * i : 14 + 8 * i] for i in range(101)}) == 101
    kept = body[:5] + bytes([100]) + body[6 : 6 + 800]
    assert isinstance(decode_frame(frame_body(kept + struct.pack(">I", zlib.crc32(kept))), dialect=TRAY), FrameReceived)


def test_the_other_devices_frames_in_the_rule_vectors_are_theirs_byte_for_byte() -> None:
    """The reader's and the shoe's frames in the tray's rules are those devices' own checked vectors."""
    theirs = {v.wire for v in spot_vectors.FRAMES + vectors.FRAMES}
    foreign = [v for v in tray_vectors.SINGLE if "reader's" in v.name or "shoe's" in v.name]
    assert len(foreign) == 4 and all(v.wire in theirs for v in foreign)


@pytest.mark.parametrize(
    ("port", "vector"),
    [(READER, v) for v in tray_vectors.ON_READER_PORT] + [(SHOE, v) for v in tray_vectors.ON_SHOE_PORT],
    ids=[f"reader: {v.name}" for v in tray_vectors.ON_READER_PORT]
    + [f"shoe: {v.name}" for v in tray_vectors.ON_SHOE_PORT],
)
def test_the_trays_frames_on_another_devices_port(port: Dialect, vector: StreamVector) -> None:
    [event] = FrameDecoder(dialect=port).feed(vector.data)
    assert _outcomes([event]) == vector.outcomes
    assert isinstance(event, FrameRejected) and event.message_type == int(vector.name.split("type 0x")[1][:2], 16)
    assert vector.wire in {v.wire for v in tray_vectors.FRAMES}


# -------------------------------------------------------------------------- the wall between devices


@pytest.mark.parametrize("vector", tray_vectors.FRAMES, ids=vector_ids)
def test_every_tray_frame_is_an_unknown_type_on_the_reader_and_shoe_ports(vector: FrameVector) -> None:
    for port in (READER, SHOE):
        [event] = FrameDecoder(dialect=port).feed(vector.data)
        assert isinstance(event, FrameRejected) and event.reason is RejectReason.UNKNOWN_TYPE, port


@pytest.mark.parametrize("vector", spot_vectors.FRAMES + vectors.FRAMES, ids=lambda v: v.name)
def test_every_reader_and_shoe_frame_is_an_unknown_type_on_the_tray_port(vector: FrameVector) -> None:
    [event] = FrameDecoder(dialect=TRAY).feed(vector.data)
    assert isinstance(event, FrameRejected) and event.reason is RejectReason.UNKNOWN_TYPE


def test_messages_of_another_dialect_cannot_be_encoded() -> None:
    with pytest.raises(EncodeError):
        encode(1, SpotReport(3, SpotCode.BANKER, (1,)), dialect=TRAY)
    with pytest.raises(EncodeError):
        encode(1, CardRead(1, "S"), dialect=TRAY)
    with pytest.raises(EncodeError):
        encode(1, TubeReport(3, (1,)), dialect=READER)
    with pytest.raises(EncodeError):
        encode(1, CountRequest(), dialect=SHOE)


# ------------------------------------------------------------------------------- garbage on the line


@settings(max_examples=300)
@given(chunks=st.lists(st.binary(max_size=400), max_size=12), cap=st.integers(9, 1024))
def test_random_bytes_give_typed_rejects_only_never_overflow_never_vanish(chunks: list[bytes], cap: int) -> None:
    decoder = FrameDecoder(max_buffer=cap, dialect=TRAY)
    raws = b""
    for chunk in chunks:
        events = decoder.feed(chunk)
        assert all(isinstance(e, FrameRejected) and isinstance(e.reason, RejectReason) for e in events)
        raws += b"".join(e.raw for e in events)
        assert decoder.buffered <= cap
    expected = accounted(b"".join(chunks))
    assert expected.startswith(raws)
    assert len(raws) + decoder.buffered == len(expected)


def test_a_mebibyte_of_line_noise_fed_at_full_speed_gives_typed_rejects_and_then_a_good_frame() -> None:
    """4 KiB reads as the table loop does, noise with a delimiter now and then: every event a typed reject,
    every byte but the idle delimiters handed back, never more than the buffer held, and the frame after
    the noise decodes."""
    rng = random.Random(0x7EA1)
    noise = bytes(0 if rng.random() < 0.004 else rng.randrange(1, 256) for _ in range(1 << 20))
    decoder = FrameDecoder(dialect=TRAY)
    events: list[FrameEvent] = []
    held = 0
    for at in range(0, len(noise), 4096):
        events += decoder.feed(noise[at : at + 4096])
        held = max(held, decoder.buffered)
    assert held <= decoder.max_buffer
    assert events and all(isinstance(e, FrameRejected) for e in events)
    assert b"".join(e.raw for e in events) + noise[len(noise) - decoder.buffered :] == accounted(noise)
    good = tray_vectors.FRAMES[1]
    assert decoder.feed(b"\x00" + good.data)[-1] == FrameReceived(good.seq, good.message, good.data)


def _only_rejections(data: bytes, bits: tuple[int, ...]) -> None:
    wire = bytearray(data)
    for bit in bits:
        wire[bit // 8] ^= 1 << (bit % 8)
    events = FrameDecoder(dialect=TRAY).feed(bytes(wire) + b"\x00")
    assert all(isinstance(e, FrameRejected) for e in events), (bits, events)


@pytest.mark.parametrize("vector", tray_vectors.FRAMES, ids=vector_ids)
def test_every_single_and_double_bit_flip_of_a_tray_frame_is_rejected(vector: FrameVector) -> None:
    nbits = len(vector.data) * 8
    for bit in range(nbits):
        _only_rejections(vector.data, (bit,))
    if len(vector.data) <= 64:
        pairs: list[tuple[int, ...]] = list(itertools.combinations(range(nbits), 2))
    else:  # the long TUBE vector: its 2.9 million pairs sampled
        rng = random.Random(vector.seq)
        pairs = [tuple(rng.sample(range(nbits), 2)) for _ in range(20_000)]
    for pair in pairs:
        _only_rejections(vector.data, pair)


# ---------------------------------------------------------------------------------------- sessions


def _tray(session_id: int = SESSION, tubes: int = 8) -> ShoeSession:
    return ShoeSession(session_id, dialect=TRAY, hello=lambda sid: TrayHello("1.2.0", f"CT-{tubes:04d}", 1, sid, tubes))


def _frames(data: bytes) -> list[bytes]:
    return [part + b"\x00" for part in data.split(b"\x00") if part]


def _messages(data: bytes) -> list[object]:
    return [e.message for e in FrameDecoder(dialect=TRAY).feed(data) if isinstance(e, FrameReceived)]


def _delivered(events: list[LinkEvent]) -> list[ShoeEvent]:
    return [e for e in events if isinstance(e, ShoeEvent)]


REPORTS = [TubeReport(1, (0xE004015025000001,)), TubeReport(2, ()), TubeReport(3, (7, 8, 9))]


def test_a_tray_session_delivers_its_tube_reports_once_in_order_and_is_released_by_the_ack() -> None:
    tray = _tray()
    table = ControllerSession(dialect=TRAY)
    tray.start(0.0)
    for report in REPORTS:
        tray.send(report, 0.0)
    events = table.receive(tray.poll(0.0), 0.0)
    [rebooted] = [e for e in events if isinstance(e, ShoeRebooted)]
    assert rebooted == ShoeRebooted(None, SESSION, TrayHello("1.2.0", "CT-0008", 1, SESSION, 8))
    delivered = _delivered(events)
    assert [(e.number, e.message) for e in delivered] == list(enumerate([rebooted.hello, *REPORTS], 1))
    assert tray.unacked == 4
    ack = table.acknowledge(4, delivered[-1].key)
    assert _messages(ack) == [Ack(4)]
    tray.receive(ack, 0.1)
    assert tray.unacked == 0
    assert tray.poll(0.7) == b""  # nothing held, no heartbeat due: nothing resent


def test_a_lost_tube_report_is_asked_for_again_and_delivered_in_order() -> None:
    tray = _tray()
    table = ControllerSession(dialect=TRAY)
    tray.start(0.0)
    [hello] = _delivered(table.receive(tray.poll(0.0), 0.0))
    tray.receive(table.acknowledge(1, hello.key), 0.0)
    for report in REPORTS:
        tray.send(report, 0.1)
    first, second, third = _frames(tray.poll(0.1))
    events = table.receive(second + third, 0.1)  # the first is lost on the wire
    assert [type(e) for e in events] == [GapDetected]
    assert events[0] == GapDetected(expected_seq=2, got_seq=3)
    _, out = table.poll(0.1)
    assert _messages(out) == [Resend(2)]
    tray.receive(out, 0.12)
    resent = tray.poll(0.12)
    assert _frames(resent) == [first, second, third]  # served at once: every held event from 2 on
    delivered = _delivered(table.receive(resent, 0.13))
    assert [(e.number, e.message) for e in delivered] == [(2, REPORTS[0]), (3, REPORTS[1]), (4, REPORTS[2])]
    _, out = table.poll(0.7)
    assert out == b""  # the gap is closed: no RESEND repeated


def test_an_unacknowledged_tube_report_is_resent_after_half_a_second_and_the_copy_dropped() -> None:
    tray = _tray()
    table = ControllerSession(dialect=TRAY)
    tray.start(0.0)
    [hello] = _delivered(table.receive(tray.poll(0.0), 0.0))
    tray.receive(table.acknowledge(1, hello.key), 0.0)
    tray.send(REPORTS[0], 1.0)
    [event] = _delivered(table.receive(tray.poll(1.0), 1.0))  # delivered; its ACK is lost
    table.acknowledge(event.number, event.key)
    assert tray.poll(1.4) == b""
    resent = tray.poll(1.5)
    assert _messages(resent) == [REPORTS[0]]
    events = table.receive(resent, 1.5)
    assert events == [DuplicateDropped(SESSION, 2, 2)]
    _, out = table.poll(1.5)
    assert _messages(out) == [Ack(2)]  # the duplicate is re-acknowledged
    tray.receive(out, 1.6)
    assert tray.unacked == 0


def test_a_duplicated_frame_is_delivered_once() -> None:
    tray = _tray()
    table = ControllerSession(dialect=TRAY)
    tray.start(0.0)
    tray.send(REPORTS[2], 0.0)
    hello, report, heartbeat = _frames(tray.poll(0.0))
    events = table.receive(hello + report + report + heartbeat, 0.0)
    assert [(e.number, e.message) for e in _delivered(events)] == [
        (1, TrayHello("1.2.0", "CT-0008", 1, SESSION, 8)),
        (2, REPORTS[2]),
    ]
    assert DuplicateDropped(SESSION, 2, 2) in events


def test_a_tray_reboot_is_a_shoe_rebooted_with_the_new_hello() -> None:
    tray = _tray()
    table = ControllerSession(dialect=TRAY)
    tray.start(0.0)
    tray.send(REPORTS[0], 0.0)
    delivered = _delivered(table.receive(tray.poll(0.0), 0.0))
    tray.receive(table.acknowledge(2, delivered[-1].key), 0.0)
    tray.send(REPORTS[1], 1.0)
    tray.poll(1.0)  # lost on the wire; then the tray reboots
    reborn = _tray(0x0C0FFEE0, tubes=12)
    reborn.start(2.0)
    reborn.send(REPORTS[2], 2.0)
    events = table.receive(reborn.poll(2.0), 2.0)
    [rebooted] = [e for e in events if isinstance(e, ShoeRebooted)]
    assert (rebooted.old_session, rebooted.new_session) == (SESSION, 0x0C0FFEE0)
    assert rebooted.hello == TrayHello("1.2.0", "CT-0012", 1, 0x0C0FFEE0, 12)
    assert [(e.session_id, e.number, e.message) for e in _delivered(events)] == [
        (0x0C0FFEE0, 1, rebooted.hello),
        (0x0C0FFEE0, 2, REPORTS[2]),
    ]  # the old session's unacknowledged report is lost with it


def test_an_unreadable_tray_event_takes_its_number_and_a_foreign_frame_does_not() -> None:
    table = ControllerSession(known_session=SESSION, last_number=4, dialect=TRAY)
    table.receive(encode(4, TrayHeartbeat(SESSION), dialect=TRAY), 0.0)
    bad5 = _frame(TrayType.TUBE, b"\x00\x00", seq=5)  # tube 0: BAD_PAYLOAD in the tray's range
    reader6 = encode(6, SpotReport(3, SpotCode.BANKER, ()), dialect=READER)  # another device's: no number
    good6 = encode(6, REPORTS[1], dialect=TRAY)
    events = table.receive(bad5 + reader6 + good6, 0.1)
    rejected = [e for e in events if isinstance(e, FrameRejected)]
    assert [e.reason for e in rejected] == [RejectReason.BAD_PAYLOAD, RejectReason.UNKNOWN_TYPE]
    [event] = _delivered(events)
    assert (event.number, event.message) == (6, REPORTS[1])
    assert _messages(table.acknowledge(6, event.key)) == [Ack(6)]


def test_count_request_and_reset_reach_the_tray_and_nothing_else_is_a_command() -> None:
    tray = _tray()
    table = ControllerSession(dialect=TRAY)
    tray.start(0.0)
    table.receive(tray.poll(0.0), 0.0)
    request = table.command(CountRequest())
    assert decode_frame(request, dialect=TRAY) == FrameReceived(0, CountRequest(), request)
    assert tray.receive(request + table.reset(), 0.1) == [CommandReceived(CountRequest()), ResetRequested()]
    with pytest.raises(ValueError, match="not a chip tray command"):
        table.command(Ack(1))
    with pytest.raises(ValueError, match="not a chip tray command"):
        table.command(Window(WindowState.OPEN))


def test_only_tray_events_are_sent_on_a_tray_session_and_only_commands_received() -> None:
    tray = _tray()
    tray.start(0.0)
    with pytest.raises(NotReliable, match="not a reliable chip tray event"):
        tray.send(TrayHeartbeat(SESSION), 0.0)
    with pytest.raises(NotReliable):
        tray.send(CountRequest(), 0.0)
    with pytest.raises(NotReliable):
        tray.send(SpotReport(1, SpotCode.TIE, ()), 0.0)
    assert [type(m) for m in _messages(tray.poll(0.0))] == [TrayHello, TrayHeartbeat]
    [wrong] = tray.receive(encode(2, REPORTS[0], dialect=TRAY), 0.1)
    assert isinstance(wrong, FrameRejected) and wrong.reason is RejectReason.WRONG_DIRECTION
    [refused] = ControllerSession(dialect=TRAY).receive(encode(0, CountRequest(), dialect=TRAY), 0.1)
    assert isinstance(refused, FrameRejected) and refused.reason is RejectReason.WRONG_DIRECTION


@settings(max_examples=60, deadline=None)
@given(
    sent=st.lists(reliable_messages.filter(lambda m: not isinstance(m, TrayHello)), max_size=30),
    seed=st.integers(0, 2**32 - 1),
)
def test_a_tray_session_delivers_every_event_once_in_order_through_loss_and_duplication(
    sent: list[TrayWire], seed: int
) -> None:
    """The shoe's reliability rules over the tray's dialect: a lossy, duplicating line in both directions."""
    rng = random.Random(seed)
    tray = ShoeSession(0xC0FFEE, dialect=TRAY)
    table = ControllerSession(dialect=TRAY)
    tray.start(0.0)
    for message in sent:
        tray.send(message, 0.0)
    delivered: list[object] = []
    joined: list[SessionJoined] = []
    now = 0.0

    def line(data: bytes) -> bytes:
        return b"".join(f * rng.choice((0, 1, 1, 1, 2)) for f in _frames(data))

    while now < 60.0 and not (tray.unacked == 0 and delivered):
        now += 0.1
        events = table.receive(line(tray.poll(now)), now)
        polled, replies = table.poll(now)
        out = bytearray(replies)
        for ev in events + polled:
            if isinstance(ev, SessionJoined):
                joined.append(ev)
            if isinstance(ev, ShoeEvent):
                delivered.append(ev.message)
                out += table.acknowledge(ev.number, ev.key)
        tray.receive(line(bytes(out)), now)
    assert tray.unacked == 0
    if joined:  # the HELLO and the first frame of the RESEND 0 burst were lost: joined at the first event heard
        assert [j.first_number for j in joined] == [joined[0].first_number] and joined[0].first_number >= 2
        assert delivered == sent[joined[0].first_number - 2 :]
    else:
        assert delivered[0] == TrayHello("sim-1.0", "SIM-0001", 1, 0xC0FFEE, MAX_TUBES)
        assert delivered[1:] == sent
