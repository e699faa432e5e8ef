"""The demo's terminal display: one line per event on a pipe, a redrawn table on a TTY."""

from __future__ import annotations

import io

from controller.game.cards import Card
from controller.game.shoe import BurnMode, BurnRule
from controller.game.table import CardDrawn, DeclarePressed, TableInput, TableRules, TableState
from controller.table.terminal import TerminalDisplay


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


def play(display: TerminalDisplay, events: list[TableInput]) -> TableState:
    state = TableState(TableRules(burn_rule=BurnRule(BurnMode.NONE)))
    for e in events:
        display.update(state.view(), state.apply(e))
    display.update(state.view(), ())
    return state


def cards(tokens: str) -> list[TableInput]:
    return [CardDrawn(Card.parse(t)) for t in tokens.split()]


def test_a_pipe_gets_one_line_per_event() -> None:
    out = io.StringIO()
    display = TerminalDisplay(out)
    play(display, [*cards("9H 2S KD 5C"), DeclarePressed(), *cards("3C"), DeclarePressed()])
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("shoe 1 coup   1: Player wins · P 9 – B 7")
    assert lines[1] == "ALARM DECLARE TOO EARLY: declare pressed while BANKER CARD is due"
    assert len(lines) == 2
    assert display.coups == 1
    assert display.history == ["P"]
    assert "\x1b[" not in out.getvalue()


def test_a_tty_gets_the_table_redrawn_with_lamps_totals_and_due() -> None:
    out = FakeTty()
    display = TerminalDisplay(out, footer="seed 1")
    play(display, cards("2H 3S AD KC"))
    frame = out.getvalue().split("\x1b[H\x1b[2J")[-1]
    assert "PLAYER  2♥ A♦" in frame
    assert "BANKER  3♠ K♣" in frame
    assert "DUE     PLAYER THIRD" in frame
    assert "\x1b[44;1m PLAYER DRAW \x1b[0m" in frame  # the lit lamp
    assert "\x1b[2m BANKER DRAW \x1b[0m" in frame  # a dark one
    assert frame.rstrip().endswith("seed 1")
