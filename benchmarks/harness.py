"""The shared harness of the daemon benchmarks (one script per figure: ``bench_card_led.py``,
``bench_card_ack.py``, ``bench_shoe_rate.py``, ``bench_daemon_process.py``, ``bench_flood.py``;
``bench_daemon.py`` runs the first four in one go).

* :func:`bench_latency`: the daemon in this process (a thread, gpiozero mock pins) on a real pty; this
  script plays the shoe with a :class:`ShoeSession` on the pty's master. Real coups are dealt from shuffled
  8-deck shoes (NEW SHOE, the exposed burn card and its burns, P1 B1 P2 B2, third cards when due, DECLARE,
  the cut card), one event at a time (``gap`` seconds apart: 0 is flat out, 0.05 a dealer's pace): each
  card's frame is timed from just before ``os.write`` to the ``update()`` of a sink placed right after the
  panel's (the lamps are set synchronously just before it), cross-checked against the mock pins' own
  state-history timestamps, and to the shoe reading the card's ACK (sent only after the journal commit);
  the journal's ``append_many`` (what the loop calls: one transaction, its fsync) is timed too.
* :func:`bench_sim_shoe`: the real ``shoe-sim --pace fast`` process against a real ``shoe-controller
  run`` process (the simulated dealer follows the PROMPTs).
* :func:`bench_process`: this script's own shoe, pipelined (no waiting for PROMPTs, within the shoe's
  window of unacknowledged events) against a ``shoe-controller run`` process; READY time on a
  ``NOTIFY_SOCKET`` we bind; idle CPU; RSS.

The journals go in a temporary directory in the current directory by default (``--dir``), so that the
fsync figures are for this disk rather than a RAM-backed /tmp. Every process, thread, pty and file made
here is closed or removed before the benchmark exits.
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import json
import logging
import os
import platform
import random
import select
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import tty
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.config import default_settings
from controller.game.cards import Card, Rank, Suit
from controller.game.table import (
    BurnCard,
    CardDrawn,
    CardPlaced,
    CutCardOut,
    DeclarePressed,
    Due,
    Lamp,
    NewShoePressed,
    Notice,
    TableInput,
    TableRules,
    TableState,
    TableView,
    VoidPressed,
)
from controller.journal import Journal
from controller.table.daemon import Daemon
from firmware_protocol.binary import MAX_SEQ
from firmware_protocol.messages import Button, ButtonPressed, CardRead, CutCard, ShoeMessage
from firmware_protocol.session import Acked, PromptReceived, ShoeSession, seq_of

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.servers import free_port  # the tests' one helper: a port no other worker hands out

TARGET_LED_P99_MS = 0.5
TARGET_CARDS_PER_S = 1000.0
TARGET_RSS_MB = 80.0
TARGET_READY_S = 1.5
TARGET_IDLE_CPU_PCT = 1.0
#: Longest wait for one ACK before the benchmark gives up (the daemon is stuck or dead).
ACK_TIMEOUT = 10.0
DRAW_LAMPS = (Lamp.PLAYER_DRAW, Lamp.BANKER_DRAW, Lamp.PLAYER_WIN, Lamp.BANKER_WIN, Lamp.TIE)


# -- small helpers ----------------------------------------------------------------------------------------
def out(line: str = "") -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def pct(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) by nearest rank."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


def spread_ms(values: Sequence[float]) -> str:
    """p50/p90/p99/max of seconds, in milliseconds."""
    ms = [v * 1000 for v in values]
    return f"p50 {pct(ms, 50):.3f}  p90 {pct(ms, 90):.3f}  p99 {pct(ms, 99):.3f}  max {max(ms):.3f} ms  (n={len(ms)})"


SHM = Path("/dev/shm")


def ram_ok() -> bool:
    """Whether /dev/shm is there for the fsync-free comparison runs."""
    return SHM.is_dir() and os.access(SHM, os.W_OK)


def load() -> str:
    """The 1, 5 and 15 minute load averages."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f}"


def verdict(ok: bool) -> str:
    return "MET" if ok else "MISSED"


