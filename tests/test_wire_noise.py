"""The noise budget: a flood of garbage on the shoe's line raises NOISY LINE once, is summarised in the
journal instead of one record per rejected line, cannot halt coup after coup, and clears when the line is
quiet; a card after the flood is dealt normally."""

from __future__ import annotations

import random
from pathlib import Path

from controller.game.cards import Card
from controller.game.records import input_body
from controller.game.table import Alarm, CardDrawn, LineNoise, NewShoePressed, TableRules, TableState
from controller.journal import Journal
from controller.table.loop import LoopConfig, ShoePort, TableLoop, WireBytes
from controller.table.wire import (
    AsciiWire,
    BinaryWire,
    NoiseGate,
    WireEvent,
    WireInput,
    WireLink,
    WireNoiseSummary,
    WireNoisy,
)
from firmware_protocol.binary import encode
from firmware_protocol.messages import Heartbeat
from firmware_protocol.session import ControllerSession

RULES = TableRules(decks=1)


def garbage_lines(rng: random.Random, size: int) -> bytes:
    """Printable junk with a line end every few bytes: what a wrong baud rate looks like on an ASCII shoe."""
    return bytes(rng.choice(b"#$%&XYZqwxyz0123\r\n") for _ in range(size))


def unreadables(events: list[WireEvent]) -> int:
    return sum(1 for e in events if isinstance(e, WireInput) and e.body["kind"] == "unreadable")


def test_a_one_mebibyte_line_is_one_unreadable_card_not_hundreds() -> None:
    wire = AsciiWire()
    flood = b"X" * (1 << 20)
    events: list[WireEvent] = []
    for at in range(0, len(flood), 4096):
        events += wire.receive(flood[at : at + 4096], 0.0)
    events += wire.receive(b"\r\nS9\r\n", 0.0)
    events += wire.poll(0.5)[0]  # one damaged line is not a flood: released after the hold
    assert unreadables(events) == 1
    inputs = [e for e in events if isinstance(e, WireInput)]
    assert inputs[-1].table_input == CardDrawn(Card.parse("9S"))
    assert all(len(e.body.get("raw", "")) <= 128 for e in inputs)  # the record keeps the line's start


def test_an_ascii_flood_is_budgeted_summarised_and_clears_when_quiet() -> None:
    gate = NoiseGate(budget=5, window=1.0, quiet=2.0, summary_every=1.0)
    wire = AsciiWire(noise=gate)
    rng = random.Random(1)
    events: list[WireEvent] = []
    t = 0.0
    while t < 5.0:  # five seconds of junk, 100 reads a second
        events += wire.receive(garbage_lines(rng, 512), t)
        events += wire.poll(t)[0]
        t += 0.01
    assert unreadables(events) == 0  # the first read is already past the budget: a flood, not a card
    assert [e for e in events if isinstance(e, WireNoisy)] == [WireNoisy(True, events_noisy_detail(events))]
    summaries = [e for e in events if isinstance(e, WireNoiseSummary)]
    assert 4 <= len(summaries) <= 5  # one a second, not one per line
    assert sum(s.rejected for s in summaries) > 1000
    while t < 8.0:  # quiet
        events += wire.poll(t)[0]
        t += 0.01
    noisy = [e.noisy for e in events if isinstance(e, WireNoisy)]
    assert noisy == [True, False]
    after = wire.receive(b"HA\r\n", t)
    assert [e.table_input for e in after if isinstance(e, WireInput)] == [CardDrawn(Card.parse("AH"))]


def events_noisy_detail(events: list[WireEvent]) -> str:
    return next(e.detail for e in events if isinstance(e, WireNoisy))


def test_a_binary_flood_raises_noisy_line_once_and_heartbeats_keep_the_link_up() -> None:
    session = ControllerSession(link_timeout=1.0)
    wire = BinaryWire(session, NoiseGate(budget=5, quiet=2.0))
    rng = random.Random(2)
    hello_like = encode(0, Heartbeat(0x1234))
    events: list[WireEvent] = []
    t = 0.0
    while t < 4.0:
        junk = bytes(rng.randrange(256) for _ in range(2048))
        events += wire.receive(junk + b"\x00" + hello_like, t)  # noise, then a good heartbeat
        events += wire.poll(t)[0]
        t += 0.05
    assert [e.noisy for e in events if isinstance(e, WireNoisy)] == [True]
    assert not [e for e in events if isinstance(e, WireLink) and not e.up]


