"""Checking the journal: walk the hash chain from its anchor to its head and name every problem found.

Finds a record altered (body, ts, kind, session, number: its hash no longer matches), a record removed (an
id gap, or a chain head beyond the last record), records reordered (prev_hash not the previous record's
hash), a derived record detached from its input, a body that is not a JSON object, an anchor no prune note
allows, and whatever SQLite's own ``integrity_check`` reports. ``shoe-controller journal verify`` prints
the lines.
"""

from __future__ import annotations

from controller.game.records import RecordKind, record_hash
from controller.journal.chain import Chain
from controller.journal.queries import Queries
from controller.journal.store import Store


def verify(store: Store, chain: Chain, queries: Queries, *, prune_bound: int) -> list[str]:
    """The problems found (one line each); an empty list means intact. ``prune_bound`` is the highest record
    id a prune note allows the anchor to stand on (:meth:`controller.journal.retention.Pruner.bound`)."""
    problems = [f"sqlite: {row[0]}" for row in store.conn.execute("PRAGMA integrity_check(20)")]
    if problems == ["sqlite: ok"]:
        problems = []
    anchor_id, prev_hash = chain.anchor()
    if anchor_id and anchor_id > prune_bound:
        problems.append(f"chain anchor: names record {anchor_id} but no prune note allows it (records removed)")
    expected_id = anchor_id + 1
    last_input: int | None = None
    for r in queries.records(after=anchor_id):
        if r.id != expected_id:
            if r.id > expected_id:
                gone = f"record {expected_id}"
                if r.id > expected_id + 1:
                    gone = f"records {expected_id}-{r.id - 1}"
                problems.append(f"record {r.id}: {gone} removed (ids jump from {expected_id - 1} to {r.id})")
            else:  # cannot happen with an INTEGER PRIMARY KEY, kept for a hand-built file
                problems.append(f"record {r.id}: out of order after record {expected_id - 1}")
        elif r.prev_hash != prev_hash:
            problems.append(
                f"record {r.id}: chain broken, prev_hash does not match record {r.id - 1}"
                " (records removed, inserted or reordered)"
            )
        if record_hash(r.prev_hash, r.id, r.ts, r.kind, r.session, r.number, r.cause, r.body) != r.hash:
            problems.append(f"record {r.id}: altered, its hash does not match its contents")
        try:
            r.data()
        except ValueError as exc:
            problems.append(f"record {r.id}: body is not a JSON object ({exc})")
        if r.kind == RecordKind.INPUT:
            last_input = r.id
        elif r.cause is not None and r.cause != last_input:
            problems.append(f"record {r.id}: derived from input {r.cause}, but the input before it is {last_input}")
        prev_hash = r.hash
        expected_id = r.id + 1
    head_id, head_hash = chain.head()
    last_id = expected_id - 1
    if head_id != last_id:
        if head_id > last_id:
            problems.append(f"chain head: names record {head_id} but the last record is {last_id} (tail removed)")
        else:
            problems.append(f"chain head: names record {head_id} but records run to {last_id}")
    elif head_hash != prev_hash:
        problems.append(f"chain head: hash does not match record {last_id} (last record replaced)")
    return problems
