"""What of the table may leave the table process: the public view, with the squeeze applied, and the coups.

The table process shows the dealer's own sinks (the panel's lamps, the LCD, the terminal) the whole
:class:`~controller.game.table.TableView`. Everything else (the scoreboard and the floor link) runs in a
process of its own and is fed :class:`FeedUpdate` values built here, in the table process, by one
:class:`PublicProjector`: nothing hidden by the squeeze ever reaches a socket, and the scoreboard, the floor's
``state`` message and any later reader apply the same rules because they get the same values.

**Squeeze games** (``reveal = "on_declare"``): no card, total, what is due or result of the coup in play
leaves the table before the dealer declares it; the coup only shows "in play". What would give the coup
away indirectly is withheld too: the cards-remaining count stays where it was when the coup opened, the
number of cards dealt is not given, and the alarms that say whether a card is due (MISDRAW, DECLARE TOO
EARLY) are shown as a neutral DEALER CALL. Declared (and voided) coups are the journal's ``coup`` records,
which only exist after the declare, so they are never hidden.

Pure: no I/O, no clocks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from controller.game.records import coup_body
from controller.game.table import Alarm, CoupDeclared, CoupVoided, Due, Notice, ShoeStarted, TableView

__all__ = [
    "DEALER_CALL",
    "TELLING_ALARMS",
    "CoupState",
    "FeedUpdate",
    "PublicAlarm",
    "PublicCoup",
    "PublicProjector",
    "PublicShoe",
    "PublicView",
    "Reveal",
]


class Reveal(StrEnum):
    """When the cards of a coup may be shown beyond the dealer (``scoreboard.reveal``)."""

    ON_READ = "on_read"
    ON_DECLARE = "on_declare"  # a squeeze game


class CoupState(StrEnum):
    """Where the coup stands, as the public may see it."""

    STARTING = "starting"  # the table process has not shown a view yet
    BURN = "burn"
    SHOE_CLOSED = "shoe_closed"
    WAITING = "waiting"  # no card of the coup out yet
    IN_PLAY = "in_play"  # a squeeze game's coup in play: nothing more is shown
    DEALING = "dealing"
    COMPLETE = "complete"  # every card out, waiting for the declare
    HALTED = "halted"  # a fault: the coup must be voided


#: Dues that mean a coup is in play (some of its cards are out).
_IN_PLAY_DUES = (Due.PLAYER_THIRD, Due.BANKER_THIRD, Due.DECLARE, Due.VOID)
#: Alarms that tell whether a card is due now: in a squeeze game they would give the coup away.
TELLING_ALARMS = (Alarm.MISDRAW, Alarm.EARLY_DECLARE)


@dataclass(frozen=True)
class PublicAlarm:
    """An alarm as shown: ``name`` (``link_down``, ``dealer_call``...) and its text (``LINK DOWN``)."""

    name: str
    text: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "text": self.text}


DEALER_CALL = PublicAlarm("dealer_call", "DEALER CALL")


@dataclass(frozen=True)
class PublicShoe:
    """The shoe as shown. ``cards_remaining`` is frozen while a squeeze game's coup is in play."""

    number: int | None
    coup: int | None
    cards_remaining: int | None
    cut_card_out: bool = False
    last_coup: bool = False
    burn_left: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "coup": self.coup,
            "cards_remaining": self.cards_remaining,
            "cut_card_out": self.cut_card_out,
            "last_coup": self.last_coup,
            "burn_left": self.burn_left,
        }


@dataclass(frozen=True)
class PublicCoup:
    """The coup in progress as shown. ``hidden``: a squeeze game's coup in play; then the cards, totals,
    what is due, the result and the number of cards dealt are all None."""

    number: int | None
    state: CoupState
    hidden: bool = False
    player: tuple[str, ...] | None = ()
    banker: tuple[str, ...] | None = ()
    player_total: int | None = None
    banker_total: int | None = None
    cards_dealt: int | None = 0
    due: str | None = None  # Due.value
    result: Mapping[str, Any] | None = None  # CoupResult.to_dict() once the coup is complete

    def to_dict(self) -> dict[str, Any]:
        """The scoreboard's ``coup`` part: only what its state shows."""
        if self.state in (CoupState.STARTING, CoupState.BURN, CoupState.SHOE_CLOSED, CoupState.WAITING):
            return {"number": self.number, "state": self.state.value}
        if self.hidden:
            return {"number": self.number, "state": self.state.value}
        return {
            "number": self.number,
            "state": self.state.value,
            "player": list(self.player or ()),
            "banker": list(self.banker or ()),
            "player_total": self.player_total,
            "banker_total": self.banker_total,
            "due": self.due,
            "result": self.result["winner"] if self.result is not None else None,
        }


