"""The floor's archive: every table's records, once each, in PostgreSQL or SQLite through one code path.

One module per job, composed by :class:`Archive` (:mod:`~floor.archive.archive`), a face with no logic of its
own:

* :mod:`~floor.archive.dialect`: the two databases and the few ways they differ; reading an archive URL;
* :mod:`~floor.archive.schema`: the archive's tables, opening (creating, bringing up to date, checking), its id;
* :mod:`~floor.archive.store`: the one connection the parts share, and the guard on the SQLite file;
* :mod:`~floor.archive.errors`: :class:`ArchiveError` and what it is when it is more;
* :mod:`~floor.archive.intake`: records in, each once; conflicts; what neither database can hold;
* :mod:`~floor.archive.chain`: each table's contiguous, linked head (what the floor acks);
* :mod:`~floor.archive.keys`: the tables' keys (``shoe-floor enroll``);
* :mod:`~floor.archive.alerts`: the alert feed, its outbox, and who acknowledged each alert;
* :mod:`~floor.archive.recall`: records, coups and game recall read back;
* :mod:`~floor.archive.verify`: walking every chain (``shoe-floor verify``);
* :mod:`~floor.archive.staff`: the staff registry, the pit's users and the audit log (``shoe-floor staff``,
  ``shoe-floor user``, the pit's sign-in);
* :mod:`~floor.archive.repository`: the watches' and the accounting's tables behind a typed API
  (:mod:`~floor.archive.surveil_tables`, :mod:`~floor.archive.money_tables`), what they use instead of SQL
  of their own.

The archive is the truth: a table's head is computed from the stored records (whatever collector stored them),
and only ever moves forward. Every write to a SQLite archive first checks that its file is still the one opened.
"""

from __future__ import annotations

from floor.archive.alerts import FEED_VERSION, Acknowledgement, Alert, AlertKind, FeedItem
from floor.archive.archive import Archive
from floor.archive.chain import ADVANCE_STEP, Head
from floor.archive.dialect import POSTGRES, SQLITE, Dialect, parse_url
from floor.archive.errors import ArchiveError, ArchiveLost, EnrollError, UnstorableRecord
from floor.archive.keys import TableKey
from floor.archive.repository import Repository, Transaction
from floor.archive.schema import SCHEMA
from floor.archive.staff import PIT_ROLES, STAFF_ROLES, AuditEntry, People, PitUser, StaffError, StaffMember
from floor.archive.verify import TableReport

__all__ = [
    "ADVANCE_STEP",
    "FEED_VERSION",
    "PIT_ROLES",
    "POSTGRES",
    "SCHEMA",
    "SQLITE",
    "STAFF_ROLES",
    "Acknowledgement",
    "Alert",
    "AlertKind",
    "Archive",
    "ArchiveError",
    "ArchiveLost",
    "AuditEntry",
    "Dialect",
    "EnrollError",
    "FeedItem",
    "Head",
    "People",
    "PitUser",
    "Repository",
    "StaffError",
    "StaffMember",
    "TableKey",
    "TableReport",
    "Transaction",
    "UnstorableRecord",
    "parse_url",
]
