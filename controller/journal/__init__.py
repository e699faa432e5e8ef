"""The table's crash-proof journal: every input and every derived record, in SQLite, on one hash chain.

The daemon is event-sourced. Each input it accepts (a card with the shoe's session id and event number, a
button press, a link event) is committed here, together with the records it gave rise to (the coup it
declared or voided), in **one transaction**, before the shoe gets its ACK. After a power cut the table
state is rebuilt by replaying :meth:`Journal.inputs` through the pure
:class:`~controller.game.table.TableState`.

One module per job, composed by :class:`Journal` (:mod:`~controller.journal.journal`):

* :mod:`~controller.journal.schema`: the DDL, opening and preparing a file, the pragmas, the migration;
* :mod:`~controller.journal.store`: the one connection the parts share, and its write transaction;
* :mod:`~controller.journal.chain`: the writer: the hash chain (append, group commit, notes) and the floor's ack;
* :mod:`~controller.journal.guard`: the file guard (deleted or replaced file, disk headroom, degraded open);
* :mod:`~controller.journal.errors`: :class:`JournalFault` and :class:`JournalError`;
* :mod:`~controller.journal.queries`: the domain queries, in the record vocabulary's kinds, and the chain's ends;
* :mod:`~controller.journal.ack`: the floor's ack judged (:func:`~controller.journal.ack.refusal`) and the stored one
  read (the chain's :class:`~controller.journal.chain.FloorAcks` stores it);
* :mod:`~controller.journal.reader`: :class:`JournalReader`, the journal opened read-only (the link's; the
  :class:`Journal` is one that also writes);
* :mod:`~controller.journal.stamps`: the records' timestamps;
* :mod:`~controller.journal.retention`: pruning whole old shoes, and the daemon's :class:`Retention`;
* :mod:`~controller.journal.verify`: walking the chain.

Record bodies are built by the record vocabulary (:mod:`controller.game.records`); the journal only
requires a JSON object. The package's names are imported on first use: importing a part (the link's
:mod:`~controller.journal.reader`) loads only what that part needs. A journal instance has one owner (the
table loop); it is not for concurrent use from several threads.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from controller.game.records import GENESIS_HASH, canonical_json, record_hash
    from controller.journal.chain import Derived, PendingInput
    from controller.journal.errors import JournalError, JournalFault
    from controller.journal.guard import DEFAULT_MIN_FREE, free_bytes
    from controller.journal.journal import Journal
    from controller.journal.queries import Record
    from controller.journal.reader import JournalReader
    from controller.journal.retention import PRUNE_CHUNK, PRUNE_NOTE, Retention
    from controller.journal.schema import SCHEMA_VERSION
    from controller.journal.stamps import utc_now

#: Where each name of the package lives. Imported on first use (PEP 562), so that importing one part (the link's
#: ``controller.journal.reader``) loads only that part and what it imports, never the writer's modules.
_WHERE = {
    "GENESIS_HASH": "controller.game.records",
    "canonical_json": "controller.game.records",
    "record_hash": "controller.game.records",
    "Derived": "controller.journal.chain",
    "PendingInput": "controller.journal.chain",
    "JournalError": "controller.journal.errors",
    "JournalFault": "controller.journal.errors",
    "DEFAULT_MIN_FREE": "controller.journal.guard",
    "free_bytes": "controller.journal.guard",
    "Journal": "controller.journal.journal",
    "Record": "controller.journal.queries",
    "JournalReader": "controller.journal.reader",
    "PRUNE_CHUNK": "controller.journal.retention",
    "PRUNE_NOTE": "controller.journal.retention",
    "Retention": "controller.journal.retention",
    "SCHEMA_VERSION": "controller.journal.schema",
    "utc_now": "controller.journal.stamps",
}

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
    "JournalReader",
    "PendingInput",
    "Record",
    "Retention",
    "canonical_json",
    "free_bytes",
    "record_hash",
    "utc_now",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once: the next look-up is the module's own
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
