"""The reliability layer: ShoeSession and ControllerSession talking through a hostile serial line."""

from __future__ import annotations

import itertools
import random
import zlib
from dataclasses import dataclass, field

import pytest

from firmware_protocol.binary import BinaryDecoder, FrameReceived, FrameRejected, RejectReason, encode, encode_body
from firmware_protocol.binary import frame_body as wrap_body
from firmware_protocol.messages import (
    Ack,
    Button,
    ButtonPressed,
    CardRead,
    CutCard,
    Due,
    Heartbeat,
    Hello,
    Prompt,
    Resend,
    Reset,
    ShoeMessage,
    Status,
    StatusFlags,
    Unreadable,
)
from firmware_protocol.session import (
    Acked,
    AcknowledgeAhead,
    ControllerSession,
    DuplicateDropped,
    GapDetected,
    HeartbeatSeen,
    LinkDown,
    LinkEvent,
    LinkUp,
    NotReliable,
    NotStarted,
    PromptReceived,
    ResendRequested,
    ResetRequested,
    SessionJoined,
    ShoeEvent,
    ShoeRebooted,
    ShoeSession,
    WindowFull,
    seq_of,
)

SESSION = 0x0BADCAFE


def frames_of(data: bytes) -> list[bytes]:
    return [part + b"\x00" for part in data.split(b"\x00") if part]


def decoded(data: bytes) -> list[tuple[int, object]]:
    return [(e.seq, e.message) for e in BinaryDecoder().feed(data) if isinstance(e, FrameReceived)]


def shoe_events(events: list[LinkEvent]) -> list[ShoeEvent]:
    return [e for e in events if isinstance(e, ShoeEvent)]


# ---------------------------------------------------------------------------------- a lossy line


