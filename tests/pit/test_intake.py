"""The pit cannot be stopped by data: every message it takes off the broker is bounded and read into its shape
(floor/pit_intake.py, floor_protocol/state.py) or refused and counted, and no message can end its MQTT
callback. Against a real Mosquitto and a real pit (retained junk comes back after every restart), plus the
intake's refusals one by one and a real journal's records all taken."""

from __future__ import annotations

import json
import logging
import re
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from controller.game.records import TableRecord
from floor.archive import Archive
from floor.pit import Pit
from floor.pit_intake import MAX_RECORD_BYTES, Refused, read_alert, read_record, read_status
from mqttloop import NetworkLoop
from tests.pitload import Floor, SimTable
from tests.servers import Mosquitto
from tests.waiting import until

RECORD: dict[str, Any] = {
    "v": 2, "table": "T1", "seq": 7, "kind": "coup", "at": "2026-11-30T12:00:00.000Z", "session": 1, "number": 3,
    "cause": 6, "prev": "0" * 64, "hash": "1" * 64,
    "body": {"shoe": 1, "coup": 4, "declared": True, "void": False, "winner": "banker", "player": ["2S", "3H"],
             "banker": ["9D", "KC"], "player_total": 5, "banker_total": 9, "natural": True},
}  # fmt: skip
ADVANTAGE: dict[str, Any] = {"bet": "banker", "ev": 0.012, "shoe": 1, "coup": 2, "cards_left": 300}
ALERT: dict[str, Any] = {"v": 1, "id": 5, "at": "2026-11-30T12:00:00.000Z", "site": "s1", "table": "T1", "seq": 7,
         "kind": "advantage", "detail": "banker +1.2%", "record": None, "extra": {}, "acked_by": None,
         "acked_at": None}  # fmt: skip


def with_body(**body: Any) -> bytes:
    return json.dumps({**RECORD, "body": {**RECORD["body"], **body}}).encode()


def strict(text: bytes) -> Any:
    """JSON as a browser's JSON.parse reads it: NaN and Infinity are not JSON."""

    def no(name: str) -> Any:
        raise ValueError(f"{name} in the page's JSON")

    return json.loads(text, parse_constant=no)


#: What an attacker with a table's credentials (or an open broker) can put on the pit's topics.
JUNK_STATE = b'{"shoe":1,"alarms":5}'
JUNK_RECORDS = [
    b"[" * 6000 + b"]" * 6000,  # nested deeper than the JSON reader recurses (under the size cap)
    with_body(player=[1, 2]),
    json.dumps({**RECORD, "kind": "advantage", "body": {**ADVANTAGE, "ev": 1e999}}).encode(),  # Infinity
    b'{"v":2,"kind":"coup","body":{"declared":true,"winner":"banker","player":NaN}}',
    b"x" * (MAX_RECORD_BYTES + 1),
    b"\xff\xfe",
    b"1" * 5000,
]
JUNK_ALERTS = [
    json.dumps({**ALERT, "kind": 5}).encode(),
    json.dumps({**ALERT, "id": [1]}).encode(),
    b'{"table":"T1","record":' + b"[" * 6000 + b"]" * 6000 + b"}",
]


class Publisher:
    def __init__(self, broker: Mosquitto) -> None:
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self.client.connect("127.0.0.1", broker.port)
        self.network = NetworkLoop(self.client, "test-mqtt")
        self.network.start()

    def send(self, topic: str, payload: bytes, retain: bool = False) -> None:
        self.client.publish(topic, payload, qos=1, retain=retain).wait_for_publish(10)

    def close(self) -> None:
        self.network.stop()


def counted(pit: Pit, **at_least: int) -> Callable[[], bool]:
    return lambda: all(pit.stats[k] >= n for k, n in at_least.items())


def metric(base: str, name: str) -> float:
    with urllib.request.urlopen(base + "/metrics", timeout=10) as r:
        text = r.read().decode()
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    assert found is not None, text
    return float(found.group(1))


