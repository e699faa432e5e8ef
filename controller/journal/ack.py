"""The floor's ack, kept beside the chain, and the one judgement of whether an ack may be believed at all.

An ack (:class:`floor_protocol.ack.Ack`) says: archive ``archive`` holds this table's records through ``seq``,
the last of which has hash ``hash``, signed by the floor's key. It is the floor link's end-to-end mark and the
limit of the table's own prune, so it is read from a broker the table does not control as hostile:
:func:`refusal` names why one is not believed (not this table's, not signed by the floor's key, beyond the
journal's head, naming a record already pruned, or a hash that is not the table's own record's). The floor
link judges it on its own thread before it acts on it, and the table process judges it again before it stores
it (:class:`AckRefusals` counts and logs what either refused).

Storage: a one-row table ``floor_ack`` (archive id, seq, hash, sig, ts), written by the table loop (the
journal's one writer, :class:`controller.journal.chain.FloorAcks`), read here (:func:`read_floor_ack`) by the
link's own read-only connection at start-up: this module writes nothing. Created on first use (a
journal without it reads as "nothing acknowledged"); the archive, hash and sig columns are added to a table an
older shoe-controller made, whose row (without an archive id) reads as "no verified ack". A lower ack of the
archive stored is never stored; an ack of another archive id is.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections import Counter
from collections.abc import Callable
from typing import Protocol

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from controller.game.records import GENESIS_HASH
from controller.journal.queries import read_head
from controller.journal.schema import FLOOR_ACK_COLUMNS
from controller.journal.store import Store
from floor_protocol.ack import Ack

log = logging.getLogger(__name__)

__all__ = ["REFUSAL_REASONS", "AckRefusals", "read_floor_ack", "refusal"]

#: Why an ack is not believed (the ``reason`` label of ``shoe_floor_acks_refused_total``).
REFUSAL_REASONS = ("malformed", "table", "signature", "beyond_head", "pruned", "hash", "no_key")
#: After the first refusal of a reason is logged, the next of that reason waits at least this long (seconds).
LOG_EVERY = 60.0


class AckJournal(Protocol):
    """What the judgement reads of the journal (:class:`controller.journal.Journal`)."""

    def head(self) -> tuple[int, str]: ...

    def anchor(self) -> tuple[int, str]: ...

    def record_hash(self, seq: int) -> str | None: ...


def refusal(ack: Ack | None, journal: AckJournal, *, table: str, floor_key: Ed25519PublicKey | None) -> str | None:
    """Why ``ack`` is not to be believed (one of :data:`REFUSAL_REASONS`), or None when it may be: well-formed
    (None here is a payload :func:`floor_protocol.ack.parse_ack` refused), this table's, signed by
    ``floor_key``, at or below the journal's head, and ``hash`` is the journal's own record ``seq``'s (seq 0:
    the genesis hash; the anchor: the anchor's hash; a seq already pruned, below the anchor: not believed)."""
    if ack is None:
        return "malformed"
    if floor_key is None:
        return "no_key"
    if ack.table != table:
        return "table"
    if not ack.verify(floor_key):
        return "signature"
    if ack.seq > journal.head()[0]:
        return "beyond_head"
    if ack.seq == 0:
        expected: str | None = GENESIS_HASH
    else:
        anchor_id, anchor_hash = journal.anchor()
        if ack.seq < anchor_id:
            return "pruned"
        expected = anchor_hash if ack.seq == anchor_id else journal.record_hash(ack.seq)
    return None if expected is not None and ack.hash == expected else "hash"


class AckRefusals:
    """Acks refused, counted by reason (:attr:`counts`), each reason logged the first time and then at most
    once every :data:`LOG_EVERY` seconds (with how many came meanwhile). ``who`` names the process in the log."""

    def __init__(self, who: str, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.who = who
        self.counts: Counter[str] = Counter()
        self._clock = clock
        self._logged: dict[str, tuple[float, int]] = {}  # reason -> (when last logged, count then)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def refuse(self, reason: str, ack: Ack | None) -> None:
        self.counts[reason] += 1
        now = self._clock()
        last = self._logged.get(reason)
        if last is not None and (reason == "no_key" or now - last[0] < LOG_EVERY):  # no key: said once
            return
        since = "" if last is None else f" ({self.counts[reason] - last[1]} since the last said)"
        what = "an ack that is not one" if ack is None else f"ack {ack.seq} of archive {ack.archive} for {ack.table}"
        log.warning("%s: floor ack refused (%s): %s; nothing changes%s", self.who, _WHY[reason], what, since)
        self._logged[reason] = (now, self.counts[reason])


_WHY = {
    "malformed": "not a well-formed signed ack",
    "table": "another table's",
    "signature": "not signed by the floor's key",
    "beyond_head": "beyond this journal's last record",
    "pruned": "names a record already pruned",
    "hash": "its hash is not this table's record's",
    "no_key": "no floor_public_key to verify it with",
}


def read_floor_ack(store: Store, table: str | None = None) -> Ack | None:
    """The stored, verified ack, or None: no ack stored, no ``floor_ack`` table (no floor link yet), a row an
    older shoe-controller wrote (no archive id), a seq beyond the chain head (a journal restored from an
    older copy: that ack names records it no longer has), or a table that cannot be read. ``table`` fills
    :attr:`Ack.table` (the row does not repeat it). Reads only (the link's read-only journal reads it so); the
    table loop stores it (:class:`controller.journal.chain.FloorAcks`)."""
    if "floor_ack" not in store.tables():
        return None
    conn = store.conn
    try:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(floor_ack)")}
        if not set(FLOOR_ACK_COLUMNS) <= columns:
            return None
        row = conn.execute("SELECT archive, seq, hash, sig FROM floor_ack WHERE one = 1").fetchone()
        head = read_head(conn)[0]
    except sqlite3.Error:
        return None
    if row is None or row[0] is None or row[1] is None or int(row[1]) > head:
        return None
    return Ack(str(row[0]), table or "", int(row[1]), str(row[2] or ""), str(row[3] or ""))
