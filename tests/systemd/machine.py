"""A Debian 12 machine booted with its own systemd (systemd-nspawn -b), for driving the real unit.

The root file system is built once with debootstrap and cached under :data:`CACHE` (keyed by what goes
into it, so a change of the package list builds a new one); every test run boots a fresh copy of it. The
project gets into the machine the way docs/install.md says (a venv with ``--system-site-packages`` and
``pip install "$PWD[pi]"`` from the source tree), with the dependencies' wheels built on the host first
(``--no-index --find-links``), so that nothing inside the machine needs a network: the machine has a
private network with nothing but its own loopback.

Commands run inside with ``nsenter`` into the machine's PID 1 (``--register=no`` leaves no machinectl).
Facts that the boot line below depends on:

* ``--register=no --keep-unit``: no systemd-machined on the host (or no systemd at all as PID 1);
* ``SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1``: the machine gets cgroup v2, as a Bookworm Pi has;
* ``--system-call-filter=bpf``: nspawn's own seccomp filter blocks bpf(2), and without it the systemd
  inside silently skips ``DeviceAllow=`` and ``IPAddressDeny=`` (the tests check both are enforced).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path

from tests.waiting import until

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("SHOE_TEST_MACHINE_CACHE", "/var/cache/shoe-controller-tests"))
SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
PACKAGES = ("systemd", "systemd-sysv", "dbus", "python3", "python3-venv")
#: Bump when base_root() builds a different tree from the same packages (it is part of the cache key).
ROOT_RECIPE = "1: console-getty and apt timers masked, hostname shoe-test"
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_SOURCE_SKIP = shutil.ignore_patterns(
    ".git", ".venv", "__pycache__", "*.egg-info", "build", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis"
)


def _key(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:12]


def _atomic_build(target: Path, build: Callable[[Path], None]) -> Path:
    """Build into a scratch directory beside *target*, then rename it into place (a crash leaves no half)."""
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = target.with_name(f"{target.name}.building-{os.getpid()}")
    if scratch.exists():
        shutil.rmtree(scratch)
    build(scratch)
    try:
        scratch.rename(target)
    except OSError:
        if not target.exists():
            raise
        shutil.rmtree(scratch)  # another run built it meanwhile
    return target


def base_root() -> Path:
    """The cached Debian root: debootstrap minbase with systemd, dbus and Python (about 300 MB, 2 minutes)."""
    target = CACHE / f"root-{SUITE}-{_key(SUITE, ROOT_RECIPE, *PACKAGES)}"

    def build(scratch: Path) -> None:
        subprocess.run(
            ["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", SUITE, str(scratch), MIRROR],
            check=True,
            capture_output=True,
            timeout=900,
        )
        (scratch / "etc" / "hostname").write_text("shoe-test\n")
        # No console login (the machine is driven through nsenter), no apt timers waking up mid-test.
        for unit in ("console-getty.service", "apt-daily.timer", "apt-daily-upgrade.timer"):
            (scratch / "etc" / "systemd" / "system" / unit).unlink(missing_ok=True)
            (scratch / "etc" / "systemd" / "system" / unit).symlink_to("/dev/null")

    return _atomic_build(target, build)


def wheels() -> Path:
    """Wheels of the project's dependencies (the table's and the floor server's) and of its build backend,
    built on the host, cached by pyproject.toml's dependency list (the machine's Python is the host's: both are
    Bookworm's 3.11)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    extras = project["project"]["optional-dependencies"]
    table = extras["table"]  # the [pi] extra is the table's, on a Pi
    requirements = [*project["project"]["dependencies"], *table, *extras["floor"], *project["build-system"]["requires"]]
    target = CACHE / f"wheels-{_key(sys.version, *requirements)}"

    def build(scratch: Path) -> None:
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir", str(scratch), *requirements],
            check=True,
            capture_output=True,
            timeout=900,
        )

    return _atomic_build(target, build)


