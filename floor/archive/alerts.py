"""The floor's alert feed: every alert once (its ``key`` unique floor-wide), the outbox of those not yet
confirmed on the broker, the feed as the pit page, ``shoe-floor alerts`` and the broker show it, and who
acknowledged each alert on the pit page and when (once: :meth:`Feed.acknowledge`).

An alert is stored in the feed, then published on ``baccarat/<site>/floor/alert`` by the collector that
stored it; its outbox row goes when the broker confirms it (PUBACK). A row left by a collector that died in
between is published by any collector's sweep (:meth:`Feed.unpublished`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from commandline.times import utc_stamp
from controller.game.records import RecordKind, canonical_json
from floor.archive.dialect import json_or_none, now
from floor.archive.store import Store


class AlertKind:
    GAP = "gap"  # records after the head exist, one or more before them do not (the ack waits)
    BROKEN_LINK = "broken_link"  # a record's prev is not its predecessor's hash (the ack stops before it)
    REFUSED = "refused"  # not a record, or its hash is not its own link: not archived
    CONFLICT = "conflict"  # a second, different record with a seq the archive already holds: not archived
    # surveillance (floor/surveillance.py), from the archive's contiguous records, once floor-wide
    # the table journaled an advantage record (a wager's player EV at/above threshold), and its advantage_cleared
    # record: the alert is named after the record's kind (the one statement of it, RecordKind)
    ADVANTAGE = RecordKind.ADVANTAGE.value
    ADVANTAGE_CLEARED = RecordKind.ADVANTAGE_CLEARED.value
    REPEATED_SHOE = "repeated_shoe"  # a new shoe's first 20 dealt cards were dealt before, in order
    DEALER_ERRORS = "dealer_errors"  # a table's dealer errors this hour far above the floor's rate
    CLOCK_UNSYNCHRONISED = "clock_unsynchronised"  # a table journaled that its clock is not synchronised
    # a supervisor's (or pit manager's) PIN was wrong three times in a row at a table: locked out of approving there
    # until the floor's next staff list (controller/game/approvals.py); someone may be trying another's badge
    SUPERVISOR_LOCKED_OUT = "supervisor_locked_out"
    # a seat's stakes on a wager rise when its live edge is positive beyond what chance explains (floor/counting.py)
    BETTING_WITH_THE_COUNT = "betting_with_the_count"
    # the money's surveillance (floor/money_watch.py): one alert per money record, named after its kind
    PAST_POST = RecordKind.PAST_POST.value  # chips added to (or swapped on) a locked wager before the declare
    PULLED_BET = RecordKind.PULLED_BET.value  # chips taken from a locked wager before the declare
    MISPAY = RecordKind.MISPAY.value  # an underpay, an overpay, a losing wager left on the layout
    FOREIGN_CHIP = "foreign_chip"  # an unknown or retired chip came onto a spot (the reader's spot input)
    STOLEN_CHIP = "stolen_chip"  # a chip reported stolen came onto a spot: the most urgent of the money's alerts
    MONEY_FAULTS = "money_faults"  # a table's past-posts or mispays this shift far above the floor's rate
    # the chip tray (controller/game/tray.py): the table's count of its tray, after a coup, short or over what it
    # must hold, a recount confirmed (the table's tray_variance record)
    TRAY_VARIANCE = RecordKind.TRAY_VARIANCE.value
    # the cash log (floor/cash_watch.py): a player's cash in this gaming day, across the tables, reached the
    # floor's warning level ($8,000), or passed the currency transaction report's ($10,000); once per player and day
    CASH_APPROACHING = "cash_approaching_ctr"
    CTR_DUE = "ctr_due"
    # the floor's accounting (floor/accounting.py): a shift's win outside the 95 % interval of its exact theo
    HOLD_OUTSIDE_INTERVAL = "hold_outside_interval"
    # trust (docs/floor.md, threat model)
    FORGED = "forged"  # a record from an unenrolled or revoked table, or whose signature does not verify
    KEY_ENROLLED = "key_enrolled"  # a table's first key (shoe-floor enroll)
    KEY_ROTATED = "key_rotated"  # a new key, handed over by a statement the old one signed
    KEY_REVOKED = "key_revoked"  # the table's key revoked: nothing is admitted until a new one is enrolled
    KEY_REPLACED = "key_replaced"  # a new key enrolled by the operator without the old key's word (lost, stolen)
    ARCHIVE_LOST = "archive_lost"  # the archive file was deleted or replaced under the collector


#: The alert feed's JSON version (``v`` of what is published on ``baccarat/<site>/floor/alert``).
FEED_VERSION = 1


@dataclass(frozen=True, slots=True)
class Alert:
    """An alert to keep. ``key`` makes it once floor-wide (a second alert with the same key is not stored or
    published); None: every occurrence is its own alert. ``record`` is the record that caused it (its
    :meth:`TableRecord.to_dict`), ``extra`` what the kind adds."""

    table: str
    seq: int | None
    kind: str
    detail: str
    site: str | None = None
    record: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    key: str | None = None

    def line(self) -> str:
        where = f"table {self.table}" + ("" if self.seq is None else f" seq {self.seq}")
        return f"{self.kind}: {where}: {self.detail}"


@dataclass(frozen=True, slots=True)
class FeedItem:
    """One stored alert, as the feed lists it and ``baccarat/<site>/floor/alert`` carries it; ``acked_by`` and
    ``acked_at`` the pit manager who acknowledged it and when (None: not acknowledged)."""

    id: int
    at: str
    site: str
    table: str
    seq: int | None
    kind: str
    detail: str
    record: Mapping[str, Any] | None
    extra: Mapping[str, Any]
    acked_by: str | None = None
    acked_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": FEED_VERSION,
            "id": self.id,
            "at": self.at,
            "site": self.site,
            "table": self.table,
            "seq": self.seq,
            "kind": self.kind,
            "detail": self.detail,
            "record": None if self.record is None else dict(self.record),
            "extra": dict(self.extra),
            "acked_by": self.acked_by,
            "acked_at": self.acked_at,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"), ensure_ascii=False)

    def line(self) -> str:
        where = f"table {self.table}" + ("" if self.seq is None else f" seq {self.seq}")
        acked = "" if self.acked_by is None else f" (acknowledged by {self.acked_by} at {self.acked_at})"
        return f"#{self.id} {self.at} {self.kind}: {where}: {self.detail}{acked}"


@dataclass(frozen=True, slots=True)
class Acknowledgement:
    """What acknowledging an alert came to: the alert as it is now (``item``: who acknowledged it, and when), and
    whether this acknowledgement was the one that counts (``first``; False: it was acknowledged before, by
    ``item.acked_by``, and nothing changed)."""

    item: FeedItem
    first: bool

    @property
    def outcome(self) -> str:
        return "acknowledged" if self.first else "already"


_INSERT_ALERT = (
    'INSERT INTO alert_feed (key, site, "table", seq, kind, detail, record, extra, at)'
    " VALUES (?, ?, ?, ?, ?, ?, {json}, {json}, ?) ON CONFLICT DO NOTHING RETURNING id"
)
_FEED_COLUMNS = 'id, at, site, "table", seq, kind, detail, record, extra, acked_by, acked_at'
#: Who acknowledges an alert, and when: once (a second acknowledgement changes nothing).
_ACKNOWLEDGE = "UPDATE alert_feed SET acked_by = ?, acked_at = ? WHERE id = ? AND acked_by IS NULL"


def _feed_item(row: Sequence[Any]) -> FeedItem:
    """A feed row (``_FEED_COLUMNS``) as a FeedItem."""
    i, at, site, t, s, k, d, rec, ex, by, when = row
    return FeedItem(int(i), str(at), str(site), str(t), s, str(k), str(d), json_or_none(rec), json_or_none(ex) or {},
                    None if by is None else str(by), None if when is None else str(when))  # fmt: skip


class Feed:
    """The alert feed and its outbox, on the archive's :class:`~floor.archive.store.Store`."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def alert(self, alerts: Iterable[Alert]) -> list[FeedItem]:
        """Keep these alerts in the feed, in one transaction; return those newly stored (an alert whose ``key``
        is already in the feed, raised by another collector or before, is not stored again)."""
        self._store.check_file()
        with self._store.transaction() as cur:
            return self.insert(cur, alerts)

    def insert(self, cur: Any, alerts: Iterable[Alert]) -> list[FeedItem]:
        """Insert into the feed inside the caller's transaction (surveillance stores its alerts with its
        progress); the newly stored ones."""
        sql = self._store.sql
        items = []
        for a in alerts:
            at = now()
            site = a.site or "?"
            record = None if a.record is None else canonical_json(a.record)
            row = (a.key, site, a.table, a.seq, a.kind, a.detail[:500], record, canonical_json(a.extra), at)
            cur.execute(sql(_INSERT_ALERT), row)
            got = cur.fetchone()
            if got is not None:
                items.append(FeedItem(int(got[0]), at, site, a.table, a.seq, a.kind, a.detail[:500], a.record, a.extra))
                if site != "?":  # a site is needed to publish it; without one it is in the feed only
                    cur.execute(sql("INSERT INTO alert_outbox (id, at) VALUES (?, ?)"), (int(got[0]), at))
        return items

    def unpublished(self, older_than: float, limit: int = 500) -> list[FeedItem]:
        """Alerts stored at least ``older_than`` seconds ago and still not confirmed published, oldest first (at
        most ``limit``: a sweep after a long outage sends the rest at the next sweeps, not all at once)."""
        cutoff = utc_stamp(datetime.now(UTC) - timedelta(seconds=older_than))
        columns = ", ".join(f"f.{c.strip()}" for c in _FEED_COLUMNS.split(","))
        with self._store.transaction() as cur:
            cur.execute(
                self._store.sql(
                    f"SELECT {columns} FROM alert_feed f JOIN alert_outbox o ON o.id = f.id WHERE o.at <= ?"
                    " ORDER BY f.id LIMIT ?"
                ),
                (cutoff, limit),
            )
            rows = cur.fetchall()
        return [_feed_item(row) for row in rows]

    def published(self, ids: Iterable[int]) -> None:
        """These alerts are on the broker (PUBACK): out of the outbox."""
        ids = list(ids)
        if not ids:
            return
        with self._store.transaction() as cur:
            cur.executemany(self._store.sql("DELETE FROM alert_outbox WHERE id = ?"), [(i,) for i in ids])

    def feed(self, limit: int | None = 100, table: str | None = None) -> list[FeedItem]:
        """The alert feed, newest first: the last ``limit`` alerts (None: all), of one ``table`` or all."""
        column = None if table is None else '"table"'
        rows = self._store.newest(f"SELECT {_FEED_COLUMNS} FROM alert_feed", column, table, limit)
        return [_feed_item(row) for row in rows]

    def acknowledge(
        self,
        alert_id: int,
        by: str,
        *,
        at: str | None = None,
        audit: Callable[[Any, Acknowledgement], None] | None = None,
    ) -> Acknowledgement | None:
        """Acknowledge alert ``alert_id`` as ``by`` (a pit manager), stamped ``at`` (default now): once. A second
        acknowledgement, by anyone, changes nothing and says who acknowledged it first (two at once on
        PostgreSQL: the row's lock makes one first, the other sees it). ``audit`` is called with the cursor and
        the outcome inside the same transaction (the audit row goes with the change or not at all). None: no
        such alert."""
        self._store.check_file()
        with self._store.transaction() as cur:
            cur.execute(self._store.sql(_ACKNOWLEDGE), (by, at or now(), alert_id))
            first = cur.rowcount == 1
            cur.execute(self._store.sql(f"SELECT {_FEED_COLUMNS} FROM alert_feed WHERE id = ?"), (alert_id,))
            row = cur.fetchone()
            if row is None:
                return None
            ack = Acknowledgement(_feed_item(row), first)
            if audit is not None:
                audit(cur, ack)
        return ack

    def alerts(self, table: str | None = None) -> list[Alert]:
        """The feed's alerts, oldest first."""
        return [
            Alert(i.table, i.seq, i.kind, i.detail, i.site, i.record, i.extra)
            for i in reversed(self.feed(limit=None, table=table))
        ]
