"""The pure core stays pure: controller/game/ and firmware_protocol/ import no I/O, clocks, threads, logging or
GPIO, and arrows point inward (the core never imports the shell)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE = sorted([*(ROOT / "controller" / "game").glob("*.py"), *(ROOT / "firmware_protocol").glob("*.py")])
FORBIDDEN = {
    "time", "datetime", "logging", "threading", "asyncio", "socket", "select", "subprocess", "os", "io",
    "sqlite3", "serial", "gpiozero", "lgpio", "RPi", "RPLCD", "smbus2", "tomllib", "importlib", "random",
}  # fmt: skip
SHELL = ("controller.", "hw_sim")  # the core may import controller.game only


def imports(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
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


def test_the_core_is_all_checked() -> None:
    assert len(CORE) >= 15
