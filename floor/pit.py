"""The pit view: every table at a glance, a page per table with game recall, the floor's alert feed.

Read-only on the broker; on the archive it writes the audit log (floor/pit_auth.py) and who acknowledged an
alert (floor/pit_actions.py). Live data comes from the broker on the pit's own (non-shared) subscription::

    baccarat/+/+/state    retained JSON of each table now (floor_protocol.state; refused unless valid)
    baccarat/+/+/status   retained online / offline (the table's Last Will)
    baccarat/+/+/record   every record a table publishes (last result, advantage flags, new shoe)
    baccarat/+/floor/alert  the floor's alerts (surveillance, gaps, broken links ...)

Each message is read into its shape first (state by :mod:`floor_protocol.state`, the others by
:mod:`floor.pit_intake`) or refused and counted (``refused_<what>`` in ``stats``, on ``/metrics`` and in the
snapshot's ``refused``); whatever goes wrong while handling one message is caught, counted (``errors``) and
logged at most once a minute, so paho's callback, and with it the pit, never stops (docs/floor.md).

History comes from the archive (:class:`~floor.archive.Archive`): the last result and advantage flags at start,
the initial alert feed, and everything on a table page (roads, coups with their cards, recall, alarm log, the
edge of each wager over the shoe).

:class:`Pit` keeps one tile per table (at most :data:`MAX_TABLES`; more are counted in ``stats`` and shown
on the page as ``ignored``) and the newest :data:`FEED_SIZE` alerts. Only paho's network thread changes
them; each change is encoded once (each tile's JSON is cached) and published on an
:class:`eventstream.Board`, which the HTTP threads serve to every page over ``/events`` through the neutral
bounded :class:`eventstream.BoardServer` (the scoreboard's too: the same stream limits, eviction, 503 and
error handling). A slow
page only ever gets the newest snapshot, never a backlog.

Routes: ``/`` the pit page, ``/table/<id>`` a table page, ``/events`` (SSE), ``/api/pit`` (the snapshot),
``/api/table/<id>``, ``/api/table/<id>/coup?shoe=S&coup=C`` (recall, with the coups before and after it:
``previous`` and ``next``), ``/api/feed``, ``/api/session`` (who is signed in, their role and the session's CSRF
token), ``/metrics`` (Prometheus, the collector's counters when ``shoe-floor serve`` runs it); ``POST
/api/feed/ack`` (a pit manager acknowledges an alert: floor/pit_actions.py), ``POST /signin`` and ``/signout``.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from commandline.times import utc_stamp
from controller.game.bodies import (
    AdvantageBody,
    AdvantageClearedBody,
    BodyError,
    DealerInBody,
    DealerOutBody,
    parse_body,
)
from controller.game.edges import shoe_edges
from controller.game.records import RecordKind
from controller.game.roads import RoadError, big_road_grid, compute_roads, roads_layout
from eventstream import MAX_STREAMS, MAX_STREAMS_PER_ADDRESS, Board, BoardHandler, BoardServer, load_static
from floor.accounting import ShiftFigures, money_move, ratings, shift_report
from floor.archive import Acknowledgement, Archive
from floor.pit_actions import act
from floor.pit_auth import REFUSALS, Gate, SessionRules, Visitor, admit, check_bind, post, session_info
from floor.pit_intake import MAX_ALERT_BYTES, Refused, body_ok, followable, read_alert, read_record, read_status
from floor.shifts import DEFAULT_SHIFTS, DEFAULT_ZONE, Shift, ShiftError, ShiftPlan, parse_time
from floor.slips import floor_slips, player_buy_ins
from floor_protocol.addresses import parse_broker
from floor_protocol.admission import MAX_RECORD_BYTES
from floor_protocol.state import StateError, TableStateMessage, parse_state
from floor_protocol.topics import PIT_FILTERS, Leaf, is_level, parse_topic
from mqttloop import NetworkLoop
from mqttloop.reach import Reach

log = logging.getLogger("shoe-floor.pit")

STATIC_DIR = Path(__file__).with_name("static")
STATIC_FILES: Mapping[str, str] = {
    "pit.html": "text/html; charset=utf-8",
    "table.html": "text/html; charset=utf-8",
    "player.html": "text/html; charset=utf-8",
    "pit.css": "text/css; charset=utf-8",
    "signin.css": "text/css; charset=utf-8",
    "items.js": "text/javascript; charset=utf-8",
    "pit.js": "text/javascript; charset=utf-8",
    "table.js": "text/javascript; charset=utf-8",
    "player.js": "text/javascript; charset=utf-8",
}
#: Tables the pit keeps a tile for (a floor has tens); more are counted and shown as ignored.
MAX_TABLES = 200
#: Alerts kept for the feed (newest first); the archive holds them all.
FEED_SIZE = 100
#: The least seconds between two snapshots on one pit page's stream (the newest is sent; those between are
#: not): twelve busy tables publish some 100 times a second, which a page cannot draw nor a person read.
MIN_GAP = 0.25
#: The records that say who deals at a table (its last one says who is on duty now).
DUTY_KINDS = (RecordKind.DEALER_IN.value, RecordKind.DEALER_OUT.value)
#: Big-road columns a tile keeps (the newest): a shoe of ~80 coups takes up to ~50; the page sizes the cells to
#: the tile and scrolls inside the road (the newest in view) when they would be smaller than legible.
TILE_COLUMNS = 100
#: Advantage flags kept per table (a table offers a handful of wagers).
MAX_FLAGS = 16
#: The messages the pit refuses when they are not of their shape (``refused_<name>`` in ``stats``).
REFUSED_MESSAGES = ("state", "status", "record", "alert", "topic")
#: Errors while handling a message are logged at most this often (seconds); every one is counted.
ERROR_LOG_EVERY = 60.0
#: Open rating sessions a table page lists (a table seats at most 14).
MAX_SESSIONS = 28
#: Coups a table page lists for the current and the previous shoe (regulators ask for at least 10).
PAGE_COUPS = 200
#: Shoes a recall's *previous* / *next* looks through for a coup either side (shoes holding only cards set aside
#: are passed over).
RECALL_REACH = 3


def _ms(at: object) -> int | None:
    """Epoch milliseconds of a UTC ISO 8601 time (``...Z``), None when it is not one."""
    if not isinstance(at, str):
        return None
    try:
        return int(datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def valid_table(name: str) -> bool:
    return is_level(name)


def valid_player(ref: str) -> bool:
    """A player_ref as the records carry it: a card's UID, 16 upper-case hex digits."""
    return len(ref) == 16 and all(c in "0123456789ABCDEF" for c in ref)