@dataclass(frozen=True)
class PublicView:
    """The table as it may be shown outside the table process (see the module's docstring)."""

    reveal: Reveal
    shoe: PublicShoe
    coup: PublicCoup
    alarms: tuple[PublicAlarm, ...] = ()

    @property
    def squeezed(self) -> bool:
        """True while a squeeze game's coup is in play (nothing of it is shown)."""
        return self.coup.hidden

    @classmethod
    def starting(cls, reveal: Reveal) -> PublicView:
        """Before the table's first view (a board that has not heard the table yet)."""
        return cls(reveal, PublicShoe(None, None, None), PublicCoup(None, CoupState.STARTING))


@dataclass(frozen=True)
class FeedUpdate:
    """One update of the table for the processes outside it: the public view, the ``coup`` records of the
    coups this update declared or voided (in order), and the number of a shoe this update started."""

    view: PublicView
    coups: tuple[Mapping[str, Any], ...] = ()
    shoe_started: int | None = None


def _in_play(view: TableView) -> bool:
    return bool(view.player or view.banker or view.dummy_hand) or view.due in _IN_PLAY_DUES


class PublicProjector:
    """Turns the table's views and notices into :class:`FeedUpdate` values, the squeeze applied. Keeps one
    piece of state: the cards-remaining count to show while a squeeze game's coup is in play. One caller
    at a time (the table loop, or a scoreboard's own thread in a test)."""

    def __init__(self, reveal: Reveal | str = Reveal.ON_READ) -> None:
        self.reveal = Reveal(reveal)
        self._frozen_remaining: int | None = None

    @property
    def squeeze(self) -> bool:
        return self.reveal is Reveal.ON_DECLARE

    def update(self, view: TableView, notices: Sequence[Notice] = ()) -> FeedUpdate:
        coups: list[dict[str, Any]] = []
        started: int | None = None
        for n in notices:
            if isinstance(n, ShoeStarted):
                started = n.shoe_number
                coups = []  # a coup of the old shoe in the same update belongs to a shoe no board shows now
            elif isinstance(n, CoupDeclared | CoupVoided):
                coups.append(coup_body(n))
        return FeedUpdate(self.view(view), tuple(coups), started)

    def view(self, view: TableView) -> PublicView:
        in_play = _in_play(view)
        hidden = self.squeeze and in_play
        shoe, coup = self._shoe(view, in_play), self._coup(view, in_play, hidden)
        return PublicView(self.reveal, shoe, coup, self._alarms(view, hidden))

    def _shoe(self, view: TableView, in_play: bool) -> PublicShoe:
        remaining = view.cards_remaining
        if self.squeeze:
            if in_play and self._frozen_remaining is not None:
                remaining = self._frozen_remaining  # the count would tell how many cards the coup took
            else:
                self._frozen_remaining = remaining
        return PublicShoe(
            view.shoe_number, view.coup_number, remaining, view.cut_card_out, view.last_coup, view.burn_left
        )

    @staticmethod
    def _coup(view: TableView, in_play: bool, hidden: bool) -> PublicCoup:
        number = view.coup_number
        if view.due is Due.BURN:
            return PublicCoup(number, CoupState.BURN, due=view.due.value)
        if view.due is Due.NEW_SHOE:
            return PublicCoup(number, CoupState.SHOE_CLOSED, due=view.due.value)
        if hidden:
            return PublicCoup(number, CoupState.IN_PLAY, hidden=True, player=None, banker=None, cards_dealt=None)
        if not in_play:
            return PublicCoup(number, CoupState.WAITING, due=view.due.value)
        state = {Due.DECLARE: CoupState.COMPLETE, Due.VOID: CoupState.HALTED}.get(view.due, CoupState.DEALING)
        return PublicCoup(
            number,
            state,
            player=tuple(c.token for c in view.player),
            banker=tuple(c.token for c in view.banker),
            player_total=view.player_total if view.player else None,
            banker_total=view.banker_total if view.banker else None,
            cards_dealt=len(view.player) + len(view.banker),
            due=view.due.value,
            result=view.result.to_dict() if view.result is not None else None,
        )

    @staticmethod
    def _alarms(view: TableView, hidden: bool) -> tuple[PublicAlarm, ...]:
        out: list[PublicAlarm] = []
        for alarm in view.alarms:
            item = DEALER_CALL if hidden and alarm in TELLING_ALARMS else PublicAlarm(alarm.name.lower(), alarm.value)
            if item not in out:
                out.append(item)
        return tuple(out)


def shoe_coups(history: Iterable[Mapping[str, Any]], shoe: int | None) -> list[dict[str, Any]]:
    """The ``coup`` records of ``shoe`` among ``history`` (a copy of each)."""
    return [dict(r) for r in history if r.get("shoe") == shoe]
