"""The floor's ack payload (floor_protocol.ack): what the collector writes, the table reads back; anything else
is None, never an exception."""

from __future__ import annotations

import pytest

from floor_protocol.ack import MAX_ACK_BYTES, MAX_SEQ, format_ack, parse_ack


def test_the_ack_payload() -> None:
    assert parse_ack(b"12") == 12
    assert parse_ack(b'{"seq": 7}') == 7
    for bad in (b"", b"-1", b"true", b"1.5", b"\xff", b'"3"', b"[1]", b'{"seq": "1"}', b"null"):
        assert parse_ack(bad) is None


@pytest.mark.parametrize("seq", [0, 1, 1234, MAX_SEQ])
def test_what_the_floor_writes_the_table_reads(seq: int) -> None:
    assert parse_ack(format_ack(seq)) == seq


def test_it_is_bounded() -> None:
    assert parse_ack(str(MAX_SEQ + 1).encode()) is None
    assert parse_ack(b" " * MAX_ACK_BYTES + b"1") is None  # not read at all
    assert parse_ack(b"9" * 5000) is None
    for bad in (-1, MAX_SEQ + 1, True, 1.0):
        with pytest.raises(ValueError, match="an ack is a seq"):
            format_ack(bad)  # type: ignore[arg-type]