@pytest.mark.e2e
def test_junk_on_every_topic_is_refused_and_counted_and_the_pit_follows_on_after_restarts(
    journal: list[TableRecord], broker: Mosquitto, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path}/archive.db"
    Archive(url).close()
    junk = Publisher(broker)
    sim = SimTable("s1", "T1", journal)
    floor = Floor(broker.port, [sim])
    pits: list[Pit] = []
    try:
        for restart in range(2):  # retained junk is what the pit reads first each time it starts
            junk.send("baccarat/s1/T1/state", JUNK_STATE, retain=True)
            junk.send("baccarat/s1/T1/status", b"maybe", retain=True)
            junk.send("baccarat/s1/T2/state", b"[" * 6000 + b"]" * 6000, retain=True)
            pit = Pit(url)
            pits.append(pit)
            pit.start(("127.0.0.1", 0), broker.url)
            host, port = pit.address
            base = f"http://{host}:{port}"
            until(counted(pit, refused_state=2, refused_status=1), 20, "the retained junk refused")
            for payload in JUNK_RECORDS:
                junk.send("baccarat/s1/T1/record", payload)
            for payload in JUNK_ALERTS:
                junk.send("baccarat/s1/floor/alert", payload)
            # ... and the genuine table after it: the pit follows it, so its callback lives
            floor.online("T1")
            floor.deal_coups("T1", 2 + restart)
            floor.alert("s1", {**ALERT, "id": 100 + restart})
            last = sim.coups[-1]

            def shown(pit: Pit = pit, last: dict[str, Any] = last, alert: int = 100 + restart) -> bool:
                snap = strict(pit.board.current()[1])
                t = next((t for t in snap["tables"] if t["table"] == "T1"), None)
                fed = any(f["id"] == alert for f in snap["feed"])
                return t is not None and t["last"] is not None and t["last"]["coup"] == last["coup"] and fed

            until(shown, 20, f"T1's tile at coup {last['coup']} and the genuine alert, after restart {restart}")
            assert pit._network is not None and pit._network.running
            until(
                counted(pit, refused_record=len(JUNK_RECORDS), refused_alert=len(JUNK_ALERTS)), 10, "all junk refused"
            )
            assert pit.stats["errors"] == 0
            with urllib.request.urlopen(base + "/api/pit", timeout=10) as r:
                snap = strict(r.read())  # the page's JSON: no NaN, nothing of the junk
            assert [t["table"] for t in snap["tables"]] == ["T1"]  # junk alone makes no tile (T2)
            tile = next(t for t in snap["tables"] if t["table"] == "T1")
            assert tile["status"] == "online" and tile["last"]["player"] == last["player"]
            assert all(f["kind"] == "advantage" and f["id"] >= 100 for f in snap["feed"])
            assert snap["refused"] == pit.stats["refused"] >= len(JUNK_RECORDS) + len(JUNK_ALERTS) + 3
            assert metric(base, 'shoe_floor_pit_refused_total{message="record"}') == len(JUNK_RECORDS)
            assert metric(base, 'shoe_floor_pit_refused_total{message="alert"}') == len(JUNK_ALERTS)
            assert metric(base, "shoe_floor_pit_errors_total") == 0
            pit.close()
    finally:
        for p in pits:
            p.close()
        floor.close()
        junk.close()


