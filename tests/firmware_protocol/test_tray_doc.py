"""docs/tray.md and the code cannot drift: the doc's vector tables are exactly what the code renders, its tables
of codes and flags are the code's, and its worked example is what the sessions send."""

from __future__ import annotations

import re
from pathlib import Path

from firmware_protocol import tray_vectors
from firmware_protocol.framing import FrameDecoder, FrameReceived
from firmware_protocol.session import ControllerSession, ShoeEvent, ShoeSession
from firmware_protocol.tray import MAX_BODY, TRAY, TrayFlags, TrayHeartbeat, TrayHello, TrayType

TRAY_DOC = Path(__file__).resolve().parents[2] / "docs" / "tray.md"
HEX_CELL = re.compile(r"`((?:[0-9a-f]{2} )+[0-9a-f]{2})`")


def _doc() -> str:
    return TRAY_DOC.read_text(encoding="utf-8")


def test_the_doc_contains_the_rendered_vector_tables_and_the_example() -> None:
    text = _doc()
    assert tray_vectors.markdown() in text
    assert tray_vectors.example_markdown() in text


def test_every_hex_vector_in_the_doc_is_a_checked_vector() -> None:
    vectors = tray_vectors.FRAMES + tray_vectors.SINGLE + tray_vectors.ON_READER_PORT + tray_vectors.ON_SHOE_PORT
    known = {v.wire for v in vectors} | {step.frame.wire for step in tray_vectors.EXAMPLE}
    found = set(HEX_CELL.findall(_doc()))
    assert found == known, found ^ known


def test_the_type_code_table_is_the_codes_of_the_dialect() -> None:
    rows = re.findall(r"^\| `0x([0-9A-F]{2})` \| (\w+) \| (tray|table) → ", _doc(), flags=re.MULTILINE)
    expected = [(f"{int(code):02X}", code.name, "table" if code >= 0x80 else "tray") for code in TrayType]
    assert rows == expected
    reliable = {TRAY.codes[cls] for cls in TRAY.reliable}
    for code in TrayType:
        row = next(line for line in _doc().splitlines() if line.startswith(f"| `0x{int(code):02X}` |"))
        assert row.rstrip().endswith("| yes |" if code in reliable else "| no |"), row


def test_the_flags_table_is_the_flags_of_the_dialect() -> None:
    rows = re.findall(r"^\| (\d) \| ([A-Z_]+) \| ", _doc(), flags=re.MULTILINE)
    expected = [(str(int(f).bit_length() - 1), f.name) for f in TrayFlags if f is not TrayFlags.NONE]
    assert sorted(rows) == sorted(expected)
    assert "| 6-7 | reserved |" in _doc()


def test_the_doc_states_the_limits_the_code_has() -> None:
    text = _doc()
    assert f"The longest valid body is a TUBE with 100 chips: {MAX_BODY} bytes" in text
    assert "at most 4 code bytes to it and the\n  delimiter one, 815 bytes on the wire" in text
    assert "`settle` seconds (default 2.0)" in text


def test_the_worked_example_is_what_the_sessions_send() -> None:
    """Replay the example: the tray's events at the example's times through ``ShoeSession``, the table's
    commits through ``ControllerSession``. Every frame is the row's; of the heartbeats, the example shows the
    latest one sent at each heartbeat row."""
    first = tray_vectors.EXAMPLE[0].frame.message
    assert isinstance(first, TrayHello)
    tray = ShoeSession(first.session_id, dialect=TRAY, hello=lambda sid: first)
    table = ControllerSession(dialect=TRAY)
    tray.start(0.0)
    sent: list[bytes] = []
    beats: list[bytes] = []
    acks: list[bytes] = []
    delivered: list[ShoeEvent] = []
    for step in tray_vectors.EXAMPLE:
        message = step.frame.message
        if step.sender == "table":
            ack = table.acknowledge(delivered[-1].number, delivered[-1].key)
            acks.append(ack)
            tray.receive(ack, step.at)
            continue
        if not isinstance(message, TrayHello | TrayHeartbeat):
            tray.send(message, step.at)
        data = tray.poll(step.at)
        for event in FrameDecoder(dialect=TRAY).feed(data):
            assert isinstance(event, FrameReceived)
            (beats if isinstance(event.message, TrayHeartbeat) else sent).append(event.raw)
        if isinstance(message, TrayHeartbeat):
            sent.append(beats[-1])
        delivered += [e for e in table.receive(data, step.at) if isinstance(e, ShoeEvent)]
    assert sent == [s.frame.data for s in tray_vectors.EXAMPLE if s.sender == "tray"]
    assert acks == [s.frame.data for s in tray_vectors.EXAMPLE if s.sender == "table"]
    events = [s.frame for s in tray_vectors.EXAMPLE if s.sender == "tray"]
    assert [(e.number, e.message) for e in delivered] == [
        (v.seq, v.message) for v in events if not isinstance(v.message, TrayHeartbeat)
    ]  # each event once, in order, numbered as its row
    assert tray.unacked == 0
