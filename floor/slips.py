"""The floor's rating slips: every table's, read from the archive, by the one function the table uses.

:func:`floor_slips` reads the archived records the slips need (:data:`controller.game.slips.SLIP_KINDS`, each
table's in seq order) and hands them all to :func:`controller.game.slips.rating_slips`, so a visit that moves
from one table to another within the pause window is one visit, with a slip at each table it played at. For
one table's records the floor's slips are the table's own (``shoe-controller slips``) plus ``table``. The
filters (``--table``, ``--player``, ``--since``) keep slips after the visits are made, so a slip's figures do
not depend on them. ``shoe-floor slips`` prints them (docs/floor.md, "Rating slips").
"""

from __future__ import annotations

from datetime import datetime

from controller.game.slips import PAUSE_WINDOW_SECONDS, SLIP_KINDS, Estimate, Slip, micros_of, rating_slips
from floor.archive import Archive

_KINDS = tuple(k.value for k in SLIP_KINDS)


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
    records = archive.records_of_kinds(_KINDS)
    slips = rating_slips(records, window_seconds=window_seconds, estimate=estimate, include_open=include_open)
    since_us = None if since is None else micros_of(since.isoformat())
    return [
        s
        for s in slips
        if (table is None or s.table == table)
        and (player is None or s.player_ref == player)
        and (since_us is None or micros_of(s.end) >= since_us)
    ]
