"""The on-disk journal and the wire, byte for byte: two fixed journals in which every record kind happens
(tests/record_journals.py) hash to the digests below, taken before the record bodies became classes. A body
stored, a record hash, or a record as the floor link publishes it that differs by a byte changes a digest:
that is a new record version (controller.game.records.RECORD_VERSION) and a line in the CHANGELOG, not an
accident."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from controller.journal import Journal
from tests.record_journals import every_kind_journal, every_money_journal

#: sha256 of every record's stored body text and hash, and of every record as published (``for_floor``).
PINNED = {
    "every_kind": (
        "33409b08f4e18a90327d9a5f27203853808933786865b937857961b74aecd3e6",
        "1d340f6738d9f7590a1a846a5efa83d84f838e1f29f117fc3765e08b23582044",
    ),
    "every_money": (
        "e7dfdfe356b1210296bbcb1786e804cd3151e52fa143cdd72656ab40598a3294",
        "40e403ce3b8c6bbfda54b60be1e4dfc1bb72fd45228c0b3fc3f00e2b1c6c48ff",
    ),
}


def digests(journal: Journal) -> tuple[str, str]:
    stored, published = hashlib.sha256(), hashlib.sha256()
    for record in journal.records():
        stored.update(f"{record.id}\t{record.kind}\t{record.body}\t{record.hash}\n".encode())
        published.update(record.for_floor("T1").to_json().encode() + b"\n")
    return stored.hexdigest(), published.hexdigest()


@pytest.mark.parametrize(
    ("name", "build"),
    [("every_kind", every_kind_journal), ("every_money", every_money_journal)],
    ids=["every_kind", "every_money"],  # the same on every xdist worker (a function's repr is its address)
)
def test_the_journal_and_the_wire_are_byte_for_byte_what_they_were(
    tmp_path: Path, name: str, build: Callable[[Path], Journal]
) -> None:
    with build(tmp_path / "j.db") as journal:
        assert digests(journal) == PINNED[name]
