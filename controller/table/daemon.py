"""The table process's assembly: opens the journal, the panel and the shoe's port, replays, runs the loop.

The table process holds the devices and the journal and has no network at all: what it may show beyond
the dealer's own sinks (the panel, the LCD) goes out on its feed (:mod:`controller.feed.server`, two Unix
sockets), read by the board (``shoe-controller board``: the scoreboard on the LAN) and the floor link
(``shoe-controller link``: the floor's broker and the metrics), each a process of its own.

``shoe-controller run`` and ``shoe-controller demo`` both build a :class:`Daemon` from validated
:class:`~controller.config.Settings`. Start-up order: journal (integrity check, then replay through the pure
core), panel (GPIO), serial link (and the bet-spot reader's, ``[spots]``, and the chip tray's, ``[tray]``,
when the table has them: a :class:`~controller.table.shoe_link.ShoeLink` each, which the loop waits on beside
the shoe's). READY goes to systemd as soon as the journal is replayed, the panel's GPIO is claimed and the
link's thread is started, whether or not the shoe is plugged in: a Pi that boots before the shoe is the normal
case, and the panel then shows LINK DOWN until the shoe is heard (the link keeps trying to open the port). The
``Status:`` line of ``systemctl status`` follows the table (:class:`~controller.notify.StatusSink`). SIGTERM
becomes SystemExit in the main thread; the ``finally`` sends STOPPING, turns the LEDs off, closes the port and
the journal.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from commandline.signals import STOP_SIGNALS, raise_system_exit
from controller.chipfile import load_chips
from controller.config import Settings
from controller.feed.server import FeedServer, FeedServerError
from controller.game.approvals import Approvable
from controller.game.chips import ChipRegistry
from controller.game.composition import Composition
from controller.game.edges import EdgeWatch, price
from controller.game.rules import Ruleset
from controller.game.table import TableView
from controller.journal import Journal, Retention
from controller.journal.queries import session_of
from controller.metrics import TableMetrics
from controller.notify import Notifier, StatusSink
from controller.table.clock import read_clock_status
from controller.table.loop import (
    BuyInEntry,
    FloorAck,
    Inbox,
    KeyEntry,
    LoopConfig,
    PanelPress,
    PinEntry,
    RateEntry,
    ShoePort,
    StaffListIn,
    Stop,
    TableLoop,
    resume,
)
from controller.table.loop.reader import ReaderPort
from controller.table.loop.resume import locked_out, on_duty
from controller.table.loop.tray import TrayPort
from controller.table.panel import ButtonAction, Panel, PanelSink, PinMap, make_pin_factory
from controller.table.shoe_link import ShoeLink
from controller.table.sinks import LatestViewSink, Sink
from controller.table.spot_wire import SpotWire
from controller.table.staff_list import StaffListKeeper, staff_list_path
from controller.table.tray_wire import TrayWire
from controller.table.wire import AsciiWire, BinaryWire, Wire
from firmware_protocol.session import ControllerSession
from firmware_protocol.spots import READER
from firmware_protocol.tray import TRAY

log = logging.getLogger(__name__)


def make_wire(settings: Settings, journal: Journal) -> Wire:
    """The dialect's codec; the binary one resumes dedup from the journal's last (session, number)."""
    if settings.shoe.dialect == "ascii":
        return AsciiWire()
    last = journal.last_event()
    session = ControllerSession(
        known_session=last[0] if last else None,
        last_number=last[1] if last else 0,
        link_timeout=settings.shoe.link_timeout,
    )
    return BinaryWire(session)


#: The interpreter's thread switch interval in the daemon. The loop must get the GIL back quickly when a card
#: arrives, even while a display thread is busy encoding or the floor link is flushing a backlog (the default,
#: 5 ms, is five times the card-to-LED budget). Benchmarks that run a loop in their own process set it too.
SWITCH_INTERVAL = 0.0005


@dataclass
class Daemon:
    """One table: journal, panel, link and loop, wired together."""

    settings: Settings
    extra_sinks: Sequence[Sink] = ()
    notifier: Notifier = field(default_factory=Notifier)
    on_ready: Callable[[Daemon], None] | None = None
    #: The chip registry (``[spots] chips``, read by the command); None: read here when a reader is configured.
    chips: ChipRegistry | None = None

    def __post_init__(self) -> None:
        self.journal: Journal | None = None
        #: The feed's sockets (None until opened, or if they could not be made: the table deals on).
        self.feed: FeedServer | None = None
        self.panel: Panel | None = None
        self.link: ShoeLink | None = None
        #: The bet-spot reader's port (``[spots] port``; None: no reader).
        self.spots_link: ShoeLink | None = None
        #: The chip tray's port (``[tray] port``; None: no tray).
        self.tray_link: ShoeLink | None = None
        self.loop: TableLoop | None = None
        self.status: StatusSink | None = None
        #: The health metrics (``[metrics]``): kept here, served by the floor link's process (from the feed).
        self.metrics: TableMetrics | None = None
        self.ready = False
        self._started = 0.0

    # -- building ----------------------------------------------------------------------------------
    def open(self) -> TableLoop:
        """Open everything and replay the journal; the loop is ready to run. Raises on a fatal fault.

        The inbox comes first (the panel's buttons, the link's opener and the feed's floor acks put their
        events there), then every part the loop uses, then the loop with all of them; the feed's sockets are
        opened last, once the loop exists."""
        s = self.settings
        self._started = time.monotonic()
        # A full disk is not fatal: the journal opens for reading, the table replays and shows JOURNAL FULL.
        self.journal = Journal.open_for_table(s.journal.path)
        ruleset = s.ruleset()
        resumed = resume(self.journal, s.table_rules(), self._open_edges(ruleset))
        wire = make_wire(s, self.journal)
        inbox = Inbox()
        sinks: list[Sink] = []

        def on_button(action: ButtonAction) -> None:
            inbox.put(PanelPress(action))

        factory = make_pin_factory(s.gpio.pin_factory)
        self.panel = Panel(
            PinMap(**s.gpio.pins.as_dict()),
            factory,
            on_button,
            void_hold_seconds=s.gpio.void_hold_seconds,
            bounce_seconds=s.gpio.bounce_seconds,
            active_high=s.gpio.active_high,
        )
        sinks.append(PanelSink(self.panel))
        if s.lcd.enabled:
            from controller.table.lcd import LcdSink

            # I2C writes take tens of milliseconds a frame: the LCD gets its own thread and the latest view.
            sinks.append(LatestViewSink(LcdSink(s.lcd, ruleset)))  # absent hardware: logged, inert
        sinks.extend(self.extra_sinks)
        if self.notifier.enabled:
            self.status = StatusSink(self.notifier, hide_cards=s.scoreboard.reveal == "on_declare")
            sinks.append(self.status)
        self.link = ShoeLink(s.shoe.port, s.shoe.baud, inbox.put, backoff_max=s.shoe.reconnect_backoff_max)
        reader = self._open_reader(inbox)
        tray = self._open_tray(inbox)
        self._open_metrics()
        metrics = self.metrics
        # The feed for the board and the floor link, with the current shoe's coups from the journal (a board
        # started now shows the whole shoe); the floor's ack comes back from the link socket to the inbox.
        feed = FeedServer(
            s.feed_dir(),
            reveal=s.scoreboard.reveal,
            history=self.journal.coups(shoe=resumed.state.view().shoe_number),
            on_ack=lambda ack: inbox.put(FloorAck(ack)),
            on_buy_in=lambda buy_in: inbox.put(BuyInEntry(buy_in)),  # the dealer screen's (the simulator's)
            on_staff=lambda staff: inbox.put(StaffListIn(staff)),  # the floor's signed staff list, via the link
            on_pin=lambda pin: inbox.put(PinEntry(pin)),  # a supervisor's PIN from the dealer screen (never logged)
            on_rate=lambda seat: inbox.put(RateEntry(seat)),  # the dealer screen's RATE of an uncarded player
            on_key=lambda card: inbox.put(KeyEntry(card)),  # the dealer screen's unreadable card, keyed
            on_buy_in_refused=(lambda _why: metrics.buy_in("refused")) if metrics is not None else (lambda _why: None),
            metrics_text=metrics.exposition if metrics is not None else None,
            money_group=s.feed.money_group or None,  # money.sock: the board's group reads the dealer screen's money
        )
        sinks.append(feed)  # close_sinks() closes it
        # The last staff list the table verified, kept beside the journal: badges work while the floor is away.
        staff = StaffListKeeper(staff_list_path(s.journal.path), s.floor.floor_key())
        staff.load()
        ports: list[ShoePort | ReaderPort | TrayPort] = [ShoePort(wire, self.link.write, self.link)]  # waited on
        if reader is not None:
            ports.append(reader)
        if tray is not None:
            ports.append(tray)
        self.loop = TableLoop(
            resumed.state,
            self.journal,
            ports,
            sinks,
            LoopConfig(
                inbox=inbox,
                after_commit=[feed.committed],  # the floor link reads a committed record now, not at the next card
                metrics=self.metrics,
                pruner=self._open_retention(),
                ruleset=ruleset,
                edges=resumed.edges,
                watchdog=self.notifier.watchdog,
                watchdog_interval=self.notifier.watchdog_interval(),
                floor_table=s.floor.table,
                floor_key=s.floor.floor_key(),
                # journaled at start and on each change; a WARNING while unsynced ([service] clock_check)
                clock_status=read_clock_status if s.service.clock_check else None,
                staff=staff,
                duty=on_duty(self.journal),
                approve=frozenset(Approvable(a) for a in s.table.supervisor_approves),
                locked_out=locked_out(self.journal, staff.roster.as_of),
            ),
        )
        if self.journal.degraded is not None:
            self.loop.journal_failed(self.journal.degraded)  # JOURNAL FULL from the start; retried each second
        try:
            feed.start()
        except FeedServerError as exc:
            log.error("%s; the table deals on without a board or a floor link", exc)
        else:
            self.feed = feed
        view = self.loop.view()
        log.info("journal %s: replayed %d inputs; resumed %s", s.journal.path, resumed.inputs, self._resumed(view))
        return self.loop

    def _open_reader(self, inbox: Inbox) -> ReaderPort | None:
        """The bet-spot reader (``[spots]``), supervised like the shoe: a :class:`ShoeLink` of its own reporting
        to the same inbox, and its wire (:class:`SpotWire`) resolving UIDs through the chip registry. Its
        session resumes from the journal's last reader event, as the shoe's does: the loop acknowledges the
        reader no further than that (a snapshot that is no news waits for the next event journaled), so the
        reader still holds everything after it and a restart loses and doubles nothing."""
        s = self.settings
        if s.spots.port is None or s.spots.chips is None:
            return None
        registry = self.chips if self.chips is not None else load_chips(s.spots.chips)
        assert self.journal is not None
        last = self.journal.last_event(device="reader")  # the reader's resume point (controller.table.loop.loop)
        session = ControllerSession(
            known_session=session_of("reader", last[0]) if last else None,
            last_number=last[1] if last else 0,
            link_timeout=s.spots.link_timeout,
            dialect=READER,
        )
        self.spots_link = ShoeLink(
            s.spots.port, s.spots.baud, inbox.put, backoff_max=s.shoe.reconnect_backoff_max, device="reader"
        )
        log.info("bet-spot reader on %s; chip registry %s (%d ranges)", s.spots.port, s.spots.chips, len(registry))
        return ReaderPort(self.spots_link, SpotWire(registry, session), self.spots_link.write)

    def _open_tray(self, inbox: Inbox) -> TrayPort | None:
        """The chip tray (``[tray]``), supervised like the reader: a :class:`ShoeLink` of its own reporting to the
        same inbox, and its wire (:class:`TrayWire`) resolving UIDs through the same chip registry. Its session
        starts afresh at every start (the tray's events are journaled without session keys:
        :data:`~controller.table.loop.commit.UNKEYED_DEVICES`): it resends what it held, and the table asks for a
        full count once the link is up."""
        s = self.settings
        if s.tray.port is None or s.spots.chips is None:
            return None
        registry = self.chips if self.chips is not None else load_chips(s.spots.chips)
        session = ControllerSession(link_timeout=s.tray.link_timeout, dialect=TRAY)
        self.tray_link = ShoeLink(
            s.tray.port, s.tray.baud, inbox.put, backoff_max=s.shoe.reconnect_backoff_max, device="tray"
        )
        log.info("chip tray on %s; chip registry %s (%d ranges)", s.tray.port, s.spots.chips, len(registry))
        return TrayPort(self.tray_link, TrayWire(registry, session), self.tray_link.write, settle=s.tray.settle_seconds)

    def _open_edges(self, ruleset: Ruleset) -> EdgeWatch:
        """Shoe start records carry the ruleset, and the live exact edge ([surveillance]) is on. The odds
        engine's table is built now (about 0.3 s), not at the first betting time in the middle of a shoe."""
        s = self.settings
        sv = s.surveillance
        watch = EdgeWatch(
            sv.advantage_threshold, ruleset, s.table.decks, sv.bet_thresholds, sv.advantage_margin, sv.advantage_step
        )
        price(Composition.decks(s.table.decks), ruleset)  # builds the six-card table and prices this ruleset
        return watch

    def _open_metrics(self) -> None:
        """The health metrics, when ``[metrics] enabled``: kept by the loop, sent to the floor link's process
        on the feed every second and served there (the table has no network)."""
        s = self.settings
        if not s.metrics.enabled:
            return
        self.metrics = TableMetrics(s.journal.path)
        self.metrics.link(False)  # LINK DOWN until the shoe is heard
        if self.settings.spots.enabled:
            self.metrics.spots_link(False)  # READER DOWN until the reader is heard
        if self.settings.tray.enabled:
            self.metrics.tray_link(False)  # TRAY DOWN until the tray is heard

    def _open_retention(self) -> Retention | None:
        """With a floor link and ``[floor] retain_days``, the loop prunes acknowledged old shoes at quiet
        moments. Without a floor, never: ``shoe-controller journal archive`` does it by hand."""
        floor = self.settings.floor
        if not floor.enabled or not floor.retain_days:
            return None
        assert self.journal is not None
        log.info("journal retention: shoes older than %s days, once the floor has acknowledged them", floor.retain_days)
        return Retention(self.journal, float(floor.retain_days))

    def _resumed(self, view: TableView) -> str:
        """Where the table stands after the replay, for the log. Under ``reveal = on_declare`` (a squeeze
        game) the cards, what is due and the lamps of an undeclared coup are left out: the log is read by
        more people than the dealer, and they must not learn a result before it is declared."""
        where = f"shoe {view.shoe_number} coup {view.coup_number}"
        dealt = len(view.player) + len(view.banker)
        if self.settings.scoreboard.reveal == "on_declare" and dealt:
            return f"{where}, {dealt} cards dealt (not shown: reveal on_declare)"
        return "{}, due {}, cards {} | {}, lamps {}".format(
            where,
            view.due.value,
            " ".join(c.token for c in view.player) or "-",
            " ".join(c.token for c in view.banker) or "-",
            ",".join(sorted(lamp.value for lamp in view.lamps)) or "none",
        )

    def _mark_ready(self, why: str) -> None:
        if self.ready:
            return
        self.ready = True
        log.info("ready in %.3f s: %s", time.monotonic() - self._started, why)  # logged before systemd hears it
        self.notifier.ready()
        if self.on_ready is not None:
            self.on_ready(self)

    # -- running -----------------------------------------------------------------------------------
    def run(self) -> None:
        """Open, start the link and run the loop until SIGTERM/SIGINT or :meth:`stop`."""
        previous: dict[signal.Signals, Any] = {}
        sys.setswitchinterval(SWITCH_INTERVAL)
        try:
            loop = self.open()
            if threading.current_thread() is threading.main_thread():
                for sig in STOP_SIGNALS:
                    previous[sig] = signal.signal(sig, raise_system_exit)
            assert self.link is not None
            self.link.start()
            loop.assume_link_down("controller started; waiting for the shoe")
            if self.spots_link is not None:
                self.spots_link.start()
                loop.assume_reader_down("controller started; waiting for the bet-spot reader")
            if self.tray_link is not None:
                self.tray_link.start()
                loop.assume_tray_down("controller started; waiting for the chip tray")
            # READY now, shoe or no shoe: the journal, the panel and the link's thread are up, and the panel
            # shows LINK DOWN until the shoe is heard. Waiting for the port would outlast TimeoutStartSec=
            # on a Pi that boots before the shoe is plugged in, and systemd would restart us in a loop.
            self._mark_ready("journal, panel and shoe link started")
            status = self.status
            loop.run(on_tick=status.tick if status is not None else None)
        finally:
            self.close()
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def stop(self) -> None:
        """Ask the loop to finish (from any thread)."""
        if self.loop is not None:
            self.loop.put(Stop())

    def close(self) -> None:
        """STOPPING, LEDs off, port and journal closed. Idempotent."""
        self.notifier.stopping()
        if self.link is not None:
            self.link.stop()
            self.link = None
        if self.spots_link is not None:
            self.spots_link.stop()
            self.spots_link = None
        if self.tray_link is not None:
            self.tray_link.stop()
            self.tray_link = None
        if self.loop is not None:
            self.loop.close_sinks()
        elif self.panel is not None:
            self.panel.close()
        self.panel = None
        if self.journal is not None:
            self.journal.close()
            self.journal = None
