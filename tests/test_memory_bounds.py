"""Memory bounds over many shoes: what the daemon keeps must not grow with the number of shoes dealt.

The soak (``benchmarks/bench_soak.py``) found the daemon's RSS growing by some 35 KB a shoe. The cause was
gpiozero's MockPin, which records every state change of a pin in ``states`` forever: the daemon with
``pin_factory = "mock"`` (the demo, the benchmarks, a bench table without GPIO) lit its lamps through such
pins, some 300 changes a shoe. These tests deal whole shoes through the real pure core, show every view on
a real :class:`~controller.table.panel.Panel` built on :func:`~controller.table.panel.make_pin_factory` ("mock"), and
count what the pins keep; the demo's terminal display, its other sink, is counted the same way. They count items,
not bytes, and time nothing.
"""

from __future__ import annotations

import io
import random
from collections.abc import Iterator
from typing import Any

import pytest

from controller.game.cards import Card, Rank, Suit
from controller.game.table import (
    CardDrawn,
    CutCardOut,
    DeclarePressed,
    Due,
    NewShoePressed,
    TableInput,
    TableRules,
    TableState,
    VoidPressed,
)
from controller.table.panel import MOCK_PIN_HISTORY, Panel, PanelSink, PinMap, make_pin_factory
from controller.table.terminal import BEAD_CELLS, TerminalDisplay


class Dealer:
    """Deals realistic shoes into a :class:`TableState`: NEW SHOE, the exposed card and its burns, coups with
    their third cards, DECLARE, the cut card 14-20 cards from the back (what is due comes from the table)."""

    def __init__(self, state: TableState, seed: int) -> None:
        self.state = state
        self.rng = random.Random(seed)
        self.deck: list[Card] = []
        self.cut_at = 0
        self.dealt = 0

    def next_input(self) -> TableInput:
        due = self.state.due
        if due is Due.NEW_SHOE or (due is Due.BURN and not self.deck):
            self.deck = [Card(rank, suit) for rank in Rank for suit in Suit] * self.state.rules.decks
            self.rng.shuffle(self.deck)
            self.cut_at = len(self.deck) - self.rng.randint(14, 20)
            self.dealt = 0
            return NewShoePressed()
        if due is Due.DECLARE:
            return DeclarePressed()
        if due is Due.VOID:
            return VoidPressed()
        if self.dealt >= self.cut_at and not self.state.shoe.cut_card_out:
            return CutCardOut()
        self.dealt += 1
        return CardDrawn(self.deck.pop())

    def deal_shoes(self, shoes: int) -> Iterator[list[Any]]:
        """Apply inputs until ``shoes`` shoes are dealt to their end; yield each input's notices."""
        started = 0
        while True:
            table_input = self.next_input()
            if isinstance(table_input, NewShoePressed):
                if started == shoes:
                    return
                started += 1
            yield self.state.apply(table_input)


@pytest.fixture
def mock_panel() -> Iterator[tuple[Any, Panel]]:
    factory = make_pin_factory("mock")
    panel = Panel(PinMap(), factory, lambda action: None)
    yield factory, panel
    panel.close()
    factory.reset()
    factory.close()


def test_mock_pins_keep_a_bounded_history_over_many_shoes(mock_panel: tuple[Any, Panel]) -> None:
    factory, panel = mock_panel
    sink = PanelSink(panel)
    state = TableState(TableRules())
    pins = [factory.pin(panel.pins.lamp_pin(lamp)) for lamp in panel.shown]
    changes = dict.fromkeys(map(id, pins), 0)
    shoes = 0
    for notices in Dealer(state, seed=8).deal_shoes(shoes=40):
        before = {id(pin): pin.state for pin in pins}
        sink.update(state.view(), notices)
        for pin in pins:
            changes[id(pin)] += pin.state != before[id(pin)]
        shoes = state.shoe_number
    assert shoes == 40
    busiest = max(changes.values())
    # The shoes really drove the lamps past the bound (else this test would prove nothing) ...
    assert busiest > 2 * MOCK_PIN_HISTORY, changes
    # ... and no pin remembers more than the bound: the newest changes, in order, up to the current state.
    for pin in pins:
        assert len(pin.states) <= MOCK_PIN_HISTORY
        assert pin.states[-1].state == pin.state


def test_mock_pin_history_is_still_a_history(mock_panel: tuple[Any, Panel]) -> None:
    """Below the bound the history is whole, as the panel's tests compare it; clear_states starts it over."""
    factory, panel = mock_panel
    pin = factory.pin(panel.pins.lamp_pin(next(iter(panel.shown))))
    pin.clear_states()
    for _ in range(3):
        pin.state = True
        pin.state = False
    assert [s.state for s in pin.states] == [False, True, False, True, False, True, False]
    pin.clear_states()
    assert [s.state for s in pin.states] == [False]


def test_the_demo_terminal_display_keeps_one_bead_line_over_many_shoes() -> None:
    """The demo's display drew the last 60 results but kept every result since start."""
    display = TerminalDisplay(io.StringIO())
    state = TableState(TableRules())
    for notices in Dealer(state, seed=9).deal_shoes(shoes=3):
        display.update(state.view(), notices)
    assert display.coups > 3 * BEAD_CELLS
    assert len(display.history) == BEAD_CELLS
    assert len(display.events) <= 6
