"""One record size limit: the collector's admission (floor_protocol.admission.MAX_RECORD_BYTES, or serve's
--max-record-bytes) and the pit's intake are the same number, so the pit never refuses a record the archive
keeps (it refused anything over 16 KiB while the archive kept up to 64 KiB)."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

import floor.pit_intake
import floor_protocol.admission
from controller.game.records import TableRecord
from floor.cli import parser as build_parser
from floor.pit_intake import MAX_ALERT_BYTES, Refused, read_alert, read_record
from floor_protocol.admission import DEFAULT_LIMITS, MAX_RECORD_BYTES, Limits, admit_json

ROOT = Path(__file__).resolve().parents[2]

#: A genuine shape, padded: an alarm whose detail is long (the admission and the pit read it whole).
ALARM: dict[str, Any] = {
    "v": 3, "table": "T1", "seq": 7, "kind": "alarm", "at": "2026-11-30T12:00:00.000Z", "session": None,
    "number": None, "cause": 6, "prev": "0" * 64, "hash": "1" * 64,
    "body": {"alarm": "misdraw", "text": "MISDRAW", "detail": ""},
}  # fmt: skip


def alarm_of(size: int) -> bytes:
    """An alarm record of exactly ``size`` bytes."""
    bare = json.dumps(ALARM).encode()
    return json.dumps({**ALARM, "body": {**ALARM["body"], "detail": "x" * (size - len(bare))}}).encode()


def test_the_pit_and_the_archive_read_the_same_limit() -> None:
    assert floor.pit_intake.MAX_RECORD_BYTES is floor_protocol.admission.MAX_RECORD_BYTES
    assert DEFAULT_LIMITS.max_bytes == MAX_RECORD_BYTES
    assert MAX_ALERT_BYTES > MAX_RECORD_BYTES  # an alert carries its record beside a few fields


def test_the_pit_takes_every_record_the_archive_admits_and_refuses_what_it_refuses() -> None:
    for size in (16 * 1024 + 1, MAX_RECORD_BYTES // 2, MAX_RECORD_BYTES):
        payload = alarm_of(size)
        assert len(payload) == size
        TableRecord.from_admitted(admit_json(payload, DEFAULT_LIMITS))  # the collector keeps it ...
        assert read_record(payload, "T1").seq == 7  # ... and the pit shows it
    too_long = alarm_of(MAX_RECORD_BYTES + 1)
    with pytest.raises(Exception, match="-byte cap"):
        admit_json(too_long, DEFAULT_LIMITS)
    with pytest.raises(Refused, match="-byte cap"):
        read_record(too_long, "T1")


def test_an_alert_carrying_the_longest_record_is_taken() -> None:
    record = json.loads(alarm_of(MAX_RECORD_BYTES))
    alert = {"v": 1, "id": 5, "at": "2026-11-30T12:00:00.000Z", "site": "s1", "table": "T1", "seq": 7,
             "kind": "misdraw", "detail": "MISDRAW", "record": record, "extra": {}}  # fmt: skip
    item, dropped = read_alert(json.dumps(alert).encode())
    assert not dropped and item["record"] == record


def test_a_limit_set_for_the_collector_is_the_pits_too() -> None:
    big = 4 * MAX_RECORD_BYTES
    payload = alarm_of(big)
    with pytest.raises(Refused):
        read_record(payload, "T1")
    TableRecord.from_admitted(admit_json(payload, Limits(max_bytes=big)))
    assert read_record(payload, "T1", big).seq == 7
    for command in (
        ["serve", "--broker", "mqtt://b:1883", "--archive", "sqlite:///a.db"],
        ["pit", "--broker", "mqtt://b:1883", "--archive", "x"],
    ):
        assert build_parser().parse_args(command).max_record_bytes == MAX_RECORD_BYTES
        said = build_parser().parse_args([*command, "--max-record-bytes", str(big)])
        assert said.max_record_bytes == big


def test_the_limit_is_stated_once() -> None:
    """Nobody binds another MAX_RECORD_BYTES (a test may read it; only admission says it)."""
    said = []
    for path in sorted(
        p for d in ("controller", "floor", "floor_protocol", "mqttloop") for p in (ROOT / d).rglob("*.py")
    ):
        for node in ast.walk(ast.parse(path.read_text())):
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            said += [
                str(path.relative_to(ROOT)) for t in targets if isinstance(t, ast.Name) and t.id == "MAX_RECORD_BYTES"
            ]
    assert said == ["floor_protocol/admission.py"]
