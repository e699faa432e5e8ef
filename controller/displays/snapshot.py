"""The scoreboard's snapshot: the table's views and notices in, one JSON-ready dict out. Pure: no threads,
no sockets, no clocks (the server in :mod:`controller.displays.scoreboard` adds the version and the time).

A snapshot is the single source of the page: ``/api/state`` returns it, ``/events`` pushes each new one,
and the page's JavaScript only draws it. Its parts: ``table`` (name, limits, payout guide), ``reveal``,
``shoe``, ``coup`` (in progress), ``last`` (the last declared coup and how each wager came out),
``counters``, ``alarms`` and ``roads`` (the five roads and their cell layout).

**Squeeze games** (``reveal = "on_declare"``): no card, total, what is due or result of the coup in
progress may leave the daemon before the dealer declares it. The filtering is done here, so the data never
reaches a socket; the page only shows "coup N in play". The builder also withholds what would give the
coup away indirectly: the cards-remaining count stays where it was when the coup opened, and the alarms
that say whether a card is due (MISDRAW, DECLARE TOO EARLY) are shown as a neutral DEALER CALL. (The server
does not publish a snapshot whose content did not change, so the number of updates does not count the
cards either.)

**Alarms** are shown by their text (``Alarm.value``), whatever they are: an alarm added to the table later
needs nothing here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

from controller.displays.wording import money, odds, percent
from controller.game.cards import Card
from controller.game.coup import CoupResult
from controller.game.records import coup_body
from controller.game.roads import Roads, RoadsBuilder, roads_layout
from controller.game.rules import Bet, CommissionCollection, Ruleset
from controller.game.settlement import Wager, settle
from controller.game.table import (
    Alarm,
    CoupDeclared,
    CoupVoided,
    Due,
    Notice,
    ShoeStarted,
    TableView,
)

__all__ = ["LimitsLike", "SnapshotBuilder", "TableInfo", "money", "odds", "payout_guide", "settle_result"]

_IN_PLAY_DUES = (Due.PLAYER_THIRD, Due.BANKER_THIRD, Due.DECLARE, Due.VOID)
#: Alarms that tell whether a card is due now: in a squeeze game they would give the coup away.
_TELLING_ALARMS = (Alarm.MISDRAW, Alarm.EARLY_DECLARE)
_DEALER_CALL = {"name": "dealer_call", "text": "DEALER CALL"}


class LimitsLike(Protocol):
    """What the scoreboard shows of the table limits (:class:`~controller.game.settlement.TableLimits` or
    the configuration's ``[table.limits]`` section)."""

    @property
    def unit_cents(self) -> int: ...

    @property
    def minimum_cents(self) -> int: ...

    @property
    def maximum_cents(self) -> int: ...


# ---------------------------------------------------------------------------------------------------------
# The payout guide and the last result's payouts (exact: integers and fractions only)


def _banker_pays(rules: Ruleset, pays: Fraction) -> Fraction:
    """A Banker win's pay after commission (what the player nets per unit)."""
    return pays * (1 - rules.commission_rate)


_BET_LABELS: Mapping[Bet, str] = {
    Bet.BANKER: "Banker",
    Bet.PLAYER: "Player",
    Bet.TIE: "Tie",
    Bet.PLAYER_PAIR: "Player Pair",
    Bet.BANKER_PAIR: "Banker Pair",
    Bet.DRAGON_BONUS_PLAYER: "Dragon Bonus P",
    Bet.DRAGON_BONUS_BANKER: "Dragon Bonus B",
    Bet.DRAGON_7: "Dragon 7",
    Bet.PANDA_8: "Panda 8",
}


def payout_guide(rules: Ruleset) -> list[dict[str, str]]:
    """What each wager pays under ``rules``: one row per bet, ``{"bet", "label", "pays", "note"}``."""
    if rules.commission_rate:
        banker_note = f"{odds(rules.banker_pays)} less {percent(rules.commission_rate)} commission"
        if rules.commission_collection is CommissionCollection.AT_SHOE_END:
            banker_note += ", collected at the shoe's end"
    elif rules.banker_three_card_seven_pushes:
        banker_note = "pushes on a three-card 7 win"
    elif rules.banker_six_pays is not None:
        banker_note = f"a winning 6 pays {odds(rules.banker_six_pays)}"
    else:
        banker_note = "no commission"
    bonus = rules.dragon_bonus
    steps = " · ".join(f"{m} {odds(p)}" for m, p in sorted(bonus.ladder.items(), reverse=True))
    bonus_note = f"natural {odds(bonus.natural_win)}; win by {steps}"
    if bonus.natural_tie_pushes:
        bonus_note += "; natural tie pushes"
    rows = [
        (Bet.BANKER, odds(_banker_pays(rules, rules.banker_pays)), banker_note),
        (Bet.PLAYER, odds(rules.player_pays), ""),
        (Bet.TIE, odds(rules.tie_pays), "Banker and Player push" if rules.tie_pushes_main_bets else ""),
        (Bet.PLAYER_PAIR, odds(rules.pair_pays), "first two cards"),
        (Bet.BANKER_PAIR, odds(rules.pair_pays), "first two cards"),
        (Bet.DRAGON_BONUS_PLAYER, "ladder", bonus_note),
        (Bet.DRAGON_BONUS_BANKER, "ladder", bonus_note),
        (Bet.DRAGON_7, odds(rules.dragon_7_pays), "3-card 7 Banker win"),
        (Bet.PANDA_8, odds(rules.panda_8_pays), "3-card 8 Player win"),
    ]
    return [{"bet": b.value, "label": _BET_LABELS[b], "pays": p, "note": n} for b, p, n in rows if rules.offers(b)]


def settle_result(result: CoupResult, rules: Ruleset) -> list[dict[str, str]]:
    """How each wager came out on ``result`` under ``rules``: ``{"bet", "label", "outcome", "pays"}``.

    Uses :func:`~controller.game.settlement.settle` (a notional one-unit wager on every bet) so that the
    board and the settlement can never disagree.
    """
    settlement = settle(result, [Wager(bet, 100) for bet in Bet if rules.offers(bet)], rules)
    rows = []
    for o in settlement.outcomes:
        pays = _banker_pays(rules, o.pays) if o.bet is Bet.BANKER else o.pays
        rows.append(
            {
                "bet": o.bet.value,
                "label": _BET_LABELS[o.bet],
                "outcome": o.outcome.value,
                "pays": odds(pays) if o.outcome.value == "win" else "",
            }
        )
    return rows


# ---------------------------------------------------------------------------------------------------------
# The snapshot builder


def _result_of(record: Mapping[str, Any]) -> CoupResult:
    return CoupResult(
        tuple(Card.parse(str(t)) for t in record["player"]),
        tuple(Card.parse(str(t)) for t in record["banker"]),
    )


@dataclass(frozen=True)
class TableInfo:
    """What the board says of the table itself."""

    name: str
    limits: LimitsLike
    ruleset: Ruleset


class SnapshotBuilder:
    """Builds the board's snapshots from the table's views and notices. Not thread-safe: one caller at a time
    (the scoreboard's own sink thread).

    :meth:`build` returns the snapshot's content without ``version`` and ``ts_ms``; the sink adds those
    when the content changed.
    """

    def __init__(self, info: TableInfo, *, squeeze: bool, history: Sequence[Mapping[str, Any]] = ()) -> None:
        self.info = info
        self.squeeze = squeeze
        shoes = [int(r["shoe"]) for r in history if "shoe" in r]
        self.shoe: int | None = max(shoes) if shoes else None
        self.records: list[dict[str, Any]] = [dict(r) for r in history if r.get("shoe") == self.shoe]
        self._roads: dict[str, Any] | None = None  # last, counters, roads: they change with the records only
        # The roads kept coup by coup (O(1) a declare); rebuilt from the records only when the shoe changes.
        self._road_builder = RoadsBuilder(self._declared())
        self._static = self._table_part()
        self._frozen_remaining: int | None = None

    # -- state from the loop ---------------------------------------------------------------------
    def follow(self, view: TableView | None, notices: Sequence[Notice]) -> None:
        """Take in a view and its notices without building a snapshot (for updates that are coalesced)."""
        self._follow(view, notices)

    def _follow(self, view: TableView | None, notices: Sequence[Notice]) -> None:
        if view is not None and view.shoe_number != self.shoe:
            # The first view after a restart, or a shoe started: keep only this shoe's coups.
            self.records = [r for r in self.records if r.get("shoe") == view.shoe_number]
            self.shoe = view.shoe_number
            self._roads = None
            self._road_builder = RoadsBuilder(self._declared())
        for n in notices:
            if isinstance(n, ShoeStarted):
                self.shoe = n.shoe_number
                self.records = []
                self._roads = None
                self._road_builder = RoadsBuilder()
            elif isinstance(n, CoupDeclared | CoupVoided):
                body = coup_body(n)
                self.records.append(body)
                if body.get("declared") and not body.get("void"):
                    self._road_builder.add(body)
                self._roads = None

    def _declared(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("declared") and not r.get("void")]

    def build(self, view: TableView | None, notices: Sequence[Notice] = ()) -> dict[str, Any]:
        self._follow(view, notices)
        if self._roads is None:  # the shoe's declared coups changed: redo what depends on them only
            declared = self._declared()
            self._roads = {
                "last": self._last_part(declared[-1] if declared else None),
                "counters": self._counters(declared),
                "roads": self._roads_part(self._road_builder.roads),
            }
        return {
            "table": self._static,
            "reveal": "on_declare" if self.squeeze else "on_read",
            "shoe": self._shoe_part(view),
            "coup": self._coup_part(view),
            "last": self._roads["last"],
            "counters": self._roads["counters"],
            "alarms": self._alarms(view),
            "roads": self._roads["roads"],
        }

    # -- the parts -------------------------------------------------------------------------------
    def _table_part(self) -> dict[str, Any]:
        lim, rules = self.info.limits, self.info.ruleset
        return {
            "name": self.info.name,
            "ruleset": rules.name,
            "description": rules.description,
            "limits": {
                "minimum": money(lim.minimum_cents),
                "maximum": money(lim.maximum_cents),
                "unit": money(lim.unit_cents),
                "minimum_cents": lim.minimum_cents,
                "maximum_cents": lim.maximum_cents,
            },
            "guide": payout_guide(rules),
        }

    def _in_play(self, view: TableView) -> bool:
        return bool(view.player or view.banker or view.dummy_hand) or view.due in _IN_PLAY_DUES

    def _shoe_part(self, view: TableView | None) -> dict[str, Any]:
        if view is None:
            return {"number": self.shoe, "coup": None, "cards_remaining": None, "cut_card_out": False,
                    "last_coup": False, "burn_left": 0}  # fmt: skip
        remaining = view.cards_remaining
        if self.squeeze:
            if self._in_play(view) and self._frozen_remaining is not None:
                remaining = self._frozen_remaining  # the count would tell how many cards the coup took
            else:
                self._frozen_remaining = remaining
        return {
            "number": view.shoe_number,
            "coup": view.coup_number,
            "cards_remaining": remaining,
            "cut_card_out": view.cut_card_out,
            "last_coup": view.last_coup,
            "burn_left": view.burn_left,
        }

    def _coup_part(self, view: TableView | None) -> dict[str, Any]:
        if view is None:
            return {"number": None, "state": "starting"}
        number = view.coup_number
        if view.due is Due.BURN:
            return {"number": number, "state": "burn"}
        if view.due is Due.NEW_SHOE:
            return {"number": number, "state": "shoe_closed"}
        in_play = self._in_play(view)
        if self.squeeze:
            # Nothing of the coup leaves the daemon before the declare.
            return {"number": number, "state": "in_play" if in_play else "waiting"}
        if not in_play:
            return {"number": number, "state": "waiting"}
        state = {Due.DECLARE: "complete", Due.VOID: "halted"}.get(view.due, "dealing")
        return {
            "number": number,
            "state": state,
            "player": [c.token for c in view.player],
            "banker": [c.token for c in view.banker],
            "player_total": view.player_total if view.player else None,
            "banker_total": view.banker_total if view.banker else None,
            "due": view.due.value,
            "result": view.result.winner.value if view.result is not None else None,
        }

    def _last_part(self, record: Mapping[str, Any] | None) -> dict[str, Any] | None:
        if record is None:
            return None
        result = _result_of(record)
        return {
            "shoe": record.get("shoe"),
            "coup": record.get("coup"),
            "winner": result.winner.value,
            "player": [c.token for c in result.player],
            "banker": [c.token for c in result.banker],
            "player_total": result.player_total,
            "banker_total": result.banker_total,
            "natural": result.natural_hand,
            "player_pair": result.player_pair,
            "banker_pair": result.banker_pair,
            "payouts": settle_result(result, self.info.ruleset),
        }

    @staticmethod
    def _counters(declared: Sequence[Mapping[str, Any]]) -> dict[str, int]:
        counts = {"coups": len(declared), "banker": 0, "player": 0, "tie": 0,
                  "player_pair": 0, "banker_pair": 0, "natural": 0}  # fmt: skip
        for r in declared:
            counts[str(r["winner"])] += 1
            counts["player_pair"] += bool(r.get("player_pair"))
            counts["banker_pair"] += bool(r.get("banker_pair"))
            counts["natural"] += bool(r.get("natural"))
        return counts

    def _alarms(self, view: TableView | None) -> list[dict[str, str]]:
        if view is None:
            return []
        hide = self.squeeze and self._in_play(view)
        out: list[dict[str, str]] = []
        for alarm in view.alarms:
            if hide and alarm in _TELLING_ALARMS:
                item = _DEALER_CALL
            else:
                item = {"name": alarm.name.lower(), "text": alarm.value}
            if item not in out:
                out.append(dict(item))
        return out

    @staticmethod
    def _roads_part(roads: Roads) -> dict[str, Any]:
        return roads_layout(roads)
