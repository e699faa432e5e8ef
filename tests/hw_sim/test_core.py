"""The simulator core in memory: whole conversations on a virtual clock, each fault, the truth log."""

from __future__ import annotations

from typing import Any

import pytest

from controller.game.cards import Card
from controller.game.coup import Coup, play_coups
from firmware_protocol.ascii import AsciiCard, AsciiDecoder, LineRejected, encode_card
from firmware_protocol.binary import FrameRejected
from firmware_protocol.messages import Button, ButtonPressed, CardRead, CutCard, Due, Unreadable
from firmware_protocol.session import ControllerSession, LinkDown, LinkEvent, LinkUp, ShoeEvent, ShoeRebooted
from hw_sim.core import ConfigError, DealerMode, Dialect, ShoeSimulator, SimConfig
from hw_sim.faults import Fault, FaultPlan, ScriptedFault
from hw_sim.link import MemoryLink
from hw_sim.shoe import burn_count


def config(**kw: Any) -> SimConfig:
    base: dict[str, Any] = {"decks": 1, "seed": 3, "shoes": 1, "pace": 0.0, "dealer": DealerMode.SELF}
    base.update(kw)
    return SimConfig(**base)


def scripted(*items: tuple[int, str]) -> FaultPlan:
    return FaultPlan(script=tuple(ScriptedFault(at, Fault(name)) for at, name in items))


def converse(sim: ShoeSimulator, limit: float = 600.0) -> tuple[list[ShoeEvent], list[LinkEvent]]:
    """Play an ACK-at-once controller against the simulator until it finishes."""
    link = MemoryLink(sim)
    ctrl = ControllerSession()
    delivered: list[ShoeEvent] = []
    everything: list[LinkEvent] = []
    while not link.finished:
        assert link.now < limit, "the simulator never finished"
        for chunk in link.read():
            for event in ctrl.receive(chunk, link.now):
                everything.append(event)
                if isinstance(event, ShoeEvent):
                    delivered.append(event)
                    link.write(ctrl.acknowledge(event.number, event.key))
        events, out = ctrl.poll(link.now)
        everything.extend(events)
        if out:
            link.write(out)
    return delivered, everything


def cards_of(truth: list[dict[str, Any]], role: str | None = None) -> list[str]:
    return [e["card"] for e in truth if e["event"] == "card" and (role is None or e["role"] == role)]


def without_time(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k != "t"} for e in events]


def test_self_dealer_binary_run_matches_the_truth_and_the_rules() -> None:
    sim = ShoeSimulator(config(shoes=2))
    delivered, _ = converse(sim)
    truth = sim.truth.events
    assert [e.number for e in delivered] == list(range(1, len(delivered) + 1))
    got = [(e.seq, e.message.token) for e in delivered if isinstance(e.message, CardRead)]
    assert got == [(e["seq"], e["card"]) for e in truth if e["event"] == "card"]
    assert [e["event"] for e in truth].count("shoe_start") == 2
    for shoe in (1, 2):
        records = [e for e in truth if e.get("shoe") == shoe and e["event"] == "card"]
        burns = [e["card"] for e in records if e["role"] == "burn"]
        assert len(burns) == 1 + burn_count(Card.parse(burns[0]))
        results, leftover = play_coups([Card.parse(e["card"]) for e in records if e["role"] == "coup"])
        assert leftover == []
        declares = [e for e in truth if e["event"] == "declare" and e["shoe"] == shoe]
        assert [d["coup"] for d in declares] == list(range(1, len(results) + 1))
    buttons = [e.message.button for e in delivered if isinstance(e.message, ButtonPressed)]
    assert buttons.count(Button.NEW_SHOE) == 2
    assert sum(isinstance(e.message, CutCard) for e in delivered) == 2
    assert truth[-1]["event"] == "end" and truth[-1]["reason"] == "all events acknowledged"


def test_same_seed_same_truth_other_seed_other_cards() -> None:
    a = ShoeSimulator(config())
    b = ShoeSimulator(config())
    c = ShoeSimulator(config(seed=4))
    for sim in (a, b, c):
        converse(sim)
    assert without_time(a.truth.events) == without_time(b.truth.events)
    assert cards_of(a.truth.events) != cards_of(c.truth.events)


