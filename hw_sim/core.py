"""The simulator core: shoe + dealer + firmware + faults, driven by an injected clock (sans-I/O).

:class:`ShoeSimulator` is what a real shoe is, minus the wire: the caller gives it the controller's bytes
(:meth:`~ShoeSimulator.receive`) and asks it for the bytes due now (:meth:`~ShoeSimulator.poll`), always
passing ``now`` (seconds from any monotonic origin). It never reads a clock, sleeps, or touches a file:
the command line (:mod:`hw_sim.cli`) runs it against a pty or a TCP socket with ``time.monotonic``, and
tests run it in memory on a virtual clock (:class:`hw_sim.link.MemoryLink`).

Binary dialect: the firmware side is :class:`firmware_protocol.session.ShoeSession` (HELLO, sequence
numbers, resends, heartbeats); a reboot is a new ShoeSession with a new session id drawn from the seeded
generator. ASCII dialect: one line per card, no buttons, no cut-card message, nothing read back.

Three independent generators are derived from ``seed``: the shuffle (``Random(seed)``), the session ids,
and the faults, so turning a fault on does not change the order of the cards.

With players (``SimConfig.money``), a :class:`hw_sim.money.MoneyTable` moves the chips: the core holds
the coup's first card until the players' stacks are down, tells it of each coup card, DECLARE, VOID and the
shoe's end, and makes its spot changes, one step per dealer action, before the dealer's next move; with a
bet-spot reader (:attr:`ShoeSimulator.reader_settled`) that move waits until the table has heard the reader
(as a dealer looks for the table's lights), at most :data:`READER_WAIT` seconds.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from controller.game.cards import Card
from firmware_protocol import ascii as ascii_dialect
from firmware_protocol.binary import FrameReceived, decode_frame
from firmware_protocol.messages import (
    Button,
    ButtonPressed,
    CardRead,
    CutCard,
    Heartbeat,
    ShoeMessage,
    Unreadable,
)
from firmware_protocol.session import PromptReceived, ResetRequested, ShoeSession
from hw_sim.dealer import Action, Draw, EndShoe, Press, PromptDealer, Role, SelfDealer
from hw_sim.device import SessionDevice
from hw_sim.faults import (
    AFTER_CARD_FAULTS,
    BYTE_FAULTS,
    CARD_FAULTS,
    UNIT_FAULTS,
    Fault,
    FaultPlan,
    FaultStage,
    UnitInfo,
)
from hw_sim.money import MoneyConfig, MoneyTable
from hw_sim.shoe import DEFAULT_CUT_FROM_BACK, OrderError, ShoeEmpty, ShoeModel, check_order, validate_shoe
from hw_sim.tray import ChipTray, TrayConfig, default_float
from hw_sim.truth import TruthLog

#: After chips move, the dealer waits at most this long for the table to hear the bet-spot reader ...
READER_WAIT = 2.0
#: ... looking again this often.
READER_CHECK = 0.01
#: What an ASCII shoe sends for a card its reader could not identify.
ASCII_UNREADABLE_LINE = ascii_dialect.encode_line("??")


class Dialect(Enum):
    BINARY = "binary"
    ASCII = "ascii"


class DealerMode(Enum):
    PROMPT = "prompt"  # follow the controller's PROMPT (binary only)
    SELF = "self"  # apply the rules without being told


class ConfigError(ValueError):
    """A simulator setting that cannot work; ``key`` names it."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key}: {reason}")
        self.key = key
        self.reason = reason


