"""The bet-spot reader's messages and dialect: checks, round trips, and the wall between the two devices."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.game.wagers import Spot
from firmware_protocol import spot_vectors
from firmware_protocol.binary import (
    SHOE,
    BinaryDecoder,
    BinaryEvent,
    EncodeError,
    FrameReceived,
    FrameRejected,
    RejectReason,
    cobs_decode,
    decode_frame,
    encode,
)
from firmware_protocol.messages import Ack, CardRead, Heartbeat, MessageType
from firmware_protocol.session import ControllerSession, NotReliable, SessionJoined, ShoeEvent, ShoeSession
from firmware_protocol.spots import (
    DEALER_POSITION,
    MAX_BODY,
    MAX_CHIPS,
    READER,
    CardIn,
    CardOut,
    ReaderHeartbeat,
    ReaderHello,
    ReaderType,
    SpotCode,
    SpotReport,
    SpotsMessage,
)
from firmware_protocol.vectors import FrameVector, Outcome, StreamVector

from .spot_strategies import messages, reliable_messages


def test_spot_codes_are_the_table_spots_by_name() -> None:
    assert [c.name for c in SpotCode] == [s.name for s in Spot]
    assert len({int(c) for c in SpotCode}) == len(SpotCode)


def test_reader_codes_never_meet_the_shoe_codes() -> None:
    assert not {int(c) for c in ReaderType} & {int(c) for c in MessageType}
    assert all(c in READER.device_codes for c in READER.codes.values() if c < 0x80)
    assert all(c >= 0x80 for t, c in READER.codes.items() if t in READER.to_device)


@given(messages, st.integers(0, 0xFFFF))
def test_every_reader_message_round_trips(message: SpotsMessage, seq: int) -> None:
    frame = encode(seq, message, dialect=READER)
    assert frame.endswith(b"\x00") and b"\x00" not in frame[:-1]
    assert len(cobs_decode(frame[:-1]) or b"") <= READER.max_body
    assert BinaryDecoder(dialect=READER).feed(frame) == [FrameReceived(seq, message, frame)]


def test_a_full_stack_fits_well_under_the_decoder_buffer() -> None:
    report = SpotReport(14, SpotCode.PANDA_8, tuple(range(1, MAX_CHIPS + 1)))
    frame = encode(0xFFFF, report, dialect=READER)
    assert len(cobs_decode(frame[:-1]) or b"") == MAX_BODY
    assert len(frame) < BinaryDecoder().max_buffer // 2
    with pytest.raises(ValueError, match="at most 48"):
        SpotReport(1, SpotCode.BANKER, tuple(range(MAX_CHIPS + 1)))


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((0, SpotCode.BANKER, ()), "seat 0"),
        ((15, SpotCode.BANKER, ()), "seat 15"),
        ((1, 11, ()), "11"),
        ((1, SpotCode.TIE, (5, 5)), "twice"),
        ((1, SpotCode.TIE, (1 << 64,)), "8 bytes"),
    ],
)
def test_a_spot_report_refuses_what_no_reader_sees(args: tuple[int, int, tuple[int, ...]], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        SpotReport(*args)  # type: ignore[arg-type]


def test_hello_refuses_unordered_or_unknown_seats() -> None:
    with pytest.raises(ValueError, match="seat 15"):
        ReaderHello("1", "R", 1, 1, seats=(1, 15))
    with pytest.raises(ValueError, match="ascending"):
        ReaderHello("1", "R", 1, 1, seats=(2, 1))


def test_a_shoe_frame_on_the_reader_port_is_an_unknown_type_and_back() -> None:
    [shoe_on_reader] = BinaryDecoder(dialect=READER).feed(encode(2, CardRead(10, "H")))
    assert isinstance(shoe_on_reader, FrameRejected)
    assert shoe_on_reader.reason is RejectReason.UNKNOWN_TYPE
    reader_frame = encode(2, SpotReport(3, SpotCode.BANKER, (1, 2)), dialect=READER)
    reader_on_shoe = decode_frame(reader_frame, dialect=SHOE)
    assert isinstance(reader_on_shoe, FrameRejected)
    assert reader_on_shoe.reason is RejectReason.UNKNOWN_TYPE
    assert reader_on_shoe.message_type == ReaderType.SPOT


def test_messages_of_the_other_dialect_cannot_be_encoded() -> None:
    with pytest.raises(EncodeError):
        encode(1, CardRead(1, "S"), dialect=READER)
    with pytest.raises(EncodeError):
        encode(1, ReaderHeartbeat(1))
    with pytest.raises(EncodeError):
        encode(1, Heartbeat(1), dialect=READER)
    assert isinstance(decode_frame(encode(1, Ack(1), dialect=READER), dialect=READER), FrameReceived)


# ---------------------------------------------------------------------------------------- vectors

vector_ids = [v.name for v in spot_vectors.FRAMES]


def _outcomes(events: list[BinaryEvent]) -> tuple[Outcome, ...]:
    return tuple((e.seq, e.message) if isinstance(e, FrameReceived) else e.reason for e in events)


def _feed_all(decoder: BinaryDecoder, chunks: list[bytes]) -> list[BinaryEvent]:
    return [event for chunk in chunks for event in decoder.feed(chunk)]


@pytest.mark.parametrize("vector", spot_vectors.FRAMES, ids=vector_ids)
def test_reader_vector_encodes_to_the_spec_bytes(vector: FrameVector) -> None:
    assert encode(vector.seq, vector.message, dialect=READER) == vector.data


@pytest.mark.parametrize("vector", spot_vectors.FRAMES, ids=vector_ids)
def test_reader_vector_decodes_whole_and_byte_by_byte(vector: FrameVector) -> None:
    expected = [FrameReceived(vector.seq, vector.message, vector.data)]
    assert BinaryDecoder(dialect=READER).feed(vector.data) == expected
    assert _feed_all(BinaryDecoder(dialect=READER), [bytes([b]) for b in vector.data]) == expected
    assert decode_frame(vector.data, dialect=READER) == expected[0]


@pytest.mark.parametrize("vector", spot_vectors.FRAMES, ids=vector_ids)
def test_reader_vector_is_an_unknown_type_to_a_shoe_port(vector: FrameVector) -> None:
    [event] = BinaryDecoder().feed(vector.data)
    assert isinstance(event, FrameRejected) and event.reason is RejectReason.UNKNOWN_TYPE


@pytest.mark.parametrize("vector", spot_vectors.SINGLE, ids=[v.name for v in spot_vectors.SINGLE])
def test_reader_rule_vectors(vector: StreamVector) -> None:
    data = vector.data
    assert _outcomes(BinaryDecoder(dialect=READER).feed(data)) == vector.outcomes
    for cut in range(len(data) + 1):
        assert _outcomes(_feed_all(BinaryDecoder(dialect=READER), [data[:cut], data[cut:]])) == vector.outcomes


def test_the_too_many_chips_vector_really_holds_49_distinct_uids() -> None:
    """The reject must be for the count alone: the same frame with 48 chips would be a good report."""
    [vector] = [v for v in spot_vectors.SINGLE if "49 chips" in v.name]
    body = cobs_decode(vector.data[:-1]) or b""
    assert body[6] == 49 and len(body) == 4 + 3 + 49 * 8 + 4
    uids = {body[7 + 8 * i : 15 + 8 * i] for i in range(49)}
    assert len(uids) == 49


def _only_rejections(data: bytes, bits: tuple[int, ...]) -> None:
    wire = bytearray(data)
    for bit in bits:
        wire[bit // 8] ^= 1 << (bit % 8)
    events = BinaryDecoder(dialect=READER).feed(bytes(wire) + b"\x00")
    assert all(isinstance(e, FrameRejected) for e in events), (bits, events)


@pytest.mark.parametrize("vector", spot_vectors.FRAMES, ids=vector_ids)
def test_every_single_and_double_bit_flip_of_a_reader_frame_is_rejected(vector: FrameVector) -> None:
    nbits = len(vector.data) * 8
    for bit in range(nbits):
        _only_rejections(vector.data, (bit,))
    for pair in itertools.combinations(range(nbits), 2):
        _only_rejections(vector.data, pair)


# ---------------------------------------------------------------------------------------- sessions


@settings(max_examples=60, deadline=None)
@given(
    sent=st.lists(reliable_messages.filter(lambda m: not isinstance(m, ReaderHello)), max_size=30),
    seed=st.integers(0, 2**32 - 1),
)
def test_a_reader_session_delivers_every_event_once_in_order_through_loss_and_duplication(
    sent: list[SpotsMessage], seed: int
) -> None:
    """The shoe's reliability rules over the reader's dialect: a lossy, duplicating line in both directions."""
    rng = random.Random(seed)
    reader = ShoeSession(0xC0FFEE, dialect=READER)
    table = ControllerSession(dialect=READER)
    reader.start(0.0)
    for message in sent:
        reader.send(message, 0.0)
    delivered: list[object] = []
    joined: list[SessionJoined] = []
    now = 0.0

    def line(data: bytes) -> bytes:
        frames = [f + b"\x00" for f in data.split(b"\x00")[:-1]]
        return b"".join(f * rng.choice((0, 1, 1, 1, 2)) for f in frames)

    while now < 60.0 and not (reader.unacked == 0 and delivered):  # all acknowledged: all delivered that will be
        now += 0.1
        events = table.receive(line(reader.poll(now)), now)
        polled, replies = table.poll(now)
        out = bytearray(replies)
        for ev in events + polled:
            if isinstance(ev, SessionJoined):
                joined.append(ev)
            if isinstance(ev, ShoeEvent):
                delivered.append(ev.message)
                out += table.acknowledge(ev.number, ev.key)
        reader.receive(line(bytes(out)), now)
    assert reader.unacked == 0
    if joined:
        # The HELLO was lost, and the first frame of the RESEND 0 burst after the heartbeat too: the table
        # joined the session at the first event it heard (docs/protocol.md, "Learning the session"), so what
        # came before that event is not delivered; from it on, everything, once, in order.
        assert [j.first_number for j in joined] == [joined[0].first_number] and joined[0].first_number >= 2
        assert delivered == sent[joined[0].first_number - 2 :]
    else:
        assert isinstance(delivered[0], ReaderHello) and delivered[0].session_id == 0xC0FFEE
        assert delivered[1:] == sent


def test_only_reader_events_are_sent_on_a_reader_session() -> None:
    reader = ShoeSession(1, dialect=READER)
    reader.start(0.0)
    with pytest.raises(NotReliable, match="not a reliable bet-spot reader event"):
        reader.send(ReaderHeartbeat(1), 0.0)
    with pytest.raises(NotReliable):
        reader.send(CardRead(1, "S"), 0.0)
    assert [type(m) for m in _messages(reader.poll(0.0))] == [ReaderHello, ReaderHeartbeat]


def _messages(data: bytes) -> list[object]:
    return [e.message for e in BinaryDecoder(dialect=READER).feed(data) if isinstance(e, FrameReceived)]


@pytest.mark.parametrize(
    ("args", "match"), [((15, 1), "seat 15"), ((-1, 1), "seat -1"), ((0, 1 << 64), "8 bytes"), ((3, -1), "8 bytes")]
)
def test_a_card_message_refuses_a_position_or_uid_no_reader_has(args: tuple[int, int], match: str) -> None:
    for cls in (CardIn, CardOut):
        with pytest.raises(ValueError, match=match):
            cls(*args)


def test_a_card_in_and_out_of_the_same_card_are_different_messages_on_the_wire() -> None:
    card_in: object = CardIn(3, 7)
    assert card_in != CardOut(3, 7)
    assert encode(1, CardIn(3, 7), dialect=READER)[2:3] == bytes([ReaderType.CARD_IN])
    assert encode(1, CardOut(DEALER_POSITION, 7), dialect=READER)[2:3] == bytes([ReaderType.CARD_OUT])