def initial_feed(archive: Archive, limit: int = FEED_SIZE, table: str | None = None) -> list[dict[str, Any]]:
    """The newest alerts first, as published on ``baccarat/<site>/floor/alert`` (the archive's feed)."""
    return [item.to_dict() for item in archive.feed(limit, table=table)]


class ShiftMoney:
    """One table's money in one shift, as the tile shows it: handle, the house's win, the commission boxes.

    Seeded from the accounting's figures for the shift (:func:`floor.accounting.shift_report`) and kept live
    from the ``settlement`` and ``commission`` records the pit follows, folded by the accounting's one rule
    (:func:`floor.accounting.money_move`, which the report's figures are folded by too): the handle is the
    stakes settled, the win is what the house keeps (minus the settlements' ``net``, the commission taken at
    the payout included) plus what the seats' commission boxes collected; commission collected and
    uncollected are the boxes'."""

    __slots__ = ("commission_collected", "commission_uncollected", "handle", "shift", "shown", "wagers", "win")

    def __init__(self, shift: Shift, figures: ShiftFigures | None = None) -> None:
        self.shift = shift
        self.shown = shift.to_dict()  # its name, start and end as the tile shows them
        self.handle = 0 if figures is None else figures.handle
        self.win = 0 if figures is None else figures.win
        self.commission_collected = 0 if figures is None else figures.commission_collected
        self.commission_uncollected = 0 if figures is None else figures.commission_uncollected
        self.wagers = 0 if figures is None else figures.wagers

    def fold(self, kind: str, body: Mapping[str, Any]) -> None:
        """Add one record's money by the shift's one rule (:func:`floor.accounting.money_move`)."""
        try:
            move = money_move(parse_body(kind, body))
        except BodyError:
            return  # not its kind's: the intake refused it already, and the accounting counts it for nothing
        if move is not None:
            self.handle += move.handle
            self.win += move.win
            self.wagers += move.wagers
            self.commission_collected += move.collected
            self.commission_uncollected += move.uncollected

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.shown,
            "handle": self.handle,
            "win": self.win,
            "hold": None if not self.handle else self.win / self.handle,
            "commission_collected": self.commission_collected,
            "commission_uncollected": self.commission_uncollected,
            "wagers": self.wagers,
        }


def _flag(body: AdvantageBody, state: str) -> dict[str, Any]:
    return {"bet": body.bet, "ev": body.ev, "shoe": body.shoe, "coup": body.coup, "cards_left": body.cards_left,
            "state": state}  # fmt: skip


