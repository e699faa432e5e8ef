"""Retention: whole old shoes leave the journal, the hash chain stays verifiable from its anchor, nothing the
floor has not acknowledged is ever pruned, and the table replays as before. Real SQLite files throughout."""

from __future__ import annotations

import itertools
import json
import random
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from controller.game.cards import Card, Rank, Suit
from controller.game.records import input_body
from controller.game.table import (
    CardDrawn,
    CutCardOut,
    DeclarePressed,
    Due,
    NewShoePressed,
    TableInput,
    TableRules,
    TableState,
    VoidPressed,
)
from controller.game.wagers import MoneyRules
from controller.journal import PRUNE_NOTE, SCHEMA_VERSION, Journal
from controller.table.loop import LoopConfig, ShoePort, TableLoop
from controller.table.wire import AsciiWire
from tests.console import Result, run_main
from tests.floor_link.floorside import signed_ack

#: With a bet-spot reader's book (idle unless a test feeds it): the reader's link is kept across shoes too.
RULES = TableRules(decks=1, money=MoneyRules(), tray=True)
NOW = datetime.now(UTC).replace(microsecond=0)


def shoe_inputs(rng: random.Random) -> Iterator[TableInput]:
    """One single-deck shoe as a dealer deals it: NEW SHOE, burn, coups, the cut card, to the shoe's end."""
    state = TableState(RULES)
    yield NewShoePressed()
    deck = [Card(rank, suit) for rank in Rank for suit in Suit]
    rng.shuffle(deck)
    cut_at = len(deck) - 14
    dealt = 0
    started = False
    while True:
        due = state.view().due
        event: TableInput
        if due is Due.NEW_SHOE:
            if started:
                return
            event = NewShoePressed()
            started = True
        elif due is Due.DECLARE:
            event = DeclarePressed()
        elif due is Due.VOID:
            event = VoidPressed()
        elif dealt == cut_at and not state.view().cut_card_out:
            event = CutCardOut()
        elif not deck:
            return
        else:
            event = CardDrawn(deck.pop())
            dealt += 1
        state.apply(event)
        if not isinstance(event, NewShoePressed):
            yield event


def build(path: Path, shoe_days: list[int], seed: int = 7) -> tuple[Journal, TableLoop]:
    """A journal of one shoe per entry, each stamped that many days before NOW, dealt through a real loop."""
    journal = Journal.open(path, durable=False)
    stamp: list[str | int] = ["", 0]  # the shoe's day, then a counter

    def wall() -> str:
        stamp[1] = int(stamp[1]) + 1
        return (datetime.fromisoformat(str(stamp[0])) + timedelta(milliseconds=int(stamp[1]))).isoformat()

    loop = TableLoop(TableState(RULES), journal, [ShoePort(AsciiWire(), lambda _b: None)], config=LoopConfig(wall=wall))
    rng = random.Random(seed)
    for days in shoe_days:
        stamp[0] = (NOW - timedelta(days=days)).isoformat()
        for i, event in enumerate(shoe_inputs(rng)):
            loop._apply(event, input_body(event), None, None)
            if i % 5 == 0:
                loop.flush()
        loop.flush()
    return journal, loop


def restarted_view(journal: Journal) -> Any:
    loop = TableLoop(TableState(RULES), journal, [ShoePort(AsciiWire(), lambda _b: None)])
    loop.replay()
    return loop.view()


