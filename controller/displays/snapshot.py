"""The scoreboard's snapshot: the table's public updates in, one JSON-ready dict out. Pure: no threads,
no sockets, no clocks (the server in :mod:`controller.board.scoreboard` adds the version and the time).

A snapshot is the single source of the page: ``/api/state`` returns it, ``/events`` pushes each new one,
and the page's JavaScript only draws it. Its parts: ``table`` (name, limits of every offered wager, payout
guide, the Dragon Bonus pay ladder, whether the labels are bilingual), ``reveal``, ``shoe``, ``coup`` (in
progress), ``last`` (the last declared coup and how each wager came out), ``counters``, ``stats`` (each
result's share of the shoe and the current streak), ``notice``, ``alarms`` and ``roads`` (the five roads and
their cell layout).

**What players are told** (``notice``): a player reads "Table closed" or "Shoe change", never a technical
state. The table's alarms (LINK DOWN, JOURNAL FULL, a misdraw ...) are for the dealer screen, the LCD and the
pit; the snapshot keeps them in ``alarms`` for tools, and the page does not show them.

**Squeeze games** (``reveal = "on_declare"``): no card, total, what is due or result of the coup in
progress may leave the table before the dealer declares it. The filtering is done in the table process by
:class:`~controller.game.public.PublicProjector`, so the data never reaches a socket; the page only shows
"coup N in play". (The server does not publish a snapshot whose content did not change, so the number of
updates does not count the cards either.)

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
from controller.game.notation import WAGER_WORDS
from controller.game.public import FeedUpdate, PublicView, Reveal, shoe_coups
from controller.game.roads import Roads, RoadsBuilder, roads_layout
from controller.game.rules import Bet, CommissionCollection, Ruleset
from controller.game.settlement import Wager, settle

__all__ = [
    "CLOSED_ALARMS",
    "LimitsLike",
    "SnapshotBuilder",
    "TableInfo",
    "dragon_ladder",
    "limit_rows",
    "money",
    "odds",
    "payout_guide",
    "player_notice",
    "settle_result",
    "shoe_stats",
]


class LimitsLike(Protocol):
    """What the scoreboard shows of the table limits (:class:`~controller.game.settlement.TableLimits` or
    the configuration's ``[table.limits]`` section)."""

    @property
    def unit_cents(self) -> int: ...

    @property
    def minimum_cents(self) -> int: ...

    @property
    def maximum_cents(self) -> int: ...

    @property
    def side_minimum_cents(self) -> int: ...

    @property
    def side_maximum_cents(self) -> int: ...


# ---------------------------------------------------------------------------------------------------------
# The payout guide and the last result's payouts (exact: integers and fractions only)


def _banker_pays(rules: Ruleset, pays: Fraction) -> Fraction:
    """A Banker win's pay after commission (what the player nets per unit)."""
    return pays * (1 - rules.commission_rate)


_BET_LABELS: Mapping[Bet, str] = {b: WAGER_WORDS[b.value] for b in Bet}


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
    top = max([bonus.natural_win, *bonus.ladder.values()])
    bonus_pays = f"to {odds(top)}"
    bonus_note = "see Dragon Bonus pays"
    rows = [
        (Bet.BANKER, odds(_banker_pays(rules, rules.banker_pays)), banker_note),
        (Bet.PLAYER, odds(rules.player_pays), ""),
        (Bet.TIE, odds(rules.tie_pays), "Banker and Player push" if rules.tie_pushes_main_bets else ""),
        (Bet.PLAYER_PAIR, odds(rules.pair_pays), "first two cards"),
        (Bet.BANKER_PAIR, odds(rules.pair_pays), "first two cards"),
        (Bet.DRAGON_BONUS_PLAYER, bonus_pays, bonus_note),
        (Bet.DRAGON_BONUS_BANKER, bonus_pays, bonus_note),
        (Bet.DRAGON_7, odds(rules.dragon_7_pays), "3-card 7 Banker win"),
        (Bet.PANDA_8, odds(rules.panda_8_pays), "3-card 8 Player win"),
    ]
    return [{"bet": b.value, "label": _BET_LABELS[b], "pays": p, "note": n} for b, p, n in rows if rules.offers(b)]


def dragon_ladder(rules: Ruleset) -> list[dict[str, str]]:
    """The Dragon Bonus pay table as a player reads it, one row per way to win: ``{"win", "pays"}``, the
    natural win first, then each winning margin from the largest (``{"win": "Win by 9", "pays": "30:1"}``), then
    what a natural tie does. Empty where the table offers no Dragon Bonus."""
    if not (rules.offers(Bet.DRAGON_BONUS_PLAYER) or rules.offers(Bet.DRAGON_BONUS_BANKER)):
        return []
    bonus = rules.dragon_bonus
    rows = [{"win": "Natural", "pays": odds(bonus.natural_win)}]
    rows += [{"win": f"Win by {m}", "pays": odds(p)} for m, p in sorted(bonus.ladder.items(), reverse=True)]
    rows.append({"win": "Natural tie", "pays": "push" if bonus.natural_tie_pushes else "loses"})
    return rows


#: The side wagers whose limits the board shows, each under its label (the pairs share one line).
_SIDE_LIMITS: Sequence[tuple[str, str, tuple[Bet, ...]]] = (
    ("tie", "Tie", (Bet.TIE,)),
    ("pairs", "Pairs", (Bet.PLAYER_PAIR, Bet.BANKER_PAIR)),
    ("dragon_bonus", "Dragon Bonus", (Bet.DRAGON_BONUS_PLAYER, Bet.DRAGON_BONUS_BANKER)),
    ("dragon_7", "Dragon 7", (Bet.DRAGON_7,)),
    ("panda_8", "Panda 8", (Bet.PANDA_8,)),
)


def limit_rows(limits: LimitsLike, rules: Ruleset) -> list[dict[str, str]]:
    """The table limits as the board shows them: Banker and Player first, then each offered side wager
    (Tie, pairs, ...), labelled: ``{"key", "label", "minimum", "maximum"}``."""
    rows = [
        {
            "key": "main",
            "label": "Banker · Player",
            "minimum": money(limits.minimum_cents),
            "maximum": money(limits.maximum_cents),
        }
    ]
    for key, label, bets in _SIDE_LIMITS:
        if any(rules.offers(b) for b in bets):
            rows.append(
                {
                    "key": key,
                    "label": label,
                    "minimum": money(limits.side_minimum_cents),
                    "maximum": money(limits.side_maximum_cents),
                }
            )
    return rows


def shoe_stats(counters: Mapping[str, int], winners: Sequence[str]) -> dict[str, Any]:
    """Each result's share of the shoe's declared coups in whole percent (``percent``: banker, player,
    tie; all 0 before the first coup) and the current ``streak``: the newest winner other than a tie and
    how many times running it has won, ties not breaking it (as the big road counts a column), or None."""
    coups = counters.get("coups", 0)
    share = {k: (counters.get(k, 0) * 200 + coups) // (2 * coups) if coups else 0 for k in ("banker", "player", "tie")}
    streak: dict[str, Any] | None = None
    for w in reversed(winners):
        if w == "tie":
            continue
        if streak is None:
            streak = {"winner": w, "count": 1}
        elif w == streak["winner"]:
            streak["count"] += 1
        else:
            break
    return {"percent": share, "streak": streak}


#: Alarms under which the table cannot deal: the players read "Table closed" (the dealer and the pit the
#: alarm itself). Every other alarm is the dealer's business and shows players nothing.
CLOSED_ALARMS = frozenset({"link_down", "table_offline", "journal_full", "journal_fault", "shoe_protocol_v2"})
TABLE_CLOSED = {"kind": "table_closed", "text": "Table closed"}
SHOE_CHANGE = {"kind": "shoe_change", "text": "Shoe change"}


def player_notice(alarms: Sequence[str], coup_state: str) -> dict[str, str] | None:
    """What the players are told of the table's state: "Table closed", "Shoe change" or nothing."""
    if CLOSED_ALARMS.intersection(alarms):
        return TABLE_CLOSED
    if coup_state in ("burn", "shoe_closed"):
        return SHOE_CHANGE
    return None


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
    #: Show 莊 閒 和 beside Banker, Player and Tie (``[scoreboard] bilingual``).
    bilingual: bool = False


class SnapshotBuilder:
    """Builds the board's snapshots from the table's :class:`~controller.game.public.FeedUpdate` values (the
    squeeze already applied by the table process). Not thread-safe: one caller at a time.

    :meth:`build` returns the snapshot's content without ``version`` and ``ts_ms``; the sink adds those
    when the content changed.
    """

    def __init__(self, info: TableInfo, *, reveal: Reveal | str, history: Sequence[Mapping[str, Any]] = ()) -> None:
        self.info = info
        self.reveal = Reveal(reveal)
        shoes = [int(r["shoe"]) for r in history if "shoe" in r]
        self.shoe: int | None = max(shoes) if shoes else None
        self.records: list[dict[str, Any]] = shoe_coups(history, self.shoe)
        self.view = PublicView.starting(self.reveal)
        self._roads: dict[str, Any] | None = None  # last, counters, roads: they change with the records only
        # The roads kept coup by coup (O(1) a declare); rebuilt from the records only when the shoe changes.
        self._road_builder = RoadsBuilder(self._declared())
        self._static = self._table_part()

    @property
    def squeeze(self) -> bool:
        return self.reveal is Reveal.ON_DECLARE

    # -- state from the table --------------------------------------------------------------------
    def reset(self, view: PublicView, history: Sequence[Mapping[str, Any]]) -> None:
        """Start again from the table's word: its view now and the coups of its current shoe (a board that
        (re)connects to the table's feed)."""
        self.view = view
        self.reveal = view.reveal  # the table's word: it applies the squeeze
        self.shoe = view.shoe.number
        self.records = shoe_coups(history, self.shoe)
        self._roads = None
        self._road_builder = RoadsBuilder(self._declared())

    def follow(self, update: FeedUpdate) -> None:
        """Take in an update without building a snapshot (for updates that are coalesced)."""
        view = update.view
        if update.shoe_started is not None:
            self.shoe = update.shoe_started
            self.records = []
            self._roads = None
            self._road_builder = RoadsBuilder()
        self.reveal = view.reveal
        if view.shoe.number != self.shoe:
            # The first view after a restart, or a shoe started: keep only this shoe's coups.
            self.records = [r for r in self.records if r.get("shoe") == view.shoe.number]
            self.shoe = view.shoe.number
            self._roads = None
            self._road_builder = RoadsBuilder(self._declared())
        for coup in update.coups:
            body = dict(coup)
            if body.get("shoe") not in (None, self.shoe):
                continue
            self.records.append(body)
            if body.get("declared") and not body.get("void"):
                self._road_builder.add(body)
            self._roads = None
        self.view = view

    def _declared(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("declared") and not r.get("void")]

    def build(self, update: FeedUpdate | None = None) -> dict[str, Any]:
        if update is not None:
            self.follow(update)
        if self._roads is None:  # the shoe's declared coups changed: redo what depends on them only
            declared = self._declared()
            counters = self._counters(declared)
            self._roads = {
                "last": self._last_part(declared[-1] if declared else None),
                "counters": counters,
                "stats": shoe_stats(counters, [str(r["winner"]) for r in declared]),
                "roads": self._roads_part(self._road_builder.roads),
            }
        view = self.view
        coup = view.coup.to_dict()
        return {
            "table": self._static,
            "reveal": self.reveal.value,
            "shoe": view.shoe.to_dict(),
            "coup": coup,
            "last": self._roads["last"],
            "counters": self._roads["counters"],
            "stats": self._roads["stats"],
            "notice": player_notice([a.name for a in view.alarms], str(coup["state"])),
            "alarms": [a.to_dict() for a in view.alarms],
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
                "rows": limit_rows(lim, rules),
            },
            "guide": payout_guide(rules),
            "ladder": dragon_ladder(rules),
            "bilingual": self.info.bilingual,
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

    @staticmethod
    def _roads_part(roads: Roads) -> dict[str, Any]:
        return roads_layout(roads)
