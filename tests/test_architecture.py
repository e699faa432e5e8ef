"""The pure core stays pure: controller/game/, firmware_protocol/ and floor_protocol/ import no I/O, clocks,
threads, logging or GPIO, and arrows point inward (the core never imports the shell). The floor's server
(floor/) imports only the shared, pure vocabulary (floor_protocol, controller.game) and the neutral SSE server
(eventstream) and command-line plumbing (commandline), never the table's shell or its device libraries; those
two neutral packages import nothing of ours."""

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
OURS = (
    "controller", "firmware_protocol", "floor_protocol", "hw_sim", "floor", "eventstream", "commandline", "mqttloop",
    "tools", "tests",
)  # fmt: skip
#: What floor/ may import of ours: itself, the table-floor vocabulary, the neutral SSE server, command-line
#: plumbing and MQTT loop, the pure core.
FLOOR_MAY = ("floor", "floor_protocol", "eventstream", "commandline", "mqttloop", "controller.game")
#: The table's device libraries: a floor host does not install them.
TABLE_ONLY = {"serial", "gpiozero", "lgpio", "RPi", "RPLCD", "smbus2", "cobs"}
FLOOR_SERVER = sorted((ROOT / "floor").rglob("*.py"))
NEUTRAL = sorted(p for d in ("eventstream", "commandline", "mqttloop") for p in (ROOT / d).rglob("*.py"))


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


@pytest.mark.parametrize("path", NEUTRAL, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_neutral_packages_are_neutral(path: Path) -> None:
    """The SSE server and the command-line plumbing know nothing of a table or a floor: the standard library
    and themselves only."""
    own = path.relative_to(ROOT).parts[0]
    for name in imports(path):
        assert _root(name) in sys.stdlib_module_names or _within(name, (own,)), f"{path.name}: {name}"


# ---------------------------------------------------------------------------------------------------------
# Record kinds are RecordKind's: nobody states them again beside it


def _kind_literals(source: str) -> list[str]:
    """Record kinds a source states as text: compared with something called ``kind`` (``r.kind == "coup"``,
    ``kind in ("shoe", ...)``) or bound to a module-level name (``COUP = "coup"``)."""
    from controller.game.records import RecordKind

    kinds = {k.value for k in RecordKind}
    found: list[str] = []
    tree = ast.parse(source)

    def texts(node: ast.AST) -> list[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return [t for e in node.elts for t in texts(e)]
        return []

    def is_kind(node: ast.AST) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "kind") or (
            isinstance(node, ast.Name) and node.id == "kind"
        )

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(is_kind(s) for s in sides):
                found += [t for s in sides for t in texts(s) if t in kinds]
    for stmt in tree.body:  # a name bound to one kind (``COUP = "coup"``, ``INPUT, COUP = "input", "coup"``)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
            one = isinstance(target, ast.Name) and isinstance(value, ast.Constant)
            several = isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
            if one or several:
                found += [t for t in texts(value) if t in kinds]
    return found


SHELL_AND_FLOOR = sorted(
    p
    for d in ("controller", "floor", "floor_protocol", "eventstream")
    for p in (ROOT / d).rglob("*.py")
    if p.name != "records.py" or p.parent.name != "game"
)


def test_record_kinds_are_not_stated_again_beside_record_kind() -> None:
    found = {str(p.relative_to(ROOT)): k for p in SHELL_AND_FLOOR if (k := _kind_literals(p.read_text()))}
    assert found == {}


def test_the_record_kind_check_catches_a_copy() -> None:
    source = (
        'COUP = "coup"\nA, B = "note", 1\nCOMMANDS = ("coup", "odds")\n'
        'def f(r):\n    return r.kind == "burn" or r.kind in ("shoe", "x") or kind == "card"\n'
    )
    assert _kind_literals(source) == ["burn", "shoe", "coup", "note"]


def test_there_is_one_usage_error() -> None:
    """The three command lines raise and catch the same UsageError (commandline); nobody defines another."""
    import commandline
    import controller.cli
    import controller.commands
    import floor.cli
    import hw_sim.cli

    # the name each command line binds and catches (the CLI modules import it, they do not export it)
    assert controller.commands.UsageError is vars(controller.cli)["UsageError"] is commandline.UsageError
    assert vars(floor.cli)["UsageError"] is vars(hw_sim.cli)["UsageError"] is commandline.UsageError
    defined = [
        str(p.relative_to(ROOT))
        for d in ("controller", "floor", "floor_protocol", "eventstream", "hw_sim", "commandline")
        for p in (ROOT / d).rglob("*.py")
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.ClassDef) and node.name == "UsageError"
    ]
    assert defined == ["commandline/__init__.py"]


# ---------------------------------------------------------------------------------------------------------
# firmware_protocol: the framing under the dialects, no module importing its way back to itself


