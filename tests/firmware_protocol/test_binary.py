"""The binary dialect: spec vectors, round trips, damage on the wire and the decoder's promises."""

from __future__ import annotations

import itertools
import random
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_protocol.binary import (
    MAX_V1_BODY,
    BinaryDecoder,
    BinaryEvent,
    EncodeError,
    FrameReceived,
    FrameRejected,
    RejectReason,
    cobs_decode,
    cobs_encode,
    decode_frame,
    encode,
    encode_body,
    frame_body,
)
from firmware_protocol.messages import Ack, ButtonPressed, CardRead, Hello, MessageType, Status, StatusFlags
from firmware_protocol.vectors import FRAMES, SINGLE, STREAMS, FrameVector, Outcome, StreamVector, accounted

from .strategies import messages, u16


def outcomes(events: list[BinaryEvent]) -> tuple[Outcome, ...]:
    return tuple(e.reason if isinstance(e, FrameRejected) else (e.seq, e.message) for e in events)


def feed_all(decoder: BinaryDecoder, chunks: list[bytes]) -> list[BinaryEvent]:
    return [event for chunk in chunks for event in decoder.feed(chunk)]


# ---------------------------------------------------------------------------------------- vectors

ids = [v.name for v in FRAMES]


@pytest.mark.parametrize("vector", FRAMES, ids=ids)
def test_vector_encodes_to_the_spec_bytes(vector: FrameVector) -> None:
    assert encode(vector.seq, vector.message) == vector.data


@pytest.mark.parametrize("vector", FRAMES, ids=ids)
def test_vector_decodes_whole_and_byte_by_byte(vector: FrameVector) -> None:
    expected = [FrameReceived(vector.seq, vector.message, vector.data)]
    assert BinaryDecoder().feed(vector.data) == expected
    assert feed_all(BinaryDecoder(), [bytes([b]) for b in vector.data]) == expected
    assert decode_frame(vector.data) == expected[0]
    assert decode_frame(vector.data[:-1]) == FrameReceived(vector.seq, vector.message, vector.data[:-1])


@pytest.mark.parametrize("vector", FRAMES, ids=ids)
def test_vector_split_at_every_pair_of_offsets(vector: FrameVector) -> None:
    data = vector.data
    expected = [FrameReceived(vector.seq, vector.message, data)]
    for i, j in itertools.combinations_with_replacement(range(len(data) + 1), 2):
        decoder = BinaryDecoder()
        assert feed_all(decoder, [data[:i], data[i:j], data[j:]]) == expected, (i, j)
        assert decoder.buffered == 0


@pytest.mark.parametrize("vector", FRAMES, ids=ids)
@settings(max_examples=50)
@given(before=st.binary(max_size=40), after=st.binary(max_size=40), cut=st.integers(0, 200))
def test_vector_survives_garbage_before_and_after(vector: FrameVector, before: bytes, after: bytes, cut: int) -> None:
    """Noise, then a delimiter (the line idles), then the frame, then more noise: the frame comes through
    once, whatever the chunking, and everything before it is rejected, not dropped."""
    data = before + b"\x00" + vector.data + after
    cut = min(cut, len(data))
    events = feed_all(BinaryDecoder(), [data[:cut], data[cut:]])
    good = FrameReceived(vector.seq, vector.message, vector.data)
    assert events.count(good) == 1
    head = events[: events.index(good)]
    assert all(isinstance(e, FrameRejected) for e in head)
    assert b"".join(e.raw for e in head) == accounted(before + b"\x00")


@pytest.mark.parametrize("vector", SINGLE + STREAMS, ids=[v.name for v in SINGLE + STREAMS])
def test_rule_and_stream_vectors(vector: StreamVector) -> None:
    data = vector.data
    assert outcomes(BinaryDecoder().feed(data)) == vector.outcomes
    assert outcomes(feed_all(BinaryDecoder(), [bytes([b]) for b in data])) == vector.outcomes
    for cut in range(len(data) + 1):
        assert outcomes(feed_all(BinaryDecoder(), [data[:cut], data[cut:]])) == vector.outcomes, cut


def test_rejections_after_a_good_crc_carry_seq_and_type() -> None:
    by_name = {v.name: v for v in SINGLE}
    [version2] = BinaryDecoder().feed(by_name["version 2"].data)
    assert isinstance(version2, FrameRejected)
    assert (version2.seq, version2.message_type) == (7, 0x02)
    [unknown] = BinaryDecoder().feed(by_name["unknown type 0x08"].data)
    assert isinstance(unknown, FrameRejected)
    assert (unknown.seq, unknown.message_type) == (7, 0x08)
    [bad_crc] = BinaryDecoder().feed(by_name["CRC mismatch (rank byte damaged)"].data)
    assert isinstance(bad_crc, FrameRejected)
    assert (bad_crc.seq, bad_crc.message_type) == (None, None)


