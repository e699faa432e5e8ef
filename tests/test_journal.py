"""The journal: append and the duplicate drop, replay order, one transaction per input (SIGKILL safety),
the hash chain's verify, and the refusals at open. Every test uses a real SQLite file in tmp_path."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.game.cards import Card
from controller.game.records import input_body, input_from_body
from controller.game.table import (
    CardDrawn,
    DeclarePressed,
    LinkChanged,
    TableInput,
    TableState,
)
from controller.journal import (
    GENESIS_HASH,
    SCHEMA_VERSION,
    Journal,
    JournalError,
    JournalFault,
    canonical_json,
    record_hash,
)

REPO = Path(__file__).resolve().parents[1]
TS = "2025-03-01T20:15:00.000+00:00"


def coup_body(shoe: int, coup: int, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "shoe": shoe,
        "coup": coup,
        "declared": True,
        "void": False,
        "misdraw": False,
        "dummy_hand": [],
        "player": ["2H", "3S"],
        "banker": ["AD", "KC", "8D"],
        "player_total": 5,
        "banker_total": 9,
        "winner": "banker",
        "natural": False,
        "player_pair": False,
        "banker_pair": False,
    }
    body.update(extra)
    return body


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "journal.db"


TOKENS = ("2H", "3S", "4D", "5C", "6H", "7S", "8D", "9C", "TH", "JS", "QD", "KC", "AH")


def build(path: Path, inputs: int = 6) -> None:
    """A small journal: cards from session 7, a declare with its coup after every fourth card."""
    with Journal.open(path) as j:
        coup = 0
        for n in range(1, inputs + 1):
            j.append({"kind": "card", "card": TOKENS[n % len(TOKENS)]}, session=7, number=n, ts=TS)
            if n % 4 == 0:
                coup += 1
                j.append({"kind": "declare"}, ts=TS, derived=[coup_body(1, coup)])


def raw(path: Path) -> sqlite3.Connection:
    """A plain sqlite3 connection, the way someone editing the file by hand would open it."""
    return sqlite3.connect(path, isolation_level=None)


# ---------------------------------------------------------------------------------------------------------
# append, duplicates, replay


def test_append_returns_ids_and_inputs_replay_in_order(path: Path) -> None:
    with Journal.open(path) as j:
        a = j.append({"kind": "new_shoe"}, ts=TS)
        b = j.append({"kind": "card", "card": "9D"}, session=3, number=1, ts=TS)
        c = j.append({"kind": "link", "up": False}, ts=TS)
        assert (a, b, c) == (1, 2, 3)
        assert list(j.inputs()) == [
            (1, {"kind": "new_shoe"}),
            (2, {"kind": "card", "card": "9D"}),
            (3, {"kind": "link", "up": False}),
        ]
    # survives a reopen, and the chain continues from its head
    with Journal.open(path, create=False) as j:
        assert j.append({"kind": "declare"}, ts=TS) == 4
        assert [rid for rid, _ in j.inputs()] == [1, 2, 3, 4]
        assert j.verify() == []


def test_duplicate_session_number_is_dropped_with_nothing_written(path: Path) -> None:
    with Journal.open(path) as j:
        assert j.append({"kind": "card", "card": "9D"}, session=3, number=1) == 1
        head = j.head()
        # the shoe resends number 1 (its ACK was lost): dropped, and its derived records with it
        resent = j.append({"kind": "card", "card": "9D"}, session=3, number=1, derived=[coup_body(1, 1)])
        assert resent is None
        assert j.count() == 1
        assert j.head() == head
        assert j.coups() == []
        # the same number in another shoe session is a new event
        assert j.append({"kind": "card", "card": "9D"}, session=4, number=1) == 2
        # buttons and link events carry no (session, number) and never collide
        assert j.append({"kind": "declare"}) == 3
        assert j.append({"kind": "declare"}) == 4
        assert j.verify() == []


def test_derived_records_follow_their_input_with_its_ts(path: Path) -> None:
    with Journal.open(path) as j:
        rid = j.append(
            {"kind": "declare"},
            ts=TS,
            derived=[coup_body(2, 5), ("note", {"alarm": "misdraw"})],
        )
        assert rid == 1
        records = list(j.records())
        assert [(r.id, r.kind, r.cause, r.ts) for r in records] == [
            (1, "input", None, TS),
            (2, "coup", 1, TS),
            (3, "note", 1, TS),
        ]
        assert records[1].data() == coup_body(2, 5)
        # derived records are not replayed as inputs
        assert list(j.inputs()) == [(1, {"kind": "declare"})]


def test_a_derived_input_and_bad_arguments_are_refused_and_write_nothing(path: Path) -> None:
    with Journal.open(path) as j:
        with pytest.raises(ValueError, match="cannot be an input"):
            j.append({"kind": "declare"}, derived=[("input", {"kind": "declare"})])
        with pytest.raises(ValueError, match="ISO 8601"):
            j.append({"kind": "declare"}, ts="yesterday")
        with pytest.raises(ValueError, match="float"):
            j.append({"kind": "bet", "amount": float("nan")})
        with pytest.raises(TypeError):
            j.append(["not", "a", "dict"])  # type: ignore[arg-type]
        assert j.count() == 0


def test_default_ts_is_utc_iso8601(path: Path) -> None:
    with Journal.open(path) as j:
        j.append({"kind": "declare"})
        (record,) = j.records()
    assert record.ts.endswith("+00:00")
    assert record.ts[10] == "T"


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
            replayed.apply(input_from_body(body))
    assert replayed.view() == live.view()


inputs_strategy = st.lists(
    st.tuples(
        st.one_of(st.none(), st.integers(1, 3)),  # session
        st.integers(1, 6),  # number
        st.sampled_from(["2H", "KD", "AS", "9C"]),
        st.integers(0, 2),  # derived coups
    ),
    max_size=25,
)


@settings(max_examples=30, deadline=None)
@given(inputs_strategy)
def test_every_event_is_journaled_exactly_once(events: list[tuple[int | None, int, str, int]]) -> None:
    """Property: whatever the shoe resends, each (session, number) is stored once, in arrival order, with
    the derived records of its first arrival; the chain verifies and last_event names the newest."""
    with tempfile.TemporaryDirectory() as tmp, Journal.open(Path(tmp) / "j.db", durable=False) as j:
        expected: list[dict[str, Any]] = []
        seen: set[tuple[int, int]] = set()
        expected_coups = 0
        last: tuple[int, int] | None = None
        for session, number, token, n_derived in events:
            body = {"kind": "card", "card": token, "n": number}
            derived = [coup_body(1, i) for i in range(n_derived)]
            n = number if session is not None else None
            rid = j.append(body, session=session, number=n, derived=derived)
            key = (session, number) if session is not None else None
            if key is not None and key in seen:
                assert rid is None
                continue
            assert rid is not None
            if key is not None:
                seen.add(key)
                last = key
            expected.append(body)
            expected_coups += n_derived
        assert [body for _, body in j.inputs()] == expected
        assert len(j.coups()) == expected_coups
        assert j.last_event() == last
        assert j.verify() == []


# ---------------------------------------------------------------------------------------------------------
# SIGKILL mid-loop: one transaction per input

KILL_CHILD = textwrap.dedent(
    """
    import sys
    from controller.journal import Journal
    j = Journal.open(sys.argv[1])
    n = 0
    while True:
        n += 1
        coup = {"shoe": 1, "coup": n, "player": ["2H"] * 20, "banker": ["3S"] * 20}
        j.append({"kind": "card", "card": "9D", "n": n}, session=1, number=n,
                 derived=[coup, ("note", {"n": n, "pad": "x" * 3000})])
        if n == 50:
            print("ready", flush=True)
    """
)


@pytest.mark.parametrize("extra_appends", [0, 1, 2, 3, 4])
def test_sigkill_mid_loop_leaves_a_whole_last_input(path: Path, extra_appends: int) -> None:
    child = subprocess.Popen([sys.executable, "-c", KILL_CHILD, str(path)], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n"
        # let it run on a little (each round trip is a few more commits), then kill it without warning
        for _ in range(extra_appends):
            with Journal.open(path, read_only=True) as peek:
                peek.count()
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=10)
        if child.stdout is not None:
            child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    with Journal.open(path, create=False) as j:
        assert j.verify() == []
        inputs = list(j.inputs())
        assert len(inputs) >= 50
        assert [body["n"] for _, body in inputs] == list(range(1, len(inputs) + 1))
        records = list(j.records())
        # every input, the last one included, is followed by both of its derived records
        assert len(records) == 3 * len(inputs)
        last_id, _ = inputs[-1]
        assert [(r.kind, r.cause) for r in records[-2:]] == [("coup", last_id), ("note", last_id)]
        assert j.last_event() == (1, len(inputs))
        # and the journal carries on where it stopped
        assert j.append({"kind": "card", "card": "9D"}, session=1, number=len(inputs)) is None
        assert j.append({"kind": "declare"}) == len(records) + 1
        assert j.verify() == []


# ---------------------------------------------------------------------------------------------------------
# verify


def test_an_intact_journal_verifies_clean(path: Path) -> None:
    build(path, 12)
    with Journal.open(path, read_only=True) as j:
        assert j.verify() == []
        head_id, head_hash = j.head()
        assert head_id == j.count() == 12 + 3 + 3  # cards, declares, coups
        records = list(j.records())
        assert records[0].prev_hash == GENESIS_HASH
        assert head_hash == records[-1].hash


def test_the_hash_covers_every_field(path: Path) -> None:
    build(path, 1)
    with Journal.open(path, read_only=True) as j:
        (r,) = j.records()
    assert r.body == canonical_json({"card": "3S", "kind": "card"})
    assert r.hash == record_hash(GENESIS_HASH, 1, TS, "input", 7, 1, None, r.body)
    changed = [
        record_hash(GENESIS_HASH, 2, TS, "input", 7, 1, None, r.body),
        record_hash(GENESIS_HASH, 1, TS.replace("20:15", "20:16"), "input", 7, 1, None, r.body),
        record_hash(GENESIS_HASH, 1, TS, "coup", 7, 1, None, r.body),
        record_hash(GENESIS_HASH, 1, TS, "input", 8, 1, None, r.body),
        record_hash(GENESIS_HASH, 1, TS, "input", 7, 2, None, r.body),
        record_hash(GENESIS_HASH, 1, TS, "input", 7, 1, 1, r.body),
        record_hash(GENESIS_HASH, 1, TS, "input", 7, 1, None, r.body.replace("3S", "3H")),
        record_hash("1" * 64, 1, TS, "input", 7, 1, None, r.body),
    ]
    assert r.hash not in changed


@pytest.mark.parametrize(
    ("sql", "record"),
    [
        ('UPDATE records SET body = \'{"card":"KH","kind":"card"}\' WHERE id = 3', 3),
        ("UPDATE records SET ts = '2025-03-01T21:00:00+00:00' WHERE id = 2", 2),
        ("UPDATE records SET kind = 'note' WHERE id = 4", 4),
        ("UPDATE records SET number = 99 WHERE id = 1", 1),
    ],
    ids=["body", "ts", "kind", "number"],
)
def test_verify_detects_an_altered_record(path: Path, sql: str, record: int) -> None:
    build(path)
    with raw(path) as db:
        db.execute(sql)
    with Journal.open(path, read_only=True) as j:
        problems = j.verify()
    assert problems
    assert any(p.startswith(f"record {record}: altered") for p in problems), problems


def test_verify_detects_a_removed_middle_record(path: Path) -> None:
    build(path)
    with raw(path) as db:
        db.execute("DELETE FROM records WHERE id = 3")
    with Journal.open(path, read_only=True) as j:
        problems = j.verify()
    assert problems == ["record 4: record 3 removed (ids jump from 2 to 4)"]


def test_verify_detects_a_removed_middle_record_with_ids_renumbered(path: Path) -> None:
    build(path)
    with raw(path) as db:
        db.execute("DELETE FROM records WHERE id = 3")
        db.execute("UPDATE records SET id = id - 1 WHERE id > 3")
    with Journal.open(path, read_only=True) as j:
        problems = j.verify()
    assert any("record 3: chain broken" in p for p in problems), problems


def test_verify_detects_a_removed_last_record(path: Path) -> None:
    build(path)
    with raw(path) as db:
        last = db.execute("SELECT max(id) FROM records").fetchone()[0]
        db.execute("DELETE FROM records WHERE id = ?", (last,))
    with Journal.open(path, read_only=True) as j:
        problems = j.verify()
    assert problems == [f"chain head: names record {last} but the last record is {last - 1} (tail removed)"]


def test_verify_detects_a_replaced_last_record(path: Path) -> None:
    """The last record removed and a new one chained in its place by the journal's own hash rule."""
    build(path)
    with raw(path) as db:
        last, prev = db.execute("SELECT id, prev_hash FROM records ORDER BY id DESC LIMIT 1").fetchone()
        body = canonical_json({"kind": "card", "card": "AS"})
        h = record_hash(prev, last, TS, "input", 7, 99, None, body)
        db.execute("UPDATE records SET body = ?, number = 99, hash = ? WHERE id = ?", (body, h, last))
    with Journal.open(path, read_only=True) as j:
        problems = j.verify()
    assert problems == [f"chain head: hash does not match record {last} (last record replaced)"]


