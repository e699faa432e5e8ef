"""The floor link: every committed journal record to the casino floor's MQTT broker, nothing lost.

The journal is the outbox. :class:`FloorLink` runs in the floor link's own process (``shoe-controller
link``, :mod:`controller.link_process`), on its own thread with its own read-only SQLite connection to the
journal, and sends every record, in journal order, as a :class:`~controller.game.records.TableRecord` to
``baccarat/<site>/<table>/record`` (QoS 1, MQTT 5, a persistent session). The table never waits for it: the
table's feed hands it the newest public view (:meth:`FloorLink.show`) and a wake-up after each commit
(:meth:`FloorLink.wake`), and ``post_ack`` hands the floor's ack back over the feed for the table to store.

PUBACK is flow control only (a bounded window of :attr:`max_inflight` records not yet acknowledged by the
broker; the backlog stays in the journal, never in memory). The end-to-end mark is the floor's retained
``ack`` (the highest contiguous seq it archived): the link keeps it in memory, posts it to the table (which
stores it in the journal, at most once per ``ack_store_interval``), and sends again from it on every
(re)connect and whenever it has not advanced for ``resend_after`` seconds although records after it exist
(the interval doubles while it stays stuck, up to ``resend_max``). Duplicates on the wire carry the same seq.

Also published: ``status`` (retained ``online``; the Last Will and a clean stop leave ``offline``) and
``state`` (retained JSON of the table now, latest value, at most once per ``state_interval``; under
``reveal = on_declare`` nothing of an undeclared coup).
"""

from __future__ import annotations

import contextlib
import json
import logging
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from itertools import islice
from json.encoder import encode_basestring
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from controller.config import FloorSection
from controller.game.public import PublicView
from controller.game.records import RECORD_VERSION
from controller.journal import Journal, JournalError, Record, utc_now
from controller.userfile import UserFileError, read_text
from floor_protocol.ack import parse_ack
from floor_protocol.topics import Leaf
from mqttloop import NetworkLoop

log = logging.getLogger(__name__)

#: Records sent and not yet acknowledged by the broker (PUBACK), at most.
MAX_INFLIGHT = 256
#: How long the persistent session outlives a disconnection on the broker (seconds).
SESSION_EXPIRY = 7 * 24 * 3600


def _settled(info: mqtt.MQTTMessageInfo) -> bool:
    """Whether a record's publish no longer holds a place in the window: the broker acknowledged it (PUBACK),
    or paho never queued it or could not send it (``is_published`` raises then). Nothing is lost either way:
    until the floor's ack covers the record the link sends it again from the ack."""
    try:
        return info.is_published()
    except (ValueError, RuntimeError):
        return True


class FloorLinkError(Exception):
    """The floor link cannot be set up (a credential file, a certificate). ``str()`` is one line."""


_text = encode_basestring  # a JSON string as canonical_json writes it (ensure_ascii off)


def _number(value: int | None) -> str:
    return "null" if value is None else str(int(value))


def record_payload(record: Record, table: str) -> str:
    """The record's message, ``record.for_floor(table).to_json()`` byte for byte, built without decoding the
    body: the journal stores each body as its canonical JSON (the text its hash covers), and the message is
    canonical JSON too (keys sorted, no spaces), so the stored text goes in as it is. A backlog flush spends
    its time here and in paho; decoding and encoding every body again was a third of the link's work."""
    if not record.body.startswith("{"):  # not an object: the slow path names the problem
        return record.for_floor(table).to_json()
    return (
        f'{{"at":{_text(record.ts)},"body":{record.body},"cause":{_number(record.cause)},'
        f'"hash":{_text(record.hash)},"kind":{_text(record.kind)},"number":{_number(record.number)},'
        f'"prev":{_text(record.prev_hash)},"seq":{record.id},"session":{_number(record.session)},'
        f'"table":{_text(table)},"v":{RECORD_VERSION}}}'
    )


