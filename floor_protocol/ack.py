"""The floor's ack: ``baccarat/<site>/<table>/ack``, retained, signed by the floor's key.

The payload is one JSON object (:class:`Ack`)::

    {"v":1,"archive":"<the archive's id>","table":"<table>","seq":1234,"hash":"<record 1234's hash>","sig":"..."}

``seq`` is the highest contiguous seq archive ``archive`` holds of the table, ``hash`` that record's hash and
``sig`` the floor key's signature over :func:`floor_protocol.signing.ack_message` of the four. A table reads it
from a broker it does not control: :func:`parse_ack` bounds and validates it (None for anything else, never an
exception) and :meth:`Ack.verify` checks the signature; the table also checks the hash against its own record.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from floor_protocol.signing import ack_message, parse_signature, sign, verify
from floor_protocol.topics import is_level

__all__ = ["ACK_VERSION", "ARCHIVE_ID", "HASH", "MAX_ACK_BYTES", "MAX_SEQ", "Ack", "parse_ack"]

#: The ack's JSON version.
ACK_VERSION = 1
#: Longest ack payload read (the longest genuine one is about 330 bytes).
MAX_ACK_BYTES = 512
#: Highest seq (the journal's ids and the archive's keys are signed 64-bit integers).
MAX_SEQ = 2**63 - 1
#: An archive's id: 8-64 characters of letters, digits and ``-`` (the archive writes a random UUID).
ARCHIVE_ID = re.compile(r"[A-Za-z0-9-]{8,64}")
#: A record's hash: 64 lowercase hex digits (sha256).
HASH = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class Ack:
    """One signed ack. ``sig`` is empty on an ack not yet signed."""

    archive: str
    table: str
    seq: int
    hash: str
    sig: str = ""

    @classmethod
    def signed(cls, key: Ed25519PrivateKey, archive: str, table: str, seq: int, record_hash: str) -> Ack:
        if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq <= MAX_SEQ:
            raise ValueError(f"an ack is a seq 0-{MAX_SEQ}, not {seq!r}")
        return cls(archive, table, seq, record_hash, sign(key, ack_message(archive, table, seq, record_hash)))

    def verify(self, key: Ed25519PublicKey) -> bool:
        """Whether the floor's key signed this ack."""
        return verify(key, ack_message(self.archive, self.table, self.seq, self.hash), self.sig)

    def to_dict(self) -> dict[str, object]:
        return {
            "v": ACK_VERSION,
            "archive": self.archive,
            "table": self.table,
            "seq": self.seq,
            "hash": self.hash,
            "sig": self.sig,
        }

    def to_json(self) -> bytes:
        return json.dumps(self.to_dict(), separators=(",", ":"), sort_keys=True).encode()

    @classmethod
    def from_dict(cls, value: object) -> Ack | None:
        """The ack in a decoded JSON value, or None when it is not a well-formed one (signature not checked)."""
        if not isinstance(value, dict) or value.get("v") != ACK_VERSION:
            return None
        archive, table, seq, record_hash, sig = (value.get(k) for k in ("archive", "table", "seq", "hash", "sig"))
        if not (isinstance(archive, str) and ARCHIVE_ID.fullmatch(archive)):
            return None
        if not is_level(table):  # a table id: one topic level
            return None
        if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq <= MAX_SEQ:
            return None
        if not (isinstance(record_hash, str) and HASH.fullmatch(record_hash)):
            return None
        if parse_signature(sig) is None:
            return None
        assert isinstance(sig, str)
        return cls(archive, table, seq, record_hash, sig)


def parse_ack(payload: bytes | bytearray | str) -> Ack | None:
    """The ack a payload carries, or None if it is longer than :data:`MAX_ACK_BYTES`, not JSON, or not a
    well-formed ack. The signature is not checked here (:meth:`Ack.verify`)."""
    if len(payload) > MAX_ACK_BYTES:
        return None
    try:
        value = json.loads(payload)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return Ack.from_dict(value)
