"""``shoe-controller demo --tables N``: a small casino floor on one machine.

N simulated tables (each a ``shoe-sim`` with ``--players`` simulated players betting on its bet-spot reader,
a ``shoe-controller run`` with its own journal, and the table's own ``board`` and ``link`` processes: its
scoreboard and dealer screen, and its floor link), a private Mosquitto on a free loopback
port (its own configuration in the demo's directory, not the system service) and ``shoe-floor serve``
archiving into SQLite. It prints the addresses to open, deals ``--shoes`` shoes at every table, waits until
the floor has acknowledged every table's journal, prints a
summary per table (coups, records, archived, verified) and exits 0.

Every listener is planned before anything starts, so that no two clash: the scoreboards on consecutive ports
from ``--scoreboard``, the dealer screens on the ports right after them (or from ``--dealer``), the floor's
page on ``--floor-bind``; port 0 gives each its own free port, all held at once while they are picked.

Every child runs in its own process group, started and stopped by this process alone: Ctrl-C or SIGTERM stops
them all (tables first, then the collector, then the broker), a child that dies is reported in one line and
stops the demo with exit 1, and a child whose demo is killed outright gets SIGTERM from the kernel
(``PR_SET_PDEATHSIG``), so none is left behind.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from commandline import UsageError
from floor_protocol.addresses import AddressError, parse_host_port

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

#: Most tables the demo deals at once (each is two processes; a dozen is about what one machine shows well).
MAX_TABLES = 12
#: The floor's site id in the topics: ``baccarat/demo/T1/record``.
SITE = "demo"
#: How long a child may take to come up (a loaded machine starts Python slowly).
START_TIMEOUT = 60.0
#: How long the floor may take, after the last card, to acknowledge every table's journal.
DRAIN_TIMEOUT = 120.0
#: How long a journal must stay unchanged and fully acknowledged before its table counts as done.
SETTLE = 1.5
#: How long a child has to stop on SIGTERM before its process group is killed.
STOP_TIMEOUT = 10.0
#: Seconds between the status lines printed while the tables deal.
STATUS_EVERY = 30.0

MOSQUITTO_HINT = (
    "the floor demo needs the Mosquitto MQTT broker: run scripts/demo as root to install it, "
    "or install it yourself (Debian: sudo apt-get install mosquitto)"
)


class DemoError(Exception):
    """The demo cannot go on (a child died, the broker is missing): one line, exit 1."""


def check(args: argparse.Namespace) -> None:
    """The floor demo's own options (the table options are checked by the single demo's ``_check``)."""
    if not 1 <= args.tables <= MAX_TABLES:
        raise UsageError(f"shoe-controller demo: --tables must be 1-{MAX_TABLES}, not {args.tables}")
    if args.journal:
        raise UsageError("shoe-controller demo: --journal is for the single table; with --tables use --dir")


def find_mosquitto(path: str | None = None) -> str | None:
    """The ``mosquitto`` binary on ``path`` (default: $PATH) or in the sbin directories, where Debian puts it
    and a user's PATH often does not look."""
    search = path if path is not None else os.environ.get("PATH", "")
    return shutil.which("mosquitto", path=os.pathsep.join([search, "/usr/sbin", "/sbin", "/usr/local/sbin"]))


def free_port(host: str, avoid: Collection[int] = ()) -> int:
    """A port nobody listens on now, none of ``avoid`` (the ports the demo has planned for its own listeners)."""
    return free_ports(host, 1, avoid)[0]


#: Where the demo picks a free port for a listener given as port 0: below the kernel's ephemeral range (Linux's
#: ``ip_local_port_range``, 32768-60999 by default), where the kernel picks the local port of every outgoing
#: connection. A port picked there could be taken by a table's link connecting to the broker between the plan
#: and the child's bind ("cannot bind ...: Address already in use", seen with 12 tables); below it, only
#: another listener can take it.
DEMO_PORTS = range(10000, 20000)


