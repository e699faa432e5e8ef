"""Real servers for the floor-link tests: Debian's Mosquitto and PostgreSQL, started in a test's directory.

Each server runs as a child process on a free loopback port with its files under the given directory, and is
stopped (or killed, for the fault tests) by the test. Under ``CI=true`` a missing server binary fails the
test instead of skipping it (scripts/install-system-deps installs both).
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

MOSQUITTO = "/usr/sbin/mosquitto"


#: The ports :func:`free_port` hands out: below Linux's ephemeral range (32768-60999, where the kernel picks
#: the port of every outgoing connection and of every bind to port 0), so that a port handed out and not yet
#: listened on is never taken by the kernel in the meantime.
PORTS = range(20000, 32000)


def _worker_ports() -> range:
    """This process's own share of :data:`PORTS`: a pytest-xdist worker (``gw0``, ``gw1`` ...) never hands out
    a port another worker may hand out too."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    count = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    share = len(PORTS) // count
    start = PORTS.start + (int(worker) % count) * share if worker.isdigit() else PORTS.start
    return range(start, start + share)


_next_port = itertools.count()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now, for a server the caller starts: the one helper of
    the tests and the benchmarks. Each call in a process gives another port (two servers started one after the
    other never get the same one), from this worker's share of :data:`PORTS`."""
    ports = _worker_ports()
    for _ in range(len(ports)):
        port = ports[next(_next_port) % len(ports)]
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:  # in use (or in TIME_WAIT): the next one
                continue
        return port
    raise RuntimeError(f"no free port in {ports}")


def need(path: str | None, what: str) -> str:
    """The binary at ``path``, or skip (fail under CI=true) naming the Debian package."""
    if path and os.access(path, os.X_OK):
        return path
    message = f"{what} is not installed (scripts/install-system-deps installs it)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before listening on {port}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listening on 127.0.0.1:{port} after {timeout} s")


@dataclass
class Mosquitto:
    """A Mosquitto broker on ``port``; ``extra`` config lines (listeners with TLS, ACL, passwords) added by
    the caller. :meth:`restart` keeps the port (and the persistence file), as a broker restarted by systemd."""

    directory: Path
    port: int = field(default_factory=free_port)
    extra: list[str] = field(default_factory=list)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def config(self) -> Path:
        path = self.directory / "mosquitto.conf"
        lines = [
            "per_listener_settings false",
            f"persistence_location {self.directory}/",
            "persistence true",
            "max_queued_messages 100000",  # as config/mosquitto.example.conf: a busy collector is not cut short
            "max_inflight_messages 1000",  # ditto: the Receive Maximum a publishing table may use
            f"log_dest file {self.directory}/mosquitto.log",
            # As root Mosquitto drops to the mosquitto user, which cannot read a pytest tmp_path (0700 root):
            # its log, and the test's password file and certificates. Stay root for the tests.
            *(["user root"] if os.geteuid() == 0 else []),
            *(self.extra or [f"listener {self.port} 127.0.0.1", "allow_anonymous true"]),
        ]
        path.write_text("\n".join(lines) + "\n")
        return path

    def start(self) -> Mosquitto:
        binary = need(MOSQUITTO, "mosquitto (Debian package mosquitto)")
        self.directory.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [binary, "-c", str(self.config())], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        wait_port(self.port, self.proc)
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def kill(self) -> None:
        """SIGKILL: what it had in memory and not yet persisted is lost, as in a crash."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def log(self) -> str:
        path = self.directory / "mosquitto.log"
        return path.read_text(errors="replace") if path.exists() else ""


def _postgres_bin(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


@dataclass
class Postgres:
    """A throwaway PostgreSQL cluster (Debian's binaries) in ``directory``, on a free loopback port, with
    trust authentication for the ``postgres`` role. Runs as the ``postgres`` user when we are root (the
    server refuses to run as root)."""

    directory: Path
    port: int = field(default_factory=free_port)
    proc_user: str | None = None

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        prefix = ["runuser", "-u", self.proc_user, "--"] if self.proc_user else []
        return subprocess.run([*prefix, *args], capture_output=True, text=True, check=True, timeout=120)

    def start(self) -> Postgres:
        initdb = need(_postgres_bin("initdb"), "PostgreSQL (Debian package postgresql)")
        pg_ctl = need(_postgres_bin("pg_ctl"), "PostgreSQL (Debian package postgresql)")
        if os.geteuid() == 0:
            # The server user must reach its directory: a pytest tmp_path under root's 0700 tree will not do.
            self.proc_user = "postgres"
            self.directory = Path(tempfile.mkdtemp(prefix="shoe-controller-pg-"))
            shutil.chown(self.directory, self.proc_user)
        self.directory.mkdir(parents=True, exist_ok=True)
        data = self.directory / "data"
        if not data.exists():
            self._run(initdb, "-D", str(data), "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8")
        options = f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(pg_ctl, "-D", str(data), "-o", options, "-l", str(self.directory / "server.log"), "-w", "start")
        return self

    def stop(self) -> None:
        pg_ctl = _postgres_bin("pg_ctl")
        data = self.directory / "data"
        if pg_ctl and (data / "postmaster.pid").exists():
            with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
                self._run(pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop")
        if self.proc_user is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
