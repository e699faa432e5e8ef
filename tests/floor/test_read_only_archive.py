"""A read-only copy of a SQLite archive, as surveillance is handed one (mode 0444 in a folder its reader may not
write): ``shoe-floor history``, ``verify`` and ``keys`` read it as they read the archive itself (they failed,
"attempt to write a readonly database"), and write nothing beside it. As a process run without the capabilities
that let root write anywhere."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from controller.game.records import TableRecord
from floor.archive import Archive
from floor_protocol.signing import key_id
from tests.console import run_script
from tests.floor.conftest import Keys, shoe_floor

pytestmark = pytest.mark.e2e

AS_PLAIN_USER = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"] if os.geteuid() == 0 else []
COMMANDS = [["history", "--json"], ["verify"], ["keys"], ["alerts"]]


def hand_over(files: list[Path], folder: Path) -> list[str]:
    folder.mkdir()
    for f in files:
        shutil.copyfile(f, folder / f.name)
        (folder / f.name).chmod(0o444)
    folder.chmod(0o555)
    return sorted(os.listdir(folder))


@pytest.mark.parametrize("as_root", [False, True], ids=["a plain user", "root"])
def test_a_read_only_copy_of_the_archive_reads(
    journal_records: list[TableRecord], keys: Keys, tmp_path: Path, as_root: bool
) -> None:
    """Read as the archive itself reads, and nothing written beside it, not even by root."""
    if as_root and os.geteuid() != 0:
        pytest.skip("not root")
    prefix = [] if as_root else AS_PLAIN_USER
    if prefix and shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: a read-only folder is writable")
    path = tmp_path / "archive.db"
    url = f"sqlite://{path}"
    keys.enroll(url, "T1")
    signed = keys.sign(journal_records[:300])
    with Archive(url) as a:
        a.store(signed, {(r.table, r.seq): key_id(keys.table("T1").public) for r in signed})
        a.advance("T1", "s1")
    handed = tmp_path / "handed"
    files = hand_over([path], handed)
    try:
        for command in COMMANDS:
            expected = shoe_floor(*command, "--archive", url)
            assert expected.returncode == 0 and expected.stdout, expected
            got = run_script(["shoe-floor", *command, "--archive", f"sqlite://{handed}/archive.db"], prefix=prefix)
            assert got.returncode == 0, (command, got.stderr)
            assert got.stdout == expected.stdout, command
        assert sorted(os.listdir(handed)) == files
    finally:
        handed.chmod(0o755)


def test_a_read_only_copy_with_wal_frames_waiting_says_how_to_hand_it_over(
    journal_records: list[TableRecord], keys: Keys, tmp_path: Path
) -> None:
    """Copied beside a running collector without its -shm: the frames in the -wal cannot be read there, and
    reading the file alone would miss them. One line saying so, exit 2."""
    if AS_PLAIN_USER and shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: a read-only folder is writable")
    path = tmp_path / "archive.db"
    url = f"sqlite://{path}"
    keys.enroll(url, "T1")
    handed = tmp_path / "handed"
    with Archive(url) as a:
        a.store(keys.sign(journal_records[:40]))
        assert os.path.getsize(f"{path}-wal") > 0
        files = hand_over([path, Path(f"{path}-wal")], handed)
    try:
        got = run_script(["shoe-floor", "history", "--archive", f"sqlite://{handed}/archive.db"], prefix=AS_PLAIN_USER)
        assert got.returncode == 2 and "Traceback" not in got.stderr
        assert got.stderr == (
            f"archive {handed}/archive.db: a read-only copy with WAL frames waiting (archive.db-wal) and no"
            " archive.db-shm: hand it over with its -shm file too, or as one file (sqlite3 archive.db '.backup COPY')\n"
        )
        assert sorted(os.listdir(handed)) == files
    finally:
        handed.chmod(0o755)
