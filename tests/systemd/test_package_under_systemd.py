"""The Debian package under a real systemd: Debian 12 booted in a container, the package built by
scripts/build-deb installed with apt as docs/install.md says (no venv made by hand), driven with systemctl.

One machine, one life of a table: the previous release's package installed (it enables nothing, makes the
users and the state directory), configured and dealing against the simulator; upgraded to this tree's package
mid-shoe (the table stopped and started again, the casino's configuration kept, the journal at this tree's
schema version: the table migrates it as it starts; 0.2.0 already wrote schema 2) and dealing on, nothing
lost and ``journal verify`` intact; removed (journal and configuration kept); purged (it says what it
deletes, keeps the journal); this tree's package installed afresh and a whole shoe dealt; purged with the
journal.

The packages are built on the host once per input (cached beside tests/systemd/machine.py's root and wheels,
keyed by the hash of what goes into them), from the machine's wheels with no index. The previous release is
the tree of the commit whose message starts "Version 0.2.0" (``git worktree add``), packaged by this tree's
script. Needs what the other container tests need (root, systemd-nspawn, debootstrap) and dpkg-deb.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.journal.schema import SCHEMA_VERSION
from tests.e2e.harness import Harness
from tests.e2e.test_daemon_e2e import assert_matches_truth
from tests.systemd.machine import CACHE, ROOT, Machine, _atomic_build, wheels
from tests.systemd.test_under_systemd import _require, coup_number, journal

pytestmark = [pytest.mark.systemd, pytest.mark.serial, pytest.mark.xdist_group("systemd"), pytest.mark.timeout(2400)]

UNIT = "shoe-controller"
UNITS = ("shoe-controller", "shoe-controller-board", "shoe-controller-link", "shoe-controller-backup.timer")
VENV = "/opt/shoe-controller/venv"
STATE = "/var/lib/shoe-controller"
SIM_LINK = "/run/shoe-sim/shoe"
PREVIOUS_RELEASE = "Version 0.2.0"
CONFIG = f"""\
# the casino's configuration (an upgrade must keep it)
[table]
decks = 2
[shoe]
port = "{SIM_LINK}"
[gpio]
pin_factory = "mock"
"""
# apt as an unattended upgrade runs it: no questions; a configuration file the casino edited is kept.
APT = (
    "DEBIAN_FRONTEND=noninteractive apt-get --yes -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold"
)
_SKIP = {".git", ".venv", "__pycache__", "build", "dist", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis"}


def _files_hash(top: Path) -> str:
    """The hash of every file's path and bytes under *top* (what the package is built from)."""
    digest = hashlib.sha256()
    for directory, subdirs, files in os.walk(top):
        subdirs[:] = sorted(d for d in subdirs if d not in _SKIP and not d.endswith(".egg-info"))
        for name in sorted(files):
            path = Path(directory, name)
            if path.is_symlink() or not path.is_file():
                continue
            digest.update(str(path.relative_to(top)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def _inputs_hash(tree: Path) -> str:
    """The hash of what goes into *tree*'s package: the project's packages (pyproject.toml's list), its metadata
    files, the units and the configuration (an edit to the tests or the docs builds no new package)."""
    project = tomllib.loads((tree / "pyproject.toml").read_text())
    packages = sorted({p.rstrip("*") for p in project["tool"]["setuptools"]["packages"]["find"]["include"]})
    digest = hashlib.sha256()
    for name in ("pyproject.toml", "README.md", "LICENSE", "CHANGELOG.md"):
        digest.update(name.encode() + b"\0" + (tree / name).read_bytes() + b"\0")
    for name in (*packages, "systemd", "config"):
        digest.update(name.encode() + b"\0" + _files_hash(tree / name).encode() + b"\0")
    return digest.hexdigest()[:12]


def _recipe_hash() -> str:
    """The packaging recipe: scripts/build-deb and packaging/ of this tree (they build the older package too)."""
    digest = hashlib.sha256((ROOT / "scripts" / "build-deb").read_bytes())
    digest.update(_files_hash(ROOT / "packaging").encode())
    return digest.hexdigest()[:12]


def _build(tree: Path, key: str) -> Path:
    def build(scratch: Path) -> None:
        env = dict(os.environ, PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheels()), BUILD_DEB_NO_LINTIAN="1")
        env.pop("SOURCE_DATE_EPOCH", None)  # each tree's own commit time
        result = subprocess.run(
            [str(ROOT / "scripts" / "build-deb"), "--tree", str(tree), "--out", str(scratch)],
            capture_output=True,
            text=True,
            timeout=1200,
            env=env,
            check=False,
        )
        assert result.returncode == 0, f"scripts/build-deb --tree {tree}:\n{result.stdout}{result.stderr}"

    target = _atomic_build(CACHE / f"deb-{key}", build)
    (deb,) = target.glob("shoe-controller_*.deb")
    return deb


def current_package() -> Path:
    return _build(ROOT, f"{_inputs_hash(ROOT)}-{_recipe_hash()}-{wheels().name}")


def previous_package() -> Path:
    """This tree's script over the previous release's tree (a worktree of its "Version 0.2.0" commit)."""
    log = subprocess.run(
        ["git", "-C", str(ROOT), "log", "--format=%H %s"], capture_output=True, text=True, check=True
    ).stdout
    commits = [line.split()[0] for line in log.splitlines() if line.split(" ", 1)[1].startswith(PREVIOUS_RELEASE)]
    assert commits, f"no commit whose message starts {PREVIOUS_RELEASE!r}"
    key = f"{commits[0][:12]}-{_recipe_hash()}-{wheels().name}"
    if (CACHE / f"deb-{key}").exists():
        return _build(ROOT, key)  # cached: the tree is not needed
    scratch = Path(tempfile.mkdtemp(prefix="shoe-previous-"))
    tree = scratch / "tree"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), commits[0]], capture_output=True, check=True
    )
    try:
        return _build(tree, key)
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], capture_output=True)
        shutil.rmtree(scratch, ignore_errors=True)


