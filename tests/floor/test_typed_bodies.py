"""A ratchet on the floor's reading of record bodies by string key: the readers convert to the body classes of
controller/game/bodies.py module by module (issue 24), so no module of floor/ may read more bodies by key
(``.get("...")``) than it did when the money, surveillance and count watches were converted. Lower a figure
when a module is converted; a new module starts at none."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: ``.get("`` per module of floor/ (119 in all before the body classes, 82 after; what is left: coups, alarms,
#: the money watch, the pit's tiles and intake, a few saved states and a coup as ``history`` prints it).
MOST: dict[str, int] = {
    "accounting.py": 7,
    "archive.py": 2,
    "cli.py": 4,
    "counting.py": 1,
    "counting_watch.py": 3,
    "money_watch.py": 1,
    "pit.py": 12,
    "pit_intake.py": 11,
    "surveillance.py": 2,
}


def counts() -> dict[str, int]:
    """``.get("`` per module of floor/, a package's modules together (under its name with ``.py``)."""
    out: dict[str, int] = {}
    for path in sorted((ROOT / "floor").rglob("*.py")):
        top = path.relative_to(ROOT / "floor").parts[0]
        name = top if top.endswith(".py") else f"{top}.py"
        out[name] = out.get(name, 0) + path.read_text().count('.get("')
    return out


def test_no_floor_module_reads_more_bodies_by_key() -> None:
    counts_now = counts()
    over = {name: n for name, n in counts_now.items() if n > MOST.get(name, 0)}
    assert over == {}, f"read the body through its class (controller.game.bodies), not by key: {over}"