def console_script(name: str, module: str) -> list[str]:
    """The installed console script beside this interpreter, or ``python -m module``."""
    path = Path(sys.executable).parent / name
    return [str(path)] if path.exists() else [sys.executable, "-m", module]


def fs_type(path: Path) -> str:
    """The file system type holding ``path`` (from /proc/mounts), for the figures' context."""
    best, kind = "", "?"
    target = str(path.resolve())
    with contextlib.suppress(OSError), open("/proc/mounts", encoding="utf-8") as mounts:
        for line in mounts:
            parts = line.split()
            if len(parts) < 3 or len(parts[1]) < len(best):
                continue
            if target == parts[1] or target.startswith(parts[1].rstrip("/") + "/"):
                best, kind = parts[1], parts[2]
    return kind


def proc_cpu_seconds(pid: int) -> float:
    """utime + stime of a process from /proc/PID/stat."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_status(pid: int, task: int | None = None) -> dict[str, str]:
    status: dict[str, str] = {}
    path = f"/proc/{pid}/status" if task is None else f"/proc/{pid}/task/{task}/status"
    for line in Path(path).read_text().splitlines():
        key, _, value = line.partition(":")
        status[key] = value.strip()
    return status


def context_switches(pid: int) -> int:
    """Voluntary and involuntary context switches summed over every thread of a process (its wakeups)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError, KeyError):
            st = proc_status(pid, int(task))
            total += int(st["voluntary_ctxt_switches"]) + int(st["nonvoluntary_ctxt_switches"])
    return total


def status_kb(status: dict[str, str], key: str) -> int:
    return int(status[key].split()[0])


@dataclass
class Pty:
    """A raw pty pair; the daemon opens ``path`` (the slave), the shoe talks on ``master``."""

    master: int
    slave: int
    path: str

    @classmethod
    def open(cls) -> Pty:
        master, slave = os.openpty()
        tty.setraw(slave)
        return cls(master, slave, os.ttyname(slave))

    def close(self) -> None:
        for fd in (self.master, self.slave):
            with contextlib.suppress(OSError):
                os.close(fd)


#: CPUs every child process is kept to (empty: any): ``--pin`` gives the table process a core of its own, as
#: ``CPUAffinity=`` in the units would on a Pi (the table on one core, its companions on the others).
CHILD_CPUS: set[int] = set()


def pin_table(table_cpu: int = 0) -> str:
    """This process (the table in process) on ``table_cpu``; every child started after this on the others."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return "not pinned: one CPU"
    CHILD_CPUS.clear()
    CHILD_CPUS.update(c for c in cpus if c != table_cpu)
    os.sched_setaffinity(0, {table_cpu})
    return f"table process on CPU {table_cpu}, every other process on {sorted(CHILD_CPUS)}"


class Children:
    """Every process this benchmark starts; :meth:`close` kills and reaps whatever is still running."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []

    def spawn(
        self,
        cmd: list[str],
        log: Path,
        env: dict[str, str] | None = None,
        *,
        append: bool = False,
        nice: int = 0,
    ) -> subprocess.Popen[bytes]:
        """``nice``: the child's niceness (the companions' units run at ``Nice=10``; what stands for another
        machine, the floor's broker and collector or the viewers' browsers, at 19)."""
        env = dict(os.environ if env is None else env, PYTHONUNBUFFERED="1")
        cpus = CHILD_CPUS

        def before_exec() -> None:  # pragma: no cover - runs in the child between fork and exec
            if nice:
                os.nice(nice)
            if cpus:
                os.sched_setaffinity(0, cpus)

        with open(log, "ab" if append else "wb") as fh:
            proc = subprocess.Popen(
                cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, preexec_fn=before_exec if nice or cpus else None
            )
        self.procs.append(proc)
        return proc

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
        self.procs.clear()


def daemon_cmd(port: str, journal: Path, level: str = "warning", dialect: str = "binary") -> list[str]:
    """``shoe-controller run`` (the table process: no network; its feed beside the journal) on a pty with mock
    pins."""
    return [
        *console_script("shoe-controller", "controller.cli"),
        "run",
        "--port",
        port,
        "--journal",
        str(journal),
        "--pin-factory",
        "mock",
        "--dialect",
        dialect,
        "--log-level",
        level,
    ]