def test_pruning_old_acknowledged_shoes_keeps_verify_replay_and_history(tmp_path: Path) -> None:
    journal, loop = build(tmp_path / "j.db", [40, 35, 31, 1])
    starts = journal.shoe_starts()
    assert len(starts) == 4
    head = journal.head()
    live = loop.view()
    coups = journal.coups()
    assert journal.prunable(older_than=NOW - timedelta(days=30), ack=None) is None  # no floor ack: nothing
    plan = journal.prunable(older_than=NOW - timedelta(days=30), ack=head[0])
    assert plan == (starts[3], 3)
    before, _shoes = plan
    anchor_hash = next(r.hash for r in journal.records(after=before - 2))
    deleted = journal.prune(before, keep_from_ack=head[0], chunk=50)
    assert deleted == before - 1
    assert journal.anchor() == (before - 1, anchor_hash)
    assert journal.verify() == []
    assert min(r.id for r in journal.records()) == before
    # history: what is left, from the newest shoe's first input (the cards shoe 3 left set aside included)
    assert journal.coups() == [c for c in coups if c["record"] > before]
    assert {c["shoe"] for c in journal.coups()} == {3, 4}
    assert restarted_view(journal) == live
    note = [r.data() for r in journal.records() if r.kind == "note"][-1]
    assert note["note"] == PRUNE_NOTE and note["through"] == before - 1 and note["shoes"] == 3
    journal.close()
    with Journal.open(tmp_path / "j.db", read_only=True) as again:  # and from disk, as `journal verify` does
        assert again.verify() == []
        assert again.anchor() == (before - 1, anchor_hash)


def test_a_shoe_younger_than_the_cutoff_is_kept(tmp_path: Path) -> None:
    journal, _loop = build(tmp_path / "j.db", [40, 10, 5, 1])
    plan = journal.prunable(older_than=NOW - timedelta(days=30), ack=journal.head()[0])
    assert plan == (journal.shoe_starts()[1], 1)
    journal.close()


@pytest.mark.parametrize("seed", range(6))
def test_nothing_unacknowledged_is_ever_pruned(tmp_path: Path, seed: int) -> None:
    journal, _loop = build(tmp_path / "j.db", [50, 45, 40, 35, 1], seed=seed)
    head = journal.head()[0]
    ack = random.Random(seed).randint(1, head)
    plan = journal.prunable(older_than=NOW - timedelta(days=30), ack=ack)
    if plan is not None:
        journal.prune(plan[0], keep_from_ack=ack, chunk=37)
    kept = [r.id for r in journal.records()]
    assert kept == list(range(kept[0], head + (2 if plan else 1)))  # contiguous (and the prune note at the end)
    assert kept[0] - 1 <= ack  # every pruned record was acknowledged
    assert journal.verify() == []
    starts = journal.shoe_starts()
    assert kept[0] == starts[0] or kept[0] == 1  # whole shoes only
    beyond = [s for s in starts if s - 1 > ack and s != starts[-1]]
    if beyond:
        with pytest.raises(ValueError, match="not acknowledged"):
            journal.begin_prune(beyond[0], keep_from_ack=ack)
    journal.close()


def test_the_newest_shoe_and_a_split_shoe_are_refused(tmp_path: Path) -> None:
    journal, _loop = build(tmp_path / "j.db", [40, 35])
    starts = journal.shoe_starts()
    with pytest.raises(ValueError, match="does not start a shoe"):
        journal.begin_prune(starts[1] - 1, keep_from_ack=None)
    with pytest.raises(ValueError, match="newest shoe"):
        journal.begin_prune(journal.head()[0], keep_from_ack=None)
    assert journal.anchor()[0] == 0
    journal.close()


def test_the_link_state_a_replay_reads_survives_its_prune(tmp_path: Path) -> None:
    """A link that went down in an old shoe and stayed down: its input is pruned with its shoe, the prune's
    note carries it, so a replay still shows it."""
    from controller.game.table import LinkChanged

    journal, loop = build(tmp_path / "j.db", [40, 35])
    link_down = LinkChanged(up=False)
    loop._apply(link_down, input_body(link_down), None, None)
    loop.flush()
    link_id = journal.head()[0]
    journal.close()
    journal = Journal.open(tmp_path / "j.db", durable=False)
    loop = TableLoop(TableState(RULES), journal, [ShoePort(AsciiWire(), lambda _b: None)])
    loop.replay()
    for event in shoe_inputs(random.Random(3)):
        loop._apply(event, input_body(event), None, None)
        loop.flush()
    live = loop.view()
    plan = journal.prunable(older_than=NOW + timedelta(days=1), ack=journal.head()[0])
    assert plan is not None and plan[0] == journal.shoe_starts()[-1] > link_id  # the link's input goes too
    journal.prune(plan[0], keep_from_ack=journal.head()[0])
    assert link_id not in {r.id for r in journal.records()}
    assert live.alarms and restarted_view(journal) == live
    journal.close()