def test_an_exception_while_handling_a_message_is_counted_logged_once_a_minute_and_survived(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Whatever no check foresaw: the message's handling fails, the callback does not (paho would end its
    network thread on an exception from on_message)."""
    url = f"sqlite:///{tmp_path}/archive.db"
    Archive(url).close()
    pit = Pit(url)
    try:
        real = read_record

        def broken(payload: bytes, table: str, max_bytes: int = MAX_RECORD_BYTES) -> TableRecord:
            if b"boom" in payload:
                raise RuntimeError("boom")
            return real(payload, table, max_bytes)

        monkeypatch.setattr("floor.pit.read_record", broken)
        with caplog.at_level(logging.ERROR, logger="shoe-floor.pit"):
            for _ in range(3):
                pit.on_message("baccarat/s1/T1/record", b"boom")
        assert pit.stats["errors"] == 3
        assert len([r for r in caplog.records if "could not be handled" in r.getMessage()]) == 1
        pit.on_message("baccarat/s1/T1/record", json.dumps(RECORD).encode())
        tile = next(t for t in pit.snapshot()["tables"] if t["table"] == "T1")
        assert tile["last"]["coup"] == 4
    finally:
        pit.close()


def test_a_topic_that_is_not_utf8_is_refused_not_raised(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/archive.db"
    Archive(url).close()
    pit = Pit(url)
    try:
        # paho's callback; the client is not used, so none is made
        pit._on_mqtt_message(None, None, mqtt.MQTTMessage(topic=b"baccarat/s1/T\xff/state"))  # type: ignore[arg-type]
        assert pit.stats["refused_topic"] == 1 and pit.stats["errors"] == 0
    finally:
        pit.close()


def test_every_record_of_a_real_journal_is_taken(journal: list[TableRecord]) -> None:
    for r in journal:
        assert read_record(r.to_json().encode(), r.table).seq == r.seq


@pytest.mark.parametrize(
    ("payload", "says"),
    [
        (with_body(player=[1, 2]), "player: not a list"),
        (with_body(banker=["KC", "KC", "KC", "KC"]), "banker: not a list"),
        (with_body(winner=5), "winner"),
        (with_body(player_total=10), "player_total"),
        (with_body(shoe=-1), "shoe"),
        (with_body(declared="yes"), "declared"),
        (json.dumps({**RECORD, "table": "T2"}).encode(), "on the topic of 'T1'"),
        (json.dumps({**RECORD, "kind": "advantage", "body": {"bet": 5}}).encode(), "bet"),
        (json.dumps({**RECORD, "kind": "advantage", "body": {**ADVANTAGE, "ev": True}}).encode(), "ev"),
        (json.dumps({**RECORD, "kind": "shoe", "body": {"event": 1, "shoe": 1}}).encode(), "event"),
        (json.dumps({**RECORD, "kind": "nonsense"}).encode(), "unknown record kind"),
        (json.dumps({**RECORD, "seq": "7"}).encode(), "seq"),
        (b'{"v":2,"x":NaN}', "NaN is not a number"),
        (b"[" * 6000 + b"]" * 6000, "nested deeper than"),
        (b"9" * 5000, "not JSON"),
        (b'"\xff"', "not UTF-8"),
        (b" " * (MAX_RECORD_BYTES + 1), "-byte cap"),
        (b"[1,2]", "a record is a JSON object"),
    ],
)
def test_a_record_not_of_its_shape_is_refused_with_the_reason(payload: bytes, says: str) -> None:
    with pytest.raises(Refused, match=re.escape(says)):
        read_record(payload, "T1")


@pytest.mark.parametrize(
    ("item", "says"),
    [
        ({**ALERT, "kind": 5}, "kind"),
        ({**ALERT, "kind": "Not A Kind"}, "kind"),
        ({**ALERT, "id": "5"}, "id"),
        ({**ALERT, "table": None}, "table"),
        ({**ALERT, "at": "yesterday"}, "at"),
        ({**ALERT, "detail": ["x"]}, "detail"),
        ({**ALERT, "extra": []}, "extra"),
        ({**ALERT, "acked_by": "pam"}, "both null, or both given"),
        ({**ALERT, "acked_at": "2026-11-30T12:05:00.000Z"}, "both null, or both given"),
        ({**ALERT, "acked_by": "Pam Lee", "acked_at": "2026-11-30T12:05:00.000Z"}, "acked_by"),
        ({**ALERT, "acked_by": "p" * 40, "acked_at": "2026-11-30T12:05:00.000Z"}, "acked_by"),
        ({**ALERT, "acked_by": 7, "acked_at": "2026-11-30T12:05:00.000Z"}, "acked_by"),
        ({**ALERT, "acked_by": "pam", "acked_at": "after lunch"}, "acked_at"),
        ({**ALERT, "acked_by": "pam", "acked_at": ["2026-11-30T12:05:00.000Z"]}, "acked_at"),
    ],
)
def test_an_alert_not_of_the_feeds_shape_is_refused(item: dict[str, Any], says: str) -> None:
    with pytest.raises(Refused, match=re.escape(says)):
        read_alert(json.dumps(item).encode())


def test_an_alert_naming_a_malformed_record_is_shown_and_leaves_the_tile_alone(tmp_path: Path) -> None:
    """A conflict alert names the record that was wrong: the floor sees the alert, the tile is not changed."""
    url = f"sqlite:///{tmp_path}/archive.db"
    Archive(url).close()
    pit = Pit(url)
    try:
        pit.on_message("baccarat/s1/T1/record", json.dumps(RECORD).encode())
        wrong = {**RECORD, "body": {**RECORD["body"], "coup": 5, "player": [1, 2]}}
        pit.on_message("baccarat/s1/floor/alert", json.dumps({**ALERT, "kind": "conflict", "record": wrong}).encode())
        snap = strict(pit.board.current()[1])
        assert [f["kind"] for f in snap["feed"]] == ["conflict"] and snap["feed"][0]["record"] == wrong
        assert snap["tables"][0]["last"]["coup"] == 4 and snap["tables"][0]["last"]["player"] == ["2S", "3H"]
        # Another system's alert naming half a record: shown without it, the record dropped and counted.
        partial = {"kind": "advantage", "body": {"shoe": 7, "coup": 40, "bet": "banker", "ev": 0.021}}
        pit.on_message("baccarat/s1/floor/alert", json.dumps({**ALERT, "id": 8, "record": partial}).encode())
        snap = strict(pit.board.current()[1])
        assert (snap["feed"][0]["id"], snap["feed"][0]["record"]) == (8, None)
        assert pit.stats["alert_records_dropped"] == 1 and pit.stats["refused"] == 0
    finally:
        pit.close()


def test_an_alert_of_the_feeds_shape_is_taken_as_it_is() -> None:
    item = {**ALERT, "record": RECORD}
    assert read_alert(json.dumps(item).encode()) == (item, False)
    assert read_alert(json.dumps({**ALERT, "id": None}).encode())[0]["id"] is None
    acked = {**ALERT, "acked_by": "pam", "acked_at": "2026-11-30T12:05:00.000Z"}
    assert read_alert(json.dumps(acked).encode()) == (acked, False)
    # From a collector older than the acknowledgement: not acknowledged.
    older = {k: v for k, v in ALERT.items() if k not in ("acked_by", "acked_at")}
    assert read_alert(json.dumps(older).encode()) == (ALERT, False)


@pytest.mark.parametrize("record", [{**RECORD, "seq": "7"}, "a record", {"kind": "advantage", "body": {}}])
def test_an_alert_whose_record_is_not_a_record_is_taken_without_it(record: Any) -> None:
    """The alert is worth showing (a surveillance system's, say); the record it names is not shown."""
    assert read_alert(json.dumps({**ALERT, "record": record}).encode()) == ({**ALERT, "record": None}, True)


def test_a_status_is_online_or_offline() -> None:
    assert read_status(b"online") == "online" and read_status(b"offline") == "offline"
    with pytest.raises(Refused):
        read_status(b"maybe")
