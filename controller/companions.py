"""The table's two companion processes, each facing one network: the board and the floor link.

Neither holds a device or writes the journal; each reads the table process's feed (:mod:`controller.feed`)
and may die, stall or be attacked without costing the table a card.

* :class:`BoardProcess` (``shoe-controller board``): the scoreboard's page and its event stream on the LAN,
  fed by ``feed.sock``. No journal access at all: a board started now gets the current shoe's coups in the
  feed's hello. A table restart costs its browsers nothing but the time the table is away: the board keeps
  its streams open, shows the last snapshot marked TABLE OFFLINE, and picks the table up again at its next
  hello. Beside it, on its own listener (``[board] dealer_listen``, loopback by default), the dealer screen
  (:mod:`controller.displays.dealer`), fed by ``money.sock``: the money at the table, which ``feed.sock`` and
  the scoreboard never carry.
* :class:`LinkProcess` (``shoe-controller link``): the floor link (the journal read-only, every record to
  the floor's broker) and the table's Prometheus metrics, fed by ``link.sock``; it hands the floor's ack back
  to the table there (the table stores it: it stays the journal's one writer).

Both run until SIGTERM or SIGINT (``SystemExit`` in the main thread) and then close everything.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import signal
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.parser import text_string_to_metric_families

from commandline.signals import STOP_SIGNALS, raise_system_exit
from controller.config import Settings
from controller.feed.client import FeedClient
from controller.feed.messages import Commit, Hello, Metrics, Money, TableMessage, Update
from controller.feed.server import money_socket_path, socket_paths
from controller.floor_trouble import Cause, Trouble, TroubleLog
from controller.game.public import FeedUpdate, PublicAlarm
from controller.journal.ack import REFUSAL_REASONS, AckRefusals
from controller.notify import Notifier

if TYPE_CHECKING:
    from controller.displays.dealer import DealerScreen

log = logging.getLogger(__name__)


def _wait_for_a_signal(stop: threading.Event) -> None:
    """Block the main thread until SIGTERM/SIGINT/SIGHUP (SystemExit) or ``stop``."""
    previous: dict[signal.Signals, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in STOP_SIGNALS:
            previous[sig] = signal.signal(sig, raise_system_exit)
    try:
        while not stop.wait(1.0):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class _Companion:
    """What both companions do with their life: open, run until a signal (or :attr:`stop_event`), close."""

    stop_event: threading.Event

    def open(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def run(self) -> None:
        try:
            self.open()
            _wait_for_a_signal(self.stop_event)
        finally:
            self.close()


class CompanionError(Exception):
    """A companion cannot do its job (the board's address taken, nothing configured): one line, exit 1."""


#: How long the board gathers the table's updates before it builds one snapshot of the newest (at most some 50
#: snapshots a second, whatever the shoe's pace: each is a build of the roads and a write to every viewer).
BOARD_GATHER = 0.02
#: Table messages the board holds before its feed's reader waits (then the table, finding the board's socket
#: full, drops it past its bound, and the board starts again from a fresh hello).
BOARD_PENDING = 4096


#: What the board shows while it does not hear the table (its feed lost): the last view stays, marked.
TABLE_OFFLINE = PublicAlarm("table_offline", "TABLE OFFLINE")


@dataclass(frozen=True)
class Offline:
    """The board lost the table's feed (it connects again by itself)."""


class BoardProcess(_Companion):
    """The scoreboard, in its own process, fed by the table's public feed. The feed's reader thread only hands
    each message to a bounded queue; the board's own thread gathers what came within :data:`BOARD_GATHER` and
    shows it (every coup followed, one snapshot built of the newest view)."""

    def __init__(self, settings: Settings, notifier: Notifier | None = None, *, gather: float = BOARD_GATHER) -> None:
        from controller.displays.scoreboard import ScoreboardSink

        s = settings
        self.settings = s
        self.notifier = notifier or Notifier()
        self.stop_event = threading.Event()
        self.gather = gather
        if not s.scoreboard.enabled:
            raise CompanionError("board: scoreboard.enabled is false: nothing to serve (disable this unit instead)")
        self.sink = ScoreboardSink(
            s.scoreboard, table_name=s.table.name, limits=s.table_limits(), ruleset=s.ruleset(), history=()
        )
        public, _link = socket_paths(s.feed_dir())
        self.feed = FeedClient(public, self._on_message, on_connected=self._on_connected, name="board")
        self._pending: queue.Queue[TableMessage | Offline | None] = queue.Queue(maxsize=BOARD_PENDING)
        self._shower = threading.Thread(target=self._show, name="board-show", daemon=True)
        self.dealer: DealerScreen | None = None
        self.money_feed: FeedClient | None = None
        dealer = s.board.dealer_address
        if dealer is not None:
            from controller.displays.dealer import DealerScreen

            self.dealer = DealerScreen(dealer, table_name=s.table.name)
            self.money_feed = FeedClient(
                money_socket_path(s.feed_dir()),
                self._on_money,
                on_connected=self._on_money_connected,
                name="board-money",
                money=True,
            )

    def _on_money(self, message: TableMessage) -> None:
        """On the money feed's thread: each money line is the whole view; the screen publishes it at once."""
        if isinstance(message, Money) and self.dealer is not None:
            self.dealer.show(message.view)

    def _on_money_connected(self, up: bool) -> None:
        if self.dealer is not None:
            if up:
                self.dealer.connected()  # no bet-spot reader until the table says otherwise
            else:
                self.dealer.offline()

    def _on_message(self, message: TableMessage) -> None:
        if isinstance(message, Hello | Update):
            self._pending.put(message)  # waits when full: the table drops a board that does not keep up

    def _on_connected(self, up: bool) -> None:
        if not up:  # the page says so until the table's next hello, rather than show an old table as now
            self._pending.put(Offline())

    def _show(self) -> None:
        while True:
            first = self._pending.get()
            if first is None:
                return
            time.sleep(self.gather)  # a fast shoe's updates come in meanwhile: one snapshot for all of them
            batch: list[TableMessage | Offline | None] = [first]
            with contextlib.suppress(queue.Empty):
                while len(batch) < BOARD_PENDING:
                    batch.append(self._pending.get_nowait())
            updates: list[FeedUpdate] = []
            for message in batch:
                if message is None:
                    self._flush(updates)
                    return
                if isinstance(message, Hello):
                    self._flush(updates)
                    updates = []
                    self.sink.reset(message.view, message.history)
                elif isinstance(message, Update):
                    updates.append(message.update)
                elif isinstance(message, Offline):
                    self._flush(updates)
                    updates = []
                    view = self.sink.builder.view
                    if TABLE_OFFLINE not in view.alarms:
                        offline = replace(view, alarms=(*view.alarms, TABLE_OFFLINE))
                        self.sink.publish(FeedUpdate(offline))
            self._flush(updates)

    def _flush(self, updates: list[FeedUpdate]) -> None:
        if updates:
            self.sink.publish_many(updates)

    def open(self) -> None:
        if not self.sink.start():
            raise CompanionError(f"scoreboard: {self.sink.fault}")
        host, port = self.sink.address
        log.info("board on http://%s:%d/, fed by %s", host, port, self.feed.path)
        if self.dealer is not None and self.money_feed is not None:
            if self.dealer.start():  # a dealer screen that cannot bind costs the scoreboard nothing (logged)
                dhost, dport = self.dealer.address
                log.info("dealer screen on http://%s:%d/, fed by %s", dhost, dport, self.money_feed.path)
            else:
                self.dealer, self.money_feed = None, None
        self._shower.start()
        self.feed.start()
        if self.money_feed is not None:
            self.money_feed.start()
        self.notifier.ready()

    def close(self) -> None:
        self.notifier.stopping()
        self.feed.close()
        if self.money_feed is not None:
            self.money_feed.close()
        if self.dealer is not None:
            self.dealer.close()
        if self._shower.is_alive():
            with contextlib.suppress(queue.Full):
                self._pending.put(None, timeout=1.0)
            self._shower.join(timeout=5)
        self.sink.close()


class TableFamilies:
    """A Prometheus collector of the table's own metrics, as the table last sent them on its feed (text
    format, parsed and checked here: a text that does not parse is refused and the last good one kept)."""

    def __init__(self) -> None:
        self._families: list[Metric] = []
        self.refused = 0

    def take(self, text: str) -> None:
        try:
            families = list(text_string_to_metric_families(text))
        except (ValueError, TypeError, IndexError) as exc:
            self.refused += 1
            log.warning("link: refused the table's metrics: %s", str(exc)[:120])
            return
        self._families = families

    def collect(self) -> Iterable[Metric]:
        return list(self._families)

    def describe(self) -> Iterable[Metric]:
        return []


class FloorState(Protocol):
    """What the gauges read of the floor link (:class:`controller.floor_link.FloorLink`, on its own thread)."""

    connected: bool
    head: int  # the journal's last record id as the link last read it
    acked: int  # the floor's ack as the link last believed it
    ack_refusals: AckRefusals  # the acks it did not believe
    troubles: TroubleLog  # why it is not connected, and its failed attempts by cause


class FeedState(Protocol):
    connected: bool


class AckRefusalCounts:
    """``shoe_floor_acks_refused_total{reason}``: the floor acks the link did not believe, by reason (every
    reason of :data:`controller.journal.ack.REFUSAL_REASONS` is there, 0 until one comes)."""

    def __init__(self, floor: FloorState) -> None:
        self.floor = floor

    def collect(self) -> Iterable[Metric]:
        family = CounterMetricFamily(
            "shoe_floor_acks_refused", "Floor acks not believed (not signed, not this table's ...).", labels=["reason"]
        )
        counts = dict(self.floor.ack_refusals.counts)
        for reason in REFUSAL_REASONS:
            family.add_metric([reason], float(counts.get(reason, 0)))
        return [family]

    def describe(self) -> Iterable[Metric]:
        return []


class TroubleFamilies:
    """``shoe_floor_link_trouble{cause}`` (1 for the cause the link is not connected for now, 0 for the others)
    and ``shoe_floor_connect_failures_total{cause}`` (failed connection attempts), every cause of
    :class:`controller.floor_trouble.Cause` listed from the start."""

    def __init__(self, floor: FloorState) -> None:
        self.floor = floor

    def collect(self) -> Iterable[Metric]:
        troubles = self.floor.troubles
        current = troubles.current
        now = GaugeMetricFamily(
            "shoe_floor_link_trouble", "1 for why the floor link is not connected now, by cause.", labels=["cause"]
        )
        failures = CounterMetricFamily(
            "shoe_floor_connect_failures", "Failed connections to the floor's broker, by cause.", labels=["cause"]
        )
        counts = dict(troubles.failures)
        for cause in Cause:
            now.add_metric([cause.value], 1.0 if current is not None and current.cause is cause else 0.0)
            failures.add_metric([cause.value], float(counts.get(cause, 0)))
        return [now, failures]

    def describe(self) -> Iterable[Metric]:
        return []


class LinkGauges:
    """``shoe_floor_outbox_records`` (records the floor has not acknowledged), ``shoe_floor_connected`` (1, 0,
    or -1 without a floor link) and ``shoe_table_feed_up`` (1 while the table process's feed is heard), read
    from the link's threads when scraped."""

    def __init__(self, floor: FloorState | None, feed: FeedState) -> None:
        self.floor = floor
        self.feed = feed

    def collect(self) -> Iterable[Metric]:
        floor = self.floor
        outbox = GaugeMetricFamily("shoe_floor_outbox_records", "Journal records the floor has not acknowledged yet.")
        outbox.add_metric([], 0.0 if floor is None else float(max(floor.head - floor.acked, 0)))
        connected = GaugeMetricFamily(
            "shoe_floor_connected", "1 connected to the floor's broker, 0 not, -1 unknown or no floor link."
        )
        connected.add_metric([], -1.0 if floor is None else (1.0 if floor.connected else 0.0))
        table_up = GaugeMetricFamily("shoe_table_feed_up", "1 while the link hears the table process's feed, 0 not.")
        table_up.add_metric([], 1.0 if self.feed.connected else 0.0)
        return [outbox, connected, table_up]

    def describe(self) -> Iterable[Metric]:
        return []


def link_gauges(registry: CollectorRegistry, floor: FloorState | None, feed: FeedState) -> None:
    """The link's own metrics on ``registry``, each a collector that reads the threads' state when scraped
    (nothing is pushed): :class:`LinkGauges`, and with a floor link :class:`AckRefusalCounts` and
    :class:`TroubleFamilies`."""
    registry.register(LinkGauges(floor, feed))
    if floor is not None:
        registry.register(AckRefusalCounts(floor))
        registry.register(TroubleFamilies(floor))


class LinkProcess(_Companion):
    """The floor link and the metrics, in their own process, fed by the table's link socket."""

    def __init__(self, settings: Settings, notifier: Notifier | None = None) -> None:
        s = settings
        if not s.floor.enabled and not s.metrics.enabled:
            raise CompanionError("link: nothing to do: [floor] and [metrics] are both off")
        self.settings = s
        self.notifier = notifier or Notifier()
        self.stop_event = threading.Event()
        _public, link_path = socket_paths(s.feed_dir())
        self.feed = FeedClient(link_path, self._on_message, name="link")
        self.floor: Any = None
        if s.floor.enabled:
            from controller.floor_link import FloorLink

            lim = s.table.limits
            limits = {"minimum": lim.minimum_cents, "maximum": lim.maximum_cents,
                      "side_minimum": lim.side_minimum_cents, "side_maximum": lim.side_maximum_cents}  # fmt: skip
            self.floor = FloorLink(
                s.floor, s.journal.path, self.feed.send_ack, on_trouble=self._on_trouble, limits=limits
            )
        self.table_metrics = TableFamilies()
        self.registry: CollectorRegistry | None = None
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.address: tuple[str, int] | None = None

    def _on_message(self, message: TableMessage) -> None:
        floor = self.floor
        if isinstance(message, Update):
            if floor is not None:
                floor.show(message.update.view)
        elif isinstance(message, Commit):
            if floor is not None:
                floor.wake()
        elif isinstance(message, Hello):
            if floor is not None:
                floor.show(message.view)
                floor.wake()
        elif isinstance(message, Metrics):
            self.table_metrics.take(message.text)

    def _on_trouble(self, trouble: Trouble | None) -> None:
        """The floor link's trouble changed (on paho's thread): the service's Status line says it."""
        broker = self.settings.floor.broker
        self.notifier.status(f"floor: {trouble.text}" if trouble is not None else f"floor: connected to {broker}")

    def _open_metrics(self) -> None:
        s = self.settings
        r = self.registry = CollectorRegistry(auto_describe=False)
        r.register(self.table_metrics)
        link_gauges(r, self.floor, self.feed)
        try:
            self._server, self._thread = start_http_server(s.metrics.port, addr=s.metrics.host, registry=r)
        except OSError as exc:
            log.error("metrics: cannot serve on %s (%s); the link runs without them", s.metrics.bind, exc)
            return
        bound = self._server.server_address
        self.address = (str(bound[0]), int(bound[1]))
        log.info("metrics on http://%s:%d/metrics", self.address[0], self.address[1])

    def open(self) -> None:
        if self.settings.metrics.enabled:
            self._open_metrics()
        self.feed.start()
        if self.floor is not None:
            self.floor.start()
            self.notifier.status(f"floor: connecting to {self.settings.floor.broker}")
        self.notifier.ready()

    def close(self) -> None:
        self.notifier.stopping()
        self.feed.close()
        if self.floor is not None:
            self.floor.close()
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is not None:
            server.shutdown()
            server.server_close()
        if thread is not None:
            thread.join(timeout=5)
