"""docs/spots.md and the code cannot drift: the doc's vector tables are exactly what the code renders."""

from __future__ import annotations

import re
from pathlib import Path

from firmware_protocol import spot_vectors

SPOTS_DOC = Path(__file__).resolve().parents[2] / "docs" / "spots.md"
HEX_CELL = re.compile(r"`((?:[0-9a-f]{2} )+[0-9a-f]{2})`")


def test_the_doc_contains_the_rendered_vector_tables_and_the_example() -> None:
    text = SPOTS_DOC.read_text(encoding="utf-8")
    assert spot_vectors.markdown() in text
    assert spot_vectors.example_markdown() in text


def test_every_hex_vector_in_the_doc_is_a_checked_vector() -> None:
    known = {v.wire for v in spot_vectors.FRAMES + spot_vectors.SINGLE}
    known |= {step.frame.wire for step in spot_vectors.EXAMPLE}
    found = set(HEX_CELL.findall(SPOTS_DOC.read_text(encoding="utf-8")))
    assert found == known, found ^ known
