"""``shoe-floor`` as real processes: SIGKILLed mid-stream and restarted, stopped by SIGTERM, history and verify
on both archives, bad input as one line and exit 2."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from controller.game.records import TableRecord
from floor.archive import Archive
from floor_protocol.signing import key_id
from tests.console import run_script
from tests.floor.conftest import (
    PYTHON,
    ROOT,
    Keys,
    Table,
    archived,
    archived_count,
    serve_process,
    shoe_floor,
)
from tests.servers import Mosquitto
from tests.waiting import until

pytestmark = pytest.mark.e2e


@pytest.mark.dialects
def test_a_collector_killed_mid_stream_and_restarted_archives_the_journal_record_for_record(
    journal_records: list[TableRecord], broker: Mosquitto, table: Table, keys: Keys, archive_url: str, tmp_path: Path
) -> None:
    keys.enroll(archive_url, "T1")
    log = tmp_path / "serve.log"
    proc = serve_process(broker, archive_url, "floor-a", log)
    try:
        until(lambda: "subscribed" in log.read_text(), 20, "the collector to subscribe")

        def send() -> None:
            for r in journal_records:
                table.publish([r])
                time.sleep(0.002)

        sender = threading.Thread(target=send)
        sender.start()
        until(lambda: archived_count(archive_url) >= 100, 30, "a hundred records archived")
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        sender.join(60)
        proc = serve_process(broker, archive_url, "floor-a", log)  # same session: the broker kept its messages
        table.wait_ack("T1", len(journal_records), timeout=60)
    finally:
        proc.terminate()
        proc.wait(20)
    assert archived(archive_url, "T1") == [json.loads(r.to_json()) for r in journal_records]
    assert shoe_floor("verify", "--archive", archive_url).returncode == 0  # and every signature


def test_sigterm_stops_the_collector_cleanly(broker: Mosquitto, archive_url: str, tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    proc = serve_process(broker, archive_url, "floor-b", log)
    until(lambda: "subscribed" in log.read_text(), 20, "the collector to subscribe")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(15) == 0
    assert "Traceback" not in log.read_text()
    assert "stopped" in log.read_text()


@pytest.mark.dialects
def test_history_prints_the_tables_history_fields_plus_table(
    journal_path: Path, journal_records: list[TableRecord], table: Table, archive_url: str, tmp_path: Path
) -> None:
    with Archive(archive_url) as a:
        a.store(journal_records)
    table_side = subprocess.run(
        [PYTHON, "-m", "controller.cli", "history", "--journal", str(journal_path), "--json", "--last", "5"],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )  # fmt: skip
    floor_side = shoe_floor("history", "--archive", archive_url, "--table", "T1", "--last", "5", "--json")
    assert floor_side.returncode == 0, floor_side.stderr
    expected = [{"table": "T1", **json.loads(line)} for line in table_side.stdout.splitlines()]
    got = [json.loads(line) for line in floor_side.stdout.splitlines()]
    assert got == expected
    assert [list(g) for g in got] == [list(e) for e in expected]  # the same field order
    text = shoe_floor("history", "--archive", archive_url)
    assert text.returncode == 0
    assert len(text.stdout.splitlines()) == 1 + sum(r.kind == "coup" for r in journal_records)


@pytest.mark.dialects
def test_verify_reports_each_tables_head_gaps_and_broken_links(
    journal_records: list[TableRecord], keys: Keys, archive_url: str
) -> None:
    Archive(archive_url).close()  # an empty archive
    good = shoe_floor("verify", "--archive", archive_url)
    assert good.returncode == 0 and "no records" in good.stdout
    keys.enroll(archive_url, "T1", "T2")
    t1 = keys.sign(journal_records)
    t2 = keys.sign([TableRecord.from_dict({**r.to_dict(), "table": "T2"}) for r in journal_records[:60]])
    broken = TableRecord.from_dict({**t2[30].to_dict(), "body": {**t2[30].body, "forged": 1}})
    signers = {(r.table, r.seq): key_id(keys.table(r.table).public) for r in [*t1, *t2]}
    with Archive(archive_url) as a:
        a.store(t1, signers)
        a.store([*t2[:10], *t2[20:30], broken, *t2[31:]], signers)
    result = shoe_floor("verify", "--archive", archive_url, "--json")
    assert result.returncode == 1
    reports = {r["table"]: r for r in map(json.loads, result.stdout.splitlines())}
    n = len(journal_records)
    assert reports["T1"] == {
        "table": "T1", "records": n, "head": n, "last": n, "gaps": [], "broken": [], "forged": [], "ok": True
    }  # fmt: skip
    assert reports["T2"]["gaps"] == [[11, 20]]
    assert reports["T2"]["broken"] == [31]
    assert reports["T2"]["head"] == 10
    text = shoe_floor("verify", "--archive", archive_url)
    assert "table T2: 50 records, head 10, last 60, gaps 11..20, broken links 31: PROBLEM" in text.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["serve", "--broker", "http://x", "--archive", "sqlite:///tmp/a.db"], "mqtt://host:port"),
        (["serve", "--broker", "mqtt://127.0.0.1:1", "--archive", "mysql://x"], "use sqlite:///path"),
        (["serve", "--broker", "mqtt://127.0.0.1:1", "--archive", "sqlite://relative.db"], "three slashes"),
        (["serve", "--broker", "mqtt://127.0.0.1:1", "--archive", "sqlite:///no/such/dir/a.db"], "does not exist"),
        (["serve", "--broker", "mqtt://h:99999", "--archive", "sqlite:///tmp/a.db"], "bad port"),
        (["serve", "--broker", "mqtt://h", "--archive", "sqlite:///tmp/a.db", "--bind", "nope"], "HOST:PORT"),
        (["serve", "--broker", "mqtt://h", "--archive", "sqlite:///tmp/a.db", "--share", "a/b"], "topic level"),
        (["serve", "--broker", "mqtt://h", "--archive", "sqlite:///tmp/a.db", "--refused-alerts", "0"], "between 1"),
        (["history", "--archive", "sqlite:///no/such/archive.db"], "no such file"),
        (["history", "--archive", "sqlite:///tmp/x.db", "--last", "0"], "between 1"),
        (["verify", "--archive", "postgresql://postgres@127.0.0.1:1/x"], "archive postgresql://"),
        (["verify"], "--archive"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], says: str, keys: Keys) -> None:
    # serve registers its metrics in the process's registry before it opens the archive: a process each
    key = ["--key", str(keys.floor.path)]
    result = run_script(["shoe-floor", *args, *key]) if args[0] == "serve" else shoe_floor(*args)
    assert result.returncode == 2, result
    assert says in result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr


def test_serve_says_at_once_that_the_broker_cannot_be_reached_and_keeps_trying(keys: Keys, tmp_path: Path) -> None:
    """No broker on the port: one line on the log within seconds (it said nothing for 40 s), the pit page says
    it too (it read "0 tables" and nothing else), and when a broker starts there, the collector connects."""
    import re
    import socket
    import urllib.request

    # The port held bound and not listening, so that nothing else (another test on this machine) takes it meanwhile:
    # a connection to it is refused, as to a broker that is down.
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    port = holder.getsockname()[1]
    log = tmp_path / "serve.log"
    broker = Mosquitto(tmp_path / "mosquitto", port=port)
    proc = serve_process(broker, f"sqlite://{tmp_path}/archive.db", "floor-n", log)
    line = f"cannot reach the broker mqtt://127.0.0.1:{port} (Connection refused); retrying"

    def pit() -> dict[str, object]:
        [pit_port] = re.findall(r"pit: serving http://127.0.0.1:(\d+)/", log.read_text())
        with urllib.request.urlopen(f"http://127.0.0.1:{pit_port}/api/pit", timeout=5) as answer:
            return dict(json.loads(answer.read()))

    try:
        until(lambda: line in log.read_text(), 10, "the collector to say the broker cannot be reached")
        until(lambda: pit()["broker"] == line, 10, "the pit page to say so")
        time.sleep(6)  # paho tries again every few seconds: said once, not at each attempt
        assert log.read_text().count("cannot reach the broker") == 1, log.read_text()
        holder.close()
        broker.start()
        try:
            until(lambda: "subscribed" in log.read_text(), 30, "the collector to connect once the broker is up")
            until(lambda: pit()["broker"] is None, 30, "the pit page to clear the line")
        finally:
            proc.terminate()
            proc.wait(20)
            broker.stop()
    finally:
        holder.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert f"reached the broker mqtt://127.0.0.1:{port} again" in log.read_text()
    assert "Traceback" not in log.read_text()


def test_serve_refuses_a_tables_key_as_the_floors_in_one_line(keys: Keys, tmp_path: Path) -> None:
    """A table's signing key given as ``--key``: its acks would be signed by a key a table holds. Refused before
    anything starts, naming the table whose key it is, whether current or retired (it was accepted)."""
    url = f"sqlite://{tmp_path}/archive.db"
    keys.enroll(url, "T1", "T2")
    with Archive(url) as a:
        a.enroll("T2", keys.table("T2b").public, replace=True)  # T2's first key retired, still a table's
    for table, key in (("T1", keys.table("T1")), ("T2", keys.table("T2"))):
        result = run_script(
            ["shoe-floor", "serve", "--broker", "mqtt://127.0.0.1:1", "--archive", url, "--key", str(key.path),
             "--bind", "127.0.0.1:0"], timeout=30,
        )  # fmt: skip
        assert result.returncode == 2, result
        assert result.stderr == (
            f"shoe-floor serve: --key {key.path} is table {table}'s signing key (enrolled in the archive), not the"
            " floor's: make the floor's with shoe-floor keygen --out FILE\n"
        )


def test_an_archive_failing_mid_run_is_one_line_and_exit_1(
    journal_records: list[TableRecord], broker: Mosquitto, table: Table, keys: Keys, tmp_path: Path
) -> None:
    url = f"sqlite://{tmp_path}/archive.db"
    keys.enroll(url, "T1")
    log = tmp_path / "serve.log"
    proc = serve_process(broker, url, "floor-c", log)
    try:
        until(lambda: "subscribed" in log.read_text(), 20, "the collector to subscribe")
        table.publish(journal_records[:10])
        table.wait_ack("T1", 10)
        with Archive(url) as a:  # someone drops the archive's table under the collector
            a.connection.cursor().execute("DROP TABLE records")
            a.connection.commit()
        table.publish(journal_records[10:20])
        assert proc.wait(20) == 1
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log.read_text()
    assert "Traceback" not in text
    assert [line for line in text.splitlines() if "ERROR" in line] == [
        line for line in text.splitlines() if "failed: no such table: records" in line
    ]
