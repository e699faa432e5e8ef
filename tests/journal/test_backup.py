"""``shoe-controller journal backup`` (issue 18 section 2): a consistent copy while the table writes, checked
before it counts, never over a file; dated copies rotated; a copy that does not verify deleted."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from controller.journal import Journal
from controller.journal.backup import BackupError, copy_journal, rotate
from tests.console import run_main
from tests.journal.helpers import REPO, build, raw

WRITER = """
import sys, time
from controller.journal import Journal
with Journal.open(sys.argv[1]) as j:
    n = 0
    print("writing", flush=True)
    while True:
        n += 1
        j.append({"kind": "card", "card": "9S"}, session=3, number=n)
"""


def records(path: Path) -> list[tuple[int, str]]:
    with Journal.open(path, create=False, read_only=True) as j:
        return [(r.id, r.hash) for r in j.records(after=0)]


@pytest.mark.e2e
def test_a_backup_while_another_process_commits_is_a_consistent_verified_prefix(tmp_path: Path) -> None:
    live = tmp_path / "journal.db"
    build(live, 8)
    writer = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(WRITER), str(live)], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "writing"
        time.sleep(0.3)
        copies = [copy_journal(str(live), str(tmp_path / f"copy-{i}.db")) for i in range(3)]
    finally:
        writer.kill()
        writer.wait(10)
    now = records(live)
    counts = [c.records for c in copies]
    assert counts == sorted(counts) and counts[0] > 8, counts  # each copy took what was committed by then
    for copy in copies:
        copied = records(Path(copy.path))
        assert copied == now[: len(copied)]  # a prefix of the live journal, record for record, hash for hash
        assert not os.path.exists(copy.path + "-wal") and not os.path.exists(copy.path + ".partial")
        with Journal.open(copy.path, create=False, read_only=True) as j:
            assert j.verify() == []


def test_the_command_prints_the_copy_and_never_overwrites(tmp_path: Path) -> None:
    live = tmp_path / "journal.db"
    build(live, 12)  # 12 cards, 3 declares and their 3 coups
    out = tmp_path / "copy.db"
    done = run_main(["shoe-controller", "journal", "backup", "--journal", str(live), "--out", str(out)])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{live}: backed up to {out}: 18 records, {out.stat().st_size} bytes, verified"
    before = out.read_bytes()
    again = run_main(["shoe-controller", "journal", "backup", "--journal", str(live), "--out", str(out)])
    assert again.returncode == 1 and "already exists" in again.stderr and out.read_bytes() == before


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--out", "{tmp}/no/such/dir/copy.db"], "does not exist"),
        (["--dir", "{tmp}/nowhere"], "backup directory"),
        (["--out", "{tmp}/x.db", "--keep", "3"], "--keep goes with --dir"),
        (["--dir", "{tmp}", "--keep", "0"], "whole number of copies"),
    ],
)
def test_bad_destinations_are_one_line_and_exit_non_zero(tmp_path: Path, args: list[str], words: str) -> None:
    live = tmp_path / "journal.db"
    build(live)
    result = run_main(
        ["shoe-controller", "journal", "backup", "--journal", str(live), *(a.format(tmp=tmp_path) for a in args)]
    )
    assert result.returncode != 0 and words in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) <= 2


def test_a_missing_or_foreign_journal_is_one_line(tmp_path: Path) -> None:
    result = run_main(
        [
            "shoe-controller",
            "journal",
            "backup",
            "--journal",
            str(tmp_path / "none.db"),
            "--out",
            str(tmp_path / "c.db"),
        ]
    )
    assert result.returncode != 0 and "does not exist" in result.stderr and "Traceback" not in result.stderr
    (tmp_path / "notes.txt").write_text("not a journal\n")
    result = run_main(
        [
            "shoe-controller",
            "journal",
            "backup",
            "--journal",
            str(tmp_path / "notes.txt"),
            "--out",
            str(tmp_path / "c.db"),
        ]
    )
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert not (tmp_path / "c.db").exists()


def test_a_copy_of_a_tampered_journal_does_not_verify_and_is_deleted(tmp_path: Path) -> None:
    live = tmp_path / "journal.db"
    build(live, 8)
    with raw(live) as db:
        db.execute("""UPDATE records SET body = '{"card":"KH","kind":"card"}' WHERE id = 3""")
    out = tmp_path / "copy.db"
    with pytest.raises(BackupError, match="does not verify"):
        copy_journal(str(live), str(out))
    assert not out.exists() and not Path(f"{out}.partial").exists()
    result = run_main(["shoe-controller", "journal", "backup", "--journal", str(live), "--out", str(out)])
    assert result.returncode == 1 and "does not verify" in result.stderr


def test_dated_copies_keep_the_newest_and_touch_nothing_else(tmp_path: Path) -> None:
    live = tmp_path / "journal.db"
    build(live)
    backups = tmp_path / "backups"
    backups.mkdir()
    for stamp in ("20261101T031500Z", "20261102T031500Z", "20261103T031500Z"):
        (backups / f"journal-{stamp}.db").write_bytes(b"old")
    (backups / "notes.txt").write_text("keep me")
    config = tmp_path / "config.toml"
    config.write_text(f'[journal]\npath = "{live}"\n[backup]\ndir = "{backups}"\nkeep = 2\n')
    result = run_main(["shoe-controller", "journal", "backup", "--config", str(config)])
    assert result.returncode == 0, result.stderr
    names = sorted(p.name for p in backups.iterdir())
    assert names[0] == "journal-20261103T031500Z.db" and names[2] == "notes.txt" and len(names) == 3
    assert names[1].startswith("journal-2026") and names[1] > names[0]
    assert result.stdout.count("deleted the old copy") == 2
    assert rotate(str(backups), 1) == [str(backups / "journal-20261103T031500Z.db")]
