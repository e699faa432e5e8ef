"""The panel's pin map as docs/wiring.md documents it: the one statement the tests hold the code's pin map to.

The wiring table's rows (``| PLAYER DRAW lamp | `player_draw` | GPIO 17 | 11 | ...``) are read here once, so that
no test restates the BCM numbers: a test compares :data:`controller.pinmap.DEFAULT_PINS` (or a value derived from
it) with what the installer wires, and fails when either changes alone.
"""

from __future__ import annotations

import re
from pathlib import Path

WIRING = Path(__file__).resolve().parent.parent / "docs" / "wiring.md"

_ROW = re.compile(r"^\| ([^|]+?) \| `(\w+)` \| GPIO (\d+) \| (\d+) \|", re.MULTILINE)


def wired_rows() -> list[tuple[str, str, int, int]]:
    """``(function, config key, BCM GPIO, header pin)`` of each pin-map row of the wiring table, in its order."""
    return [(m[1], m[2], int(m[3]), int(m[4])) for m in _ROW.finditer(WIRING.read_text(encoding="utf-8"))]


def wired_pins() -> dict[str, int]:
    """Config key -> BCM GPIO, in the wiring table's order (lamps, buzzer, buttons)."""
    return {key: bcm for _function, key, bcm, _header in wired_rows()}


def wired_lamps() -> dict[str, int]:
    """The lamps' rows (``PLAYER DRAW lamp``): the lamp's config key -> BCM GPIO."""
    return {key: bcm for function, key, bcm, _header in wired_rows() if function.endswith(" lamp")}
