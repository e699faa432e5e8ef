"""The simulator's players' cards (hw_sim/money.py, hw_sim/spot_reader.py): carded players insert a card on
sitting down and take it out on leaving, each a truth line and a card read; the reader's CARD_IN and
CARD_OUT, and its cards again after a reboot."""

from __future__ import annotations

from collections import Counter

import pytest

from controller.game.chips import format_uid
from firmware_protocol.binary import BinaryDecoder, FrameReceived
from firmware_protocol.spots import READER, CardIn, CardOut, SnapshotEnd
from hw_sim.core import Dialect, ShoeSimulator, SimConfig
from hw_sim.money import CardRead, MoneyConfig, MoneyConfigError
from hw_sim.spot_reader import SpotReader


def run(players: int, uncarded: int = 0) -> tuple[ShoeSimulator, list[CardRead]]:
    money = MoneyConfig(players=players, uncarded=uncarded)
    sim = ShoeSimulator(SimConfig(dialect=Dialect.ASCII, decks=1, seed=5, pace=0.5, money=money, shoes=2))
    assert sim.money is not None
    sim.money.keep_reads = True
    reads: list[CardRead] = []
    now = 0.0
    sim.start(now)
    while not sim.finished and now < 800:
        sim.poll(now)
        reads += [r for r in sim.money.due_reads(now) if isinstance(r, CardRead)]
        now += 0.05
    return sim, reads


def test_carded_players_bring_a_card_each_visit_and_the_leaver_takes_theirs_out() -> None:
    sim, reads = run(6, uncarded=2)
    ins, outs = sim.truth.of("player_in"), sim.truth.of("player_out")
    assert {e["seat"] for e in ins} == {1, 2, 3, 4}  # seats 5 and 6 play without a card
    assert all(e["shoe"] == 1 for e in ins if e["seat"] != 5)  # the same players all along ...
    leaver = [e for e in outs if e["seat"] == 5]
    assert leaver == [] and {e["reason"] for e in outs} <= {"card_out"}
    # every truth line is one read of the seat's card reader, the card's UID as the player_ref
    said = Counter((e["seat"], e["player_ref"]) for e in ins) + Counter((e["seat"], None) for e in outs)
    read = Counter((r.seat, None if r.uid is None else format_uid(r.uid)) for r in reads)
    assert said == read


def test_the_leaver_takes_the_card_out_and_the_next_shoes_player_brings_another() -> None:
    sim, reads = run(5)
    ins, outs = sim.truth.of("player_in"), sim.truth.of("player_out")
    mine = [e for e in ins if e["seat"] == 5]
    assert [e["shoe"] for e in mine] == [1, 2] and mine[0]["player_ref"] != mine[1]["player_ref"]
    assert [(e["seat"], e["player_ref"], e["reason"]) for e in outs] == [
        (5, mine[0]["player_ref"], "card_out"),
        (5, mine[1]["player_ref"], "card_out"),  # the next shoe's leaver leaves too
    ]
    assert outs[0]["t"] < mine[1]["t"]
    assert len(reads) == len(ins) + len(outs)


def test_uncarded_needs_that_many_players() -> None:
    with pytest.raises(MoneyConfigError, match="uncarded"):
        MoneyConfig(players=3, uncarded=4)


def messages(data: bytes) -> list[object]:
    return [e.message for e in BinaryDecoder(dialect=READER).feed(data) if isinstance(e, FrameReceived)]


def test_the_reader_reports_a_card_in_and_out_and_its_cards_again_after_a_reboot() -> None:
    reader = SpotReader(seed=1)
    reader.start(0.0)
    reader.poll(0.0)
    reader.card(3, 0xA1B2C3D4, 0.1)
    reader.card(3, 0xA1B2C3D4, 0.1)  # still the same card: nothing
    reader.card(0, 0x04A1B2C3D4E5F6, 0.1)
    cards = [m for m in messages(reader.poll(0.1)) if isinstance(m, CardIn | CardOut)]
    assert cards == [CardIn(3, 0xA1B2C3D4), CardIn(0, 0x04A1B2C3D4E5F6)]
    reader.card(3, 0xBEEF, 0.2)
    assert [m for m in messages(reader.poll(0.2)) if isinstance(m, CardIn | CardOut)] == [
        CardOut(3, 0xA1B2C3D4),
        CardIn(3, 0xBEEF),
    ]
    reader.reboot(0.3)
    again = messages(reader.poll(0.3))
    assert [m for m in again if isinstance(m, CardIn | CardOut)] == [CardIn(0, 0x04A1B2C3D4E5F6), CardIn(3, 0xBEEF)]
    ends = [i for i, m in enumerate(again) if isinstance(m, SnapshotEnd)]
    assert ends and ends[0] < again.index(CardIn(0, 0x04A1B2C3D4E5F6))  # after the first snapshot