def test_crc_is_crc32_iso_hdlc() -> None:
    """The check value the spec gives firmware authors."""
    assert zlib.crc32(b"123456789") == 0xCBF43926


# ------------------------------------------------------------------------------------ round trips


@given(seq=u16, message=messages)
def test_round_trip_every_message(seq: int, message: object) -> None:
    frame = encode(seq, message)
    assert frame.endswith(b"\x00")
    assert b"\x00" not in frame[:-1]
    assert len(cobs_decode(frame[:-1]) or b"") <= MAX_V1_BODY
    assert BinaryDecoder().feed(frame) == [FrameReceived(seq, message, frame)]


@given(st.binary(max_size=600))
def test_cobs_round_trip(data: bytes) -> None:
    encoded = cobs_encode(data)
    assert b"\x00" not in encoded
    assert cobs_decode(encoded) == data


@given(seq=u16, extra=st.binary(min_size=1, max_size=20))
def test_extra_payload_bytes_are_ignored(seq: int, extra: bytes) -> None:
    body = encode_body(seq, CardRead(12, "D"))[:-4] + extra
    frame = frame_body(body + zlib.crc32(body).to_bytes(4, "big"))
    [event] = BinaryDecoder().feed(frame)
    assert event == FrameReceived(seq, CardRead(12, "D"), frame)


def test_unknown_status_bits_are_kept() -> None:
    frame = encode(9, Status(StatusFlags(0x80 | StatusFlags.JAM)))
    [event] = BinaryDecoder().feed(frame)
    assert isinstance(event, FrameReceived)
    assert event.message == Status(StatusFlags(0x82))


def test_encode_refuses_what_the_wire_cannot_carry() -> None:
    with pytest.raises(EncodeError):
        encode(0x10000, Ack(1))
    with pytest.raises(EncodeError):
        encode(-1, Ack(1))
    with pytest.raises(EncodeError):
        encode(1, ButtonPressed(9))  # type: ignore[arg-type]
    with pytest.raises(EncodeError):
        encode(1, "CARD")


def test_hello_with_printable_ascii_round_trips() -> None:
    hello = Hello(" !~v2.0-rc1 ", "SH-00417/B~", 1, 0xFFFFFFFF)
    frame = encode(1, hello)
    assert decode_frame(frame) == FrameReceived(1, hello, frame)


@pytest.mark.parametrize(
    ("firmware", "serial", "says"),
    [
        ("1.4.2", "SH-00417\x00\x00", "serial number is not printable text: byte 8 is 0x00"),
        ("1.4.2\x1b[2J", "SH-00417", "firmware version is not printable text: byte 5 is 0x1b"),
        ("1.4.2", "S\x7f", "byte 1 is 0x7f"),
        ("v2 ♠", "SH-1", "firmware version is not printable text: byte 3 is 0xe2"),
        ("1.4.2", "Série-7", "byte 1 is 0xc3"),
        ("1.4.2", "SH\n1", "byte 2 is 0x0a"),
    ],
)
def test_a_hello_string_that_is_not_printable_ascii_is_a_bad_payload(firmware: str, serial: str, says: str) -> None:
    frame = encode(1, Hello(firmware, serial, 1, 0x1A2B3C4D))
    rejected = decode_frame(frame)
    assert isinstance(rejected, FrameRejected)
    assert rejected.reason is RejectReason.BAD_PAYLOAD
    assert (rejected.seq, rejected.message_type) == (1, MessageType.HELLO)
    assert says in rejected.detail


# -------------------------------------------------------------------------- the decoder's promises


@settings(max_examples=300)
@given(chunks=st.lists(st.binary(max_size=300), max_size=12), cap=st.integers(9, 200))
def test_arbitrary_bytes_never_raise_never_overflow_never_vanish(chunks: list[bytes], cap: int) -> None:
    decoder = BinaryDecoder(max_buffer=cap)
    raws = b""
    for chunk in chunks:
        raws += b"".join(e.raw for e in decoder.feed(chunk))
        assert decoder.buffered <= cap
    expected = accounted(b"".join(chunks))
    assert expected.startswith(raws)
    assert len(raws) + decoder.buffered == len(expected)


@settings(max_examples=100)
@given(frames=st.lists(st.tuples(u16, messages), max_size=8), noise=st.lists(st.binary(max_size=30), max_size=8))
def test_good_frames_survive_interleaved_noise(frames: list[tuple[int, object]], noise: list[bytes]) -> None:
    data = b""
    for index in range(max(len(frames), len(noise))):
        if index < len(noise):
            data += noise[index] + b"\x00"
        if index < len(frames):
            data += encode(*frames[index])
    received = [(e.seq, e.message) for e in BinaryDecoder().feed(data) if isinstance(e, FrameReceived)]
    assert received == [(s, m) for s, m in frames]


