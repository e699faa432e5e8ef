"""The scoreboard: a live web page of the table (coup in progress, results, payout guide, the five roads).

The sink runs on the table loop's thread. Each :meth:`ScoreboardSink.update` builds one immutable
**snapshot** (a plain JSON-able dict with a version number) with :class:`SnapshotBuilder` and publishes it
to the HTTP server's threads; the server threads only ever read the latest published snapshot (under a
condition variable) and never touch the table's state. The snapshot is the single source of the page:
``/api/state`` returns it, ``/events`` pushes each new one as a Server-Sent Event, and the page's
JavaScript only draws it.

**Squeeze games** (``reveal = "on_declare"``): no card, total, what is due or result of the coup in
progress may leave the daemon before the dealer declares it. The filtering is done here, in the snapshot
builder, so the data never reaches a socket; the page only shows "coup N in play". The builder also
withholds what would give the coup away indirectly: the cards-remaining count stays where it was when the
coup opened, the alarms that say whether a card is due (MISDRAW, DECLARE TOO EARLY) are shown as a neutral
DEALER CALL, and a snapshot whose (filtered) content did not change is not published at all, so the
number of updates does not count the cards either.

**Server choice**: the standard library's :class:`http.server.ThreadingHTTPServer`. The load is one kiosk
browser plus a few viewers on a private network, read-only, with a handful of routes; a thread per
connection is fine at that scale, Server-Sent Events need nothing more than a long-lived response, and it
adds no dependency to a Raspberry Pi install (no event loop to run beside the table loop's thread, no
wheels to build). Limits kept deliberately: at most :data:`MAX_STREAMS` event streams at once (503 beyond),
a socket timeout on every connection, GET and HEAD only (405 otherwise), static files read once at start
from a fixed list (no path from the request ever reaches the file system).
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol

from controller.game.cards import Card
from controller.game.coup import CoupResult
from controller.game.roads import DERIVED_ROADS, Roads, RoadsBuilder, bead_plate_grid, big_road_grid
from controller.game.rules import Bet, CommissionCollection, Ruleset
from controller.game.settlement import Wager, settle
from controller.game.table import (
    Alarm,
    CoupDeclared,
    CoupVoided,
    Due,
    Notice,
    ShoeStarted,
    TableView,
)
from controller.table import derived_records

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).with_name("static")
#: The files the server serves, read once at start: URL name -> content type.
STATIC_FILES: Mapping[str, str] = {
    "index.html": "text/html; charset=utf-8",
    "scoreboard.css": "text/css; charset=utf-8",
    "scoreboard.js": "text/javascript; charset=utf-8",
}
#: Event streams served at once; more get 503 (a kiosk and a few viewers need far fewer).
MAX_STREAMS = 32
#: Rows of the bead plate, the big road and the derived roads on the screen.
ROAD_ROWS = 6

_IN_PLAY_DUES = (Due.PLAYER_THIRD, Due.BANKER_THIRD, Due.DECLARE, Due.VOID)
#: Alarms that tell whether a card is due now: in a squeeze game they would give the coup away.
_TELLING_ALARMS = (Alarm.MISDRAW, Alarm.EARLY_DECLARE)
_DEALER_CALL = {"name": "dealer_call", "text": "DEALER CALL"}


class LimitsLike(Protocol):
    """What the scoreboard shows of the table limits (:class:`~controller.game.settlement.TableLimits` or
    the configuration's ``[table.limits]`` section)."""

    @property
    def unit_cents(self) -> int: ...

    @property
    def minimum_cents(self) -> int: ...

    @property
    def maximum_cents(self) -> int: ...


class ScoreboardSettings(Protocol):
    """The ``[scoreboard]`` settings the sink reads (:class:`~controller.config.ScoreboardSection`)."""

    @property
    def host(self) -> str: ...

    @property
    def port(self) -> int: ...

    @property
    def reveal(self) -> str: ...


# ---------------------------------------------------------------------------------------------------------
# Money and odds as the board writes them (exact: integers and fractions only)


def money(cents: int) -> str:
    """Cents as the board shows them: 2500 -> ``"$25"``, 500000 -> ``"$5,000"``, 250 -> ``"$2.50"``."""
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    text = f"{whole:,}" if not part else f"{whole:,}.{part:02d}"
    return f"{sign}${text}"


def odds(pays: Fraction) -> str:
    """A pay as the rule card writes it: 8 -> ``"8:1"``, 1/2 -> ``"1:2"``, 19/20 -> ``"0.95:1"``."""
    if pays.denominator == 1:
        return f"{pays.numerator}:1"
    if pays.numerator == 1:
        return f"1:{pays.denominator}"
    return f"{_decimal(pays)}:1"


def _decimal(value: Fraction) -> str:
    """Exact decimal text of a fraction whose denominator divides a power of ten (else ``a/b``)."""
    whole, rest = divmod(value.numerator, value.denominator)
    digits = ""
    for _ in range(6):
        if not rest:
            break
        rest *= 10
        digit, rest = divmod(rest, value.denominator)
        digits += str(digit)
    if rest:
        return f"{value.numerator}/{value.denominator}"
    return f"{whole}.{digits}"


def _banker_pays(rules: Ruleset, pays: Fraction) -> Fraction:
    """A Banker win's pay after commission (what the player nets per unit)."""
    return pays * (1 - rules.commission_rate)


_BET_LABELS: Mapping[Bet, str] = {
    Bet.BANKER: "Banker",
    Bet.PLAYER: "Player",
    Bet.TIE: "Tie",
    Bet.PLAYER_PAIR: "Player Pair",
    Bet.BANKER_PAIR: "Banker Pair",
    Bet.DRAGON_BONUS_PLAYER: "Dragon Bonus P",
    Bet.DRAGON_BONUS_BANKER: "Dragon Bonus B",
    Bet.DRAGON_7: "Dragon 7",
    Bet.PANDA_8: "Panda 8",
}


def payout_guide(rules: Ruleset) -> list[dict[str, str]]:
    """What each wager pays under ``rules``: one row per bet, ``{"bet", "label", "pays", "note"}``."""
    percent = _decimal(rules.commission_rate * 100).removesuffix(".")
    if rules.commission_rate:
        banker_note = f"{odds(rules.banker_pays)} less {percent}% commission"
        if rules.commission_collection is CommissionCollection.AT_SHOE_END:
            banker_note += ", collected at the shoe's end"
    elif rules.banker_three_card_seven_pushes:
        banker_note = "pushes on a three-card 7 win"
    elif rules.banker_six_pays is not None:
        banker_note = f"a winning 6 pays {odds(rules.banker_six_pays)}"
    else:
        banker_note = "no commission"
    bonus = rules.dragon_bonus
    steps = " · ".join(f"{m} {odds(p)}" for m, p in sorted(bonus.ladder.items(), reverse=True))
    bonus_note = f"natural {odds(bonus.natural_win)}; win by {steps}"
    if bonus.natural_tie_pushes:
        bonus_note += "; natural tie pushes"
    rows = [
        (Bet.BANKER, odds(_banker_pays(rules, rules.banker_pays)), banker_note),
        (Bet.PLAYER, odds(rules.player_pays), ""),
        (Bet.TIE, odds(rules.tie_pays), "Banker and Player push" if rules.tie_pushes_main_bets else ""),
        (Bet.PLAYER_PAIR, odds(rules.pair_pays), "first two cards"),
        (Bet.BANKER_PAIR, odds(rules.pair_pays), "first two cards"),
        (Bet.DRAGON_BONUS_PLAYER, "ladder", bonus_note),
        (Bet.DRAGON_BONUS_BANKER, "ladder", bonus_note),
        (Bet.DRAGON_7, odds(rules.dragon_7_pays), "3-card 7 Banker win"),
        (Bet.PANDA_8, odds(rules.panda_8_pays), "3-card 8 Player win"),
    ]
    return [{"bet": b.value, "label": _BET_LABELS[b], "pays": p, "note": n} for b, p, n in rows if rules.offers(b)]


def settle_result(result: CoupResult, rules: Ruleset) -> list[dict[str, str]]:
    """How each wager came out on ``result`` under ``rules``: ``{"bet", "label", "outcome", "pays"}``.

    Uses :func:`~controller.game.settlement.settle` (a notional one-unit wager on every bet) so that the
    board and the settlement can never disagree.
    """
    settlement = settle(result, [Wager(bet, 100) for bet in Bet if rules.offers(bet)], rules)
    rows = []
    for o in settlement.outcomes:
        pays = _banker_pays(rules, o.pays) if o.bet is Bet.BANKER else o.pays
        rows.append(
            {
                "bet": o.bet.value,
                "label": _BET_LABELS[o.bet],
                "outcome": o.outcome.value,
                "pays": odds(pays) if o.outcome.value == "win" else "",
            }
        )
    return rows


# ---------------------------------------------------------------------------------------------------------
# The snapshot builder (loop thread only)


def _result_of(record: Mapping[str, Any]) -> CoupResult:
    return CoupResult(
        tuple(Card.parse(str(t)) for t in record["player"]),
        tuple(Card.parse(str(t)) for t in record["banker"]),
    )


@dataclass(frozen=True)
class TableInfo:
    """What the board says of the table itself."""

    name: str
    limits: LimitsLike
    ruleset: Ruleset


class SnapshotBuilder:
    """Builds the board's snapshots from the table's views and notices. Owned by one thread (the loop).

    :meth:`build` returns the snapshot's content without ``version`` and ``ts_ms``; the sink adds those
    when the content changed.
    """

    def __init__(self, info: TableInfo, *, squeeze: bool, history: Sequence[Mapping[str, Any]] = ()) -> None:
        self.info = info
        self.squeeze = squeeze
        shoes = [int(r["shoe"]) for r in history if "shoe" in r]
        self.shoe: int | None = max(shoes) if shoes else None
        self.records: list[dict[str, Any]] = [dict(r) for r in history if r.get("shoe") == self.shoe]
        self._roads: dict[str, Any] | None = None  # last, counters, roads: they change with the records only
        # The roads kept coup by coup (O(1) a declare); rebuilt from the records only when the shoe changes.
        self._road_builder = RoadsBuilder(self._declared())
        self._static = self._table_part()
        self._frozen_remaining: int | None = None

    # -- state from the loop ---------------------------------------------------------------------
    def follow(self, view: TableView | None, notices: Sequence[Notice]) -> None:
        """Take in a view and its notices without building a snapshot (for updates that are coalesced)."""
        self._follow(view, notices)

    def _follow(self, view: TableView | None, notices: Sequence[Notice]) -> None:
        if view is not None and view.shoe_number != self.shoe:
            # The first view after a restart, or a shoe started: keep only this shoe's coups.
            self.records = [r for r in self.records if r.get("shoe") == view.shoe_number]
            self.shoe = view.shoe_number
            self._roads = None
            self._road_builder = RoadsBuilder(self._declared())
        for n in notices:
            if isinstance(n, ShoeStarted):
                self.shoe = n.shoe_number
                self.records = []
                self._roads = None
                self._road_builder = RoadsBuilder()
            elif isinstance(n, CoupDeclared | CoupVoided):
                for _kind, body in derived_records([n]):
                    self.records.append(body)
                    if body.get("declared") and not body.get("void"):
                        self._road_builder.add(body)
                self._roads = None

    def _declared(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("declared") and not r.get("void")]

    def build(self, view: TableView | None, notices: Sequence[Notice] = ()) -> dict[str, Any]:
        self._follow(view, notices)
        if self._roads is None:  # the shoe's declared coups changed: redo what depends on them only
            declared = self._declared()
            self._roads = {
                "last": self._last_part(declared[-1] if declared else None),
                "counters": self._counters(declared),
                "roads": self._roads_part(self._road_builder.roads),
            }
        return {
            "table": self._static,
            "reveal": "on_declare" if self.squeeze else "on_read",
            "shoe": self._shoe_part(view),
            "coup": self._coup_part(view),
            "last": self._roads["last"],
            "counters": self._roads["counters"],
            "alarms": self._alarms(view),
            "roads": self._roads["roads"],
        }

    # -- the parts -------------------------------------------------------------------------------
    def _table_part(self) -> dict[str, Any]:
        lim, rules = self.info.limits, self.info.ruleset
        return {
            "name": self.info.name,
            "ruleset": rules.name,
            "description": rules.description,
            "limits": {
                "minimum": money(lim.minimum_cents),
                "maximum": money(lim.maximum_cents),
                "unit": money(lim.unit_cents),
                "minimum_cents": lim.minimum_cents,
                "maximum_cents": lim.maximum_cents,
            },
            "guide": payout_guide(rules),
        }

    def _in_play(self, view: TableView) -> bool:
        return bool(view.player or view.banker or view.dummy_hand) or view.due in _IN_PLAY_DUES

    def _shoe_part(self, view: TableView | None) -> dict[str, Any]:
        if view is None:
            return {"number": self.shoe, "coup": None, "cards_remaining": None, "cut_card_out": False,
                    "last_coup": False, "burn_left": 0}  # fmt: skip
        remaining = view.cards_remaining
        if self.squeeze:
            if self._in_play(view) and self._frozen_remaining is not None:
                remaining = self._frozen_remaining  # the count would tell how many cards the coup took
            else:
                self._frozen_remaining = remaining
        return {
            "number": view.shoe_number,
            "coup": view.coup_number,
            "cards_remaining": remaining,
            "cut_card_out": view.cut_card_out,
            "last_coup": view.last_coup,
            "burn_left": view.burn_left,
        }

    def _coup_part(self, view: TableView | None) -> dict[str, Any]:
        if view is None:
            return {"number": None, "state": "starting"}
        number = view.coup_number
        if view.due is Due.BURN:
            return {"number": number, "state": "burn"}
        if view.due is Due.NEW_SHOE:
            return {"number": number, "state": "shoe_closed"}
        in_play = self._in_play(view)
        if self.squeeze:
            # Nothing of the coup leaves the daemon before the declare.
            return {"number": number, "state": "in_play" if in_play else "waiting"}
        if not in_play:
            return {"number": number, "state": "waiting"}
        state = {Due.DECLARE: "complete", Due.VOID: "halted"}.get(view.due, "dealing")
        return {
            "number": number,
            "state": state,
            "player": [c.token for c in view.player],
            "banker": [c.token for c in view.banker],
            "player_total": view.player_total if view.player else None,
            "banker_total": view.banker_total if view.banker else None,
            "due": view.due.value,
            "result": view.result.winner.value if view.result is not None else None,
        }

    def _last_part(self, record: Mapping[str, Any] | None) -> dict[str, Any] | None:
        if record is None:
            return None
        result = _result_of(record)
        return {
            "shoe": record.get("shoe"),
            "coup": record.get("coup"),
            "winner": result.winner.value,
            "player": [c.token for c in result.player],
            "banker": [c.token for c in result.banker],
            "player_total": result.player_total,
            "banker_total": result.banker_total,
            "natural": result.natural_hand,
            "player_pair": result.player_pair,
            "banker_pair": result.banker_pair,
            "payouts": settle_result(result, self.info.ruleset),
        }

    @staticmethod
    def _counters(declared: Sequence[Mapping[str, Any]]) -> dict[str, int]:
        counts = {"coups": len(declared), "banker": 0, "player": 0, "tie": 0,
                  "player_pair": 0, "banker_pair": 0, "natural": 0}  # fmt: skip
        for r in declared:
            counts[str(r["winner"])] += 1
            counts["player_pair"] += bool(r.get("player_pair"))
            counts["banker_pair"] += bool(r.get("banker_pair"))
            counts["natural"] += bool(r.get("natural"))
        return counts

    def _alarms(self, view: TableView | None) -> list[dict[str, str]]:
        if view is None:
            return []
        hide = self.squeeze and self._in_play(view)
        out: list[dict[str, str]] = []
        for alarm in view.alarms:
            if hide and alarm in _TELLING_ALARMS:
                item = _DEALER_CALL
            else:
                item = {"name": alarm.name.lower(), "text": alarm.value}
            if item not in out:
                out.append(dict(item))
        return out

    @staticmethod
    def _roads_part(roads: Roads) -> dict[str, Any]:
        data = roads.to_dict()
        beads = [
            [c, r, b.winner.value, b.player_pair, b.banker_pair, b.natural]
            for c, r, b in bead_plate_grid(roads.bead_plate, ROAD_ROWS)
        ]
        big = [[c, r, cell.winner.value, cell.ties] for c, r, cell in big_road_grid(roads.big_road, ROAD_ROWS)]
        data["layout"] = {"rows": ROAD_ROWS, "bead_plate": beads, "big_road": big}
        for name, k in DERIVED_ROADS:
            marks = big_road_grid(roads.derived(k), ROAD_ROWS)
            data["layout"][name] = [[c, r, mark.value] for c, r, mark in marks]
        return data


# ---------------------------------------------------------------------------------------------------------
# Publication (loop thread writes, server threads read)


class Board:
    """The latest published snapshot and a condition variable the event streams wait on."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.version = 0
        self.body = b"{}"
        self.closing = False

    def publish(self, snapshot: Mapping[str, Any]) -> None:
        self.publish_body(int(snapshot["version"]), json.dumps(snapshot, separators=(",", ":")).encode())

    def publish_body(self, version: int, body: bytes) -> None:
        with self.cond:
            self.version = version
            self.body = body
            self.cond.notify_all()

    def current(self) -> tuple[int, bytes]:
        with self.cond:
            return self.version, self.body

    def wait_newer(self, seen: int, timeout: float) -> tuple[int, bytes] | None:
        """The snapshot once its version differs from ``seen``, or ``None`` on timeout or closing."""
        with self.cond:
            self.cond.wait_for(lambda: self.version != seen or self.closing, timeout)
            if self.closing or self.version == seen:
                return None
            return self.version, self.body

    def close(self) -> None:
        with self.cond:
            self.closing = True
            self.cond.notify_all()


class ScoreboardSink:
    """The scoreboard as a table sink with its own small HTTP server.

    ``ScoreboardSink(settings, table_name=..., limits=..., ruleset=..., history=journal.coups(shoe=N))``,
    then :meth:`start`; the table loop calls :meth:`update`; :meth:`close` stops the server.
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
    ) -> None:
        self.settings = settings
        self.heartbeat = heartbeat
        self.retry_ms = retry_ms
        self.wall_ms = wall_ms
        self.builder = SnapshotBuilder(
            TableInfo(table_name, limits, ruleset), squeeze=settings.reveal == "on_declare", history=history
        )
        self.board = Board()
        self.fault: str | None = None
        self._content: dict[str, Any] | None = None
        self._roads_obj: object = None
        self._roads_json = "null"
        self._version = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._publish(self.builder.build(None))

    # -- the sink --------------------------------------------------------------------------------
    def update(self, view: TableView, notices: Sequence[Notice]) -> None:
        self._publish(self.builder.build(view, notices))

    def update_many(self, updates: Sequence[tuple[TableView, Sequence[Notice]]]) -> None:
        """Several updates that queued up while the last snapshot was built (a fast shoe): follow every one
        in order, publish one snapshot of the newest. A board only ever shows the current state."""
        for view, notices in updates[:-1]:
            self.builder.follow(view, notices)
        if updates:
            self._publish(self.builder.build(*updates[-1]))

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

    # -- the server ------------------------------------------------------------------------------
    def start(self) -> bool:
        """Bind and serve in a thread. A bind failure is logged and kept in :attr:`fault`; returns False."""
        host, port = self.settings.host, self.settings.port
        try:
            server = _Server((host, port), self)
        except OSError as exc:
            self.fault = f"cannot bind {host}:{port}: {exc.strerror or exc}"
            log.error("scoreboard: %s; the table runs without it", self.fault)
            return False
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, name="scoreboard-http", kwargs={"poll_interval": 0.2}
        )
        self._thread.start()
        h, p = self.address
        log.info("scoreboard: serving http://%s:%d/ (reveal %s)", h, p, self.settings.reveal)
        return True

    @property
    def address(self) -> tuple[str, int]:
        """``(host, port)`` actually bound (the port chosen when the settings say 0)."""
        if self._server is None:
            return self.settings.host, self.settings.port
        addr = self._server.server_address
        return str(addr[0]), int(addr[1])

    def close(self) -> None:
        """Stop the server: end the event streams, join every thread, close every socket. Idempotent."""
        self.board.close()
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.drop_connections()
            server.server_close()  # joins the request threads
        if self._thread is not None:
            self._thread.join()
            self._thread = None