class Machine:
    """One booted copy of the root. :meth:`sh` runs a shell command inside, as root."""

    def __init__(self, workdir: Path) -> None:
        self.root = workdir / "root"
        self.name = f"shoe-test-{os.getpid()}"
        self.log_path = workdir / "console.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.leader = 0

    def prepare(self) -> None:
        """A fresh copy of the cached root, with the source tree in /root/shoe-controller."""
        subprocess.run(["cp", "-a", "--reflink=auto", str(base_root()), str(self.root)], check=True, timeout=300)
        shutil.copytree(ROOT, self.root / "root" / "shoe-controller", ignore=_SOURCE_SKIP, symlinks=True)

    def boot(self, timeout: float = 300) -> None:
        """Boot the copy and wait until systemd says it is up (a few seconds here; the bound is for a CI machine
        under load, well inside the systemd tests' own 2,400 s)."""
        env = dict(os.environ, SYSTEMD_NSPAWN_UNIFIED_HIERARCHY="1")
        argv = [
            "systemd-nspawn", "--quiet", "-D", str(self.root), "--machine", self.name, "--boot",
            "--register=no", "--keep-unit", "--system-call-filter=bpf", "--private-network",
            "--console=passive", f"--bind-ro={wheels()}:/wheels",
        ]  # fmt: skip
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env)
        started = time.monotonic()
        deadline = started + timeout
        while True:
            self._check_alive()
            self.leader = self._container_init()
            if self.leader:
                try:
                    left = max(5.0, deadline - time.monotonic())
                    result = self.sh("systemctl is-system-running --wait", check=False, timeout=left)
                except subprocess.TimeoutExpired:
                    said = f"systemctl is-system-running --wait in PID {self.leader} did not return"
                else:
                    if result.stdout.strip() in ("running", "degraded"):
                        return
                    said = f"PID {self.leader}: {result.stdout.strip()} {result.stderr.strip()}"
            else:
                said = "no container PID 1 yet"
            if time.monotonic() > deadline:
                waited = time.monotonic() - started
                raise TimeoutError(f"the machine did not boot in {waited:.0f} s: {said}\n{self.console()}")
            time.sleep(0.2)

    def _container_init(self) -> int:
        """The host PID of the container's PID 1, or 0 while there is none.

        nspawn's first child is a transient "outer child" that sets the container up and forks the real init
        into a new PID namespace; taking whichever child shows first raced with it (CI once entered the outer
        child, which had gone, and waited the whole timeout on nothing). The init is the descendant whose
        ``NSpid`` ends in 1.
        """
        assert self.proc is not None
        pending = [self.proc.pid]
        while pending:
            pid = pending.pop()
            try:
                children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            except OSError:
                continue
            for child in map(int, children):
                try:
                    status = Path(f"/proc/{child}/status").read_text()
                except OSError:
                    continue
                nspids = next((line.split()[1:] for line in status.splitlines() if line.startswith("NSpid:")), [])
                if len(nspids) > 1 and nspids[-1] == "1":
                    return child
                pending.append(child)
        return 0

    def _check_alive(self) -> None:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise RuntimeError(f"systemd-nspawn exited with {self.proc.returncode}: {self.console()}")

    def console(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def sh(self, script: str, *, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """``sh -c script`` inside the machine, as root, with a clean environment."""
        self._check_alive()
        argv: Sequence[str] = [
            "nsenter", "--target", str(self.leader), "--all",
            "env", "-i", f"PATH={PATH}", "LANG=C.UTF-8", "SYSTEMD_PAGER=", "SYSTEMD_COLORS=0",
            "sh", "-c", f"cd / && {script}",
        ]  # fmt: skip
        result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
        if check and result.returncode != 0:
            output = result.stdout + result.stderr
            raise AssertionError(f"in the machine: {script!r} exited {result.returncode}:\n{output}")
        return result

    def show(self, unit: str, prop: str) -> str:
        return self.sh(f"systemctl show -P {prop} {unit}").stdout.strip()

    def wait_for(self, what: str, predicate: Callable[[], object], timeout: float) -> None:
        until(predicate, timeout, f"{what} ({timeout:.0f} s)", every=0.25)

    def poweroff(self, timeout: float = 60) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None and self.leader:
            subprocess.run(
                ["nsenter", "--target", str(self.leader), "--all", "systemctl", "poweroff", "--no-block"],
                capture_output=True,
                timeout=30,
                check=False,
            )
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()  # nspawn takes the machine down with it
                self.proc.wait(timeout=30)
        self.proc = None

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
