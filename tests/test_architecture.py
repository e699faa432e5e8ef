"""The pure core stays pure: controller/game/, firmware_protocol/ and floor_protocol/ import no I/O, clocks,
threads, logging or GPIO, and arrows point inward (the core never imports the shell). The floor's server
(floor/) imports only the shared, pure vocabulary (floor_protocol, controller.game) and the neutral SSE server
(eventstream), never the table's shell or its device libraries; eventstream imports nothing of ours."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE = sorted(
    [
        *(ROOT / "controller" / "game").glob("*.py"),
        *(ROOT / "firmware_protocol").glob("*.py"),
        *(ROOT / "floor_protocol").glob("*.py"),
    ]
)
FORBIDDEN = {
    "time", "datetime", "logging", "threading", "asyncio", "socket", "select", "subprocess", "os", "io",
    "sqlite3", "serial", "gpiozero", "lgpio", "RPi", "RPLCD", "smbus2", "tomllib", "importlib", "random",
}  # fmt: skip
SHELL = ("controller.", "hw_sim")  # the core may import controller.game only


#: Our own top-level packages (anything else is the standard library or a third-party library).
OURS = ("controller", "firmware_protocol", "floor_protocol", "hw_sim", "floor", "eventstream", "tools", "tests")
#: What floor/ may import of ours: itself, the table-floor vocabulary, the neutral SSE server, the pure core.
FLOOR_MAY = ("floor", "floor_protocol", "eventstream", "controller.game")
#: The table's device libraries: a floor host does not install them.
TABLE_ONLY = {"serial", "gpiozero", "lgpio", "RPi", "RPLCD", "smbus2", "cobs"}
FLOOR_SERVER = sorted((ROOT / "floor").rglob("*.py"))
EVENTSTREAM = sorted((ROOT / "eventstream").rglob("*.py"))


def imports(path: Path) -> list[str]:
    return imports_of(path.read_text(), str(path))


def imports_of(source: str, filename: str = "<source>") -> list[str]:
    """Every module a source imports, at the top or inside a function (absolute imports)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


@pytest.mark.parametrize("path", CORE, ids=lambda p: str(p.relative_to(ROOT)))
def test_core_module_imports_no_io(path: Path) -> None:
    for name in imports(path):
        assert name.split(".")[0] not in FORBIDDEN, f"{path.name} imports {name}"
        if name.startswith(SHELL):
            assert name.startswith("controller.game"), f"{path.name} imports the shell: {name}"
    if path.parent.name == "firmware_protocol":
        assert not any(n.startswith("controller") for n in imports(path)), f"{path.name} imports controller"
    if path.parent.name == "floor_protocol":
        for name in imports(path):
            if _root(name) in OURS:
                assert _within(name, ("floor_protocol", "controller.game")), f"{path.name} imports {name}"


def test_the_core_is_all_checked() -> None:
    assert len(CORE) >= 20
    assert {p.name for p in CORE if p.parent.name == "floor_protocol"} >= {"topics.py", "addresses.py", "ack.py"}


def _root(name: str) -> str:
    return name.split(".")[0]


def _within(name: str, allowed: tuple[str, ...]) -> bool:
    return any(name == a or name.startswith(a + ".") for a in allowed)


def floor_problems(names: list[str]) -> list[str]:
    """The imports a floor/ module may not have."""
    bad = []
    for name in names:
        if _root(name) in TABLE_ONLY or (_root(name) in OURS and not _within(name, FLOOR_MAY)):
            bad.append(name)
    return bad


@pytest.mark.parametrize("path", FLOOR_SERVER, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_floor_imports_only_the_vocabulary_and_the_neutral_server(path: Path) -> None:
    assert floor_problems(imports(path)) == [], f"{path.relative_to(ROOT)} imports the table's side"


def test_the_floor_rule_catches_the_tables_shell() -> None:
    source = """
import json
import paho.mqtt.client
from controller.game.records import TableRecord
from floor_protocol.topics import Leaf
from eventstream import Board
def late():
    from controller.displays.scoreboard import ScoreboardSink
    import controller.journal
    import serial
"""
    assert floor_problems(imports_of(source)) == ["controller.displays.scoreboard", "controller.journal", "serial"]
    assert len(FLOOR_SERVER) >= 6


@pytest.mark.parametrize("path", EVENTSTREAM, ids=lambda p: str(p.relative_to(ROOT)))
def test_eventstream_is_neutral(path: Path) -> None:
    """The SSE server knows nothing of a table or a floor: the standard library and itself only."""
    for name in imports(path):
        assert _root(name) in sys.stdlib_module_names or _within(name, ("eventstream",)), f"{path.name}: {name}"
