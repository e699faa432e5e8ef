"""Each of the table's companion processes imports only what its job needs (issue 24, "folders that are the
processes"). Proved in a fresh interpreter per process, so that what this test process has imported already counts
for nothing: every module of a process's package and its command, and every module they import (at the top or inside
a function: a lazy import runs when the process needs it), leave no GPIO library (gpiozero, lgpio, RPi), no LCD
library (RPLCD, smbus2), no shoe or reader wire (serial, cobs) and no journal writer in ``sys.modules``.

The journal writer is the table process's write path: the table loop (``controller.table.loop``, where the journal's
one writer commits each input before the shoe's ACK), the daemon that opens the journal for writing
(``controller.table.daemon``, ``Journal.open_for_table``), the sinks it drives (``controller.table.sinks``), and the
journal's own writing modules: the :class:`~controller.journal.journal.Journal` (``controller.journal.journal``),
the chain's append and the floor ack's store (``controller.journal.chain``), the file guard that mends the file
(``controller.journal.guard``), retention's prune (``controller.journal.retention``) and the backup's copies
(``controller.journal.backup``). The board never opens the journal at all, so for the board the whole
``controller.journal`` package counts. The link reads the journal through
:class:`~controller.journal.reader.JournalReader` opened read-only (SQLite's ``mode=ro``): it imports that and
the parts it reads with (queries, schema, store, ack, stamps), not the writer. (``controller.journal``'s names are
imported on first use, so that importing the reader does not load the ``Journal`` through the package.)

And nothing under ``controller/`` imports the floor's package (``floor/``): the demo that needs the floor's
archive lives in ``demo/``, which only the ``demo`` command's front end imports."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: What no companion process may import: the Pi's GPIO, the dealer's LCD, the shoe's and the reader's wire.
DEVICES = ("gpiozero", "lgpio", "RPi", "RPLCD", "smbus2", "serial", "cobs")
#: The table process's journal write path (see the module's docstring).
JOURNAL_WRITER = (
    "controller.table.loop",
    "controller.table.daemon",
    "controller.table.sinks",
    "controller.journal.journal",
    "controller.journal.chain",
    "controller.journal.guard",
    "controller.journal.retention",
    "controller.journal.backup",
)
#: The floor's own package and the demos (which may import the floor): never imported by a table's process.
FLOOR = ("floor", "demo")


def _under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def package_modules(package: str) -> list[str]:
    """Every module of one of our packages, by its files (a module added later is checked too)."""
    folder = ROOT.joinpath(*package.split("."))
    names = []
    for path in sorted(folder.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def imported_by(modules: list[str]) -> list[str]:
    """Every module in ``sys.modules`` after a fresh interpreter imported ``modules``."""
    code = f"import importlib, json, sys\nfor m in {modules!r}:\n    importlib.import_module(m)\n"
    code += "print(json.dumps(sorted(sys.modules)))\n"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    return list(json.loads(result.stdout))


def problems(found: list[str], forbidden: tuple[str, ...]) -> list[str]:
    return [name for name in found if _under(name, forbidden)]


#: Each companion: its package, its command's module, and what it may not import.
PROCESSES = {
    "board": (["controller.commands.board", *package_modules("controller.board")], ("controller.journal",)),
    "link": (["controller.commands.link", *package_modules("controller.link")], ()),
}


def with_their_imports(modules: list[str]) -> list[str]:
    """``modules`` and every module their sources import, at the top or inside a function."""
    named = set(modules)
    for module in modules:
        path = ROOT.joinpath(*module.split("."))
        source = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        named.update(_imports(source.read_text()))
    return sorted(named)


@pytest.mark.e2e  # each process in a fresh interpreter
@pytest.mark.parametrize("process", sorted(PROCESSES))
def test_a_companion_process_imports_no_device_no_journal_writer_and_no_floor(process: str) -> None:
    modules, also = PROCESSES[process]
    assert len(modules) >= 4, modules  # the package's modules were found
    found = imported_by(with_their_imports(modules))
    assert set(modules) <= set(found)
    assert problems(found, DEVICES) == [], f"the {process} process imports a device library"
    assert problems(found, JOURNAL_WRITER + also) == [], f"the {process} process imports the journal's writer"
    assert problems(found, FLOOR) == [], f"the {process} process imports the floor"
    if process == "link":  # it reads the journal, through the read-only reader
        assert "controller.journal.reader" in found


@pytest.mark.e2e
def test_the_journal_package_loads_no_writer_until_one_is_asked_for() -> None:
    """``import controller.journal`` and its reader load none of the writer's modules; the ``Journal`` does."""
    assert problems(imported_by(["controller.journal", "controller.journal.reader"]), JOURNAL_WRITER) == []
    code = "import controller.journal as j, json, sys\nassert j.Journal.__name__ == 'Journal'\n"
    code += "print(json.dumps(sorted(sys.modules)))\n"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    writer = {"controller.journal.journal", "controller.journal.chain", "controller.journal.retention"}
    assert writer <= set(problems(json.loads(result.stdout), JOURNAL_WRITER))


