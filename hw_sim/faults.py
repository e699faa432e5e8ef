"""Fault injection for the software shoe: which faults exist, how they are planned, and the byte stage.

Faults come by rate (``--fault NAME=RATE``) or at a scripted position (``--script FILE``, JSON Lines such as
``{"at_card": 17, "fault": "misdraw"}``; ``at_card`` counts every card that passed the reader in the run,
burn, foreign and unreadable cards included, from 1; an optional ``"shoe": N`` counts within shoe N only).

The rate's unit depends on the fault (see :data:`UNIT`):

* per byte: ``corrupt`` (the byte is replaced by another value), ``drop`` (the byte is lost);
* per frame (binary) or line (ASCII): ``duplicate`` (sent twice), ``split`` (written in arbitrary chunks
  with small delays between them);
* per card: ``disconnect`` (the line goes dead for a while, then comes back), ``reboot`` (the shoe
  restarts: new session id, its unacknowledged events are lost), ``unreadable`` (the reader cannot
  identify the card), ``foreign`` (a card this shoe cannot contain, see :mod:`hw_sim.shoe`), ``misdraw``
  (the dealer draws a card when none is due, before the next declare), ``early_declare`` (DECLARE is
  pressed while a third card is still due).

* with players at the table (:mod:`hw_sim.money`): the reader's ``dropped_read`` (a read missing a chip,
  then right again), ``duplicate_read`` (a read sent twice) and ``ghost_read`` (a chip also read on the
  neighbouring spot, then right again), per read of a spot holding chips; the players' ``late_bet``
  (chips added to a locked spot: a past-post) and ``pulled_bet`` (chips taken off a locked spot), per seat
  and coup; ``unknown_chip`` (a chip of no range, retired or stolen in a stack placed), per stack; the
  dealer's ``underpay`` and ``overpay`` per winning wager and ``loser_not_taken`` per losing wager;
  ``card_left`` (a leaving player's card left in the seat's reader), per carded player leaving.
* with a chip tray (:mod:`hw_sim.tray`): ``tray_theft`` (a chip palmed from the tray after a coup's payout),
  per coup paid; ``tray_misread`` (a tube report missing a chip) and ``tray_double`` (a chip also reported in the
  neighbouring tube), per tube report, each put right by the next report a moment later.
  These are scripted by coup: ``{"at_coup": 3, "fault": "late_bet", "shoe": 1, "seat": 2}`` (shoe 1 and
  any seat when not given; a fault that finds nothing to hit at that coup, an ``underpay`` at a coup
  without a winner, happens at the first coup of the shoe after it where it can).

A scripted byte fault hits the frame or line that carries card ``at_card`` (exactly one byte for
``corrupt`` and ``drop``).

:class:`FaultStage` is the manipulator between the firmware's output and the transport, in the manner of
pymodbus' NullModem hook: units (frames or lines) in, chunks out, every damage written to the truth log.
It has no I/O and no clock, so it works in memory as well as in front of a pty or a socket.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum

from hw_sim.script_lines import ScriptLineError, script_objects
from hw_sim.truth import TruthLog


class Fault(Enum):
    """The faults the simulator can inject."""

    CORRUPT = "corrupt"
    DROP = "drop"
    DUPLICATE = "duplicate"
    SPLIT = "split"
    DISCONNECT = "disconnect"
    REBOOT = "reboot"
    UNREADABLE = "unreadable"
    FOREIGN = "foreign"
    MISDRAW = "misdraw"
    EARLY_DECLARE = "early_declare"
    # the bet-spot reader and the money at the table (hw_sim/money.py)
    DROPPED_READ = "dropped_read"
    DUPLICATE_READ = "duplicate_read"
    GHOST_READ = "ghost_read"
    LATE_BET = "late_bet"
    PULLED_BET = "pulled_bet"
    UNKNOWN_CHIP = "unknown_chip"
    UNDERPAY = "underpay"
    OVERPAY = "overpay"
    LOSER_NOT_TAKEN = "loser_not_taken"
    # the staff at the table (hw_sim/money.py, ``--dealer-swap``)
    CARD_LEFT = "card_left"  # a leaving player's card stays in the seat's reader (hw_sim/money.py)
    UNKNOWN_BADGE = "unknown_badge"
    WRONG_PIN = "wrong_pin"  # the supervisor types a wrong PIN three times (locked out): the pit manager approves
    # the chip tray (hw_sim/tray.py, ``--tray-link``)
    TRAY_THEFT = "tray_theft"  # after a coup's payout a chip is palmed from the tray
    TRAY_MISREAD = "tray_misread"  # a tube report missing one chip, put right by the next report
    TRAY_DOUBLE = "tray_double"  # one chip also reported in the neighbouring tube for a moment


BYTE_FAULTS = frozenset({Fault.CORRUPT, Fault.DROP})
UNIT_FAULTS = frozenset({Fault.DUPLICATE, Fault.SPLIT})
#: Faults that change the card that passes the reader (decided before the card is drawn).
CARD_FAULTS = frozenset({Fault.UNREADABLE, Fault.FOREIGN})
#: Faults that happen after a card (the link, the firmware, or the dealer's next move).
AFTER_CARD_FAULTS = frozenset({Fault.DISCONNECT, Fault.REBOOT, Fault.MISDRAW, Fault.EARLY_DECLARE})
#: Faults of the bet-spot reader's reads (per read of a spot holding chips).
READ_FAULTS = frozenset({Fault.DROPPED_READ, Fault.DUPLICATE_READ, Fault.GHOST_READ})
#: Faults of the players and the dealer with the chips (scripted by coup, not by card).
MONEY_FAULTS = READ_FAULTS | frozenset(
    {
        Fault.LATE_BET,
        Fault.PULLED_BET,
        Fault.UNKNOWN_CHIP,
        Fault.UNDERPAY,
        Fault.OVERPAY,
        Fault.LOSER_NOT_TAKEN,
        Fault.CARD_LEFT,
    }
)
#: Faults of the staff's badges (``--dealer-swap``), scripted by coup as the money's are.
STAFF_FAULTS = frozenset({Fault.UNKNOWN_BADGE, Fault.WRONG_PIN})
#: Faults of the chip tray (``--tray-link``), scripted by coup as the money's are.
TRAY_FAULTS = frozenset({Fault.TRAY_THEFT, Fault.TRAY_MISREAD, Fault.TRAY_DOUBLE})

UNIT: dict[Fault, str] = (
    {f: "byte" for f in BYTE_FAULTS}
    | {f: "frame" for f in UNIT_FAULTS}
    | {f: "card" for f in CARD_FAULTS | AFTER_CARD_FAULTS}
    | {f: "spot read" for f in READ_FAULTS}
    | {Fault.LATE_BET: "seat and coup", Fault.PULLED_BET: "seat and coup", Fault.UNKNOWN_CHIP: "stack placed"}
    | {Fault.UNDERPAY: "winning wager", Fault.OVERPAY: "winning wager", Fault.LOSER_NOT_TAKEN: "losing wager"}
    | {Fault.CARD_LEFT: "carded player leaving"}
    | {Fault.UNKNOWN_BADGE: "coup (with --dealer-swap)", Fault.WRONG_PIN: "void approved (with --dealer-swap)"}
    | {Fault.TRAY_THEFT: "coup paid (with a tray)", Fault.TRAY_MISREAD: "tube report", Fault.TRAY_DOUBLE: "tube report"}
)


class FaultSpecError(ScriptLineError):
    """A fault rate or script entry that cannot be used; ``where`` names it (argument or file:line)."""


def parse_fault(name: str) -> Fault:
    try:
        return Fault(name.strip().lower().replace("-", "_"))
    except ValueError:
        known = ", ".join(f.value for f in Fault)
        raise FaultSpecError(name, f"unknown fault (known: {known})") from None


def parse_rate(spec: str) -> tuple[Fault, float]:
    """``NAME=RATE`` -> (fault, probability in [0, 1])."""
    name, sep, value = spec.partition("=")
    if not sep:
        raise FaultSpecError(spec, "expected NAME=RATE, e.g. corrupt=0.01")
    fault = parse_fault(name)
    try:
        rate = float(value)
    except ValueError:
        raise FaultSpecError(spec, f"rate {value!r} is not a number") from None
    if not 0.0 <= rate <= 1.0:
        raise FaultSpecError(spec, f"rate {rate} outside 0-1 (a probability per {UNIT[fault]})")
    return fault, rate


@dataclass(frozen=True, slots=True)
class ScriptedFault:
    """One scripted fault: ``fault`` at card number ``at_card`` (of the run, or of shoe ``shoe``); a money
    fault instead at coup ``at_coup`` of shoe ``shoe`` (1 when not given), on seat ``seat`` (any when not
    given), with ``at_card`` 0."""

    at_card: int
    fault: Fault
    shoe: int | None = None
    at_coup: int | None = None
    seat: int | None = None


def parse_script(lines: Iterable[str], source: str = "script") -> list[ScriptedFault]:
    """Parse JSON Lines of scripted faults; blank lines and lines starting with ``#`` are skipped."""
    out: list[ScriptedFault] = []
    example = '{"at_card": 17, "fault": "misdraw"}'
    for where, obj in script_objects(lines, source, FaultSpecError, example):
        name, shoe = obj.get("fault"), obj.get("shoe")
        if not isinstance(name, str):
            raise FaultSpecError(where, "fault must be a fault name")
        try:
            fault = parse_fault(name)
        except FaultSpecError as exc:
            raise FaultSpecError(where, exc.reason) from None
        if shoe is not None and not _whole(shoe):
            raise FaultSpecError(where, "shoe must be a whole number from 1")
        if fault in MONEY_FAULTS | STAFF_FAULTS | TRAY_FAULTS:
            out.append(_money_entry(obj, fault, shoe, where))
            continue
        at = obj.get("at_card")
        if not isinstance(at, int) or not _whole(at):
            raise FaultSpecError(where, "at_card must be a whole number from 1")
        extra = set(obj) - {"at_card", "fault", "shoe"}
        if extra:
            raise FaultSpecError(where, f"unknown key {sorted(extra)[0]!r}")
        out.append(ScriptedFault(at, fault, shoe))
    return out


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _money_entry(obj: dict[str, object], fault: Fault, shoe: object, where: str) -> ScriptedFault:
    """A money fault's script line: ``{"at_coup": 3, "fault": "late_bet", "shoe": 1, "seat": 2}``."""
    at, seat = obj.get("at_coup"), obj.get("seat")
    if not _whole(at):
        raise FaultSpecError(where, f"{fault.value} is scripted by coup: at_coup must be a whole number from 1")
    if seat is not None and not _whole(seat):
        raise FaultSpecError(where, "seat must be a whole number from 1")
    extra = set(obj) - {"at_coup", "fault", "shoe", "seat"}
    if extra:
        raise FaultSpecError(where, f"unknown key {sorted(extra)[0]!r}")
    assert isinstance(at, int)
    return ScriptedFault(
        0,
        fault,
        shoe if isinstance(shoe, int) else 1,
        at_coup=at,
        seat=seat if isinstance(seat, int) else None,
    )


