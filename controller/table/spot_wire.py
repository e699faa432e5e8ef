"""The bet-spot reader's wire, for the table loop: the reader's bytes in, money inputs out.

The reader's counterpart of :class:`controller.table.wire.BinaryWire`, with the same shape (``receive``,
``acknowledge``, ``poll``, ``reports_link``, ``noise``) so the loop can run it as a second port. It wraps a
:class:`~firmware_protocol.session.ControllerSession` over the reader's dialect
(:data:`firmware_protocol.spots.READER`: dedup by session and event number, ACK, RESEND, heartbeats, reboot
detection) and turns what arrives into:

* :class:`SpotInput`: a table input for the wager book (:mod:`controller.game.wagers`): a
  :class:`~controller.game.wagers.SpotSeen` for a spot that changed, a
  :class:`~controller.game.wagers.SpotsSnapshot` for a full snapshot (the SpotReports between SNAPSHOT_BEGIN
  and SNAPSHOT_END, assembled here), a :class:`~controller.game.wagers.ReaderLinkChanged` when the link
  comes up or goes down. The chips' tag UIDs are resolved through the :class:`~controller.game.chips.ChipRegistry`.
  A card at a seat's card reader (CARD_IN, CARD_OUT at a seat) is a :class:`~controller.game.seats.SeatCard`
  for the seats (:mod:`controller.game.seats`).
* :class:`SpotRecord`: a fact to journal only: the reader's HELLO, its STATUS, a refused snapshot, a card at
  the dealer's position (``dealer_card``: staff, not a player), another message of a newer firmware.
* the shoe wire's :class:`~controller.table.wire.WireReboot`, :class:`~controller.table.wire.WireDuplicate` and noise
  events (:class:`~controller.table.wire.WireNoise`, through the same :class:`~controller.table.wire.NoiseGate`).

Write-ahead, as for the shoe: journal a :class:`SpotInput` or :class:`SpotRecord` that carries a ``number``,
then send :meth:`SpotWire.acknowledge` (``number``, ``session``). ACKs are cumulative: the SpotReports of a
snapshot produce nothing on their own and are acknowledged with its SNAPSHOT_END. A snapshot whose
SNAPSHOT_END disagrees with what was received (another snapshot number, another count of reports, a spot
reported twice, no SNAPSHOT_BEGIN) is refused: a :class:`SpotRecord` ``snapshot_refused`` (counted in
:attr:`SpotWire.snapshots_refused`) and no table input; the reader's next snapshot (every 5 s) corrects it.

No I/O here: the link thread hands bytes in, the loop writes what comes back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from controller.game.chips import ChipRegistry, format_uid
from controller.game.seats import SeatCard
from controller.game.table import Due
from controller.game.wagers import ReaderLinkChanged, Spot, SpotSeen, SpotsSnapshot
from controller.table.wire import (
    NoiseGate,
    WireDuplicate,
    WireEvent,
    WireNoise,
    WireNoiseSummary,
    WireNoisy,
    WireReboot,
)
from firmware_protocol.binary import FrameRejected
from firmware_protocol.session import (
    ControllerSession,
    DuplicateDropped,
    GapDetected,
    LinkDown,
    LinkUp,
    SessionJoined,
    ShoeEvent,
    ShoeRebooted,
    session_key,
)
from firmware_protocol.spots import (
    DEALER_POSITION,
    READER,
    CardIn,
    CardOut,
    ReaderFlags,
    ReaderHello,
    ReaderStatus,
    SnapshotBegin,
    SnapshotEnd,
    SpotCode,
    SpotReport,
    Window,
    WindowState,
)

__all__ = [
    "SPOT_OF_CODE",
    "SpotInput",
    "SpotRecord",
    "SpotWire",
    "SpotWireEvent",
]

#: The table's spot for each of the reader's spot codes (the same names).
SPOT_OF_CODE: dict[SpotCode, Spot] = {code: Spot[code.name] for code in SpotCode}

SpotTableInput = SpotSeen | SpotsSnapshot | ReaderLinkChanged | SeatCard


@dataclass(frozen=True)
class SpotInput:
    """A table input from the reader: journal it (with ``facts``) under (``session``, ``number``), apply it,
    then acknowledge ``number``. ``number`` is None for what the wire itself observed (the link)."""

    table_input: SpotTableInput
    facts: dict[str, Any] = field(default_factory=dict)
    session: int | None = None
    number: int | None = None


@dataclass(frozen=True)
class SpotRecord:
    """A fact from the reader to journal only (``kind``: ``reader_hello``, ``reader_status``,
    ``snapshot_refused``, ``dealer_card``, ``reader_message``), then acknowledge ``number``."""

    kind: str
    facts: dict[str, Any]
    session: int | None = None
    number: int | None = None


SpotWireEvent = SpotInput | SpotRecord | WireReboot | WireDuplicate | WireNoise | WireNoisy | WireNoiseSummary


def _gate(events: list[WireEvent]) -> list[SpotWireEvent]:
    """The noise gate's events (it only ever gives the line's state and its summaries)."""
    return [e for e in events if isinstance(e, WireNoisy | WireNoiseSummary)]


def _uids(report: SpotReport) -> list[str]:
    return [format_uid(uid) for uid in report.uids]


def _flag_names(flags: ReaderFlags) -> list[str]:
    return [f.name.lower() for f in ReaderFlags if f and f in flags and f.name]


@dataclass
class _Snapshot:
    snapshot: int
    reports: list[SpotReport] = field(default_factory=list)
    twice: tuple[int, SpotCode] | None = None


class SpotWire:
    """The bet-spot reader's dialect for the table: see the module's docstring."""

    reports_link = True  # HELLO and heartbeats bring the link up; their silence takes it down

    def __init__(
        self,
        registry: ChipRegistry,
        session: ControllerSession | None = None,
        noise: NoiseGate | None = None,
    ) -> None:
        self.registry = registry
        self.session = session if session is not None else ControllerSession(dialect=READER)
        if self.session.dialect is not READER:
            raise ValueError(f"a SpotWire needs a session over the reader's dialect, not {self.session.dialect!r}")
        self.noise = noise or NoiseGate()
        #: The reader's HELLO of the current session, once seen.
        self.hello: ReaderHello | None = None
        #: Snapshots applied, and snapshots refused (their end disagreed with what was received).
        self.snapshots = 0
        self.snapshots_refused = 0
        self._open: _Snapshot | None = None

    # ------------------------------------------------------------------------------------------ in

    def receive(self, data: bytes, now: float) -> list[SpotWireEvent]:
        """Bytes from the reader in; events out (replies, if any, come from :meth:`poll`)."""
        return self._translate(list(self.session.receive(data, now)), now)

    def poll(self, now: float) -> tuple[list[SpotWireEvent], bytes]:
        """Timers (link down, RESEND repeats, owed ACKs, the noise summary): the events and the bytes to send."""
        events, data = self.session.poll(now)
        out = self._translate(list(events), now)
        out += _gate(self.noise.poll(now))
        return out, data

    def _translate(self, events: list[Any], now: float) -> list[SpotWireEvent]:
        out: list[SpotWireEvent] = []
        for ev in events:
            if isinstance(ev, ShoeEvent):
                out += self._event(ev)
            elif isinstance(ev, DuplicateDropped):
                out.append(WireDuplicate(session_key(ev.session_id, ev.epoch), ev.number))
            elif isinstance(ev, ShoeRebooted):
                self._open = None  # an unfinished snapshot of the old session is gone with it
                if ev.old_session is not None:
                    detail = f"reader session {ev.old_session} replaced by {ev.new_session}"
                    out.append(WireReboot(ev.old_session, ev.new_session, detail))
            elif isinstance(ev, LinkUp):
                out.append(SpotInput(ReaderLinkChanged(True), {"detail": f"reader session {ev.session_id}"}))
            elif isinstance(ev, LinkDown):
                out.append(SpotInput(ReaderLinkChanged(False), {"detail": f"no frame for {ev.silent_for:.1f} s"}))
            elif isinstance(ev, FrameRejected):
                _alone, noisy = self.noise.reject(ev.reason.value, len(ev.raw), now)
                out.append(WireNoise(ev.reason.value, ev.raw, ev.detail, ev.message_type))
                out += _gate(noisy)
            elif isinstance(ev, SessionJoined):
                self._open = None  # its SNAPSHOT_BEGIN may be among the events never seen
                detail = f"joined reader session {ev.session_id} at event {ev.first_number}; earlier events unseen"
                out.append(WireNoise("session_joined", b"", detail))
            elif isinstance(ev, GapDetected):
                out.append(WireNoise("gap", b"", f"expected seq {ev.expected_seq}, got {ev.got_seq}"))
        return out

    def _event(self, ev: ShoeEvent) -> list[SpotWireEvent]:
        message = ev.message
        key, number = ev.key, ev.number
        if isinstance(message, SpotReport):
            if self._open is not None:
                self._collect(self._open, message)
                return []  # acknowledged with the snapshot's end
            chips = self.registry.resolve_all(message.uids)
            seen = SpotSeen(message.seat, SPOT_OF_CODE[message.spot], chips)
            return [SpotInput(seen, {"seq": ev.seq, "uids": _uids(message)}, key, number)]
        if isinstance(message, SnapshotBegin):
            out: list[SpotWireEvent] = []
            if self._open is not None:
                out.append(self._refuse(self._open.snapshot, "a new SNAPSHOT_BEGIN before its SNAPSHOT_END", key, None))
            self._open = _Snapshot(message.snapshot)
            return out
        if isinstance(message, SnapshotEnd):
            return [self._end(message, ev.seq, key, number)]
        if isinstance(message, ReaderHello):
            self.hello = message
            facts = {
                "seq": ev.seq,
                "firmware_version": message.firmware_version,
                "serial_number": message.serial_number,
                "protocol_version": message.protocol_version,
                "session_id": message.session_id,
                "seats": list(message.seats),
                "spots": [SPOT_OF_CODE[c].value for c in message.spots],
            }
            return [SpotRecord("reader_hello", facts, key, number)]
        if isinstance(message, CardIn | CardOut):
            uid, present = format_uid(message.uid), isinstance(message, CardIn)
            if message.position == DEALER_POSITION:
                return [SpotRecord("dealer_card", {"seq": ev.seq, "uid": uid, "present": present}, key, number)]
            return [SpotInput(SeatCard(message.position, uid, present), {"seq": ev.seq}, key, number)]
        if isinstance(message, ReaderStatus):
            return [SpotRecord("reader_status", {"seq": ev.seq, "flags": _flag_names(message.flags)}, key, number)]
        name = type(message).__name__.lower()
        return [SpotRecord("reader_message", {"seq": ev.seq, "message": name}, key, number)]

    def _collect(self, snapshot: _Snapshot, report: SpotReport) -> None:
        if snapshot.twice is None and any((r.seat, r.spot) == (report.seat, report.spot) for r in snapshot.reports):
            snapshot.twice = (report.seat, report.spot)
        snapshot.reports.append(report)

    def _end(self, end: SnapshotEnd, seq: int, key: int, number: int) -> SpotWireEvent:
        snapshot, self._open = self._open, None
        if snapshot is None:
            return self._refuse(end.snapshot, "SNAPSHOT_END without its SNAPSHOT_BEGIN", key, number)
        if snapshot.snapshot != end.snapshot:
            return self._refuse(
                end.snapshot, f"SNAPSHOT_END of snapshot {end.snapshot}, begun as {snapshot.snapshot}", key, number
            )
        if len(snapshot.reports) != end.spots:
            detail = f"SNAPSHOT_END counts {end.spots} spots, {len(snapshot.reports)} were received"
            return self._refuse(end.snapshot, detail, key, number)
        if snapshot.twice is not None:
            seat, spot = snapshot.twice
            detail = f"seat {seat} {SPOT_OF_CODE[spot].value} reported twice in one snapshot"
            return self._refuse(end.snapshot, detail, key, number)
        order = {code: index for index, code in enumerate(SpotCode)}
        reports = sorted((r for r in snapshot.reports if r.uids), key=lambda r: (r.seat, order[r.spot]))
        spots = tuple((r.seat, SPOT_OF_CODE[r.spot], self.registry.resolve_all(r.uids)) for r in reports)
        self.snapshots += 1
        facts = {
            "seq": seq,
            "snapshot": end.snapshot,
            "reported": end.spots,
            "uids": {f"{r.seat}:{SPOT_OF_CODE[r.spot].value}": _uids(r) for r in reports},
        }
        return SpotInput(SpotsSnapshot(spots), facts, key, number)

    def _refuse(self, snapshot: int, detail: str, key: int, number: int | None) -> SpotRecord:
        self.snapshots_refused += 1
        return SpotRecord("snapshot_refused", {"snapshot": snapshot, "detail": detail}, key, number)

    # ----------------------------------------------------------------------------------------- out

    def acknowledge(self, number: int, session: int | None = None) -> bytes:
        """The ACK for event ``number`` of ``session`` (a journal key), to write after the commit; empty if
        the reader has moved on to another session since."""
        return self.session.acknowledge(number, session)

    def window(self, state: WindowState) -> bytes:
        """A WINDOW frame: the betting window is open, locked (the first card is out) or in payout."""
        return self.session.command(Window(state))

    def reset(self) -> bytes:
        """A RESET frame: the reader starts a new session (HELLO, then a full snapshot)."""
        return self.session.reset()

    def prompt(self, due: Due) -> bytes:
        """Nothing: the reader has no PROMPT (the loop's :class:`~controller.table.wire.Wire` face); the betting
        window goes out through :meth:`window`."""
        return b""
