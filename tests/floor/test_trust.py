"""Trust on the floor (issue 15), the floor's side, against a real Mosquitto and both archives: only records
signed by a table's enrolled key are archived (forged history, unenrolled tables, rotation, revocation),
every ack is signed by the floor key and names the archive's id, ``shoe-floor verify`` checks every
signature, and the archive's file is the one the collector opened."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import floor.collector as collector_module
from controller.game.records import TableRecord, canonical_json, record_hash
from floor.archive import Alert, AlertKind, Archive
from floor.archive.schema import columns
from floor_protocol.signing import KeyStatement, generate_key, key_id, parse_public_key, record_message, sign
from tests.console import run_script
from tests.floor.conftest import ROOT, AlertWatch, InProcess, Keys, Table, serve_process, shoe_floor, signed
from tests.keys import key_file
from tests.servers import Mosquitto
from tests.waiting import until


def invented(after: TableRecord, n: int, sig: Callable[[TableRecord], str | None]) -> list[TableRecord]:
    """``n`` coups after ``after`` that anyone can compute: valid sha256 links, each ``sig`` as given."""
    out, prev = [], after
    for i in range(1, n + 1):
        seq = after.seq + i
        body = {"shoe": 1, "coup": 900 + i, "winner": "banker", "player": ["2H", "3D"], "banker": ["9S", "KH"]}
        at = after.at
        own = record_hash(prev.hash, seq, at, "coup", None, None, None, canonical_json(body))
        r = TableRecord(after.table, seq, "coup", at, None, None, None, body, prev.hash, own)
        out.append(TableRecord.from_dict({**r.to_dict(), "sig": sig(r)}) if sig(r) is not None else r)
        prev = r
    return out


def kinds(url: str, table: str | None = None) -> list[str]:
    """The alerts' kinds, but the journal's clock (the test machine's: tests/floor/test_surveillance.py)."""
    with Archive(url, create=False) as a:
        return [x.kind for x in a.alerts(table) if x.kind != AlertKind.CLOCK_UNSYNCHRONISED]


def archived_sigs(url: str, table: str) -> list[tuple[int, str, str | None]]:
    with Archive(url, create=False) as a:
        return [(r.seq, r.hash, r.sig) for r in a.records(table)]


@pytest.mark.e2e
def test_forged_history_is_not_archived_and_the_ack_does_not_move_over_it(
    journal_records: list[TableRecord], table: Table, keys: Keys, collector: Callable[..., InProcess], archive_url: str
) -> None:
    # The attack of the issue: 20 invented coups with valid links (10 unsigned, 10 signed by another key),
    # published on T1's topic before T1's genuine records with the same seqs.
    c = collector(refused_window=0.5)
    genuine = keys.sign(journal_records[:60])
    table.publish(genuine[:30])
    table.wait_ack("T1", 30)
    intruder = generate_key()
    forged = invented(
        genuine[29], 20, lambda r: None if r.seq % 2 else sign(intruder, record_message("T1", r.seq, r.hash))
    )
    table.publish(forged, sign=False)
    until(lambda: c.collector.stats.refused >= 20, 15, "the forged coups to be refused")
    assert table.ack("T1") == 30
    table.publish(genuine[30:])
    table.wait_ack("T1", 60)
    assert archived_sigs(archive_url, "T1") == [(r.seq, r.hash, r.sig) for r in genuine]
    until(lambda: kinds(archive_url, "T1").count(AlertKind.FORGED) >= 6, 10, "the forged alerts and their summary")
    with Archive(archive_url, create=False) as a:
        found = [x for x in a.alerts("T1") if x.kind == AlertKind.FORGED]
        assert {x.seq for x in found if x.seq is not None} <= {r.seq for r in forged}
        assert any("no signature" in x.detail for x in found) and any("does not verify" in x.detail for x in found)
        assert sum(int(x.extra.get("held_back", 1)) for x in found) == 20  # each one said or counted
        assert AlertKind.CONFLICT not in [x.kind for x in a.alerts("T1")]  # the genuine ones are no conflict
        assert a.head("T1").hash == genuine[-1].hash
    # every ack the table heard names a genuine record, never a forged one
    by_seq = {r.seq: r.hash for r in genuine}
    assert all(ack.hash == by_seq[ack.seq] for ack in table.verified_acks(keys.floor.public))
    assert shoe_floor("verify", "--archive", archive_url).returncode == 0


@pytest.mark.e2e
def test_an_unenrolled_table_is_refused_until_it_is_enrolled_without_a_restart(
    journal_records: list[TableRecord], table: Table, keys: Keys, collector: Callable[..., InProcess], archive_url: str
) -> None:
    c = collector()
    t3 = keys.sign([TableRecord.from_dict({**r.to_dict(), "table": "T3"}) for r in journal_records[:20]])
    table.publish(t3)
    until(lambda: c.collector.stats.refused >= 20, 15, "T3's records to be refused")
    until(lambda: AlertKind.FORGED in kinds(archive_url, "T3"), 10, "T3's forged alerts")  # stored after counting
    with Archive(archive_url, create=False) as a:
        assert list(a.records("T3")) == []
        forged = [x for x in a.alerts("T3") if x.kind == AlertKind.FORGED]
        assert forged and all("no key enrolled" in x.detail for x in forged)
    assert table.ack("T3") == 0
    done = shoe_floor("enroll", "--archive", archive_url, "--table", "T3", "--public-key", keys.table("T3").public)
    assert done.returncode == 0, done.stderr
    assert "key_enrolled" in done.stdout
    # The table sends again until it hears its ack (as its link does); the collector reads T3's keys again at
    # the first failure KEY_REFRESH after the last read: no restart.

    def sent_and_acked() -> bool:
        table.publish(t3)
        return table.ack("T3") >= 20

    until(sent_and_acked, 20, "T3's ack", every=1.0)
    assert [s for s, _h, _sig in archived_sigs(archive_url, "T3")] == list(range(1, 21))


@pytest.mark.e2e
def test_a_flood_naming_a_new_table_in_every_message_reads_keys_within_a_budget_and_known_tables_go_on(
    journal_records: list[TableRecord],
    table: Table,
    keys: Keys,
    collector: Callable[..., InProcess],
    archive_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(collector_module, "KEY_READS_PER_S", 3)
    monkeypatch.setattr(collector_module, "KEY_TTL", 0.2)
    c = collector(refused_window=0.5)
    genuine = keys.sign(journal_records[:60])
    table.publish(genuine[:10])
    table.wait_ack("T1", 10)
    time.sleep(0.3)  # T1's keys are past KEY_TTL: due to be read again, in the middle of the flood
    flood = [TableRecord.from_dict({**r.to_dict(), "table": f"X{i}"}) for i, r in enumerate(journal_records[:300])]
    table.publish([x for pair in zip(flood[:50], genuine[10:], strict=True) for x in pair] + flood[50:], sign=False)
    table.wait_ack("T1", 60)
    until(lambda: c.collector.stats.refused >= 300, 15, "the flood to be refused")
    with Archive(archive_url, create=False) as a:
        assert a.tables() == ["T1"]
        until(lambda: sum(int(x.extra.get("held_back", 1)) for x in a.alerts() if x.kind == AlertKind.FORGED) == 300,
              10, "every flooded message said or counted")  # fmt: skip
        said = [x.detail for x in a.alerts() if x.kind == AlertKind.FORGED]
    assert any("too many unknown tables" in d for d in said)  # past the budget: refused without a read
    assert len(c.collector._keys) < 300


@pytest.mark.dialects
@pytest.mark.e2e
def test_a_key_rotates_with_a_statement_signed_by_the_old_one_and_not_without(
    journal_records: list[TableRecord],
    table: Table,
    keys: Keys,
    collector: Callable[..., InProcess],
    archive_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(collector_module, "KEY_TTL", 0.3)  # a change of keys takes effect within 0.3 s
    c = collector()
    old, new = keys.table("T1"), key_file(tmp_path, "t1-new")
    records = journal_records[:60]
    table.publish(signed(records[:20], old))
    table.wait_ack("T1", 20)
    base = ["enroll", "--archive", archive_url, "--table", "T1", "--public-key", new.public]
    refused = shoe_floor(*base)
    assert refused.returncode == 2 and len(refused.stderr.splitlines()) == 1
    assert "--statement" in refused.stderr
    self_signed = tmp_path / "self.json"
    self_signed.write_text(KeyStatement.make(new.key, "T1", new.public).to_json())
    refused = shoe_floor(*base, "--statement", str(self_signed))
    assert refused.returncode == 2 and "not signed by the current key" in refused.stderr
    with Archive(archive_url, create=False) as a:
        assert [k.key_id for k in a.table_keys("T1") if k.current] == [key_id(old.public)]
    statement = tmp_path / "rotate.json"
    statement.write_text(KeyStatement.make(old.key, "T1", new.public).to_json())
    rotated = shoe_floor(*base, "--statement", str(statement))
    assert rotated.returncode == 0, rotated.stderr
    time.sleep(0.5)  # KEY_TTL
    table.publish(signed(records[20:40], new))
    table.wait_ack("T1", 40)
    table.publish(signed(records[40:50], old))  # the retired key: no longer admitted
    until(lambda: c.collector.stats.refused >= 10, 15, "the retired key's records to be refused")
    until(lambda: kinds(archive_url, "T1").count(AlertKind.FORGED) == 5, 10, "the forged alerts (stored after)")
    assert table.ack("T1") == 40
    with Archive(archive_url, create=False) as a:
        assert [(k.key_id, k.status()) for k in a.table_keys("T1")] == [
            (key_id(old.public), "retired"),
            (key_id(new.public), "current"),
        ]
        assert [x.kind for x in a.alerts("T1")][:2] == [AlertKind.KEY_ENROLLED, AlertKind.KEY_ROTATED]
        assert [x.seq for x in a.alerts("T1") if x.kind == AlertKind.FORGED] == list(range(41, 46))
    # the records signed by the retired key keep verifying against it
    verify = shoe_floor("verify", "--archive", archive_url, "--table", "T1")
    assert verify.returncode == 0, verify.stdout
    assert "40 records, 1 tables, 0 bad" in verify.stdout


@pytest.mark.dialects
@pytest.mark.e2e
def test_a_revoked_key_stops_admission_until_the_operator_replaces_it(
    journal_records: list[TableRecord],
    table: Table,
    keys: Keys,
    collector: Callable[..., InProcess],
    archive_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(collector_module, "KEY_TTL", 0.3)
    c = collector()
    stolen, fresh = keys.table("T1"), key_file(tmp_path, "t1-fresh")
    records = journal_records[:40]
    table.publish(signed(records[:10], stolen))
    table.wait_ack("T1", 10)
    revoked = shoe_floor("enroll", "--archive", archive_url, "--table", "T1", "--revoke")
    assert revoked.returncode == 0, revoked.stderr
    time.sleep(0.5)  # KEY_TTL
    table.publish(signed(records[10:20], stolen))
    until(lambda: c.collector.stats.refused >= 10, 15, "the revoked key's records to be refused")
    assert table.ack("T1") == 10
    again = shoe_floor("enroll", "--archive", archive_url, "--table", "T1", "--public-key", fresh.public)
    assert again.returncode == 2 and "--replace" in again.stderr and len(again.stderr.splitlines()) == 1
    replaced = shoe_floor(
        "enroll", "--archive", archive_url, "--table", "T1", "--public-key", fresh.public, "--replace"
    )
    assert replaced.returncode == 0, replaced.stderr
    time.sleep(0.5)  # KEY_TTL
    table.publish(signed(records[10:], fresh))
    table.wait_ack("T1", 40)
    with Archive(archive_url, create=False) as a:
        feed = [x for x in a.alerts("T1") if x.kind != AlertKind.FORGED]
        assert [x.kind for x in feed] == [AlertKind.KEY_ENROLLED, AlertKind.KEY_REVOKED, AlertKind.KEY_REPLACED]
        assert all("revoked" in x.detail for x in a.alerts("T1") if x.kind == AlertKind.FORGED)
        assert [k.status() for k in a.table_keys("T1")] == ["revoked", "current"]
    assert shoe_floor("enroll", "--archive", archive_url, "--table", "T9", "--revoke").returncode == 2


@pytest.mark.dialects
@pytest.mark.e2e
def test_acks_are_signed_by_the_floor_and_a_second_archive_signs_with_its_own_id(
    journal_records: list[TableRecord],
    broker: Mosquitto,
    table: Table,
    keys: Keys,
    collector: Callable[..., InProcess],
    archive_url: str,
    tmp_path: Path,
) -> None:
    # The second serve with its own archive (another share group): its acks name its own archive, so
    # a table knows them for what they are (the table half refuses or resends on them).
    c = collector()
    other_url = f"sqlite:///{tmp_path}/other.db"
    keys.enroll(other_url, "T1")
    other = InProcess(broker, other_url, keys, share="another-group")
    try:
        records = journal_records[:50]
        table.publish(records)
        table.wait_ack("T1", 50)
        both = {c.archive.archive_id, other.archive.archive_id}
        until(lambda: {a.archive for a in table.signed_acks if a.seq == 50} == both, 15, "both archives' acks")
    finally:
        other.stop()
    assert c.archive.archive_id != other.archive.archive_id
    acks = table.verified_acks(keys.floor.public)  # every one verifies with the floor's key
    assert acks and not table.bad_acks
    by_seq = {r.seq: r.hash for r in records}
    assert all(a.table == "T1" and a.hash == by_seq[a.seq] for a in acks)
    assert all(a.seq > 0 for a in acks)  # seq 0 (nothing yet) is never published
    stranger = parse_public_key(key_file(tmp_path, "stranger").public)
    assert not any(a.verify(stranger) for a in acks)
    with Archive(archive_url) as a:
        assert a.archive_id == c.archive.archive_id  # the id is made once and kept


@pytest.mark.dialects
def test_verify_finds_an_altered_body_a_bad_signature_and_a_key_not_the_tables(
    journal_records: list[TableRecord], keys: Keys, archive_url: str
) -> None:
    keys.enroll(archive_url, "T1", "T2")
    t1 = keys.sign(journal_records[:30])
    with Archive(archive_url) as a:
        a.store(t1, {(r.table, r.seq): key_id(keys.table("T1").public) for r in t1})
    good = shoe_floor("verify", "--archive", archive_url)
    assert good.returncode == 0, good.stdout
    assert good.stdout.splitlines()[-1].endswith(": 30 records, 1 tables, 0 bad")
    other = sign(generate_key(), record_message("T1", 9, t1[8].hash))
    with Archive(archive_url) as a:
        cur = a.connection.cursor()
        body = canonical_json({**t1[4].body, "altered": True})
        cur.execute(a.sql('UPDATE records SET body = {json} WHERE "table" = ? AND seq = ?'), (body, "T1", 5))
        cur.execute(a.sql('UPDATE records SET sig = ? WHERE "table" = ? AND seq = ?'), (other, "T1", 9))
        t2_key = key_id(keys.table("T2").public)
        cur.execute(a.sql('UPDATE records SET key_id = ? WHERE "table" = ? AND seq = ?'), (t2_key, "T1", 12))
        cur.execute(a.sql('UPDATE records SET sig = NULL WHERE "table" = ? AND seq = ?'), ("T1", 20))
        a.connection.commit()
    bad = shoe_floor("verify", "--archive", archive_url)
    assert bad.returncode == 1
    lines = bad.stdout.splitlines()
    assert "table T1 seq 5: broken: its fields do not hash to its hash" in lines
    assert f"table T1 seq 9: forged: the signature does not verify with key {key_id(keys.table('T1').public)}" in lines
    assert f"table T1 seq 12: forged: signed by key {t2_key}, not a key enrolled for table T1" in lines
    assert "table T1 seq 20: forged: no signature" in lines
    assert lines[-1].endswith(": 30 records, 1 tables, 4 bad")
    report = json.loads(shoe_floor("verify", "--archive", archive_url, "--json").stdout)
    assert (report["broken"], report["forged"], report["head"], report["ok"]) == ([5], [9, 12, 20], 4, False)


def test_keygen_writes_a_private_key_0600_and_prints_its_public_key(tmp_path: Path) -> None:
    out = tmp_path / "floor.key"
    done = shoe_floor("keygen", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    public = done.stdout.strip()
    assert public.startswith("ed25519:") and parse_public_key(public)
    again = shoe_floor("keygen", "--out", str(out))
    assert again.returncode == 2 and "already exists" in again.stderr and len(again.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--table", "T1"], "--public-key"),
        (["--table", "T1", "--public-key", "ed25519:!!!!"], "base64"),
        (["--table", "T1", "--revoke", "--public-key", "ed25519:x"], "no --public-key"),
        (["--table", "T1", "--public-key", "PUB", "--statement", "/no/such/file"], "No such file"),
        (["--table", "T1", "--public-key", "PUB", "--replace"], "no key to replace"),
        (["--table", "T1", "--public-key", "PUB", "--statement", "/dev/null"], "JSON"),
    ],
)
def test_enroll_refuses_bad_input_in_one_line(args: list[str], says: str, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/archive.db"
    Archive(url).close()
    public = key_file(tmp_path, "k").public
    done = shoe_floor("enroll", "--archive", url, *[public if a == "PUB" else a for a in args])
    assert done.returncode == 2, done
    assert says in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr


def test_a_bad_key_on_a_new_archive_makes_no_archive(tmp_path: Path) -> None:
    """enroll makes a new archive (docs/floor.md, Running it), but not for a key it then refuses."""
    done = shoe_floor("enroll", "--archive", f"sqlite:///{tmp_path}/archive.db", "--table", "T1", "--public-key", "x")
    assert done.returncode == 2 and done.stderr.startswith("shoe-floor enroll: --public-key: "), done.stderr
    assert not (tmp_path / "archive.db").exists()


def test_another_tables_key_is_refused(tmp_path: Path) -> None:
    """One key file copied to a second table would let either table's holder sign as the other."""
    url = f"sqlite:///{tmp_path}/archive.db"
    public = key_file(tmp_path, "k").public
    assert shoe_floor("enroll", "--archive", url, "--table", "T1", "--public-key", public).returncode == 0
    done = shoe_floor("enroll", "--archive", url, "--table", "T2", "--public-key", public)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        f"shoe-floor enroll: key {key_id(public)} is table T1's: each table has a key of its own"
        " (shoe-controller keygen on the table)\n"
    )
    with Archive(url, create=False) as a:
        assert [k.table for k in a.table_keys()] == ["T1"]


def test_a_key_enrolled_twice_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/archive.db"
    Archive(url).close()
    public = key_file(tmp_path, "k").public
    assert shoe_floor("enroll", "--archive", url, "--table", "T1", "--public-key", public).returncode == 0
    twice = shoe_floor("enroll", "--archive", url, "--table", "T1", "--public-key", public, "--replace")
    assert twice.returncode == 2 and "already enrolled (current)" in twice.stderr


@pytest.mark.parametrize("key", [None, "missing", "garbage"])
@pytest.mark.e2e
def test_serve_refuses_to_start_without_a_floor_key(key: str | None, broker: Mosquitto, tmp_path: Path) -> None:
    args = ["serve", "--broker", broker.url, "--archive", f"sqlite:///{tmp_path}/a.db", "--bind", "127.0.0.1:0"]
    if key == "missing":
        args += ["--key", str(tmp_path / "no.key")]
    elif key == "garbage":
        (tmp_path / "bad.key").write_text("not a key\n")
        args += ["--key", str(tmp_path / "bad.key")]
    done = run_script(["shoe-floor", *args])
    assert done.returncode == 2, done
    assert len(done.stderr.splitlines()) == 1 and "--key" in done.stderr, done.stderr
    assert not (tmp_path / "a.db").exists()  # nothing opened


# -- durability ----------------------------------------------------------------------------------------------
def test_the_sqlite_archive_commits_with_synchronous_full(tmp_path: Path) -> None:
    with Archive(f"sqlite:///{tmp_path}/a.db") as a:
        assert a.connection.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert a.connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


_STORE_EACH = """
import os, sys
from floor.archive import Archive
from controller.game.records import TableRecord
records = [TableRecord.from_json(line) for line in open(sys.argv[2])]
with Archive(sys.argv[1]) as archive:
    for r in records:
        archive.store([r])
        try:
            os.stat(f"/nonexistent-mark-stored-{r.seq}")  # a marker in the trace: this store has returned
        except OSError:
            pass
"""


@pytest.mark.e2e
def test_every_sqlite_commit_is_on_the_disk_before_the_store_returns(
    journal_records: list[TableRecord], tmp_path: Path
) -> None:
    # What a power cut takes is what the kernel had not written: with synchronous=FULL SQLite syncs the WAL
    # (fdatasync) inside every commit, before Archive.store returns and so before the collector acks; with
    # NORMAL it syncs only at checkpoints. The real process's system calls, traced (strace), say which.
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed (apt-get install strace)")
    records = tmp_path / "records.jsonl"
    records.write_text("".join(r.to_json() + "\n" for r in journal_records[:5]))
    trace = tmp_path / "trace.txt"
    done = subprocess.run(
        ["strace", "-f", "-qq", "-y", "-e", "trace=fsync,fdatasync,newfstatat,stat", "-o", str(trace),
         sys.executable, "-c", _STORE_EACH, f"sqlite:///{tmp_path}/a.db", str(records)],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    if done.returncode != 0 and "ptrace" in done.stderr:
        pytest.skip(f"strace cannot trace here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    events = []
    for line in trace.read_text().splitlines():
        if "nonexistent-mark-stored-" in line:
            events.append("stored")
        elif ("fdatasync(" in line or "fsync(" in line) and "a.db-wal>" in line:
            events.append("sync")
    stores = [i for i, e in enumerate(events) if e == "stored"]
    assert len(stores) == 5
    for before, after in zip([-1, *stores], stores, strict=False):
        assert "sync" in events[before + 1 : after], f"a store returned with its WAL not synced: {events}"


@pytest.mark.parametrize("how", ["deleted", "replaced"])
@pytest.mark.e2e
def test_an_archive_file_deleted_or_replaced_under_serve_stops_it_and_acks_nothing_more(
    how: str, journal_records: list[TableRecord], broker: Mosquitto, table: Table, keys: Keys, tmp_path: Path
) -> None:
    path = tmp_path / "archive.db"
    url = f"sqlite:///{path}"
    keys.enroll(url, "T1")
    watch = AlertWatch(broker)
    log = tmp_path / "serve.log"
    proc = serve_process(broker, url, "floor-lost", log, "--site", "s1")
    try:
        until(lambda: "subscribed" in log.read_text(), 30, "the collector to subscribe")
        with Archive(url, create=False) as a:
            assert f"id {a.archive_id}" in log.read_text()
        table.publish(journal_records[:20])
        table.wait_ack("T1", 20)
        if how == "replaced":  # another file put in its place, at once (a restore from an old copy, say)
            other = sqlite3.connect(tmp_path / "other.db")
            other.execute("CREATE TABLE t (x)")
            other.commit()
            other.close()
            os.replace(tmp_path / "other.db", path)
        for suffix in ("-wal", "-shm") if how == "replaced" else ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        assert proc.wait(20) == 1
        table.publish(journal_records[20:40])  # nobody acks these from a file that is not the archive
        until(lambda: watch.alerts(), 10, "the archive_lost alert")
        watch_alerts = watch.alerts()
    finally:
        watch.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert table.ack("T1") == 20
    text = log.read_text()
    assert "Traceback" not in text
    errors = [line for line in text.splitlines() if "ERROR" in line]
    assert any(f"was {how}" in line and "nothing more is stored or acked" in line for line in errors), text
    assert [a["kind"] for a in watch_alerts] == [AlertKind.ARCHIVE_LOST]
    assert how in str(watch_alerts[0]["detail"])
    assert watch_alerts[0]["id"] is None and watch_alerts[0]["site"] == "s1"  # in no feed: no id


def test_an_archive_of_an_older_version_gains_an_id_keys_and_signature_columns(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/old.db"
    Archive(url).close()
    conn = sqlite3.connect(tmp_path / "old.db")
    for column in ("sig", "key_id"):
        conn.execute(f"ALTER TABLE records DROP COLUMN {column}")
    conn.execute("DROP TABLE archive_meta")
    conn.execute("DROP TABLE table_keys")
    conn.commit()
    conn.close()
    old = shoe_floor("verify", "--archive", url)
    assert old.returncode == 2 and "run `shoe-floor serve` on it once" in old.stderr
    with Archive(url) as a:  # what serve opens it with
        first = a.archive_id
        a.alert([Alert("T1", None, AlertKind.GAP, "just to write")])
    with Archive(url, create=False) as a:
        assert a.archive_id == first
        assert {"sig", "key_id"} <= columns(a.connection.cursor(), "records")
