"""The :class:`Archive`: one open archive, the face the collector, the pit, the commands and the watches use.
It holds no logic of its own: it opens the archive (:mod:`~floor.archive.schema`) and hands each call to the
part whose job it is (intake, the chain heads, the keys, the alert feed, recall, verify, the watches'
repository, the people), all sharing one :class:`~floor.archive.store.Store`.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from typing import Any

from controller.game.records import TableRecord
from floor.archive.alerts import Acknowledgement, Alert, Feed, FeedItem
from floor.archive.chain import Chains, Head
from floor.archive.dialect import Dialect
from floor.archive.intake import Intake
from floor.archive.keys import Keys, TableKey
from floor.archive.recall import Recall
from floor.archive.repository import Repository
from floor.archive.schema import archive_id, connect, tables_present
from floor.archive.staff import People
from floor.archive.verify import TableReport, Verifier
from floor_protocol.signing import KeyStatement


class Archive:
    """One connection to the archive, used by one thread at a time (the collector's loop). Open it with its
    URL (``sqlite:///path`` or ``postgresql://...``); ``create`` makes or brings up to date its tables, without
    it the archive must exist with this version's; ``read_only`` opens a SQLite archive for reading only (a
    read-only copy too). Close it (or use ``with``)."""

    def __init__(self, url: str, *, create: bool = True, read_only: bool = False) -> None:
        self._store = store = connect(url, create=create, read_only=read_only)
        self.url = url
        self.archive_id = archive_id(store, create=create)
        self._intake = Intake(store)
        self._chains = Chains(store)
        self._feed = Feed(store)
        self._keys = Keys(store, self._feed, self._chains)
        self._recall = Recall(store)
        self._verifier = Verifier(store, self._keys, self._recall)
        #: The watches' and the accounting's tables (:class:`~floor.archive.repository.Repository`).
        self.repository = Repository(store, self._feed, self._recall)
        #: The staff registry, the pit's users and the audit log (:class:`~floor.archive.staff.People`).
        self.people = People(store)

    # -- the connection ----------------------------------------------------------------------------------
    @property
    def dialect(self) -> Dialect:
        """The archive's database (SQLite or PostgreSQL)."""
        return self._store.dialect

    @property
    def connection(self) -> Any:
        """The open connection (one thread at a time): for tests that damage the archive on purpose and
        benchmarks that load it in bulk. The floor's code reads and writes through the archive's parts."""
        return self._store.conn

    def sql(self, statement: str) -> str:
        """``statement`` (``?`` placeholders, ``{json}`` and ``{json_type}``) in this archive's dialect."""
        return self._store.sql(statement)

    def check_file(self) -> None:
        """The file guard's check (:meth:`~floor.archive.store.Store.check_file`)."""
        self._store.check_file()

    def tables_present(self) -> set[str]:
        """The names of the tables in the archive's database (schema checks, optional parts)."""
        return tables_present(self._store)

    def close(self) -> None:
        self._store.conn.close()

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing (floor.archive.intake, floor.archive.chain) ---------------------------------------------
    def store(
        self, records: Sequence[TableRecord], key_ids: Mapping[tuple[str, int], str] | None = None
    ) -> tuple[int, list[Alert]]:
        """Insert ``records`` in one transaction, those already there skipped; ``(inserted, conflicts)``
        (:meth:`~floor.archive.intake.Intake.store`)."""
        return self._intake.store(records, key_ids)

    def content_error(self, exc: BaseException) -> bool:
        """Whether ``exc``, raised by :meth:`store`, comes of a record's content rather than of the database
        (:meth:`~floor.archive.intake.Intake.content_error`)."""
        return self._intake.content_error(exc)

    def head(self, table: str) -> Head:
        """``table``'s contiguous, linked head."""
        return self._chains.head(table)

    def advance(self, table: str, site: str | None = None) -> tuple[Head, Alert | None]:
        """Move ``table``'s head forward over the archived records; the head and what stopped it
        (:meth:`~floor.archive.chain.Chains.advance`)."""
        return self._chains.advance(table, site)

    # -- the alert feed (floor.archive.alerts) -----------------------------------------------------------
    def alert(self, alerts: Iterable[Alert]) -> list[FeedItem]:
        """Keep these alerts in the feed, in one transaction; the newly stored ones."""
        return self._feed.alert(alerts)

    def unpublished(self, older_than: float, limit: int = 500) -> list[FeedItem]:
        """Alerts stored at least ``older_than`` seconds ago and not yet confirmed published, oldest first."""
        return self._feed.unpublished(older_than, limit)

    def published(self, ids: Iterable[int]) -> None:
        """These alerts are on the broker (PUBACK): out of the outbox."""
        self._feed.published(ids)

    def feed(self, limit: int | None = 100, table: str | None = None) -> list[FeedItem]:
        """The alert feed, newest first: the last ``limit`` alerts (None: all), of one ``table`` or all."""
        return self._feed.feed(limit, table)

    def alerts(self, table: str | None = None) -> list[Alert]:
        """The feed's alerts, oldest first."""
        return self._feed.alerts(table)

    def acknowledge(self, alert_id: int, by: str, *, source: str, at: str | None = None) -> Acknowledgement | None:
        """Acknowledge alert ``alert_id`` as ``by``, once, with its audit row (``alert_acknowledged``, or
        ``alert_acknowledged_again`` for one that changed nothing) in the same transaction
        (:meth:`~floor.archive.alerts.Feed.acknowledge`); None: no such alert."""

        def audit(cur: Any, ack: Acknowledgement) -> None:
            action = "alert_acknowledged" if ack.first else "alert_acknowledged_again"
            after = {"acked_by": ack.item.acked_by, "acked_at": ack.item.acked_at, "kind": ack.item.kind,
                     "table": ack.item.table}  # fmt: skip
            self.people.audit_in(cur, by, action, f"alert:{alert_id}", source=source, after=after, at=at)

        if not self.people.present():  # the audit log's table (an archive whose pit has never had users)
            self.people.prepare()
        return self._feed.acknowledge(alert_id, by, at=at, audit=audit)

    # -- the tables' keys (floor.archive.keys) -----------------------------------------------------------
    def table_keys(self, table: str | None = None) -> list[TableKey]:
        """Every key enrolled (of one ``table``, or all), per table in the order they were enrolled."""
        return self._keys.table_keys(table)

    def enroll(
        self, table: str, public_key: str, *, statement: KeyStatement | None = None, replace: bool = False
    ) -> FeedItem:
        """Enroll ``public_key`` as ``table``'s current key and say so in the feed
        (:meth:`~floor.archive.keys.Keys.enroll`)."""
        return self._keys.enroll(table, public_key, statement=statement, replace=replace)

    def revoke(self, table: str) -> FeedItem:
        """Revoke ``table``'s current key (:meth:`~floor.archive.keys.Keys.revoke`)."""
        return self._keys.revoke(table)

    # -- reading (floor.archive.recall) ------------------------------------------------------------------
    def tables(self) -> list[str]:
        """The tables with records archived, in name order."""
        return self._recall.tables()

    def record(self, table: str, seq: int | None) -> dict[str, Any] | None:
        """One archived record as its JSON dict (what an alert names), or None."""
        return self._recall.record(table, seq)

    def records(self, table: str) -> Iterator[TableRecord]:
        """Every archived record of ``table`` in seq order, as it was received."""
        return self._recall.records(table)

    def records_of_kinds(
        self, kinds: Sequence[str], table: str | None = None, after: int = 0, upto: int | None = None
    ) -> Generator[TableRecord, None, None]:
        """Every archived record of these kinds (of one ``table``, or all; of one table with ``after`` < seq <=
        ``upto``), table by table in seq order (:meth:`~floor.archive.recall.Recall.of_kinds`)."""
        return self._recall.of_kinds(kinds, table, after, upto)

    def last_record_of_kinds(self, table: str, kinds: Sequence[str]) -> TableRecord | None:
        """``table``'s newest record of these kinds (:meth:`~floor.archive.recall.Recall.last_of_kinds`)."""
        return self._recall.last_of_kinds(table, kinds)

    def records_between(self, table: str, after: int, upto: int) -> list[TableRecord]:
        """``table``'s records with ``after`` < seq <= ``upto`` (:meth:`~floor.archive.recall.Recall.between`)."""
        return self._recall.between(table, after, upto)

    def coups(self, table: str | None = None, last: int | None = None) -> list[dict[str, Any]]:
        """Coups in ``history --json`` shape plus ``table``, per table oldest first; ``last`` = newest N per table."""
        return self._recall.coups(table, last)

    def shoes(self, table: str) -> list[int]:
        """The numbers of the shoes ``table`` has coups archived for, oldest first."""
        return self._recall.shoes(table)

    def shoe_coups(self, table: str, shoe: int) -> list[dict[str, Any]]:
        """Every coup record of one shoe, in the order dealt (:meth:`~floor.archive.recall.Recall.shoe_coups`)."""
        return self._recall.shoe_coups(table, shoe)

    def recall(self, table: str, shoe: int, coup: int) -> dict[str, Any] | None:
        """Coup ``coup`` of shoe ``shoe`` as it was settled, or None (:meth:`~floor.archive.recall.Recall.recall`)."""
        return self._recall.recall(table, shoe, coup)

    def coup_money(self, table: str, shoe: int, coup: int, seq: int) -> list[dict[str, Any]]:
        """The money records of one coup (:meth:`~floor.archive.recall.Recall.coup_money`)."""
        return self._recall.coup_money(table, shoe, coup, seq)

    def shoe_records(self, table: str, shoe: int) -> list[tuple[str, dict[str, Any]]]:
        """``(kind, body)`` of every record of one shoe (:meth:`~floor.archive.recall.Recall.shoe_records`)."""
        return self._recall.shoe_records(table, shoe)

    # -- checking (floor.archive.verify) -----------------------------------------------------------------
    def verify(self, table: str | None = None) -> list[TableReport]:
        """Per table (or only ``table``): records, head, gaps, broken links, forged records
        (:meth:`~floor.archive.verify.Verifier.verify`)."""
        return self._verifier.verify(table)