@dataclass(frozen=True)
class FaultPlan:
    """Every fault of a run: rates by fault, and scripted positions."""

    rates: Mapping[Fault, float] = field(default_factory=dict)
    script: tuple[ScriptedFault, ...] = ()

    def rate(self, fault: Fault) -> float:
        return self.rates.get(fault, 0.0)

    def scripted(self, card_in_run: int, shoe: int, card_in_shoe: int) -> list[Fault]:
        """The scripted faults that concern this card."""
        return [
            s.fault
            for s in self.script
            if s.at_coup is None
            and ((s.shoe is None and s.at_card == card_in_run) or (s.shoe == shoe and s.at_card == card_in_shoe))
        ]

    def scripted_money(self) -> tuple[ScriptedFault, ...]:
        """The scripted money faults (by coup)."""
        return tuple(s for s in self.script if s.at_coup is not None)


@dataclass(frozen=True, slots=True)
class UnitInfo:
    """What a unit on the wire carries, for the truth log: a frame's seq and type, or a line's number."""

    seq: int | None
    kind: str


class FaultStage:
    """The manipulator between the firmware's output and the transport.

    ``stage(unit, info)`` takes one frame (binary) or one line (ASCII) and returns the chunks to write:
    usually one; several when the unit is split (the transport pauses briefly between chunks); the
    unit twice when duplicated; damaged bytes when corrupted or dropped. Every change is written to the
    truth log as a ``fault`` event carrying the unit's seq and the bytes actually sent (``sent``, hex).
    :meth:`arm` schedules a scripted fault for the next unit with a given seq.
    """

    def __init__(self, rates: Mapping[Fault, float], rng: random.Random, truth: TruthLog) -> None:
        self.rates = {f: r for f, r in rates.items() if f in BYTE_FAULTS | UNIT_FAULTS and r > 0}
        self.rng = rng
        self.truth = truth
        self._armed: dict[int, list[Fault]] = {}
        self.now: float | None = None

    def arm(self, seq: int, fault: Fault) -> None:
        """Apply ``fault`` once to the next unit carrying ``seq``."""
        self._armed.setdefault(seq, []).append(fault)

    def __call__(self, unit: bytes, info: UnitInfo) -> list[bytes]:
        armed = self._armed.pop(info.seq, []) if info.seq is not None else []
        if not self.rates and not armed:
            return [unit]
        rng = self.rng
        data = bytearray(unit)
        corrupt = self.rates.get(Fault.CORRUPT, 0.0)
        drop = self.rates.get(Fault.DROP, 0.0)
        corrupted: list[int] = []
        dropped: list[int] = []
        if corrupt or drop:
            out = bytearray()
            for i, b in enumerate(data):
                if drop and rng.random() < drop:
                    dropped.append(i)
                    continue
                if corrupt and rng.random() < corrupt:
                    b ^= rng.randrange(1, 256)
                    corrupted.append(i)
                out.append(b)
            data = out
        if Fault.CORRUPT in armed and data:
            i = rng.randrange(len(data))
            data[i] ^= rng.randrange(1, 256)
            corrupted.append(i)
        if Fault.DROP in armed and data:
            i = rng.randrange(len(data))
            del data[i]
            dropped.append(i)
        sent = bytes(data)
        base = {"seq": info.seq, "unit": info.kind, "original": unit.hex(), "sent": sent.hex()}
        if corrupted:
            self.truth.write("fault", self.now, kind=Fault.CORRUPT.value, offsets=sorted(corrupted), **base)
        if dropped:
            self.truth.write("fault", self.now, kind=Fault.DROP.value, offsets=sorted(dropped), **base)
        duplicate = Fault.DUPLICATE in armed or rng.random() < self.rates.get(Fault.DUPLICATE, 0.0)
        split = Fault.SPLIT in armed or rng.random() < self.rates.get(Fault.SPLIT, 0.0)
        chunks = [sent + sent] if duplicate else [sent]
        if duplicate:
            self.truth.write("fault", self.now, kind=Fault.DUPLICATE.value, seq=info.seq, unit=info.kind)
        if split and len(chunks[0]) > 1:
            whole = chunks[0]
            cuts = sorted(rng.sample(range(1, len(whole)), rng.randint(1, min(4, len(whole) - 1))))
            chunks = [whole[a:b] for a, b in zip([0, *cuts], [*cuts, len(whole)], strict=True)]
            self.truth.write("fault", self.now, kind=Fault.SPLIT.value, seq=info.seq, unit=info.kind, cuts=cuts)
        return chunks
