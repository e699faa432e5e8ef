"""A newcomer's ``pip install shoe-controller`` with no extra (docs/install.md): the pure commands work, and every
command that needs a deployable's libraries says in one line which extra to install (``[table]``, ``[floor]``) and
exits 2, never a ModuleNotFoundError's traceback (issue 24). For real: a fresh venv, ``pip install`` of a copy of the
project with no extra (only the base dependencies, numpy and pydantic), and each command run as its own process."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from commandline.extras import LIBRARIES

# the module's venv and its pip install (the first test's setup): two minutes on a busy machine, more than the default
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
TABLE = "pip install 'shoe-controller[table]'"
FLOOR = "pip install 'shoe-controller[floor]'"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin folder of a venv holding the project installed with no extra."""
    where = tmp_path_factory.mktemp("base-install")
    source = where / "source"  # a copy: pip builds in the tree it is given, and the checkout stays clean
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    for pattern in PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]:
        for package in ROOT.glob(pattern.rstrip("*")):
            if package.is_dir() and (package / "__init__.py").exists():
                shutil.copytree(package, source / package.name, ignore=shutil.ignore_patterns("__pycache__"))
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(source)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert pip.returncode == 0, pip.stdout + pip.stderr
    probe = "import importlib.util as u, sys; print(*[m for m in sys.argv[1:] if u.find_spec(m)])"
    libraries = sorted(LIBRARIES["table"] | LIBRARIES["floor"])
    found = subprocess.run(
        [str(venv / "bin" / "python"), "-c", probe, *libraries], capture_output=True, text=True, timeout=60, check=True
    )
    assert found.stdout.strip() == "", f"came with the base install: {found.stdout}"
    return venv / "bin"


def run(bin_: Path, command: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bin_ / command), *args], capture_output=True, text=True, timeout=60, check=False, cwd=cwd
    )


def assert_one_line(result: subprocess.CompletedProcess[str], prog: str, install: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith(f"{prog}: ") and line.endswith(install), line
    assert "not installed (no module named '" in line, line


TABLE_COMMANDS = [
    ("run", "--config", "/etc/shoe-controller/table.toml"),
    ("run", "--help"),
    ("demo",),
    ("history", "--journal", "journal.db", "--last", "5"),
    ("journal", "verify", "--journal", "journal.db"),
    ("check-config", "table.toml"),
    ("keygen", "--out", "table.key"),
    ("link", "--config", "table.toml"),
    ("board", "--config", "table.toml"),
    ("selftest",),
    ("settle", "--journal", "journal.db"),
]


@pytest.mark.parametrize("argv", TABLE_COMMANDS, ids=[" ".join(a) for a in TABLE_COMMANDS])
def test_a_table_command_on_the_base_install_names_the_table_extra(
    base: Path, argv: tuple[str, ...], tmp_path: Path
) -> None:
    assert_one_line(run(base, "shoe-controller", *argv, cwd=tmp_path), f"shoe-controller {argv[0]}", TABLE)
    assert list(tmp_path.iterdir()) == []  # nothing was made on the way (no key, no journal)


FLOOR_COMMANDS = [
    ("--help",),
    ("serve", "--broker", "mqtt://127.0.0.1:1883", "--archive", "sqlite:///archive.db", "--key", "floor.key"),
    ("keygen", "--out", "floor.key"),
    ("enroll", "--archive", "sqlite:///archive.db", "--table", "T1", "--public-key", "ed25519:x"),
    ("history", "--archive", "sqlite:///archive.db"),
    ("verify", "--archive", "sqlite:///archive.db"),
]


@pytest.mark.parametrize("argv", FLOOR_COMMANDS, ids=[" ".join(a) for a in FLOOR_COMMANDS])
def test_every_floor_command_on_the_base_install_names_the_floor_extra(
    base: Path, argv: tuple[str, ...], tmp_path: Path
) -> None:
    assert_one_line(run(base, "shoe-floor", *argv, cwd=tmp_path), "shoe-floor", FLOOR)
    assert list(tmp_path.iterdir()) == []


def test_the_pure_commands_and_the_simulator_work_on_the_base_install(base: Path) -> None:
    listing = run(base, "shoe-controller", "--help")
    assert listing.returncode == 0 and "Traceback" not in listing.stderr, listing.stderr
    assert "odds" in listing.stdout and "run" in listing.stdout  # every command is listed ...
    assert "(not installed: pip install 'shoe-controller[table]')" in listing.stdout  # ... each as it stands
    odds = run(base, "shoe-controller", "odds")
    assert odds.returncode == 0 and "P(banker)" in odds.stdout, odds.stderr
    coup = run(base, "shoe-controller", "coup", "9H", "5S", "KD", "2C")
    assert coup.returncode == 0 and "Player" in coup.stdout, coup.stderr
    sim = run(base, "shoe-sim", "--help")
    assert sim.returncode == 0 and "--link" in sim.stdout, sim.stderr
    wrong = run(base, "shoe-sim", "--link", "/tmp/x", "--decks", "0")
    assert wrong.returncode == 2 and "Traceback" not in wrong.stderr and len(wrong.stderr.splitlines()) == 1