def _deb_version(deb: Path) -> str:
    return subprocess.run(
        ["dpkg-deb", "--field", str(deb), "Version"], capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.fixture(scope="module")
def machine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Machine]:
    _require()
    if shutil.which("dpkg-deb") is None or shutil.which("git") is None:
        pytest.skip("dpkg-deb and git are needed to build the packages")
    m = Machine(tmp_path_factory.mktemp("machine"))
    try:
        m.prepare()
        m.boot()
        yield m
    finally:
        m.poweroff()
        m.remove()


COMMANDS = ("shoe-controller", "shoe-sim", "shoe-floor")


def commands_on_the_path(m: Machine) -> None:
    """After `apt install`, the package's three commands are found on the PATH as a user types them (not only
    in the venv's bin), and they run."""
    for command in COMMANDS:
        found = m.sh(f"command -v {command}", check=False)
        assert found.stdout.strip() == f"/usr/bin/{command}", (command, found.stdout, found.stderr)
        assert m.sh(f"readlink -f /usr/bin/{command}").stdout.strip() == f"{VENV}/bin/{command}"
    version = m.sh("shoe-controller --version").stdout.split()[-1]
    assert m.sh("dpkg-query -W -f '${Version}' shoe-controller").stdout.startswith(version)
    assert "usage: shoe-sim" in m.sh("shoe-sim --help").stdout
    floor = m.sh("shoe-floor --help", check=False)  # the floor server's own venv has its libraries; not this one
    assert floor.returncode != 127 and "command not found" not in floor.stderr, floor.stderr


