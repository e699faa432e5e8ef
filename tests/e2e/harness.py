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
from tests.floor_link.floorside import TEST_FLOOR_PUBLIC
from tests.keys import KeyFile, key_file

#: Options of ``shoe-controller run`` before the split that now belong to a companion process.
_LINK_OPTIONS = ("--floor", "--site", "--floor-key")
_BOARD_OPTIONS = ("--scoreboard",)
#: Options both the table and its link take (each verifies the floor's acks).
_BOTH_OPTIONS = ("--floor-public-key", "--table-id")


def split_companion_args(args: tuple[str, ...]) -> tuple[list[str], list[str], list[str]]:
    """``(table, link, board)`` arguments: each floor option and its value to the link, ``--scoreboard`` and
    its value to the board, the rest to the table."""
    table: list[str] = []
    link: list[str] = []
    board: list[str] = []
    items = iter(args)
    for arg in items:
        name = arg.split("=", 1)[0]
        if name in _BOTH_OPTIONS:
            value = [arg] if "=" in arg else [arg, next(items)]
            table.extend(value)
            link.extend(value)
            continue
        target = link if name in _LINK_OPTIONS else board if name in _BOARD_OPTIONS else table
        target.append(arg)
        if target is not table and "=" not in arg:
            target.append(next(items))
    return table, link, board


def _given(args: list[str], option: str) -> bool:
    return any(a == option or a.startswith(option + "=") for a in args)


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
        #: The table's companions, each its own process: the floor link (``shoe-controller link``) and the
        #: board (``shoe-controller board``); started by :meth:`start_daemon` when its arguments ask for them.
        self.link_proc: subprocess.Popen[bytes] | None = None
        self.board_proc: subprocess.Popen[bytes] | None = None
        self.companion_logs: list[Path] = []
        self._procs: list[subprocess.Popen[bytes]] = []
        #: The table's signing key (the link's ``--floor-key`` unless a test gives its own) and the floor's
        #: public key both the table and the link verify acks with (the test floor's, tests/floor_link/floorside)
        self.floor_public_key = TEST_FLOOR_PUBLIC
        self._table_key: KeyFile | None = None

    @property
    def table_key(self) -> KeyFile:
        """The table's signing key (made in the harness's directory at first use)."""
        if self._table_key is None:
            self._table_key = key_file(self.tmp, "table")
        return self._table_key

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

    def start_daemon(self, *args: str, dialect: str = "binary", board: bool = False) -> subprocess.Popen[bytes]:
        """``shoe-controller run`` (the table) on the simulator's link. The floor's options (``--floor URL``,
        ``--site``, ``--table-id``) go to the table's floor link, ``--scoreboard HOST:PORT`` (or ``board=True``,
        for a ``--config`` binding one) to its board: each its own process, started here unless running."""
        table_args, link_args, board_args = split_companion_args(args)
        if link_args and not _given(link_args, "--floor-public-key") and "--config" not in table_args:
            table_args += ["--floor-public-key", self.floor_public_key]  # the link gets it in start_link
        common: list[str] = []  # the companions read the table's configuration file too
        for i, arg in enumerate(table_args[:-1]):
            if arg == "--config":
                common = ["--config", table_args[i + 1]]
        log = self.tmp / f"daemon-{len(self.daemon_logs)}.log"
        self.daemon_logs.append(log)
        cmd = [
            sys.executable, "-m", "controller.cli", "run", "--port", str(self.link), "--journal", str(self.journal),
            "--pin-factory", "mock", "--dialect", dialect, "--log-level", "info", *table_args,
        ]  # fmt: skip
        self.daemon = self._spawn(cmd, log)
        if link_args and (self.link_proc is None or self.link_proc.poll() is not None):
            self.start_link(*common, *link_args)
        if (board or board_args) and (self.board_proc is None or self.board_proc.poll() is not None):
            self.start_board(*common, *board_args)
        return self.daemon

    def start_link(self, *args: str) -> subprocess.Popen[bytes]:
        """``shoe-controller link`` for this table: its journal read-only, the floor, the metrics. Its keys are
        the harness's (:attr:`table_key`, :attr:`floor_public_key`) unless the arguments (or a --config) name them."""
        args_list = list(args)
        if "--floor" in args_list and "--config" not in args_list:
            if not _given(args_list, "--floor-key"):
                args_list += ["--floor-key", str(self.table_key.path)]
            if not _given(args_list, "--floor-public-key"):
                args_list += ["--floor-public-key", self.floor_public_key]
        args = tuple(args_list)
        log = self.tmp / f"link-{len(self.companion_logs)}.log"
        self.companion_logs.append(log)
        cmd = [
            sys.executable, "-m", "controller.cli", "link", "--journal", str(self.journal), "--log-level", "info",
            *args,
        ]  # fmt: skip
        self.link_proc = self._spawn(cmd, log)
        return self.link_proc

    def start_board(self, *args: str) -> subprocess.Popen[bytes]:
        """``shoe-controller board`` for this table: the scoreboard, fed by the table's feed."""
        log = self.tmp / f"board-{len(self.companion_logs)}.log"
        self.companion_logs.append(log)
        cmd = [
            sys.executable, "-m", "controller.cli", "board", "--journal", str(self.journal), "--log-level", "info",
            *args,
        ]  # fmt: skip
        self.board_proc = self._spawn(cmd, log)
        return self.board_proc

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
