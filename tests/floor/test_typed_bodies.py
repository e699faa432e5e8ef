"""A ratchet on the floor's reading of record bodies by string key: the readers read a record's body through its
kind's class (controller.game.bodies: ``CoupBody.read(r.body).set_aside``, never ``r.body.get("set_aside")``),
so no module of floor/ may hold more ``.get("`` than :data:`MOST` says. Lower a figure when a module is
converted; a new module starts at none.

What is left (31 in all; 119 before the body classes) reads no record body through a class, for a reason:

* ``pit_intake.py``: the pit's intake checks untrusted JSON before anything reads it (an alert's fields; the
  coup and shoe fields a tile shows, of their type and in range, with the refusal reasons tests/pit pins);
* ``pit.py``: a tile's last result and game are read from the fields the intake checked, not from a whole
  body of the kind: the pit shows what it can of a record a table signed (a coup as the archive lists it, in
  ``history --json`` shape; a shoe whose ruleset this version cannot price: tests/pit/test_tiles.py);
* ``cli.py``: ``history`` prints coups in ``history --json`` shape (the archive's listing), not record bodies;
* ``archive.py`` (floor/archive/recall.py): a coup's recall picks the money records of that shoe and coup as
  stored, whatever their shape, for its caller to judge (the pit counts the ones not of their kind as skipped);
* ``accounting.py``, ``counting.py``: a watch's own saved state (its JSON in the archive), not a record.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: ``.get("`` per module of floor/ (what is left, and why: the module's docstring).
MOST: dict[str, int] = {
    "accounting.py": 1,
    "archive.py": 2,
    "cli.py": 4,
    "counting.py": 1,
    "pit.py": 12,
    "pit_intake.py": 11,
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
