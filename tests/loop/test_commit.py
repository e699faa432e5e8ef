"""The write-ahead commit: inputs staged and committed in one transaction per batch, the ACK held until the
commit passed (one cumulative ACK, the newest session's), the PROMPT after it, retries while the journal is at
fault, a bounded number staged, and the after-commit wakes. A journal and a wire that record what they are
asked (they implement the commit's protocols), then the loop on a real journal."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from controller.game.cards import DECK, Card
from controller.game.records import input_body
from controller.game.table import Alarm, AlarmCleared, AlarmRaised, CardDrawn, Due, Notice, TableRules, TableState
from controller.journal import Journal, JournalError, JournalFault, PendingInput
from controller.table.loop import LoopConfig, ShoePort, TableLoop
from controller.table.loop.commit import WriteAhead
from controller.table.loop.shell_alarms import JournalAlarm
from controller.table.wire import AsciiWire, NoiseGate, WireEvent

RULES = TableRules(decks=1)


class Clock:
    def __init__(self) -> None:
        self.now = 10.0

    def __call__(self) -> float:
        return self.now


class Journaled:
    """A journal that keeps each batch it takes, or refuses it with ``fault`` (nothing kept)."""

    def __init__(self) -> None:
        self.batches: list[list[PendingInput]] = []
        self.fault: JournalFault | None = None
        self.tries = 0

    def append_many(self, inputs: Sequence[PendingInput]) -> list[int | None]:
        self.tries += 1
        if self.fault is not None:
            raise JournalError("journal.db", self.fault, "the disk is full")
        self.batches.append(list(inputs))
        return list(range(1, len(inputs) + 1))


class Shoe:
    """The wire of a shoe that is acknowledged: ACK and PROMPT as readable bytes."""

    reports_link = True

    def __init__(self) -> None:
        self.noise = NoiseGate()

    def receive(self, data: bytes, now: float) -> list[WireEvent]:
        return []

    def acknowledge(self, number: int, session: int | None = None) -> bytes:
        return f"ACK {session}:{number};".encode()

    def prompt(self, due: Due) -> bytes:
        return f"PROMPT {due.value};".encode()

    def poll(self, now: float) -> tuple[list[WireEvent], bytes]:
        return [], b""


class Rig:
    def __init__(self, **options: Any) -> None:
        self.journal = Journaled()
        self.clock = Clock()
        self.written: list[bytes] = []
        self.shown: list[Notice] = []
        self.wakes: list[int] = []
        self.alarm = JournalAlarm()
        self.commit = WriteAhead(
            self.journal,
            Shoe(),
            self.written.append,
            alarm=self.alarm,
            show=self.shown.extend,
            prompt=lambda: Shoe().prompt(Due.DEAL),
            rebuild=lambda: None,
            clock=self.clock,
            wall=lambda: "2026-12-01T08:00:00+00:00",
            after_commit=[lambda: self.wakes.append(len(self.written))],
            **options,
        )

    def card(self, token: str, session: int | None, number: int | None) -> None:
        self.commit.stage(input_body(CardDrawn(Card.parse(token))), session, number, [])

    def kinds(self, batch: int) -> list[str]:
        return [str(p.input_body.get("card", p.input_body.get("event"))) for p in self.journal.batches[batch]]


def test_the_ack_waits_for_the_commit_and_is_one_for_the_highest_event() -> None:
    rig = Rig()
    for token, number in [("9H", 1), ("2S", 3), ("KD", 2)]:
        rig.card(token, 7, number)
    assert rig.written == [] and rig.journal.tries == 0  # staged: nothing committed, nothing acknowledged
    assert rig.commit.flush()
    assert rig.written == [b"ACK 7:3;PROMPT deal;"]  # one write: the cumulative ACK, then what is due
    assert rig.kinds(0) == ["9H", "2S", "KD"]  # one transaction, in order
    assert rig.commit.stats.commits == 1 and rig.commit.stats.inputs == 3
    assert rig.wakes == [1]  # after the ACK was written
    assert not rig.commit.flush() and rig.written == [b"ACK 7:3;PROMPT deal;"]  # nothing staged: nothing sent


def test_a_new_session_takes_the_ack_and_an_unsequenced_input_sends_only_the_prompt() -> None:
    rig = Rig()
    rig.card("9H", 7, 5)
    rig.card("2S", 8, 1)  # the shoe rebooted: its old session's events are journaled, not acknowledged
    rig.commit.flush()
    rig.card("KD", None, None)  # an ASCII card: nothing to acknowledge
    rig.commit.flush()
    assert rig.written == [b"ACK 8:1;PROMPT deal;", b"PROMPT deal;"]


def test_a_refused_commit_acknowledges_nothing_and_is_retried_in_order_after_the_retry_time() -> None:
    rig = Rig(retry=1.0)
    rig.card("9H", 7, 1)
    rig.journal.fault = JournalFault.FULL
    assert not rig.commit.flush()
    assert rig.written == [] and rig.wakes == [] and rig.commit.at_fault
    assert rig.shown == [AlarmRaised(Alarm.JOURNAL_FULL, "the disk is full")]
    rig.card("2S", 7, 2)
    rig.journal.fault = None
    rig.clock.now += 0.5
    assert not rig.commit.flush() and rig.journal.tries == 1  # not before the retry is due
    rig.clock.now += 0.5
    assert rig.commit.flush()
    assert rig.written == [b"ACK 7:2;PROMPT deal;"]
    # the fault's raised record in order with the inputs, the cleared one in the batch that committed
    assert rig.kinds(0) == ["9H", "raised", "2S", "cleared"]
    assert rig.shown[-1] == AlarmCleared(Alarm.JOURNAL_FULL) and not rig.commit.at_fault
    assert rig.commit.stats.journal_faults == 1


def test_at_most_max_staged_inputs_wait_then_an_input_is_refused() -> None:
    rig = Rig(max_staged=2)
    body = input_body(CardDrawn(DECK[0]))
    for number in (1, 2):
        assert not rig.commit.refuse(body)
        rig.card("AS", 7, number)
    assert rig.commit.refuse(body) and rig.commit.refuse(body)
    assert rig.commit.stats.refused == 2 and rig.commit.staged == 2
    rig.commit.flush()
    assert not rig.commit.refuse(body)  # room again once committed


def test_a_duplicate_the_journal_refused_rebuilds_the_state_before_the_ack(tmp_path: Path) -> None:
    """The journal is the truth: an event it already holds (None for its id) makes the loop replay it."""
    with Journal.open(tmp_path / "j.db") as journal:
        loop = TableLoop(TableState(RULES), journal, [ShoePort(AsciiWire(), lambda _data: None)])
        card = CardDrawn(Card.parse("5H"))
        loop._apply(card, input_body(card, seq=1), 0x51, 1)
        loop.flush()
        once = loop.view()
        loop._apply(card, input_body(card, seq=1), 0x51, 1)  # the same event again, missed by the session
        assert loop.view() != once  # applied twice in the live state ...
        loop.flush()
        assert loop.view() == once  # ... rebuilt from the journal: the card counted once
        assert loop.commit.stats.commits == 2


def test_one_commit_per_batch(tmp_path: Path) -> None:
    written: list[bytes] = []
    with Journal.open(tmp_path / "j.db") as journal:
        loop = TableLoop(TableState(RULES), journal, [ShoePort(AsciiWire(), written.append)])
        for token in ["9H", "2S", "KD", "5C"]:
            loop._apply(CardDrawn(DECK[0].parse(token)), {"kind": "card", "card": token}, None, None)
        assert journal.count() == 0  # staged, not yet committed
        loop.flush()
        assert loop.commit.stats.commits == 1
        assert loop.commit.stats.inputs == 4
        assert len(list(journal.inputs())) == 4


def test_after_commit_runs_once_per_commit_that_wrote_and_never_before_it(tmp_path: Path) -> None:
    # The floor link sends a record as soon as it is committed: the loop wakes it after the commit (a wake
    # before it, from the sinks, would find nothing new and the record would wait for the next card).
    with Journal.open(tmp_path / "j.db") as journal:
        heads: list[int] = []
        loop = TableLoop(
            TableState(),
            journal,
            [ShoePort(AsciiWire(), lambda data: None)],
            config=LoopConfig(after_commit=[lambda: heads.append(journal.head()[0])]),
        )
        loop.flush()  # nothing staged: no commit, no wake
        assert heads == []
        for n, token in enumerate(("AS", "KD"), start=1):
            card = CardDrawn(Card.parse(token))
            loop._apply(card, input_body(card), None, None)
            assert len(heads) == n - 1  # applied and shown, not yet committed: no wake
            loop.flush()
            assert len(heads) == n and heads[-1] == journal.head()[0]  # the wake saw its record committed