def state_message(
    view: PublicView, coups: Sequence[dict[str, Any]], *, table: str, site: str, head: int, acked: int
) -> dict[str, Any]:
    """The retained ``state`` JSON: the table now (shoe, coup, counts, what is due, alarms, roads summary).
    Its shape is :class:`floor_protocol.state.TableStateMessage` (a test holds every message built here to it).

    ``view`` is the table's public view, the squeeze already applied by the table process: while a squeeze
    game's coup is in play it shows no cards, totals, result, what is due (``"hidden"``) or number of cards
    dealt (``null``); the coups of the shoe are declared ones, so they stay."""
    hidden = view.coup.hidden
    counts = {"coups": 0, "banker": 0, "player": 0, "tie": 0, "natural": 0, "player_pair": 0, "banker_pair": 0}
    bead = []
    for coup in coups:
        if not coup.get("declared") or coup.get("void"):
            continue
        winner = str(coup.get("winner") or "")
        counts["coups"] += 1
        if winner in ("banker", "player", "tie"):
            counts[winner] += 1
            bead.append(winner[0].upper())
        for flag in ("natural", "player_pair", "banker_pair"):
            counts[flag] += bool(coup.get(flag))
    message: dict[str, Any] = {
        "v": RECORD_VERSION,
        "site": site,
        "table": table,
        "at": utc_now(),
        "shoe": view.shoe.number,
        "coup": view.shoe.coup,
        "due": "hidden" if hidden else view.coup.due,
        "cards_dealt": view.coup.cards_dealt,
        "cards_remaining": view.shoe.cards_remaining,
        "cut_card_out": view.shoe.cut_card_out,
        "last_coup": view.shoe.last_coup,
        "alarms": [a.name for a in view.alarms],
        "counts": counts,
        "roads": {"bead": "".join(bead)},
        "journal": {"head": head, "acked": acked},
    }
    if not hidden:
        message["player"] = list(view.coup.player or ())
        message["banker"] = list(view.coup.banker or ())
        message["result"] = dict(view.coup.result) if view.coup.result is not None else None
    return message


