"""The on-disk journal and the wire, byte for byte: two fixed journals in which every record kind happens
(tests/record_journals.py) hash to the digests below, taken before the record bodies became classes. A body
stored, a record hash, or a record as the floor link publishes it that differs by a byte changes a digest:
that is a new record version (controller.game.records.RECORD_VERSION) and a line in the CHANGELOG, not an
accident.

Version 4 added the buy-in (``every_cash``, pinned when it was added). Every record is published with its
reader's version, so the version 3 journals' published digests are pinned as version 3 published them (the
records published with ``"v":3``: nothing else of them changed) and as version 4 publishes them."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from controller.journal import Journal
from tests.record_journals import every_cash_journal, every_kind_journal, every_money_journal

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
#: The same journals published by version 4 (``"v":4``), and the buy-ins' journal (version 4).
PINNED_V4 = {
    "every_kind": (PINNED["every_kind"][0], "b08f5b7177a6d625fd017018325ca9aa66a4c0ec749452de56c25bf24c7394bf"),
    "every_money": (PINNED["every_money"][0], "0d3b28f161421bc0fc0d6be76749e63e280e059dfc31d64a90d4fadf913b60c3"),
    "every_cash": (
        "ebcac8cd28f266d3b184a0c5b49798b130ac567f6b4602ea0c71c4738641de33",
        "e0ebd779adc54ffef918ead968c90ec70d442a69063069d224c3c236b7508099",
    ),
}


def digests(journal: Journal, version: int | None = None) -> tuple[str, str]:
    """The stored and the published digests (``version``: published as that version; None: as this one)."""
    stored, published = hashlib.sha256(), hashlib.sha256()
    for record in journal.records():
        stored.update(f"{record.id}\t{record.kind}\t{record.body}\t{record.hash}\n".encode())
        sent = record.for_floor("T1")
        if version is not None:
            sent = dataclasses.replace(sent, v=version)
        published.update(sent.to_json().encode() + b"\n")
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
        assert digests(journal, version=3) == PINNED[name]
        assert digests(journal) == PINNED_V4[name]


def test_the_buy_ins_are_byte_for_byte_what_they_were(tmp_path: Path) -> None:
    with every_cash_journal(tmp_path / "j.db") as journal:
        assert digests(journal) == PINNED_V4["every_cash"]
