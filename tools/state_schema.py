"""Writes docs/schemas/state.schema.json, the JSON Schema of the retained ``state`` message, from its model.

Run: .venv/bin/python tools/state_schema.py  (``--check`` exits 1 if the file differs from the model, which
tests/floor_protocol/test_state.py also checks). The model is :class:`floor_protocol.state.TableStateMessage`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from floor_protocol.state import json_schema

SCHEMA = Path(__file__).resolve().parent.parent / "docs" / "schemas" / "state.schema.json"


def text() -> str:
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    if "--check" in argv:
        if SCHEMA.read_text() != text():
            sys.stderr.write(f"{SCHEMA} differs from the model: run .venv/bin/python tools/state_schema.py\n")
            return 1
        return 0
    SCHEMA.write_text(text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
