"""``shoe-floor serve``: take every table's records off the broker, archive them once, publish each table's ack.

Threads: paho's network thread only parses nothing and queues ``(topic, payload, mid, qos)``; the collector's
own loop (the caller's thread) takes them in batches, archives each batch in one transaction, walks the
touched tables' chains forward in the archive, publishes the acks that advanced, and only then sends the
PUBACKs (``manual_ack``): a collector killed before its commit never acknowledged what it lost, and the broker
hands those messages again to the persistent session when it comes back (or to the other collectors sharing
the subscription).

The bound: the collector asks the broker for at most ``receive_maximum`` unacknowledged messages (MQTT 5
Receive Maximum), so the queue never holds more; beyond that the broker keeps the messages (its own queue
limits apply, see docs/floor.md).

Admission: a record is archived only when its ``sig`` verifies with its table's current key in the archive
(``shoe-floor enroll``); anything else (an unenrolled or revoked table, no signature, a wrong one) is refused
as ``forged`` under the noise budget, counted and never archived. The keys are cached per table and read
again when a table is unknown or a signature fails (at most every :data:`KEY_REFRESH` seconds a table), and
at the latest :data:`KEY_TTL` seconds after they were read: an enroll, a rotation or a revoke takes effect
without a restart.

Acks: ``baccarat/<site>/<table>/ack``, QoS 1, retained, a :class:`floor_protocol.ack.Ack` signed by the floor's
key (``serve --key``): the archive's id, the seq of the table's contiguous, linked head *in the archive* (not
what this collector saw: with a shared subscription another collector may have stored the records before it)
and that record's hash. Published when it is higher than the last this collector published, and again when a
table resends records at or below that (it has not heard it). Nothing is published before the first record.

The archive's file (SQLite) is checked before every write and between batches: a file deleted or replaced
under the collector (:class:`floor.archive.ArchiveLost`) is an ``archive_lost`` alert on the broker (it cannot
be stored), nothing more is stored or acked, and :meth:`Collector.run` raises (``serve`` exits with one line).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import paho.mqtt.client as mqtt
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from commandline.times import utc_stamp
from controller.game.records import RecordError, TableRecord
from floor.accounting import DEFAULT_LEAVE_AFTER_COUPS, Accounting, ended_shift_alerts
from floor.archive import Alert, AlertKind, Archive, ArchiveLost, FeedItem, Head, TableKey
from floor.cash_watch import CashThresholds, CashWatch, gaming_days
from floor.counting import DEFAULT_THRESHOLD
from floor.counting_watch import CountWatch
from floor.money_watch import MoneyWatch
from floor.shifts import ShiftPlan
from floor.surveillance import Surveillance, Thresholds, Watch
from floor_protocol.ack import Ack
from floor_protocol.addresses import Broker, parse_broker
from floor_protocol.admission import MAX_RECORD_BYTES, AdmissionError, Limits, admit_json
from floor_protocol.signing import parse_public_key, record_message, verify
from floor_protocol.staff import StaffEntry, StaffList
from floor_protocol.topics import Leaf, alert_topic, filter_of, parse_topic, shared, staff_topic, table_topic
from mqttloop import NetworkLoop
from mqttloop.reach import Reach

log = logging.getLogger("shoe-floor")

#: paho's Properties, typed (its constructor carries no annotations).
_properties: Callable[[int], Properties] = Properties

#: Chain stops a collector remembers having said (beyond: the archive's unique key dedupes, one query more).
ALERTED_MAX = 10_000
#: Most unconfirmed alerts one sweep sends again (the rest wait for the next sweeps).
ALERT_SWEEP_MAX = 500
#: Tables a refused-message budget tracks in one window; past it, every other table shares one count.
REFUSED_TABLES_MAX = 1000
#: Least seconds between two reads of one table's keys (an unknown table, a signature that fails).
KEY_REFRESH = 2.0
#: Most seconds a table's keys are used as read (a revoke or a rotation takes effect within this).
KEY_TTL = 10.0
#: Tables whose keys a collector keeps in hand (past it the oldest read is forgotten and read again if needed).
KEYS_MAX = 10_000
#: Most reads of table keys a second (a flood naming a new table in every message must not become one archive
#: query a message). Past it a table already known goes on with the keys it has; an unknown one is refused.
KEY_READS_PER_S = 100


class RefusedBudget:
    """A noise budget for ``refused`` and ``conflict`` alerts. A broken or hostile publisher can put junk (or
    well-formed records that conflict with the archive) on a table's topic at full speed; one alert per message
    would bury the feed, and the real alerts in it, and write the archive once per message. In each ``window``
    (seconds) the first ``per_table`` of a table, and at most ``per_floor`` across the floor, are alerts each;
    the rest are counted, and when the window ends one alert per table and kind says how many more there were
    and the last one's reason. Every refused message is still counted (``shoe_floor_refused_total``) and never
    archived. The counts live in dicts cleared each window that track at most ``REFUSED_TABLES_MAX`` tables (a
    flood naming a new table in every topic shares one count, table ``?``)."""

    KINDS = (AlertKind.REFUSED, AlertKind.CONFLICT, AlertKind.FORGED)

    def __init__(self, per_table: int = 5, per_floor: int = 50, window: float = 60.0) -> None:
        self.per_table, self.per_floor, self.window = per_table, per_floor, window
        self._start: float | None = None
        self._said: dict[str, int] = {}  # table -> alerts let through this window
        self._said_total = 0
        self._held: dict[tuple[str, str], tuple[int, Alert]] = {}  # (table, kind) -> (held back, the last one)

    def admit(self, alert: Alert, now: float) -> bool:
        """Whether this alert goes out on its own (else it is counted for the window's summary)."""
        if self._start is None:
            self._start = now
        said = self._said.get(alert.table, 0)
        known = alert.table in self._said or len(self._said) < REFUSED_TABLES_MAX
        if known and said < self.per_table and self._said_total < self.per_floor:
            self._said[alert.table] = said + 1
            self._said_total += 1
            return True
        key = (alert.table, alert.kind)
        if key not in self._held and len(self._held) >= REFUSED_TABLES_MAX:
            key = ("?", alert.kind)
        count = self._held[key][0] if key in self._held else 0
        self._held[key] = (count + 1, alert)
        return False

    def roll(self, now: float) -> list[Alert]:
        """At the end of a window: one summary alert per table and kind held back; a new window."""
        if self._start is None or now - self._start < self.window:
            return []
        out = []
        for (table, kind), (count, last) in sorted(self._held.items()):
            what = {
                AlertKind.REFUSED: "refused",
                AlertKind.FORGED: "refused as forged (unsigned, or not by the table's key)",
            }.get(kind, "in conflict with the archive")
            out.append(
                Alert(
                    table,
                    None,
                    kind,
                    f"{count} more message(s) for table {table} {what} in {self.window:g} s, not each an alert"
                    f" (the last: {last.detail})",
                    last.site,
                    extra={"held_back": count, "window_s": self.window, "last_seq": last.seq},
                )
            )
        self._start, self._said, self._said_total, self._held = None, {}, 0, {}
        return out


@dataclass
class Settings:
    broker: str
    archive: str
    key: Ed25519PrivateKey | None = None  # the floor's key, signing every ack (required: serve --key)
    site: str = "+"
    share: str = "shoe-floor"
    client_id: str = "shoe-floor"
    batch: int = 1000  # most records per transaction
    max_record_bytes: int = MAX_RECORD_BYTES  # a longer message is refused at admission (floor_protocol.admission)
    linger: float = 0.02  # how long a batch waits to fill, seconds
    gap_grace: float = 2.0  # a gap must last this long before it is an alert (another collector may fill it)
    refused_per_table: int = 5  # refused messages of one table that are alerts each, per refused_window
    refused_window: float = 60.0  # seconds (RefusedBudget)
    alert_sweep: float = 10.0  # alerts not confirmed on the broker this long after they were stored go again
    shift_sweep: float = 60.0  # seconds between looks for quiet tables' ended shifts (ended_shift_alerts)
    staff_sweep: float = 2.0  # seconds between looks at the staff registry (a change is published within this)
    receive_maximum: int = 2000
    ca_file: str | None = None
    username: str | None = None
    password: str | None = None
    thresholds: Thresholds = field(default_factory=Thresholds)  # surveillance (floor/surveillance.py)
    count_threshold: float = DEFAULT_THRESHOLD  # betting with the count (floor/counting.py)
    shift_plan: ShiftPlan = field(default_factory=ShiftPlan.parse)  # the accounting's shifts (floor/accounting.py)
    leave_after_coups: int = DEFAULT_LEAVE_AFTER_COUPS  # the tables' own (a seat session's end)
    gaming_days: ShiftPlan = field(default_factory=gaming_days)  # the cash log's gaming day (floor/cash_watch.py)
    cash_thresholds: CashThresholds = field(default_factory=CashThresholds)  # ... its MTL and CTR thresholds


@dataclass
class Stats:
    received: int = 0
    archived: int = 0
    duplicates: int = 0
    refused: int = 0
    alerts: int = 0
    acks: int = 0
    batches: int = 0
    staff_lists: int = 0  # staff lists published (floor_protocol.staff)


@dataclass(frozen=True, slots=True)
class _Keys:
    """What a collector knows of one table's keys: the current one (None: unenrolled or revoked), when read."""

    current: TableKey | None
    public: Ed25519PublicKey | None
    revoked: bool  # the table had keys, none current
    read_at: float  # monotonic


@dataclass
class _Pending:
    """A table whose chain stopped at a gap: since when (monotonic), at which head."""

    head: int
    since: float
    alerted: bool = False


@dataclass
class Collector:
    settings: Settings
    on_stats: Callable[[Stats], None] | None = None
    stats: Stats = field(default_factory=Stats)
    _stop: threading.Event = field(default_factory=threading.Event)
    _connected: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        if self.settings.key is None:
            raise ValueError("a collector signs every ack: Settings.key is the floor's key (serve --key)")
        self._key: Ed25519PrivateKey = self.settings.key
        self._archive_id = ""  # the archive's id, named in every ack (set by run)
        self._keys: OrderedDict[str, _Keys] = OrderedDict()  # table -> its keys as last read
        self._key_reads = (0.0, 0)  # (the second they count in, reads in it)
        self.broker: Broker = parse_broker(self.settings.broker)
        self._inbox: queue.Queue[tuple[str, bytes, int, int]] = queue.Queue(maxsize=self.settings.receive_maximum * 2)
        self._published: dict[str, int] = {}  # table -> last ack this collector published
        self._sites: dict[str, str] = {}  # table -> site (from the topic)
        self._gaps: dict[str, _Pending] = {}
        # Chain stops (gap, broken link) this collector has said: not asked of the archive again. Bounded: the
        # oldest are forgotten past ALERTED_MAX (the feed's unique key still says each once floor-wide).
        self._alerted: OrderedDict[tuple[str, str, int | None], None] = OrderedDict()
        self._alerts_in_flight: dict[int, mqtt.MQTTMessageInfo] = {}  # alert id -> its publish, until PUBACK
        self._last_sweep = time.monotonic()
        self._last_shift_sweep = -math.inf  # the first look is at start (a collector restarted overnight)
        self._last_staff_sweep = -math.inf  # the staff list is published at start, then on every change
        self._staff_published: dict[str, StaffList] = {}  # site -> the staff list last published there
        self._refused = RefusedBudget(self.settings.refused_per_table, window=self.settings.refused_window)
        self._limits = Limits(max_bytes=self.settings.max_record_bytes)
        client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=self.settings.client_id,
            protocol=mqtt.MQTTv5,
            manual_ack=True,
        )
        if self.broker.tls:
            client.tls_set(ca_certs=self.settings.ca_file)
        if self.settings.username:
            client.username_pw_set(self.settings.username, self.settings.password)
        client.max_inflight_messages_set(200)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        client.reconnect_delay_set(1, 5)
        self.client = client
        #: Whether the broker is reached: a failed attempt is said at once, in one line (mqttloop.reach).
        self.reach = Reach(client, self.settings.broker, log)

    # -- paho's thread ------------------------------------------------------------------------------------
    def _on_connect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if reason.is_failure:
            self.reach.refused(reason)
            return
        self.reach.connected()
        topic = shared(self.settings.share, filter_of(Leaf.RECORD, self.settings.site))
        client.subscribe(topic, qos=1)
        log.info("connected to %s:%s, subscribed to %s", self.broker.host, self.broker.port, topic)
        self._connected.set()

    def _on_disconnect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        self._connected.clear()
        if not self._stop.is_set():
            log.warning("lost the broker (%s); reconnecting", reason)

    def _on_message(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        # Blocks when the inbox is full (it cannot be, with Receive Maximum below its size).
        self._inbox.put((message.topic, bytes(message.payload), message.mid, message.qos))

    # -- the collector's loop -----------------------------------------------------------------------------
    def stop(self) -> None:
        self._stop.set()

    def run(self, archive: Archive) -> None:
        props = _properties(PacketTypes.CONNECT)
        props.SessionExpiryInterval = 24 * 3600  # the broker keeps our session (and unacked messages) a day
        props.ReceiveMaximum = self.settings.receive_maximum
        plan, leave_after = self.settings.shift_plan, self.settings.leave_after_coups
        watches: list[Watch] = [
            Accounting(plan, leave_after),
            MoneyWatch(plan),
            CountWatch(self.settings.count_threshold, leave_after),
            CashWatch(self.settings.gaming_days, self.settings.cash_thresholds),
        ]
        self._surveillance = Surveillance(archive, self.settings.thresholds, watches=watches)
        self._archive_id = archive.archive_id
        log.info("archive id %s", archive.archive_id)
        self.client.connect_async(self.broker.host, self.broker.port, keepalive=30, clean_start=False, properties=props)
        network = NetworkLoop(self.client, "collector-mqtt")
        network.start()
        try:
            while not self._stop.is_set():
                batch = self._take()
                if batch:
                    self._handle(archive, batch)
                else:
                    archive.check_file()  # a file deleted while the floor is quiet is noticed within a second
                self._check_gaps(archive)
                self._raise(archive, self._refused.roll(time.monotonic()), budgeted=True)
                self._close_quiet_shifts(archive)
                self._settle_alerts(archive)
                self._publish_staff(archive)
        except ArchiveLost as exc:
            self._say_archive_lost(str(exc))
            raise
        finally:
            self._stop.set()
            network.stop()

    def _say_archive_lost(self, detail: str) -> None:
        """The archive file is gone: the alert cannot be stored, so it goes to the broker only (id null), once per
        site this collector has heard, and waits a moment for the broker to have it."""
        log.error("ALERT %s: %s", AlertKind.ARCHIVE_LOST, detail)
        sites = sorted(set(self._sites.values()) or ({self.settings.site} - {"+"}))
        infos = []
        for site in sites:
            item = FeedItem(0, utc_stamp(), site, "*", None, AlertKind.ARCHIVE_LOST, detail, None, {}).to_dict()
            payload = json.dumps({**item, "id": None}, separators=(",", ":"))  # not in a feed: no id
            infos.append(self.client.publish(alert_topic(site), payload, qos=1, retain=False))
        for info in infos:
            with contextlib.suppress(ValueError, RuntimeError):  # never queued: nothing more to do
                info.wait_for_publish(2.0)

    def _take(self) -> list[tuple[str, bytes, int, int]]:
        try:
            first = self._inbox.get(timeout=0.2)
        except queue.Empty:
            return []
        batch = [first]
        deadline = time.monotonic() + self.settings.linger
        while len(batch) < self.settings.batch:
            try:
                batch.append(self._inbox.get_nowait())
            except queue.Empty:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                try:
                    batch.append(self._inbox.get(timeout=left))
                except queue.Empty:
                    break
        return batch

    def _handle(self, archive: Archive, batch: list[tuple[str, bytes, int, int]]) -> None:
        good: list[TableRecord] = []
        alerts: list[Alert] = []
        signers: dict[tuple[str, int], str] = {}
        for topic, payload, _mid, _qos in batch:
            try:
                record, alert = self._admit(archive, topic, payload)
            except Exception as exc:  # whatever one message does, it is that message's refusal, not our end
                log.debug("admitting a message on %s failed", topic, exc_info=True)
                record, alert = None, _refusal(topic, f"could not be admitted: {type(exc).__name__}: {exc!a:.160}")
            if record is not None:
                good.append(record)
                signers[record.table, record.seq] = self._signer(record.table)
            if alert is not None:
                alerts.append(alert)
        self.stats.received += len(batch)
        good, inserted, conflicts = self._store(archive, good, alerts, signers)
        alerts += conflicts
        self.stats.archived += inserted
        self.stats.duplicates += len(good) - inserted - len(conflicts)
        self.stats.refused += len(batch) - len(good) + len(conflicts)
        # A record at or below the ack this collector last published for its table is a resend: the table has
        # not heard that ack (a broker that crashed lost it, or came back from an old save with an older
        # retained one). Say the archive's head again, or the table resends and waits for ever.
        resent = {r.table for r in good if r.seq <= self._published.get(r.table, 0)}
        for table in sorted({r.table for r in good}):
            self._advance(archive, table, alerts, again=table in resent)
        self._raise(archive, alerts)
        for table in sorted({r.table for r in good}):
            self._publish_alerts(self._surveillance.process(table, self._sites.get(table)))
        for _topic, _payload, mid, qos in batch:
            if qos > 0:
                self.client.ack(mid, qos)
        self.stats.batches += 1
        if self.on_stats is not None:
            self.on_stats(self.stats)

    def _store(
        self, archive: Archive, good: list[TableRecord], alerts: list[Alert], signers: dict[tuple[str, int], str]
    ) -> tuple[list[TableRecord], int, list[Alert]]:
        """Store the batch in one transaction; if the database refuses it for a record's content (not because
        it is down: :meth:`Archive.content_error`), store its records one by one, so that the bad one is refused
        (an alert in ``alerts``) and the rest archived. ``(the records stored or held, inserted, conflicts)``;
        any other database error goes up (the collector stops, nothing of the batch acknowledged)."""
        try:
            inserted, conflicts = archive.store(good, signers)
            return good, inserted, conflicts
        except Exception as exc:
            if not archive.content_error(exc):
                raise
            log.warning("the archive refused a batch of %d record(s) (%s): storing them one by one", len(good), exc)
        kept: list[TableRecord] = []
        inserted, conflicts = 0, []
        for record in good:
            try:
                one, conflict = archive.store([record], signers)
            except Exception as exc:
                if not archive.content_error(exc):
                    raise
                detail = f"the archive cannot hold this record: {str(exc)!a:.160}"
                alerts.append(Alert(record.table, record.seq, AlertKind.REFUSED, detail))
                continue
            kept.append(record)
            inserted += one
            conflicts += conflict
        return kept, inserted, conflicts

    def _admit(self, archive: Archive, topic: str, payload: bytes) -> tuple[TableRecord | None, Alert | None]:
        where = parse_topic(topic)
        site, table = (where.site, where.table) if where is not None else ("?", "?")
        # Admission first: size, nesting, UTF-8, integers, strings, the envelope (floor_protocol.admission).
        try:
            value = admit_json(payload, self._limits)
        except AdmissionError as exc:
            return None, Alert(table, None, AlertKind.REFUSED, f"refused at admission on {topic}: {exc}")
        try:
            record = TableRecord.from_admitted(value, self._limits)
        except RecordError as exc:
            return None, Alert(table, None, AlertKind.REFUSED, f"not a record on {topic}: {exc}")
        if record.table != table:
            return None, Alert(table, record.seq, AlertKind.REFUSED, f"record of table {record.table!r} on {topic}")
        if not record.chain_ok():
            return None, Alert(
                table, record.seq, AlertKind.REFUSED, "its hash is not its own link (altered in transit?)"
            )
        # The table's signature, with its current key in the archive (after parsing: a step of its own).
        forged = self._forged(archive, record)
        if forged is not None:
            return None, Alert(table, record.seq, AlertKind.FORGED, forged, site)
        self._sites[table] = site
        return record, None

    # -- the tables' keys ---------------------------------------------------------------------------------
    def _forged(self, archive: Archive, record: TableRecord) -> str | None:
        """Why ``record`` is not signed by its table's current key, or None when it is. The keys come from the
        cache; they are read again when the table is unknown, when its signature fails (at most every
        KEY_REFRESH seconds) or when they are KEY_TTL old."""
        now = time.monotonic()
        keys = self._keys.get(record.table)
        if keys is None or now - keys.read_at >= KEY_TTL:
            keys = self._read_keys(archive, record.table, now, keys)
        if keys is None:
            return f"table {record.table} is not known here yet (too many unknown tables at once); not archived"
        message = record_message(record.table, record.seq, record.hash)
        if keys.public is not None and verify(keys.public, message, record.sig):
            return None
        if now - keys.read_at >= KEY_REFRESH:
            keys = self._read_keys(archive, record.table, now, keys) or keys
            if keys.public is not None and verify(keys.public, message, record.sig):
                return None
        if keys.current is None:
            return f"table {record.table} has {'its key revoked' if keys.revoked else 'no key enrolled'}; not archived"
        if record.sig is None:
            return "no signature; not archived"
        return f"the signature does not verify with table {record.table}'s key {keys.current.key_id}; not archived"

    def _read_keys(self, archive: Archive, table: str, now: float, stale: _Keys | None) -> _Keys | None:
        """The table's keys read from the archive (and cached), or, past KEY_READS_PER_S this second, what
        was known before (``stale``; None for a table not known)."""
        second, reads = self._key_reads
        if now - second >= 1.0:
            second, reads = now, 0
        if reads >= KEY_READS_PER_S:
            return stale
        self._key_reads = (second, reads + 1)
        known = archive.table_keys(table)
        current = next((k for k in known if k.current), None)
        keys = _Keys(current, None if current is None else parse_public_key(current.public_key), bool(known), now)
        self._keys[table] = keys
        self._keys.move_to_end(table)
        while len(self._keys) > KEYS_MAX:
            self._keys.popitem(last=False)
        return keys

    def _signer(self, table: str) -> str:
        """The id of the key the table's record just admitted was verified with."""
        current = self._keys[table].current
        assert current is not None
        return current.key_id

    def _advance(self, archive: Archive, table: str, alerts: list[Alert], *, again: bool = False) -> None:
        head, stop = archive.advance(table, self._sites.get(table))
        if stop is None or stop.kind != AlertKind.GAP:
            self._gaps.pop(table, None)
        if stop is not None and stop.kind == AlertKind.BROKEN_LINK:
            alerts.append(_with(stop, record=archive.record(table, stop.seq)))
        elif stop is not None:
            pending = self._gaps.get(table)
            if pending is None or pending.head != head.seq:
                self._gaps[table] = _Pending(head.seq, time.monotonic())
        if head.seq > self._published.get(table, 0) or (again and head.seq > 0):
            self._publish_ack(head)

    def _check_gaps(self, archive: Archive) -> None:
        """A gap that has lasted ``gap_grace`` (another collector did not fill it either) is an alert."""
        now = time.monotonic()
        for table, pending in list(self._gaps.items()):
            if pending.alerted or now - pending.since < self.settings.gap_grace:
                continue
            head, stop = archive.advance(table, self._sites.get(table))
            if head.seq > self._published.get(table, 0):
                self._publish_ack(head)
                self._publish_alerts(self._surveillance.process(table, self._sites.get(table)))
            if stop is not None and stop.kind == AlertKind.GAP and head.seq == pending.head:
                pending.alerted = True
                self._raise(archive, [stop])
            elif stop is not None and stop.kind == AlertKind.GAP:
                self._gaps[table] = _Pending(head.seq, now)
            else:
                self._gaps.pop(table, None)
                if stop is not None:
                    self._raise(archive, [stop])

    def _raise(self, archive: Archive, alerts: list[Alert], *, budgeted: bool = False) -> None:
        """Store and publish ``alerts``: refused and conflicting ones within the noise budget (``budgeted``: these
        are the budget's own summaries)."""
        fresh = []
        now = time.monotonic()
        for a in alerts:
            if not budgeted and a.kind in RefusedBudget.KINDS and not self._refused.admit(a, now):
                continue  # counted: said in the window's summary (RefusedBudget)
            key = (a.table, a.kind, a.seq)
            if a.kind in (AlertKind.BROKEN_LINK, AlertKind.GAP):
                if key in self._alerted:
                    continue  # said once per collector: the chain stays stopped there until someone acts
                a = _with(a, key=f"{a.kind}:{a.table}:{a.seq}")  # ... and once floor-wide
                self._alerted[key] = None
                if len(self._alerted) > ALERTED_MAX:
                    self._alerted.popitem(last=False)
            site = a.site or self._sites.get(a.table) or (self.settings.site if self.settings.site != "+" else None)
            fresh.append(_with(a, site=site))
        if fresh:
            self._publish_alerts(archive.alert(fresh))

    def _close_quiet_shifts(self, archive: Archive) -> None:
        """Every ``shift_sweep`` seconds: the hold alert of a shift that ended at a table quiet since
        (:func:`floor.accounting.ended_shift_alerts`; its key keeps it once floor-wide, whoever raises it)."""
        now = time.monotonic()
        if now - self._last_shift_sweep < self.settings.shift_sweep:
            return
        self._last_shift_sweep = now
        self._raise(archive, ended_shift_alerts(archive, self.settings.shift_plan, datetime.now(UTC)))

    def _publish_alerts(self, items: list[FeedItem]) -> None:
        """Log and publish the alerts this collector stored (each is stored once floor-wide). Each stays in the
        archive's outbox until the broker has it (PUBACK, :meth:`_settle_alerts`)."""
        for item in items:
            log.warning("ALERT %s", item.line())
            self._send_alert(item)
        self.stats.alerts += len(items)

    def _send_alert(self, item: FeedItem) -> None:
        if item.site != "?":
            info = self.client.publish(alert_topic(item.site), item.to_json(), qos=1, retain=False)
            self._alerts_in_flight[item.id] = info

    def _settle_alerts(self, archive: Archive) -> None:
        """Alerts the broker has acknowledged leave the outbox. Every ``alert_sweep`` seconds, alerts stored
        ``alert_sweep`` ago and still in the outbox (their collector died before the broker had them, or the
        broker lost them) are published again: at least once on the topic; the same ``id`` each time."""
        done = []
        for alert_id, info in list(self._alerts_in_flight.items()):
            try:
                published = info.is_published()
            except (ValueError, RuntimeError):  # never queued (no connection): the sweep sends it again
                published = False
                del self._alerts_in_flight[alert_id]
            if published:
                done.append(alert_id)
                del self._alerts_in_flight[alert_id]
        if done:
            archive.published(done)
        now = time.monotonic()
        if now - self._last_sweep >= self.settings.alert_sweep and self._connected.is_set():
            self._last_sweep = now
            for item in archive.unpublished(older_than=self.settings.alert_sweep, limit=ALERT_SWEEP_MAX):
                if item.id not in self._alerts_in_flight:
                    log.info("alert #%d was not confirmed on the broker: publishing it again", item.id)
                    self._send_alert(item)

    def _publish_staff(self, archive: Archive) -> None:
        """Every ``staff_sweep`` seconds: the staff list the tables need (:mod:`floor_protocol.staff`), signed and
        retained on each site's ``baccarat/<site>/floor/staff`` topic (the configured site, or every site a table
        was heard from), when it changed or the site is new. The same registry gives the same bytes at every
        collector."""
        now = time.monotonic()
        if now - self._last_staff_sweep < self.settings.staff_sweep or not self._connected.is_set():
            return
        self._last_staff_sweep = now
        if not archive.people.present():
            return  # no registry yet: nothing to say (a table keeps the list it has)
        as_of, rows = archive.people.table_staff()
        entries = []
        for member, role, badge, pin_hash in rows:
            try:
                entries.append(StaffEntry(id=member, role=role, badge=badge, pin_hash=pin_hash))  # type: ignore[arg-type]
            except ValueError as exc:
                log.warning("staff %s left off the tables' list: %s", member, str(exc).splitlines()[0][:120])
        sites = {self.settings.site} if self.settings.site != "+" else set(self._sites.values())
        for site in sorted(sites):
            signed = StaffList.signed(self._key, site, as_of or "0", tuple(entries))
            if self._staff_published.get(site) == signed:
                continue
            self.client.publish(staff_topic(site), signed.to_json(), qos=1, retain=True)
            self._staff_published[site] = signed
            self.stats.staff_lists += 1
            log.info("staff list of %s published: %d member(s) as of %s", site, len(entries), as_of or "-")

    def _publish_ack(self, head: Head) -> None:
        """The signed ack of ``head`` (the archive's contiguous, linked head of its table); none for seq 0."""
        if head.seq <= 0:
            return
        table = head.table
        site = self._sites.get(table, self.settings.site)
        ack = Ack.signed(self._key, self._archive_id, table, head.seq, head.hash)
        self.client.publish(table_topic(site, table, Leaf.ACK), ack.to_json(), qos=1, retain=True)
        self._published[table] = head.seq
        self.stats.acks += 1


def _refusal(topic: str, detail: str) -> Alert:
    where = parse_topic(topic)
    return Alert(where.table if where is not None else "?", None, AlertKind.REFUSED, detail)


def _with(alert: Alert, **changes: Any) -> Alert:
    return dataclasses.replace(alert, **changes)