class _Tile:
    """One table as the pit shows it."""

    def __init__(self, site: str, table: str) -> None:
        self.site = site
        self.table = table
        self.status = "unknown"
        self.state: dict[str, Any] = {}
        self.due: str | None = None  # what the table's state says is due (its ``due``)
        self.counts: dict[str, int] = {}
        self.game: dict[str, Any] | None = None
        self.limits: dict[str, int] | None = None  # the table's limits in cents (its state says them)
        self.last: dict[str, Any] | None = None
        self.bead = ""
        self.pairs: str | None = None  # the pairs beside the bead string (absent from older tables)
        self.big_road: list[list[Any]] = []  # [column, row, winner, ties, player_pair, banker_pair]
        self._road_json = "[]"  # the big road's JSON, made when the bead or pairs change (most messages do not)
        self.alarms: dict[str, int | None] = {}  # name -> since (epoch ms)
        # bet -> its flag this shoe: raised (the table's advantage record) or cleared (advantage_cleared), with the
        # times it was raised; a cleared flag stays on the tile (dimmed) so a wager that flaps shows once.
        self.advantage: dict[str, dict[str, Any]] = {}
        self.money: ShiftMoney | None = None
        self.dealer: str | None = None  # the dealer on duty: the staff id of the table's last dealer_in
        self.updated: int | None = None
        self.json = ""
        self.encode()  # a tile made by a message it then refused is still shown (and the snapshot still JSON)

    def follow_state(self, state: TableStateMessage) -> None:
        self.due = state.due
        self.state = {
            "shoe": state.shoe,
            "coup": state.coup,
            "due": state.due,
            "cards_remaining": state.cards_remaining,
            "cards_dealt": state.cards_dealt,
            "last_coup": state.last_coup,
        }
        lim = state.limits
        self.limits = None if lim is None else {
            "minimum": lim.minimum, "maximum": lim.maximum, "side_minimum": lim.side_minimum,
            "side_maximum": lim.side_maximum,
        }  # fmt: skip
        c = state.counts
        self.counts = {"coups": c.coups, "banker": c.banker, "player": c.player, "tie": c.tie,
                       "natural": c.natural, "player_pair": c.player_pair, "banker_pair": c.banker_pair}  # fmt: skip
        now = _ms(state.at)
        self.alarms = {a: self.alarms.get(a, now) for a in state.alarms}
        roads = state.roads
        if (roads.bead, roads.pairs) != (self.bead, self.pairs):
            self.bead, self.pairs = roads.bead, roads.pairs
            try:
                columns = compute_roads(roads.results()).big_road
            except RoadError:
                columns = ()
            cells = big_road_grid(columns)
            first = max(0, max((c for c, _r, _cell in cells), default=0) + 1 - TILE_COLUMNS)
            self.big_road = [
                [c - first, r, cell.winner.value, cell.ties, cell.player_pair, cell.banker_pair]
                for c, r, cell in cells
                if c >= first
            ]
            self._road_json = json.dumps(self.big_road, separators=(",", ":"))
        self.updated = now

    def follow_record(self, kind: str, body: Mapping[str, Any], at: str | None = None) -> None:
        if kind == RecordKind.COUP and body.get("declared"):
            self.last = {
                k: body.get(k)
                for k in ("shoe", "coup", "winner", "player", "banker", "player_total", "banker_total", "natural",
                          "player_pair", "banker_pair")
            }  # fmt: skip
        elif kind == RecordKind.SHOE and body.get("event") == "start":
            self.advantage.clear()
            self.last = None
            self.game = _game(body)
        elif kind == RecordKind.ADVANTAGE and (raised := AdvantageBody.read(body)) is not None:
            old = self.advantage.get(raised.bet)
            if old is not None or len(self.advantage) < MAX_FLAGS:
                flag = _flag(raised, "raised")
                flag["raised"] = (old["raised"] if old else 0) + 1
                self.advantage[raised.bet] = flag
        elif kind == RecordKind.ADVANTAGE_CLEARED and (cleared := AdvantageClearedBody.read(body)) is not None:
            old = self.advantage.get(cleared.bet)
            if old is not None:
                self.advantage[old["bet"]] = {**_flag(cleared, "cleared"), "raised": old["raised"], "peak": old["ev"]}
        elif kind == RecordKind.DEALER_IN and (signed_in := DealerInBody.read(body)) is not None:
            self.dealer = signed_in.staff_id
        elif kind == RecordKind.DEALER_OUT and (signed_out := DealerOutBody.read(body)) is not None:
            if signed_out.staff_id == self.dealer:
                self.dealer = None
        elif kind in (RecordKind.SETTLEMENT, RecordKind.COMMISSION) and at is not None and self.money is not None:
            try:
                moment = parse_time(at)
            except ShiftError:
                return
            if self.money.shift.contains(moment):
                self.money.fold(kind, body)

    def roll(self, shift: Shift) -> bool:
        """Start ``shift``'s figures when it is a later shift than the tile's (a new shift began)."""
        if self.money is None or self.money.shift.start < shift.start:
            self.money = ShiftMoney(shift)
            return True
        return False

    def phase(self) -> str:
        """The table's state in the pit's words: closed, link down, shoe change, dealing (or unknown)."""
        if self.status == "offline":
            return "closed"
        if "link_down" in self.alarms:
            return "link down"
        if self.due == "new_shoe":
            return "shoe change"
        if self.status == "online":
            return "dealing"
        return "unknown"

    def encode(self) -> None:
        link = "offline" if self.status == "offline" else "link down" if "link_down" in self.alarms else self.status
        self.json = (
            json.dumps(
                {
                    "table": self.table,
                    "site": self.site,
                    "status": self.status,
                    "link": link,
                    "phase": self.phase(),
                    **self.state,
                    "counts": self.counts,
                    "game": self.game,
                    "limits": self.limits,
                    "last": self.last,
                    "bead": self.bead,
                    "alarms": [{"name": a, "since": s} for a, s in self.alarms.items()],
                    "advantage": sorted(self.advantage.values(), key=lambda f: str(f["bet"])),
                    "money": None if self.money is None else self.money.to_dict(),
                    "dealer": self.dealer,
                    "updated": self.updated,
                },
                separators=(",", ":"),
                allow_nan=False,
            )[:-1]
            + f',"big_road":{self._road_json}}}'
        )


