"""The dependencies follow the deployables: a floor server installs no GPIO, LCD or serial library, a table no
PostgreSQL driver (pyproject's extras ``table`` and ``floor``; docs/install.md). Proved in a fresh interpreter
whose import system refuses the other deployable's libraries, as if they were not installed."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

#: The table's device libraries (and the Pi's GPIO backends), which a floor host does not install.
TABLE_LIBRARIES = ("serial", "gpiozero", "RPLCD", "smbus2", "lgpio", "RPi", "cobs")
#: The floor's PostgreSQL driver, which a table does not install.
FLOOR_LIBRARIES = ("psycopg", "psycopg_binary")

BLOCKER = """
import importlib.abc, sys
BLOCKED = {blocked!r}
class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{{name}} is not installed on this host")
        return None
sys.meta_path.insert(0, NotInstalled())
for name in list(sys.modules):
    if name.split(".")[0] in BLOCKED:
        del sys.modules[name]
"""


def run(blocked: tuple[str, ...], body: str) -> subprocess.CompletedProcess[str]:
    code = BLOCKER.format(blocked=set(blocked)) + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.e2e
def test_a_floor_host_needs_none_of_the_tables_libraries() -> None:
    result = run(
        TABLE_LIBRARIES,
        """
        import contextlib, io, sys
        import floor.archive, floor.cli, floor.collector, floor.pit, floor.surveillance
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                floor.cli.main(["--help"])
            except SystemExit as exc:
                assert exc.code == 0, exc.code
        assert "shoe-floor" in out.getvalue() and "serve" in out.getvalue(), out.getvalue()
        shell = sorted(m for m in sys.modules if m.startswith("controller.") and not m.startswith("controller.game"))
        assert shell == [], shell  # nothing of the table's shell was imported either
        print("ok")
        """,
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


@pytest.mark.e2e
def test_the_blocker_really_blocks() -> None:
    result = run(TABLE_LIBRARIES, "import controller.table.shoe_link\n")
    assert result.returncode != 0 and "serial is not installed on this host" in result.stderr


@pytest.mark.e2e
def test_a_table_needs_no_postgresql_driver() -> None:
    result = run(
        FLOOR_LIBRARIES,
        """
        import contextlib, io
        import controller.cli, controller.table.daemon, controller.link.floor_link, hw_sim.cli
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                controller.cli.main(["--help"])
            except SystemExit as exc:
                assert exc.code == 0, exc.code
        assert "shoe-controller" in out.getvalue(), out.getvalue()
        print("ok")
        """,
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def _names(requirements: list[str]) -> set[str]:
    return {r.split(";")[0].split("[")[0].split(">")[0].split("=")[0].strip().lower() for r in requirements}


def test_the_extras_follow_the_deployables() -> None:
    extras = PROJECT["optional-dependencies"]
    base, table, floor = _names(PROJECT["dependencies"]), _names(extras["table"]), _names(extras["floor"])
    assert {"pyserial", "gpiozero", "rplcd", "smbus2"} <= table
    assert not {"pyserial", "gpiozero", "rplcd", "smbus2", "lgpio", "rpi-lgpio"} & (base | floor)
    assert "psycopg" in floor and "psycopg" not in base | table
    assert "shoe-controller[table,floor]" in extras["dev"]  # the tests need both
    assert "shoe-controller[table]" in extras["pi"]  # a Pi is a table


def test_every_static_file_of_a_page_is_in_the_package() -> None:
    """pyproject's package-data globs hold every file the pages serve (the dealer screen's folder was missed once,
    and its listener failed on a table installed from the package while every test from the checkout passed)."""
    import fnmatch

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    for package, folder in (("controller", "board/static"), ("floor", "static")):
        base = ROOT / package
        for path in (base / folder).rglob("*"):
            if path.is_file():
                relative = path.relative_to(base).as_posix()
                assert any(fnmatch.fnmatch(relative, g) and "/" not in relative[len(g.rsplit("/", 1)[0]) + 1 :]
                           for g in data[package]), f"{package}/{relative} is not in the package's data"  # fmt: skip


def test_commandline_knows_which_extra_brings_each_library() -> None:
    """commandline/extras.py names the extra to install by the import names of its libraries: they are those of
    pyproject's extras (found from the installed distributions, not a second hand-written list)."""
    from importlib.metadata import packages_distributions

    from commandline.extras import LIBRARIES

    extras = PROJECT["optional-dependencies"]
    imports: dict[str, set[str]] = {}
    for top, dists in packages_distributions().items():
        for dist in dists:
            imports.setdefault(dist.lower().replace("_", "-"), set()).add(top)
    for extra in ("table", "floor"):
        for name in _names(extras[extra]):  # each library of the extra is known by one of its import names ...
            assert imports[name] & LIBRARIES[extra], (extra, name)
        brought = {top for name in _names(extras[extra]) for top in imports[name]}
        assert brought >= LIBRARIES[extra], extra  # ... and nothing else is


def test_only_a_library_of_the_extra_is_said_to_be_missing() -> None:
    from commandline.extras import missing_extra

    line = missing_extra("shoe-floor", "floor", ModuleNotFoundError("no", name="psycopg.pq"))
    assert line == (
        "shoe-floor: this needs the floor's libraries, which are not installed (no module named 'psycopg'): "
        "pip install 'shoe-controller[floor]'"
    )
    assert missing_extra("shoe-floor", "floor", ModuleNotFoundError("no", name="serial")) is None  # not the floor's
    assert missing_extra("shoe-controller run", "table", ModuleNotFoundError("no", name="controller.x")) is None