class FloorLink:
    """The publisher (in the link's process). :meth:`start` its thread; :meth:`close` stops it."""

    name = "floor link"

    def __init__(
        self,
        settings: FloorSection,
        journal_path: str | Path,
        post_ack: Callable[[int], None],
        *,
        max_inflight: int = MAX_INFLIGHT,
        resend_after: float = 10.0,
        resend_max: float = 300.0,
        state_interval: float = 0.25,
        poll_interval: float = 0.5,
        ack_store_interval: float = 1.0,
        client_id: str | None = None,
    ) -> None:
        if max_inflight < 1:
            raise ValueError("max_inflight must be at least 1")
        self.settings = settings
        self.journal_path = str(journal_path)
        self.post_ack = post_ack
        self.max_inflight = max_inflight
        self.resend_after = resend_after
        self.resend_max = resend_max
        self.state_interval = state_interval
        self.poll_interval = poll_interval
        self.ack_store_interval = ack_store_interval
        self.topic_record = settings.topic(Leaf.RECORD)
        self.topic_state = settings.topic(Leaf.STATE)
        self.topic_status = settings.topic(Leaf.STATUS)
        self.topic_ack = settings.topic(Leaf.ACK)
        self.client = self._make_client(client_id or f"shoe-{settings.site}-{settings.table}")
        # Counters (read by tests, benchmarks and the metrics helper); written by the link's thread.
        self.sent = 0  # record publishes, resends included
        self.rewinds = 0  # times the link went back to the ack to send again
        self.connects = 0
        self.acked = 0  # the floor's ack as last heard (or stored)
        self.head = 0  # the journal's last record id as last read
        self.connected = False
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()  # guards the fields the paho thread writes
        self._reconnected = False
        self._refused = 0  # record PUBACKs with a failure reason code (the broker did not take the record)
        self.window = max_inflight  # the window now: max_inflight, or less if the broker grants less
        self._ack_heard: int | None = None
        self._view: PublicView | None = None
        self._view_sent: PublicView | None = None
        self._thread: threading.Thread | None = None
        self._network: NetworkLoop | None = None  # paho's loop, on a thread of ours (mqttloop)

    # -- set-up ------------------------------------------------------------------------------------
    def _make_client(self, client_id: str) -> mqtt.Client:
        s = self.settings
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
        # The window is ours (the loop never has more than max_inflight records unacknowledged), so paho's own
        # limit is off: with it on, paho walks every message it holds on each PUBACK, looking for a queued one
        # to send (O(window) per record), which was most of a backlog flush's time.
        client.max_inflight_messages_set(0)
        # A reconnect: paho still holds the old window (it sends it again) while the loop sends the new one.
        client.max_queued_messages_set(self.max_inflight * 2 + 8)
        client.reconnect_delay_set(1, 30)
        client.will_set(self.topic_status, b"offline", qos=1, retain=True)
        if s.username is not None:
            password = None
            if s.password_file is not None:
                try:
                    password = read_text(s.password_file, limit=4096).strip("\r\n")
                except UserFileError as exc:
                    raise FloorLinkError(f"floor.password_file: {exc}") from None
            client.username_pw_set(s.username, password)
        if s.tls:
            try:
                context = ssl.create_default_context(cafile=str(s.ca_file) if s.ca_file else None)
                if s.cert_file is not None and s.key_file is not None:
                    context.load_cert_chain(str(s.cert_file), str(s.key_file))
            except (OSError, ssl.SSLError) as exc:
                raise FloorLinkError(f"floor TLS: {exc}") from None
            client.tls_set_context(context)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        client.on_publish = self._on_publish
        return client

    # -- the table's side (never blocks) -----------------------------------------------------------
    def show(self, view: PublicView) -> None:
        """The table's newest public view (from its feed): it goes out as ``state`` within ``state_interval``."""
        self._view = view
        self._wake.set()

    def wake(self) -> None:
        """The table committed records: read them from the journal now."""
        self._wake.set()

    # -- life ----------------------------------------------------------------------------------------
    def start(self) -> None:
        s = self.settings
        props = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
        props.SessionExpiryInterval = SESSION_EXPIRY
        self.client.connect_async(s.host, s.port, keepalive=s.keepalive, clean_start=False, properties=props)
        self._network = NetworkLoop(self.client, "floor-link-mqtt")
        self._network.start()
        self._thread = threading.Thread(target=self._run, name="floor-link", daemon=True)
        self._thread.start()
        log.info("floor link to %s as %s", s.broker, self.topic_record.rsplit("/", 1)[0])

    def close(self) -> None:
        """Stop: ``offline`` (retained) if connected, disconnect, join. Idempotent."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None
        if self._network is not None:
            self._network.stop()
            self._network = None

    # -- paho's thread -------------------------------------------------------------------------------
    def _on_connect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        if reason.is_failure:
            log.warning("floor broker refused the connection: %s", reason)
            return
        client.subscribe(self.topic_ack, qos=1)
        # MQTT 5: the broker says how many QoS 1 messages it takes in flight at once (Receive Maximum; 65,535
        # if it does not say). Past it, a broker answers PUBACK "quota exceeded" and drops the record; keep a
        # few places for the status and state messages.
        granted = getattr(props, "ReceiveMaximum", 65535) if props is not None else 65535
        window = max(1, min(self.max_inflight, int(granted) - 4))
        if window < self.max_inflight:
            log.warning("floor broker takes %d messages in flight; the link sends %d at a time", granted, window)
        with self._lock:
            self.window = window
            self._reconnected = True
            self.connected = True
        self._wake.set()

    def _on_publish(self, client: mqtt.Client, userdata: Any, mid: int, reason: Any, props: Any) -> None:
        if reason.is_failure:  # not taken (quota exceeded, not authorised ...): send again from the ack
            with self._lock:
                self._refused += 1
            self._wake.set()

    def _on_disconnect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        with self._lock:
            was = self.connected
            self.connected = False
        if was:
            log.warning("floor broker connection lost (%s); records wait in the journal", reason)

    def _on_message(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        seq = parse_ack(message.payload)
        if seq is None:
            log.warning("floor ack not understood: %r", message.payload[:40])
            return
        with self._lock:
            self._ack_heard = seq
        self._wake.set()

    # -- the link's thread ---------------------------------------------------------------------------
    def _run(self) -> None:
        journal = None
        while journal is None and not self._stop.is_set():
            try:
                journal = Journal.open(self.journal_path, read_only=True)
            except JournalError as exc:
                log.error("floor link cannot read the journal (%s); trying again in 1 s", exc)
                self._stop.wait(1)
        if journal is None:
            return
        try:
            self._publish_loop(journal)
        except Exception:
            log.exception("floor link failed; the table goes on, records wait in the journal")
        finally:
            journal.close()
            if self.connected:
                info = self.client.publish(self.topic_status, b"offline", qos=1, retain=True)
                with contextlib.suppress(RuntimeError, ValueError):
                    info.wait_for_publish(1.0)
            self.client.disconnect()

    def _publish_loop(self, journal: Journal) -> None:
        self.acked = stored = journal.floor_ack() or 0
        next_seq = self.acked + 1
        window: deque[mqtt.MQTTMessageInfo] = deque()
        resend_interval = self.resend_after
        last_progress = time.monotonic()
        last_store = float("-inf")
        last_state = float("-inf")
        more = False
        wait = self.poll_interval
        refused, last_refused = 0, float("-inf")
        while not self._stop.is_set():
            if not more:
                self._wake.wait(wait)
            self._wake.clear()
            more = False
            now = time.monotonic()
            self.head = journal.head()[0]
            with self._lock:
                reconnected, self._reconnected = self._reconnected, False
                heard, self._ack_heard = self._ack_heard, None
                refused += self._refused
                self._refused = 0
                connected = self.connected
                limit = self.window
            if heard is not None:
                if heard > self.head:
                    log.error("floor ack %d is beyond this journal's last record %d: ignored", heard, self.head)
                else:
                    if heard > self.acked:
                        last_progress, resend_interval = now, self.resend_after
                    self.acked = heard
            if self.acked != stored and now - last_store >= self.ack_store_interval:
                self.post_ack(self.acked)
                stored, last_store = self.acked, now
            if not connected:
                continue
            if reconnected:
                self.connects += 1
                window.clear()  # paho resends its own unacknowledged ones; we start again from the ack
                next_seq = self.acked + 1
                last_progress = now
                self.client.publish(self.topic_status, b"online", qos=1, retain=True)
                self._view_sent = None
            elif refused and now - last_refused >= 1.0:  # at most once a second, whatever the broker says
                log.warning("floor broker refused %d message(s): sending again from the ack %d", refused, self.acked)
                self.rewinds += 1
                next_seq = self.acked + 1
                window.clear()
                refused, last_refused = 0, now
            elif self.head > self.acked and next_seq > self.acked + 1 and now - last_progress >= resend_interval:
                log.warning(
                    "floor ack stuck at %d for %.0f s (journal at %d): sending again from it",
                    self.acked,
                    now - last_progress,
                    self.head,
                )
                self.rewinds += 1
                next_seq = self.acked + 1
                window.clear()
                last_progress = now
                resend_interval = min(resend_interval * 2, self.resend_max)
            while window and _settled(window[0]):
                window.popleft()
            if len(window) >= limit:  # the oldest waits for its PUBACK; others may have theirs
                window = deque(info for info in window if not _settled(info))
            room = limit - len(window)
            if room > 0 and next_seq <= self.head:
                publish, topic, table = self.client.publish, self.topic_record, self.settings.table
                records = journal.records(after=next_seq - 1)
                full = False
                try:
                    for record in islice(records, room):
                        info = publish(topic, record_payload(record, table), qos=1)
                        if info.rc == mqtt.MQTT_ERR_QUEUE_SIZE:
                            # paho still holds what it sent before a rewind (no PUBACK yet) and takes no more:
                            # this record goes at the next round
                            full = True
                            break
                        window.append(info)
                        next_seq = record.id + 1
                        self.sent += 1
                finally:
                    records.close()  # type: ignore[attr-defined]
                more = next_seq <= self.head and len(window) < limit and not full
            elif room <= 0:
                self._stop.wait(0.002)  # the window is full: wait a moment for PUBACKs
                more = True
            wait = self.poll_interval
            view = self._view
            if view is not None and view is not self._view_sent:
                due_in = self.state_interval - (now - last_state)
                if due_in <= 0:
                    self._publish_state(journal, view)
                    last_state = now
                else:
                    wait = min(wait, due_in)  # the newest view goes out when the interval is over

    def _publish_state(self, journal: Journal, view: PublicView) -> None:
        message = state_message(
            view,
            journal.coups(shoe=view.shoe.number),
            table=self.settings.table,
            site=self.settings.site,
            head=self.head,
            acked=self.acked,
        )
        self.client.publish(self.topic_state, json.dumps(message, separators=(",", ":")), qos=1, retain=True)
        self._view_sent = view