# ---------------------------------------------------------------------------------------------------------
# HTTP


def _load_static() -> dict[str, tuple[bytes, str]]:
    return {name: ((STATIC_DIR / name).read_bytes(), ctype) for name, ctype in STATIC_FILES.items()}


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # so that server_close() joins the request threads
    block_on_close = True
    allow_reuse_address = True
    request_queue_size = 16

    def __init__(self, address: tuple[str, int], sink: ScoreboardSink) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.sink = sink
        self.static = _load_static()
        self.streams = 0
        self.lock = threading.Lock()
        self.connections: set[socket.socket] = set()
        super().__init__(address, _Handler)

    def track(self, conn: socket.socket, add: bool) -> None:
        with self.lock:
            if add:
                self.connections.add(conn)
            else:
                self.connections.discard(conn)

    def drop_connections(self) -> None:
        """Unblock every handler still reading or writing (a stalled viewer must not hold up close)."""
        with self.lock:
            conns = list(self.connections)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


_SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.0"
    server_version = "shoe-controller-scoreboard"
    sys_version = ""
    timeout = 10.0  # socket timeout: a stalled client cannot hold a thread for long

    def setup(self) -> None:
        super().setup()
        self.server.track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.track(self.connection, False)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("scoreboard %s: " + format, self.client_address[0], *args)

    # GET and HEAD only: every other method is answered 405 (BaseHTTPRequestHandler looks up do_<METHOD>).
    def __getattr__(self, name: str) -> Any:
        if name.startswith("do_"):
            return self._not_allowed
        raise AttributeError(name)

    def _not_allowed(self) -> None:
        self._send(HTTPStatus.METHOD_NOT_ALLOWED, b"read-only: GET and HEAD only\n", "text/plain; charset=utf-8",
                   extra={"Allow": "GET, HEAD"})  # fmt: skip

    def do_HEAD(self) -> None:
        self._route(head=True)

    def do_GET(self) -> None:
        self._route(head=False)

    def _route(self, head: bool) -> None:
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        if path in ("/", "/index.html"):
            body, ctype = self.server.static["index.html"]
            self._send(HTTPStatus.OK, body, ctype, head=head)
        elif path.startswith("/static/") and path[len("/static/") :] in self.server.static:
            body, ctype = self.server.static[path[len("/static/") :]]
            self._send(HTTPStatus.OK, body, ctype, head=head)
        elif path == "/api/state":
            _version, body = self.server.sink.board.current()
            self._send(HTTPStatus.OK, body, "application/json", head=head)
        elif path == "/events":
            self._events(head)
        else:
            self._send(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain; charset=utf-8", head=head)

    def _send(
        self,
        status: HTTPStatus,
        body: bytes,
        ctype: str,
        *,
        head: bool = False,
        extra: Mapping[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for k, v in {**_SECURITY_HEADERS, **(extra or {})}.items():
            self.send_header(k, v)
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _events(self, head: bool) -> None:
        server, board = self.server, self.server.sink.board
        with server.lock:
            full = server.streams >= MAX_STREAMS
            if not full and not head:
                server.streams += 1
        if full:
            self._send(HTTPStatus.SERVICE_UNAVAILABLE, b"too many viewers\n", "text/plain; charset=utf-8",
                       extra={"Retry-After": "10"})  # fmt: skip
            return
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        for k, v in _SECURITY_HEADERS.items():
            self.send_header(k, v)
        self.end_headers()
        if head:
            return
        try:
            # Whatever Last-Event-ID a reconnecting page sends (versions restart with the daemon), it gets
            # the current snapshot at once.
            version, body = board.current()
            self.wfile.write(f"retry: {self.server.sink.retry_ms}\n".encode() + _event(version, body))
            self.wfile.flush()
            while True:
                news = board.wait_newer(version, self.server.sink.heartbeat)
                if board.closing:
                    break
                if news is None:
                    self.wfile.write(b": heartbeat\n\n")
                else:
                    version, body = news
                    self.wfile.write(_event(version, body))
                self.wfile.flush()
        except OSError:
            pass  # the viewer went away (or the server is closing)
        finally:
            with server.lock:
                server.streams -= 1


def _event(version: int, body: bytes) -> bytes:
    return b"id: %d\ndata: %s\n\n" % (version, body)
