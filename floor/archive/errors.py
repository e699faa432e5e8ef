"""What the archive refuses, each as one line for the operator: a bad URL or an archive that cannot be opened, a
file gone from under the collector, a change of keys refused, a record neither database can hold."""

from __future__ import annotations

from controller.game.records import TableRecord


class ArchiveError(ValueError):
    """A bad archive URL or an archive that cannot be opened (one line for the operator)."""


class ArchiveLost(ArchiveError):
    """The archive's file is no longer the one this connection opened (deleted, or another put in its place):
    nothing is written to it, nothing acked from it."""


class EnrollError(ArchiveError):
    """A change of a table's keys that is refused (one line for the operator)."""


class UnstorableRecord(ArchiveError):
    """A record whose content this archive cannot hold (a NUL, a lone surrogate, an integer past 64 bits),
    found before the database sees it: the batch is not sent."""

    def __init__(self, record: TableRecord, reason: str) -> None:
        super().__init__(f"record {record.table}/{record.seq}: {reason}")
        self.record = record