def test_wire_faults_do_not_change_the_order_of_the_cards() -> None:
    clean = ShoeSimulator(config())
    noisy = ShoeSimulator(config(faults=FaultPlan({Fault.CORRUPT: 0.02, Fault.DUPLICATE: 0.1})))
    converse(clean)
    converse(noisy)
    assert cards_of(clean.truth.events) == cards_of(noisy.truth.events)
    assert noisy.truth.of("fault")


class PromptingController:
    """Just enough of a table controller to drive the prompt dealer: burn, coups by the tableau, declare,
    and SHOE_CLOSED one coup after the cut card."""

    def __init__(self) -> None:
        self.burn_left: int | None = None
        self.coup = Coup()
        self.cut_seen_in: int | None = None
        self.coups = 0

    def on(self, message: object) -> Due | None:
        if isinstance(message, ButtonPressed) and message.button is Button.NEW_SHOE:
            self.burn_left, self.coup, self.cut_seen_in, self.coups = None, Coup(), None, 0
            return Due.BURN
        if isinstance(message, CutCard):
            self.cut_seen_in = self.coups + 1
            return None
        if isinstance(message, CardRead):
            card = Card.parse(message.token)
            if self.burn_left is None:
                self.burn_left = burn_count(card)
                return Due.BURN
            if self.burn_left > 0:
                self.burn_left -= 1
                return Due.BURN if self.burn_left else Due.DEAL
            due = self.coup.deal(card)
            if due is None:
                return Due.NOTHING
            return {"P3": Due.PLAYER_THIRD, "B3": Due.BANKER_THIRD}.get(due.value, Due.DEAL)
        if isinstance(message, ButtonPressed) and message.button is Button.DECLARE:
            if not self.coup.complete:
                return Due.PLAYER_THIRD if self.coup.due and self.coup.due.value == "P3" else Due.BANKER_THIRD
            self.coups += 1
            self.coup = Coup()
            if self.cut_seen_in is not None and self.coups >= self.cut_seen_in + 1:
                return Due.SHOE_CLOSED
            return Due.DEAL
        return None


def test_prompt_dealer_deals_two_shoes_as_the_controller_says() -> None:
    sim = ShoeSimulator(config(shoes=2, dealer=DealerMode.PROMPT))
    link = MemoryLink(sim)
    ctrl = ControllerSession()
    table = PromptingController()
    while not link.finished:
        assert link.now < 600
        for chunk in link.read():
            for event in ctrl.receive(chunk, link.now):
                if isinstance(event, ShoeEvent):
                    link.write(ctrl.acknowledge(event.number, event.key))
                    due = table.on(event.message)
                    if due is not None:
                        link.write(ctrl.prompt(due))
        _, out = ctrl.poll(link.now)
        if out:
            link.write(out)
    truth = sim.truth.events
    ends = [e for e in truth if e["event"] == "shoe_end"]
    assert [e["reason"] for e in ends] == ["shoe closed", "shoe closed"]
    for shoe in (1, 2):
        coup_cards = [
            Card.parse(e["card"]) for e in truth if e["event"] == "card" and e["shoe"] == shoe and e["role"] == "coup"
        ]
        results, leftover = play_coups(coup_cards)
        assert leftover == [] and len(results) == ends[shoe - 1]["coups"]
    assert not cards_of(truth, "misdraw")


def _card_index(truth: list[dict[str, Any]], event: str, n: int) -> dict[str, Any]:
    cards = [e for e in truth if e["event"] in ("card", "unreadable")]
    assert cards[n - 1]["event"] == event
    return cards[n - 1]


def test_unreadable_card_goes_out_as_unreadable_and_is_recorded_with_its_face() -> None:
    sim = ShoeSimulator(config(faults=scripted((10, "unreadable"))))
    delivered, _ = converse(sim)
    record = _card_index(sim.truth.events, "unreadable", 10)
    assert Card.parse(record["card"])
    (event,) = [e for e in delivered if isinstance(e.message, Unreadable)]
    assert event.seq == record["seq"]
    assert record["card"] not in cards_of(sim.truth.events)