def free_ports(host: str, count: int, avoid: Collection[int] = ()) -> list[int]:
    """``count`` distinct free ports of :data:`DEMO_PORTS`, none of ``avoid``, from a random start (two demos
    started at once seldom try the same ports): every socket is held until all are picked, so no port is
    handed out twice."""
    held: list[socket.socket] = []
    ports: list[int] = []
    start = random.randrange(len(DEMO_PORTS))
    try:
        for step in range(len(DEMO_PORTS)):
            if len(ports) == count:
                break
            port = DEMO_PORTS[(start + step) % len(DEMO_PORTS)]
            if port in avoid:
                continue
            s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
            held.append(s)
            try:
                s.bind((host, port))
            except OSError:  # someone listens there (or it is in TIME_WAIT): the next one
                continue
            ports.append(port)
    finally:
        for s in held:
            s.close()
    if len(ports) < count:
        span = f"{DEMO_PORTS.start}-{DEMO_PORTS.stop - 1}"
        raise UsageError(f"shoe-controller demo: not {count} free ports on {host} in {span}")
    return ports


def port_is_free(host: str, port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def split_bind(option: str, text: str) -> tuple[str, int]:
    try:
        return parse_host_port(text, any_port=True)
    except AddressError as exc:
        raise UsageError(f"shoe-controller demo: {option} must be HOST:PORT: {exc}") from None


def plan_ports(option: str, text: str, count: int, taken: Collection[tuple[str, int]] = ()) -> list[tuple[str, int]]:
    """``count`` addresses from ``HOST:PORT`` onwards (PORT, PORT+1, ...), or free ports for PORT 0 (none of
    ``taken``, the addresses planned before); a port in use, or one planned already, is a one-line usage
    error."""
    host, base = split_bind(option, text)
    return plan_from(option, host, base, count, taken)


def plan_from(
    option: str, host: str, base: int, count: int, taken: Collection[tuple[str, int]] = ()
) -> list[tuple[str, int]]:
    """:func:`plan_ports` from a host and a first port already read."""
    if base == 0:
        return [(host, port) for port in free_ports(host, count, {p for _, p in taken})]
    planned = {p for _, p in taken}
    for port in range(base, base + count):
        if port in planned:
            raise UsageError(
                f"shoe-controller demo: {host}:{port} ({option}) is planned for another of the demo's listeners;"
                f" pass {option} {host}:0 for free ports"
            )
    if base + count - 1 > 65535:
        raise UsageError(f"shoe-controller demo: {option} {_join(host, base)}: not {count} ports from there")
    for port in range(base, base + count):
        if not port_is_free(host, port):
            raise UsageError(
                f"shoe-controller demo: {host}:{port} ({option}) is in use; pass {option} {host}:0 for free ports"
            )
    return [(host, port) for port in range(base, base + count)]


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """In the child: SIGTERM when the demo dies, even by SIGKILL (Linux's PR_SET_PDEATHSIG)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG = 1


@dataclass
class Child:
    """One process of the floor, in a process group of its own, its output in ``log``."""

    name: str
    proc: subprocess.Popen[bytes]
    log: Path
    #: A shoe-sim that has dealt its shoes exits 0: that is the end of its part, not a death.
    may_finish: bool = False

    def last_line(self) -> str:
        with contextlib.suppress(OSError):
            lines = [line.strip() for line in self.log.read_text(errors="replace").splitlines() if line.strip()]
            if lines:
                return lines[-1][-200:]
        return "no output"

    def signal_group(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)


@dataclass
class Table:
    id: str
    directory: Path
    scoreboard: tuple[str, int]
    #: The dealer screen's address (None: no players, no dealer screen).
    dealer: tuple[str, int] | None = None
    sim: Child | None = None
    daemon: Child | None = None
    board: Child | None = None
    board_url: str | None = None
    dealer_url: str | None = None

    @property
    def journal(self) -> Path:
        return self.directory / "journal.db"

    @property
    def link(self) -> Path:
        return self.directory / "shoe"

    @property
    def spots(self) -> Path:
        """The bet-spot reader's pseudo-terminal (the simulator's players bet on it)."""
        return self.directory / "spots"

    @property
    def chips(self) -> Path:
        """The chip registry the simulator writes and the table reads."""
        return self.directory / "chips.toml"


@dataclass
class Floor:
    """The demo floor's processes, started in order and stopped in reverse."""

    args: argparse.Namespace
    directory: Path
    seed: int
    mosquitto: str
    tables: list[Table] = field(default_factory=list)
    children: list[Child] = field(default_factory=list)
    broker_port: int = 0
    floor_bind: tuple[str, int] = ("127.0.0.1", 0)
    floor_public_key: str = ""  # made by make_keys

    @property
    def seats(self) -> int:
        """Seats at each table: the players', and at least a layout's seven."""
        return max(int(self.args.players), 7)

    @property
    def broker_url(self) -> str:
        return f"mqtt://127.0.0.1:{self.broker_port}"

    @property
    def archive(self) -> Path:
        return self.directory / "archive.db"

    @property
    def archive_url(self) -> str:
        return f"sqlite:///{self.archive}"

    # -- starting ------------------------------------------------------------------------------------
    def spawn(self, name: str, cmd: list[str], log: Path, *, may_finish: bool = False) -> Child:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        env.pop("NOTIFY_SOCKET", None)  # the daemons are not systemd's to watch
        with open(log, "ab") as out:
            proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,  # its own process group: the terminal's Ctrl-C reaches the demo only
                preexec_fn=_die_with_parent,  # spawned from the main thread only
            )
        child = Child(name, proc, log, may_finish=may_finish)
        self.children.append(child)
        return child

    def start_broker(self) -> None:
        home = self.directory / "mosquitto"
        home.mkdir(exist_ok=True)
        planned = [self.floor_bind] + [t.scoreboard for t in self.tables]
        planned += [t.dealer for t in self.tables if t.dealer is not None]
        self.broker_port = free_port("127.0.0.1", {port for _, port in planned})
        conf = home / "mosquitto.conf"
        lines = [
            "# The floor demo's private broker: loopback only, anonymous, in memory.",
            f"listener {self.broker_port} 127.0.0.1",
            "allow_anonymous true",
            "persistence false",
            "max_queued_messages 100000",  # as config/mosquitto.example.conf
            "max_inflight_messages 1000",
            "log_dest stderr",
            # As root Mosquitto drops to the mosquitto user, which may not exist and cannot read a private
            # temporary directory: the demo's broker stays the demo's user.
            *(["user root"] if os.geteuid() == 0 else []),
        ]
        conf.write_text("\n".join(lines) + "\n")
        child = self.spawn("the broker (mosquitto)", [self.mosquitto, "-c", str(conf)], home / "mosquitto.log")
        self.wait(lambda: _listening(self.broker_port), f"{child.name} to listen on port {self.broker_port}")

    def make_keys(self) -> None:
        """The floor's key (``floor.key``: the collector signs acks with it) and each table's signing key
        (``<table>/table.key``, its public key beside it in ``table.pub`` for the floor to enroll), as
        ``shoe-floor keygen`` and ``shoe-controller keygen`` write them. Each table's link signs with its key
        and both its processes believe only acks the floor's key signed ([floor] in its config.toml)."""
        from floor_protocol.signing import format_public_key

        self.floor_public_key = format_public_key(_key(self.floor_key))
        for table in self.tables:
            table.directory.mkdir(exist_ok=True)
            public = format_public_key(_key(table.directory / "table.key"))
            (table.directory / "table.pub").write_text(public + "\n")

    @property
    def floor_key(self) -> Path:
        return self.directory / "floor.key"

    def start_collector(self) -> None:
        """``shoe-floor serve`` with the floor's key (``floor.key``), each table's key enrolled first."""
        self.enroll_tables()
        host, port = self.floor_bind
        cmd = [
            sys.executable, "-m", "floor.cli", "serve", "--broker", self.broker_url, "--archive", self.archive_url,
            "--site", SITE, "--client-id", "demo-floor", "--bind", f"{host}:{port}",
            "--key", str(self.directory / "floor.key"),
        ]  # fmt: skip
        child = self.spawn("the collector (shoe-floor serve)", cmd, self.directory / "floor.log")
        self.wait(lambda: "subscribed" in _read(child.log), f"{child.name} to subscribe")

    def enroll_tables(self) -> None:
        """Each table's public key (``<table>/table.pub``) enrolled in the archive, as ``shoe-floor enroll``
        does; a kept ``--dir`` has them already (a table whose key changed is enrolled with ``replace``)."""
        from floor.archive import Archive

        with Archive(self.archive_url) as archive:
            keys = archive.table_keys()
            current = {k.table: k.public_key for k in keys if k.current}
            for table in self.tables:
                public = (table.directory / "table.pub").read_text().strip()
                if current.get(table.id) != public:
                    archive.enroll(table.id, public, replace=any(k.table == table.id for k in keys))

    def start_tables(self) -> None:
        for table in self.tables:
            table.directory.mkdir(exist_ok=True)
            table.link.unlink(missing_ok=True)
            self.write_config(table)
            number = int(table.id[1:])
            sim = [
                sys.executable, "-m", "hw_sim.cli", "--link", str(table.link), "--dialect", self.args.dialect,
                "--decks", str(self.args.decks), "--seed", str(self.seed + number - 1), "--shoes",
                str(self.args.shoes), "--pace", self.args.pace, "--truth", str(table.directory / "truth.jsonl"),
            ]  # fmt: skip
            for fault in self.args.fault:
                sim += ["--fault", fault]
            if self.args.players:
                table.spots.unlink(missing_ok=True)
                table.chips.unlink(missing_ok=True)
                sim += ["--players", str(self.args.players), "--seats", str(self.seats), "--spots-link",
                        str(table.spots), "--chips-out", str(table.chips),
                        # the players' cash buy-ins, entered on the table's money.sock as the dealer screen does
                        "--buy-ins", str(table.directory / "money.sock")]  # fmt: skip
            table.sim = self.spawn(
                f"table {table.id}'s shoe (shoe-sim)", sim, table.directory / "sim.log", may_finish=True
            )
        for table in self.tables:
            self.wait(table.link.exists, f"table {table.id}'s shoe to open its port")
            if self.args.players:
                t = table
                self.wait(
                    lambda t=t: t.spots.exists() and t.chips.exists(),  # type: ignore[misc]
                    f"table {table.id}'s bet-spot reader and chip registry",
                )
            host, port = table.scoreboard
            common = ["--config", str(table.directory / "config.toml"), "--journal", str(table.journal)]
            daemon = [
                sys.executable, "-m", "controller.cli", "run", *common, "--port", str(table.link),
                "--pin-factory", "mock", "--dialect", self.args.dialect, "--reveal", self.args.reveal,
                "--log-level", "info",
            ]  # fmt: skip
            table.daemon = self.spawn(
                f"table {table.id}'s daemon (shoe-controller run)", daemon, table.directory / "daemon.log"
            )
            # Its two companions, each a process of its own as on a real table, fed by the table's feed.
            link = [
                sys.executable, "-m", "controller.cli", "link", *common, "--floor", self.broker_url, "--site", SITE,
                "--table-id", table.id, "--log-level", "info",
            ]  # fmt: skip
            self.spawn(f"table {table.id}'s floor link (shoe-controller link)", link, table.directory / "link.log")
            dealer = "" if table.dealer is None else _join(*table.dealer)
            board = [
                sys.executable, "-m", "controller.cli", "board", *common, "--scoreboard", _join(host, port),
                "--dealer", dealer, "--log-level", "info",
            ]  # fmt: skip
            table.board = self.spawn(
                f"table {table.id}'s board (shoe-controller board)", board, table.directory / "board.log"
            )
        for table in self.tables:
            assert table.daemon is not None and table.board is not None
            log, board_log = table.daemon.log, table.board.log
            self.wait(lambda log=log: " ready in " in _read(log), f"table {table.id}'s daemon to be ready")  # type: ignore[misc]
            self.wait(lambda log=board_log: "board on " in _read(log), f"table {table.id}'s board")  # type: ignore[misc]
            table.board_url = _scoreboard_url(_read(board_log))
            if table.dealer is not None:
                self.wait(
                    lambda log=board_log: _dealer_said(_read(log)),  # type: ignore[misc]
                    f"table {table.id}'s dealer screen",
                )
                table.dealer_url = _dealer_url(_read(board_log))

    def write_config(self, table: Table) -> None:
        """The table's settings that have no command-line flag: its name, its decks, (ASCII shoes have no
        buttons) declaring each coup by itself, its keys (:meth:`make_keys`) and, with players, its bet-spot
        reader and chip registry (the simulator's)."""
        auto_declare = "true" if self.args.dialect == "ascii" else "false"
        text = f'[table]\nname = "Table {table.id}"\ndecks = {self.args.decks}\nauto_declare = {auto_declare}\n'
        key = table.directory / "table.key"
        text += f'\n[floor]\ntable = "{table.id}"\nkey_file = "{key}"\nfloor_public_key = "{self.floor_public_key}"\n'
        if self.args.players:
            text += f'\n[spots]\nport = "{table.spots}"\nchips = "{table.chips}"\nseats = {self.seats}\n'
        (table.directory / "config.toml").write_text(text)

    # -- watching ------------------------------------------------------------------------------------
    def dead(self) -> Child | None:
        """The first child that has exited when it should not have (a shoe-sim may finish with 0)."""
        for child in self.children:
            rc = child.proc.poll()
            if rc is not None and not (child.may_finish and rc == 0):
                return child
        return None

    def check_children(self) -> None:
        child = self.dead()
        if child is not None:
            raise DemoError(f"{child.name} exited with {child.proc.returncode}: {child.last_line()} ({child.log})")

    def wait(self, ready: Callable[[], bool], what: str, timeout: float = START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            self.check_children()
            if time.monotonic() > deadline:
                raise DemoError(f"timed out after {timeout:g} s waiting for {what}")
            time.sleep(0.05)

    def dealt(self) -> bool:
        return all(t.sim is not None and t.sim.proc.poll() == 0 for t in self.tables)

    def drain(self) -> None:
        """Wait until every table's journal is acknowledged by the floor and has stopped growing."""
        #: per table: (records, since when) while its journal is fully acknowledged and unchanged
        settled: dict[str, tuple[int, float]] = {}

        def done() -> bool:
            now = time.monotonic()
            for table in self.tables:
                count, ack = journal_figures(table.journal)
                if count != ack:
                    settled.pop(table.id, None)
                elif settled.get(table.id, (None, 0.0))[0] != count:
                    settled[table.id] = (count, now)
            return len(settled) == len(self.tables) and all(now - since >= SETTLE for _, since in settled.values())

        self.wait(done, "the floor to acknowledge every table's journal", timeout=DRAIN_TIMEOUT)

    # -- stopping ------------------------------------------------------------------------------------
    def stop(self, children: list[Child] | None = None) -> None:
        """SIGTERM to each process group (the tables, then the collector, then the broker: the reverse of the
        start), then SIGKILL to whatever has not stopped within :data:`STOP_TIMEOUT`."""
        for child in reversed(children if children is not None else self.children):
            if child.proc.poll() is None:
                child.signal_group(signal.SIGTERM)
                try:
                    child.proc.wait(STOP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    child.signal_group(signal.SIGKILL)
                    child.proc.wait()
            child.signal_group(signal.SIGKILL)  # anything it left in its group

    # -- printing ------------------------------------------------------------------------------------
    def addresses(self) -> Iterator[str]:
        host, port = self.floor_bind
        yield f"demo: a floor of {len(self.tables)} table{'s' if len(self.tables) > 1 else ''}, site {SITE!r}"
        yield f"  broker    {self.broker_url}   (Mosquitto, config {self.directory / 'mosquitto' / 'mosquitto.conf'})"
        yield f"  archive   {self.archive_url}"
        yield f"  floor     http://{host}:{port}/   (shoe-floor serve --bind)"
        for table in self.tables:
            board = table.board_url or "scoreboard off (see its log)"
            dealer = ""
            if table.dealer is not None:
                dealer = f"   dealer {table.dealer_url or 'off (see its board.log)'}"
            yield f"  table {table.id:<4}{board}{dealer}   journal {table.journal}"
        yield f"  logs      {self.directory}/*.log, {self.directory}/T*/*.log"
        script = Path(sys.executable).with_name("shoe-floor")  # the venv's, which need not be on PATH
        shoe_floor = os.path.relpath(script) if script.exists() else "shoe-floor"
        yield f"  try       {shoe_floor} history --archive {self.archive_url} --last 5"
        pace = {"real": "a dealer's pace", "fast": "full speed"}.get(self.args.pace, f"{self.args.pace} s a card")
        shoes = f"{self.args.shoes} shoe{'s' if self.args.shoes > 1 else ''}"
        players = f", {self.args.players} players a table" if self.args.players else ", no players"
        yield f"demo: dealing {shoes} at each table at {pace}{players} (seed {self.seed}); Ctrl-C to stop"

    def status(self) -> str:
        """One line: coups dealt, and records acknowledged by the floor out of those journaled."""
        coups = records = acked = 0
        for table in self.tables:
            with contextlib.suppress(Exception):  # a journal still being created counts as empty
                c, n, _ = journal_summary(table.journal)
                coups, records = coups + c, records + n
                acked += max(journal_figures(table.journal)[1], 0)
        return f"demo: {coups} coups dealt; the floor has archived {acked} of {records} records"

    def summary(self) -> tuple[list[str], bool]:
        """One line per table (coups, records, archived, verified) from the journals and ``shoe-floor verify``."""
        verify = subprocess.run(
            [sys.executable, "-m", "floor.cli", "verify", "--archive", self.archive_url, "--json"],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        reports = {}
        for line in verify.stdout.splitlines():
            with contextlib.suppress(ValueError, KeyError, TypeError):
                report = json.loads(line)
                reports[str(report["table"])] = report
        lines = [f"  {'table':<6} {'coups':>6} {'records':>8} {'archived':>9}  verify"]
        all_ok = verify.returncode == 0
        for table in self.tables:
            coups, count, last = journal_summary(table.journal)
            report = reports.get(table.id, {})
            archived = int(report.get("records", 0))
            ok = bool(report.get("ok")) and archived == count and int(report.get("head", 0)) == last
            all_ok = all_ok and ok
            lines.append(f"  {table.id:<6} {coups:>6} {count:>8} {archived:>9}  {'ok' if ok else 'PROBLEM'}")
        return lines, all_ok


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _listening(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
        return True
    return False


def _scoreboard_url(log: str) -> str | None:
    """The address the board logged (``board on http://host:port/, fed by ...``), None if it has none."""
    for line in log.splitlines():
        _, sep, rest = line.partition("board on ")
        if sep:
            return rest.split()[0].rstrip(",")
    return None


def _dealer_url(log: str) -> str | None:
    """The dealer screen's address the board logged (``dealer screen on http://host:port/, fed by ...``)."""
    for line in log.splitlines():
        _, sep, rest = line.partition("dealer screen on ")
        if sep:
            return rest.split()[0].rstrip(",")
    return None


def _dealer_said(log: str) -> bool:
    """Whether the board has said where its dealer screen is, or that it cannot bind it."""
    return "dealer screen on " in log or "dealer screen: cannot bind" in log


def _join(host: str, port: int) -> str:
    """``host:port`` as the table's options read it (``[v6]:port`` for IPv6)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def plan_listeners(
    args: argparse.Namespace,
) -> tuple[list[tuple[str, int]], list[tuple[str, int]] | None, tuple[str, int]]:
    """Every listener of the floor demo, planned at once so that none clashes with another: the scoreboards
    (``--scoreboard`` onwards), the dealer screens (``--dealer`` onwards, by default the ports right after the
    scoreboards'; None without players) and the floor's page (``--floor-bind``)."""
    floor_bind = plan_ports("--floor-bind", args.floor_bind, 1)[0]
    boards = plan_ports("--scoreboard", args.scoreboard, args.tables, [floor_bind])
    if not args.players:
        return boards, None, floor_bind
    if args.dealer is not None:
        dealers = plan_ports("--dealer", args.dealer, args.tables, [floor_bind, *boards])
    else:
        host, base = split_bind("--scoreboard", args.scoreboard)
        start = 0 if base == 0 else base + args.tables
        dealers = plan_from("--dealer", host, start, args.tables, [floor_bind, *boards])
    return boards, dealers, floor_bind


def journal_figures(path: Path) -> tuple[int, int]:
    """(records in the journal, the floor's ack stored in it), read-only beside the running daemon."""
    from controller.journal import Journal, JournalError

    if not path.exists():
        return 0, 0
    try:
        with Journal.open(str(path), create=False, read_only=True) as journal:
            return journal.head()[0], journal.floor_ack() or 0
    except JournalError:
        return 0, -1  # not readable yet (being created): not done


def _key(path: Path) -> Ed25519PrivateKey:
    """The key in ``path``, made there first if there is none (a kept ``--dir`` keeps its keys)."""
    from controller.keyfiles import load_private_key, write_private_key
    from floor_protocol.signing import generate_key

    if path.exists():
        return load_private_key(path)
    key = generate_key()
    write_private_key(path, key)
    return key


def journal_summary(path: Path) -> tuple[int, int, int]:
    """(coups, records, the last record's seq) of a table's journal."""
    from controller.journal import Journal

    with Journal.open(str(path), create=False, read_only=True) as journal:
        return len(journal.coups()), journal.count(), journal.head()[0]


def run(args: argparse.Namespace) -> int:
    check(args)
    boards, dealers, floor_bind = plan_listeners(args)
    mosquitto = find_mosquitto()
    if mosquitto is None:
        print(f"shoe-controller demo: {MOSQUITTO_HINT}", file=sys.stderr)
        return 1
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(2), "big")
    with contextlib.ExitStack() as stack:
        if args.dir:
            directory = Path(args.dir).resolve()
            try:
                directory.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise UsageError(f"shoe-controller demo: --dir {args.dir}: {exc.strerror}") from None
        else:
            directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="shoe-floor-demo-")))
        floor = Floor(args, directory, seed, mosquitto, floor_bind=floor_bind)
        floor.tables = [
            Table(f"T{n}", directory / f"T{n}", boards[n - 1], None if dealers is None else dealers[n - 1])
            for n in range(1, args.tables + 1)
        ]
        return _run(floor)
    return 1  # pragma: no cover - the with block returns


def _run(floor: Floor) -> int:
    # SIGTERM and SIGHUP stop the demo as Ctrl-C does: the finally below stops every child.
    previous = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        floor.make_keys()
        floor.start_broker()
        floor.start_collector()
        floor.start_tables()
        for line in floor.addresses():
            print(line, flush=True)
        next_status = time.monotonic() + STATUS_EVERY
        while not floor.dealt():
            floor.check_children()
            if time.monotonic() >= next_status:
                print(floor.status(), flush=True)
                next_status += STATUS_EVERY
            time.sleep(0.2)
        print("demo: every shoe dealt; waiting for the floor to acknowledge every table's journal", flush=True)
        floor.drain()
        floor.stop([t.daemon for t in floor.tables if t.daemon is not None])
        lines, ok = floor.summary()
        for line in lines:
            print(line, flush=True)
        if not ok:
            print(f"demo: the archive does not match every journal (shoe-floor verify --archive {floor.archive_url})")
            return 1
        print("demo: the floor archived every table's journal, record for record; chains verified", flush=True)
        return 0
    except DemoError as exc:
        print(f"shoe-controller demo: {exc}; stopping the demo", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        print("demo: stopping every table, the collector and the broker", flush=True)
        return 0
    finally:
        # A second Ctrl-C while stopping must not leave children behind: ignore it until they are down.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        floor.stop()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt
