"""The floor link: every committed journal record to the casino floor's MQTT broker, nothing lost.

The journal is the outbox. :class:`FloorLink` runs in the floor link's own process (``shoe-controller
link``, :mod:`controller.link_process`), on its own thread with its own read-only SQLite connection to the
journal, and sends every record, in journal order, as a :class:`~controller.game.records.TableRecord` to
``baccarat/<site>/<table>/record`` (QoS 1, MQTT 5, a persistent session). The table never waits for it: the
table's feed hands it the newest public view (:meth:`FloorLink.show`) and a wake-up after each commit
(:meth:`FloorLink.wake`), and ``post_ack`` hands the floor's ack back over the feed for the table to store.

Every record carries ``sig``: the table key's (``[floor] key_file``) signature over
:func:`floor_protocol.signing.record_message` of its table, seq and hash; the floor archives nothing else. The
signatures are made ahead by the link's signing process (:mod:`controller.link.record_signer`, another core), or on
the link's thread when it has none.

PUBACK is flow control only (a bounded window of :attr:`max_inflight` records not yet acknowledged by the
broker; the backlog stays in the journal, never in memory). The end-to-end mark is the floor's retained
``ack`` (:class:`floor_protocol.ack.Ack`: the archive's id, the highest contiguous seq it holds and that
record's hash, signed by the floor's key). The link judges each one on its own thread
(:func:`controller.journal.ack.refusal`: this table's, signed by ``[floor] floor_public_key``, at or below the
head, the hash its own record's); what it refuses is logged and counted (:attr:`FloorLink.ack_refusals`) and
changes nothing. A believed ack is kept in memory and posted to the table (which judges it again and stores it
in the journal, at most once per ``ack_store_interval``). A lower ack of the same archive is no news. An ack of
another archive (a new, empty or restored archive) makes the link send again everything the journal still
holds, and that archive's ack is the one believed from then on. The link sends again from the ack on every
(re)connect and whenever it has not advanced for ``resend_after`` seconds although records after it exist (the
interval doubles while it stays stuck, up to ``resend_max``). Duplicates on the wire carry the same seq.

Heard besides the ack: the floor's staff list (``baccarat/<site>/floor/staff``, retained,
:mod:`floor_protocol.staff`), bounded, validated and verified with the floor's key; a refused one is one log line
and a count (:attr:`FloorLink.staff_refusals`); a believed one goes to the table through ``post_staff``.

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
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from itertools import islice
from json.encoder import encode_basestring
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from commandline.keyfile import MAX_KEY_FILE
from controller.config import FloorSection
from controller.game.public import PublicView
from controller.game.records import RECORD_VERSION
from controller.game.roads import PAIR_LETTERS
from controller.journal.ack import AckRefusals, refusal
from controller.journal.errors import JournalError
from controller.journal.queries import Record
from controller.journal.reader import JournalReader
from controller.journal.stamps import utc_now
from controller.keyfiles import load_private_key
from controller.link.floor_trouble import REPEAT, Cause, Trouble, TroubleLog, from_error, from_refusal
from controller.link.record_signer import RecordSigner
from controller.userfile import UserFileError, read_text
from floor_protocol.ack import Ack, parse_ack
from floor_protocol.signing import record_message, sign
from floor_protocol.staff import MAX_STAFF_BYTES, StaffList, StaffListError, parse_staff
from floor_protocol.state import HIDDEN, Counts, CoupOutcome, JournalMarks, Limits, Roads, TableStateMessage
from floor_protocol.topics import Leaf, staff_topic
from mqttloop import NetworkLoop

log = logging.getLogger(__name__)

#: Records sent and not yet acknowledged by the broker (PUBACK), at most.
MAX_INFLIGHT = 256
#: How long the persistent session outlives a disconnection on the broker (seconds).
SESSION_EXPIRY = 7 * 24 * 3600
#: Acks heard and not yet judged by the link's thread, at most (a flood of forged ones cannot grow memory).
MAX_ACKS_HEARD = 16
#: The link judges the newest ack heard at most this often (seconds): the retained ack is a latest value (a
#: newer one supersedes the ones before it), and each judgement is a signature check (some 80 us), while a
#: floor acking every record of a backlog flush says thousands a second.
ACK_JUDGE_INTERVAL = 0.01
#: Seconds the link waits before it starts its publishing again after a failure it did not foresee (a bug):
#: the records wait in the journal, and the link goes on from the floor's ack, never stopping for good.
RESTART_AFTER = 2.0


def _settled(info: mqtt.MQTTMessageInfo) -> bool:
    """Whether a record's publish no longer holds a place in the window: the broker acknowledged it (PUBACK),
    or paho never queued it or could not send it (``is_published`` raises then). Nothing is lost either way:
    until the floor's ack covers the record the link sends it again from the ack."""
    try:
        return info.is_published()
    except (ValueError, RuntimeError):
        return True


class _Client(mqtt.Client):
    """paho's client, keeping the exception of the last failed connection attempt: paho catches it, retries
    and tells ``on_connect_fail`` only that it failed, not why (:mod:`controller.link.floor_trouble`)."""

    last_connect_error: BaseException | None = None

    def reconnect(self) -> MQTTErrorCode:
        try:
            return super().reconnect()
        except OSError as exc:
            self.last_connect_error = exc
            raise


class FloorLinkError(Exception):
    """The floor link cannot be set up (a credential file, a certificate). ``str()`` is one line."""


class FloorKeyError(ValueError):
    """The link's keys are missing or not keys (a user mistake: one line, exit 2)."""


def signing_key(settings: FloorSection) -> Ed25519PrivateKey:
    """The table's signing key (``[floor] key_file``); :class:`FloorKeyError` naming the problem. A TLS key
    left there from before the key was renamed is named as such: it belongs in ``cert_key_file`` now."""
    path = settings.key_file
    if path is None:
        raise FloorKeyError(
            "floor.key_file: not set: the floor archives only signed records;"
            " make one with shoe-controller keygen --out FILE"
        )
    try:
        return load_private_key(path)
    except ValueError as exc:  # KeyFileError, SigningError: one line naming the file
        hint = ""
        if _looks_like_tls_key(path):
            hint = "; a TLS client key? key_file is now the table's signing key: move this one to floor.cert_key_file"
        raise FloorKeyError(f"floor.key_file: {exc}{hint}") from None