def test_oversize_frame_is_reported_once_and_its_tail_handed_back() -> None:
    decoder = BinaryDecoder(max_buffer=32)
    card = encode(3, CardRead(1, "S"))
    first = decoder.feed(b"\x01" * 30)
    assert first == []
    second = decoder.feed(b"\x01" * 10)
    assert [e.reason for e in second] == [RejectReason.OVERSIZE]  # type: ignore[union-attr]
    assert decoder.buffered == 0
    third = decoder.feed(b"\x01" * 100)
    assert [e.reason for e in third] == [RejectReason.OVERSIZE_TAIL]  # type: ignore[union-attr]
    fourth = decoder.feed(b"\x01\x01\x00" + card)
    assert [e.reason if isinstance(e, FrameRejected) else e.message for e in fourth] == [
        RejectReason.OVERSIZE_TAIL,
        CardRead(1, "S"),
    ]
    assert sum(len(e.raw) for e in second + third + fourth[:1]) == 30 + 10 + 100 + 3


def test_oversize_frame_inside_one_chunk() -> None:
    decoder = BinaryDecoder(max_buffer=16)
    card = encode(3, CardRead(1, "S"))
    events = decoder.feed(b"\x01" * 40 + b"\x00" + card)
    assert outcomes(events) == (RejectReason.OVERSIZE, (3, CardRead(1, "S")))
    assert events[0].raw == b"\x01" * 40 + b"\x00"


def test_decode_frame_rejects_an_inner_delimiter() -> None:
    frame = encode(3, CardRead(1, "S"))
    event = decode_frame(frame + frame)
    assert isinstance(event, FrameRejected)
    assert event.reason is RejectReason.BAD_FRAMING
    assert event.raw == frame + frame


# -------------------------------------------------------------------------------- wire bit flips


def _flipped(data: bytes, bits: tuple[int, ...]) -> bytes:
    out = bytearray(data)
    for bit in bits:
        out[bit // 8] ^= 1 << (bit % 8)
    return bytes(out)


def _assert_only_rejections(vector: FrameVector, bits: tuple[int, ...]) -> None:
    """The damaged frame, closed by one more delimiter (in case the flip hit the original one), must give
    rejections only, and must account for every byte."""
    wire = _flipped(vector.data, bits) + b"\x00"
    events = BinaryDecoder().feed(wire)
    bad = [e for e in events if not isinstance(e, FrameRejected)]
    assert not bad, (vector.name, bits, bad)
    assert b"".join(e.raw for e in events) == accounted(wire), (vector.name, bits)


@pytest.mark.parametrize("vector", FRAMES, ids=ids)
def test_every_single_and_double_bit_flip_is_rejected(vector: FrameVector) -> None:
    nbits = len(vector.data) * 8
    for bit in range(nbits):
        _assert_only_rejections(vector, (bit,))
    for pair in itertools.combinations(range(nbits), 2):
        _assert_only_rejections(vector, pair)


def test_sampled_triple_bit_flips_are_rejected() -> None:
    rng = random.Random(20240601)
    for _ in range(100_000):
        vector = rng.choice(FRAMES)
        bits = tuple(rng.sample(range(len(vector.data) * 8), 3))
        _assert_only_rejections(vector, bits)


def test_a_one_mebibyte_run_without_a_delimiter_is_capped_and_reported_once() -> None:
    """Read 4 KiB at a time as the table loop does: never more than ``max_buffer`` bytes held, one
    OVERSIZE (the rest OVERSIZE_TAIL), and the frame after the next delimiter decodes."""
    decoder = BinaryDecoder()
    rng = random.Random(3)
    flood = bytes(rng.randrange(1, 256) for _ in range(1 << 20))
    events = []
    held = 0
    for at in range(0, len(flood), 4096):
        events += decoder.feed(flood[at : at + 4096])
        held = max(held, decoder.buffered)
    events += decoder.feed(b"\x00" + encode(7, CardRead(12, "D")))
    assert held <= decoder.max_buffer
    reasons = [e.reason for e in events if isinstance(e, FrameRejected)]
    assert reasons.count(RejectReason.OVERSIZE) == 1
    assert set(reasons) == {RejectReason.OVERSIZE, RejectReason.OVERSIZE_TAIL}
    assert max(len(e.raw) for e in events) <= 4096 + decoder.max_buffer + 1
    assert isinstance(events[-1], FrameReceived)
    assert events[-1].message == CardRead(12, "D")
    assert b"".join(e.raw for e in events[:-1]) == flood + b"\x00"  # every byte accounted for