def _game(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The game a shoe's start record names: its ruleset's name and description, the decks, the wagers."""
    rules = body.get("rules")
    if not isinstance(rules, Mapping):
        return {"name": None, "description": None, "decks": body.get("decks") if _whole(body.get("decks")) else None}
    offered = rules.get("offered")
    return {
        "name": str(rules.get("name"))[:60] if isinstance(rules.get("name"), str) else None,
        "description": str(rules.get("description"))[:120] if isinstance(rules.get("description"), str) else None,
        "decks": body.get("decks") if _whole(body.get("decks")) else None,
        "offered": [b for b in offered if isinstance(b, str)][:16] if isinstance(offered, list) else [],
    }


def _whole(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 2**53


class Pit:
    """The live pit: tiles and feed, fed by the broker, published on :attr:`board` (see the module's notes)."""

    def __init__(
        self,
        archive_url: str,
        *,
        heartbeat: float = 15.0,
        retry_ms: int = 2000,
        max_streams: int = MAX_STREAMS,
        max_streams_per_address: int = MAX_STREAMS_PER_ADDRESS,
        min_gap: float = MIN_GAP,
        wall_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
        plan: ShiftPlan | None = None,
        max_record_bytes: int = MAX_RECORD_BYTES,
        sessions: SessionRules | None = None,
    ) -> None:
        self.board = Board()
        self.tiles_board = Board()  # the same snapshot without the alert feed: what a viewer sees (floor/pit_auth.py)
        #: The longest record it reads: the collector's (``serve --max-record-bytes``), so that the pit never
        #: refuses a record the archive keeps; an alert may carry one such record.
        self.max_record_bytes = max_record_bytes
        self.max_alert_bytes = max_record_bytes + MAX_ALERT_BYTES - MAX_RECORD_BYTES
        self.plan = plan if plan is not None else ShiftPlan.parse(DEFAULT_SHIFTS, DEFAULT_ZONE)
        self.stats: Counter[str] = Counter()
        self._metrics: Callable[[], bytes] | None = None  # /metrics, made at the first scrape (floor.metrics)
        self.heartbeat = heartbeat
        self.retry_ms = retry_ms
        self.max_streams = max_streams
        self.max_streams_per_address = max_streams_per_address
        self.min_gap = min_gap
        self.wall_ms = wall_ms
        self.archive = Archive(archive_url, create=False)
        self.archive_lock = threading.Lock()
        #: Who may see what (floor/pit_auth.py): the pit's users, their sessions, the audit log.
        self.gate = Gate(self.archive, self.archive_lock, sessions)
        self.tiles: dict[str, _Tile] = {}
        self.feed: deque[dict[str, Any]] = deque(maxlen=FEED_SIZE)
        self._ignored: set[str] = set()  # tables past MAX_TABLES (at most 10 times as many names kept)
        self._feed_json = "[]"
        self._version = 0
        self._lock = threading.Lock()  # paho's thread and the start-up load
        self._client: mqtt.Client | None = None
        self._network: NetworkLoop | None = None  # paho's loop, on a thread of ours (mqttloop)
        self._server: Any = None
        self._last_error_log = -ERROR_LOG_EVERY  # when an error was last logged (monotonic)
        self._refused_shown = 0  # the refused count the published snapshot shows
        self._refused_at = -1.0  # when a refusal last published one (monotonic)
        self.broker_problem: str | None = None  # why the broker is not reached (mqttloop.reach), shown on the page
        self.shift = self.plan.shift_of(self._now())
        self.load()

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self.wall_ms() / 1000, UTC)

    # -- history from the archive ------------------------------------------------------------------
    def load(self) -> None:
        """The tables the archive knows, their last result and open advantage flags, and the feed."""
        with self.archive_lock:
            tables = self.archive.tables()[:MAX_TABLES]
            feed = initial_feed(self.archive)
            lasts = {t: self.archive.coups(t, last=1) for t in tables}
            shoes = {t: self.archive.shoes(t) for t in tables}
            current = {t: self.archive.shoe_records(t, s[-1]) if s else [] for t, s in shoes.items()}
            # the dealer on duty: the last dealer_in or dealer_out, which may be shoes back (a dealer signed in
            # before the shoe began, or a table whose pit restarted mid-shift)
            duty = {t: self.archive.last_record_of_kinds(t, DUTY_KINDS) for t in tables}
            money = self._shift_figures(self.shift)
        with self._lock:
            for table in tables:
                tile = self.tiles.setdefault(table, _Tile("", table))
                tile.money = ShiftMoney(self.shift, money.get(table))
                last_duty = duty[table]
                if last_duty is not None and body_ok(last_duty.kind, last_duty.body):
                    tile.follow_record(last_duty.kind, last_duty.body)
                for kind, body in current[table]:
                    if body_ok(kind, body):
                        tile.follow_record(kind, body)
                for coup in lasts[table]:
                    if body_ok(RecordKind.COUP, coup):
                        tile.follow_record(RecordKind.COUP, coup)
                tile.encode()
            self.feed.extend(reversed(feed[:FEED_SIZE]))  # the deque holds oldest first
            self._feed_json = json.dumps(list(reversed(self.feed)), separators=(",", ":"))
            self._publish()

    def _shift_figures(self, shift: Shift) -> dict[str, ShiftFigures]:
        """Each table's figures for ``shift`` so far, from the archive (the accounting's shift report; nothing
        when the archive has no money tables yet)."""
        figures = shift_report(self.archive, self.plan, shift.start, shift.start + timedelta(seconds=1))
        return {f.table: f for f in figures if f.table is not None and f.shift == shift.name}

    def _roll(self) -> None:
        """A new shift began (by the clock): every tile starts its figures afresh."""
        now = self._now()
        if self.shift.contains(now):
            return
        self.shift = self.plan.shift_of(now)
        for tile in self.tiles.values():
            if tile.roll(self.shift):
                tile.encode()

    # -- live from the broker (paho's thread) --------------------------------------------------------
    def on_message(self, topic: str, payload: bytes) -> None:
        """Take one message off the broker. Never raises: a message it refuses (floor.pit_intake) is counted in
        ``refused_<what>``; anything that goes wrong while handling one is counted in ``errors`` and logged at
        most once a minute, and the next message is handled as if nothing had happened."""
        try:
            self._take(topic, payload)
        except Exception as exc:  # a bug, or something no check foresaw: this message only
            self.stats["errors"] += 1
            now = time.monotonic()
            if now - self._last_error_log >= ERROR_LOG_EVERY:
                self._last_error_log = now
                log.error(
                    "pit: a message on %.120s could not be handled (%d so far; said at most once a minute)",
                    topic,
                    self.stats["errors"],
                    exc_info=exc,
                )

    def _on_mqtt_message(self, client: mqtt.Client, userdata: object, message: mqtt.MQTTMessage) -> None:
        try:
            topic = message.topic  # paho decodes it here (UTF-8)
        except UnicodeDecodeError:
            self._refused("topic", "?", "a topic that is not UTF-8")
            return
        self.on_message(topic, bytes(message.payload))

    def _refused(self, what: str, table: str, why: object) -> None:
        self.stats[f"refused_{what}"] += 1
        self.stats["refused"] += 1
        log.debug("pit: a %s message of table %.100s refused: %s", what, table, why)

    def _take(self, topic: str, payload: bytes) -> None:
        where = parse_topic(topic)
        if where is None:
            return
        with self._lock:
            self._roll()
            if where.leaf is None:  # the floor's alert topic
                changed = self._alert(payload)
            else:
                tile = self._tile(where.site, where.table)
                if tile is None:
                    if where.table in self._ignored or len(self._ignored) >= 10 * MAX_TABLES:
                        return
                    self._ignored.add(where.table)  # a table with no tile: counted once, shown on the page
                    self.stats["tables_ignored"] = len(self._ignored)
                    changed = True
                else:
                    changed = self._follow(tile, where.leaf, payload)
                    if changed:
                        tile.encode()
                        tile.site = where.site
                        self.tiles[where.table] = tile  # a new table gets its tile with its first message taken
            if not changed:
                # A refusal changes only the count the page shows: said at most once a second, so that a
                # flood of junk does not become a flood of snapshots to every page.
                if self.stats["refused"] == self._refused_shown or time.monotonic() - self._refused_at < 1.0:
                    return
                self._refused_at = time.monotonic()
            self._publish()

    def _tile(self, site: str, table: str) -> _Tile | None:
        """The table's tile, or a new one (kept once a message for it is taken), or None past MAX_TABLES."""
        tile = self.tiles.get(table)
        if tile is None:
            if len(self.tiles) >= MAX_TABLES or not valid_table(table):
                return None
            tile = _Tile(site, table)
            tile.money = ShiftMoney(self.shift)
        return tile

    def _follow(self, tile: _Tile, leaf: Leaf, payload: bytes) -> bool:
        """Whether ``tile`` changed (False: the message is refused, or not one the pit follows)."""
        if leaf is Leaf.STATUS:
            try:
                tile.status = read_status(payload)
            except Refused as exc:
                self._refused("status", tile.table, exc)
                return False
            return True
        if leaf is Leaf.STATE:
            try:
                state = parse_state(payload)
                if state.table != tile.table:
                    raise StateError(f"the state of table {state.table!r} on the topic of {tile.table!r}")
            except StateError as exc:
                self._refused("state", tile.table, exc)
                return False
            tile.follow_state(state)
            return True
        if leaf is not Leaf.RECORD:
            return False
        try:
            record = read_record(payload, tile.table, self.max_record_bytes)
        except Refused as exc:
            self._refused("record", tile.table, exc)
            return False
        if record.kind in (RecordKind.SETTLEMENT, RecordKind.COMMISSION):
            try:
                tile.roll(self.plan.shift_of(parse_time(record.at)))  # a record of a later shift starts it
            except ShiftError:
                return False
        tile.follow_record(record.kind, record.body, record.at)
        return True

    def _alert(self, payload: bytes) -> bool:
        """Whether the feed changed (False: refused, or an alert it already shows)."""
        try:
            item, dropped = read_alert(payload, self.max_alert_bytes)
        except Refused as exc:
            self._refused("alert", "floor", exc)
            return False
        if dropped:
            self.stats["alert_records_dropped"] += 1
        if item["id"] is not None and any(seen["id"] == item["id"] for seen in self.feed):
            return False  # said again (an alert is published at least once): the pit shows it once
        self.feed.append(item)
        self._feed_json = json.dumps(list(reversed(self.feed)), separators=(",", ":"), allow_nan=False)
        record = item["record"]
        tile = self.tiles.get(item["table"])
        if tile is not None and record is not None and followable(record):
            tile.follow_record(record["kind"], record["body"])
            tile.encode()
        return True

    def acknowledge(self, alert_id: int, user: str, address: str) -> Acknowledgement | None:
        """Acknowledge alert ``alert_id`` as ``user`` in the archive, with its audit row (once:
        :meth:`floor.archive.Archive.acknowledge`), and show it in the feed of every open page now (an alert
        acknowledged before, from another pit, too). None: the archive has no such alert."""
        with self.archive_lock:
            at = utc_stamp(self.gate.wall())
            ack = self.archive.acknowledge(alert_id, user, source=f"pit {address}"[:100], at=at)
        if ack is not None:
            with self._lock:
                shown = [f for f in self.feed if f["id"] == alert_id]
                for f in shown:
                    f["acked_by"], f["acked_at"] = ack.item.acked_by, ack.item.acked_at
                if shown:
                    self._feed_json = json.dumps(list(reversed(self.feed)), separators=(",", ":"), allow_nan=False)
                    self._publish()
        return ack

    def _publish(self) -> None:
        self._version += 1
        tiles = ",".join(self.tiles[t].json for t in sorted(self.tiles))
        ignored = self.stats["tables_ignored"]
        self._refused_shown = refused = self.stats["refused"]
        head = (
            f'{{"version":{self._version},"ts_ms":{self.wall_ms()},"ignored":{ignored},"refused":{refused},'
            f'"broker":{json.dumps(self.broker_problem)},"tables":[{tiles}],"feed":'
        )
        self.board.publish_body(self._version, f"{head}{self._feed_json}}}".encode())
        self.tiles_board.publish_body(self._version, f"{head}[]}}".encode())

    def metrics(self) -> bytes:
        """The pit's own counters in Prometheus' text format (``/metrics``, before the collector's)."""
        if self._metrics is None:
            from floor.metrics import PitCounts, exposition

            self._metrics = exposition(PitCounts(self.stats, REFUSED_MESSAGES, self.gate.refused, REFUSALS))
        return self._metrics()

    def snapshot(self) -> dict[str, Any]:
        return dict(json.loads(self.board.current()[1]))

    # -- a table page (the HTTP threads; one archive connection, taken in turn) -------------------------
    def table_page(self, table: str) -> dict[str, Any] | None:
        """A table page's data. What the archive holds that is not of its shape (a table's own key can sign
        anything) is left out and counted in ``skipped``; the roads and edges are drawn from the rest."""
        with self.archive_lock:
            shoes = self.archive.shoes(table)
            if not shoes and table not in self.tiles:
                return None
            out: dict[str, Any] = {"table": table, "shoes": shoes, "current": None, "previous": None, "skipped": 0}
            for key, shoe in zip(("current", "previous"), reversed(shoes[-2:]), strict=False):
                records = self.archive.shoe_records(table, shoe)
                listed = [c for c in self.archive.shoe_coups(table, shoe)][-PAGE_COUPS:]
                coups = [c for c in listed if body_ok(RecordKind.COUP, c)]
                alarms = [b for k, b in records if k == RecordKind.ALARM][-100:]
                good = [(k, b) for k, b in records if body_ok(k, b)]
                out["skipped"] += len(listed) - len(coups) + len(records) - len(good)
                out[key] = {
                    "shoe": shoe,
                    "coups": coups,
                    "roads": _roads(coups),
                    "alarms": [b for b in alarms if body_ok(RecordKind.ALARM, b)],
                    "edges": _edges(good),
                }
            out["alerts"] = initial_feed(self.archive, 100, table)
            out["ratings"] = [r.to_dict() for r in ratings(self.archive, table, open_only=True)][-MAX_SESSIONS:]
            tile = self.tiles.get(table)
            out["money"] = None if tile is None or tile.money is None else tile.money.to_dict()
        return out

    def player_page(self, ref: str) -> dict[str, Any]:
        """A player's page: their rating slips at every table (the open visit's too), grouped by visit, and
        their buy-ins (floor/slips.py; the same slips as ``shoe-floor slips --player REF --open``)."""
        with self.archive_lock:
            slips = floor_slips(self.archive, player=ref, include_open=True)
            buy_ins = player_buy_ins(self.archive, ref)
        visits: dict[str, list[dict[str, Any]]] = {}
        for slip in slips:
            visits.setdefault(slip.visit_start, []).append(slip.to_dict() | {"table": slip.table})
        return {
            "player_ref": ref,
            "visits": [{"start": start, "slips": listed} for start, listed in visits.items()],
            "buy_ins": buy_ins,
        }

    def recall(self, table: str, shoe: int, coup: int) -> dict[str, Any] | None:
        """A coup as a dispute needs it (:meth:`floor.archive.Archive.recall`: the cards, the totals, the flags,
        the record's seq and hash, and the coup's money records), the money records not of their shape left out
        (counted in ``skipped``)."""
        with self.archive_lock:
            found = self.archive.recall(table, shoe, coup)
            if found is None:
                return None
            before, after = self._neighbours(table, shoe, coup)
        money = found["money"]
        kept = [m for m in money if body_ok(m["kind"], m["body"])]
        return {**found, "money": kept, "skipped": len(money) - len(kept), "previous": before, "next": after}

    def _neighbours(self, table: str, shoe: int, coup: int) -> tuple[dict[str, int] | None, dict[str, int] | None]:
        """The coups a recall's *previous* and *next* lead to (:func:`recall_neighbours`). Under the archive's lock."""
        return recall_neighbours(
            self.archive.shoes(table), lambda s: [c["coup"] for c in self.archive.shoe_coups(table, s)], shoe, coup
        )

    # -- serving ---------------------------------------------------------------------------------------
    def start(
        self,
        bind: tuple[str, int],
        broker: str | None,
        *,
        metrics: Callable[[], bytes] | None = None,
        ca_file: str | None = None,
        username: str | None = None,
        password: str | None = None,
        say_broker: bool = True,
    ) -> None:
        """Serve on ``bind`` (OSError when it cannot bind); follow ``broker`` (None: history only). A broker not
        reached is shown on the page at once and said on the log (``say_broker``; ``serve``'s collector says it
        for both, at DEBUG here then) until it is. Off loopback with no pit users: GateError, nothing served."""
        check_bind(self.archive, bind[0])
        self._server = BoardServer(bind, self, _PitHandler, load_static(STATIC_DIR, STATIC_FILES), label="pit")
        self._server.pit = self
        self._server.metrics = metrics
        self._server.start()
        if broker is not None:
            self._connect(broker, ca_file, username, password, say_broker)
        log.info("pit: serving http://%s:%d/", *self.address)

    def _connect(
        self, url: str, ca_file: str | None, username: str | None, password: str | None, say: bool = True
    ) -> None:
        b = parse_broker(url)
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"shoe-pit-{id(self):x}", protocol=mqtt.MQTTv5)
        if b.tls:
            client.tls_set(ca_certs=ca_file)
        if username:
            client.username_pw_set(username, password)
        reach = Reach(client, url, log, level=logging.WARNING if say else logging.DEBUG, on_change=self._broker)

        def on_connect(c: mqtt.Client, u: object, f: object, reason: Any, p: object) -> None:
            if reason.is_failure:
                reach.refused(reason)
                return
            c.subscribe([(t, 1) for t in PIT_FILTERS])
            reach.connected()

        client.on_connect = on_connect
        client.on_message = self._on_mqtt_message
        client.suppress_exceptions = True  # and should a callback raise after all, paho logs it and goes on
        client.reconnect_delay_set(1, 10)
        client.connect_async(b.host, b.port)
        self._network = NetworkLoop(client, "pit-mqtt")
        self._network.start()
        self._client = client

    def _broker(self, problem: str | None) -> None:
        """The broker's reach changed (paho's thread): the page shows it with the next snapshot, now."""
        with self._lock:
            self.broker_problem = problem
            self._publish()

    @property
    def address(self) -> tuple[str, int]:
        bound: tuple[str, int] = self._server.bound
        return bound

    def close(self) -> None:
        if self._network is not None:
            self._network.stop()
            self._network = None
        if self.stats["refused"] or self.stats["errors"]:
            log.info("pit: messages: %s", ", ".join(f"{k} {v}" for k, v in sorted(self.stats.items()) if v))
        self._client = None
        self.board.close()
        self.tiles_board.close()
        server, self._server = self._server, None
        if server is not None:
            server.stop()
        self.archive.close()