def test_verify_detects_two_records_swapped(path: Path) -> None:
    build(path)
    with raw(path) as db:
        db.execute("UPDATE records SET id = -1 WHERE id = 2")
        db.execute("UPDATE records SET id = 2 WHERE id = 3")
        db.execute("UPDATE records SET id = 3 WHERE id = -1")
    with Journal.open(path, read_only=True) as j:
        problems = j.verify()
    assert any(p.startswith("record 2: chain broken") for p in problems), problems
    assert any(p.startswith("record 3: chain broken") for p in problems), problems


def test_verify_detects_two_bodies_swapped(path: Path) -> None:
    build(path)
    with raw(path) as db:
        b2, b3 = (db.execute("SELECT body FROM records WHERE id = ?", (i,)).fetchone()[0] for i in (2, 3))
        assert b2 != b3
        db.execute("UPDATE records SET body = ? WHERE id = 2", (b3,))
        db.execute("UPDATE records SET body = ? WHERE id = 3", (b2,))
    with Journal.open(path, read_only=True) as j:
        problems = j.verify()
    assert problems == [
        "record 2: altered, its hash does not match its contents",
        "record 3: altered, its hash does not match its contents",
    ]


def test_verify_detects_a_coup_moved_to_another_input(path: Path) -> None:
    build(path, 8)
    with raw(path) as db:
        db.execute("UPDATE records SET cause = 1 WHERE kind = 'coup' AND id = (SELECT max(id) FROM records)")
    with Journal.open(path, read_only=True) as j:
        problems = j.verify()
    assert any("derived from input 1" in p for p in problems), problems


