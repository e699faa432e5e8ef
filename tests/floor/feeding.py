"""Feeding a table's records to a real archive and its surveillance step as collectors do: one collector in
steps (:func:`archive_in_steps`), or two racing over the same records, as two ``shoe-floor serve`` processes
on one archive do (:func:`race_two_collectors`: the tests of each watch hold it to storing every alert and
reading every record once floor-wide)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from controller.game.records import TableRecord
from floor.archive import Archive, FeedItem
from floor.surveillance import Surveillance


def archive_in_steps(
    archive: Archive, surveillance: Surveillance, records: Sequence[TableRecord], step: int = 7, site: str = "s1"
) -> list[FeedItem]:
    """Archive one table's records ``step`` at a time (records split from their derived ones when the step is
    small), advancing its head and running the surveillance step after each; every alert it returned."""
    items: list[FeedItem] = []
    if not records:
        return items
    table = records[0].table
    for i in range(0, len(records), step):
        archive.store(records[i : i + step])
        archive.advance(table, site)
        items += surveillance.process(table, site)
    return items


def race_two_collectors(
    records: Sequence[TableRecord],
    first: tuple[Surveillance, Archive],
    second: tuple[Surveillance, Archive],
    batch: int,
    *,
    table: str = "T1",
    site: str = "s1",
    timeout: float = 60,
) -> list[FeedItem]:
    """Every alert either collector's surveillance step returned while they raced: both start together; the
    first stores the records ``batch`` at a time (advancing the table's archived head), and after each batch
    both run the step; each runs it once more at the end, and the second once after both are done, so the
    last records are read whatever the interleaving."""
    found: list[list[FeedItem]] = [[], []]
    barrier = threading.Barrier(2)

    def run(i: int, surveillance: Surveillance, archive: Archive) -> None:
        barrier.wait()
        for k in range(0, len(records), batch):
            if i == 0:
                archive.store(records[k : k + batch])
                archive.advance(table, site)
            found[i] += surveillance.process(table, site)
        found[i] += surveillance.process(table, site)

    threads = [threading.Thread(target=run, args=(i, s, a)) for i, (s, a) in enumerate((first, second))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
        assert not thread.is_alive(), f"a collector did not finish within {timeout:.0f} s"
    found[1] += second[0].process(table, site)
    return found[0] + found[1]
