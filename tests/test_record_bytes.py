"""The on-disk journal and the wire, byte for byte: two fixed journals in which every record kind happens
(tests/record_journals.py) hash to the digests below, taken before the record bodies became classes. A body
stored, a record hash, or a record as the floor link publishes it that differs by a byte changes a digest:
that is a new record version (controller.game.records.RECORD_VERSION) and a line in the CHANGELOG, not an
accident.

Version 4 added the players' kinds and inputs (a third journal, ``every_player``) and the buy-ins (a fourth,
``every_cash``) and the staff's (a fifth, ``every_staff``) and changed no byte of an older kind: the first two
journals' stored bodies and hashes are what they were, and so is every record they publish but for its ``v`` (the
version the table speaks): their published digests are taken with ``v`` set back to the version they were pinned
at."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from controller.game.records import RECORD_VERSION
from controller.journal import Journal
from tests.record_journals import (
    every_approval_journal,
    every_cash_journal,
    every_kind_journal,
    every_money_journal,
    every_player_journal,
    every_staff_journal,
    every_tray_journal,
)

#: sha256 of every record's stored body text and hash, and of every record as published (``for_floor``).
PINNED = {
    # re-pinned 2026-12-03: the advantage records' ``ev`` differed in its last digits from one machine to another
    # (the odds' float matrix products were summed in the order of the CPU's BLAS kernel; they are now summed in
    # one fixed order: controller.game.odds._weighted). The bodies' shape is unchanged.
    "every_kind": (
        "4dc5d4347493ebcdfe969871e15448c54275f3ce010a808e7493ea7515692995",
        "26ce4b0003d6de87a93fe248dc95222a07ffbbec9ff56bf7a280f7e6d9918bfe",
    ),
    "every_money": (
        "e7dfdfe356b1210296bbcb1786e804cd3151e52fa143cdd72656ab40598a3294",
        "40e403ce3b8c6bbfda54b60be1e4dfc1bb72fd45228c0b3fc3f00e2b1c6c48ff",
    ),
    "every_player": (
        "e4c3d04d1f405f173628ef2fa3230219c00061f9820ba650704b91fabbdafad4",
        "13c3738f5a5c777d4095f10d1651c14bcafae3ccd17452be6599fd555c159e15",
    ),
    "every_cash": (
        "ebcac8cd28f266d3b184a0c5b49798b130ac567f6b4602ea0c71c4738641de33",
        "e0ebd779adc54ffef918ead968c90ec70d442a69063069d224c3c236b7508099",
    ),
    "every_staff": (
        "db40a29be23b2865205d838f550a6696cf11e94c5ffdb8e2297bb8304ca7e5ee",
        "17010b5a86a5b5545fe7f7258f3f518f6eab6808d62d97a69b0ea9ceb19070b7",
    ),
    "every_approval": (
        "81e563782cf8c670b850bc5a708719fb03789f6c9a8b42b1504c095e02479653",
        "fb78fe7aed74dbdb57229c4233a3355302004840ffa1611e8662f3b0c0a21a77",
    ),
    "every_tray": (
        "c4646076ee326ef0a82bc69f47827945ea08998d1a1e726cd1f33fbb8333c9fb",
        "07cf09cee1d764ca841f9d5a96981901c3dca8cb114243b6c93983a8e79c0784",
    ),
}
#: The record version each journal's published digest was taken at.
PINNED_AT = {
    "every_kind": 3,
    "every_money": 3,
    "every_player": 4,
    "every_cash": 4,
    "every_staff": 4,
    "every_approval": 4,
    "every_tray": 4,
}


def digests(journal: Journal, v: int = RECORD_VERSION) -> tuple[str, str]:
    stored, published = hashlib.sha256(), hashlib.sha256()
    for record in journal.records():
        stored.update(f"{record.id}\t{record.kind}\t{record.body}\t{record.hash}\n".encode())
        floor = record.for_floor("T1")
        assert floor.v == RECORD_VERSION
        published.update(dataclasses.replace(floor, v=v).to_json().encode() + b"\n")
    return stored.hexdigest(), published.hexdigest()


@pytest.mark.parametrize(
    ("name", "build"),
    [
        ("every_kind", every_kind_journal),
        ("every_money", every_money_journal),
        ("every_player", every_player_journal),
        ("every_cash", every_cash_journal),
        ("every_staff", every_staff_journal),
        ("every_approval", every_approval_journal),
        ("every_tray", every_tray_journal),
    ],
    ids=[
        "every_kind",
        "every_money",
        "every_player",
        "every_cash",
        "every_staff",
        "every_approval",
        "every_tray",
    ],  # the same on every xdist worker (a function's repr is its address)
)
def test_the_journal_and_the_wire_are_byte_for_byte_what_they_were(
    tmp_path: Path, name: str, build: Callable[[Path], Journal]
) -> None:
    with build(tmp_path / "j.db") as journal:
        assert digests(journal, PINNED_AT[name]) == PINNED[name]
