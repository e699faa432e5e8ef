"""The demo table (``shoe-controller demo``): the software shoe on a pseudo-terminal (with ``--players``, its
players on a simulated bet-spot reader beside it), the table process with mock GPIO pins, and the board as a
process of its own; the table shown live in the terminal until interrupted or the shoes are dealt. The
options are :mod:`controller.commands.demo`'s, checked there before :func:`run` is called."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from commandline import UsageError
from commandline.signals import STOP_SIGNALS, raise_system_exit, stop_deferred
from controller.config import SpotsSection, default_settings
from controller.displays.wording import money

#: The demo table's dealer screen unless --dealer says otherwise.
DEFAULT_DEALER = "127.0.0.1:8081"


def run(args: argparse.Namespace) -> int:
    """Deal ``args.shoes`` shoes at the demo table; 0 when dealt or interrupted, 1 when the table cannot run."""
    from controller.journal import JournalError
    from controller.table.daemon import Daemon
    from controller.table.panel import PanelError
    from controller.table.terminal import TerminalDisplay

    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(2), "big")
    with tempfile.TemporaryDirectory(prefix="shoe-demo-") as tmp:
        link = Path(tmp) / "shoe"
        journal = Path(args.journal) if args.journal else Path(tmp) / "journal.db"
        sim_cmd = [
            sys.executable,
            "-m",
            "hw_sim.cli",
            "--link",
            str(link),
            "--dialect",
            args.dialect,
            "--decks",
            str(args.decks),
            "--seed",
            str(seed),
            "--shoes",
            str(args.shoes),
            "--pace",
            args.pace,
            "--truth",
            str(Path(tmp) / "truth.jsonl"),
        ]
        for fault in args.fault:
            sim_cmd += ["--fault", fault]
        spots = Path(tmp) / "spots"
        chips = Path(tmp) / "chips.toml"
        if args.players:
            seats = max(args.players, 7)
            sim_cmd += ["--players", str(args.players), "--seats", str(seats), "--spots-link", str(spots)]
            sim_cmd += ["--chips-out", str(chips)]
            # the players' cash buy-ins, entered on the table's money.sock (by the journal) as the dealer screen does
            sim_cmd += ["--buy-ins", str(journal.parent / "money.sock")]
        # SIGTERM or SIGHUP from here on runs the finally below, which stops the simulator: before the daemon
        # puts its own handler in place (and after it restores this one), the default would kill the demo
        # outright and leave the simulator waiting for a controller forever.
        previous = {sig: signal.signal(sig, raise_system_exit) for sig in STOP_SIGNALS}
        sim: subprocess.Popen[str] | None = None
        board: BoardChild | None = None
        try:
            with stop_deferred():  # a child started is a child named: the finally below stops it
                sim = subprocess.Popen(sim_cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 10
            while not link.exists() or (args.players and not (spots.exists() and chips.exists())):
                if sim.poll() is not None:
                    raise UsageError(f"shoe-controller demo: the simulator failed: {sim.stderr.read().strip()}")  # type: ignore[union-attr]
                if time.monotonic() > deadline:
                    raise UsageError("shoe-controller demo: the simulator did not create its port in 10 s")
                time.sleep(0.02)
            settings = default_settings().with_overrides(
                port=str(link), dialect=args.dialect, journal=str(journal), pin_factory="mock"
            )
            # The ASCII dialect has no buttons: the demo declares each coup itself.
            settings = settings.with_table(decks=args.decks, auto_declare=True if args.dialect == "ascii" else None)
            settings = settings.with_scoreboard(bind=args.scoreboard, reveal=args.reveal)
            # A PC's clock is not a table's: the demo journals no clock record (nor warns of it).
            service = settings.service.model_copy(update={"clock_check": False})
            settings = settings.model_copy(update={"service": service})
            if args.players:
                reader = {"port": str(spots), "chips": str(chips), "seats": max(args.players, 7)}
                settings = settings.model_copy(update={"spots": SpotsSection.model_validate(reader)})
            footer = f"seed {seed} · {args.dialect} dialect · journal {journal} · Ctrl-C to stop"
            display = TerminalDisplay(footer=footer)
            logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")

            dealer = args.dealer if args.dealer is not None else DEFAULT_DEALER
            with stop_deferred():
                board = BoardChild(journal, args.scoreboard, dealer if args.players else "")

            def show_scoreboard(d: Daemon) -> None:
                where = board.wait_address()
                if not where.startswith("scoreboard off"):
                    where += f" ({args.reveal})"
                if args.players:
                    where += f" · {board.dealer_address()}"
                display.footer = f"{where} · {footer}"
                print(f"demo: {where}", flush=True)

            daemon = Daemon(settings, extra_sinks=[display], on_ready=show_scoreboard)

            running = sim

            def stop_when_dealt() -> None:
                running.wait()
                time.sleep(1.0)  # let the last frames through
                if board is not None:  # first the board, or it warns that the table's feed ended
                    board.close()
                daemon.stop()

            threading.Thread(target=stop_when_dealt, name="demo-watch", daemon=True).start()
            try:
                with contextlib.suppress(KeyboardInterrupt):
                    daemon.run()
            except (JournalError, PanelError) as exc:
                print(f"shoe-controller demo: {exc}", file=sys.stderr)
                return 1
            print(f"demo: {display.coups} coups dealt; {display.last_line}")
            if args.players:
                house = -display.net_cents
                sign = "+" if house >= 0 else "-"
                print(f"demo: {display.settled} wagers settled; the house {sign}{money(abs(house))}")
        finally:
            if board is not None:
                board.close()
            if sim is not None and sim.poll() is None:
                sim.terminate()
                try:
                    sim.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    sim.kill()
                    sim.wait()
            for stream in () if sim is None else (sim.stdout, sim.stderr):
                if stream is not None:
                    stream.close()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    return 0


class BoardChild:
    """``shoe-controller board`` as a child of the demo: the scoreboard's own process, as in a casino, fed by
    the demo table's feed (its sockets beside the journal). Started with the table; stopped with the demo."""

    def __init__(self, journal: Path, bind: str, dealer: str = "") -> None:
        cmd = [sys.executable, "-m", "controller.cli", "board", "--journal", str(journal), "--scoreboard", bind]
        cmd += ["--dealer", dealer, "--log-level", "info"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self._said: list[str] = []
        self._heard = threading.Event()
        self._reader = threading.Thread(target=self._read, name="demo-board-log", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            if "board on http://" in line or "shoe-controller:" in line:
                self._said.append(line.strip())
                self._heard.set()
            elif "dealer screen on http://" in line or "dealer screen: cannot bind" in line:
                self._said.append(line.strip())
            elif "WARNING" in line or "ERROR" in line:
                print(line.rstrip(), file=sys.stderr)
        self._heard.set()

    def wait_address(self, timeout: float = 10.0) -> str:
        """``scoreboard http://host:port/``, or why the board is off."""
        self._heard.wait(timeout)
        for line in self._said:
            if "board on http://" in line:
                url = line.split("board on ", 1)[1].split(",", 1)[0]
                return f"scoreboard {url}"
            if "shoe-controller:" in line:
                return f"scoreboard off: {line.split('shoe-controller: ', 1)[1]}"
        return "scoreboard off: the board process did not start"

    def dealer_address(self) -> str:
        """``dealer screen http://host:port/``, or why it is off (the board says it right after the scoreboard)."""
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            for line in self._said:
                if "dealer screen on http://" in line:
                    return "dealer screen " + line.split("dealer screen on ", 1)[1].split(",", 1)[0]
                if "dealer screen: cannot bind" in line:
                    return "dealer screen off: " + line.split("dealer screen: ", 1)[1]
            time.sleep(0.05)
        return "dealer screen off: the board did not say"

    def close(self) -> None:
        """Stop the board (again: a no-op)."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(timeout=5)
        if self.proc.stderr is not None:
            self.proc.stderr.close()
