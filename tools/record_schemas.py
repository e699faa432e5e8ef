"""Writes docs/schemas/<kind>.schema.json for every record kind, and record.schema.json (the record as
published), from the body classes of controller/game/bodies.py.

Run: .venv/bin/python tools/record_schemas.py  (``--check`` exits 1 if a file differs from its class, which
tests/test_record_schemas.py also checks). state.schema.json is the state message's (tools/state_schema.py).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from controller.game.bodies import BODIES, envelope_schema
from controller.game.records import RECORD_VERSION

SCHEMAS = Path(__file__).resolve().parent.parent / "docs" / "schemas"


def texts() -> dict[Path, str]:
    """Each schema file and the text it should hold."""
    out = {SCHEMAS / f"{kind.value}.schema.json": _text(cls.json_schema()) for kind, cls in BODIES.items()}
    out[SCHEMAS / "record.schema.json"] = _text(envelope_schema(RECORD_VERSION))
    return out


def _text(schema: dict[str, object]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def stale() -> list[Path]:
    """The schema files that differ from their classes (or are missing)."""
    return [path for path, text in texts().items() if not path.exists() or path.read_text() != text]


def main(argv: list[str]) -> int:
    if "--check" in argv:
        for path in stale():
            sys.stderr.write(f"{path} differs from its class: run .venv/bin/python tools/record_schemas.py\n")
        return 1 if stale() else 0
    for path, text in texts().items():
        path.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