# ---------------------------------------------------------------------------------------------------------
# open refuses


def assert_one_line(exc: JournalError, path: Path, *words: str) -> None:
    text = str(exc)
    assert "\n" not in text
    assert str(path) in text
    for word in words:
        assert word in text, text


def test_open_refuses_random_bytes(path: Path) -> None:
    path.write_bytes(os.urandom(8192))
    with pytest.raises(JournalError) as info:
        Journal.open(path)
    assert info.value.fault is JournalFault.DAMAGED
    assert_one_line(info.value, path, "is damaged", "not a database", "surveillance")
    assert path.read_bytes() != b""  # left as it was, for surveillance


def test_open_refuses_a_truncated_journal(path: Path) -> None:
    build(path, 2000)
    with Journal.open(path, create=False) as j:  # fold the WAL into the main file
        j._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.truncate(size // 2)
    for read_only in (False, True):
        with pytest.raises(JournalError) as info:
            Journal.open(path, read_only=read_only)
        assert info.value.fault is JournalFault.DAMAGED
        assert_one_line(info.value, path, "is damaged", "malformed")


def test_open_refuses_a_newer_schema(path: Path) -> None:
    build(path)
    with raw(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(JournalError) as info:
        Journal.open(path)
    assert info.value.fault is JournalFault.NEWER_SCHEMA
    assert_one_line(info.value, path, f"schema version {SCHEMA_VERSION + 1}", "upgrade")


def test_open_refuses_a_database_that_is_not_a_journal(path: Path) -> None:
    with raw(path) as db:
        db.execute("CREATE TABLE bets (amount INTEGER)")
    with pytest.raises(JournalError) as info:
        Journal.open(path)
    assert info.value.fault is JournalFault.NOT_A_JOURNAL
    assert_one_line(info.value, path, "not a shoe-controller journal", "bets")


def test_open_refuses_wrong_tables(path: Path) -> None:
    build(path)
    with raw(path) as db:
        db.execute("DROP TABLE chain_head")
    with pytest.raises(JournalError) as info:
        Journal.open(path)
    assert info.value.fault is JournalFault.DAMAGED
    assert_one_line(info.value, path, "wrong tables", "chain_head missing")


def test_open_does_not_create_directories(tmp_path: Path) -> None:
    path = tmp_path / "no" / "such" / "journal.db"
    with pytest.raises(JournalError) as info:
        Journal.open(path)
    assert info.value.fault is JournalFault.MISSING
    assert_one_line(info.value, path, "does not exist", "does not create directories")
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize("kwargs", [{"create": False}, {"read_only": True}])
def test_open_without_create_refuses_a_missing_file(path: Path, kwargs: dict[str, bool]) -> None:
    with pytest.raises(JournalError) as info:
        Journal.open(path, **kwargs)
    assert info.value.fault is JournalFault.MISSING
    assert_one_line(info.value, path, "does not exist")
    assert not path.exists()


def test_read_only_refuses_to_write_and_sees_the_writers_commits(path: Path) -> None:
    with Journal.open(path) as writer:
        writer.append({"kind": "declare"}, derived=[coup_body(1, 1)])
        with Journal.open(path, read_only=True) as reader:
            with pytest.raises(JournalError) as info:
                reader.append({"kind": "declare"})
            assert info.value.fault is JournalFault.WRITE_FAILED
            writer.append({"kind": "declare"}, derived=[coup_body(1, 2)])
            assert [c["coup"] for c in reader.coups()] == [1, 2]
            assert reader.verify() == []


def test_journal_is_in_wal_mode_with_a_versioned_schema(path: Path) -> None:
    Journal.open(path).close()
    with raw(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


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