@dataclass
class Line:
    """One direction of the serial cable: frames may be lost, duplicated or damaged; bytes arrive late
    and in odd chunks. Seeded, so a failure replays."""

    rng: random.Random
    loss: float = 0.0
    duplicate: float = 0.0
    corrupt: float = 0.0
    delay: float = 0.02
    cut: bool = False  # the cable is unplugged
    queue: list[tuple[float, bytes]] = field(default_factory=list)

    def send(self, data: bytes, now: float) -> None:
        if self.cut:
            return
        for frame in frames_of(data):
            if self.rng.random() < self.loss:
                continue
            copies = 2 if self.rng.random() < self.duplicate else 1
            for _ in range(copies):
                out = bytearray(frame)
                if self.rng.random() < self.corrupt:
                    bit = self.rng.randrange(len(out) * 8)
                    out[bit // 8] ^= 1 << (bit % 8)
                self.queue.append((now + self.delay, bytes(out)))

    def deliver(self, now: float) -> list[bytes]:
        due = b"".join(data for at, data in self.queue if at <= now)
        self.queue = [(at, data) for at, data in self.queue if at > now]
        if not due:
            return []
        cuts = sorted(self.rng.sample(range(1, len(due)), min(3, len(due) - 1))) if len(due) > 1 else []
        bounds = [0, *cuts, len(due)]
        return [due[a:b] for a, b in itertools.pairwise(bounds)]


@dataclass
class Table:
    """A shoe, a controller and the line between them; the controller commits every event at once."""

    shoe: ShoeSession
    controller: ControllerSession
    up: Line
    down: Line
    now: float = 0.0
    step: float = 0.05
    delivered: list[ShoeEvent] = field(default_factory=list)
    link_events: list[LinkEvent] = field(default_factory=list)
    commit: bool = True

    def tick(self) -> None:
        self.up.send(self.shoe.poll(self.now), self.now)
        for chunk in self.up.deliver(self.now):
            for event in self.controller.receive(chunk, self.now):
                self.link_events.append(event)
                if isinstance(event, ShoeEvent):
                    self.delivered.append(event)
                    if self.commit:
                        self.down.send(self.controller.acknowledge(event.number), self.now)
        events, out = self.controller.poll(self.now)
        self.link_events += events
        self.down.send(out, self.now)
        for chunk in self.down.deliver(self.now):
            self.shoe.receive(chunk, self.now)
        self.now += self.step

    def run(self, seconds: float) -> None:
        end = self.now + seconds
        while self.now < end:
            self.tick()


def make_table(seed: int, loss: float = 0.0, duplicate: float = 0.0, corrupt: float = 0.0) -> Table:
    rng = random.Random(seed)
    shoe = ShoeSession(SESSION)
    up = Line(rng, loss=loss, duplicate=duplicate, corrupt=corrupt)
    down = Line(rng, loss=loss, duplicate=duplicate, corrupt=corrupt)
    table = Table(shoe, ControllerSession(), up, down)
    shoe.start(table.now)
    return table


def random_event(rng: random.Random) -> ShoeMessage:
    roll = rng.random()
    if roll < 0.85:
        return CardRead(rng.randint(1, 13), rng.choice("SHDC"))
    if roll < 0.9:
        return Unreadable()
    if roll < 0.93:
        return CutCard()
    if roll < 0.97:
        return ButtonPressed(rng.choice(list(Button)))
    return Status(StatusFlags(rng.randrange(0, 32)))


# ----------------------------------------------------------------------------- the conversation


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_event_delivered_exactly_once_and_in_order_over_a_hostile_line(seed: int) -> None:
    table = make_table(seed, loss=0.05, duplicate=0.05, corrupt=0.05)
    rng = random.Random(seed * 7919)
    sent: list[ShoeMessage] = []
    while len(sent) < 2_000:
        for _ in range(rng.randint(0, 4)):
            if table.shoe.unacked < table.shoe.max_unacked:
                message = random_event(rng)
                table.shoe.send(message, table.now)
                sent.append(message)
        table.tick()
    table.run(30.0)
    assert table.shoe.unacked == 0
    assert [e.number for e in table.delivered] == list(range(1, len(sent) + 2))
    assert [e.message for e in table.delivered][1:] == sent
    assert isinstance(table.delivered[0].message, Hello)
    assert {e.session_id for e in table.delivered} == {SESSION}
    assert all(e.seq == seq_of(e.number) for e in table.delivered)
    kinds = {type(e) for e in table.link_events}
    assert {DuplicateDropped, GapDetected, FrameRejected} <= kinds  # the line really was hostile
    assert not any(isinstance(e, LinkDown) for e in table.link_events)


def test_heartbeats_keep_an_idle_link_up() -> None:
    table = make_table(5)
    table.run(60.0)
    assert table.controller.link_up
    assert [type(e) for e in table.link_events if isinstance(e, LinkUp | LinkDown)] == [LinkUp]
    assert sum(isinstance(e, HeartbeatSeen) for e in table.link_events) >= 59


def test_three_seconds_of_silence_bring_the_link_down_once() -> None:
    table = make_table(6)
    table.run(5.0)
    table.up.cut = True
    cut_at = table.now
    table.run(20.0)
    downs = [e for e in table.link_events if isinstance(e, LinkDown)]
    assert len(downs) == 1
    assert downs[0].silent_for >= 3.0
    assert not table.controller.link_up
    table.up.cut = False
    table.run(2.0)
    assert table.controller.link_up
    assert isinstance(table.link_events[-1], LinkUp | HeartbeatSeen)
    assert cut_at < table.now


def test_a_reboot_is_reported_with_the_new_hello() -> None:
    table = make_table(7)
    for rank in range(1, 6):
        table.shoe.send(CardRead(rank, "H"), table.now)
    table.run(2.0)
    table.up.cut = True  # the last ACK never gets back before the reboot
    table.shoe.send(CardRead(6, "H"), table.now)
    table.run(0.2)
    table.up.cut = False
    table.shoe = ShoeSession(0x00C0FFEE, serial_number="SIM-0002")
    table.shoe.start(table.now)
    table.shoe.send(CardRead(9, "D"), table.now)
    table.run(3.0)
    first, reboot = [e for e in table.link_events if isinstance(e, ShoeRebooted)]
    assert (first.old_session, first.new_session) == (None, SESSION)
    assert (reboot.old_session, reboot.new_session) == (SESSION, 0x00C0FFEE)
    assert reboot.hello.serial_number == "SIM-0002"
    after = table.delivered[table.delivered.index(ShoeEvent(0x00C0FFEE, 1, 1, reboot.hello)) :]
    assert [(e.session_id, e.number, e.message) for e in after] == [
        (0x00C0FFEE, 1, reboot.hello),
        (0x00C0FFEE, 2, CardRead(9, "D")),
    ]
    assert CardRead(6, "H") not in [e.message for e in table.delivered]  # lost with the old session
    assert table.shoe.unacked == 0


def test_reset_request_reaches_the_shoe() -> None:
    table = make_table(8)
    table.run(1.0)
    table.down.send(table.controller.reset(), table.now)
    table.down.send(table.controller.prompt(Due.BANKER_THIRD), table.now)
    received = []
    for _ in range(5):
        table.up.send(table.shoe.poll(table.now), table.now)
        for chunk in table.down.deliver(table.now + 1):
            received += table.shoe.receive(chunk, table.now)
    assert received == [ResetRequested(), PromptReceived(Due.BANKER_THIRD)]


def test_a_restarted_controller_drops_and_reacks_what_its_journal_holds() -> None:
    shoe = ShoeSession(SESSION)
    shoe.start(0.0)
    for rank in range(1, 10):
        shoe.send(CardRead(rank, "S"), 0.0)
    first = ControllerSession()
    burst = shoe.poll(0.0)
    delivered = shoe_events(first.receive(burst, 0.0))
    assert [e.number for e in delivered] == list(range(1, 11))
    for event in delivered:
        first.acknowledge(event.number)  # committed; the ACKs die with the crash
    # the controller restarts from its journal; the shoe still holds all ten and resends them on its timer
    second = ControllerSession(known_session=SESSION, last_number=10)
    events = second.receive(shoe.poll(0.6), 0.6)  # the resent HELLO names the session: it is confirmed
    assert events[0] == LinkUp(SESSION)
    assert not shoe_events(events)
    assert [e.number for e in events if isinstance(e, DuplicateDropped)] == list(range(1, 11))
    _, out = second.poll(0.6)
    assert decoded(out) == [(0, Ack(10))]
    shoe.receive(out, 1.7)
    assert shoe.unacked == 0
    shoe.send(CardRead(13, "S"), 2.0)
    [event] = shoe_events(second.receive(shoe.poll(2.0), 2.0))
    assert (event.number, event.message) == (11, CardRead(13, "S"))


def test_a_gap_asks_for_a_resend_and_holds_later_events_until_it_fills() -> None:
    shoe = ShoeSession(SESSION)
    shoe.start(0.0)
    controller = ControllerSession()
    controller.receive(shoe.poll(0.0), 0.0)
    controller.acknowledge(1)
    for rank in (1, 2, 3):
        shoe.send(CardRead(rank, "C"), 0.1)
    card2, card3, card4 = frames_of(shoe.poll(0.1))
    events = controller.receive(card3 + card4, 0.1)
    assert [type(e) for e in events] == [GapDetected]
    assert events[0] == GapDetected(expected_seq=2, got_seq=3)
    _, out = controller.poll(0.1)
    assert decoded(out)[-1][1] == Resend(2)
    shoe.receive(out, 0.15)
    resent = shoe.poll(0.15)
    assert [m for _, m in decoded(resent)] == [CardRead(1, "C"), CardRead(2, "C"), CardRead(3, "C")]
    _, out = controller.poll(0.7)
    assert decoded(out)[-1][1] == Resend(2)  # repeated while the gap persists
    assert [e.number for e in shoe_events(controller.receive(resent, 0.8))] == [2, 3, 4]
    assert card2
    _, out = controller.poll(2.0)
    assert out == b""


def test_a_heartbeat_ahead_of_the_last_event_reveals_a_gap() -> None:
    shoe = ShoeSession(SESSION, resend_after=5.0)  # no timed resend gets there first
    shoe.start(0.0)
    controller = ControllerSession()
    hello_and_beat = shoe.poll(0.0)
    controller.receive(hello_and_beat, 0.0)
    shoe.send(CardRead(4, "D"), 0.1)
    shoe.poll(0.1)  # lost
    events = controller.receive(shoe.poll(1.0), 1.0)
    assert GapDetected(expected_seq=2, got_seq=2) in events
    assert HeartbeatSeen(SESSION, 2) in events


def test_controller_without_journal_joins_a_running_shoe_from_its_hello() -> None:
    shoe = ShoeSession(SESSION)
    shoe.start(0.0)
    for rank in (1, 2):
        shoe.send(CardRead(rank, "H"), 0.0)
    shoe.poll(0.0)  # nobody listening
    controller = ControllerSession()
    beat = [f for f in frames_of(shoe.poll(1.0)) if isinstance(decoded(f)[0][1], Heartbeat)]
    assert controller.receive(beat[0], 1.0) == [HeartbeatSeen(SESSION, 3)]
    _, out = controller.poll(1.0)
    assert decoded(out) == [(0, Resend(0))]
    shoe.receive(out, 1.0)
    events = controller.receive(shoe.poll(1.0), 1.0)
    rebooted = [e for e in events if isinstance(e, ShoeRebooted)]
    assert rebooted and rebooted[0].old_session is None
    assert [(e.number, type(e.message)) for e in shoe_events(events)] == [(1, Hello), (2, CardRead), (3, CardRead)]


def test_controller_without_journal_joins_mid_session_when_the_hello_is_gone() -> None:
    shoe = ShoeSession(SESSION)
    shoe.start(0.0)
    shoe.poll(0.0)
    shoe.receive(encode(0, Ack(1)), 0.0)  # a previous controller took the HELLO, then lost its journal
    shoe.send(CardRead(8, "C"), 0.0)
    shoe.poll(0.0)
    controller = ControllerSession()
    controller.receive(encode(2, Heartbeat(SESSION)), 1.0)
    _, out = controller.poll(1.0)
    shoe.receive(out, 1.0)
    events = controller.receive(shoe.poll(1.0), 1.0)
    assert events[0] == LinkUp(SESSION)
    assert SessionJoined(SESSION, 2) in events
    assert [(e.number, e.message) for e in shoe_events(events)] == [(2, CardRead(8, "C"))]


def test_events_before_the_session_is_named_are_not_accepted() -> None:
    controller = ControllerSession()
    assert controller.receive(encode(5, CardRead(1, "S")), 0.0) == []
    assert controller.poll(0.5) == ([], b"")
    assert not controller.link_up


def test_sequence_numbers_keep_counting_past_the_wrap() -> None:
    controller = ControllerSession(known_session=SESSION, last_number=65_533)
    controller.receive(encode(65_533, Heartbeat(SESSION)), 0.0)
    data = b"".join(encode(seq, CardRead(1, "H")) for seq in (65_534, 65_535, 1, 2))
    events = shoe_events(controller.receive(data, 0.1))
    assert [(e.seq, e.number) for e in events] == [(65_534, 65_534), (65_535, 65_535), (1, 65_536), (2, 65_537)]
    assert decoded(controller.acknowledge(65_537)) == [(0, Ack(2))]
    # a late resend of seq 65535 is a duplicate, not event 131070
    assert controller.receive(encode(65_535, CardRead(1, "H")), 0.2) == [DuplicateDropped(SESSION, 65_535, 65_535)]


def test_a_whole_conversation_across_the_wrap() -> None:
    shoe = ShoeSession(SESSION, max_unacked=256)
    shoe.start(0.0)
    controller = ControllerSession()
    numbers: list[int] = []
    now = 0.0
    while len(numbers) < 66_000:
        for _ in range(100):
            shoe.send(CardRead(1 + len(numbers) % 13, "S"), now)
        for event in shoe_events(controller.receive(shoe.poll(now), now)):
            numbers.append(event.number)
            ack = controller.acknowledge(event.number)
        shoe.receive(ack, now)
        now += 0.01
    assert numbers == list(range(1, len(numbers) + 1))
    assert shoe.last_seq == seq_of(len(numbers))


def test_unknown_sequenced_type_is_acked_in_turn_and_reported() -> None:
    controller = ControllerSession(known_session=SESSION, last_number=4)
    controller.receive(encode(4, Heartbeat(SESSION)), 0.0)
    card5 = encode(5, CardRead(2, "D"))
    body = bytearray(encode_body(6, Unreadable()))
    body[1] = 0x20  # a type from a later firmware
    body[-4:] = zlib.crc32(bytes(body[:-4])).to_bytes(4, "big")
    unknown6 = wrap_body(bytes(body))
    events = controller.receive(card5 + unknown6, 0.1)
    assert [type(e) for e in events] == [ShoeEvent, FrameRejected]
    assert events[1].reason is RejectReason.UNKNOWN_TYPE  # type: ignore[union-attr]
    _, out = controller.poll(0.1)
    assert out == b""  # event 5 is not committed yet: no ACK may cover it
    assert decoded(controller.acknowledge(5)) == [(0, Ack(6))]
    [event] = shoe_events(controller.receive(encode(7, CutCard()), 0.2))
    assert event.number == 7


def test_acknowledge_refuses_an_event_not_delivered() -> None:
    controller = ControllerSession(known_session=SESSION, last_number=3)
    with pytest.raises(AcknowledgeAhead) as info:
        controller.acknowledge(4)
    assert (info.value.number, info.value.last_number) == (4, 3)


def test_frames_in_the_wrong_direction_are_rejected() -> None:
    controller = ControllerSession()
    [event] = controller.receive(encode(1, Ack(1)), 0.0)
    assert isinstance(event, FrameRejected)
    assert event.reason is RejectReason.WRONG_DIRECTION
    shoe = ShoeSession(SESSION)
    shoe.start(0.0)
    [shoe_side] = shoe.receive(encode(1, CardRead(1, "S")), 0.0)
    assert isinstance(shoe_side, FrameRejected)
    assert shoe_side.reason is RejectReason.WRONG_DIRECTION


# ------------------------------------------------------------------------------- the shoe alone


def test_shoe_starts_with_hello_then_heartbeat() -> None:
    shoe = ShoeSession(SESSION, firmware_version="2.0", serial_number="SH-9")
    assert shoe.next_deadline() is None
    shoe.start(10.0)
    assert shoe.next_deadline() == 10.0
    assert decoded(shoe.poll(10.0)) == [(1, Hello("2.0", "SH-9", 1, SESSION)), (1, Heartbeat(SESSION))]
    assert shoe.next_deadline() == pytest.approx(10.5)  # the HELLO's resend


def test_shoe_resends_everything_unacked_after_half_a_second_in_order() -> None:
    shoe = ShoeSession(SESSION)
    shoe.start(0.0)
    shoe.send(CardRead(3, "S"), 0.0)
    first = shoe.poll(0.0)
    assert shoe.poll(0.4) == b""
    again = shoe.poll(0.5)
    assert [f for f in frames_of(again)][:2] == frames_of(first)[:2]
    shoe.receive(encode(0, Ack(1)), 0.6)
    assert shoe.unacked == 1
    assert [m for _, m in decoded(shoe.poll(1.0))] == [CardRead(3, "S"), Heartbeat(SESSION)]
    shoe.receive(encode(0, Ack(2)), 1.1)
    assert shoe.unacked == 0
    assert shoe.poll(1.9) == b""


def test_shoe_serves_resend_from_a_seq_and_resend_all() -> None:
    shoe = ShoeSession(SESSION)
    shoe.start(0.0)
    for rank in (1, 2, 3):
        shoe.send(CardRead(rank, "D"), 0.0)
    shoe.poll(0.0)
    assert shoe.receive(encode(0, Resend(3)), 0.1) == [ResendRequested(3)]
    assert [s for s, _ in decoded(shoe.poll(0.1))] == [3, 4]
    shoe.receive(encode(0, Resend(0)), 0.2)
    assert [s for s, _ in decoded(shoe.poll(0.2))] == [1, 2, 3, 4]
    assert shoe.receive(encode(0, Ack(9)), 0.3) == [Acked(9)]  # names nothing held: nothing released
    assert shoe.unacked == 4


def test_shoe_refuses_misuse() -> None:
    shoe = ShoeSession(SESSION, max_unacked=3)
    with pytest.raises(NotStarted):
        shoe.send(CardRead(1, "S"), 0.0)
    shoe.start(0.0)
    with pytest.raises(NotReliable):
        shoe.send(Heartbeat(SESSION), 0.0)
    shoe.send(CardRead(1, "S"), 0.0)
    shoe.send(CardRead(2, "S"), 0.0)
    with pytest.raises(WindowFull) as info:
        shoe.send(CardRead(3, "S"), 0.0)
    assert (info.value.held, info.value.limit) == (3, 3)


def test_shoe_reports_prompt_and_reset() -> None:
    shoe = ShoeSession(SESSION)
    shoe.start(0.0)
    assert shoe.receive(encode(7, Prompt(Due.DEAL)) + encode(8, Reset()), 0.0) == [
        PromptReceived(Due.DEAL),
        ResetRequested(),
    ]


def test_a_restarted_controller_waits_for_the_shoe_to_name_its_session() -> None:
    """Frames carry no session id: a CARD before any HELLO or HEARTBEAT might belong to a session the
    journal never saw, so it is not accepted; the heartbeat then names the session and the gap."""
    controller = ControllerSession(known_session=SESSION, last_number=4)
    assert controller.receive(encode(5, CardRead(6, "H")), 0.0) == []
    events = controller.receive(encode(5, Heartbeat(SESSION)), 0.3)
    assert events == [LinkUp(SESSION), HeartbeatSeen(SESSION, 5), GapDetected(expected_seq=5, got_seq=5)]
    _, out = controller.poll(0.3)
    assert decoded(out) == [(0, Resend(5))]
    [event] = shoe_events(controller.receive(encode(5, CardRead(6, "H")), 0.4))
    assert (event.session_id, event.number) == (SESSION, 5)


@pytest.mark.parametrize("seed", [11, 12])
def test_exactly_once_across_controller_restarts_on_a_hostile_line(seed: int) -> None:
    """The controller crashes every few seconds and restarts from its journal (the events it committed):
    the journal still ends up with every event exactly once, in order."""
    table = make_table(seed, loss=0.05, duplicate=0.05, corrupt=0.05)
    rng = random.Random(seed)
    sent: list[ShoeMessage] = []
    while len(sent) < 2_000:
        if table.shoe.unacked < table.shoe.max_unacked:
            for _ in range(rng.randint(0, 3)):
                message = random_event(rng)
                table.shoe.send(message, table.now)
                sent.append(message)
        table.tick()
        if rng.random() < 0.01:  # crash: in-flight ACKs die, the journal survives
            table.down.queue.clear()
            table.controller = ControllerSession(known_session=SESSION, last_number=len(table.delivered))
    table.run(30.0)
    assert [e.number for e in table.delivered] == list(range(1, len(sent) + 2))
    assert [e.message for e in table.delivered][1:] == sent
    assert table.shoe.unacked == 0


# ------------------------------------------------------------- sessions that end behind a card (issue 8)


def test_a_hello_right_behind_a_card_not_yet_committed_is_never_an_error() -> None:
    """Issue 8: a shoe obeying RESET (or rebooting) sends HELLO while the controller is still committing the
    card before it. The old session's card is delivered (the caller journals it); acknowledging it later is
    a no-op, never AcknowledgeAhead, because the shoe no longer holds that session."""
    old = ShoeSession(SESSION)
    old.start(0.0)
    controller = ControllerSession()
    controller.receive(old.poll(0.0), 0.0)
    controller.acknowledge(1)
    old.send(CardRead(4, "D"), 0.1)
    new = ShoeSession(0x00C0FFEE)
    new.start(0.1)
    events = controller.receive(old.poll(0.1) + new.poll(0.1), 0.1)
    card, hello = shoe_events(events)
    assert (card.session_id, card.number, card.message) == (SESSION, 2, CardRead(4, "D"))
    assert (hello.session_id, hello.number) == (0x00C0FFEE, 1)
    assert controller.acknowledge(card.number, card.key) == b""  # committed, but nobody to tell
    assert decoded(controller.acknowledge(hello.number, hello.key)) == [(1, Ack(1))]


def test_a_shoe_that_repeats_its_session_id_at_boot_starts_a_new_session() -> None:
    """Issue 8: a microcontroller with a fixed random seed draws the same id at every boot. Its HELLO must
    start a session (the next epoch of that id), not be taken for a duplicate that re-ACKs a seq the
    rebooted shoe does not hold (which wedged it for good)."""
    table = make_table(11)
    for rank in range(1, 6):
        table.shoe.send(CardRead(rank, "S"), table.now)
    table.run(2.0)
    assert [e.number for e in table.delivered] == [1, 2, 3, 4, 5, 6]
    table.shoe = ShoeSession(SESSION)  # the same id again
    table.shoe.start(table.now)
    for rank in (7, 8):
        table.shoe.send(CardRead(rank, "H"), table.now)
    table.run(3.0)
    assert table.shoe.unacked == 0  # not wedged
    reboots = [e for e in table.link_events if isinstance(e, ShoeRebooted)]
    assert [(r.old_session, r.new_session, r.epoch) for r in reboots] == [(None, SESSION, 0), (SESSION, SESSION, 1)]
    after = [(e.number, e.message, e.epoch) for e in table.delivered[6:]]
    assert after == [(1, reboots[1].hello, 1), (2, CardRead(7, "H"), 1), (3, CardRead(8, "H"), 1)]
    assert len({e.key for e in table.delivered}) == 2  # the journal keeps the two boots apart


def test_a_repeated_id_whose_first_event_matches_the_old_one_is_told_by_the_heartbeat() -> None:
    """The new boot's first event can be byte-identical to the old one's (NEW SHOE pressed both times): the
    HEARTBEAT that follows HELLO names seq 2, below what the old boot had sent, so it is a new boot."""
    table = make_table(12)
    table.shoe.send(ButtonPressed(Button.NEW_SHOE), table.now)
    for rank in range(1, 4):
        table.shoe.send(CardRead(rank, "C"), table.now)
    table.run(2.0)
    table.shoe = ShoeSession(SESSION)
    table.shoe.start(table.now)
    table.shoe.send(ButtonPressed(Button.NEW_SHOE), table.now)
    table.run(3.0)
    assert table.shoe.unacked == 0
    assert [(e.epoch, e.number, e.message) for e in table.delivered[5:]][1:] == [(1, 2, ButtonPressed(Button.NEW_SHOE))]


def test_a_resent_hello_is_still_a_duplicate_when_every_ack_was_lost() -> None:
    """The other reading of a HELLO naming the current session: the shoe still holds it because every ACK
    since was lost. Its resend brings the same frames again: nothing is delivered twice, all is re-ACKed."""
    table = make_table(13)
    table.down.cut = True  # no ACK reaches the shoe
    for rank in range(1, 5):
        table.shoe.send(CardRead(rank, "D"), table.now)
    table.run(2.6)  # several resends of HELLO and the four cards
    table.down.cut = False
    table.run(2.0)
    assert table.shoe.unacked == 0
    assert [e.number for e in table.delivered] == [1, 2, 3, 4, 5]
    assert not [e for e in table.link_events if isinstance(e, ShoeRebooted)][1:]
    assert sum(isinstance(e, DuplicateDropped) for e in table.link_events) >= 10
