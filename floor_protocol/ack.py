"""The floor's ack: ``baccarat/<site>/<table>/ack``, retained, the highest contiguous seq the floor archived.

The payload is the seq as a JSON integer (``1234``, what the collector writes); ``{"seq": 1234}`` is read too.
A table reads it from a broker it does not control, so it is bounded (:data:`MAX_ACK_BYTES`) and validated:
anything else is None, never an exception.
"""

from __future__ import annotations

import json

__all__ = ["MAX_ACK_BYTES", "MAX_SEQ", "format_ack", "parse_ack"]

#: Longest ack payload read (``{"seq": 9223372036854775807}`` with room for spaces).
MAX_ACK_BYTES = 64
#: Highest seq (the journal's ids and the archive's keys are signed 64-bit integers).
MAX_SEQ = 2**63 - 1


def format_ack(seq: int) -> bytes:
    """The payload the floor publishes for ``seq``."""
    if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq <= MAX_SEQ:
        raise ValueError(f"an ack is a seq 0-{MAX_SEQ}, not {seq!r}")
    return str(seq).encode()


def parse_ack(payload: bytes | bytearray) -> int | None:
    """The seq an ack payload carries: a JSON integer or an object with ``seq``; None if it is neither, longer
    than :data:`MAX_ACK_BYTES`, negative or past :data:`MAX_SEQ`."""
    if len(payload) > MAX_ACK_BYTES:
        return None
    try:
        value = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(value, dict):
        value = value.get("seq")
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SEQ:
        return None
    return value
