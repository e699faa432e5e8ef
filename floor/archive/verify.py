"""Checking the archive: per table, the records, the contiguous linked head, the gaps, the broken links and
the forged records (``shoe-floor verify``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from controller.game.records import GENESIS_HASH, record_hash
from floor.archive.dialect import body_text
from floor.archive.keys import Keys
from floor.archive.recall import Recall
from floor.archive.store import Store
from floor_protocol.signing import parse_public_key, record_message, verify


@dataclass(slots=True)
class TableReport:
    """What :meth:`Archive.verify` found for one table."""

    table: str
    records: int = 0
    head: int = 0
    last: int = 0
    gaps: list[tuple[int, int]] = field(default_factory=list)  # missing seq ranges, inclusive
    broken: list[int] = field(default_factory=list)  # seqs whose link or own hash does not hold
    forged: list[int] = field(default_factory=list)  # seqs unsigned, or not signed by a key enrolled for the table
    problems: list[str] = field(default_factory=list)  # one line each, in seq order

    @property
    def ok(self) -> bool:
        return not self.gaps and not self.broken and not self.forged

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "records": self.records,
            "head": self.head,
            "last": self.last,
            "gaps": [list(g) for g in self.gaps],
            "broken": self.broken,
            "forged": self.forged,
            "ok": self.ok,
        }


class Verifier:
    """Walking every table's chain, on the archive's :class:`~floor.archive.store.Store`."""

    def __init__(self, store: Store, keys: Keys, recall: Recall) -> None:
        self._store = store
        self._keys = keys
        self._recall = recall

    def verify(self, table: str | None = None) -> list[TableReport]:
        """Per table (or only ``table``): the records, the contiguous linked head, the gaps, the broken links (a
        record whose stored fields do not hash to its ``hash``, or whose ``prev`` is not its predecessor's
        hash) and the forged ones (no signature, or one that does not verify with the key it names, which
        must be a key enrolled for the table, whatever its state now). ``problems`` says each in one line."""
        reports = []
        enrolled: dict[str, dict[str, Any]] = {}
        for k in self._keys.table_keys(table):
            enrolled.setdefault(k.table, {})[k.key_id] = parse_public_key(k.public_key)
        cur = self._store.conn.cursor()
        for name in [table] if table is not None else self._recall.tables():
            report = TableReport(name)
            keys = enrolled.get(name, {})
            cur.execute(
                self._store.sql(
                    "SELECT seq, kind, at, session, number, cause, body, prev, hash, sig, key_id FROM records"
                    ' WHERE "table" = ? ORDER BY seq'
                ),
                (name,),
            )
            expected, link, contiguous = 1, GENESIS_HASH, True
            for seq, kind, at, session, number, cause, body, prev, own, sig, signer in cur:
                report.records += 1
                report.last = seq
                if seq != expected:
                    report.gaps.append((expected, seq - 1))
                    report.problems.append(f"table {name}: records {expected}..{seq - 1} missing")
                    contiguous = False
                own_ok = record_hash(prev, seq, at, kind, session, number, cause, body_text(body)) == own
                linked = seq == expected and prev == link
                if not own_ok or (seq == expected and not linked):
                    report.broken.append(seq)
                    why = "its fields do not hash to its hash" if not own_ok else "prev is not the record before's hash"
                    report.problems.append(f"table {name} seq {seq}: broken: {why}")
                    contiguous = False
                forged = _signature_problem(name, seq, own, sig, signer, keys)
                if forged is not None:
                    report.forged.append(seq)
                    report.problems.append(f"table {name} seq {seq}: forged: {forged}")
                    contiguous = False
                if contiguous:
                    report.head = seq
                expected, link = seq + 1, own
            reports.append(report)
        self._store.conn.commit()
        return reports


def _signature_problem(
    table: str, seq: int, own: str, sig: str | None, signer: str | None, keys: Mapping[str, Any]
) -> str | None:
    """What is wrong with an archived record's signature, or None."""
    if sig is None:
        return "no signature"
    if signer is None or signer not in keys:
        return f"signed by key {signer or '?'}, not a key enrolled for table {table}"
    if not verify(keys[signer], record_message(table, seq, own), sig):
        return f"the signature does not verify with key {signer}"
    return None