def start_sim(m: Machine, seed: int, pace: float = 0.3) -> None:
    """The simulated shoe as a transient unit: ``pace`` seconds a card (0.3 leaves the upgrade time mid-shoe)."""
    m.sh(
        "rm -rf /var/lib/shoe-sim; systemctl reset-failed shoe-sim 2>/dev/null;"
        " systemd-run --quiet --unit=shoe-sim -p User=shoe-controller -p RuntimeDirectory=shoe-sim"
        f" -p StateDirectory=shoe-sim {VENV}/bin/shoe-sim --link {SIM_LINK} --truth /var/lib/shoe-sim/truth.jsonl"
        f" --decks 2 --pace {pace} --seed {seed}"
    )
    m.wait_for("the simulated shoe's link", lambda: m.sh(f"test -e {SIM_LINK}", check=False).returncode == 0, 30)


def verify(m: Machine) -> str:
    said = m.sh(f"runuser -u shoe-controller -- {VENV}/bin/shoe-controller journal verify --journal {STATE}/journal.db")
    assert "intact" in said.stdout, said.stdout
    return said.stdout


def nothing_lost(m: Machine, tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.truth = m.root / "var/lib/shoe-sim/truth.jsonl"
    h.journal = m.root / STATE.lstrip("/") / "journal.db"
    assert_matches_truth(h, sequenced=True)


def test_install_upgrade_mid_shoe_remove_and_purge_the_package(machine: Machine, tmp_path: Path) -> None:
    m = machine
    old, new = previous_package(), current_package()
    old_version, new_version = _deb_version(old), _deb_version(new)
    assert subprocess.run(["dpkg", "--compare-versions", new_version, "gt", old_version], check=False).returncode == 0
    shutil.copy(old, m.root / "root" / old.name)
    shutil.copy(new, m.root / "root" / new.name)

    # The previous release: installed, it makes the users and the journal's directory and enables nothing.
    said = m.sh(f"{APT} install /root/{old.name}", timeout=600).stdout
    assert "nothing is enabled" in said, said
    assert m.sh(f"stat -c '%a %U %G' {STATE}").stdout.strip() == "750 shoe-controller shoe-controller"
    assert "dialout" in m.sh("id shoe-controller").stdout
    for unit in UNITS[:3]:
        assert m.sh(f"systemctl is-enabled {unit}", check=False).stdout.strip() == "disabled", unit
        assert m.show(unit, "ActiveState") == "inactive", unit
    assert m.sh(f"{VENV}/bin/shoe-controller --version").stdout.split()[-1] == "0.2.0"
    assert m.sh("test ! -e /etc/shoe-controller/chips.toml", check=False).returncode == 0  # 0.2.0 had no chips

    # The technician's step: the shoe's port in the configuration, then the table enabled and started.
    m.sh(f"cat > /etc/shoe-controller/config.toml <<'TOML'\n{CONFIG}TOML")
    start_sim(m, seed=5)
    m.sh(f"systemctl enable --now {UNIT}", timeout=60)
    m.wait_for("coup 3 on the previous release", lambda: coup_number(m.show(UNIT, "StatusText")) >= 3, 120)
    pid = m.show(UNIT, "MainPID")

    # The upgrade, mid-shoe: the table stopped for it and started again; the configuration kept.
    said = m.sh(f"{APT} install /root/{new.name}", timeout=600).stdout
    assert "stopping shoe-controller.service" in said and "starting again shoe-controller.service" in said, said
    assert m.sh("dpkg-query -W -f '${Version}' shoe-controller").stdout == new_version
    assert m.show(UNIT, "ActiveState") == "active" and m.show(UNIT, "MainPID") != pid
    assert m.sh("cat /etc/shoe-controller/config.toml").stdout == CONFIG
    chips = ROOT / "config" / "chips.example.toml"  # the bet-spot reader's chip registry, where a tree has one
    if chips.exists():
        assert m.sh("cat /etc/shoe-controller/chips.toml").stdout == chips.read_text()
        assert "/etc/shoe-controller/chips.toml" in m.sh("cat /var/lib/dpkg/info/shoe-controller.conffiles").stdout
    assert m.sh(f"systemctl is-enabled {UNIT}").stdout.strip() == "enabled"
    assert m.sh("systemctl is-enabled shoe-controller-board", check=False).stdout.strip() == "disabled"
    commands_on_the_path(m)
    before = coup_number(m.show(UNIT, "StatusText"))
    m.wait_for("dealing on after the upgrade", lambda: coup_number(m.show(UNIT, "StatusText")) > before, 120)
    m.wait_for("the shoe dealt out", lambda: m.show("shoe-sim", "ActiveState") != "active", 300)
    assert m.show("shoe-sim", "Result") == "success"
    m.sh(f"systemctl stop {UNIT}")
    assert (m.show(UNIT, "Result"), m.show(UNIT, "ExecMainStatus")) == ("success", "0")
    verify(m)
    with sqlite3.connect(f"file:{m.root / STATE.lstrip('/') / 'journal.db'}?mode=ro", uri=True) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    nothing_lost(m, tmp_path / "upgrade")
    assert "Traceback" not in journal(m)

    # Remove: the program and the units go; the journal and the configuration stay.
    said = m.sh(f"{APT} remove shoe-controller", timeout=300).stdout
    assert f"kept /etc/shoe-controller (the configuration) and {STATE} (the journal)" in said, said
    gone = m.sh(f"test ! -e {VENV} && test ! -e /lib/systemd/system/shoe-controller.service", check=False)
    assert gone.returncode == 0
    for command in COMMANDS:
        assert m.sh(f"test ! -e /usr/bin/{command} && test ! -L /usr/bin/{command}", check=False).returncode == 0
    assert m.sh(f"test -s {STATE}/journal.db", check=False).returncode == 0
    assert m.sh("cat /etc/shoe-controller/config.toml").stdout == CONFIG

    # Purge: it says what it deletes (the configuration) and keeps the journal.
    said = m.sh(f"{APT} purge shoe-controller", timeout=300).stdout
    assert "deleted /etc/shoe-controller/config.toml" in said, said
    assert "shoe-controller purge: deleting /etc/shoe-controller\n" in said, said
    assert f"keeping {STATE} (the journal)" in said, said
    assert "deleting /etc/systemd/system/multi-user.target.wants/shoe-controller.service" in said, said
    assert m.sh("test ! -e /etc/shoe-controller", check=False).returncode == 0
    assert m.sh(f"test -s {STATE}/journal.db", check=False).returncode == 0

    # A fresh install of this tree's package on a clean machine deals a whole shoe.
    m.sh(f"rm -rf {STATE}; systemctl reset-failed {UNIT} 2>/dev/null; true")
    said = m.sh(f"{APT} install /root/{new.name}", timeout=600).stdout
    assert "nothing is enabled" in said, said
    assert m.sh(f"systemctl is-enabled {UNIT}", check=False).stdout.strip() == "disabled"  # the purge ended it
    assert m.sh(f"stat -c '%a %U %G' {STATE}").stdout.strip() == "750 shoe-controller shoe-controller"
    commands_on_the_path(m)
    m.sh(f"cat > /etc/shoe-controller/config.toml <<'TOML'\n{CONFIG}TOML")
    start_sim(m, seed=9, pace=0.05)  # nothing to do mid-shoe: a whole shoe dealt, quickly
    m.sh(f"systemctl enable --now {UNIT}", timeout=60)
    m.wait_for("the fresh shoe dealt out", lambda: m.show("shoe-sim", "ActiveState") != "active", 300)
    m.sh(f"systemctl stop {UNIT}")
    verify(m)
    nothing_lost(m, tmp_path / "fresh")

    # Purge told to delete the journal too: it names each file.
    said = m.sh(f"SHOE_CONTROLLER_PURGE_JOURNAL=yes {APT} purge shoe-controller", timeout=300).stdout
    assert f"shoe-controller purge: deleting {STATE}/journal.db\n" in said, said
    assert re.search(rf"deleting {STATE} \(the journal\)", said), said
    assert m.sh(f"test ! -e {STATE}", check=False).returncode == 0
