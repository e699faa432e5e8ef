"""The players' chips through the simulated reader to the table's SpotWire: the table ends knowing what lies
on every spot, the reader's faults show on the wire and are put right."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from controller.game.chips import format_uid
from controller.game.wagers import Spot, SpotSeen, SpotsSnapshot
from controller.table.spot_wire import SpotInput, SpotRecord, SpotWire, SpotWireEvent
from firmware_protocol.session import ControllerSession, ShoeEvent
from hw_sim.core import DealerMode, ShoeSimulator, SimConfig
from hw_sim.faults import MONEY_FAULTS, READ_FAULTS, Fault, FaultPlan
from hw_sim.money import MoneyConfig
from hw_sim.reader_feed import ReaderFeed
from hw_sim.spot_reader import SpotReader

Key = tuple[int, Spot]


class Table:
    """What the table knows of the spots, and every spot value it was told, in order."""

    def __init__(self) -> None:
        self.spots: dict[Key, frozenset[str]] = {}
        self.seen: list[tuple[Key, frozenset[str]]] = []

    def apply(self, ev: SpotWireEvent) -> None:
        if not isinstance(ev, SpotInput):
            return
        got = ev.table_input
        if isinstance(got, SpotSeen):
            self._set((got.seat, got.spot), got.chips.uids)
        elif isinstance(got, SpotsSnapshot):
            listed = {(seat, spot): chips.uids for seat, spot, chips in got.spots}
            for key in set(self.spots) | set(listed):
                self._set(key, listed.get(key, frozenset()))

    def _set(self, key: Key, uids: frozenset[str]) -> None:
        if uids:
            self.spots[key] = uids
        else:
            self.spots.pop(key, None)
        self.seen.append((key, uids))


def play(faults: FaultPlan, players: int = 9, decks: int = 1) -> tuple[ShoeSimulator, Table, int]:
    sim = ShoeSimulator(
        SimConfig(
            decks=decks, seed=11, pace=0.5, dealer=DealerMode.SELF, money=MoneyConfig(players=players), faults=faults
        )
    )
    money = sim.money
    assert money is not None
    feed = ReaderFeed(money, SpotReader(seed=11, seats=range(1, 10)))
    sim.reader_settled = lambda: feed.settled
    shoe, wire, table = ControllerSession(), SpotWire(money.registry), Table()
    now, checks = 0.0, 0
    sim.start(now)
    feed.start(now)
    while not sim.finished:
        assert now < 3_000, "the run never finished"
        for chunk in sim.poll(now):
            for shoe_event in shoe.receive(chunk, now):
                if isinstance(shoe_event, ShoeEvent):
                    sim.receive(shoe.acknowledge(shoe_event.number, shoe_event.key), now)
        data = feed.poll(now)
        events = wire.receive(data, now) if data else []
        more, out = wire.poll(now)
        for ev in [*events, *more]:
            table.apply(ev)
            if isinstance(ev, SpotInput | SpotRecord) and ev.number is not None:
                feed.receive(wire.acknowledge(ev.number, ev.session), now)
        if out:
            feed.receive(out, now)
        if money.next_read_at() is None and feed.reader.unacked == 0:
            model = {key: frozenset(format_uid(u) for u in stack) for key, stack in money.spots.items()}
            assert table.spots == model, f"at {now:.2f} s the table does not know what lies on the spots"
            checks += 1
        now += 0.05
    return sim, table, checks


def states(pairs: list[tuple[Key, frozenset[str]]]) -> dict[Key, list[frozenset[str]]]:
    """Each spot's values in order, a value repeated at once counted once."""
    out: dict[Key, list[frozenset[str]]] = {}
    for key, uids in pairs:
        seq = out.setdefault(key, [frozenset()])
        if seq[-1] != uids:
            seq.append(uids)
    return out


def truth_states(sim: ShoeSimulator) -> dict[Key, list[frozenset[str]]]:
    return states([((e["seat"], Spot(e["spot"])), frozenset(e["uids"])) for e in sim.truth.of("spot")])


def test_without_faults_the_table_is_told_every_spot_change_in_order() -> None:
    sim, table, checks = play(FaultPlan())
    assert checks > 100
    assert states(table.seen) == truth_states(sim)
    assert len(sim.truth.of("payout")) > 50


@pytest.mark.parametrize("fault", [Fault.DROPPED_READ, Fault.DUPLICATE_READ, Fault.GHOST_READ])
def test_a_read_fault_shows_on_the_wire_and_the_table_ends_right(fault: Fault) -> None:
    assert fault in READ_FAULTS
    sim, table, checks = play(FaultPlan({fault: 0.2}), players=4)
    injected = [e for e in sim.truth.of("fault") if e["kind"] == fault.value]
    assert injected and checks > 50
    told = Counter(table.seen)
    if fault is Fault.DROPPED_READ:
        # the table was told a value the spot never held: the stack without the chip named
        for f in injected[:10]:
            key = (f["seat"], Spot(f["spot"]))
            assert any(k == key and f["chip"] not in uids and uids for (k, uids) in told), f
        assert states(table.seen) != truth_states(sim)
    elif fault is Fault.GHOST_READ:
        for f in injected[:10]:
            key = (f["seat"], Spot(f["neighbour"]))
            assert any(k == key and f["chip"] in uids for (k, uids) in told), f
    else:
        assert states(table.seen) == truth_states(sim)  # a read twice changes nothing


def test_with_every_money_fault_the_table_still_ends_knowing_the_spots() -> None:
    # card_left at every leaving (there is one leaver a shoe): the card stays in its reader
    sim, _table, checks = play(FaultPlan(dict.fromkeys(MONEY_FAULTS, 0.05) | {Fault.CARD_LEFT: 1.0}))
    kinds: Counter[Any] = Counter(e["kind"] for e in sim.truth.of("fault"))
    assert set(kinds) == {f.value for f in MONEY_FAULTS}
    assert checks > 100
