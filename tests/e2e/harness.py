"""Real processes for end-to-end tests and benchmarks: the software shoe and the daemon over a real pty.

Every process started here is killed and waited for by :meth:`Harness.close` (used as a context manager
or a pytest fixture), so no test leaves a child behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from controller.journal import Journal


class Harness:
    """A temporary table: one simulated shoe process and (re)startable daemon processes."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.link = tmp / "shoe"
        self.truth = tmp / "truth.jsonl"
        self.journal = tmp / "journal.db"
        self.sim: subprocess.Popen[bytes] | None = None
        self.daemon: subprocess.Popen[bytes] | None = None
        self.daemon_logs: list[Path] = []
        self._procs: list[subprocess.Popen[bytes]] = []

    # -- processes -----------------------------------------------------------------------------------
    def start_sim(self, *args: str, dialect: str = "binary", seed: int = 1, pace: str = "fast") -> None:
        cmd = [
            sys.executable, "-m", "hw_sim.cli", "--link", str(self.link), "--dialect", dialect,
            "--seed", str(seed), "--pace", pace, "--truth", str(self.truth), *args,
        ]  # fmt: skip
        self.sim = self._spawn(cmd, self.tmp / "sim.log")
        deadline = time.monotonic() + 15
        while not self.link.exists():
            if self.sim.poll() is not None:
                raise RuntimeError(f"shoe-sim exited: {(self.tmp / 'sim.log').read_text()}")
            if time.monotonic() > deadline:
                raise RuntimeError("shoe-sim did not create its link")
            time.sleep(0.01)

    def start_daemon(self, *args: str, dialect: str = "binary") -> subprocess.Popen[bytes]:
        """``shoe-controller run`` on the simulator's link; without a ``--config`` the scoreboard is off (the
        tests that want it pass a config binding a free port)."""
        if "--config" not in args:
            args = (*args, "--no-scoreboard")
        log = self.tmp / f"daemon-{len(self.daemon_logs)}.log"
        self.daemon_logs.append(log)
        cmd = [
            sys.executable, "-m", "controller.cli", "run", "--port", str(self.link), "--journal", str(self.journal),
            "--pin-factory", "mock", "--dialect", dialect, "--log-level", "info", *args,
        ]  # fmt: skip
        self.daemon = self._spawn(cmd, log)
        return self.daemon

    def _spawn(self, cmd: list[str], log: Path) -> subprocess.Popen[bytes]:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        env.pop("NOTIFY_SOCKET", None)
        with open(log, "wb") as fh:
            proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env)
        self._procs.append(proc)
        return proc

    def wait_daemon_log(self, text: str, timeout: float = 15.0) -> str:
        """Wait until the current daemon's log contains ``text``; return the log."""
        log = self.daemon_logs[-1]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            content = log.read_text(errors="replace")
            if text in content:
                return content
            assert self.daemon is not None
            if self.daemon.poll() is not None:
                raise RuntimeError(f"daemon exited with {self.daemon.returncode}: {content}")
            time.sleep(0.02)
        raise TimeoutError(f"{text!r} not in the daemon log: {log.read_text(errors='replace')}")

    def wait_sim(self, timeout: float = 120.0) -> int:
        assert self.sim is not None
        return self.sim.wait(timeout=timeout)

    def stop_daemon(self, sig: int = signal.SIGTERM, timeout: float = 15.0) -> int:
        assert self.daemon is not None
        self.daemon.send_signal(sig)
        return self.daemon.wait(timeout=timeout)

    def close(self) -> None:
        for proc in self._procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=10)
        self._procs.clear()

    def __enter__(self) -> Harness:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- records -------------------------------------------------------------------------------------
    def truth_events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.truth.read_text().splitlines() if line.strip()]

    def journal_inputs(self) -> list[dict[str, Any]]:
        with Journal.open(self.journal, read_only=True) as j:
            return [body for _id, body in j.inputs()]

    def journal_records(self) -> list[Any]:
        with Journal.open(self.journal, read_only=True) as j:
            return list(j.records())

    def journal_coups(self) -> list[dict[str, Any]]:
        with Journal.open(self.journal, read_only=True) as j:
            return j.coups()