def _roads(coups: list[dict[str, Any]]) -> dict[str, Any]:
    """The roads of a shoe's coups (checked ones: a winner the roads cannot read leaves the roads empty)."""
    try:
        return roads_layout(compute_roads(c for c in coups if c["declared"] and not c["void"]))
    except RoadError:
        return roads_layout(compute_roads(()))


def _edges(records: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any] | None:
    """:func:`edges_of`, or None when the shoe's records cannot give them (a ruleset the core cannot read)."""
    try:
        return edges_of(records)
    except (ValueError, TypeError, KeyError, ArithmeticError) as exc:
        log.debug("pit: no edges for a shoe: %r", exc)
        return None


def recall_neighbours(
    shoes: Sequence[int], coups_of: Callable[[int], Sequence[object]], shoe: int, coup: int
) -> tuple[dict[str, int] | None, dict[str, int] | None]:
    """The coups a recall's *previous* and *next* lead to (``{"shoe": S, "coup": C}``, None at either end of what
    the archive holds): the coup numbers of the same shoe either side of ``coup``, else the last coup of the
    nearest shoe before or the first of the nearest shoe after (looking through at most :data:`RECALL_REACH`
    shoes; one holding only cards set aside has no coup number). ``shoes``: the table's shoes, oldest first;
    ``coups_of(s)``: the coup numbers of shoe ``s``'s coup records (None for cards set aside)."""

    def numbers(s: int) -> list[int]:
        return sorted({n for n in coups_of(s) if isinstance(n, int) and not isinstance(n, bool)})

    here = numbers(shoe)
    lower, higher = [n for n in here if n < coup], [n for n in here if n > coup]
    before = {"shoe": shoe, "coup": lower[-1]} if lower else None
    after = {"shoe": shoe, "coup": higher[0]} if higher else None
    if before is None:
        for s in reversed([s for s in shoes if s < shoe][-RECALL_REACH:]):
            if found := numbers(s):
                before = {"shoe": s, "coup": found[-1]}
                break
    if after is None:
        for s in [s for s in shoes if s > shoe][:RECALL_REACH]:
            if found := numbers(s):
                after = {"shoe": s, "coup": found[0]}
                break
    return before, after


