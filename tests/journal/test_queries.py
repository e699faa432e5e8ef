"""The journal's domain queries: last event, coups, the inputs a replay reads, the newest input of a kind
and where the newest shoe started, and a record as it leaves the table. Real SQLite files in tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.game.cards import Card
from controller.game.records import InputKind, input_body, input_from_body
from controller.game.table import (
    CardDrawn,
    DeclarePressed,
    LinkChanged,
    TableInput,
    TableState,
)
from controller.journal import (
    Journal,
)
from tests.journal.helpers import TS, coup_body


def test_last_event_overall_and_per_session(path: Path) -> None:
    with Journal.open(path) as j:
        assert j.last_event() is None
        j.append({"kind": "card", "card": "2H"}, session=5, number=1)
        j.append({"kind": "card", "card": "3H"}, session=5, number=2)
        j.append({"kind": "card", "card": "4H"}, session=6, number=1)  # the shoe rebooted
        j.append({"kind": "declare"})  # no number: does not move last_event
        assert j.last_event() == (6, 1)
        assert j.last_event(5) == (5, 2)
        assert j.last_event(9) is None


def test_coups_oldest_first_with_ts_and_record_merged(path: Path) -> None:
    with Journal.open(path) as j:
        for shoe, coup in [(1, 1), (1, 2), (2, 1), (2, 2), (2, 3)]:
            ts = f"2025-03-01T20:{coup:02d}:00+00:00"
            j.append({"kind": "declare"}, ts=ts, derived=[coup_body(shoe, coup)])
        j.note({"text": "shift change"})
        coups = j.coups()
        assert [(c["shoe"], c["coup"]) for c in coups] == [(1, 1), (1, 2), (2, 1), (2, 2), (2, 3)]
        assert coups[0]["record"] == 2 and coups[0]["ts"] == "2025-03-01T20:01:00+00:00"
        assert [(c["shoe"], c["coup"]) for c in j.coups(last=2)] == [(2, 2), (2, 3)]
        assert [(c["shoe"], c["coup"]) for c in j.coups(shoe=1)] == [(1, 1), (1, 2)]
        assert [(c["shoe"], c["coup"]) for c in j.coups(last=1, shoe=1)] == [(1, 2)]
        assert j.coups(shoe=9) == []


def test_replay_through_the_table_rebuilds_the_same_view(path: Path) -> None:
    """What the daemon does after a restart: the replayed table shows what the live one showed."""
    live = TableState()
    events: list[TableInput] = [LinkChanged(up=True)]
    events += [CardDrawn(Card.parse(t)) for t in ("9S", "2H", "3S", "4D", "5C", "6H")]
    events.append(DeclarePressed())
    with Journal.open(path) as j:
        for n, event in enumerate(events, start=1):
            live.apply(event)
            j.append(input_body(event), session=1, number=n)
    replayed = TableState()
    with Journal.open(path, read_only=True) as j:
        for _, body in j.inputs():
            table_input = input_from_body(body)
            assert table_input is not None  # only table inputs were journaled
            replayed.apply(table_input)
    assert replayed.view() == live.view()


def test_every_record_leaves_the_table_checkable_against_its_chain(path: Path) -> None:
    from controller.game.records import RECORD_VERSION, RecordError, TableRecord

    with Journal.open(str(path), create=True) as j:
        j.append({"kind": "card", "card": "QS"}, session=7, number=1, derived=[{"shoe": 1, "coup": 1}])
        j.append({"kind": "declare", "source": "panel"})
        rows = list(j.records())
    out = [r.for_floor("T7") for r in rows]
    assert [r.seq for r in out] == [1, 2, 3] and all(r.chain_ok() for r in out)
    assert [r.prev for r in out[1:]] == [r.hash for r in out[:-1]]  # the chain, link by link
    again = TableRecord.from_json(out[1].to_json())
    assert again == out[1] and again.v == RECORD_VERSION and again.cause == 1
    tampered = TableRecord.from_dict(out[0].to_dict() | {"body": {"kind": "card", "card": "KS"}})
    assert not tampered.chain_ok()
    with pytest.raises(RecordError, match="newer"):
        TableRecord.from_dict(out[0].to_dict() | {"v": RECORD_VERSION + 1})
    with pytest.raises(RecordError, match="seq"):
        TableRecord.from_dict({k: v for k, v in out[0].to_dict().items() if k != "seq"})
    with pytest.raises(RecordError, match="not JSON"):
        TableRecord.from_json(b"\xff{")


def test_last_input_is_the_newest_of_its_kind_before_a_record(path: Path) -> None:
    with Journal.open(path) as j:
        j.append({"kind": "link", "up": False}, ts=TS)  # 1
        j.append({"kind": "line_noise", "noisy": True}, ts=TS)  # 2
        j.append({"kind": "link", "up": True}, ts=TS)  # 3
        j.append({"kind": "card", "card": "2H"}, session=1, number=1, ts=TS)  # 4
        j.append({"kind": "link", "up": False}, ts=TS)  # 5
        assert j.last_input(InputKind.LINK, before=5) == {"kind": "link", "up": True}
        assert j.last_input(InputKind.LINK, before=3) == {"kind": "link", "up": False}
        assert j.last_input(InputKind.LINK, before=6) == {"kind": "link", "up": False}
        assert j.last_input(InputKind.LINK, before=1) is None
        assert j.last_input(InputKind.LINE_NOISE, before=5) == {"kind": "line_noise", "noisy": True}
        assert j.last_input(InputKind.NEW_SHOE, before=6) is None


def test_queries_take_the_vocabularys_kinds_not_strings(path: Path) -> None:
    """A bare string is a kind nobody checked: refused, rather than silently matching nothing on a typo."""
    with Journal.open(path) as j:
        j.append({"kind": "link", "up": False}, ts=TS)
        with pytest.raises(TypeError, match="InputKind"):
            j.last_input("link", before=2)  # type: ignore[arg-type]
        assert j.last_input(InputKind("link"), before=2) == {"kind": "link", "up": False}


def test_shoe_starts_and_the_newest_shoe_start_come_from_the_derived_shoe_records(path: Path) -> None:
    with Journal.open(path) as j:
        assert j.last_shoe_start() is None and j.shoe_starts() == []
        j.append({"kind": "new_shoe"}, ts=TS, derived=[("shoe", {"event": "start", "shoe": 1})])  # 1, 2
        j.append({"kind": "card", "card": "2H"}, ts=TS)  # 3
        j.append({"kind": "card", "card": "3H"}, ts=TS, derived=[("shoe", {"event": "end", "shoe": 1})])  # 4, 5
        j.append({"kind": "new_shoe"}, ts=TS)  # 6: refused by the table (no shoe record): starts nothing
        j.append({"kind": "new_shoe"}, ts=TS, derived=[("shoe", {"event": "start", "shoe": 2})])  # 7, 8
        j.note({"event": "start", "shoe": 9}, ts=TS)  # a note is not a shoe record
        assert j.shoe_starts() == [1, 7]
        assert j.last_shoe_start() == (7, 2)