def test_foreign_card_is_beyond_the_deck_count() -> None:
    sim = ShoeSimulator(config(faults=scripted((12, "foreign"))))
    delivered, _ = converse(sim)
    record = _card_index(sim.truth.events, "card", 12)
    assert record["role"] == "foreign" and record["detectable"] is True
    tokens = [e.message.token for e in delivered if isinstance(e.message, CardRead)]
    assert tokens.count(record["card"]) == 2  # one deck holds one copy of every face


def test_misdraw_is_a_card_drawn_with_none_due_before_the_declare() -> None:
    sim = ShoeSimulator(config(faults=scripted((12, "misdraw"))))
    converse(sim)
    truth = sim.truth.events
    at = next(i for i, e in enumerate(truth) if e["event"] == "card" and e["role"] == "misdraw")
    assert truth[at + 1]["event"] == "declare" and truth[at + 1]["early"] is False
    assert truth[at - 1]["event"] == "card" and truth[at - 1]["role"] == "coup"


def test_early_declare_comes_while_a_third_card_is_due() -> None:
    sim = ShoeSimulator(config(faults=scripted((8, "early_declare"))))
    converse(sim)
    truth = sim.truth.events
    at = next(i for i, e in enumerate(truth) if e["event"] == "declare" and e["early"])
    coup = [Card.parse(e["card"]) for e in truth[:at] if e["event"] == "card" and e.get("role") == "coup"]
    _, pending = play_coups(coup)
    assert len(pending) >= 4 and Coup.from_cards(pending).due is not None
    assert truth[at + 1]["event"] == "card" and truth[at + 1]["role"] == "coup"


def test_reboot_starts_a_new_session_and_the_controller_sees_it() -> None:
    sim = ShoeSimulator(config(faults=scripted((20, "reboot"))))
    delivered, everything = converse(sim)
    (reboot,) = sim.truth.of("reboot")
    hellos = sim.truth.of("hello")
    assert len(hellos) == 2 and reboot["old_session"] == hellos[0]["session"] != hellos[1]["session"]
    assert any(isinstance(e, ShoeRebooted) and e.new_session == hellos[1]["session"] for e in everything)
    # The card read just before the reboot went out first and its HELLO right behind it (before any ACK):
    # every card reaches the controller, the old session's under the old id (issue 8).
    assert reboot["lost_seqs"]
    truth_cards = [(e["session"], e["seq"]) for e in sim.truth.of("card")]
    got = [(e.session_id, e.seq) for e in delivered if isinstance(e.message, CardRead)]
    assert got == truth_cards


def test_disconnect_goes_silent_then_the_link_recovers_every_card() -> None:
    sim = ShoeSimulator(config(pace=0.05, faults=scripted((20, "disconnect"))))
    delivered, everything = converse(sim)
    kinds = [e["event"] for e in sim.truth.events]
    assert "reconnect" in kinds and kinds.index("reconnect") > kinds.index("fault")
    assert any(isinstance(e, LinkDown) for e in everything)
    assert [type(e) for e in everything if isinstance(e, LinkUp | LinkDown)] == [LinkUp, LinkDown, LinkUp]
    got = [(e.seq, e.message.token) for e in delivered if isinstance(e.message, CardRead)]
    assert got == [(e["seq"], e["card"]) for e in sim.truth.of("card")]


@pytest.mark.parametrize("kind", ["corrupt", "drop", "duplicate", "split"])
def test_scripted_wire_fault_hits_the_frame_of_that_card_and_the_link_recovers(kind: str) -> None:
    sim = ShoeSimulator(config(faults=scripted((15, kind))))
    delivered, everything = converse(sim)
    (fault,) = sim.truth.of("fault")
    assert fault["kind"] == kind and fault["seq"] == _card_index(sim.truth.events, "card", 15)["seq"]
    if kind in ("corrupt", "drop"):
        assert any(isinstance(e, FrameRejected) for e in everything)
    got = [(e.seq, e.message.token) for e in delivered if isinstance(e.message, CardRead)]
    assert got == [(e["seq"], e["card"]) for e in sim.truth.of("card")]


