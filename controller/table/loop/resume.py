"""Resuming after a restart: the journal read back and handed to the pure replay.

:func:`resume` finds where the newest shoe started (a new shoe resets the table but for the link's and the
line's state), reads the inputs from there and the records the edge watch follows, and lets
:mod:`controller.game.replay` rebuild the table state and the watch: a restart costs one shoe's inputs,
however old the journal. The daemon resumes before it builds the loop; the loop resumes again when the
journal refused a duplicate (:meth:`controller.table.loop.TableLoop.replay`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from controller.game.bodies import ApprovalRefusedBody
from controller.game.edges import EdgeWatch
from controller.game.records import KEPT_ACROSS_SHOES, InputKind, RecordKind
from controller.game.replay import ShoeStart, replay, replay_edges
from controller.game.staff import DutyBook
from controller.game.table import TableRules, TableState
from controller.journal import Record


class ReplayJournal(Protocol):
    """What a replay reads of the journal."""

    def inputs(self, *, after: int = 0) -> Iterable[tuple[int, dict[str, Any]]]: ...

    def records(self, *, after: int = 0) -> Iterable[Record]: ...

    def last_shoe_start(self) -> tuple[int, int] | None: ...

    def shoe_start_spots(self, cause: int) -> list[dict[str, Any]]: ...

    def shoe_start_players(self, cause: int) -> list[dict[str, Any]]: ...

    def shoe_start_tray(self, cause: int) -> dict[str, Any] | None: ...

    def last_input(self, kind: InputKind, *, before: int) -> dict[str, Any] | None: ...

    def standing_since(self, kind: InputKind, *, before: int) -> int | None: ...


class DutyJournal(Protocol):
    """What finding the dealer on duty reads of the journal."""

    def last_record(self, kinds: Iterable[RecordKind]) -> tuple[str, dict[str, Any]] | None: ...


def on_duty(journal: DutyJournal) -> DutyBook:
    """The dealer on duty as the journal leaves it: its newest ``dealer_in`` (its dealer, with the badge) or
    ``dealer_out`` (no one). Not a replay: who is on the staff list may have changed since, and a record says
    what was decided then."""
    found = journal.last_record((RecordKind.DEALER_IN, RecordKind.DEALER_OUT))
    if found is None or found[0] != RecordKind.DEALER_IN:
        return DutyBook()
    staff, badge = found[1].get("staff_id"), found[1].get("badge")
    if not isinstance(staff, str) or not isinstance(badge, str):
        return DutyBook()
    try:
        return DutyBook(staff, badge)
    except ValueError:
        return DutyBook()


class LockJournal(Protocol):
    """What finding the members locked out reads of the journal."""

    def last_shoe_start(self) -> tuple[int, int] | None: ...

    def records(self, *, after: int = 0) -> Iterable[Record]: ...


def locked_out(journal: LockJournal, as_of: str) -> tuple[str, ...]:
    """The members the journal says were locked out of approving (``approval_refused`` ``locked_out``) under the
    staff list as of ``as_of``, from the newest shoe's start on (a lock of an earlier shoe is forgotten by a
    restart: the floor's alert on it stands)."""
    found = journal.last_shoe_start()
    after = 0 if found is None else found[0]
    out: list[str] = []
    for r in journal.records(after=after):
        refused = ApprovalRefusedBody.read(r.data()) if r.kind == RecordKind.APPROVAL_REFUSED else None
        if refused is not None and refused.why == "locked_out" and refused.staff_as_of == as_of and refused.staff_id:
            out.append(refused.staff_id)
    return tuple(dict.fromkeys(out))


@dataclass(frozen=True)
class Resumed:
    """Where the journal leaves the table: its state, the edge watch (None: off), and the inputs replayed."""

    state: TableState
    edges: EdgeWatch | None
    inputs: int


def resume(journal: ReplayJournal, rules: TableRules, edges: EdgeWatch | None = None) -> Resumed:
    """The table under ``rules`` as ``journal`` leaves it, replayed from the newest shoe's start; ``edges``
    (the watch's threshold and defaults) is rebuilt from the same shoe's records."""
    after = 0
    start: ShoeStart | None = None
    found = journal.last_shoe_start()
    if found is not None:
        after, number = found
        kept = {kind: journal.last_input(kind, before=after) for kind in KEPT_ACROSS_SHOES}
        ids = {kind: journal.standing_since(kind, before=after) for kind in KEPT_ACROSS_SHOES}
        start = ShoeStart.of(
            number,
            kept,
            ids,
            spots=journal.shoe_start_spots(after),
            players=journal.shoe_start_players(after),
            tray=journal.shoe_start_tray(after),
        )
    replayed = replay(rules, (body for _id, body in journal.inputs(after=after)), start)
    watch = None
    if edges is not None:
        records = ((r.kind, r.data()) for r in journal.records(after=after) if r.kind != RecordKind.INPUT)
        watch = replay_edges(edges, records)
    return Resumed(replayed.state, watch, replayed.inputs)
