"""The demo's live table in a terminal: LED panel, cards, totals, what is due, results, coups, faults.

On a TTY the picture is redrawn in place with ANSI escapes; otherwise (a pipe, a log) one line is printed
per event, so the demo's output can be read by a script or a test. Cards, scores and results are written in
the notation people read (docs/notation.md): ``10♠``, ``Banker wins · P 5 – B 7``, Player first.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from typing import TextIO

from controller.displays.wording import money
from controller.game.coup import Winner
from controller.game.notation import card_text, hand_text
from controller.game.table import (
    AlarmCleared,
    AlarmRaised,
    BurnCard,
    CoupDeclared,
    CoupVoided,
    CutCardNotice,
    Lamp,
    Notice,
    ShoeEnded,
    ShoeStarted,
    TableView,
)
from controller.game.wagers import BoxClosed, Mispay, PastPost, PulledBet, WagerRefused, WagerSettled
from controller.table.lcd import money_line

#: Results on the bead line (the display keeps no more than it draws).
BEAD_CELLS = 60

_LAMP_LABELS = {
    Lamp.PLAYER_DRAW: "PLAYER DRAW",
    Lamp.BANKER_DRAW: "BANKER DRAW",
    Lamp.PLAYER_WIN: "PLAYER",
    Lamp.BANKER_WIN: "BANKER",
    Lamp.TIE: "TIE",
    Lamp.FAULT: "FAULT",
}
_LAMP_COLOURS = {
    Lamp.PLAYER_DRAW: "44",
    Lamp.BANKER_DRAW: "41",
    Lamp.PLAYER_WIN: "44",
    Lamp.BANKER_WIN: "41",
    Lamp.TIE: "42",
    Lamp.FAULT: "43;30",
}


class TerminalDisplay:
    """A sink that draws the table in a terminal."""

    name = "terminal"

    def __init__(self, out: TextIO | None = None, *, title: str = "shoe-controller demo", footer: str = "") -> None:
        self.out = out or sys.stdout
        self.tty = self.out.isatty()
        self.title = title
        self.footer = footer
        self.wins: Counter[Winner] = Counter()
        self.coups = 0
        self.history: list[str] = []
        self.last_line = ""
        self.events: list[str] = []
        self.settled = 0  # wagers settled (a table with a bet-spot reader)
        self.net_cents = 0  # the players' net on them (the house's win is its opposite)

    def update(self, view: TableView, notices: Sequence[Notice]) -> None:
        for n in notices:
            line = self._describe(n)
            if line:
                self.events.append(line)
                self.events = self.events[-6:]
                if not self.tty:
                    self.out.write(line + "\n")
        if self.tty:
            self.out.write(self.render(view))
        self.out.flush()

    def _describe(self, n: Notice) -> str:
        if isinstance(n, CoupDeclared):
            self.coups += 1
            self.wins[n.result.winner] += 1
            self.history.append(n.result.winner.letter)
            del self.history[:-BEAD_CELLS]
            extra = f"  (dummy hand: {hand_text(c.token for c in n.dummy_hand)})" if n.dummy_hand else ""
            self.last_line = f"shoe {n.shoe_number} coup {n.coup_number:3d}: {n.result.describe()}{extra}"
            return self.last_line
        if isinstance(n, CoupVoided):
            return f"shoe {n.shoe_number} coup {n.coup_number:3d}: VOID ({hand_text(c.token for c in n.cards)})"
        if isinstance(n, AlarmRaised):
            return f"ALARM {n.alarm.value}: {n.detail}"
        if isinstance(n, AlarmCleared):
            return f"cleared {n.alarm.value}"
        if isinstance(n, ShoeStarted):
            return f"shoe {n.shoe_number} started ({n.decks} decks): burn procedure"
        if isinstance(n, ShoeEnded):
            return f"shoe {n.shoe_number} ended after {n.coups} coups"
        if isinstance(n, CutCardNotice):
            return "cut card out: " + ("this coup is the last" if n.last_coup_is_current else "one more coup")
        if isinstance(n, BurnCard) and n.exposed and n.card is not None:
            return f"burn: {card_text(n.card.token)} exposed"
        return self._money(n)

    def _money(self, n: Notice) -> str:
        """The money's news a dealer acts on (the dealer screen shows it all)."""
        if isinstance(n, WagerSettled):
            self.settled += 1
            self.net_cents += n.outcome.net_cents
            return ""
        if isinstance(n, PastPost | PulledBet):
            what = "PAST POST" if isinstance(n, PastPost) else "PULLED BET"
            return f"seat {n.seat} {n.spot.value}: {what} (locked {money(n.locked_cents)}, seen {money(n.seen_cents)})"
        if isinstance(n, Mispay):
            return (
                f"seat {n.seat} {n.spot.value}: MISPAY {n.kind.value} (expected {money(n.expected_cents)},"
                f" seen {money(n.seen_cents)})"
            )
        if isinstance(n, WagerRefused):
            return f"seat {n.seat} {n.spot.value}: {money(n.cents)} refused at the lock ({n.text}): return it"
        if isinstance(n, BoxClosed):
            return f"seat {n.seat}: commission box {money(n.owed_cents)} closed"
        return ""

    def render(self, view: TableView) -> str:
        lamps = []
        for lamp in Lamp:
            label = f" {_LAMP_LABELS[lamp]} "
            style = f"{_LAMP_COLOURS[lamp]};1" if lamp in view.lamps else "2"
            lamps.append(f"\x1b[{style}m{label}\x1b[0m")
        player = hand_text(c.token for c in view.player)
        banker = hand_text(c.token for c in view.banker)
        shoe = f"shoe {view.shoe_number}  coup {view.coup_number}  {view.cards_remaining} cards left"
        if view.cut_card_out:
            shoe += "  CUT CARD OUT" + ("  (last coup)" if view.last_coup else "  (one more)")
        alarms = ", ".join(a.value for a in view.alarms) or "none"
        w = self.wins
        counts = f"Banker {w[Winner.BANKER]}  Player {w[Winner.PLAYER]}  Tie {w[Winner.TIE]}  ({self.coups} coups)"
        lines = [
            f"\x1b[1m{self.title}\x1b[0m   {shoe}",
            "",
            "  " + " ".join(lamps),
            "",
            f"  PLAYER  {player:<12} {view.player_total if view.player else '':>2}",
            f"  BANKER  {banker:<12} {view.banker_total if view.banker else '':>2}",
            f"  DUE     {view.due.value.replace('_', ' ').upper()}",
            f"  ALARMS  {alarms}",
            *self._money_lines(view),
            "",
            f"  {counts}",
            f"  bead    {''.join(self.history)}",
            "",
            *[f"  {e}" for e in self.events],
        ]
        if self.footer:
            lines += ["", f"  {self.footer}"]
        return "\x1b[H\x1b[2J" + "\n".join(lines) + "\n"

    def _money_lines(self, view: TableView) -> list[str]:
        if view.money is None:
            return []
        seats = sum(1 for seat in view.money.seats if any(spot.wager_cents or spot.cents for spot in seat.spots))
        now = money_line(view.money, 60) or "nothing to do"
        house = -self.net_cents
        return [
            f"  MONEY   {view.money.phase.value.upper()}  {seats} seats betting  {now}",
            f"          {self.settled} wagers settled, the house {'+' if house >= 0 else '-'}{money(abs(house))}",
        ]

    def close(self) -> None:
        if self.tty:
            self.out.write("\n")
            self.out.flush()