def test_the_loop_journals_a_flood_in_a_few_records_and_noisy_line_survives_a_restart(tmp_path: Path) -> None:
    now = [0.0]
    rng = random.Random(3)
    with Journal.open(tmp_path / "j.db") as journal:
        wire = AsciiWire(noise=NoiseGate(budget=5, quiet=2.0, summary_every=1.0))
        loop = TableLoop(
            TableState(RULES), journal, [ShoePort(wire, lambda b: None)], config=LoopConfig(clock=lambda: now[0])
        )
        while now[0] < 3.0:
            loop.handle(WireBytes(garbage_lines(rng, 4096), now[0]))
            loop._poll()
            loop.flush()
            now[0] += 0.01
        assert Alarm.NOISY_LINE in loop.view().alarms
        assert loop.stats.noise > 10_000
        rows = journal.count()
        assert rows < 20, rows  # NOISY LINE and its alarm, a summary a second
        kinds = [b["kind"] for _id, b in journal.inputs()]
        assert kinds.count("unreadable") == 0
        assert kinds.count("line_noise") == 1
        # a new shoe keeps the alarm (it is about the line, not the game), and so does a restart
        loop._apply(NewShoePressed(), input_body(NewShoePressed()), None, None)
        loop.flush()
        assert Alarm.NOISY_LINE in loop.view().alarms
        restarted = TableLoop(TableState(RULES), journal, [ShoePort(AsciiWire(), lambda b: None)])
        restarted.replay()
        assert Alarm.NOISY_LINE in restarted.view().alarms
        # quiet again: cleared, journaled
        now[0] += 2.5
        loop._poll()
        loop.flush()
        assert Alarm.NOISY_LINE not in loop.view().alarms
        bodies = [b for _id, b in journal.inputs() if b["kind"] in ("line_noise", "noise")]
        assert bodies[-1] == {"kind": "line_noise", "noisy": False, "detail": "no rejected frame or line for 2 s"}
        assert sum(b["rejected"] for b in bodies if b["kind"] == "noise") == loop.stats.noise


def test_line_noise_is_a_replayed_input() -> None:
    state = TableState(RULES)
    state.apply(LineNoise(True))
    assert state.view().alarms == (Alarm.NOISY_LINE,)
    assert input_body(LineNoise(True)) == {"kind": "line_noise", "noisy": True}
    state.apply(LineNoise(False))
    assert state.view().alarms == ()


def test_a_damaged_line_now_and_then_is_still_an_unreadable_card_in_its_place() -> None:
    wire = AsciiWire(noise=NoiseGate(budget=5))
    events = wire.receive(b"H9\r\n", 0.0)
    events += wire.receive(b"S\x1b2\r\n", 1.0)  # damaged: held a moment for the verdict
    events += wire.receive(b"DK\r\n", 1.1)  # behind it, in order
    inputs = [e.body["kind"] for e in events if isinstance(e, WireInput)]
    assert inputs == ["card"]
    events += wire.poll(1.3)[0]
    inputs = [e.body.get("card", e.body["kind"]) for e in events if isinstance(e, WireInput)]
    assert inputs == ["9H", "unreadable", "KD"]


def test_phantom_cards_inside_a_flood_are_not_dealt_but_a_clean_line_after_it_is() -> None:
    wire = AsciiWire(noise=NoiseGate(budget=5))
    junk = b"\x01\x02zz\r\n" * 20
    events = wire.receive(junk + b"H5\r\n" + junk, 0.0)  # a valid-looking card amid garbage
    events += wire.receive(junk, 0.1)
    events += wire.poll(0.5)[0]
    assert [e for e in events if isinstance(e, WireInput)] == []
    assert [e.noisy for e in events if isinstance(e, WireNoisy)] == [True]
    events = wire.receive(b"C8\r\n", 0.6)  # the real shoe, the line still marked noisy
    assert [e.table_input for e in events if isinstance(e, WireInput)] == [CardDrawn(Card.parse("8C"))]


def test_the_stale_rest_of_an_over_long_line_does_not_swallow_the_next_card() -> None:
    wire = AsciiWire()
    events = wire.receive(b"x" * 500, 0.0)  # an over-long line, unfinished: its rest is being dropped
    events += wire.receive(b"HT\r\n", 5.0)  # the shoe, seconds later
    events += wire.poll(5.5)[0]
    cards = [e.table_input for e in events if isinstance(e, WireInput) and e.body["kind"] == "card"]
    assert cards == [CardDrawn(Card.parse("TH"))]
