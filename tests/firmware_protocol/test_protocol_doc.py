"""docs/protocol.md and the code cannot drift: the doc's vector tables are exactly what the code renders."""

from __future__ import annotations

import re
from pathlib import Path

from firmware_protocol import vectors

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
HEX_CELL = re.compile(r"`((?:[0-9a-f]{2} )+[0-9a-f]{2})`")


def test_doc_contains_the_rendered_vector_tables() -> None:
    assert vectors.markdown() in DOC.read_text(encoding="utf-8")


def test_every_hex_vector_in_the_doc_is_a_checked_vector() -> None:
    """A vector typed into the doc by hand, outside the rendered tables, would go unchecked: forbid it."""
    known = {v.wire for v in vectors.FRAMES + vectors.SINGLE + vectors.STREAMS}
    found = HEX_CELL.findall(DOC.read_text(encoding="utf-8"))
    assert found
    assert set(found) <= known, set(found) - known
    assert len(set(found)) == len(known)