def _looks_like_tls_key(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(MAX_KEY_FILE)
    except OSError:
        return False
    return b"-----BEGIN" in head and b"PRIVATE KEY-----" in head


def floor_public_key(settings: FloorSection) -> Ed25519PublicKey:
    """The floor's public key (``[floor] floor_public_key``); :class:`FloorKeyError` when it is not set."""
    key = settings.floor_key()
    if key is None:
        raise FloorKeyError(
            "floor.floor_public_key: not set: the link believes only acks the floor signed"
            " (shoe-floor keygen prints the key; --floor-public-key KEY)"
        )
    return key


_text = encode_basestring  # a JSON string as canonical_json writes it (ensure_ascii off)


def _number(value: int | None) -> str:
    return "null" if value is None else str(int(value))


def record_payload(record: Record, table: str, key: Ed25519PrivateKey, sig: str | None = None) -> str:
    """The record's message signed with ``key``: ``replace(record.for_floor(table), sig=...).to_json()`` byte for
    byte, built without decoding the body: the journal stores each body as its canonical JSON (the text its
    hash covers), and the message is canonical JSON too (keys sorted, no spaces; ``sig`` sorts between
    ``session`` and ``table``), so the stored text goes in as it is. A backlog flush spends its time here and
    in paho; decoding and encoding every body again was a third of the link's work. ``sig``: the signature made
    already (by :class:`controller.link.record_signer.RecordSigner`), else it is made here."""
    if sig is None:
        sig = sign(key, record_message(table, record.id, record.hash))
    if not record.body.startswith("{"):  # not an object: the slow path names the problem
        return replace(record.for_floor(table), sig=sig).to_json()
    return (
        f'{{"at":{_text(record.ts)},"body":{record.body},"cause":{_number(record.cause)},'
        f'"hash":{_text(record.hash)},"kind":{_text(record.kind)},"number":{_number(record.number)},'
        f'"prev":{_text(record.prev_hash)},"seq":{record.id},"session":{_number(record.session)},'
        f'"sig":"{sig}","table":{_text(table)},"v":{RECORD_VERSION}}}'
    )


def state_message(
    view: PublicView,
    coups: Sequence[dict[str, Any]],
    *,
    table: str,
    site: str,
    head: int,
    acked: int,
    limits: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """The retained ``state`` JSON: the table now (shoe, coup, counts, what is due, alarms, roads summary).
    Built through its model, :class:`floor_protocol.state.TableStateMessage` (the floor's pit reads it back with
    the same model).

    ``view`` is the table's public view, the squeeze already applied by the table process: while a squeeze
    game's coup is in play it shows no cards, totals, result, what is due (``"hidden"``) or number of cards
    dealt (``null``); the coups of the shoe are declared ones, so they stay."""
    hidden = view.coup.hidden
    counts = {"coups": 0, "banker": 0, "player": 0, "tie": 0, "natural": 0, "player_pair": 0, "banker_pair": 0}
    bead, pairs = [], []
    for coup in coups:
        if not coup.get("declared") or coup.get("void"):
            continue
        winner = str(coup.get("winner") or "")
        counts["coups"] += 1
        if winner in ("banker", "player", "tie"):
            counts[winner] += 1
            bead.append(winner[0].upper())
            pairs.append(PAIR_LETTERS[bool(coup.get("player_pair")), bool(coup.get("banker_pair"))])
        for flag in ("natural", "player_pair", "banker_pair"):
            counts[flag] += bool(coup.get(flag))
    fields: dict[str, Any] = {
        "v": RECORD_VERSION,
        "site": site,
        "table": table,
        "at": utc_now(),
        "shoe": view.shoe.number,
        "coup": view.shoe.coup,
        "due": HIDDEN if hidden else view.coup.due,
        "cards_dealt": view.coup.cards_dealt,
        "cards_remaining": view.shoe.cards_remaining,
        "cut_card_out": view.shoe.cut_card_out,
        "last_coup": view.shoe.last_coup,
        "alarms": tuple(a.name for a in view.alarms),
        "counts": Counts(**counts),
        "roads": Roads(bead="".join(bead), pairs="".join(pairs)),
        "journal": JournalMarks(head=head, acked=acked),
    }
    if limits is not None:  # the table's limits in cents (the pit shows them on the tile); absent when not said
        fields["limits"] = Limits(**limits)
    if not hidden:  # a squeeze coup in play leaves them out (the model holds the table to it)
        result = view.coup.result
        fields["player"] = tuple(view.coup.player or ())
        fields["banker"] = tuple(view.coup.banker or ())
        fields["result"] = None if result is None else CoupOutcome.model_validate(dict(result), strict=False)
    return TableStateMessage.model_validate(fields).to_dict()


class FloorLink:
    """The publisher (in the link's process). :meth:`start` its thread; :meth:`close` stops it."""

    name = "floor link"

    def __init__(
        self,
        settings: FloorSection,
        journal_path: str | Path,
        post_ack: Callable[[Ack], None],
        *,
        post_staff: Callable[[StaffList], None] = lambda staff: None,
        key: Ed25519PrivateKey | None = None,
        floor_key: Ed25519PublicKey | None = None,
        max_inflight: int = MAX_INFLIGHT,
        resend_after: float = 10.0,
        resend_max: float = 300.0,
        state_interval: float = 0.25,
        poll_interval: float = 0.5,
        ack_store_interval: float = 1.0,
        client_id: str | None = None,
        signer_process: bool = True,
        on_trouble: Callable[[Trouble | None], None] | None = None,
        limits: Mapping[str, int] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_inflight < 1:
            raise ValueError("max_inflight must be at least 1")
        self.settings = settings
        self.limits = limits  # the table's limits in cents, for the state message (None: not said)
        #: The table's signing key and the floor's public key (from ``settings`` unless given).
        self.key = key if key is not None else signing_key(settings)
        self.floor_key = floor_key if floor_key is not None else floor_public_key(settings)
        self.journal_path = str(journal_path)
        #: Signatures made in a child process on another core (None: all made on the link's thread).
        self.signer = RecordSigner(self.key, settings.table) if signer_process else None
        self.post_ack = post_ack
        #: Hands the floor's staff list, verified, to the table (over link.sock; the table verifies it again).
        self.post_staff = post_staff
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
        self.topic_staff = staff_topic(settings.site)
        self.client = self._make_client(client_id or f"shoe-{settings.site}-{settings.table}")
        # Counters (read by tests, benchmarks and the metrics helper); written by the link's thread.
        self.sent = 0  # record publishes, resends included
        self.signed_here = 0  # of them, signed on the link's thread (not by the signing process)
        self.rewinds = 0  # times the link went back to the ack to send again
        self.connects = 0
        self.acked = 0  # the seq of the floor's ack believed (heard or stored), 0 before any
        self.believed: Ack | None = None  # the floor's ack believed now (its archive is the one the link follows)
        self.ack_refusals = AckRefusals("floor link")  # acks not believed, by reason
        self.archive_changes = 0  # times an ack of another archive made the link send the whole journal again
        self.failures = 0  # times the publishing failed unforeseen and started again (RESTART_AFTER)
        self.states_unsent = 0  # table views that made no state message (the model refused them)
        self._said: dict[str, tuple[str, float]] = {}  # per kind of trouble: what was last logged, and when
        #: Staff lists refused, by reason (too_long, malformed, wrong_site, bad_signature), and the one believed.
        self.staff_refusals: Counter[str] = Counter()
        self.staff: StaffList | None = None
        self.head = 0  # the journal's last record id as last read
        self.connected = False
        #: Why the link is not connected (said once, again on change or every 10 minutes; None: connected or
        #: not tried yet). ``on_trouble`` hears each change (the link's Status line).
        self.troubles = TroubleLog()
        self.on_trouble = on_trouble
        self._clock = clock
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()  # guards the fields the paho thread writes
        self._reconnected = False
        self._refused = 0  # record PUBACKs with a failure reason code (the broker did not take the record)
        self.window = max_inflight  # the window now: max_inflight, or less if the broker grants less
        self._acks_heard: deque[Ack | None] = deque(maxlen=MAX_ACKS_HEARD)  # None: a payload not an ack
        self._view: PublicView | None = None
        self._view_sent: PublicView | None = None
        self._thread: threading.Thread | None = None
        self._network: NetworkLoop | None = None  # paho's loop, on a thread of ours (mqttloop)

    # -- set-up ------------------------------------------------------------------------------------
    def _make_client(self, client_id: str) -> mqtt.Client:
        s = self.settings
        client = _Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
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
                if s.cert_file is not None and s.cert_key_file is not None:
                    context.load_cert_chain(str(s.cert_file), str(s.cert_key_file))
            except (OSError, ssl.SSLError) as exc:
                raise FloorLinkError(f"floor TLS: {exc}") from None
            client.tls_set_context(context)
        client.on_connect = self._on_connect
        client.on_connect_fail = self._on_connect_fail
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
        if self.signer is not None:
            self.signer.start()
        props = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
        props.SessionExpiryInterval = SESSION_EXPIRY
        log.info("floor link to %s as %s", s.broker, self.topic_record.rsplit("/", 1)[0])
        self.client.connect_async(s.host, s.port, keepalive=s.keepalive, clean_start=False, properties=props)
        self._network = NetworkLoop(self.client, "floor-link-mqtt")
        self._network.start()
        self._thread = threading.Thread(target=self._run, name="floor-link", daemon=True)
        self._thread.start()

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
        if self.signer is not None:
            self.signer.close()

    # -- paho's thread -------------------------------------------------------------------------------
    @property
    def trouble(self) -> Trouble | None:
        """Why the link is not connected now (None: connected, or not tried yet)."""
        with self._lock:
            return self.troubles.current

    def _failed(self, trouble: Trouble) -> None:
        with self._lock:
            line = self.troubles.failed(trouble, self._clock())
        if line is not None:
            log.warning("%s", line)
            if self.on_trouble is not None:
                self.on_trouble(trouble)

    def _on_connect_fail(self, client: mqtt.Client, userdata: Any) -> None:
        error = getattr(client, "last_connect_error", None)
        broker = self.settings.broker
        if error is None:
            self._failed(Trouble(Cause.OTHER, f"cannot connect to {broker}"))
        else:
            self._failed(from_error(error, broker))

    def _on_connect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        if reason.is_failure:
            self._failed(from_refusal(reason, self.settings.broker))
            return
        with self._lock:
            line = self.troubles.connected(self.settings.broker)
        if line is not None:
            log.info("%s", line)
            if self.on_trouble is not None:
                self.on_trouble(None)
        client.subscribe(self.topic_ack, qos=1)
        client.subscribe(self.topic_staff, qos=1)
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
            self._failed(Trouble(Cause.LOST, f"the connection to {self.settings.broker} was lost ({reason})"))

    def _on_message(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        if message.topic == self.topic_staff:
            self._staff_heard(bytes(message.payload))
            return
        if not message.payload:  # the retained ack cleared: nothing said
            return
        # Parsed here (bounded, never raises); judged on the link's own thread, which holds the journal.
        ack = parse_ack(message.payload)
        with self._lock:
            self._acks_heard.append(ack)
        self._wake.set()

    def _staff_heard(self, payload: bytes) -> None:
        """The floor's staff list (retained): bounded, validated and verified with the floor's key here, on
        paho's thread (a list is rare; one verification); a refused one is one log line and a count, and the
        list believed stays. A believed one goes to the table, which verifies it again and keeps it."""
        if not payload:
            return  # the retained list cleared: the table keeps the one it has
        if len(payload) > MAX_STAFF_BYTES:
            self._refuse_staff("too_long", f"{len(payload)} bytes (at most {MAX_STAFF_BYTES})")
            return
        try:
            staff = parse_staff(payload)
        except StaffListError as exc:
            self._refuse_staff("malformed", str(exc))
            return
        if staff.site != self.settings.site:
            self._refuse_staff("wrong_site", f"site {staff.site[:40]!r}, not {self.settings.site!r}")
            return
        if not staff.verify(self.floor_key):
            self._refuse_staff("bad_signature", "not signed by [floor] floor_public_key")
            return
        with self._lock:
            believed = self.staff
            stale = believed is not None and staff.as_of < believed.as_of
            if not stale:
                news, self.staff = staff != believed, staff
        if stale:
            # an older list the floor once signed, said again (by whoever may publish there): the dealer it
            # still names may have been struck off since
            assert believed is not None
            self._refuse_staff("stale", f"as of {staff.as_of}, older than the list believed (as of {believed.as_of})")
            return
        if news:
            log.info("floor staff list as of %s: %d member(s); handed to the table", staff.as_of, len(staff.staff))
            self.post_staff(staff)

    def _refuse_staff(self, reason: str, detail: str) -> None:
        with self._lock:
            self.staff_refusals[reason] += 1
        log.warning("floor link: refused a staff list on %s: %s", self.topic_staff, detail[:200])

    # -- the link's thread ---------------------------------------------------------------------------
    def _run(self) -> None:
        journal = None
        said, said_at = "", 0.0
        while journal is None and not self._stop.is_set():
            try:
                journal = JournalReader.open_read_only(self.journal_path)
            except JournalError as exc:
                now = self._clock()
                if str(exc) != said or now - said_at >= REPEAT:  # once, again on a change or every 10 minutes
                    said, said_at = str(exc), now
                    log.error("floor link cannot read the journal (%s); trying again every second", exc)
                self._stop.wait(1)
        if journal is None:
            return
        try:
            while not self._stop.is_set():
                try:
                    self._publish_loop(journal)
                except Exception as exc:
                    self.failures += 1
                    if self._first_say("failed", f"{type(exc).__name__}: {exc}"):  # not a traceback every 2 s
                        log.exception(
                            "floor link failed (%d time(s)); the table goes on, records wait in the journal;"
                            " starting again in %.0f s",
                            self.failures,
                            RESTART_AFTER,
                        )
                    self._stop.wait(RESTART_AFTER)
        finally:
            journal.close()
            if self.connected:
                info = self.client.publish(self.topic_status, b"offline", qos=1, retain=True)
                with contextlib.suppress(RuntimeError, ValueError):
                    info.wait_for_publish(1.0)
            self.client.disconnect()

    def _first_say(self, kind: str, text: str) -> bool:
        """Whether to log ``text`` now: the first time, again when it changes, or :data:`REPEAT` seconds after it
        was last said (the counters count every one)."""
        now = self._clock()
        said = self._said.get(kind)
        if said is not None and said[0] == text and now - said[1] < REPEAT:
            return False
        self._said[kind] = (text, now)
        return True

    def _judge(self, ack: Ack | None, journal: JournalReader) -> bool:
        """Whether to believe ``ack`` (:func:`controller.journal.ack.refusal`); a refusal is counted and logged."""
        reason = refusal(ack, journal, table=self.settings.table, floor_key=self.floor_key)
        if reason is not None:
            self.ack_refusals.refuse(reason, ack)
            return False
        return True

    def _publish_loop(self, journal: JournalReader) -> None:
        table = self.settings.table
        kept = journal.floor_ack_record(table)
        if kept is not None and refusal(kept, journal, table=table, floor_key=self.floor_key) is None:
            self.believed, self.acked = kept, kept.seq
        stored = self.believed
        next_seq = self.acked + 1
        window: deque[mqtt.MQTTMessageInfo] = deque()
        resend_interval = self.resend_after
        last_progress = time.monotonic()
        last_store = float("-inf")
        last_state = float("-inf")
        more = False
        wait = self.poll_interval
        refused, last_refused = 0, float("-inf")
        last_judged = float("-inf")
        while not self._stop.is_set():
            if not more:
                self._wake.wait(wait)
            self._wake.clear()
            more = False
            now = time.monotonic()
            self.head = journal.head()[0]
            with self._lock:
                reconnected, self._reconnected = self._reconnected, False
                heard: list[Ack | None] = []
                if self._acks_heard and now - last_judged >= ACK_JUDGE_INTERVAL:
                    heard = [self._acks_heard[-1]]  # the newest: it supersedes the others
                    self._acks_heard.clear()
                    last_judged = now
                ack_waiting = bool(self._acks_heard)  # judged at the next round past the interval
                refused += self._refused
                self._refused = 0
                connected = self.connected
                limit = self.window
            wait = ACK_JUDGE_INTERVAL if ack_waiting else self.poll_interval
            for ack in heard:
                if not self._judge(ack, journal):
                    continue
                assert ack is not None
                believed = self.believed
                if believed is not None and ack.archive == believed.archive:
                    if ack.seq <= believed.seq:
                        continue  # a lower (or the same) ack of the archive followed: no news
                elif believed is not None:  # another archive: it may hold none of what the old one acked
                    anchor = journal.anchor()[0]
                    log.warning(
                        "floor ack from archive %s (was %s) at %d: sending again everything the journal holds (%d-%d)",
                        ack.archive,
                        believed.archive,
                        ack.seq,
                        anchor + 1,
                        self.head,
                    )
                    self.archive_changes += 1
                    self.rewinds += 1
                    next_seq = anchor + 1
                    window.clear()
                if ack.seq > self.acked:
                    last_progress, resend_interval = now, self.resend_after
                self.believed, self.acked = ack, ack.seq
            if self.believed is not None and self.believed != stored and now - last_store >= self.ack_store_interval:
                self.post_ack(self.believed)
                stored, last_store = self.believed, now
            if not connected:
                continue
            if reconnected:
                self.connects += 1
                window.clear()  # paho resends its own unacknowledged ones; we start again from the ack
                next_seq = min(next_seq, self.acked + 1)  # (or from further back: another archive's resend)
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
                publish, topic, key = self.client.publish, self.topic_record, self.key
                signer = self.signer if self.signer is not None and self.signer.running else None
                if signer is not None:
                    signer.collect()
                    signer.forget_before(next_seq)
                    self._ask_ahead(signer, journal, next_seq, limit)
                records = journal.records(after=next_seq - 1)
                full = False
                try:
                    for record in islice(records, room):
                        sig = None if signer is None else self._signature(signer, journal, record, limit)
                        if sig is None:
                            self.signed_here += 1
                        info = publish(topic, record_payload(record, table, key, sig), qos=1)
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
            view = self._view
            if view is not None and view is not self._view_sent:
                due_in = self.state_interval - (now - last_state)
                if due_in <= 0:
                    self._publish_state(journal, view)
                    last_state = now
                else:
                    wait = min(wait, due_in)  # the newest view goes out when the interval is over

    def _ask_ahead(self, signer: RecordSigner, journal: JournalReader, seq: int, limit: int) -> None:
        """Ask the signing process for the signatures of the records after those it has, up to two windows
        ahead of ``seq`` (made on another core while the link sends these)."""
        if signer.busy:
            return
        after = max(seq - 1, signer.asked_through)
        if after < self.head and after < seq - 1 + 2 * limit:
            signer.request(journal.hashes(after=after, limit=limit))

    def _signature(self, signer: RecordSigner, journal: JournalReader, record: Record, limit: int) -> str | None:
        """The signing process's signature of ``record``: ready, or asked for and waited for (the wait lets
        paho's thread run); None when it was not asked for (the link signs it itself)."""
        sig = signer.take(record.id, record.hash)
        if sig is None and signer.busy and record.id <= signer.asked_through:
            signer.collect(timeout=1.0)
            self._ask_ahead(signer, journal, record.id + 1, limit)
            sig = signer.take(record.id, record.hash)
        return sig

    def _publish_state(self, journal: JournalReader, view: PublicView) -> None:
        """The retained state of ``view``. None before the table has a shoe (the view of a table that has
        not said one yet: no tile to draw); a view the state's model refuses is counted and logged, and the
        records go on (a state message is a latest value: the next view's replaces it)."""
        if view.shoe.number is None:
            self._view_sent = view
            return
        try:
            message = state_message(
                view,
                journal.coups(shoe=view.shoe.number),
                table=self.settings.table,
                site=self.settings.site,
                head=self.head,
                acked=self.acked,
                limits=self.limits,
            )
        except ValueError as exc:  # pydantic's ValidationError: a view the model does not take
            self.states_unsent += 1
            problem = str(exc).replace("\n", " ")[:300]
            if self._first_say("state", problem):  # a view comes with every card: said once, not each time
                log.error("floor link: the table's view makes no state message (%s)", problem)
            self._view_sent = view
            return
        self.client.publish(self.topic_state, json.dumps(message, separators=(",", ":")), qos=1, retain=True)
        self._view_sent = view