@dataclass(frozen=True)
class SimConfig:
    """Everything a run of the software shoe is made of. Validated on construction."""

    dialect: Dialect = Dialect.BINARY
    decks: int = 8
    seed: int = 0
    shoes: int = 1
    pace: float = 1.0  # seconds per dealer action (card or button); 0 = as fast as possible
    dealer: DealerMode | None = None  # None: prompt in the binary dialect, self in the ASCII one
    cut_card: int = DEFAULT_CUT_FROM_BACK  # cards behind the cut card
    faults: FaultPlan = field(default_factory=FaultPlan)
    disconnect_for: float = 4.0  # seconds a `disconnect` fault keeps the line dead (> 3 s link timeout)
    one_more_coup: bool = True  # house rule: after the cut card's coup, one more coup
    window: int = 192  # the self dealer waits while this many events are unacknowledged (binary)
    linger: float | None = None  # after the last shoe: binary waits for ACKs at most this long (None:
    #                              30 s); ASCII keeps the line open this long (None: 0.5 s)
    resend_after: float = 0.5
    heartbeat_every: float = 1.0
    firmware_version: str = "sim-1.0"
    serial_number: str = "SIM-0001"
    repeat_session_id: bool = False  # every boot draws the same id (a fixed-seed firmware; against the spec)
    order: tuple[Card, ...] | None = None  # every shoe's first cards, in this order (the rest shuffled)
    money: MoneyConfig | None = None  # players at the table (hw_sim/money.py); None: cards only, as ever
    key_cards: bool = False  # the prompt dealer keys an unreadable coup card on the dealer screen (hw_sim/dealer.py)
    tray: TrayConfig | None = None  # the dealer's chip tray (hw_sim/tray.py); None: no tray, as ever

    def __post_init__(self) -> None:
        try:
            validate_shoe(self.decks, self.cut_card)
        except ValueError as exc:
            raise ConfigError("decks" if "decks" in str(exc) else "cut_card", str(exc)) from None
        if self.order is not None:
            try:
                check_order(self.order, self.decks)
            except OrderError as exc:
                raise ConfigError("order", str(exc)) from None
        if self.shoes < 1:
            raise ConfigError("shoes", f"at least 1 shoe, not {self.shoes}")
        if self.pace < 0:
            raise ConfigError("pace", f"seconds per card cannot be negative ({self.pace})")
        if self.dialect is Dialect.ASCII and self.dealer is DealerMode.PROMPT:
            raise ConfigError("dealer", "the ASCII dialect has no PROMPT: use the self dealer")
        if not 1 <= self.window <= 250:
            raise ConfigError("window", f"1-250 unacknowledged events, not {self.window}")
        if self.disconnect_for <= 0:
            raise ConfigError("disconnect_for", "must be positive")
        if self.linger is not None and self.linger < 0:
            raise ConfigError("linger", "cannot be negative")
        if self.tray is not None and self.money is None:
            raise ConfigError("tray", "the chip tray needs players at the table (--players N or --bets FILE)")

    @property
    def dealer_mode(self) -> DealerMode:
        if self.dealer is not None:
            return self.dealer
        return DealerMode.PROMPT if self.dialect is Dialect.BINARY else DealerMode.SELF

    @property
    def linger_seconds(self) -> float:
        if self.linger is not None:
            return self.linger
        return 30.0 if self.dialect is Dialect.BINARY else 0.5


def _to_wire(card: Card) -> CardRead:
    return CardRead(int(card.rank), card.suit.value)


def _seqs_back(last: int, count: int) -> list[int]:
    """The ``count`` wire seqs ending at ``last``, oldest first (0 is never used: 1 follows 0xFFFF)."""
    out: list[int] = []
    s = last
    for _ in range(count):
        out.append(s)
        s = s - 1 if s > 1 else 0xFFFF
    return out[::-1]


