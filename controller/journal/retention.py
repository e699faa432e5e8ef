"""Retention: the journal is pruned by whole old shoes, and the chain stays verifiable from its anchor.

A prune first writes a ``journal_pruned`` note into the chain (:data:`PRUNE_NOTE`, naming the last record
to go and its hash), then deletes in bounded steps (:data:`PRUNE_CHUNK` records per transaction), moving
the ``chain_anchor`` onto the last record deleted: :mod:`controller.journal.verify` walks the chain from
the anchor and holds it to the newest note (:meth:`Pruner.bound`). The newest shoe is never pruned; the
table's own prune (:class:`Retention`, on the loop) prunes only what the floor has acknowledged.

The inputs a replay reads before the newest shoe (:data:`~controller.game.records.KEPT_ACROSS_SHOES`: the
link's and the line's state) may go too: the note carries the newest of each kind below its boundary
(``"kept"``: its record id and body, and since when its value stood; carried forward from the previous note
when that one already took it),
and :meth:`~controller.journal.queries.Queries.last_input_entry` reads it where the records are gone. Why
the note and not a record of the kept state journaled at every shoe start: nothing changes in what a table
journals while it deals (no new record, no new version of the vocabulary, nothing new for the floor), the
cost falls on the rare prune, and the note is already in the hash chain, above the prune's boundary, and
what verify holds the anchor to. Before, a prune stopped at the newest kept input, so a table whose shoe
link never dropped (its one ``link`` input near the journal's start) never pruned at all.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol

from controller.game.records import KEPT_ACROSS_SHOES, RecordKind
from controller.journal.chain import Chain
from controller.journal.errors import JournalError, JournalFault
from controller.journal.queries import PRUNE_NOTE, Queries
from controller.journal.store import Store

__all__ = ["PRUNE_CHUNK", "PRUNE_NOTE", "PrunedJournal", "Pruner", "Retention"]

#: Records a prune deletes per transaction at most (rounded up to an input boundary): a few ms on a Pi.
PRUNE_CHUNK = 500


def _aware(moment: datetime) -> datetime:
    """A naive stamp is read as UTC (the journal writes UTC)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


class Pruner:
    """Plans and carries out prunes of ``store``; ``before_commit`` is the file guard's check."""

    def __init__(
        self,
        store: Store,
        chain: Chain,
        queries: Queries,
        *,
        before_commit: Callable[[], None],
    ) -> None:
        self._store = store
        self._chain = chain
        self._queries = queries
        self._before_commit = before_commit

    def prunable(self, *, older_than: datetime, ack: int | None, floor: bool = True) -> tuple[int, int] | None:
        """``(before_record, shoes)``: the most that may be pruned now, or None when nothing may.

        Whole shoes only: records from the anchor up to (not including) a shoe's starting input, every one
        of them stamped before ``older_than`` (the last one says when the shoe ended). The newest shoe is
        never pruned; the inputs of ``KEPT_ACROSS_SHOES`` a replay reads before it may be, as the prune's
        note carries them (:meth:`begin`). With ``floor`` (the table's own prune), every pruned record must
        be at or below the floor's ``ack``: with no ack, nothing is pruned. ``floor=False`` (``journal
        archive``, which keeps its own copy) drops the ack's limit."""
        if floor and ack is None:
            return None
        starts = self._queries.shoe_starts()
        if not starts:
            return None
        limit = starts[-1]
        if floor:
            assert ack is not None
            limit = min(limit, ack + 1)
        anchor_id = self._chain.anchor()[0]
        candidates = [b for b in starts if anchor_id + 1 < b <= limit]
        conn = self._store.conn
        for b in reversed(candidates):
            ts = conn.execute("SELECT ts FROM records WHERE id = ?", (b - 1,)).fetchone()
            if ts is not None and _aware(datetime.fromisoformat(ts[0])) < _aware(older_than):
                return b, sum(1 for s in starts if anchor_id < s < b)
        return None

    def begin(
        self, before_record: int, *, keep_from_ack: int | None, archive: str | None = None, ts: str | None = None
    ) -> int:
        """Check that records below ``before_record`` may go and write the prune's note into the chain (the
        new anchor's id and hash: verify holds the anchor to the newest note). Returns the note's id;
        :meth:`step` then deletes. ``keep_from_ack``: records above it are the floor's to archive and are
        never pruned (None: no floor limit, for ``journal archive``). Raises ValueError naming what is
        wrong: not a shoe's first input, the newest shoe, or beyond the ack."""
        anchor_id = self._chain.anchor()[0]
        starts = self._queries.shoe_starts()
        if before_record <= anchor_id + 1:
            raise ValueError(f"nothing to prune below record {before_record}: the chain starts at {anchor_id + 1}")
        if not starts or before_record > starts[-1]:
            raise ValueError("the newest shoe is never pruned")
        if before_record not in starts:
            raise ValueError(f"record {before_record} does not start a shoe: only whole shoes are pruned")
        if keep_from_ack is not None and before_record - 1 > keep_from_ack:
            raise ValueError(f"records {keep_from_ack + 1}-{before_record - 1} are not acknowledged by the floor")
        row = self._store.conn.execute("SELECT hash FROM records WHERE id = ?", (before_record - 1,)).fetchone()
        if row is None:
            raise ValueError(f"record {before_record - 1} is not in the journal")
        shoes = sum(1 for s in starts if anchor_id < s < before_record)
        # The kept inputs a replay may need once their records are gone: the newest of each kind below the
        # boundary, read before this note exists (from the records, or as the previous note carries it).
        kept: dict[str, dict[str, object] | None] = {}
        for kind in KEPT_ACROSS_SHOES:
            found = self._queries.last_input_entry(kind, before=before_record)
            since = self._queries.standing_since(kind, before=before_record)
            kept[kind.value] = None if found is None else {"id": found[0], "body": found[1], "since": since}
        body = {
            "note": PRUNE_NOTE,
            "through": before_record - 1,
            "hash": str(row[0]),
            "shoes": shoes,
            "ack": keep_from_ack,
            "archive": archive,
            "kept": kept,
        }
        return self._chain.note(body, ts=ts)

    def step(self, before_record: int, *, limit: int = PRUNE_CHUNK) -> int:
        """Delete the oldest records below ``before_record``, about ``limit`` of them (up to the next input, so
        an input never loses its derived records), and move the anchor onto the last one deleted, in one
        transaction. Returns how many were deleted: 0 when the prune is done. Call :meth:`begin` first."""
        self._before_commit()
        store = self._store
        with store.transaction("prune failed, nothing deleted") as conn:
            anchor_id = int(conn.execute("SELECT last_id FROM chain_anchor WHERE one = 1").fetchone()[0])
            if anchor_id + 1 >= before_record:
                conn.execute("ROLLBACK")
                return 0
            row = conn.execute(
                f"SELECT min(id) FROM records WHERE kind = '{RecordKind.INPUT}' AND id >= ?",
                (anchor_id + 1 + max(limit, 1),),
            ).fetchone()
            end = before_record if row[0] is None else min(int(row[0]), before_record)
            last = conn.execute("SELECT hash FROM records WHERE id = ?", (end - 1,)).fetchone()
            if last is None:
                raise JournalError(store.path, JournalFault.WRITE_FAILED, f"prune: record {end - 1} is missing")
            deleted = conn.execute("DELETE FROM records WHERE id > ? AND id < ?", (anchor_id, end)).rowcount
            conn.execute("UPDATE chain_anchor SET last_id = ?, hash = ? WHERE one = 1", (end - 1, last[0]))
        return int(deleted)

    def prune(
        self, before_record: int, *, keep_from_ack: int | None, archive: str | None = None, chunk: int = PRUNE_CHUNK
    ) -> int:
        """:meth:`begin`, then :meth:`step` until done; returns how many records were deleted.
        For a stopped table (``journal archive``); the daemon runs the steps one per quiet moment instead."""
        self.begin(before_record, keep_from_ack=keep_from_ack, archive=archive)
        total = 0
        while (n := self.step(before_record, limit=chunk)) > 0:
            total += n
        return total

    def bound(self) -> int:
        """The highest record id any prune note allows the anchor to stand on (0 without one)."""
        row = self._store.conn.execute(
            f"SELECT max(json_extract(body, '$.through')) FROM records WHERE kind = '{RecordKind.NOTE}'"
            " AND json_extract(body, '$.note') = ?",
            (PRUNE_NOTE,),
        ).fetchone()
        return 0 if row is None or row[0] is None else int(row[0])


