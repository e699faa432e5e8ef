"""The floor's rating slips: every table's, read from the archive, by the one function the table uses.

:func:`floor_slips` reads the archived records the slips need (:data:`controller.game.slips.SLIP_KINDS`, each
table's in seq order) and hands them all to :func:`controller.game.slips.rating_slips`, so a visit that moves
from one table to another within the pause window is one visit, with a slip at each table it played at. For
one table's records the floor's slips are the table's own (``shoe-controller slips``) plus ``table``. The
filters (``--table``, ``--player``, ``--since``) keep slips after the visits are made, so a slip's figures do
not depend on them. ``shoe-floor slips`` prints them (docs/floor.md, "Rating slips").

One player's slips (``--player``, the pit's player page) need not read every table's month of wagers: the
player's own records (``player_in``, ``player_out``, ``buy_in``, the cards a shoe's start carries) say at which
tables and between which records the player sat, and only the money records there are read
(:func:`player_records`): the same records of that player's stints, so the same slips.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from itertools import islice

from controller.game.bodies import BuyInBody, PlayerInBody, PlayerOutBody, ShoeBody
from controller.game.records import RecordKind, TableRecord
from controller.game.slips import PAUSE_WINDOW_SECONDS, SLIP_KINDS, Estimate, Slip, micros_of, rating_slips
from floor.archive import Archive

_KINDS = tuple(k.value for k in SLIP_KINDS)
#: The players' records (read whole for one player's slips) and the money's (read where the player sat).
_SEATS = (RecordKind.PLAYER_IN.value, RecordKind.PLAYER_OUT.value, RecordKind.BUY_IN.value, RecordKind.SHOE.value)
_MONEY = tuple(k for k in _KINDS if k not in _SEATS)


def floor_slips(
    archive: Archive,
    *,
    table: str | None = None,
    player: str | None = None,
    since: datetime | None = None,
    window_seconds: int = PAUSE_WINDOW_SECONDS,
    estimate: Estimate | None = None,
    include_open: bool = False,
) -> list[Slip]:
    """The closed rating slips of every table in the archive (with ``include_open`` the open visits' too), in
    the order they started: of one ``table``, one ``player`` (the player_ref), those that ended at or after
    ``since``."""
    records = archive.records_of_kinds(_KINDS) if player is None else player_records(archive, player)
    slips = rating_slips(records, window_seconds=window_seconds, estimate=estimate, include_open=include_open)
    since_us = None if since is None else micros_of(since.isoformat())
    return [
        s
        for s in slips
        if (table is None or s.table == table)
        and (player is None or s.player_ref == player)
        and (since_us is None or micros_of(s.end) >= since_us)
    ]


def player_buy_ins(archive: Archive, ref: str) -> list[dict[str, object]]:
    """Every buy-in of one carded player, at every table, in each table's order (the pit's player page)."""
    out: list[dict[str, object]] = []
    for r in archive.records_of_kinds((RecordKind.BUY_IN.value,)):
        b = BuyInBody.read(r.body)
        if b is not None and b.player_ref == ref:
            out.append({"table": r.table, "at": r.at, "shoe": b.shoe, "coup": b.coup, "seat": b.seat,
                        "cents": b.cents, "tender": b.tender})  # fmt: skip
    return out


def _mentions(r: TableRecord, ref: str) -> bool:
    if r.kind == RecordKind.PLAYER_IN:
        body: PlayerInBody | BuyInBody | None = PlayerInBody.read(r.body)
    elif r.kind == RecordKind.PLAYER_OUT:
        body = PlayerOutBody.read(r.body)
    elif r.kind == RecordKind.BUY_IN:
        body = BuyInBody.read(r.body)
    else:
        shoe = ShoeBody.read(r.body)
        return shoe is not None and any(c.player_ref == ref for c in shoe.players)
    return body is not None and body.player_ref == ref


def _seated_at_end(records: list[TableRecord], ref: str) -> bool:
    """Whether ``ref`` holds a seat of this table after its records (as the slips' reading judges it)."""
    at: set[int] = set()
    for r in records:
        if r.kind == RecordKind.PLAYER_IN and (p := PlayerInBody.read(r.body)) is not None:
            at.discard(p.seat)
            if p.player_ref == ref:
                at.add(p.seat)
        elif r.kind == RecordKind.PLAYER_OUT and (o := PlayerOutBody.read(r.body)) is not None:
            if o.player_ref == ref:
                at.discard(o.seat)
        elif r.kind == RecordKind.SHOE and (s := ShoeBody.read(r.body)) is not None and s.event == "start":
            at |= {c.seat for c in s.players if c.playing and c.player_ref == ref}
    return bool(at)


def player_records(archive: Archive, ref: str) -> Iterator[TableRecord]:
    """The records one player's slips are made of: at each table the player sat at, its players' records
    (``player_in``, ``player_out``, ``buy_in``, shoes) and its money records from the
    player's first record there to the coup after their last (its settlements: a wager locked before the card
    went out), or to the table's end while the player is seated."""
    seats: dict[str, list[TableRecord]] = {}
    for r in archive.records_of_kinds(_SEATS):
        seats.setdefault(r.table, []).append(r)
    for table, records in sorted(seats.items()):
        mine = [r.seq for r in records if _mentions(r, ref)]
        if not mine:
            continue  # a table the player never sat at: nothing of it is on their slips
        upto: int | None = None
        if not _seated_at_end(records, ref):
            coups = archive.records_of_kinds((RecordKind.COUP.value,), table, after=mine[-1])
            try:
                after = [r.seq for r in islice(coups, 2)]
            finally:
                coups.close()
            upto = after[-1] if len(after) == 2 else None
        money = archive.records_of_kinds(_MONEY, table, after=mine[0] - 1, upto=upto)
        yield from _merged(records, money)


def _merged(seats: list[TableRecord], money: Iterator[TableRecord]) -> Iterator[TableRecord]:
    """Two of a table's record lists in seq order, as one."""
    pending = iter(seats)
    head = next(pending, None)
    for r in money:
        while head is not None and head.seq < r.seq:
            yield head
            head = next(pending, None)
        yield r
    while head is not None:
        yield head
        head = next(pending, None)
