"""The floor's signed ack: read from a broker the table does not control, so bounded, validated, verified."""

from __future__ import annotations

import json

import pytest

from floor_protocol.ack import MAX_ACK_BYTES, MAX_SEQ, Ack, parse_ack
from floor_protocol.signing import generate_key

H = "ab" * 32


def test_a_signed_ack_reads_back_and_verifies_with_the_floors_key_only() -> None:
    floor, other = generate_key(), generate_key()
    ack = Ack.signed(floor, "archive-0001", "table-1", 12, H)
    back = parse_ack(ack.to_json())
    assert back == ack
    assert back is not None and back.verify(floor.public_key())
    assert not back.verify(other.public_key())


@pytest.mark.parametrize(
    "change",
    [{"seq": 13}, {"hash": "cd" * 32}, {"table": "table-2"}, {"archive": "archive-0002"}],
)
def test_changing_any_signed_field_breaks_the_signature(change: dict[str, object]) -> None:
    floor = generate_key()
    data = Ack.signed(floor, "archive-0001", "table-1", 12, H).to_dict() | change
    forged = parse_ack(json.dumps(data))
    assert forged is not None and not forged.verify(floor.public_key())


@pytest.mark.parametrize(
    "payload",
    [
        b"12",
        b'{"seq": 7}',
        b"",
        b"\xff",
        b"[" * 100_000,
        b"9" * 5000,
        b" " * MAX_ACK_BYTES + b"{}",
    ],
)
def test_anything_but_a_well_formed_ack_is_none(payload: bytes) -> None:
    assert parse_ack(payload) is None


@pytest.mark.parametrize(
    "change",
    [
        {"v": 2},
        {"seq": -1},
        {"seq": MAX_SEQ + 1},
        {"seq": True},
        {"seq": "12"},
        {"hash": "AB" * 32},
        {"hash": "ab" * 31},
        {"archive": "short"},
        {"archive": "has/slash-0001"},
        {"table": ""},
        {"table": "a/b"},
        {"table": "nul\u0000"},
        {"sig": "x" * 88},
        {"sig": None},
    ],
)
def test_each_bad_field_is_refused(change: dict[str, object]) -> None:
    data = Ack.signed(generate_key(), "archive-0001", "table-1", 12, H).to_dict() | change
    assert parse_ack(json.dumps(data)) is None


def test_signing_refuses_a_seq_out_of_range() -> None:
    for bad in (-1, MAX_SEQ + 1, True):
        with pytest.raises(ValueError, match="an ack is a seq"):
            Ack.signed(generate_key(), "archive-0001", "t", bad, H)
