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


def test_the_doc_s_254_byte_cobs_vector_is_what_the_encoder_writes_and_both_forms_decode() -> None:
    """§2.1: a run of exactly 254 non-zero bytes. The doc states the reference encoder's bytes and that the
    form without the final 0x01 decodes to the same body; both claims are checked here."""
    from firmware_protocol.binary import cobs_decode, cobs_encode

    text = DOC.read_text(encoding="utf-8")
    assert "the reference encoder writes `ff 01 02 … fe 01` and then the delimiter `00`" in text
    assert "(257 bytes on the wire)" in text
    run = bytes(range(1, 255))
    wire = cobs_encode(run) + b"\x00"
    assert wire == b"\xff" + run + b"\x01\x00"
    assert len(wire) == 257
    assert cobs_decode(b"\xff" + run + b"\x01") == run
    assert cobs_decode(b"\xff" + run) == run  # the classic form, without the empty last block
