"""The scoreboard's server: publishes each snapshot and serves the page, ``/api/state`` and ``/events``.

:class:`ScoreboardSink` is a table sink. The daemon wraps it in a :class:`~controller.table.sinks.QueuedSink`, so
:meth:`ScoreboardSink.update` runs on the sink's own thread, never on the table loop's: it builds the
snapshot with the pure :class:`~controller.displays.snapshot.SnapshotBuilder`, encodes it once, and
publishes the bytes on an :class:`eventstream.Board`. The HTTP threads only ever read the latest published
bytes and never touch the table's state.

The server is the neutral, bounded :class:`eventstream.BoardServer` (standard library only; stream bounds
and eviction, 503 past :data:`eventstream.MAX_CONNECTIONS`, rude clients counted in
:attr:`ScoreboardSink.stats`; the floor's pit view serves its pages through the same server). This module
keeps what is the table's own: the sink, its snapshot encoding and the page's static files.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from controller.displays.snapshot import LimitsLike, SnapshotBuilder, TableInfo
from controller.game.public import FeedUpdate, PublicProjector, PublicView
from controller.game.rules import Ruleset
from controller.game.table import Notice, TableView
from eventstream import MAX_STREAMS, MAX_STREAMS_PER_ADDRESS, Board, BoardHandler, BoardServer, load_static

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).with_name("static")
#: The files the server serves, read once at start: URL name -> content type.
STATIC_FILES: Mapping[str, str] = {
    "index.html": "text/html; charset=utf-8",
    "scoreboard.css": "text/css; charset=utf-8",
    "scoreboard.js": "text/javascript; charset=utf-8",
}


class ScoreboardSettings(Protocol):
    """The ``[scoreboard]`` settings the sink reads (:class:`~controller.config.ScoreboardSection`)."""

    @property
    def host(self) -> str: ...

    @property
    def port(self) -> int: ...

    @property
    def reveal(self) -> str: ...

    @property
    def bilingual(self) -> bool: ...


class ScoreboardSink:
    """The scoreboard as a table sink with its own small HTTP server.

    ``ScoreboardSink(settings, table_name=..., limits=..., ruleset=..., history=journal.coups(shoe=N))``,
    then :meth:`start`; :meth:`update` (or :meth:`update_many`) for each table update; :meth:`close` stops
    the server.
    """

    name = "scoreboard"

    def __init__(
        self,
        settings: ScoreboardSettings,
        *,
        table_name: str,
        limits: LimitsLike,
        ruleset: Ruleset,
        history: Sequence[Mapping[str, Any]] = (),
        heartbeat: float = 15.0,
        retry_ms: int = 2000,
        wall_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
        max_streams: int = MAX_STREAMS,
        max_streams_per_address: int = MAX_STREAMS_PER_ADDRESS,
    ) -> None:
        self.settings = settings
        self.heartbeat = heartbeat
        self.retry_ms = retry_ms
        self.wall_ms = wall_ms
        self.max_streams = max_streams
        self.max_streams_per_address = max_streams_per_address
        self.min_gap = 0.0  # a card shows at once: every event is sent
        info = TableInfo(table_name, limits, ruleset, bilingual=settings.bilingual)
        self.builder = SnapshotBuilder(info, reveal=settings.reveal, history=history)
        #: The squeeze for views handed to :meth:`update` in this process (the board process gets its
        #: updates from the table's feed, projected there).
        self.projector = PublicProjector(settings.reveal)
        self.board = Board()
        self.fault: str | None = None
        #: What the server has seen go wrong on the clients' side (for tests, tools and the logs).
        self.stats: Counter[str] = Counter()
        self._content: dict[str, Any] | None = None
        self._roads_obj: object = None
        self._roads_json = "null"
        self._version = 0
        self._server: BoardServer | None = None
        self._publish(self.builder.build())

    # -- the table's updates ---------------------------------------------------------------------
    def update(self, view: TableView, notices: Sequence[Notice]) -> None:
        """A table sink's update in this process: projected (the squeeze applied), then shown."""
        self.publish(self.projector.update(view, notices))

    def update_many(self, updates: Sequence[tuple[TableView, Sequence[Notice]]]) -> None:
        """Several updates that queued up while the last snapshot was built (a fast shoe): follow every one
        in order, publish one snapshot of the newest. A board only ever shows the current state."""
        self.publish_many([self.projector.update(view, notices) for view, notices in updates])

    def publish(self, update: FeedUpdate) -> None:
        """Show one update from the table (its feed, or :meth:`update`)."""
        self._publish(self.builder.build(update))

    def publish_many(self, updates: Sequence[FeedUpdate]) -> None:
        """Follow every update in order and publish one snapshot of the newest."""
        for update in updates[:-1]:
            self.builder.follow(update)
        if updates:
            self._publish(self.builder.build(updates[-1]))

    def reset(self, view: PublicView, history: Sequence[Mapping[str, Any]]) -> None:
        """Start again from the table's word (the feed's hello after a (re)connect) and show it."""
        self.builder.reset(view, history)
        self._publish(self.builder.build())

    def _publish(self, content: dict[str, Any]) -> None:
        if content == self._content:  # the cached road parts compare by identity: cheap
            return  # nothing visible changed: no new version (in a squeeze game not even a tick)
        self._content = content
        self._version += 1
        # The roads only change on a declare: encode them once and splice them into each snapshot.
        roads = content["roads"]
        if roads is not self._roads_obj:
            self._roads_obj = roads
            self._roads_json = json.dumps(roads, separators=(",", ":"))
        rest = {"version": self._version, "ts_ms": self.wall_ms(), **content}
        del rest["roads"]
        head = json.dumps(rest, separators=(",", ":"))
        self.board.publish_body(self._version, f'{head[:-1]},"roads":{self._roads_json}}}'.encode())

    def snapshot(self) -> dict[str, Any]:
        """The latest published snapshot (decoded; for tests and tools)."""
        return dict(json.loads(self.board.current()[1]))

    @property
    def version(self) -> int:
        return self._version

    @property
    def streams(self) -> list[str]:
        """The remote address of each open event stream, oldest first."""
        server = self._server
        if server is None:
            return []
        with server.lock:
            return [s.address for s in server.streams]

    # -- the server ------------------------------------------------------------------------------
    def start(self) -> bool:
        """Bind and serve in a thread. A bind failure is logged and kept in :attr:`fault`; returns False."""
        host, port = self.settings.host, self.settings.port
        try:
            server = BoardServer(
                (host, port), self, _ScoreboardHandler, load_static(STATIC_DIR, STATIC_FILES), label="scoreboard"
            )
        except OSError as exc:
            self.fault = f"cannot bind {host}:{port}: {exc.strerror or exc}"
            log.error("scoreboard: %s; the table runs without it", self.fault)
            return False
        self._server = server
        server.start()
        h, p = self.address
        log.info("scoreboard: serving http://%s:%d/ (reveal %s)", h, p, self.settings.reveal)
        return True

    @property
    def address(self) -> tuple[str, int]:
        """``(host, port)`` actually bound (the port chosen when the settings say 0)."""
        if self._server is None:
            return self.settings.host, self.settings.port
        return self._server.bound

    def close(self) -> None:
        """Stop the server: end the event streams, join every thread, close every socket. Idempotent."""
        if self._server is not None and self.stats:
            log.info("scoreboard: clients: %s", ", ".join(f"{k} {v}" for k, v in sorted(self.stats.items())))
        self.board.close()
        server, self._server = self._server, None
        if server is not None:
            server.stop()


class _ScoreboardHandler(BoardHandler):
    server_version = "shoe-controller-scoreboard"
