"""The table's crash-proof journal: every input and every derived record, in SQLite, on one hash chain.

The daemon is event-sourced. Each input it accepts (a card with the shoe's session id and event number, a
button press, a link event) is committed here, together with the records it gave rise to (the coup it
declared or voided), in **one transaction**, before the shoe gets its ACK. After a power cut the table
state is rebuilt by replaying :meth:`Journal.inputs` through the pure
:class:`~controller.game.table.TableState`.

One module per job, composed by :class:`Journal` (:mod:`~controller.journal.journal`):

* :mod:`~controller.journal.schema`: the DDL, opening and preparing a file, the pragmas, the migration;
* :mod:`~controller.journal.store`: the one connection the parts share, and its write transaction;
* :mod:`~controller.journal.chain`: the hash chain (append, group commit, notes), its head and anchor;
* :mod:`~controller.journal.guard`: the file guard (deleted or replaced file, disk headroom, degraded open);
* :mod:`~controller.journal.errors`: :class:`JournalFault` and :class:`JournalError`;
* :mod:`~controller.journal.queries`: the domain queries, in the record vocabulary's kinds;
* :mod:`~controller.journal.ack`: the floor's ack, kept beside the chain;
* :mod:`~controller.journal.retention`: pruning whole old shoes, and the daemon's :class:`Retention`;
* :mod:`~controller.journal.verify`: walking the chain.

Record bodies are built by the record vocabulary (:mod:`controller.game.records`); the journal only
requires a JSON object. A journal instance has one owner (the table loop); it is not for concurrent use
from several threads.
"""

from __future__ import annotations

from controller.game.records import GENESIS_HASH, canonical_json, record_hash
from controller.journal.chain import Derived, PendingInput, utc_now
from controller.journal.errors import JournalError, JournalFault
from controller.journal.guard import DEFAULT_MIN_FREE, free_bytes
from controller.journal.journal import Journal
from controller.journal.queries import Record
from controller.journal.retention import PRUNE_CHUNK, PRUNE_NOTE, Retention
from controller.journal.schema import SCHEMA_VERSION

__all__ = [
    "DEFAULT_MIN_FREE",
    "GENESIS_HASH",
    "PRUNE_CHUNK",
    "PRUNE_NOTE",
    "SCHEMA_VERSION",
    "Derived",
    "Journal",
    "JournalError",
    "JournalFault",
    "PendingInput",
    "Record",
    "Retention",
    "canonical_json",
    "free_bytes",
    "record_hash",
    "utc_now",
]