def test_ascii_dialect_one_line_per_card_and_nothing_else() -> None:
    sim = ShoeSimulator(config(dialect=Dialect.ASCII, faults=scripted((5, "unreadable"))))
    link = MemoryLink(sim)
    stream = b""
    while not link.finished:
        stream += b"".join(link.read())
    truth = sim.truth.events
    expected = b""
    for e in truth:
        if e["event"] == "card":
            expected += encode_card(CardRead(int(Card.parse(e["card"]).rank), e["card"][1]))
        elif e["event"] == "unreadable":
            expected += b"??\r\n"
    assert stream == expected
    events = AsciiDecoder().feed(stream)
    assert sum(isinstance(e, LineRejected) for e in events) == 1
    assert [e.card.token for e in events if isinstance(e, AsciiCard)] == cards_of(truth)
    assert sim.truth.of("declare") and sim.truth.of("cut_card")[0]["seq"] is None


def test_without_acks_the_dealer_stops_at_the_window_and_the_run_ends_after_the_linger() -> None:
    sim = ShoeSimulator(config(window=40, linger=5.0))
    sim.start(0.0)
    now = 0.0
    while now < 10.0:
        sim.poll(now)
        assert sim.unacked <= 40 + 1  # a cut card may ride along with its card
        now += 0.1
    assert not sim.finished and sim.dealing_done_at is None
    sim2 = ShoeSimulator(config(linger=5.0, window=250))
    sim2.start(0.0)
    t = 0.0
    while not sim2.finished:
        sim2.poll(t)
        t += 0.5
        assert t < 100
    assert sim2.truth.events[-1]["reason"] == "linger over"


def test_reset_from_the_controller_reboots_the_shoe() -> None:
    sim = ShoeSimulator(config(dealer=DealerMode.PROMPT))
    sim.start(0.0)
    sim.poll(0.0)
    first = sim.session_id
    sim.receive(ControllerSession().reset(), 0.1)
    assert sim.session_id != first
    assert sim.truth.of("reboot")[0]["reason"] == "reset"


def test_nothing_happens_before_power_on() -> None:
    sim = ShoeSimulator(config())
    assert sim.poll(5.0) == [] and sim.next_deadline() is None
    sim.receive(ControllerSession().reset(), 5.0)
    assert sim.truth.events == []


@pytest.mark.parametrize(
    ("kw", "key"),
    [
        ({"decks": 9}, "decks"),
        ({"cut_card": 0}, "cut_card"),
        ({"shoes": 0}, "shoes"),
        ({"pace": -1.0}, "pace"),
        ({"dialect": Dialect.ASCII, "dealer": DealerMode.PROMPT}, "dealer"),
        ({"window": 300}, "window"),
    ],
)
def test_impossible_settings_are_refused_by_name(kw: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError) as info:
        config(**kw)
    assert info.value.key == key


def test_a_stale_deal_ahead_of_the_last_cards_ack_is_no_table_declare() -> None:
    """The table repeats its PROMPT after every commit (a floor ack's too), so a DEAL of the state before the
    coup's 4th card can reach the shoe in the same read as that card's ACK, ahead of it. Judged fresh by the ACK
    behind it, it made the prompt dealer count the coup as declared by the table (auto_declare) and the shoe
    stopped mid-coup (seen in tests/floor/test_floor_faults.py under load). Freshness is judged frame by frame."""
    sim = ShoeSimulator(config(shoes=1, dealer=DealerMode.PROMPT))
    link = MemoryLink(sim)
    ctrl = ControllerSession()
    table = PromptingController()
    stale_sent = False
    coup_cards = 0
    while not link.finished:
        assert link.now < 600
        for chunk in link.read():
            for event in ctrl.receive(chunk, link.now):
                if isinstance(event, ShoeEvent):
                    due = table.on(event.message)
                    out = ctrl.acknowledge(event.number, event.key)
                    if isinstance(event.message, CardRead) and table.burn_left == 0:
                        coup_cards = len(table.coup.player_cards) + len(table.coup.banker_cards)
                    if coup_cards == 4 and not stale_sent:
                        out = ctrl.prompt(Due.DEAL) + out  # the stale DEAL, ahead of the 4th card's ACK
                        stale_sent = True
                    if due is not None:
                        out += ctrl.prompt(due)
                    link.write(out)
        _, out = ctrl.poll(link.now)
        if out:
            link.write(out)
    assert stale_sent
    truth = sim.truth.events
    assert not [e for e in truth if e["event"] == "table_declared"]
    assert [e["reason"] for e in truth if e["event"] == "shoe_end"] == ["shoe closed"]