class PrunedJournal(Protocol):
    """What :class:`Retention` needs of the journal (:class:`controller.journal.Journal`)."""

    def floor_ack(self) -> int | None: ...

    def prunable(self, *, older_than: datetime, ack: int | None, floor: bool = True) -> tuple[int, int] | None: ...

    def begin_prune(
        self, before_record: int, *, keep_from_ack: int | None, archive: str | None = None, ts: str | None = None
    ) -> int: ...

    def prune_step(self, before_record: int, *, limit: int = PRUNE_CHUNK) -> int: ...


class Retention:
    """The daemon's own prune, run by the table loop one bounded step at a time (:meth:`step`).

    At most once every ``every`` seconds (an hour) it plans: whole shoes older than ``retain_days`` that the
    floor has acknowledged (``Journal.floor_ack``; no ack, no prune), and writes the prune's note. Each
    later step deletes about ``chunk`` records in one transaction (a few milliseconds on a Pi), until done.
    Only the daemon with a floor link builds one: without a floor the table never prunes by itself.
    """

    def __init__(
        self,
        journal: PrunedJournal,
        retain_days: float,
        *,
        every: float = 3600.0,
        chunk: int = PRUNE_CHUNK,
        wall: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.journal = journal
        self.retain_days = retain_days
        self.every = every
        self.chunk = chunk
        self.wall = wall
        self.pruned = 0  # records deleted so far
        self._target: int | None = None  # the prune under way: delete below this record
        self._next_plan: float | None = None

    def step(self, now: float) -> int:
        """Plan (if due) or delete one chunk; returns how many records this step deleted."""
        if self._target is None:
            if self._next_plan is not None and now < self._next_plan:
                return 0
            self._next_plan = now + self.every
            ack = self.journal.floor_ack()
            plan = self.journal.prunable(older_than=self.wall() - timedelta(days=self.retain_days), ack=ack)
            if plan is None:
                return 0
            self.journal.begin_prune(plan[0], keep_from_ack=ack)
            self._target = plan[0]
            return 0
        try:
            deleted = self.journal.prune_step(self._target, limit=self.chunk)
        except BaseException:
            self._target = None  # planned afresh next time
            raise
        if deleted == 0:
            self._target = None
        self.pruned += deleted
        return deleted
