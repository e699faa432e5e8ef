"""``shoe-controller demo --tables N`` (what ``scripts/demo --tables 4`` runs) as a real process: N simulated
tables, a private Mosquitto and ``shoe-floor serve`` on SQLite. Dealt to the end, the archive is every table's
journal record for record; stopped by Ctrl-C, by a child dying or by being killed outright, it leaves no process
behind; bad options are one line and exit 2."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.journal import Journal
from floor.archive import Archive
from tests.console import run_main
from tests.servers import MOSQUITTO, free_port, need
from tests.waiting import until

REPO = Path(__file__).resolve().parents[2]
FREE_PORTS = ["--scoreboard", "127.0.0.1:0", "--floor-bind", "127.0.0.1:0"]


def demo_cmd(directory: Path, *args: str, ports: list[str] = FREE_PORTS) -> list[str]:
    return [sys.executable, "-m", "controller.cli", "demo", "--dir", str(directory), *ports, *args]


def free_block(count: int) -> int:
    """The first of ``count`` consecutive free ports on 127.0.0.1 (handed out by :func:`free_port`, so that no
    other test of this process gets one of them)."""
    for _ in range(100):
        base = free_port()
        rest = [free_port() for _ in range(count - 1)]
        if rest == list(range(base + 1, base + count)):
            return base
    raise RuntimeError(f"no {count} consecutive free ports")


def processes_in(directory: Path, but: int | None = None) -> list[str]:
    """Every live process (anyone's child) whose command line names ``directory``, but the demo (pid ``but``):
    the demo puts each child's files there (the broker's config, the archive, each shoe's link and journal)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) in (os.getpid(), but):
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if str(directory) in cmdline and state != "Z":
            found.append(f"{proc.name}: {cmdline.strip()}")
    return found


def wait_gone(directory: Path, timeout: float) -> list[str]:
    deadline = time.monotonic() + timeout
    while (left := processes_in(directory)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


#: The tests that run whole floor demos (a dozen processes and more each) share one xdist worker, one after the
#: other: two at once on a 2-core machine starved each other past their time bounds.
FLOOR_DEMOS = "floor-demos"


def journal(path: Path, table: str) -> list[dict[str, object]]:
    with Journal.open(str(path), create=False, read_only=True) as j:
        return [json.loads(r.for_floor(table).to_json()) for r in j.records()]


def archived(url: str, table: str) -> list[dict[str, object]]:
    with Archive(url, create=False) as a:
        # as the journal holds them: the link signs each on the way out (the demo's verify checks every sig)
        return [{k: v for k, v in json.loads(r.to_json()).items() if k != "sig"} for r in a.records(table)]


def archived_count(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        with Archive(f"sqlite:///{path}", create=False) as a:
            return sum(1 for t in a.tables() for _ in a.records(t))
    except Exception:
        return 0


class Running:
    """The demo as a process at a slow pace, its output read up to the line that says it is dealing."""

    def __init__(self, directory: Path, tables: int, pace: str = "0.05") -> None:
        self.directory = directory
        self.proc = subprocess.Popen(
            demo_cmd(directory, "--tables", str(tables), "--pace", pace, "--decks", "1", "--shoes", "50"),
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        self.lines: list[str] = []
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            if line.startswith("demo: dealing"):
                break
        else:
            said = self.stderr()  # before close(), which closes the pipe
            self.close()
            raise AssertionError(f"the demo did not start: {self.lines} {said}")

    def address(self, label: str) -> str:
        line = next(line for line in self.lines if line.split()[:2] == label.split() or line.split()[:1] == [label])
        return next(word for word in line.split() if "://" in word)

    def stderr(self) -> str:
        return self.proc.stderr.read() if self.proc.stderr is not None else ""

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(30)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def floor_dir(tmp_path: Path) -> Iterator[Path]:
    """The demo's --dir; whatever the test leaves running in it (a failed test) is killed afterwards."""
    need(MOSQUITTO, "mosquitto (Debian package mosquitto)")
    yield tmp_path / "floor"
    for line in processes_in(tmp_path / "floor"):
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(line.split(":")[0]), signal.SIGKILL)


def slips(module: str, *args: str) -> list[str]:
    """``shoe-controller slips`` or ``shoe-floor slips`` with ``args``, ``--json --open``: its lines."""
    done = subprocess.run(
        [sys.executable, "-m", module, "slips", *args, "--json", "--open"],
        capture_output=True, text=True, cwd=REPO, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.splitlines()


@pytest.mark.e2e
@pytest.mark.timeout(300)  # four whole eight-deck shoes and their floor: some 60 s alone, more on a loaded machine
@pytest.mark.xdist_group(FLOOR_DEMOS)
def test_four_tables_dealt_to_the_end_are_archived_record_for_record(floor_dir: Path) -> None:
    result = subprocess.run(
        demo_cmd(floor_dir, "--tables", "4", "--pace", "fast", "--decks", "2", "--shoes", "1"),
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    tables = ["T1", "T2", "T3", "T4"]
    url = f"sqlite:///{floor_dir / 'archive.db'}"
    out = result.stdout
    assert f"archive   {url}" in out and "broker    mqtt://127.0.0.1:" in out
    summary = {
        line.split()[0]: line.split() for line in out.splitlines() if line.split()[:1] and line.split()[0] in tables
    }
    assert sorted(summary) == tables
    for table in tables:
        records = journal(floor_dir / table / "journal.db", table)
        # a whole shoe to its end (two decks: the path and every check are an eight-deck shoe's; the eight decks'
        # volume is the benchmarks' (benchmarks/bench_floor_archive.py), not this test's four minutes of CPU)
        assert len(records) > 300
        assert archived(url, table) == records  # record for record, nothing lost or doubled
        with Journal.open(str(floor_dir / table / "journal.db"), create=False, read_only=True) as j:
            coups = len(j.coups())
        assert summary[table][1:] == [str(coups), str(len(records)), str(len(records)), "ok"]
    verify = subprocess.run(
        [sys.executable, "-m", "floor.cli", "verify", "--archive", url], capture_output=True, text=True, cwd=REPO
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert verify.stdout.count(": OK") == 4
    # Each table's rating slips, from its own journal, are the floor's for that table from what the link published
    # over MQTT (issue 25's check): the same lines, with the table's name.
    for table in tables:
        own = slips("controller.cli", "--journal", str(floor_dir / table / "journal.db"))
        assert own, f"{table}: no slip (the demo seats carded players at every table)"
        floors = slips("floor.cli", "--archive", url, "--table", table)
        assert floors == [json.dumps(json.loads(x) | {"table": table}, sort_keys=True, separators=(",", ":"))
                          for x in own]  # fmt: skip
    # the command the demo suggests runs as printed, from where the demo was started
    suggested = next(line for line in out.splitlines() if line.split()[:1] == ["try"]).split()[1:]
    history = subprocess.run(suggested, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert history.returncode == 0 and len(history.stdout.splitlines()) >= 5, history.stdout + history.stderr
    assert processes_in(floor_dir) == []  # no child left behind


@pytest.mark.e2e
@pytest.mark.xdist_group(FLOOR_DEMOS)
def test_ctrl_c_mid_run_stops_every_child_within_seconds(floor_dir: Path) -> None:
    demo = Running(floor_dir, tables=2)
    try:
        # While it runs: each table's scoreboard and the floor's HTTP answer, the broker listens, and the
        # archive fills.
        for label in ("table T1", "table T2", "floor"):
            with urllib.request.urlopen(demo.address(label), timeout=10) as response:
                assert response.status == 200
        broker = demo.address("broker")
        with socket.create_connection(("127.0.0.1", int(broker.rsplit(":", 1)[1])), timeout=5):
            pass
        deadline = time.monotonic() + 60
        while archived_count(floor_dir / "archive.db") < 20 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert archived_count(floor_dir / "archive.db") >= 20
        # broker, collector, and per table its shoe, its table process, its board and its floor link
        assert len(processes_in(floor_dir, but=demo.proc.pid)) == 2 + 2 * 4
        demo.proc.send_signal(signal.SIGINT)
        assert demo.proc.wait(20) == 0
        assert wait_gone(floor_dir, 5) == []
        assert "Traceback" not in demo.stderr()
    finally:
        demo.close()


@pytest.mark.e2e
@pytest.mark.xdist_group(FLOOR_DEMOS)
def test_a_child_dying_is_one_line_and_stops_the_demo_with_exit_1(floor_dir: Path) -> None:
    demo = Running(floor_dir, tables=2)
    try:
        daemon = next(p for p in processes_in(floor_dir, but=demo.proc.pid) if "T2/journal.db" in p and " run " in p)
        os.kill(int(daemon.split(":")[0]), signal.SIGKILL)
        assert demo.proc.wait(30) == 1
        err = demo.stderr()
        assert len(err.splitlines()) == 1, err
        assert "table T2's daemon" in err and "exited with -9" in err and "stopping the demo" in err
        assert wait_gone(floor_dir, 5) == []
    finally:
        demo.close()


@pytest.mark.e2e
@pytest.mark.xdist_group(FLOOR_DEMOS)
def test_the_demo_killed_outright_takes_its_children_with_it(floor_dir: Path) -> None:
    """SIGKILL gives the demo no chance to stop anything: the kernel sends each child SIGTERM (PDEATHSIG)."""
    demo = Running(floor_dir, tables=1)
    try:
        # the broker, the floor, and the table's four; a child forked but not yet exec'd still has the demo's
        # command line for a moment (it names the directory too): counted once the count has settled
        until(
            lambda: len(processes_in(floor_dir, but=demo.proc.pid)) == 2 + 4,
            10,
            "the demo's six children and no other",
        )
        demo.proc.kill()
        demo.proc.wait(10)
        assert wait_gone(floor_dir, 20) == []
    finally:
        demo.close()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--tables", "0"], "--tables must be 1-12, not 0"),
        (["--tables", "13"], "--tables must be 1-12, not 13"),
        (["--tables", "2", "--journal", "j.db"], "with --tables use --dir"),
        (["--tables", "2", "--scoreboard", "nowhere"], "--scoreboard must be HOST:PORT"),
        (["--dir", "x"], "--dir is for the floor demo"),
    ],
)
def test_bad_floor_demo_options_are_one_line_and_exit_2(args: list[str], says: str) -> None:
    result = run_main(["shoe-controller", "demo", *args])
    assert result.returncode == 2, result
    assert says in result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr


def test_a_scoreboard_port_in_use_is_one_line_naming_it_and_exit_2() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = run_main(["shoe-controller", "demo", "--tables", "3", "--scoreboard", f"127.0.0.1:{port}"])
    assert result.returncode == 2, result
    assert result.stderr == (
        f"shoe-controller demo: 127.0.0.1:{port} (--scoreboard) is in use;"
        " pass --scoreboard 127.0.0.1:0 for free ports\n"
    )


def shift_figures(url: str) -> dict[str, dict[str, Any]]:
    """``shoe-floor report --json`` over all time: each table's line by table (the floor's total left out)."""
    report = subprocess.run(
        [sys.executable, "-m", "floor.cli", "report", "--archive", url, "--json",
         "--from", "2000-01-01T00:00:00Z", "--to", "2100-01-01T00:00:00Z"],
        capture_output=True, text=True, cwd=REPO, timeout=60, check=True,
    )  # fmt: skip
    lines = [json.loads(line) for line in report.stdout.splitlines()]
    return {str(line["table"]): line for line in lines if not line["total"]}


@pytest.mark.e2e
@pytest.mark.timeout(360)  # three demos, each with its floor: some 55 s alone, more on a loaded machine
@pytest.mark.xdist_group(FLOOR_DEMOS)
def test_the_floor_demo_works_every_time_with_players_and_money_at_every_table(tmp_path: Path) -> None:
    """The README's ``scripts/demo --tables N`` (issue 24): three runs over, each on consecutive ports as the
    defaults are, every run exits 0; every table's board serves its scoreboard and its own dealer screen (no two
    listeners on one port: each table's dealer screen once took the next table's scoreboard port), and every
    table has players whose money reaches the floor (handle and win in the shift report, seat ratings)."""
    need(MOSQUITTO, "mosquitto (Debian package mosquitto)")
    tables = ["T1", "T2", "T3"]
    for run in range(3):
        directory = tmp_path / f"floor{run}"
        base = free_block(2 * len(tables))  # the scoreboards' ports, then the dealer screens' (the default plan)
        ports = ["--scoreboard", f"127.0.0.1:{base}", "--floor-bind", "127.0.0.1:0"]
        try:
            result = subprocess.run(
                demo_cmd(directory, "--tables", "3", "--pace", "fast", "--decks", "1", "--shoes", "1", ports=ports),
                cwd=REPO, capture_output=True, text=True, timeout=300,
            )  # fmt: skip
        finally:
            for line in processes_in(directory):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(line.split(":")[0]), signal.SIGKILL)
        assert result.returncode == 0, f"run {run + 1}: {result.stdout}{result.stderr}"
        assert "Traceback" not in result.stderr
        assert "7 players a table" in result.stdout
        listeners = []
        for table in tables:
            board_log = (directory / table / "board.log").read_text()
            assert "board on http://127.0.0.1:" in board_log and "dealer screen on http://127.0.0.1:" in board_log
            assert "cannot bind" not in board_log, board_log
            line = next(line for line in result.stdout.splitlines() if line.split()[:2] == ["table", table])
            listeners += [word for word in line.split() if word.startswith("http://")]
        assert len(listeners) == 2 * len(tables) == len(set(listeners)), listeners
        url = f"sqlite:///{directory / 'archive.db'}"
        figures = shift_figures(url)
        assert sorted(figures) == tables
        for table in tables:
            assert int(figures[table]["handle"]) > 0 and int(figures[table]["wagers"]) > 0, figures[table]
            # and the players bought in with cash at every table (the dealer screen's socket)
            bought = [r for r in journal(directory / table / "journal.db", table) if r["kind"] == "buy_in"]
            assert bought, f"run {run + 1}: no buy-in at table {table}"
        rated = subprocess.run(
            [sys.executable, "-m", "floor.cli", "ratings", "--archive", url, "--json"],
            capture_output=True, text=True, cwd=REPO, timeout=60, check=True,
        )  # fmt: skip
        sessions = [json.loads(line) for line in rated.stdout.splitlines()]
        assert {s["table"] for s in sessions} == set(tables)
        assert processes_in(directory) == []


def test_the_floor_demo_plans_every_listener_apart() -> None:
    """From the defaults' shape (consecutive ports), the dealer screens follow the scoreboards; none of the
    demo's listeners shares a port with another, with port 0 too; a --dealer on the scoreboards' ports is one
    line and exit 2 before anything starts."""
    from demo.floor import plan_listeners

    base = free_block(8)
    args = argparse.Namespace(
        tables=4, players=7, dealer=None, scoreboard=f"127.0.0.1:{base}", floor_bind="127.0.0.1:0"
    )
    boards, dealers, floor_bind = plan_listeners(args)
    assert [p for _, p in boards] == list(range(base, base + 4))
    assert dealers is not None and [p for _, p in dealers] == list(range(base + 4, base + 8))
    assert floor_bind[1] not in range(base, base + 8)
    args.scoreboard = args.floor_bind = "127.0.0.1:0"
    boards, dealers, floor_bind = plan_listeners(args)
    assert dealers is not None
    assert len({port for _, port in [*boards, *dealers, floor_bind]}) == 9
    # port 0 plans below the kernel's ephemeral range: no table's outgoing connection can take a planned port
    # before its listener binds it (12 tables once failed "cannot bind 127.0.0.1:39721")
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    assert all(port < low for _, port in [*boards, *dealers, floor_bind])
    args.players = 0
    assert plan_listeners(args)[1] is None  # no players: no dealer screen
    result = run_main(
        ["shoe-controller", "demo", "--tables", "4", "--scoreboard", f"127.0.0.1:{base}", "--dealer",
         f"127.0.0.1:{base + 2}"]
    )  # fmt: skip
    assert result.returncode == 2, result
    assert result.stderr == (
        f"shoe-controller demo: 127.0.0.1:{base + 2} (--dealer) is planned for another of the demo's listeners;"
        " pass --dealer 127.0.0.1:0 for free ports\n"
    )
