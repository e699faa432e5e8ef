"""The board process (``shoe-controller board``): the scoreboard's page and its event stream on the LAN, fed
by the table process's ``feed.sock``.

No journal access at all: a board started now gets the current shoe's coups in the feed's hello. A table
restart costs its browsers nothing but the time the table is away: the board keeps its streams open, shows the
last snapshot marked TABLE OFFLINE, and picks the table up again at its next hello. Beside it, on its own
listener (``[board] dealer_listen``, loopback by default), the dealer screen (:mod:`controller.board.dealer`),
fed by ``money.sock``: the money at the table, which ``feed.sock`` and the scoreboard never carry.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from controller.companions import Companion, CompanionError
from controller.config import Settings
from controller.feed.client import FeedClient
from controller.feed.messages import Hello, Money, TableMessage, Update
from controller.feed.server import money_socket_path, socket_paths
from controller.game.public import FeedUpdate, PublicAlarm
from controller.notify import Notifier

if TYPE_CHECKING:
    from controller.board.dealer import DealerScreen

log = logging.getLogger(__name__)


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


class BoardProcess(Companion):
    """The scoreboard, in its own process, fed by the table's public feed. The feed's reader thread only hands
    each message to a bounded queue; the board's own thread gathers what came within :data:`BOARD_GATHER` and
    shows it (every coup followed, one snapshot built of the newest view)."""

    def __init__(self, settings: Settings, notifier: Notifier | None = None, *, gather: float = BOARD_GATHER) -> None:
        from controller.board.scoreboard import ScoreboardSink

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
            from controller.board.dealer import DealerScreen

            self.dealer = DealerScreen(dealer, table_name=s.table.name, seats=s.spots.seats)
            self.money_feed = FeedClient(
                money_socket_path(s.feed_dir()),
                self._on_money,
                on_connected=self._on_money_connected,
                name="board-money",
                money=True,
            )
            self.dealer.send_buy_in = self.money_feed.send_buy_in  # the buy-ins entered at the screen
            self.dealer.send_pin = self.money_feed.send_pin  # a supervisor's PIN entered at the screen
            self.dealer.send_rate = self.money_feed.send_rate  # the screen's RATE of an uncarded player
            self.dealer.send_key = self.money_feed.send_key  # the screen's unreadable coup card, keyed

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
                    self._tell_dealer()
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
            self._tell_dealer()

    def _tell_dealer(self) -> None:
        """The dealer screen's header: the shoe, the coup in play and the shoe's last coup record, as the
        scoreboard follows them (on the board's own thread: the builder is not shared)."""
        if self.dealer is not None:
            builder = self.sink.builder
            shoe = builder.view.shoe
            last = next((r for r in reversed(builder.records) if r.get("coup") is not None), None)  # not set aside
            self.dealer.game(shoe.number, shoe.coup, last)

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