@pytest.mark.e2e
def test_the_process_check_catches_a_device_a_writer_and_the_floor() -> None:
    """The same check over modules that do import them (the panel, the daemon, the demo): it reports each."""
    found = imported_by(["controller.table.panel", "controller.table.daemon", "demo.floor"])
    assert "gpiozero" in problems(found, DEVICES)
    assert {"controller.table.daemon", "controller.table.loop"} <= set(problems(found, JOURNAL_WRITER))
    # the journal's writer, reached through the package's facade as the link did before it had a reader
    journal = problems(imported_by(["controller.journal.journal"]), JOURNAL_WRITER)
    assert {"controller.journal.journal", "controller.journal.chain", "controller.journal.guard"} <= set(journal)
    assert "controller.journal.retention" in journal
    assert "demo.floor" in problems(found, FLOOR)
    # demo/floor.py imports floor.archive inside a method only: the process check imports it too
    assert "floor.archive" not in found
    assert "floor.archive" in imported_by(with_their_imports(["demo.floor"]))


def _imports(source: str) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def floor_imports(source: str, *, front_end: bool = False) -> list[str]:
    """The imports of ``floor/`` (or of ``demo/``, but for the demo command's front end) in a module's source,
    at the top or inside a function."""
    forbidden = ("floor",) if front_end else FLOOR
    return [name for name in _imports(source) if _under(name, forbidden)]


CONTROLLER = sorted((ROOT / "controller").rglob("*.py"))
#: The one module of controller/ that may import demo/: the ``shoe-controller demo`` command's front end.
DEMO_FRONT_END = ROOT / "controller" / "commands" / "demo.py"


@pytest.mark.parametrize("path", CONTROLLER, ids=lambda p: str(p.relative_to(ROOT)))
def test_nothing_of_the_table_imports_the_floor(path: Path) -> None:
    found = floor_imports(path.read_text(), front_end=path == DEMO_FRONT_END)
    assert found == [], f"{path.relative_to(ROOT)} imports {found}"


def test_the_floor_rule_catches_a_late_import_of_the_floor() -> None:
    source = """
import floor_protocol.ack
from controller.journal import Journal
def enroll():
    from floor.archive import Archive
    import demo.floor
"""
    assert floor_imports(source) == ["floor.archive", "demo.floor"]
    assert floor_imports(source, front_end=True) == ["floor.archive"]
    assert len(CONTROLLER) >= 60 and DEMO_FRONT_END in CONTROLLER


@pytest.mark.e2e  # a fresh interpreter per command line
@pytest.mark.parametrize("command", ["board", "link"])
def test_a_companions_command_line_loads_its_own_command_and_no_odds_engine(command: str) -> None:
    """``shoe-controller board ...`` builds its own command's parser alone (controller.cli ``command_of``): not
    the daemon's panel nor the odds engine (numpy), which every process start of the board and the link paid for
    (0.4 s of CPU each, twice what the command needs), nor the record classes' models."""
    code = "import json, sys\nfrom controller.cli import main\ntry:\n"
    code += f"    main([{command!r}, '--help'])\nexcept SystemExit:\n    pass\n"
    code += "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and f"usage: shoe-controller {command}" in result.stdout, result.stderr
    found = json.loads(result.stderr.splitlines()[-1])
    assert problems(found, DEVICES) == []
    assert problems(found, ("numpy", "controller.game.odds", "controller.game.bodies", "controller.table")) == []
    assert f"controller.commands.{command}" in found and "controller.commands.demo" not in found


def test_the_command_line_names_the_command_it_builds_alone() -> None:
    from controller.cli import build_parser, command_of

    assert [command_of(a) for a in (["board", "--help"], ["check-config", "t.toml"], ["--version"], [])] == [
        "board",
        "check_config",
        None,
        None,
    ]
    assert command_of(["check_config"]) is None and command_of(["nonsense"]) is None  # the whole parser says why
    assert build_parser("board").parse_args(["board", "--config", "t.toml"]).command == "board"
