"""The backends of the link contract suite: one set of tests, four ways to reach a shoe.

``memory``: the simulator core on a virtual clock, bytes through the fault stage, no I/O (fast).
``pty``: ``shoe-sim`` as a real process on a pseudo-terminal, opened with ``serial.serial_for_url(path)``.
``tcp``: ``shoe-sim`` as a real process on a TCP port, opened as ``socket://127.0.0.1:PORT``.
``real``: a real shoe on the port named by env ``SHOE_PORT`` (``SHOE_BAUD``, default 115200;
``SHOE_DIALECT``, default binary; ``SHOE_SECONDS`` of dealing to watch, default 30). No truth log there:
only the link invariants are checked. Skipped when ``SHOE_PORT`` is not set.

Every backend is closed by the fixture: the process killed and waited for, the port closed, and the test
fails if a file descriptor was left open.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest
import serial

from hw_sim.core import DealerMode, Dialect, ShoeSimulator, SimConfig
from hw_sim.faults import FaultPlan, parse_fault
from hw_sim.link import MemoryLink
from hw_sim.truth import TruthLog, read_truth

ROOT = Path(__file__).resolve().parents[2]


class Link(Protocol):
    name: str
    #: Number of decks and shoes this backend deals in the contract tests (smaller for real processes).
    decks: int
    shoes: int

    @property
    def finished(self) -> bool: ...

    def read(self) -> list[bytes]: ...

    def write(self, data: bytes) -> None: ...

    def now(self) -> float: ...

    def truth(self) -> list[dict[str, Any]] | None: ...

    def close(self) -> None: ...


class MemoryBackend:
    name = "memory"

    def __init__(self, dialect: str, faults: dict[str, float], seed: int, decks: int, shoes: int) -> None:
        self.decks, self.shoes = decks, shoes
        plan = FaultPlan({parse_fault(k): v for k, v in faults.items()})
        config = SimConfig(
            dialect=Dialect(dialect), decks=decks, shoes=shoes, seed=seed, pace=0.0, dealer=DealerMode.SELF, faults=plan
        )
        self.sim = ShoeSimulator(config, TruthLog(keep=True))
        self.link = MemoryLink(self.sim)

    @property
    def finished(self) -> bool:
        return self.link.finished

    def read(self) -> list[bytes]:
        return self.link.read()

    def write(self, data: bytes) -> None:
        self.link.write(data)

    def now(self) -> float:
        return self.link.now

    def truth(self) -> list[dict[str, Any]] | None:
        return self.sim.truth.events

    def close(self) -> None:
        """Nothing to release."""


def _read_listening_line(proc: subprocess.Popen[str], timeout: float = 15.0) -> str:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        raise AssertionError("shoe-sim did not say where it listens")
    line = proc.stdout.readline()
    assert line.startswith("shoe-sim: listening on "), line
    return line


class ProcessBackend:
    """``shoe-sim`` as a real process, reached through pyserial."""

    def __init__(self, kind: str, tmp: Path, dialect: str, faults: dict[str, float], seed: int, decks: int, shoes: int):
        self.name = kind
        self.decks, self.shoes = decks, shoes
        self.truth_path = tmp / "truth.jsonl"
        args = [sys.executable, "-m", "hw_sim.cli", "--dialect", dialect, "--dealer", "self", "--pace", "fast"]
        args += ["--decks", str(decks), "--shoes", str(shoes), "--seed", str(seed), "--truth", str(self.truth_path)]
        args += ["--settle", "0.2"]
        for name, rate in faults.items():
            args += ["--fault", f"{name}={rate}"]
        if kind == "pty":
            self.link_path = tmp / "shoe0"
            args += ["--link", str(self.link_path)]
        else:
            args += ["--tcp", "127.0.0.1:0"]
        self.proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, text=True)
        self.port: Any = None
        self._eof = False
        try:
            line = _read_listening_line(self.proc)
            url = str(self.link_path) if kind == "pty" else line.split()[3].rstrip(",")
            self.port = serial.serial_for_url(url, timeout=0.05)
        except BaseException:
            self.close()
            raise

    @property
    def finished(self) -> bool:
        return self.proc.poll() is not None and self._eof

    def read(self) -> list[bytes]:
        if self._eof:
            return []
        exited = self.proc.poll() is not None
        try:
            data = self.port.read(max(1, self.port.in_waiting))
        except (serial.SerialException, OSError):
            self._eof = True
            return []
        if exited and not data:
            self._eof = True
        return [data] if data else []

    def write(self, data: bytes) -> None:
        if self._eof:
            return
        try:
            self.port.write(data)
        except (serial.SerialException, OSError):
            self._eof = True

    def now(self) -> float:
        return time.monotonic()

    def truth(self) -> list[dict[str, Any]] | None:
        return read_truth(str(self.truth_path))

    def close(self) -> None:
        if self.port is not None:
            self.port.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


class RealShoeBackend:
    """A real shoe on ``SHOE_PORT``: watched for ``SHOE_SECONDS`` while a dealer deals."""

    name = "real"
    decks = shoes = 0

    def __init__(self) -> None:
        self.port = serial.serial_for_url(
            os.environ["SHOE_PORT"], baudrate=int(os.environ.get("SHOE_BAUD", "115200")), timeout=0.05
        )
        self.until = time.monotonic() + float(os.environ.get("SHOE_SECONDS", "30"))

    @property
    def finished(self) -> bool:
        return time.monotonic() >= self.until

    def read(self) -> list[bytes]:
        data = self.port.read(max(1, self.port.in_waiting))
        return [data] if data else []

    def write(self, data: bytes) -> None:
        self.port.write(data)

    def now(self) -> float:
        return time.monotonic()

    def truth(self) -> list[dict[str, Any]] | None:
        return None

    def close(self) -> None:
        self.port.close()


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else set()


LinkFactory = Callable[..., Link]

BACKENDS = [
    pytest.param("memory", id="memory"),
    pytest.param("pty", id="pty", marks=pytest.mark.e2e),
    pytest.param("tcp", id="tcp", marks=pytest.mark.e2e),
    pytest.param(
        "real",
        id="real",
        marks=[pytest.mark.e2e, pytest.mark.skipif(not os.environ.get("SHOE_PORT"), reason="SHOE_PORT not set")],
    ),
]


@pytest.fixture(params=BACKENDS)
def open_link(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LinkFactory]:
    """A factory: ``open_link(dialect, faults, seed=...)`` -> a started shoe on this backend."""
    kind: str = request.param
    links: list[Link] = []
    fds_before = _open_fds()

    def factory(dialect: str, faults: dict[str, float], seed: int = 7) -> Link:
        link: Link
        if kind == "memory":
            link = MemoryBackend(dialect, faults, seed, decks=8, shoes=2)
        elif kind == "real":
            if os.environ.get("SHOE_DIALECT", "binary") != dialect:
                pytest.skip(f"the shoe on SHOE_PORT speaks {os.environ.get('SHOE_DIALECT', 'binary')}")
            link = RealShoeBackend()
        else:
            link = ProcessBackend(kind, tmp_path, dialect, faults, seed, decks=1, shoes=2)
        links.append(link)
        return link

    yield factory
    for link in links:
        link.close()
    leaked = _open_fds() - fds_before
    assert not leaked, f"file descriptors left open: {sorted(leaked)}"