def test_a_prune_survives_a_restart_midway(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    journal, loop = build(path, [40, 35, 31, 1])
    live = loop.view()
    ack = journal.head()[0]
    before, _ = journal.prunable(older_than=NOW - timedelta(days=30), ack=ack) or (0, 0)
    journal.begin_prune(before, keep_from_ack=ack)
    assert journal.prune_step(before, limit=40) > 0
    journal.close()
    with Journal.open(path) as journal:  # the daemon restarts with the prune half done
        assert 0 < journal.anchor()[0] < before - 1
        assert journal.verify() == []
        assert restarted_view(journal) == live
        plan = journal.prunable(older_than=NOW - timedelta(days=30), ack=ack)
        assert plan is not None and plan[0] == before
        journal.prune(plan[0], keep_from_ack=ack)
        assert journal.anchor()[0] == before - 1
        journal.append({"kind": "declare"})  # and it writes on from there
        assert journal.verify() == []


@pytest.mark.e2e
def test_a_prune_killed_with_sigkill_leaves_a_verifiable_journal(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    journal, loop = build(path, [40, 35, 31, 1])
    live = loop.view()
    ack = journal.head()[0]
    plan = journal.prunable(older_than=NOW - timedelta(days=30), ack=ack)
    assert plan is not None
    journal.close()
    script = (
        "import sys\n"
        "from controller.journal import Journal\n"
        f"j = Journal.open({str(path)!r})\n"
        f"j.begin_prune({plan[0]}, keep_from_ack={ack})\n"
        "while j.prune_step(%d, limit=3):\n"
        "    print('step', flush=True)\n"
        "print('done', flush=True)\n" % plan[0]
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    for _ in range(5):
        assert proc.stdout.readline().strip() == "step"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    with Journal.open(path) as journal:
        assert journal.anchor()[0] > 0
        assert journal.verify() == []
        assert restarted_view(journal) == live


def test_tampering_after_a_prune_is_still_detected(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    journal, _loop = build(path, [40, 35, 1])
    ack = journal.head()[0]
    before, _ = journal.prunable(older_than=NOW - timedelta(days=30), ack=ack) or (0, 0)
    journal.prune(before, keep_from_ack=ack)
    assert journal.verify() == []
    journal.close()
    db = sqlite3.connect(path)
    victim = before + 3
    body = json.loads(db.execute("SELECT body FROM records WHERE id = ?", (victim,)).fetchone()[0])
    body["tampered"] = True
    db.execute("UPDATE records SET body = ? WHERE id = ?", (json.dumps(body), victim))
    db.commit()
    db.close()
    with Journal.open(path, read_only=True) as journal:
        assert any(f"record {victim}: altered" in p for p in journal.verify())


def test_removing_kept_records_and_moving_the_anchor_is_detected(tmp_path: Path) -> None:
    """Deleting unpruned records and moving the anchor over them (as a prune would) is not a prune."""
    path = tmp_path / "j.db"
    journal, _loop = build(path, [40, 35, 1])
    ack = journal.head()[0]
    before, _ = journal.prunable(older_than=NOW - timedelta(days=30), ack=ack) or (0, 0)
    journal.prune(before, keep_from_ack=ack)
    starts = journal.shoe_starts()
    journal.close()
    db = sqlite3.connect(path)
    cut = starts[-1] + 20
    h = db.execute("SELECT hash FROM records WHERE id = ?", (cut - 1,)).fetchone()[0]
    db.execute("DELETE FROM records WHERE id < ?", (cut,))
    db.execute("UPDATE chain_anchor SET last_id = ?, hash = ?", (cut - 1, h))
    db.commit()
    db.close()
    with Journal.open(path, read_only=True) as journal:
        problems = journal.verify()
    assert any("chain anchor" in p and "no prune note" in p for p in problems), problems


def test_removing_records_without_moving_the_anchor_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    journal, _loop = build(path, [40, 35, 1])
    ack = journal.head()[0]
    before, _ = journal.prunable(older_than=NOW - timedelta(days=30), ack=ack) or (0, 0)
    journal.prune(before, keep_from_ack=ack)
    journal.close()
    db = sqlite3.connect(path)
    db.execute("DELETE FROM records WHERE id < ?", (before + 5,))
    db.commit()
    db.close()
    with Journal.open(path, read_only=True) as journal:
        assert any("removed" in p for p in journal.verify())


def test_a_journal_from_before_retention_opens_and_verifies(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    journal, _loop = build(path, [3])
    journal.close()
    db = sqlite3.connect(path)
    db.execute("DROP TABLE chain_anchor")
    db.execute("PRAGMA user_version = 1")
    db.commit()
    db.close()
    with Journal.open(path, read_only=True) as journal:  # `journal verify` beside an old daemon
        assert journal.anchor()[0] == 0
        assert journal.verify() == []
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone() == (1,)  # a reader changes nothing
    db.close()
    with Journal.open(path) as journal:  # the new daemon adds the anchor
        assert journal.anchor()[0] == 0
        assert journal.verify() == []
    db = sqlite3.connect(path)
    assert db.execute("SELECT last_id FROM chain_anchor").fetchone() == (0,)
    # version 2 now: an older shoe-controller says "newer schema, upgrade" rather than "damaged" after a prune
    assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,) == (2,)
    db.close()


def test_floor_ack_is_none_until_the_table_stores_a_verified_one(tmp_path: Path) -> None:
    journal, _loop = build(tmp_path / "j.db", [3])
    assert journal.floor_ack() is None  # no floor_ack table (no floor link)
    journal._conn.execute("CREATE TABLE floor_ack (one INTEGER PRIMARY KEY CHECK (one = 1), seq INTEGER NOT NULL)")
    assert journal.floor_ack() is None  # table, but no ack yet
    journal._conn.execute("INSERT INTO floor_ack (one, seq) VALUES (1, 42)")
    assert journal.floor_ack() is None  # an ack without an archive id (as 0.2 stored it): not verified
    journal._conn.execute("DROP TABLE floor_ack")
    journal.store_floor_ack(signed_ack(journal, 42))
    assert journal.floor_ack() == 42
    journal._conn.execute("UPDATE floor_ack SET seq = 10000000")
    assert journal.floor_ack() is None  # never beyond what the table wrote: that ack is not of this journal
    journal.close()


# -- shoe-controller journal archive ---------------------------------------------------------------------
REPO = Path(__file__).resolve().parents[2]


def cli(*args: str) -> Result:
    return run_main(["shoe-controller", *args])


def test_archive_writes_old_shoes_then_prunes_them(tmp_path: Path) -> None:
    from controller.game.records import GENESIS_HASH, TableRecord

    path = tmp_path / "j.db"
    journal, loop = build(path, [40, 35, 1])
    live = loop.view()
    before = journal.shoe_starts()[2]
    originals = {r.id: r.hash for r in journal.records()}
    journal.close()
    out = tmp_path / "old.jsonl"
    result = cli("journal", "archive", "--journal", str(path), "--before-days", "30", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert f"archived records 1-{before - 1} (2 shoes)" in result.stdout
    archived = [TableRecord.from_json(line) for line in out.read_text().splitlines()]
    assert [r.seq for r in archived] == list(range(1, before))
    assert archived[0].prev == GENESIS_HASH
    assert all(r.chain_ok() and r.hash == originals[r.seq] for r in archived)
    assert all(b.prev == a.hash for a, b in itertools.pairwise(archived))
    verify = cli("journal", "verify", "--journal", str(path))
    assert verify.returncode == 0 and "intact" in verify.stdout, verify.stdout
    with Journal.open(path) as journal:
        assert journal.anchor() == (before - 1, archived[-1].hash)
        assert restarted_view(journal) == live
    history = cli("history", "--journal", str(path), "--json")
    assert history.returncode == 0
    assert {json.loads(line)["shoe"] for line in history.stdout.splitlines()} <= {2, 3}
    again = cli("journal", "archive", "--journal", str(path), "--before-days", "30", "--out", str(tmp_path / "b"))
    assert again.returncode == 0 and "nothing to archive" in again.stdout
    assert not (tmp_path / "b").exists()


def test_archive_keeps_what_the_floor_has_not_acknowledged(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    journal, _loop = build(path, [40, 35, 33, 1])
    starts = journal.shoe_starts()
    journal.store_floor_ack(signed_ack(journal, starts[2] - 5))  # mid shoe 2
    journal.close()
    out = tmp_path / "old.jsonl"
    result = cli("journal", "archive", "--journal", str(path), "--before-days", "30", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert len(out.read_text().splitlines()) == starts[1] - 1  # shoe 1 only
    with Journal.open(path, read_only=True) as journal:
        assert journal.anchor()[0] == starts[1] - 1
        assert journal.verify() == []


def test_archive_refuses_bad_input_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    journal, _loop = build(path, [40, 1])
    head = journal.head()
    journal.close()
    existing = tmp_path / "exists.jsonl"
    existing.write_text("keep me\n")
    cases = [
        ["--before-days", "30", "--out", str(existing)],
        ["--before-days", "-3", "--out", str(tmp_path / "x")],
        ["--before-days", "30", "--out", str(tmp_path / "no" / "dir" / "x")],
        ["--out", str(tmp_path / "x")],
    ]
    for extra in cases:
        result = cli("journal", "archive", "--journal", str(path), *extra)
        assert result.returncode == 2, (extra, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) <= 2, result.stderr  # argparse: usage + one line
    missing = cli("journal", "archive", "--journal", str(tmp_path / "nope.db"), "--before-days", "1", "--out", "x")
    assert missing.returncode == 2 and len(missing.stderr.strip().splitlines()) == 1, missing.stderr
    assert existing.read_text() == "keep me\n"
    with Journal.open(path, read_only=True) as journal:
        assert journal.anchor()[0] == 0 and journal.head() == head


# -- the daemon's own prune, on the table loop ------------------------------------------------------------
def store_ack(journal: Journal, seq: int) -> None:
    """What the table loop stores once it verified the floor's ack."""
    journal.store_floor_ack(signed_ack(journal, seq))


def test_the_loop_prunes_on_a_verified_ack_only_never_on_a_forged_one(tmp_path: Path) -> None:
    """Before: a forged retained ack at the head was stored without a word and retention pruned shoe 1 (73
    records) that no archive held, and ``journal verify`` still said intact."""
    from controller.journal import Retention
    from controller.table.loop import FloorAck
    from floor_protocol.ack import Ack
    from floor_protocol.signing import generate_key
    from tests.floor_link.floorside import TEST_FLOOR_KEY

    journal, _built = build(tmp_path / "j.db", [40, 35, 1])
    retention = Retention(journal, 30, every=0.0)
    config = LoopConfig(pruner=retention, floor_table="t1", floor_key=TEST_FLOOR_KEY.public_key())
    loop = TableLoop(TableState(RULES), journal, [ShoePort(AsciiWire(), lambda _b: None)], config=config)
    loop.replay()
    head = journal.head()
    genuine = signed_ack(journal, head[0])
    forged = [
        Ack(genuine.archive, "t1", head[0], head[1], "A" * 86 + "=="),  # a signature of zeros
        signed_ack(journal, head[0], key=generate_key()),  # another key
        Ack.signed(TEST_FLOOR_KEY, genuine.archive, "t1", head[0], "ab" * 32),  # the floor's, a wrong hash
        signed_ack(journal, head[0], table="t2"),  # another table's
    ]
    for ack in forged:
        loop.handle(FloorAck(ack))
        loop._prune_step()
        loop._prune_step()
    assert journal.floor_ack_record() is None and journal.anchor()[0] == 0 and retention.pruned == 0
    assert journal.head() == head and journal.verify() == []
    assert dict(loop.ack_refusals.counts) == {"signature": 2, "hash": 1, "table": 1}
    loop.handle(FloorAck(genuine))
    assert journal.floor_ack_record("t1") == genuine
    loop._prune_step()  # plans (writes the note)
    loop._prune_step()  # deletes the first chunk
    assert journal.anchor()[0] > 0
    journal.close()


def test_a_table_without_the_floors_public_key_stores_no_ack(tmp_path: Path) -> None:
    from controller.table.loop import FloorAck

    journal, _built = build(tmp_path / "j.db", [40, 1])
    loop = TableLoop(
        TableState(RULES), journal, [ShoePort(AsciiWire(), lambda _b: None)], config=LoopConfig(floor_table="t1")
    )
    loop.replay()
    loop.handle(FloorAck(signed_ack(journal, journal.head()[0])))
    assert journal.floor_ack() is None and loop.ack_refusals.counts == {"no_key": 1}
    journal.close()


def test_the_loop_prunes_acknowledged_old_shoes_in_small_steps_at_quiet_moments(tmp_path: Path) -> None:
    import threading

    from controller.journal import Retention
    from controller.table.loop import Stop

    path = tmp_path / "j.db"
    journal, loop = build(path, [40, 35, 31, 1])
    live = loop.view()
    store_ack(journal, journal.head()[0])
    target = journal.shoe_starts()[3]
    retention = Retention(journal, 30, chunk=20)
    steps: list[int] = []
    step = retention.step

    def counted(now: float) -> int:
        steps.append(step(now))
        return steps[-1]

    retention.step = counted  # type: ignore[method-assign]
    loop = TableLoop(
        TableState(RULES),
        journal,
        [ShoePort(AsciiWire(), lambda _b: None)],
        config=LoopConfig(pruner=retention, tick=0.01),
    )
    assert loop.replay() > 0 and loop.view() == live  # the table restarted with its retention
    runner = threading.Thread(target=loop.run, name="test-loop")
    runner.start()
    try:
        deadline = datetime.now(UTC) + timedelta(seconds=30)
        while journal.anchor()[0] < target - 1:
            assert datetime.now(UTC) < deadline, "the loop did not prune"
            threading.Event().wait(0.02)
    finally:
        loop.put(Stop())
        runner.join(10)
    assert journal.anchor()[0] == target - 1
    assert max(steps) <= 20 + 8  # bounded work per step: a chunk, rounded up to the next input
    assert journal.verify() == []
    assert restarted_view(journal) == live
    planned = sum(1 for r in journal.records() if r.kind == "note")
    assert planned == 1
    assert retention.step(1e9) == 0 and retention.step(1e9 + 10) == 0  # nothing more to prune, re-planned hourly
    journal.close()


def test_the_loop_never_prunes_without_an_ack_nor_mid_coup(tmp_path: Path) -> None:
    from controller.game.cards import DECK
    from controller.journal import Retention

    journal, _built = build(tmp_path / "j.db", [40, 35, 1])
    retention = Retention(journal, 30, every=0.0)
    loop = TableLoop(
        TableState(RULES), journal, [ShoePort(AsciiWire(), lambda _b: None)], config=LoopConfig(pruner=retention)
    )
    loop.replay()
    loop._prune_step()
    assert journal.anchor()[0] == 0 and retention.pruned == 0  # no floor ack stored: never
    store_ack(journal, journal.head()[0])
    events: list[TableInput] = [NewShoePressed(), *(CardDrawn(c) for c in DECK[:20])]
    for event in events:
        loop._apply(event, input_body(event), None, None)
        if loop.view().player:
            break
    loop.flush()
    assert loop.view().player  # a coup on the table: not a quiet moment
    loop._prune_step()
    loop._prune_step()
    assert journal.anchor()[0] == 0 and not any(r.kind == "note" for r in journal.records())
    loop._apply(VoidPressed(), input_body(VoidPressed()), None, None)  # between coups
    loop.flush()
    assert not loop.view().player and not loop.view().banker
    loop._prune_step()  # plans (writes the note)
    loop._prune_step()  # deletes the first chunk
    assert journal.anchor()[0] > 0
    journal.close()
