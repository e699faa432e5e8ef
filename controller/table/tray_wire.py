"""The chip tray's wire, for the table loop: the tray's bytes in, the tray's table inputs out.

The tray's counterpart of :class:`controller.table.spot_wire.SpotWire` (the bet-spot reader's), with the same
shape (``receive``, ``acknowledge``, ``poll``, ``noise``) so the loop runs it as one more queued port
(:class:`controller.table.loop.tray.TrayPort`). It wraps a :class:`~firmware_protocol.session.ControllerSession`
over the tray's dialect (:data:`firmware_protocol.tray.TRAY`: dedup by session and event number, ACK, RESEND,
heartbeats, reboot detection; ``docs/tray.md``) and turns what arrives into one typed union,
:data:`TrayWireEvent`:

* :class:`TrayWireInput`: a table input for the tray's book (:mod:`controller.game.tray`): a
  :class:`~controller.game.tray.TubeSeen` for a tube that changed, a :class:`~controller.game.tray.TraySnapshot`
  for a full count (the TubeReports between SNAPSHOT_BEGIN and SNAPSHOT_END, assembled here), a
  :class:`~controller.game.tray.TrayLinkChanged` when the link comes up (HELLO and heartbeats) or goes down
  (no valid frame for the link timeout: TRAY DOWN). Each chip's tag UID is resolved through the table's
  :class:`~controller.game.chips.ChipRegistry` (the same registry as the bet spots': ``[spots] chips``); a chip
  the registry does not know is ``ChipStatus.UNKNOWN`` of 0 cents, as on a spot.
* :class:`TrayRecord`: a fact to journal only: the tray's HELLO (``tray_hello``), its STATUS (``tray_status``),
  a TUBE naming a tube beyond the HELLO's or another message of a newer firmware (``tray_message``), a refused
  snapshot (``snapshot_refused``).
* :class:`TrayCountOwed`: the table should ask the tray for a full count (COUNT_REQUEST): the link came up, a
  snapshot was refused, a tray event could not be read (it took its number and was acknowledged, so the report
  is lost), or the table joined a session part-way.
* the shoe wire's :class:`~controller.table.wire.WireReboot`, :class:`~controller.table.wire.WireDuplicate` and
  noise events (:class:`~controller.table.wire.WireNoise`, through the same :class:`~controller.table.wire.NoiseGate`,
  summarised as the reader's are).

Write-ahead, as for the shoe and the reader: journal a :class:`TrayWireInput` or :class:`TrayRecord` that carries
a ``number``, then send :meth:`TrayWire.acknowledge` (``number``, ``session``). ACKs are cumulative: the
TubeReports of a snapshot produce nothing on their own and are acknowledged with its SNAPSHOT_END. A snapshot
whose SNAPSHOT_END disagrees with what was received (another snapshot number, another count of reports, a tube
reported twice, a tube beyond the HELLO's, no SNAPSHOT_BEGIN; or a SNAPSHOT_BEGIN inside a snapshot, which
refuses the first) is refused: a ``snapshot_refused`` record, counted in :attr:`TrayWire.snapshots_refused`, no
table input, and a :class:`TrayCountOwed` (``docs/tray.md`` section 5.2).

No I/O here: the loop reads the bytes and writes what comes back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from controller.game.chips import ChipRegistry, format_uid
from controller.game.tray import TrayLinkChanged, TraySnapshot, TubeSeen
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
from firmware_protocol.framing import RejectReason
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
from firmware_protocol.tray import (
    MAX_TUBES,
    TRAY,
    CountRequest,
    TrayFlags,
    TrayHello,
    TraySnapshotBegin,
    TraySnapshotEnd,
    TrayStatus,
    TrayType,
    TubeReport,
)

__all__ = [
    "TrayCountOwed",
    "TrayRecord",
    "TrayTableInput",
    "TrayWire",
    "TrayWireEvent",
    "TrayWireInput",
]

#: What the tray's wire gives the table to apply (the settle rule's TrayStill is the loop's, not the wire's).
TrayTableInput = TubeSeen | TraySnapshot | TrayLinkChanged

#: The rejections of an intact tray event that took its number and was acknowledged (the report is lost).
_LOST = frozenset({RejectReason.UNKNOWN_TYPE.value, RejectReason.BAD_PAYLOAD.value})


@dataclass(frozen=True)
class TrayWireInput:
    """A table input from the tray: journal it (with ``facts``) under (``session``, ``number``), apply it, then
    acknowledge ``number``. ``number`` is None for what the wire itself observed (the link)."""

    table_input: TrayTableInput
    facts: dict[str, Any] = field(default_factory=dict)
    session: int | None = None
    number: int | None = None


@dataclass(frozen=True)
class TrayRecord:
    """A fact from the tray to journal only (``kind``: ``tray_hello``, ``tray_status``, ``tray_message``,
    ``snapshot_refused``), then acknowledge ``number`` (None: nothing to acknowledge)."""

    kind: str
    facts: dict[str, Any]
    session: int | None = None
    number: int | None = None


@dataclass(frozen=True)
class TrayCountOwed:
    """The table should ask the tray for a full count now (COUNT_REQUEST), for the reason in ``detail``."""

    detail: str


TrayWireEvent = (
    TrayWireInput | TrayRecord | TrayCountOwed | WireReboot | WireDuplicate | WireNoise | WireNoisy | WireNoiseSummary
)


def _gate(events: list[WireEvent]) -> list[TrayWireEvent]:
    """The noise gate's events (it only ever gives the line's state and its summaries)."""
    return [e for e in events if isinstance(e, WireNoisy | WireNoiseSummary)]


def _uids(report: TubeReport) -> list[str]:
    return [format_uid(uid) for uid in report.uids]


def _flag_names(flags: TrayFlags) -> list[str]:
    return [f.name.lower() for f in TrayFlags if f and f in flags and f.name]


@dataclass
class _Snapshot:
    snapshot: int
    reports: list[TubeReport] = field(default_factory=list)
    twice: int | None = None  # the first tube reported twice
    beyond: int | None = None  # the first tube beyond the HELLO's


class TrayWire:
    """The chip tray's dialect for the table: see the module's docstring."""

    reports_link = True  # HELLO and heartbeats bring the link up; their silence takes it down

    def __init__(
        self,
        registry: ChipRegistry,
        session: ControllerSession | None = None,
        noise: NoiseGate | None = None,
    ) -> None:
        self.registry = registry
        self.session = session if session is not None else ControllerSession(dialect=TRAY)
        if self.session.dialect is not TRAY:
            raise ValueError(f"a TrayWire needs a session over the tray's dialect, not {self.session.dialect!r}")
        self.noise = noise or NoiseGate()
        #: The tray's HELLO of the current session, once seen.
        self.hello: TrayHello | None = None
        #: Snapshots assembled, and snapshots refused (their end disagreed with what was received).
        self.snapshots = 0
        self.snapshots_refused = 0
        self._open: _Snapshot | None = None

    @property
    def tubes(self) -> int:
        """The tray's tubes, as its HELLO said (every tube the protocol allows until a HELLO is seen)."""
        return self.hello.tubes if self.hello is not None else MAX_TUBES

    # ------------------------------------------------------------------------------------------ in

    def receive(self, data: bytes, now: float) -> list[TrayWireEvent]:
        """Bytes from the tray in; events out (replies, if any, come from :meth:`poll`)."""
        return self._translate(list(self.session.receive(data, now)), now)

    def poll(self, now: float) -> tuple[list[TrayWireEvent], bytes]:
        """Timers (link down, RESEND repeats, owed ACKs, the noise summary): the events and the bytes to send."""
        events, data = self.session.poll(now)
        out = self._translate(list(events), now)
        out += _gate(self.noise.poll(now))
        return out, data

    def _translate(self, events: list[Any], now: float) -> list[TrayWireEvent]:
        out: list[TrayWireEvent] = []
        for ev in events:
            if isinstance(ev, ShoeEvent):
                out += self._event(ev)
            elif isinstance(ev, DuplicateDropped):
                out.append(WireDuplicate(session_key(ev.session_id, ev.epoch), ev.number))
            elif isinstance(ev, ShoeRebooted):
                self._open = None  # an unfinished snapshot of the old session is gone with it
                if ev.old_session is not None:
                    detail = f"tray session {ev.old_session} replaced by {ev.new_session}"
                    out.append(WireReboot(ev.old_session, ev.new_session, detail))
            elif isinstance(ev, LinkUp):
                out.append(TrayWireInput(TrayLinkChanged(True), {"detail": f"tray session {ev.session_id}"}))
                out.append(TrayCountOwed("the link came up"))
            elif isinstance(ev, LinkDown):
                out.append(TrayWireInput(TrayLinkChanged(False), {"detail": f"no frame for {ev.silent_for:.1f} s"}))
            elif isinstance(ev, FrameRejected):
                _alone, noisy = self.noise.reject(ev.reason.value, len(ev.raw), now)
                out.append(WireNoise(ev.reason.value, ev.raw, ev.detail, ev.message_type))
                out += _gate(noisy)
                if (
                    ev.reason.value in _LOST
                    and ev.message_type is not None
                    and ev.message_type in TRAY.device_codes
                    and ev.message_type != TrayType.HEARTBEAT
                ):
                    out.append(TrayCountOwed(f"a tray event could not be read ({ev.reason.value}: {ev.detail})"))
            elif isinstance(ev, SessionJoined):
                self._open = None  # its SNAPSHOT_BEGIN may be among the events never seen
                detail = f"joined tray session {ev.session_id} at event {ev.first_number}; earlier events unseen"
                out.append(WireNoise("session_joined", b"", detail))
                out.append(TrayCountOwed(detail))
            elif isinstance(ev, GapDetected):
                out.append(WireNoise("gap", b"", f"expected seq {ev.expected_seq}, got {ev.got_seq}"))
        return out

    def _event(self, ev: ShoeEvent) -> list[TrayWireEvent]:
        message = ev.message
        key, number = ev.key, ev.number
        if isinstance(message, TubeReport):
            if self._open is not None:
                self._collect(self._open, message)
                return []  # acknowledged with the snapshot's end
            if message.tube > self.tubes:
                detail = f"TUBE {message.tube} beyond the tray's {self.tubes} tubes: not applied"
                return [
                    TrayRecord("tray_message", {"seq": ev.seq, "message": "tubereport", "detail": detail}, key, number)
                ]
            seen = TubeSeen(message.tube, self.registry.resolve_all(message.uids))
            return [TrayWireInput(seen, {"seq": ev.seq, "uids": _uids(message)}, key, number)]
        if isinstance(message, TraySnapshotBegin):
            out: list[TrayWireEvent] = []
            if self._open is not None:
                out += self._refuse(self._open.snapshot, "a new SNAPSHOT_BEGIN before its SNAPSHOT_END", key, None)
            self._open = _Snapshot(message.snapshot)
            return out
        if isinstance(message, TraySnapshotEnd):
            return self._end(message, ev.seq, key, number)
        if isinstance(message, TrayHello):
            self.hello = message
            self._open = None
            facts = {
                "seq": ev.seq,
                "firmware_version": message.firmware_version,
                "serial_number": message.serial_number,
                "protocol_version": message.protocol_version,
                "session_id": message.session_id,
                "tubes": message.tubes,
            }
            return [TrayRecord("tray_hello", facts, key, number)]
        if isinstance(message, TrayStatus):
            return [TrayRecord("tray_status", {"seq": ev.seq, "flags": _flag_names(message.flags)}, key, number)]
        name = type(message).__name__.lower()
        return [TrayRecord("tray_message", {"seq": ev.seq, "message": name}, key, number)]

    def _collect(self, snapshot: _Snapshot, report: TubeReport) -> None:
        if snapshot.twice is None and any(r.tube == report.tube for r in snapshot.reports):
            snapshot.twice = report.tube
        if snapshot.beyond is None and report.tube > self.tubes:
            snapshot.beyond = report.tube
        snapshot.reports.append(report)

    def _end(self, end: TraySnapshotEnd, seq: int, key: int, number: int) -> list[TrayWireEvent]:
        snapshot, self._open = self._open, None
        if snapshot is None:
            return self._refuse(end.snapshot, "SNAPSHOT_END without its SNAPSHOT_BEGIN", key, number)
        if snapshot.snapshot != end.snapshot:
            detail = f"SNAPSHOT_END of snapshot {end.snapshot}, begun as {snapshot.snapshot}"
            return self._refuse(end.snapshot, detail, key, number)
        if len(snapshot.reports) != end.reports:
            detail = f"SNAPSHOT_END counts {end.reports} tubes, {len(snapshot.reports)} were received"
            return self._refuse(end.snapshot, detail, key, number)
        if snapshot.twice is not None:
            return self._refuse(end.snapshot, f"tube {snapshot.twice} reported twice in one snapshot", key, number)
        if snapshot.beyond is not None:
            detail = f"tube {snapshot.beyond} beyond the tray's {self.tubes} tubes"
            return self._refuse(end.snapshot, detail, key, number)
        reports = sorted((r for r in snapshot.reports if r.uids), key=lambda r: r.tube)
        tubes = tuple((r.tube, self.registry.resolve_all(r.uids)) for r in reports)
        self.snapshots += 1
        facts = {
            "seq": seq,
            "snapshot": end.snapshot,
            "reported": end.reports,
            "uids": {str(r.tube): _uids(r) for r in reports},
        }
        return [TrayWireInput(TraySnapshot(tubes), facts, key, number)]

    def _refuse(self, snapshot: int, detail: str, key: int, number: int | None) -> list[TrayWireEvent]:
        self.snapshots_refused += 1
        words = f"chip tray: {detail}"
        return [
            TrayRecord("snapshot_refused", {"snapshot": snapshot, "detail": words}, key, number),
            TrayCountOwed(f"snapshot {snapshot} refused: {detail}"),
        ]

    # ----------------------------------------------------------------------------------------- out

    def acknowledge(self, number: int, session: int | None = None) -> bytes:
        """The ACK for event ``number`` of ``session`` (a session key), to write after the commit; empty if the
        tray has moved on to another session since."""
        return self.session.acknowledge(number, session)

    def count_request(self) -> bytes:
        """A COUNT_REQUEST frame: the tray sends a full snapshot (its answer; the request is not acknowledged)."""
        return self.session.command(CountRequest())

    def reset(self) -> bytes:
        """A RESET frame: the tray starts a new session (HELLO, then a full snapshot)."""
        return self.session.reset()
