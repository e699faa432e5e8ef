"""The floor link builds each record's message from the journal's stored body text (no decode, no encode):
it must be the record vocabulary's ``TableRecord(..., sig=...).to_json()`` byte for byte, for every kind the
table writes, and its ``sig`` the table key's signature over the record's table, seq and hash."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from controller.floor_link import record_payload
from controller.game.cards import Card
from controller.game.records import input_body
from controller.game.table import CardDrawn, DeclarePressed, ShoeRebooted, TableState
from controller.journal import Journal, Record
from controller.table.loop import ShoePort, TableLoop
from controller.table.wire import AsciiWire
from floor_protocol.signing import record_message, sign, verify
from tests.floor_link.floorside import TEST_TABLE_KEY
from tests.game.test_records import EVERY_INPUT


def written(path: Path) -> list[Record]:
    """A journal with every input kind, a dealt natural with its derived records, and notes whose strings
    need escaping (quotes, backslashes, control characters, non-ASCII, an astral character)."""
    with Journal.open(path) as journal:
        loop = TableLoop(TableState(), journal, [ShoePort(AsciiWire(), lambda data: None)])
        for event in EVERY_INPUT:
            facts = {"old_session": 1, "new_session": 2} if isinstance(event, ShoeRebooted) else {"seq": 3}
            loop._apply(event, input_body(event, **facts), None, None)
        for number, token in enumerate(["2S", "3S", "4S", "9H", "KD", "KS", "QS"], start=1):
            card = CardDrawn(Card.parse(token))
            loop._apply(card, input_body(card, seq=number), 7, number)
        loop._apply(DeclarePressed(), input_body(DeclarePressed()), None, None)
        loop.flush()
        journal.note({"note": 'quote " backslash \\ tab \t newline \n nul \x00', "n": [1, 2.5, None, True]})
        journal.note({"note": "Croupière à la table 7, 百家乐 \U0001f0a1", "nested": {"z": 1, "a": {"b": []}}})
        return list(journal.records())


@pytest.mark.parametrize("table", ["T1", "pit-3/table 12", 'odd "table" \\ é'])
def test_the_message_is_the_record_vocabularys_json_byte_for_byte(tmp_path: Path, table: str) -> None:
    records = written(tmp_path / "journal.db")
    kinds = {r.kind for r in records}
    assert {"input", "coup", "note"} <= kinds, kinds
    assert any(r.session is not None for r in records) and any(r.session is None for r in records)
    assert any(r.cause is not None for r in records) and any(r.cause is None for r in records)
    for record in records:
        sig = sign(TEST_TABLE_KEY, record_message(table, record.id, record.hash))
        expected = replace(record.for_floor(table), sig=sig).to_json()
        assert record_payload(record, table, TEST_TABLE_KEY) == expected, record.kind
        # (decoded plainly: the floor's admission refuses a note's NUL and these odd table ids, the table does not)
        sent = json.loads(record_payload(record, table, TEST_TABLE_KEY))
        assert sent["sig"] == sig and replace(record.for_floor(table), sig=sig).chain_ok()
        assert verify(TEST_TABLE_KEY.public_key(), record_message(table, sent["seq"], sent["hash"]), sent["sig"])
        assert '"session":' in expected and expected.index('"session":') < expected.index('"sig":') < expected.index(
            '"table":'
        )
