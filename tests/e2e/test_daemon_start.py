"""`shoe-controller run` refuses to start on a damaged journal or a bad configuration: one line, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from controller.journal import Journal


def run_daemon(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("NOTIFY_SOCKET", None)
    return subprocess.run(
        [sys.executable, "-m", "controller.cli", "run", "--pin-factory", "mock", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )


def test_damaged_journal_refuses_to_start(tmp_path: Path) -> None:
    db = tmp_path / "journal.db"
    with Journal.open(db) as j:
        for n in range(1, 200):
            j.append({"kind": "card", "card": "TH"}, session=7, number=n)
    data = bytearray(db.read_bytes())
    data[4096 : 4096 + 512] = os.urandom(512)  # overwrite part of a page with noise
    db.write_bytes(bytes(data))
    proc = run_daemon("--port", "loop://", "--journal", str(db))
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    message = [line for line in proc.stderr.splitlines() if str(db) in line]
    assert message
    assert "damaged" in message[-1] or "not a" in message[-1]


def test_journal_that_is_not_a_database_refuses_to_start(tmp_path: Path) -> None:
    db = tmp_path / "journal.db"
    db.write_bytes(b"this is not a journal" * 100)
    proc = run_daemon("--port", "loop://", "--journal", str(db))
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert str(db) in proc.stderr.strip().splitlines()[-1]


def test_bad_config_exits_2_naming_the_key(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[gpio.pins]\nfault = 99\n")
    proc = run_daemon("--config", str(config))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
    assert "gpio.pins.fault" in proc.stderr


def test_unknown_config_key_exits_2(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[shoe]\nbaudrate = 9600\n")
    proc = run_daemon("--config", str(config))
    assert proc.returncode == 2
    assert "shoe.baudrate" in proc.stderr
    assert "Traceback" not in proc.stderr
