"""The pit's server from outside: ``shoe-floor serve`` answers the pit page, its API and Prometheus ``/metrics``
on one port (a real process, a real broker, a real archive); ``shoe-floor pit`` alone; read-only; bad input
as one line; bounded tables and event streams."""

from __future__ import annotations

import json
import re
import socket
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from controller.game.records import TableRecord
from floor.archive import Archive
from floor.pit import MAX_TABLES, Pit
from tests.console import Result, run_main
from tests.floor.conftest import Keys, Table, serve_process
from tests.servers import Mosquitto, free_port
from tests.waiting import until


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


@pytest.mark.e2e
def test_serve_answers_the_pit_and_metrics_on_one_port(
    journal_records: list[TableRecord], broker: Mosquitto, table: Table, keys: Keys, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path}/archive.db"
    keys.enroll(url, "T1")
    port = free_port()
    log = tmp_path / "serve.log"
    proc = serve_process(broker, url, "floor-pit", log, "--bind", f"127.0.0.1:{port}")
    base = f"http://127.0.0.1:{port}"
    try:
        until(lambda: "subscribed" in log.read_text(), 20, "the collector to subscribe")
        table.publish(journal_records)
        table.wait_ack("T1", len(journal_records))

        def received() -> float:
            status, body = get(base + "/metrics")
            assert status == 200
            found = re.search(rb"^shoe_floor_received_total (\S+)$", body, re.M)
            assert found is not None, body[:500]
            return float(found.group(1))

        # the counters follow each batch just after its acks are out: the last batch's may lag the ack a moment
        until(lambda: received() >= len(journal_records), 10, "the metrics to count every record")
        status, page = get(base + "/")
        assert status == 200 and b'data-testid="tiles"' in page
        last = [r.body for r in journal_records if r.kind == "coup" and r.body.get("declared")][-1]

        def tile() -> dict[str, Any] | None:
            return next((t for t in json.loads(get(base + "/api/pit")[1])["tables"] if t["table"] == "T1"), None)

        # the pit takes the archive's new records a moment after the acks (on a loaded machine, a long moment)
        until(lambda: (t := tile()) is not None and t["last"] is not None and t["last"]["coup"] == last["coup"],
              10, "T1's tile at the last coup")  # fmt: skip
        shown = tile()
        assert shown is not None
        assert shown["last"]["player"] == last["player"] and shown["last"]["banker"] == last["banker"]
        status, found = get(base + f"/api/table/T1/coup?shoe={last['shoe']}&coup={last['coup']}")
        assert status == 200 and json.loads(found)["banker"] == last["banker"]
        assert get(base + "/api/table/T1/coup?shoe=1&coup=x")[0] == 400
        assert get(base + "/api/table/T1/coup?shoe=1&coup=999")[0] == 404
        assert get(base + "/api/table/nope")[0] == 404
        status, page = get(base + "/api/table/T1")
        data = json.loads(page)
        assert data["current"]["shoe"] == last["shoe"] and data["current"]["coups"][-1]["coup"] == last["coup"]
        assert data["current"]["roads"]["layout"]["big_road"]
        # Read-only.
        request = urllib.request.Request(base + "/api/pit", data=b"{}", method="POST")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 405
    finally:
        proc.terminate()
        assert proc.wait(20) == 0
    assert "Traceback" not in log.read_text()


def shoe_floor(*args: str) -> Result:
    return run_main(["shoe-floor", *args])


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["pit", "--broker", "mqtt://127.0.0.1:1", "--archive", "sqlite:///no/such/archive.db"], "no such file"),
        (["pit", "--broker", "http://x", "--archive", "sqlite:///tmp/a.db"], "mqtt://host:port"),
        (["pit", "--broker", "mqtt://h", "--archive", "sqlite:///tmp/a.db", "--bind", "h:70000"], "HOST:PORT"),
    ],
)
def test_pit_bad_input_is_one_line_and_exit_2(args: list[str], says: str) -> None:
    result = shoe_floor(*args)
    assert result.returncode == 2, result
    assert says in result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr


def test_a_port_in_use_is_one_line_and_exit_2(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/archive.db"
    Archive(url).close()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = shoe_floor("pit", "--broker", "mqtt://127.0.0.1:1", "--archive", url, "--bind", f"127.0.0.1:{port}")
    assert result.returncode == 2, result
    assert f"cannot serve on 127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.stderr


def test_tables_past_the_bound_are_counted_not_kept(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/archive.db"
    Archive(url).close()
    pit = Pit(url)
    try:
        for i in range(MAX_TABLES + 5):
            pit.on_message(f"baccarat/s1/T{i}/status", b"online")
        pit.on_message("baccarat/s1/T0/state", b"not json")
        snap = pit.snapshot()
        assert len(snap["tables"]) == MAX_TABLES
        assert snap["ignored"] == 5
        assert pit.stats["refused_state"] == 1
    finally:
        pit.close()


def test_event_streams_are_bounded_per_address(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/archive.db"
    Archive(url).close()
    pit = Pit(url, max_streams_per_address=2)
    pit.start(("127.0.0.1", 0), None)
    host, port = pit.address
    streams = []
    try:
        for _ in range(3):
            s = socket.create_connection((host, port), timeout=10)
            s.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
            assert b"data: " in _read_until(s, b"data: ")
            streams.append(s)
        until(lambda: pit.stats["streams_evicted"] == 1, 10, "the oldest stream to be evicted")
        assert len(pit._server.streams) == 2
    finally:
        for s in streams:
            s.close()
        pit.close()


def _read_until(s: socket.socket, mark: bytes) -> bytes:
    data = b""
    while mark not in data:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def test_an_alert_said_twice_is_shown_once(tmp_path: Path) -> None:
    """Alerts are published at least once (a collector's sweep sends again what the broker never confirmed):
    the pit shows an id once; alerts without an id (another system's) are all shown."""
    url = f"sqlite:///{tmp_path}/archive.db"
    Archive(url).close()
    pit = Pit(url)
    try:
        item = {"v": 1, "id": 5, "at": "2026-11-30T12:00:00.000Z", "site": "s1", "table": "T1", "seq": 9,
                "kind": "gap", "detail": "records 9..9 missing", "record": None, "extra": {}}  # fmt: skip
        for _ in range(2):
            pit._alert(json.dumps(item).encode())
        pit._alert(json.dumps({**item, "id": 6}).encode())
        for _ in range(2):
            pit._alert(json.dumps({**item, "id": None}).encode())
        assert [f["id"] for f in pit.feed] == [5, 6, None, None]
    finally:
        pit.close()