def clean_env() -> dict[str, str]:
    env = dict(os.environ)
    for key in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"):
        env.pop(key, None)
    return env


# -- the shoe this benchmark plays ------------------------------------------------------------------------
@dataclass
class Sent:
    """One event the shoe sent: its number, whether it was a card, and when its bytes were written."""

    number: int
    message: ShoeMessage
    written: float = 0.0


class ShoePlayer:
    """The shoe's side on the pty master: a :class:`ShoeSession` for the wire, and a mirror
    :class:`TableState` (the same pure core the daemon runs) to know what is due next.

    Events are applied to the mirror as they are sent, in the daemon's order, so the mirror is the table's
    state once every event is acknowledged: the player can deal realistic shoes (new shoe, exposed card and
    burns, coups with their third cards, declare, cut card) without reading a single PROMPT.
    """

    def __init__(self, fd: int, rules: TableRules, *, seed: int, session_id: int, window: int = 256) -> None:
        self.fd = fd
        self.session = ShoeSession(session_id, max_unacked=window)
        self.window = window
        self.mirror = TableState(rules)
        self.rng = random.Random(seed)
        self.deck: list[Card] = []
        self.cut_at = 0
        self.dealt = 0
        self.sent = 0  # event numbers sent (HELLO is 1)
        self.acked = 0  # highest event number acknowledged
        self.ack_at: dict[int, float] = {}  # event number -> perf_counter when its ACK was read
        self.prompts = 0
        self.cards_sent = 0
        self.declares = 0
        self.shoes_started = 0

    # wire
    def start(self) -> None:
        self.session.start(time.perf_counter())
        self.sent = 1  # HELLO
        self.flush()

    def flush(self) -> float:
        """Write whatever the session has due now (new events, resends, heartbeat); return the write time."""
        now = time.perf_counter()
        data = self.session.poll(now)
        t = time.perf_counter()
        view = memoryview(data)
        while view:
            n = os.write(self.fd, view)
            view = view[n:]
        return t

    def pump(self, timeout: float) -> bool:
        """Read the controller's bytes for up to ``timeout`` s; True if anything came."""
        readable, _, _ = select.select([self.fd], [], [], timeout)
        if not readable:
            return False
        data = os.read(self.fd, 65536)
        t = time.perf_counter()
        for event in self.session.receive(data, t):
            if isinstance(event, Acked):
                self._acked(event.up_to, t)
            elif isinstance(event, PromptReceived):
                self.prompts += 1
        return True

    def _acked(self, up_to: int, t: float) -> None:
        number = self.sent - (seq_of(self.sent) - up_to) % MAX_SEQ
        for n in range(self.acked + 1, number + 1):
            self.ack_at[n] = t
        self.acked = max(self.acked, number)

    def wait_acked(self, number: int, timeout: float = ACK_TIMEOUT) -> None:
        deadline = time.perf_counter() + timeout
        while self.acked < number:
            now = time.perf_counter()
            if now > deadline:
                raise TimeoutError(f"event {number} not acknowledged within {timeout} s (acked {self.acked})")
            self.pump(min(0.05, deadline - now))
            nxt = self.session.next_deadline()
            if nxt is not None and nxt <= time.perf_counter():
                self.flush()

    def idle(self, seconds: float) -> None:
        """Keep the link up (heartbeats, ACK reading) for ``seconds`` without dealing."""
        end = time.perf_counter() + seconds
        while (now := time.perf_counter()) < end:
            nxt = self.session.next_deadline()
            wait = end - now if nxt is None else min(end - now, max(0.0, nxt - now))
            self.pump(wait)
            if nxt is not None and nxt <= time.perf_counter():
                self.flush()

    # the dealer
    def _new_deck(self) -> None:
        self.deck = [Card(rank, suit) for rank in Rank for suit in Suit] * self.mirror.rules.decks
        self.rng.shuffle(self.deck)
        self.cut_at = len(self.deck) - self.rng.randint(14, 20)
        self.dealt = 0

    def next_event(self) -> tuple[ShoeMessage, TableInput]:
        """The next thing the dealer does at this table, as the shoe's message and the table's input."""
        due = self.mirror.due
        if due is Due.NEW_SHOE or (due is Due.BURN and not self.deck):
            self._new_deck()
            self.shoes_started += 1
            return ButtonPressed(Button.NEW_SHOE), NewShoePressed()
        if due is Due.DECLARE:
            return ButtonPressed(Button.DECLARE), DeclarePressed()
        if due is Due.VOID:
            return ButtonPressed(Button.VOID), VoidPressed()
        if self.dealt >= self.cut_at and not self.mirror.shoe.cut_card_out:
            return CutCard(), CutCardOut()
        if not self.deck:  # cannot happen with the cut card in place; start over rather than stall
            self._new_deck()
            self.shoes_started += 1
            return ButtonPressed(Button.NEW_SHOE), NewShoePressed()
        card = self.deck.pop()
        self.dealt += 1
        return CardRead(int(card.rank), card.suit.value), CardDrawn(card)

    def send_next(self) -> Sent:
        """Queue the dealer's next event on the session (not yet written) and apply it to the mirror."""
        message, table_input = self.next_event()
        self.session.send(message, time.perf_counter())
        self.mirror.apply(table_input)
        self.sent += 1
        if isinstance(message, CardRead):
            self.cards_sent += 1
        elif isinstance(table_input, DeclarePressed):
            self.declares += 1
        return Sent(self.sent, message)


