"""``shoe-floor serve`` against the shipped TLS broker (tests/shipped_broker.py), as systemd/shoe-floor.service
runs it: the collector and its pit view each with a user of their own, passwords from files; and its credential
options checked before anything connects (one line, exit 2)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.console import run_main
from tests.keys import key_file
from tests.shipped_broker import SecureBroker
from tests.waiting import until

ROOT = Path(__file__).resolve().parents[2]


def floor_key(tmp_path: Path) -> list[str]:
    """``--key FILE`` (the floor's signing key, tests/keys.py) if this ``serve`` takes one: it does once the
    floor's signed acks are in (issue 15, item 2)."""
    if "--key" not in run_main(["shoe-floor", "serve", "--help"]).stdout:
        return []
    return ["--key", str(key_file(tmp_path, "floor").path)]


def connected_as(log: str, user: str) -> int:
    return len(re.findall(rf"New client connected from \S+ as {re.escape(user)} ", log))


@pytest.mark.e2e
def test_serve_connects_its_collector_and_its_pit_view_each_under_its_own_user(
    sb: SecureBroker, tmp_path: Path
) -> None:
    log = tmp_path / "serve.log"
    args = [
        sys.executable, "-m", "floor.cli", "serve", "--broker", f"mqtts://127.0.0.1:{sb.password_port}",
        "--archive", f"sqlite:///{tmp_path}/archive.db", "--bind", "127.0.0.1:0",
        "--ca-file", str(sb.ca), "--client-id", "shoe-floor-floor1",
        "--username", "collector-1", "--password-file", str(sb.dir / "collector-1.password"),
        "--pit-username", "pit-1", "--pit-password-file", str(sb.dir / "pit-1.password"), *floor_key(tmp_path),
    ]  # fmt: skip
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=log.open("ab"), cwd=ROOT)
    try:
        until(lambda: "subscribed" in log.read_text() or proc.poll() is not None, 30, "the collector to subscribe")
        assert proc.poll() is None, log.read_text()
        until(lambda: connected_as(sb.broker.log(), "pit-1") == 1, 30, "the pit view to connect")
        # Both are on; had they shared a user name (one client id), the second would have ended the first.
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    broker_log, serve_log = sb.broker.log(), log.read_text()
    assert (connected_as(broker_log, "collector-1"), connected_as(broker_log, "pit-1")) == (1, 1), broker_log
    assert "already connected" not in broker_log and "not authorised" not in broker_log.lower(), broker_log
    assert "lost the broker" not in serve_log and "Traceback" not in serve_log, serve_log
    assert "-pw" not in " ".join(args)  # the passwords are in files, not on the command line (ps shows it)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--username", "collector-1"], "--username needs --pit-username"),
        (["--username", "collector-1", "--pit-username", "collector-1"], "--pit-username must differ"),
        (["--pit-password-file", "/nonexistent"], "--pit-password-file needs --pit-username"),
        (["--username", "c", "--pit-username", "p", "--pit-password-file", "/nonexistent/pit"],
         "password file /nonexistent/pit"),
    ],
)  # fmt: skip
def test_serve_refuses_a_pit_view_without_its_own_user_in_one_line(
    tmp_path: Path, extra: list[str], message: str
) -> None:
    """A pit view under the collector's user name would, on the shipped broker, end the collector's connection
    and (connecting clean) throw away its session with the records queued in it: refused before connecting."""
    result = run_main(
        ["shoe-floor", "serve", "--broker", "mqtt://127.0.0.1:1", "--archive", f"sqlite:///{tmp_path}/a.db", *extra]
    )
    assert result.returncode == 2, result
    assert message in result.stderr and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, (
        result.stderr
    )
