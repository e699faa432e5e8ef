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

Acks: ``baccarat/<site>/<table>/ack``, QoS 1, retained, payload the decimal seq of the table's contiguous,
linked head *in the archive* (not what this collector saw: with a shared subscription another collector may
have stored the records before it). Published when it is higher than the last this collector published, and
again when a table resends records at or below that (it has not heard it).
"""

from __future__ import annotations

import dataclasses
import logging
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from controller.game.records import RecordError, TableRecord
from floor.archive import Alert, AlertKind, Archive, FeedItem
from floor.surveillance import Surveillance, Thresholds
from floor_protocol.ack import format_ack
from floor_protocol.addresses import Broker, parse_broker
from floor_protocol.admission import MAX_RECORD_BYTES, AdmissionError, Limits, admit_json
from floor_protocol.topics import Leaf, alert_topic, filter_of, parse_topic, shared, table_topic
from mqttloop import NetworkLoop

log = logging.getLogger("shoe-floor")

#: paho's Properties, typed (its constructor carries no annotations).
_properties: Callable[[int], Properties] = Properties

#: Chain stops a collector remembers having said (beyond: the archive's unique key dedupes, one query more).
ALERTED_MAX = 10_000
#: Most unconfirmed alerts one sweep sends again (the rest wait for the next sweeps).
ALERT_SWEEP_MAX = 500
#: Tables a refused-message budget tracks in one window; past it, every other table shares one count.
REFUSED_TABLES_MAX = 1000


class RefusedBudget:
    """A noise budget for ``refused`` and ``conflict`` alerts. A broken or hostile publisher can put junk (or
    well-formed records that conflict with the archive) on a table's topic at full speed; one alert per message
    would bury the feed, and the real alerts in it, and write the archive once per message. In each ``window``
    (seconds) the first ``per_table`` of a table, and at most ``per_floor`` across the floor, are alerts each;
    the rest are counted, and when the window ends one alert per table and kind says how many more there were
    and the last one's reason. Every refused message is still counted (``shoe_floor_refused_total``) and never
    archived. The counts live in dicts cleared each window that track at most ``REFUSED_TABLES_MAX`` tables (a
    flood naming a new table in every topic shares one count, table ``?``)."""

    KINDS = (AlertKind.REFUSED, AlertKind.CONFLICT)

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
            what = "refused" if kind == AlertKind.REFUSED else "in conflict with the archive"
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
    receive_maximum: int = 2000
    ca_file: str | None = None
    username: str | None = None
    password: str | None = None
    thresholds: Thresholds = field(default_factory=Thresholds)  # surveillance (floor/surveillance.py)


@dataclass
class Stats:
    received: int = 0
    archived: int = 0
    duplicates: int = 0
    refused: int = 0
    alerts: int = 0
    acks: int = 0
    batches: int = 0


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

    # -- paho's thread ------------------------------------------------------------------------------------
    def _on_connect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if reason.is_failure:
            log.error("broker %s:%s refused the connection: %s", self.broker.host, self.broker.port, reason)
            return
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
        self._surveillance = Surveillance(archive, self.settings.thresholds)
        self.client.connect_async(self.broker.host, self.broker.port, keepalive=30, clean_start=False, properties=props)
        network = NetworkLoop(self.client, "collector-mqtt")
        network.start()
        try:
            while not self._stop.is_set():
                batch = self._take()
                if batch:
                    self._handle(archive, batch)
                self._check_gaps(archive)
                self._raise(archive, self._refused.roll(time.monotonic()), budgeted=True)
                self._settle_alerts(archive)
        finally:
            self._stop.set()
            network.stop()

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
        for topic, payload, _mid, _qos in batch:
            try:
                record, alert = self._admit(topic, payload)
            except Exception as exc:  # whatever one message does, it is that message's refusal, not our end
                log.debug("admitting a message on %s failed", topic, exc_info=True)
                record, alert = None, _refusal(topic, f"could not be admitted: {type(exc).__name__}: {exc!a:.160}")
            if record is not None:
                good.append(record)
            if alert is not None:
                alerts.append(alert)
        self.stats.received += len(batch)
        good, inserted, conflicts = self._store(archive, good, alerts)
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
        self, archive: Archive, good: list[TableRecord], alerts: list[Alert]
    ) -> tuple[list[TableRecord], int, list[Alert]]:
        """Store the batch in one transaction; if the database refuses it for a record's content (not because
        it is down: :meth:`Archive.content_error`), store its records one by one, so that the bad one is refused
        (an alert in ``alerts``) and the rest archived. ``(the records stored or held, inserted, conflicts)``;
        any other database error goes up (the collector stops, nothing of the batch acknowledged)."""
        try:
            inserted, conflicts = archive.store(good)
            return good, inserted, conflicts
        except Exception as exc:
            if not archive.content_error(exc):
                raise
            log.warning("the archive refused a batch of %d record(s) (%s): storing them one by one", len(good), exc)
        kept: list[TableRecord] = []
        inserted, conflicts = 0, []
        for record in good:
            try:
                one, conflict = archive.store([record])
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

    def _admit(self, topic: str, payload: bytes) -> tuple[TableRecord | None, Alert | None]:
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
        self._sites[table] = site
        return record, None

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
            self._publish_ack(table, head.seq)

    def _check_gaps(self, archive: Archive) -> None:
        """A gap that has lasted ``gap_grace`` (another collector did not fill it either) is an alert."""
        now = time.monotonic()
        for table, pending in list(self._gaps.items()):
            if pending.alerted or now - pending.since < self.settings.gap_grace:
                continue
            head, stop = archive.advance(table, self._sites.get(table))
            if head.seq > self._published.get(table, 0):
                self._publish_ack(table, head.seq)
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

    def _publish_ack(self, table: str, seq: int) -> None:
        site = self._sites.get(table, self.settings.site)
        self.client.publish(table_topic(site, table, Leaf.ACK), format_ack(seq), qos=1, retain=True)
        self._published[table] = seq
        self.stats.acks += 1


def _refusal(topic: str, detail: str) -> Alert:
    where = parse_topic(topic)
    return Alert(where.table if where is not None else "?", None, AlertKind.REFUSED, detail)


def _with(alert: Alert, **changes: Any) -> Alert:
    return dataclasses.replace(alert, **changes)