def protocol_imports(source: str, package: str = "firmware_protocol") -> set[str]:
    """The modules of ``package`` a source imports (relative or absolute, at the top, under TYPE_CHECKING or
    inside a function), by their name in the package (``framing``, ``spots``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                names = [node.module] if node.module else [a.name for a in node.names]
            elif node.level == 0 and node.module and node.module.startswith(package + "."):
                names = [node.module.split(".")[1]]
            else:
                names = []
            found |= {n.split(".")[0] for n in names}
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith(package + ".")}
    return found


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle of the import graph, each as the path from a module back to itself (depth-first)."""
    cycles: list[list[str]] = []
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> None:
        if node in path:
            cycles.append([*path[path.index(node) :], node])
            return
        if node in done:
            return
        for nxt in sorted(graph.get(node, ())):
            visit(nxt, [*path, node])
        done.add(node)

    for node in sorted(graph):
        visit(node, [])
    return cycles


PROTOCOL_MODULES = {p.stem: p for p in (ROOT / "firmware_protocol").glob("*.py") if p.stem != "__init__"}


def test_no_two_firmware_protocol_modules_import_each_other() -> None:
    graph = {name: protocol_imports(p.read_text()) - {name} for name, p in PROTOCOL_MODULES.items()}
    assert import_cycles(graph) == []


def test_the_framing_knows_no_dialect() -> None:
    """framing.py is under every dialect: it imports no other module of the package, so a new device's
    dialect is a new module and nothing below it changes."""
    assert protocol_imports(PROTOCOL_MODULES["framing"].read_text()) == set()
    assert {"binary", "spots"} <= {
        n for n, p in PROTOCOL_MODULES.items() if "framing" in protocol_imports(p.read_text())
    }


def test_the_cycle_check_catches_a_cycle() -> None:
    source = "from .binary import SHOE\nif TYPE_CHECKING:\n    from .spots import READER\nimport firmware_protocol.x\n"
    assert protocol_imports(source) == {"binary", "spots", "x"}
    graph = {"binary": {"framing", "spots"}, "spots": {"framing", "binary"}, "framing": set()}
    assert import_cycles(graph) == [["binary", "spots", "binary"]]
    assert import_cycles({"binary": {"framing"}, "spots": {"framing"}, "framing": set()}) == []


# ---------------------------------------------------------------------------------------------------------
# The table process (controller/table/) and the rest of controller/


CONTROLLER = sorted((ROOT / "controller").rglob("*.py"))
TABLE_PROCESS = ("controller.table",)
#: The commands that start the table process or bring its devices up (run, demo, selftest) may import it.
STARTS_THE_TABLE = ("controller.commands",)
#: Modules under controller/ still importing floor/ until the demo supervisors leave controller/commands/.
STILL_IMPORTS_FLOOR = {"controller/commands/floor_demo.py"}


def _module(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def table_problems(module: str, names: list[str]) -> list[str]:
    """What a module under controller/ may not import: floor/ (anywhere); the table process (outside it and
    the commands that start it); the board's and the link's processes (from inside the table process)."""
    bad = [n for n in names if _root(n) == "floor"]
    inside = _within(module, TABLE_PROCESS)
    if not inside and not _within(module, STARTS_THE_TABLE):
        bad += [n for n in names if _within(n, TABLE_PROCESS)]
    if inside:
        bad += [n for n in names if _within(n, ("controller.board", "controller.link", "controller.companions"))]
    return bad


@pytest.mark.parametrize("path", CONTROLLER, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_table_process_is_its_own_package(path: Path) -> None:
    problems = table_problems(_module(path), imports(path))
    if str(path.relative_to(ROOT)) in STILL_IMPORTS_FLOOR:
        problems = [n for n in problems if _root(n) != "floor"]
    assert problems == [], f"{path.relative_to(ROOT)} imports {problems}"


def test_the_table_process_rule_catches_a_stray_import() -> None:
    source = "import floor.archive\nfrom controller.table.loop import TableLoop\nfrom controller.board import Board\n"
    names = imports_of(source)
    assert table_problems("controller.feed.server", names) == ["floor.archive", "controller.table.loop"]
    assert table_problems("controller.commands.run", names) == ["floor.archive"]
    assert table_problems("controller.table.daemon", names) == ["floor.archive", "controller.board"]
    assert {"loop", "daemon.py", "wire.py", "spot_wire.py", "panel.py", "lcd.py"} <= {
        p.name for p in (ROOT / "controller" / "table").iterdir()
    }


def untyped_events(source: str) -> list[str]:
    """Functions whose event parameter (``ev``, ``event``) is annotated ``object`` or ``Any``, or not at all."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
                if arg.arg in ("ev", "event"):
                    note = arg.annotation
                    if note is None or (isinstance(note, ast.Name) and note.id in ("object", "Any")):
                        found.append(f"{node.name}({arg.arg})")
    return found


def test_each_wire_hands_the_loop_one_typed_event_union() -> None:
    """The loop and its ports take each device's events as that wire's union (no ``ev: object``)."""
    loop = sorted((ROOT / "controller" / "table" / "loop").glob("*.py"))
    found = {str(p.relative_to(ROOT)): bad for p in loop if (bad := untyped_events(p.read_text()))}
    assert found == {}
    assert untyped_events("def a(self, ev: object): ...\ndef b(event): ...\ndef c(ev: WireEvent): ...\n") == [
        "a(ev)",
        "b(event)",
    ]