def edges_of(records: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, Any] | None:
    """Each wager's edge at every coup of the shoe (``controller.game.edges.shoe_edges``, the same numbers
    the table's advantage records used), or None when the shoe holds none."""
    coups: list[int] = []
    cards_left: list[int] = []
    ev: dict[str, list[float]] = {}
    for e in shoe_edges(list(records)):
        coups.append(e.coup)
        cards_left.append(e.cards_left)
        for bet, value in e.ev.items():
            ev.setdefault(bet, []).append(value)
    return {"coups": coups, "cards_left": cards_left, "ev": ev} if coups else None


class _PitHandler(BoardHandler):
    server_version = "shoe-floor-pit"

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("pit %s: " + format, self.client_address[0], *args)

    def _json(self, status: HTTPStatus, data: Any, head: bool) -> None:
        self._send(status, json.dumps(data, separators=(",", ":")).encode(), "application/json", head=head)

    def do_POST(self) -> None:
        """A pit manager's actions (floor/pit_actions.py), signing in and out (floor/pit_auth.py); the pit changes
        nothing else."""
        server: Any = self.server
        pit: Pit = server.pit
        if not act(pit.gate, self, pit.acknowledge):
            post(pit.gate, self)

    def _route(self, head: bool) -> None:
        path, _, query = self.path.partition("?")
        path = path.split("#", 1)[0]
        server: Any = self.server
        pit: Pit = server.pit
        static = server.static
        visitor = admit(pit.gate, self, path, query, head)
        if visitor is None:
            return  # answered: the sign-in page, a redirect to it, or refused
        self.visitor = visitor
        if path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, *static["pit.html"], head=head)
        elif path.startswith("/table/") and valid_table(unquote(path[len("/table/") :])):
            self._send(HTTPStatus.OK, *static["table.html"], head=head)
        elif path.startswith("/player/") and valid_player(unquote(path[len("/player/") :])):
            self._send(HTTPStatus.OK, *static["player.html"], head=head)
        elif path.startswith("/static/") and path[len("/static/") :] in static:
            self._send(HTTPStatus.OK, *static[path[len("/static/") :]], head=head)
        elif path == "/api/pit":
            board = pit.tiles_board if visitor.tiles_only else pit.board
            self._send(HTTPStatus.OK, board.current()[1], "application/json", head=head)
        elif path == "/api/feed":
            self._json(HTTPStatus.OK, pit.snapshot()["feed"], head)
        elif path == "/api/session":
            self._json(HTTPStatus.OK, session_info(visitor), head)
        elif path == "/events":
            session = visitor.session
            alive = None if session is None else pit.gate.still(session, str(self.client_address[0]))
            self._events(head, pit.tiles_board if visitor.tiles_only else pit.board, alive)
        elif path == "/metrics":
            text = pit.metrics() + (server.metrics() if server.metrics is not None else b"")
            self._send(HTTPStatus.OK, text, "text/plain; version=0.0.4; charset=utf-8", head=head)
        elif path.startswith("/api/table/"):
            self._table(unquote(path[len("/api/table/") :]), parse_qs(query), head)
        elif path.startswith("/api/player/"):
            self._player(unquote(path[len("/api/player/") :]), head)
        else:
            self._send(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain; charset=utf-8", head=head)

    def _player(self, ref: str, head: bool) -> None:
        server: Any = self.server
        pit: Pit = server.pit
        if not valid_player(ref):
            self._json(HTTPStatus.NOT_FOUND, {"error": "a player is their card's UID: 16 hex digits"}, head)
            return
        visitor: Visitor = self.visitor
        if visitor.user is not None and not head:
            pit.gate.audit(visitor.user, "player", f"player:{ref}", str(self.client_address[0]))
        self._json(HTTPStatus.OK, pit.player_page(ref), head)

    def _table(self, rest: str, query: dict[str, list[str]], head: bool) -> None:
        server: Any = self.server
        pit: Pit = server.pit
        table, _, what = rest.partition("/")
        if not valid_table(table) or what not in ("", "coup"):
            self._json(HTTPStatus.NOT_FOUND, {"error": "no such page"}, head)
            return
        if what == "":
            page = pit.table_page(table)
            if page is None:
                self._json(HTTPStatus.NOT_FOUND, {"error": f"no table {table!r} in the archive"}, head)
            else:
                self._json(HTTPStatus.OK, page, head)
            return
        try:
            shoe, coup = int(query["shoe"][0]), int(query["coup"][0])
            if not (0 <= shoe < 2**62 and 0 <= coup < 2**62):
                raise ValueError
        except (KeyError, ValueError):
            self._json(HTTPStatus.BAD_REQUEST, {"error": "give shoe=S&coup=C, two whole numbers"}, head)
            return
        found = pit.recall(table, shoe, coup)
        visitor: Visitor = self.visitor
        if visitor.user is not None and not head:
            where = str(self.client_address[0])
            pit.gate.audit(visitor.user, "recall", f"user:{visitor.user}", where, {"table": table, "shoe": shoe,
                                                                                  "coup": coup})  # fmt: skip
        if found is None:
            self._json(HTTPStatus.NOT_FOUND, {"error": f"table {table}: no coup {coup} in shoe {shoe}"}, head)
        else:
            self._json(HTTPStatus.OK, found, head)