class ShoeSimulator(SessionDevice):
    """The software shoe's core. ``start`` (power on), then ``receive``/``poll`` with an injected clock."""

    def __init__(self, config: SimConfig, truth: TruthLog | None = None) -> None:
        self.config = config
        self.truth = truth if truth is not None else TruthLog(keep=True)
        self._shuffle_rng = random.Random(config.seed)
        self._session_rng = random.Random(f"{config.seed}:session")
        self._fault_rng = random.Random(f"{config.seed}:faults")
        self.stage = FaultStage(config.faults.rates, random.Random(f"{config.seed}:wire"), self.truth)
        self.binary = config.dialect is Dialect.BINARY
        self.dealer: SelfDealer | PromptDealer = (
            PromptDealer(key_cards=config.key_cards)
            if config.dealer_mode is DealerMode.PROMPT
            else SelfDealer(one_more_coup=config.one_more_coup)
        )
        self.session: ShoeSession | None = None
        self._number = 0  # reliable events sent in this session (HELLO is 1)
        self.shoe: ShoeModel | None = None
        self.shoe_number = 0
        self.cards_in_run = 0
        self.cards_in_shoe = 0
        self.line_seq = 0
        self._lines: list[tuple[bytes, UnitInfo]] = []
        self.started = False
        self.finished = False
        self.dealing_done_at: float | None = None
        self._next_action_at = 0.0
        self._waiting = False
        self._disconnected_until: float | None = None
        self._reboot_pending = False
        self.reboots = 0
        self._held: Action | None = None  # the dealer's next move, waiting for the players' chips
        #: With a bet-spot reader (the command line sets it): whether everything it has to tell the table has
        #: been told and acknowledged. After chips move the dealer's next move waits for it.
        self.reader_settled: Callable[[], bool] | None = None
        self._moved_at: float | None = None
        self.money: MoneyTable | None = (
            MoneyTable(
                config.money,
                config.faults,
                config.seed,
                self.truth,
                reread_after=min(config.money.reread_after, config.pace / 2),  # right again before the next card
                decks=config.decks,
            )
            if config.money is not None
            else None
        )
        if self.money is not None and config.tray is not None:
            t = config.tray
            counts = dict(t.float_counts) if t.float_counts is not None else default_float(self.money.limits)
            self.money.tray = ChipTray(
                counts,
                self.money.chips,
                self.money.registry,
                self.truth,
                config.faults,
                config.seed,
                still=t.still * config.pace,  # scaled by the pace, as the dealer's other moves
                debounce=t.debounce,
                flicker=t.flicker,
            )

    @property
    def tray(self) -> ChipTray | None:
        """The dealer's chip tray (None: no tray)."""
        return self.money.tray if self.money is not None else None

    # -- power, link ---------------------------------------------------------------------------------

    @property
    def disconnected(self) -> bool:
        """The line is dead (a ``disconnect`` fault): nothing goes out, nothing comes in."""
        return self._disconnected_until is not None

    def start(self, now: float) -> None:
        """Power on: boot the firmware (binary) and open the first shoe."""
        if self.started:
            return
        self.started = True
        self.truth.write(
            "start",
            now,
            dialect=self.config.dialect.value,
            decks=self.config.decks,
            seed=self.config.seed,
            shoes=self.config.shoes,
            dealer=self.config.dealer_mode.value,
        )
        if self.tray is not None:
            self.tray.open(now)
        if self.binary:
            self._boot(now)
        self._begin_shoe(now)
        self._next_action_at = now

    def _boot(self, now: float) -> None:
        if self.config.repeat_session_id:
            self._session_rng = random.Random(f"{self.config.seed}:session")  # as from a fixed seed at boot
        sid = self._session_rng.getrandbits(32)
        session = ShoeSession(
            sid,
            firmware_version=self.config.firmware_version,
            serial_number=self.config.serial_number,
            resend_after=self.config.resend_after,
            heartbeat_every=self.config.heartbeat_every,
        )
        session.start(now)
        self.session = session
        self._number = 1
        self.truth.write("hello", now, session=sid, seq=1, number=1)

    def _reboot(self, now: float, reason: str) -> None:
        self.reboots += 1
        if not self.binary:
            self.truth.write("reboot", now, reason=reason)
            return
        old = self.session
        assert old is not None
        lost = _seqs_back(old.last_seq, old.unacked)
        self.truth.write("reboot", now, reason=reason, old_session=old.session_id, lost_seqs=lost)
        self._boot(now)
        if isinstance(self.dealer, PromptDealer):
            self.dealer.forget_prompt()

    # -- input ----------------------------------------------------------------------------------------

    def receive(self, data: bytes, now: float) -> None:
        """Bytes from the controller. Ignored in the ASCII dialect, before power-on, and on a dead line."""
        if not self.started or self.finished or self.disconnected or not self.binary or not data:
            return
        assert self.session is not None
        self._waiting = False
        for event in self._events(data, now):
            if isinstance(event, PromptReceived):
                if isinstance(self.dealer, PromptDealer):
                    self.dealer.on_prompt(event.due, fresh=self.unacked == 0)
                    if self.dealer.take_table_declared():  # auto_declare: the table declared the coup itself
                        coup = self.dealer.coups_declared
                        self.truth.write("table_declared", now, shoe=self.shoe_number, coup=coup)
                        if self.money is not None:
                            self.money.declared(now)
            elif isinstance(event, ResetRequested):
                self._reboot(now, "reset")

    def _events(self, data: bytes, now: float) -> Iterator[object]:
        """The session's events, frame by frame: a PROMPT is judged fresh (``unacked`` 0) by the ACKs that came
        *before* it on the line, not by an ACK later in the same read (a stale DEAL ahead of the last card's
        ACK would otherwise look like a table that declared by itself)."""
        assert self.session is not None
        start = 0
        while start < len(data):
            end = data.find(b"\x00", start)
            end = len(data) if end < 0 else end + 1
            yield from self.session.receive(data[start:end], now)
            start = end

    # -- output ---------------------------------------------------------------------------------------

    def poll(self, now: float) -> list[bytes]:
        """Run the dealer and the firmware up to ``now``; return the chunks to write, in order.

        Chunks are separate only where a ``split`` fault cut a unit (write them with a small pause
        between); otherwise everything due comes as one chunk."""
        if not self.started or self.finished:
            return []
        self.stage.now = now
        if self._disconnected_until is not None and now >= self._disconnected_until:
            self._disconnected_until = None
            self.truth.write("reconnect", now)
        self._run_dealer(now)
        units = self._units(now)
        if self._reboot_pending:
            # The card that preceded the reboot went out first: the new session's HELLO follows right
            # behind it, before the controller can have committed it (issue 8: that must never crash it).
            self._reboot_pending = False
            self._reboot(now, "fault")
            units += self._units(now)
        items: list[bytes] = []
        if self.disconnected:
            for _unit, info in units:
                if info.kind != "Heartbeat":
                    self.truth.write("lost", now, seq=info.seq, unit=info.kind)
        else:
            buf = bytearray()
            for unit, info in units:
                chunks = self.stage(unit, info)
                if len(chunks) == 1:
                    buf += chunks[0]
                    continue
                if buf:
                    items.append(bytes(buf))
                    buf = bytearray()
                items.extend(chunks)
            if buf:
                items.append(bytes(buf))
        self._check_finished(now)
        return items

    def next_deadline(self) -> float | None:
        """When :meth:`poll` next has something to do (None: only input can wake it)."""
        if not self.started or self.finished:
            return None
        times: list[float] = []
        if self.dealing_done_at is None and not self._waiting:
            times.append(self._next_action_at)
        if self._lines:
            times.append(self._next_action_at)
        if self._disconnected_until is not None:
            times.append(self._disconnected_until)
        if self.session is not None:
            d = self.session.next_deadline()
            if d is not None:
                times.append(d)
        if self.dealing_done_at is not None:
            times.append(self.dealing_done_at + self.config.linger_seconds)
        return min(times) if times else None

    def _units(self, now: float) -> list[tuple[bytes, UnitInfo]]:
        if not self.binary:
            units, self._lines = self._lines, []
            return units
        assert self.session is not None
        out = self.session.poll(now)
        units = []
        for frame in out.split(b"\x00")[:-1]:
            wire = frame + b"\x00"
            event = decode_frame(wire)
            if isinstance(event, FrameReceived):
                kind = type(event.message).__name__
                seq = None if isinstance(event.message, Heartbeat) else event.seq
            else:  # cannot happen for our own frames; label it anyway
                kind, seq = "?", None
            units.append((wire, UnitInfo(seq, kind)))
        return units

    def _check_finished(self, now: float) -> None:
        if self.dealing_done_at is None or self.finished:
            return
        if self.binary and self.unacked == 0 and not self.disconnected:
            self._finish(now, "all events acknowledged")
        elif now >= self.dealing_done_at + self.config.linger_seconds:
            self._finish(now, "linger over" if self.binary else "dealt")

    def _finish(self, now: float, why: str) -> None:
        self.finished = True
        self.truth.write("end", now, reason=why, shoes=self.shoe_number, cards=self.cards_in_run, unacked=self.unacked)

    # -- the dealer -----------------------------------------------------------------------------------

    def _run_dealer(self, now: float) -> None:
        budget = 64
        while self.dealing_done_at is None and now >= self._next_action_at and budget and not self._reboot_pending:
            budget -= 1
            money = self.money
            if money is not None and money.busy:
                if self.binary and self.unacked:
                    # the chips move once the table has what the shoe sent (the first card that locked the bets,
                    # the DECLARE that settled them): a late bet before the table's lock would be no late bet
                    self._next_action_at = now + READER_CHECK
                    return
                money.step(now)
                self._next_action_at = now + max(self.config.pace, money.take_pause())
                self._moved_at = now if self._moved_at is None else self._moved_at
                continue
            if self._moved_at is not None and self.reader_settled is not None:
                # the chips moved: the dealer goes on once the table has heard the reader (at most READER_WAIT)
                if not self.reader_settled() and now - self._moved_at < READER_WAIT:
                    self._next_action_at = now + READER_CHECK
                    return
                self._moved_at = None
            if self._held is not None:
                action: Action | None = self._held
                self._held = None
            else:
                action = self._decide()
            if action is None:
                self._waiting = True
                return
            self._waiting = False
            if money is not None and self._money_first(money, action, now):
                self._held = action  # the chips move first; the move follows at the dealer's pace
                continue
            self._perform(action, now)
            self._next_action_at = now + self.config.pace

    def _money_first(self, money: MoneyTable, action: Action, now: float) -> bool:
        """Whether chips must move before ``action``: the wagers before a coup's first card, the commission
        boxes before the shoe ends."""
        if isinstance(action, Draw) and action.role is Role.COUP:
            return money.open_coup(self.dealer.current_coup, now)
        if isinstance(action, EndShoe):
            return money.shoe_ended(now)
        return False

    def _decide(self) -> Action | None:
        if self.binary and self.unacked >= self.config.window:
            return None
        if isinstance(self.dealer, PromptDealer):
            return self.dealer.next_action(ready=self.unacked == 0)
        return self.dealer.next_action()

    def _perform(self, action: Action, now: float) -> None:
        if isinstance(action, Draw):
            self._draw(action.role, now)
        elif isinstance(action, Press):
            seq, number = self._send(ButtonPressed(action.button), now)
            shoe = self.shoe_number
            if action.button is Button.DECLARE:
                coup = self.dealer.current_coup if action.early else self.dealer.coups_declared
                self.truth.write("declare", now, shoe=shoe, coup=coup, early=action.early, seq=seq, number=number)
                if self.money is not None and not action.early:
                    self.money.declared(now)
            else:
                self.truth.write("button", now, shoe=shoe, button=action.button.name, seq=seq, number=number)
                if self.money is not None and action.button is Button.VOID:
                    self.money.voided(now)
        else:
            self._end_shoe(action, now)

    def _begin_shoe(self, now: float) -> None:
        self.shoe_number += 1
        self.cards_in_shoe = 0
        if self.config.order is not None:
            shoe = ShoeModel.ordered(self.config.order, self.config.decks, self._shuffle_rng, self.config.cut_card)
        else:
            shoe = ShoeModel.shuffled(self.config.decks, self._shuffle_rng, self.config.cut_card)
        self.shoe = shoe
        self.truth.write(
            "shoe_start",
            now,
            shoe=self.shoe_number,
            decks=shoe.decks,
            cards=len(shoe.cards),
            cut_card_after=shoe.cut_index,
        )
        if self.money is not None:
            self.money.shoe_started(self.shoe_number)

    def _end_shoe(self, action: EndShoe, now: float) -> None:
        assert self.shoe is not None
        self.truth.write(
            "shoe_end",
            now,
            shoe=self.shoe_number,
            reason=action.reason,
            coups=self.dealer.coups_declared,
            cards=self.cards_in_shoe,
            remaining=self.shoe.remaining,
        )
        if self.shoe_number < self.config.shoes:
            self._begin_shoe(now)
            self.dealer.new_shoe()
        else:
            self.dealing_done_at = now

    def _send(self, message: ShoeMessage, now: float) -> tuple[int | None, int | None]:
        """Put an event on the wire; return its (seq, number): the wire seq and the per-session count in
        the binary dialect, the line number twice in the ASCII one, (None, None) for what ASCII lacks."""
        if self.binary:
            assert self.session is not None
            seq = self.session.send(message, now)
            self._number += 1
            return seq, self._number
        if isinstance(message, CardRead):
            line = ascii_dialect.encode_card(message)
        elif isinstance(message, Unreadable):
            line = ASCII_UNREADABLE_LINE
        else:
            return None, None  # no buttons, no cut card in the ASCII dialect
        self.line_seq += 1
        self._lines.append((line, UnitInfo(self.line_seq, "line")))
        return self.line_seq, self.line_seq

    def _draw(self, role: Role, now: float) -> None:
        shoe = self.shoe
        assert shoe is not None
        if shoe.cut_card_next:
            shoe.take_cut_card()
            seq, number = self._send(CutCard(), now)
            self.truth.write("cut_card", now, shoe=self.shoe_number, after_cards=shoe.position, seq=seq, number=number)
            self.dealer.on_cut_card()
        n_run, n_shoe = self.cards_in_run + 1, self.cards_in_shoe + 1
        faults = self.config.faults.scripted(n_run, self.shoe_number, n_shoe)
        for fault in CARD_FAULTS | AFTER_CARD_FAULTS:
            rate = self.config.faults.rate(fault)
            if rate and fault not in faults and self._fault_rng.random() < rate:
                faults.append(fault)
        faults.sort(key=lambda f: f.value)
        fields: dict[str, Any] = {"shoe": self.shoe_number, "index": n_shoe, "role": role.value}
        if Fault.FOREIGN in faults:
            foreign = shoe.foreign(self._fault_rng)
            card = foreign.card
            fields["role"] = "foreign"
            fields["as"] = role.value
            fields["detectable"] = foreign.detectable
            self.truth.write(
                "fault", now, kind="foreign", card=card.token, detectable=foreign.detectable, at_card=n_run
            )
        else:
            try:
                card = shoe.draw()
            except ShoeEmpty:
                self.truth.write("shoe_empty", now, shoe=self.shoe_number)
                self.dealer.on_empty()
                return
        self.cards_in_run, self.cards_in_shoe = n_run, n_shoe
        if Fault.UNREADABLE in faults:
            self.truth.write("fault", now, kind="unreadable", card=card.token, at_card=n_run)
            seq, number = self._send(Unreadable(), now)
            self._write_card("unreadable", now, card, seq, number, fields)
            self.dealer.on_unreadable(card, role)
        else:
            seq, number = self._send(_to_wire(card), now)
            self._write_card("card", now, card, seq, number, fields)
            self.dealer.on_card(card, role)
        if self.money is not None and role is Role.COUP:
            self.money.on_coup_card(card, now)
        for fault in faults:
            if fault in BYTE_FAULTS | UNIT_FAULTS and seq is not None:
                self.stage.arm(seq, fault)
            elif fault in AFTER_CARD_FAULTS:
                self._after_card(fault, now, n_run)

    def _write_card(
        self, event: str, now: float, card: Card, seq: int | None, number: int | None, fields: dict[str, Any]
    ) -> None:
        record: dict[str, Any] = {"shoe": fields["shoe"], "seq": seq, "card": card.token}
        record.update(fields)
        record["number"] = number
        if self.session is not None:
            record["session"] = self.session.session_id
        self.truth.write(event, now, **record)

    def _after_card(self, fault: Fault, now: float, n_run: int) -> None:
        if fault is Fault.DISCONNECT:
            self._disconnected_until = now + self.config.disconnect_for
            self.truth.write("fault", now, kind="disconnect", seconds=self.config.disconnect_for, at_card=n_run)
        elif fault is Fault.REBOOT:
            self.truth.write("fault", now, kind="reboot", at_card=n_run)
            if self.binary:
                self._reboot_pending = True  # on the next poll, once this card is on the wire
            else:
                self._reboot(now, "fault")
        elif fault is Fault.MISDRAW:
            self.dealer.misdraw_armed = True
            self.truth.write("fault", now, kind="misdraw", at_card=n_run)
        else:
            self.dealer.early_declare_armed = True
            self.truth.write("fault", now, kind="early_declare", at_card=n_run)