def card_token(message: CardRead) -> str:
    return message.token


# -- sinks and wrappers for the in-process daemon -----------------------------------------------------------
class Probe:
    """A sink placed right after the panel's: records when each card reached the sinks."""

    name = "bench-probe"

    def __init__(self) -> None:
        self.marks: list[tuple[float, tuple[str, ...]]] = []

    def update(self, view: TableView, notices: Sequence[Notice]) -> None:
        t = time.perf_counter()
        cards = tuple(n.card.token for n in notices if isinstance(n, CardPlaced | BurnCard) and n.card is not None)
        if cards:
            self.marks.append((t, cards))

    def close(self) -> None:
        pass

    def find(self, token: str, start: int) -> float | None:
        for t, cards in self.marks[start:]:
            if token in cards:
                return t
        return None


class TimedJournal:
    """Times every ``append_many`` of the daemon's journal, which is what the table loop's commit calls (one
    transaction with its fsync per group commit): the journal's own method is wrapped on the instance, so the
    loop (built with the journal) calls the wrapper."""

    def __init__(self, journal: Any) -> None:
        self.seconds: list[float] = []
        self._append_many = journal.append_many
        journal.append_many = self.append_many

    def append_many(self, *args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        try:
            return self._append_many(*args, **kwargs)
        finally:
            self.seconds.append(time.perf_counter() - t)


def pin_change_times(pin: Any) -> list[tuple[float, bool]]:
    """Absolute (monotonic) times of a gpiozero MockPin's recorded changes, from its state history.

    MockPin keeps each change as the time since the previous one; its last change's absolute time is
    ``_last_change``. ``perf_counter`` and gpiozero's ``monotonic`` are the same clock here
    (CLOCK_MONOTONIC), which :func:`main` prints.
    """
    states = list(pin.states)
    t = float(pin._last_change)
    times: list[tuple[float, bool]] = []
    for state in reversed(states[1:]):
        times.append((t, bool(state.state)))
        t -= state.timestamp
    times.reverse()
    return times


# -- 1 and 2: latency with the daemon in this process -------------------------------------------------------
@dataclass
class LatencyResult:
    sink: list[float] = field(default_factory=list)
    ack: list[float] = field(default_factory=list)
    led: list[float] = field(default_factory=list)
    led_before_sink: int = 0
    commit: list[float] = field(default_factory=list)
    cards: int = 0
    coups: int = 0
    shoes: int = 0
    events: int = 0
    threads_left: list[str] = field(default_factory=list)
    outbox: int = 0  # journal records the floor had not acknowledged when the run ended


def bench_latency(
    tmp: Path,
    cards: int,
    seed: int,
    warmup: int,
    gap: float = 0.0,
    metrics: bool = False,
    floor: str | None = None,
    floor_table: str = "t1",
    before_dealing: Callable[[Daemon], None] | None = None,
    board_clients: int = 0,
    floor_keys: FloorKeys | None = None,
) -> LatencyResult:
    """The table process in this one (the daemon, the panel on mock pins, a real pty).

    ``floor``: a broker URL for the table's floor link, ``shoe-controller link`` as a process of its own fed by
    this table's feed (table ``floor_table`` of site ``bench``: a new id for each run, the journal being new);
    waited for until it has handed the table a floor ack. ``board_clients``: the board, ``shoe-controller
    board`` as a process of its own, with that many event-stream clients reading it (in one more process).
    ``before_dealing`` is called with the ready daemon before the first event (to take the broker down ...)."""
    pty = Pty.open()
    journal_path = tmp / "latency.db"
    settings = default_settings().with_overrides(port=pty.path, journal=str(journal_path), pin_factory="mock")
    if floor is not None:
        if floor_keys is None:
            raise ValueError("a floor link needs its keys (FloorKeys): the floor archives only signed records")
        settings = settings.with_floor(
            broker=floor, site="bench", table=floor_table, floor_public_key=floor_keys.floor_public_key
        )
    if metrics:  # the Prometheus endpoint on, as a floor would run it (figure 1 before/after the metrics)
        from controller.config import MetricsSection

        section = MetricsSection.model_validate({"enabled": True, "bind": f"127.0.0.1:{free_port()}"})
        settings = settings.model_copy(update={"metrics": section})
    probe = Probe()
    timed: list[TimedJournal] = []

    def on_ready(daemon: Daemon) -> None:
        assert daemon.journal is not None
        timed.append(TimedJournal(daemon.journal))

    before = {t.ident for t in threading.enumerate()}
    companions = Companions(tmp)
    daemon = Daemon(settings, extra_sinks=[probe], on_ready=on_ready)
    thread = threading.Thread(target=daemon.run, name="bench-daemon")
    quiet = logging.getLogger("controller")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    result = LatencyResult()
    writes: list[tuple[float, bool]] = []  # every event's write time and whether it was a card
    try:
        thread.start()
        deadline = time.monotonic() + 15
        while not daemon.ready:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("the in-process daemon did not open the pty")
            time.sleep(0.005)
        companions.start(daemon, journal_path, floor, floor_table, board_clients, floor_keys)
        if before_dealing is not None:
            before_dealing(daemon)
        player = ShoePlayer(pty.master, settings.table_rules(), seed=seed, session_id=0x5EED0000 + seed)
        player.start()
        player.wait_acked(1)
        measured = 0
        while measured < cards:
            sent = player.send_next()
            mark = len(probe.marks)
            sent.written = player.flush()
            is_card = isinstance(sent.message, CardRead)
            writes.append((sent.written, is_card))
            player.wait_acked(sent.number)
            if gap:
                time.sleep(gap)  # a dealer's pace instead of back to back
            if not isinstance(sent.message, CardRead):
                continue
            if player.cards_sent <= warmup:
                continue
            t_sink = probe.find(card_token(sent.message), mark)
            if t_sink is None:
                raise RuntimeError(f"card {card_token(sent.message)} never reached the sinks")
            result.sink.append(t_sink - sent.written)
            result.ack.append(player.ack_at[sent.number] - sent.written)
            measured += 1
        # The lamps' own history: each change of a draw or win lamp caused by a card, timed from that
        # card's write. Read before the daemon stops (closing turns every lamp off).
        assert daemon.panel is not None
        write_times = [w for w, _ in writes]
        sink_times = sorted(t for t, _ in probe.marks)
        for lamp in DRAW_LAMPS:
            pin = daemon.panel._lamps[lamp].pin
            for t_change, _state in pin_change_times(pin):
                i = bisect.bisect_right(write_times, t_change) - 1
                if i < 0 or not writes[i][1]:
                    continue  # before the first write, or caused by a button (declare)
                result.led.append(t_change - write_times[i])
                j = bisect.bisect_left(sink_times, t_change)
                if j < len(sink_times) and sink_times[j] - t_change < 0.01:
                    result.led_before_sink += 1
        result.cards = player.cards_sent
        result.events = player.sent
        result.coups = player.declares
        result.shoes = player.shoes_started
        if timed:
            result.commit = timed[0].seconds
    finally:
        companions.close()
        daemon.stop()
        thread.join(timeout=15)
        quiet.setLevel(level)
        pty.close()
        with contextlib.suppress(OSError), Journal.open(journal_path, read_only=True) as stored:
            result.outbox = stored.head()[0] - (stored.floor_ack() or 0)
        with contextlib.suppress(OSError):
            for suffix in ("", "-wal", "-shm"):
                Path(str(journal_path) + suffix).unlink(missing_ok=True)
    if thread.is_alive():
        raise RuntimeError("the in-process daemon did not stop")
    result.threads_left = [t.name for t in threading.enumerate() if t.ident not in before]
    return result


#: The board's event-stream clients, in a process of their own: each reads its stream as a browser does.
_SSE_CLIENTS = """
import socket, sys, threading, time
port, n = int(sys.argv[1]), int(sys.argv[2])
def read():
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /events HTTP/1.1\\r\\nHost: board\\r\\n\\r\\n")
    while s.recv(65536):
        pass
for _ in range(n):
    threading.Thread(target=read, daemon=True).start()
print("reading", flush=True)
time.sleep(3600)
"""


#: The companions' niceness, as their units set it (``Nice=10``: the table process wins a contended CPU).
COMPANION_NICE = 10
#: What stands for other machines in a benchmark (the floor's broker and collector, the viewers' browsers).
ELSEWHERE_NICE = 19


@dataclass(frozen=True)
class FloorKeys:
    """What a table's floor link needs: its own key file (enrolled in the floor's archive) and the floor's
    public key (its acks' signer)."""

    table_key: Path
    floor_public_key: str


class Companions:
    """The table's companion processes for a latency run: the floor link and the board with its viewers."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.children = Children()

    def start(
        self,
        daemon: Daemon,
        journal: Path,
        floor: str | None,
        table: str,
        board_clients: int,
        keys: FloorKeys | None = None,
    ) -> None:
        script = console_script("shoe-controller", "controller.cli")
        common = ["--journal", str(journal), "--log-level", "warning"]
        if floor is not None:
            assert keys is not None
            link = [*script, "link", *common, "--floor", floor, "--site", "bench", "--table-id", table]
            link += ["--floor-key", str(keys.table_key), "--floor-public-key", keys.floor_public_key]
            self.children.spawn(link, self.tmp / f"link-{table}.log", nice=COMPANION_NICE)
            feed = daemon.feed
            assert feed is not None
            deadline = time.monotonic() + 30
            while feed.stats["acks"] < 1:  # the link is connected, the floor archives and acks
                if time.monotonic() > deadline:
                    raise RuntimeError(f"no floor ack: {(self.tmp / f'link-{table}.log').read_text()}")
                time.sleep(0.01)
        if board_clients:
            port = free_port()
            board = [*script, "board", *common, "--scoreboard", f"127.0.0.1:{port}"]
            self.children.spawn(board, self.tmp / "board.log", nice=COMPANION_NICE)
            deadline = time.monotonic() + 30
            while True:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1):
                        break
                except OSError:
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"the board did not start: {(self.tmp / 'board.log').read_text()}") from None
                    time.sleep(0.02)
            viewers = self.children.spawn(
                [sys.executable, "-c", _SSE_CLIENTS, str(port), str(board_clients)],
                self.tmp / "viewers.log",
                nice=ELSEWHERE_NICE,
            )
            while "reading" not in (self.tmp / "viewers.log").read_text():
                if viewers.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the board's viewers did not start")
                time.sleep(0.02)

    def close(self) -> None:
        self.children.close()


# -- 3(a): shoe-sim --pace fast against the daemon process --------------------------------------------------
@dataclass
class SimRun:
    cards: int
    first_to_last: float
    wall: float
    rss_kb: int
    hwm_kb: int
    events: int


def read_truth(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


def bench_sim_shoe(tmp: Path, journal: Path, seed: int, tag: str) -> SimRun:
    link = tmp / f"shoe-{tag}"
    truth = tmp / f"truth-{tag}.jsonl"
    children = Children()
    try:
        t0 = time.perf_counter()
        sim_args = ["--link", str(link), "--pace", "fast", "--decks", "8", "--seed", str(seed), "--truth", str(truth)]
        sim = children.spawn([*console_script("shoe-sim", "hw_sim.cli"), *sim_args], tmp / f"sim-{tag}.log")
        while not link.exists():
            if sim.poll() is not None or time.perf_counter() - t0 > 15:
                raise RuntimeError(f"shoe-sim did not start: {(tmp / f'sim-{tag}.log').read_text()}")
            time.sleep(0.005)
        daemon = children.spawn(daemon_cmd(str(link), journal), tmp / f"daemon-{tag}.log", clean_env())
        try:
            rc = sim.wait(timeout=120)
        except subprocess.TimeoutExpired:
            raise RuntimeError("shoe-sim did not finish its shoe within 120 s") from None
        wall = time.perf_counter() - t0
        if rc != 0:
            raise RuntimeError(f"shoe-sim exited {rc}: {(tmp / f'sim-{tag}.log').read_text()}")
        status = proc_status(daemon.pid)
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=15)
        events = read_truth(truth)
        cards = [e for e in events if e["event"] == "card"]
        numbered = [e for e in events if e.get("number") is not None]
        return SimRun(
            cards=len(cards),
            first_to_last=cards[-1]["t"] - cards[0]["t"],
            wall=wall,
            rss_kb=status_kb(status, "VmRSS"),
            hwm_kb=status_kb(status, "VmHWM"),
            events=len(numbered),
        )
    finally:
        children.close()
        for path in (link, truth):
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)


# -- 3(b) and 4: the daemon process, READY, idle CPU, a pipelined shoe, RSS -------------------------------
@dataclass
class ProcessRun:
    ready_s: float = 0.0
    link_up_s: float = 0.0
    idle_s: float = 0.0
    idle_cpu_s: float = 0.0
    idle_wakeups: int = 0
    cards: int = 0
    events: int = 0
    deal_s: float = 0.0
    write_s: float = 0.0
    rss_kb: int = 0
    hwm_kb: int = 0
    rss_start_kb: int = 0
    threads: int = 0
    stopping: bool = False
    exit_code: int | None = None


def recv_until(sock: socket.socket, wanted: bytes, timeout: float) -> tuple[float, list[bytes]]:
    """Datagrams until one has the line ``wanted``; the time it came and everything received."""
    got: list[bytes] = []
    deadline = time.perf_counter() + timeout
    while True:
        left = deadline - time.perf_counter()
        if left <= 0:
            raise TimeoutError(f"no {wanted!r} on NOTIFY_SOCKET within {timeout} s; got {got}")
        sock.settimeout(left)
        data = sock.recv(4096)
        t = time.perf_counter()
        got.append(data)
        if wanted in data.split(b"\n"):
            return t, got


def bench_process(tmp: Path, seed: int, idle: float | None, journal_dir: Path | None = None) -> ProcessRun:
    """READY time, idle CPU (unless ``idle`` is None), a pipelined shoe and the RSS of one daemon process."""
    result = ProcessRun()
    pty = Pty.open()
    journal = (journal_dir or tmp) / "process.db"
    notify_path = tmp / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    children = Children()
    try:
        sock.bind(str(notify_path))
        env = clean_env()
        env["NOTIFY_SOCKET"] = str(notify_path)
        t0 = time.perf_counter()
        daemon = children.spawn(daemon_cmd(pty.path, journal), tmp / "daemon-process.log", env)
        t_ready, _ = recv_until(sock, b"READY=1", 15)
        result.ready_s = t_ready - t0
        settings = default_settings()
        player = ShoePlayer(pty.master, settings.table_rules(), seed=seed, session_id=0xB0B00000 + seed)
        player.start()
        player.wait_acked(1)
        result.link_up_s = time.perf_counter() - t0
        if idle is not None:
            player.idle(1.0)  # let start-up work settle
            result.rss_start_kb = status_kb(proc_status(daemon.pid), "VmRSS")
            cpu0 = proc_cpu_seconds(daemon.pid)
            w0 = context_switches(daemon.pid)
            t_idle = time.perf_counter()
            player.idle(idle)
            result.idle_s = time.perf_counter() - t_idle
            result.idle_cpu_s = proc_cpu_seconds(daemon.pid) - cpu0
            result.idle_wakeups = context_switches(daemon.pid) - w0
        result.cards, result.events, result.deal_s, result.write_s = deal_pipelined(player)
        player.idle(0.2)
        status = proc_status(daemon.pid)
        result.rss_kb = status_kb(status, "VmRSS")
        result.hwm_kb = status_kb(status, "VmHWM")
        result.threads = int(status["Threads"])
        daemon.send_signal(signal.SIGTERM)
        result.exit_code = daemon.wait(timeout=15)
        with contextlib.suppress(TimeoutError, OSError):
            recv_until(sock, b"STOPPING=1", 1.0)
            result.stopping = True
        with Journal.open(journal, read_only=True) as j:
            journaled = sum(1 for _id, body in j.inputs() if body.get("kind") == "card")
        if journaled != result.cards:
            raise RuntimeError(f"pipelined shoe: {result.cards} cards sent but {journaled} journaled")
    finally:
        children.close()
        sock.close()
        pty.close()
        for path in (notify_path, journal, Path(f"{journal}-wal"), Path(f"{journal}-shm")):
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
    return result


def deal_pipelined(player: ShoePlayer) -> tuple[int, int, float, float]:
    """Deal one whole shoe without waiting for PROMPTs or ACKs (only for room in the window).

    Returns (cards, events, seconds from the first write to the last ACK, seconds spent writing)."""
    cards0, sent0 = player.cards_sent, player.sent
    started = False
    t_first: float | None = None
    writing = 0.0
    while True:
        due = player.mirror.due
        if started and due is Due.NEW_SHOE:
            break  # the shoe is over (cut card, last coup declared)
        if player.session.unacked >= player.window:
            player.pump(0.05)
            continue
        sent = player.send_next()
        started = True
        t = player.flush()
        writing += time.perf_counter() - t
        t_first = t if t_first is None else t_first
        while player.pump(0):  # drain ACKs and PROMPTs so the daemon never blocks writing them
            pass
    player.wait_acked(sent.number)
    assert t_first is not None
    return player.cards_sent - cards0, player.sent - sent0, player.ack_at[sent.number] - t_first, writing


# -- the report ---------------------------------------------------------------------------------------------
def header(title: str, tmp: Path | None = None) -> None:
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    out(title)
    out(f"  command:  {shlex.join([sys.executable, *sys.argv])}")
    out(f"  machine:  nproc {affinity} (cpu_count {os.cpu_count()}), {platform.machine()}, {platform.platform()}")
    out(f"  python:   {platform.python_version()} ({platform.python_implementation()})")
    perf, mono = time.get_clock_info("perf_counter"), time.get_clock_info("monotonic")
    out(f"  clocks:   perf_counter {perf.implementation}, monotonic {mono.implementation}")
    if tmp is not None:
        out(f"  journals: {tmp} ({fs_type(tmp)}), WAL, synchronous=FULL")
    out(f"  load:     {load()} (other work on this machine widens the tails)")
    out()


def common_args(description: str | None) -> argparse.ArgumentParser:
    """The options every daemon benchmark takes."""
    p = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=1, help="shuffle seed")
    p.add_argument("--dir", type=Path, default=Path.cwd(), help="where the temporary journals go")
    return p


def temp_dir(base: Path) -> tempfile.TemporaryDirectory[str]:
    """A scratch directory under ``--dir`` (made if it is not there yet)."""
    base.mkdir(parents=True, exist_ok=True)
    return tempfile.TemporaryDirectory(prefix="bench-daemon-", dir=base)
